/*
 * lib/sweep/pin.c - the library's pin (pin.h): a pin count and two flags in one word, and the grace
 * mechanisms for ck_epoch and for locks.
 *
 * Why each retired member is freed exactly once, and never while a sweep can touch it:
 *
 *   The word holds COUNT (pins), RETIRED and GRACE_OVER. retire sets RETIRED once, then defers
 *   grace_over to the end of a grace period; grace_over adds GRACE_OVER (it runs once per
 *   retire, so the add sets the bit) and frees if COUNT was 0 in the same atomic step; put
 *   subtracts one pin and frees if it took COUNT from 1 to 0 with GRACE_OVER already set.
 *
 *   Exactly one of them frees. Order all operations on the word (they are read-modify-writes on
 *   one location, so they are totally ordered). If grace_over saw COUNT == 0, no pin is held and
 *   none can be taken later: a get happens inside a read-side section in which the member was
 *   reached through the list, and every such section began before the unlink, so the grace
 *   period waited for it: its get precedes grace_over. So no put follows, and grace_over alone
 *   frees. If grace_over saw COUNT > 0, it does not free, and exactly one later put takes COUNT
 *   to 0 (no get can come after grace_over, as above) and sees GRACE_OVER: that put frees.
 *
 *   Never too early: grace_over runs after the grace period, so no reader or sweep section that
 *   could reach the member without a pin is still running; and the free waits for the last put,
 *   so no sweep holds it pinned.
 *
 *   The sweep never follows a freed pointer: after re-entering a section it checks linked (not
 *   RETIRED) before following the member's next. A member the pinned one's stale next leads to
 *   can be freed only after its own grace period, which begins after its retire, which (the
 *   retire rule) comes after the pinned member's retire; a section that begins after that grace
 *   period ended therefore sees RETIRED and restarts from the head instead.
 *
 * docs/model/pin.pml model-checks this, with variants that break each step.
 */
#include "sweepfill/pin.h"

#include <ck_epoch.h>
#include <errno.h>

#include "base/atomic.h"
#include "base/epoch.h"
#include "base/tsan.h"
#include "base/util.h"

#define PIN_COUNT      0x3fffffffu
#define PIN_RETIRED    0x40000000u
#define PIN_GRACE_OVER 0x80000000u

_Static_assert(sizeof(ck_epoch_entry_t) <= 2 * sizeof(void *),
               "a ck_epoch_entry_t fits in the first two words of swf_pin.x_grace");

static void pin_free(struct swf_pin *pin)
{
    swf_pin_free_fn *fn = pin->x_free;
    fn(pin);
}

/*
 * A word or a reserved field no pin of the library can hold: the pin was never zero-filled nor
 * swf_pin_init'ed (malloc'ed memory, say), or its member was reused after free_fn without
 * swf_pin_init. GRACE_OVER comes only after RETIRED, and reserved_ stays 0. Aborts naming fn.
 * reserved is read before the caller's read-modify-write of the word: after a put or the
 * grace_over, another thread may free the member at once.
 */
static void check_initialised(const char *fn, const struct swf_pin *pin, uint32_t word,
                              uint32_t reserved)
{
    if (SWF_LIKELY(reserved == 0 && !((word & PIN_GRACE_OVER) && !(word & PIN_RETIRED))))
        return;
    swfi_die(fn,
             "pin %p is not initialised (word 0x%x, reserved 0x%x): zero the member's memory or "
             "call swf_pin_init before linking it, and again before reusing it after free_fn",
             (const void *)pin, word, reserved);
}

void swf_pin_init(struct swf_pin *pin)
{
    if (pin == NULL)
        return;
    swfi_store_relaxed_32(&pin->x_word, 0);
    pin->reserved_ = 0;
    pin->x_free = NULL;
    for (int i = 0; i < SWF_PIN_GRACE_WORDS; i++)
        pin->x_grace[i] = NULL;
}

void swf_pin_get(struct swf_pin *pin)
{
    if (pin == NULL)
        return;
    uint32_t reserved = pin->reserved_;
    uint32_t old = swfi_fetch_add_acq_rel_32(&pin->x_word, 1);
    check_initialised(__func__, pin, old, reserved);
    if (SWF_UNLIKELY(old & PIN_GRACE_OVER))
        swfi_die(__func__,
                 "pin %p taken after its grace period ended: the member was not "
                 "reached in a read-side section that began before its unlink",
                 (void *)pin);
    if (SWF_UNLIKELY((old & PIN_COUNT) == PIN_COUNT))
        swfi_die(__func__, "pin %p: too many pins", (void *)pin);
}

void swf_pin_put(struct swf_pin *pin)
{
    if (pin == NULL)
        return;
    /* Release: everything this sweep did to the member happens-before its free. Acquire: if we
     * free, after grace_over's add. */
    uint32_t reserved = pin->reserved_; /* before the sub: then grace_over's side may free */
    uint32_t old = swfi_fetch_sub_acq_rel_32(&pin->x_word, 1);
    check_initialised(__func__, pin, old, reserved);
    if (SWF_UNLIKELY((old & PIN_COUNT) == 0))
        swfi_die(__func__, "pin %p released more often than taken", (void *)pin);
    if ((old & (PIN_COUNT | PIN_GRACE_OVER)) == (PIN_GRACE_OVER | 1))
        pin_free(pin); /* its grace period ended while we held it */
}

bool swf_pin_linked(const struct swf_pin *pin)
{
    if (pin == NULL)
        return false;
    return (swfi_load_acquire_32(&pin->x_word) & PIN_RETIRED) == 0;
}

void swf_pin_grace_over(struct swf_pin *pin)
{
    if (pin == NULL)
        return;
    /* grace_over runs once per retire, so adding the bit sets it: one wait-free step that also
     * reads the count. */
    uint32_t reserved = pin->reserved_; /* before the add: then a put may free */
    uint32_t old = swfi_fetch_add_acq_rel_32(&pin->x_word, PIN_GRACE_OVER);
    check_initialised(__func__, pin, old, reserved);
    if (SWF_UNLIKELY(!(old & PIN_RETIRED)))
        swfi_die(__func__, "pin %p: grace period over for a pin never retired (swf_pin_retire)",
                 (void *)pin);
    if (SWF_UNLIKELY(old & PIN_GRACE_OVER))
        swfi_die(__func__,
                 "pin %p: grace period over twice (the grace mechanism called it twice for one "
                 "retire)",
                 (void *)pin);
    if ((old & PIN_COUNT) == 0)
        pin_free(pin);
}

int swf_pin_retire(struct swf_pin *pin, const struct swf_grace *grace, swf_pin_free_fn *free_fn)
{
    SWF_CHECK_ARG(pin == NULL, EINVAL, "pin is NULL");
    SWF_CHECK_ARG(grace == NULL, EINVAL, "grace is NULL");
    SWF_CHECK_ARG(free_fn == NULL, EINVAL, "free_fn is NULL");
    uint32_t old = swfi_load_relaxed_32(&pin->x_word);
    check_initialised(__func__, pin, old, pin->reserved_);
    if ((old & (PIN_RETIRED | PIN_GRACE_OVER)) == (PIN_RETIRED | PIN_GRACE_OVER))
        return swfi_fail(__func__, EALREADY,
                         "the pin was retired and its grace period is over: a member reused "
                         "after free_fn needs swf_pin_init before it is linked again");
    if (old & PIN_RETIRED)
        return swfi_fail(__func__, EALREADY, "the pin is already retired");
    /* x_free is read by whoever frees, after acquiring a later state of the word. */
    pin->x_free = free_fn;
    /* A compare-and-swap loop rather than an add: a second retire must not change the word. It
     * retries only when a concurrent get or put changed the count. */
    while (!swfi_cas_acq_rel_32(&pin->x_word, &old, old | PIN_RETIRED))
        if (old & PIN_RETIRED)
            return swfi_fail(__func__, EALREADY, "the pin is already retired");
    if (grace->defer == NULL)
        swf_pin_grace_over(pin); /* a lock: no reader is inside, the grace period is over */
    else
        grace->defer(grace->arg, pin);
    return 0;
}

/* ---- ck_epoch --------------------------------------------------------------------------- */

static void epoch_grace_over(ck_epoch_entry_t *e)
{
    struct swf_pin *pin = swf_pin_from_grace_storage(e);
    /* The epoch guards release on the ck_epoch when a section ends (tsan.h): the grace period's
     * edge from those sections to this callback, stated to ThreadSanitizer. */
    swfi_tsan_acquire(pin->x_grace[2]);
    swf_pin_grace_over(pin);
}

static void epoch_defer(void *rec, struct swf_pin *pin)
{
    ck_epoch_record_t *r = rec;
    pin->x_grace[2] = r->global;
    /* base/epoch.h: the unlink visible before the callback's epoch is read. */
    swfi_epoch_call(r, (ck_epoch_entry_t *)swf_pin_grace_storage(pin), epoch_grace_over);
}

void swf_grace_epoch(struct swf_grace *g, struct ck_epoch_record *rec)
{
    if (g == NULL || rec == NULL)
        return;
    g->defer = epoch_defer;
    g->arg = rec;
}

void swf_grace_lock(struct swf_grace *g)
{
    if (g == NULL)
        return;
    g->defer = NULL;
    g->arg = NULL;
}
