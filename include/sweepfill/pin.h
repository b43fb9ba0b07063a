/*
 * sweepfill/pin.h - the library's own pin: what makes a sweep over your list resumable, and the
 * retire call your deleter makes instead of freeing.
 *
 * A pinned member's memory stays valid after the grace period that would otherwise end its life,
 * until the sweep unpins it, and swf_pin_linked says whether it is still on the list (list.h:
 * pin, unpin, linked). Embed a struct swf_pin in each member, next to the list link, and use an
 * _AUTO adapter (list.h, list_sysqueue.h, list_urcu.h, list_hash.h). Your deleter then does:
 *
 *     writer lock;  unlink m (your list's own remove);  swf_pin_retire(&m->pin, &grace, free_m);
 *     writer unlock
 *
 * and free_m(&m->pin) is called exactly once, by whichever comes last: the end of the grace
 * period, or the put of a sweep that held m pinned when the grace period ended. free_m takes the
 * member's slot (swf_slot_take) and frees object and member as you wish. Zero-filled memory is a
 * valid, linked, unpinned pin; so is swf_pin_init's result.
 *
 * struct swf_grace says how the end of a grace period is awaited for the list readers' guard:
 * swf_grace_epoch, swf_grace_urcu (list_urcu.h), swf_grace_lock (below), or your own: defer(arg,
 * pin) must arrange one call of swf_pin_grace_over(pin) after every read-side section that may
 * have reached the member has ended, and may use the SWF_PIN_GRACE_WORDS words at
 * swf_pin_grace_storage(pin) (a ck_epoch_entry_t or a struct rcu_head fit in the first two; the
 * third is for a context).
 *
 * The retire rule: call swf_pin_retire after unlinking the member and before the writer unlinks
 * or retires any other member of the same list (in practice: right after the unlink, inside the
 * same writer critical section). Why: docs/design.md, 'The retire rule'; docs/model/pin.pml.
 *
 * Synchronisation ("-": may run concurrently on the same pin from any threads; "X": must not):
 *
 *                 get   put   linked  retire  grace_over  init
 *   get            -     -      -       -         X*        X
 *   put            -     -      -       -         -         X
 *   linked         -     -      -       -         -         X
 *   retire         -     -      -       X         -         X
 *   grace_over     X*    -      -       -         X         X
 *   init           X     X      X       X         X         X
 * (*get is made inside a read-side section in which the member was reached through the list, so
 * it always comes before the end of any grace period for it. retire is called once per unlink;
 * grace_over once per retire, by the grace mechanism. init only while nobody else can reach the
 * member.)
 *
 * Memory ordering: get and put are read-modify-writes with acquire and release ordering; the
 * grace_over or put that frees acquires what every put released, so free_fn runs after every
 * access a sweep made through its pin, and after the grace period (the grace mechanism orders the
 * readers' sections before swf_pin_grace_over). retire stores free_fn and sets RETIRED with
 * release ordering; linked is an acquire load: a section that begins after a grace period that
 * began after the retire sees false.
 *
 * Progress: get, put, linked and grace_over are wait-free (one atomic operation), plus free_fn
 * when put or grace_over is the last. retire is lock-free (a compare-and-swap loop that retries
 * only when a concurrent get or put changed the count) plus the grace mechanism's defer
 * (ck_epoch_call: wait-free; call_rcu: a wait-free enqueue and perhaps a futex wake; lock: none),
 * plus free_fn with swf_grace_lock. free_fn runs on whichever thread comes last: inside the
 * sweep's read-side section (put), in ck_epoch_poll (epoch), on the call_rcu thread (urcu), or
 * inside retire (lock). It must not wait for a grace period or take the list's write lock.
 *
 * Errors: the void functions do nothing with a NULL pin; swf_pin_linked(NULL) is false. In every
 * build, a put without a get ("sweepfill: swf_pin_put: pin 0x... released more often than
 * taken"), a get after the grace period ended, too many pins, a grace_over twice or for a pin
 * never retired, and a get, put, retire or grace_over of a pin that was never initialised
 * (neither zero-filled nor swf_pin_init'ed: "pin 0x... is not initialised") print one line
 * naming the function and the pin and abort. A retire of a pin whose grace period is over
 * (reused after free_fn without swf_pin_init) returns EALREADY with a reason that says so.
 */
#ifndef SWEEPFILL_PIN_H
#define SWEEPFILL_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SWF_PIN_GRACE_WORDS 3

struct swf_pin;

/* Called exactly once per retire, when the member is unreachable and unpinned. */
typedef void swf_pin_free_fn(struct swf_pin *pin);

/* Embed one in each member. Fields are the library's: do not touch them. */
struct swf_pin {
    uint32_t x_word;                    /* pins | RETIRED | GRACE_OVER */
    uint32_t reserved_;                 /* 0: where it is not, the pin was never initialised */
    swf_pin_free_fn *x_free;            /* set by retire */
    void *x_grace[SWF_PIN_GRACE_WORDS]; /* the grace mechanism's storage */
};

/* How a retire awaits the end of a grace period (see the top comment). defer NULL: none is
 * needed (swf_grace_lock). */
struct swf_grace {
    void (*defer)(void *arg, struct swf_pin *pin);
    void *arg;
};

/* A linked, unpinned pin: for memory that is not zero-filled, or reused after free_fn ran. Only
 * while no one else can reach the member. */
SWF_API void swf_pin_init(struct swf_pin *pin);

/* Pin: inside a read-side section in which the member was reached through the list. */
SWF_API void swf_pin_get(struct swf_pin *pin);

/* Unpin, in any later section (or none). The last put after the grace period ended calls
 * free_fn, on the calling thread. */
SWF_API void swf_pin_put(struct swf_pin *pin);

/* Whether the member has not been retired: if true in a section, the member's next pointer may
 * be followed in that section. */
SWF_API bool swf_pin_linked(const struct swf_pin *pin);

/* After unlinking (see the retire rule above): mark the member retired and have free_fn(pin)
 * called once the grace period is over and no sweep holds it pinned. Returns 0; EINVAL (pin,
 * grace or free_fn NULL); EALREADY (already retired: nothing is done). A grace whose defer is
 * NULL is swf_grace_lock's, not an error. */
SWF_API int swf_pin_retire(struct swf_pin *pin, const struct swf_grace *grace,
                           swf_pin_free_fn *free_fn);

/* For grace mechanisms: the grace period of a retired pin is over. Called once per retire. */
SWF_API void swf_pin_grace_over(struct swf_pin *pin);

/* ck_epoch: ck_epoch_call on rec, after a full fence (sweepfill(7): weakly ordered machines);
 * rec must be the retiring thread's own record (ck_epoch_call is single-producer per record);
 * callbacks run in that thread's ck_epoch_poll, ck_epoch_barrier, or ck_epoch_synchronize +
 * ck_epoch_reclaim. No-op on NULL arguments. */
struct ck_epoch_record;
SWF_API void swf_grace_epoch(struct swf_grace *g, struct ck_epoch_record *rec);

/* Locks (readers hold a lock: swf_guard_rwlock, swf_guard_mutex): retire under the write side;
 * no reader can be inside, so the grace period is over at once and retire frees the member unless
 * a sweep holds it pinned (then that sweep's put does). No-op on NULL. */
SWF_API void swf_grace_lock(struct swf_grace *g);

/* The grace mechanism's storage in a pin, and back. Pure arithmetic. */
static inline void *swf_pin_grace_storage(struct swf_pin *pin)
{
    return SWF_STATIC_CAST_(void *, pin->x_grace);
}

static inline struct swf_pin *swf_pin_from_grace_storage(void *storage)
{
    return SWF_CONTAINER_OF(storage, struct swf_pin, x_grace);
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_PIN_H */
