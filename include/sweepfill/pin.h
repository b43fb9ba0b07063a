/*
 * sweepfill/pin.h - the library's pin, which makes a sweep over your list resumable, and the
 * retire that your deleter calls instead of freeing a member.
 *
 * The file holds struct swf_pin (embedded in each member), struct swf_grace (how a retire awaits
 * the end of a grace period), the pin operations the _AUTO list adapters give a sweep
 * (swf_pin_get, swf_pin_put, swf_pin_linked), swf_pin_retire and swf_pin_init, and the grace
 * mechanisms for ck_epoch and for locks (swf_grace_urcu is in list_urcu.h). The contract of
 * each function is in the comment above it; swf_pin_retire(3) explains the protocol.
 *
 * Synchronisation on one pin ("-": may run concurrently from any threads; "X": must not; each
 * function's Concurrency paragraph says why):
 *
 *                 get   put   linked  retire  grace_over  init
 *   get            -     -      -       -         X         X
 *   put            -     -      -       -         -         X
 *   linked         -     -      -       -         -         X
 *   retire         -     -      -       X         -         X
 *   grace_over     X     -      -       -         X         X
 *   init           X     X      X       X         X         X
 *
 * The void functions do nothing with a NULL pin. Misuse of a pin that every build catches
 * (swf_pin_retire(3) and swf_grace_epoch(3) list it) prints one line naming the function and
 * the pin, and aborts.
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

/* The words of grace storage in a pin: room for a ck_epoch_entry_t or a struct rcu_head in the
 * first two, and a context in the third. */
#define SWF_PIN_GRACE_WORDS 3

struct swf_pin;

/* What a retire calls, exactly once, when the member is unreachable and no sweep holds it
 * pinned; swf_pin_retire() says on which thread and what it must not do. */
typedef void swf_pin_free_fn(struct swf_pin *pin);

/* Embed one in each member, next to the list link. The fields are the library's: do not touch
 * them. Zero-filled memory is a valid, linked, unpinned pin, as is swf_pin_init()'s result. */
struct swf_pin {
    uint32_t x_word;                    /* pins | RETIRED | GRACE_OVER */
    uint32_t reserved_;                 /* 0: where it is not, the pin was never initialised */
    swf_pin_free_fn *x_free;            /* set by retire */
    void *x_grace[SWF_PIN_GRACE_WORDS]; /* the grace mechanism's storage */
};

/* How a retire awaits the end of a grace period, for the guard the list's readers use: filled in
 * by swf_grace_epoch(), swf_grace_lock() or swf_grace_urcu() (list_urcu.h), or by you. defer(arg,
 * pin) must arrange one call of swf_pin_grace_over(pin) after every read-side section that may
 * have reached the member has ended. defer NULL: no grace period is needed (swf_grace_lock). */
struct swf_grace {
    void (*defer)(void *arg, struct swf_pin *pin);
    void *arg;
};

/*
 * Make pin a linked, unpinned pin again: for a member's memory that is not zero-filled, or is
 * reused after its free_fn ran.
 *
 * Concurrency: only while no other thread can reach the member: never concurrently with any
 * other call on the same pin.
 * Progress: wait-free.
 * Ordering: none of its own; the list's insertion that publishes the member publishes the pin.
 * Returns: nothing.
 * Errors: none; a NULL pin does nothing.
 */
SWF_API void swf_pin_init(struct swf_pin *pin);

/*
 * Pin the member: until the matching swf_pin_put(), its memory stays valid even after its grace
 * period ends. Misuse aborts: swf_pin_retire(3), "Misuse", lists what is caught.
 *
 * Concurrency: any thread, inside a read-side section in which the member was reached through
 * the list. It may run concurrently with swf_pin_get(), swf_pin_put(), swf_pin_linked() and
 * swf_pin_retire() on the same pin, never with swf_pin_init(); it always comes before the pin's
 * swf_pin_grace_over(), since the grace period waits for the section it is made in.
 * Progress: wait-free (one atomic operation).
 * Ordering: a read-modify-write with acquire and release ordering.
 * Returns: nothing.
 * Errors: none; a NULL pin does nothing, and misuse aborts.
 */
SWF_API void swf_pin_get(struct swf_pin *pin);

/*
 * Unpin the member; the last put after its grace period ended frees it. Misuse aborts:
 * swf_pin_retire(3), "Misuse", lists what is caught.
 *
 * Concurrency: any thread, in any section after the get's or in none, concurrently with every
 * call on the same pin but swf_pin_init(). When it frees, free_fn runs on the calling thread
 * (for a sweep: inside its read-side section).
 * Progress: wait-free (one atomic operation), plus free_fn when this put is the last.
 * Ordering: a read-modify-write with acquire and release ordering: it releases everything its
 * sweep did to the member to whoever frees the member.
 * Returns: nothing.
 * Errors: none; a NULL pin does nothing, and misuse aborts.
 */
SWF_API void swf_pin_put(struct swf_pin *pin);

/*
 * Whether the member has not been retired: if true in a section, the member's next pointer may
 * be followed in that section.
 *
 * Concurrency: any thread, concurrently with every call on the same pin but swf_pin_init().
 * Progress: wait-free (one atomic load).
 * Ordering: an acquire load: a section that begins after a grace period that began after the
 * retire sees false.
 * Returns: true while the member is not retired; false once it is, and for a NULL pin.
 * Errors: none; it cannot fail.
 */
SWF_API bool swf_pin_linked(const struct swf_pin *pin);

/*
 * Mark the unlinked member retired and have free_fn(pin) called exactly once, by whichever comes
 * last: the end of the grace period that grace awaits, or the put of a sweep that held the
 * member pinned when it ended.
 *
 * Concurrency: any thread, once per unlink, under the retire rule: after unlinking the member
 * and before the writer unlinks or retires any other member of the same list (in practice right
 * after the unlink, inside the same writer critical section). It may run concurrently with
 * swf_pin_get(), swf_pin_put(), swf_pin_linked() and swf_pin_grace_over() on the same pin, never
 * with another swf_pin_retire() or swf_pin_init(). free_fn runs on whichever thread comes last:
 * inside the sweep's read-side section (put), in ck_epoch_poll() (epoch), on the call_rcu thread
 * (urcu), or inside this call (lock); it must not wait for a grace period or take the list's
 * write lock.
 * Progress: lock-free (a compare-and-swap loop that retries only when a concurrent get or put
 * changed the count), plus the grace mechanism's defer (ck_epoch_call(): wait-free; call_rcu(): a
 * wait-free enqueue and perhaps a futex wake; lock: none), plus free_fn with swf_grace_lock().
 * Ordering: it stores free_fn and sets RETIRED with release ordering. The swf_pin_grace_over() or
 * swf_pin_put() that frees acquires what every put released, so free_fn runs after every access
 * a sweep made through its pin, and after the grace period.
 * Returns: 0 or an error number; after a failure swf_error_reason() says why.
 * Errors:
 * EINVAL: pin, grace or free_fn is NULL.
 * EALREADY: the pin is already retired; nothing was done. When its grace period is over too, the
 * reason says that the member was reused after free_fn without swf_pin_init().
 */
SWF_API int swf_pin_retire(struct swf_pin *pin, const struct swf_grace *grace,
                           swf_pin_free_fn *free_fn);

/*
 * For grace mechanisms: the grace period of the pin's retire is over. It frees the member (calls
 * the retire's free_fn) if no sweep holds it pinned; otherwise the last swf_pin_put() does.
 * Misuse aborts: swf_grace_epoch(3), "Misuse", lists what is caught.
 *
 * Concurrency: called by the grace mechanism, once per retire, after every read-side section
 * that may have reached the member has ended, never for a pin that was not retired. It may run
 * concurrently with swf_pin_put(), swf_pin_linked() and swf_pin_retire() on the same pin, never
 * with swf_pin_get() (the grace period orders every get before it), another
 * swf_pin_grace_over() or swf_pin_init().
 * Progress: wait-free (one atomic operation), plus free_fn when it frees.
 * Ordering: a read-modify-write with acquire and release ordering; when it frees, it has
 * acquired every put's release. The grace mechanism must order the readers' sections before its
 * call of swf_pin_grace_over(): ck_epoch's dispatch does, after the grace period.
 * Returns: nothing.
 * Errors: none; a NULL pin does nothing, and misuse aborts.
 */
SWF_API void swf_pin_grace_over(struct swf_pin *pin);

/*
 * Fill in g for lists whose readers use ck_epoch sections: a retire calls ck_epoch_call() on
 * rec.
 *
 * Concurrency: any thread; it touches only g. A retire with g must run on the thread that owns
 * rec, the retiring thread's own record (ck_epoch_call() is single-producer per record); the
 * callbacks run in that thread's ck_epoch_poll(), ck_epoch_barrier(), or ck_epoch_synchronize()
 * followed by ck_epoch_reclaim().
 * Progress: wait-free.
 * Ordering: none of its own; a retire with g makes a full fence before ck_epoch_call()
 * (sweepfill(7), "Weakly ordered machines").
 * Returns: nothing.
 * Errors: none; with g or rec NULL it does nothing.
 */
struct ck_epoch_record;
SWF_API void swf_grace_epoch(struct swf_grace *g, struct ck_epoch_record *rec);

/*
 * Fill in g for lists whose readers hold a lock (swf_guard_rwlock, swf_guard_mutex): it sets
 * defer to NULL, and a retire with g frees the member at once unless a sweep holds it pinned
 * (then that sweep's put does).
 *
 * Concurrency: any thread; it touches only g. A retire with g must run under the write side of
 * the readers' lock, where no reader can be inside: the grace period is over at once.
 * Progress: wait-free.
 * Ordering: none; the readers' lock orders their sections before the retire.
 * Returns: nothing.
 * Errors: none; with g NULL it does nothing.
 */
SWF_API void swf_grace_lock(struct swf_grace *g);

/*
 * The SWF_PIN_GRACE_WORDS words of grace storage in a pin, for a grace mechanism's defer.
 *
 * Concurrency: any thread, any time; it touches no memory.
 * Progress: pure address arithmetic, in constant time.
 * Ordering: none.
 * Returns: the address of the pin's grace storage.
 * Errors: none; it does not check its argument.
 */
static inline void *swf_pin_grace_storage(struct swf_pin *pin)
{
    return SWF_STATIC_CAST_(void *, pin->x_grace);
}

/*
 * The pin whose grace storage is at storage, for a grace mechanism's callback: the inverse of
 * swf_pin_grace_storage().
 *
 * Concurrency: any thread, any time; it touches no memory.
 * Progress: pure address arithmetic, in constant time.
 * Ordering: none.
 * Returns: the pin that holds storage.
 * Errors: none; it does not check its argument.
 */
static inline struct swf_pin *swf_pin_from_grace_storage(void *storage)
{
    return SWF_CONTAINER_OF(storage, struct swf_pin, x_grace);
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_PIN_H */
