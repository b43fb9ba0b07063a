/*
 * sweepfill/feature.h - switch a feature on and off exactly over a list you own: one object per
 * member while on, members added at any moment included, and none once off.
 *
 * Your add path calls swf_feature_added() right after it links a member, and the callback that
 * frees a deleted member calls swf_feature_release() before the free. The comment above each
 * function is its contract; swf_feature_create(3) explains the protocol, the moves that must not
 * overlap a deactivation, fork, and the fences (docs/design.md has the argument,
 * docs/model/feature.pml the model).
 */
#ifndef SWEEPFILL_FEATURE_H
#define SWEEPFILL_FEATURE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "cache.h"
#include "list.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

struct swf_feature;

struct swf_feature_config {
    /* The sweep: list (with its slot offset), cache, reserve, init, guard and section_bound as
     * for swf_sweep (SWF_SWEEP_SECTION_BOUND_AUTO by default: 1024 where the list can pin, one
     * section per pass where it cannot); algo too (RESUME by default). publish is ignored:
     * always SWF_PUBLISH_CAS. deactivate walks the list with the same ops, guard and section
     * bound, taking slots.
     * What list.list points to (a walk state of list_hash.h) must live as long as the feature. */
    struct swf_sweep_config sweep;
    /* Wait for a grace period of the list's readers: every read section that began before the
     * call has ended when it returns. Required; called outside any section, by deactivate, on
     * its thread. For the ready-made guards: swf_synchronize_epoch (arg: the guard's record),
     * swf_synchronize_rwlock, swf_synchronize_mutex (arg: the lock), swf_synchronize_urcu(_qsbr)
     * (arg: the flavour), which sleep while they wait (sweep.h). A call of it that has not
     * returned after SWF_WATCHDOG_SECONDS (5) seconds prints one line on stderr, once per call,
     * and the wait goes on (sweep.h). */
    void (*synchronize)(void *arg);
    void *synchronize_arg;
    /* Objects activate makes ready (swf_cache_grow) before it raises the flag: your member count
     * plus the reserve is the best figure (then the sweep's NOWAIT allocations succeed); 0:
     * none; SWF_FEATURE_PREPARE_COUNT: that figure as it is when activate runs (below). */
    size_t prepare;
};

/* cfg.prepare for a list whose size moves between create and activate (a server's
 * connections): activate counts the members linked at that moment, walking the list as the
 * sweep does (the guard, bounded sections, the cursor pinned; a cursor unlinked meanwhile
 * restarts the count, a few times at most), then grows the cache by that count plus the
 * reserve. The walk costs one visit per member, without allocating. To use a count you keep
 * yourself instead, leave prepare 0 and call swf_cache_grow(cache, count + reserve) just before
 * activate, on the same thread. */
#define SWF_FEATURE_PREPARE_COUNT ((size_t)-1)

/*
 * Set cfg to the defaults: the sweep's (swf_sweep_config_init(), publication by compare-and-swap),
 * no synchronize and prepare 0. Set at least sweep.list, sweep.cache, sweep.init, sweep.guard and
 * synchronize before swf_feature_create().
 *
 * Concurrency: any thread; cfg is the caller's until swf_feature_create() copies it.
 * Progress: wait-free: stores to cfg only.
 * Ordering: none.
 * Returns: nothing.
 * Errors: none; it cannot fail.
 */
static inline void swf_feature_config_init(struct swf_feature_config *cfg)
{
    swf_sweep_config_init(&cfg->sweep);
    cfg->sweep.publish = SWF_PUBLISH_CAS;
    cfg->synchronize = SWF_NULL_;
    cfg->synchronize_arg = SWF_NULL_;
    cfg->prepare = 0;
}

struct swf_feature_stats {
    uint32_t active;            /* 1 from the flag's raising to its clearing */
    uint32_t membarrier;        /* 1: adders pay no fence while off (fence A) */
    uint64_t activations;       /* activate calls that returned 0 */
    uint64_t deactivations;     /* deactivate calls that returned 0 */
    uint64_t assigned_by_add;   /* objects published by swf_feature_added */
    uint64_t assigned_by_sweep; /* objects published by activation and catch-up sweeps */
    uint64_t lost_races;        /* compare-and-swaps lost by either (the object went back) */
    uint64_t left_owed;         /* swf_feature_added calls that left the slot empty */
    uint64_t catch_ups;         /* catch-up sweeps run */
    uint64_t unpublished;       /* objects taken back by deactivate */
    uint64_t released;          /* objects taken back by swf_feature_release */
};

/*
 * Create a feature, off, from a copy of cfg, and register the process for membarrier's private
 * expedited command where the kernel has it.
 *
 * Concurrency: any thread. From here to swf_feature_destroy(), on or off, the feature is a user
 * of sweep.cache: swf_cache_destroy() of that cache returns EBUSY until then.
 * Progress: blocking: it allocates memory and makes the membarrier system calls.
 * Ordering: none; hand the feature to other threads as any pointer (a lock, a release store,
 * pthread_create()).
 * Returns: 0 with *out set, or an error number.
 * Errors:
 * EINVAL: cfg or out is NULL; or a required field is NULL (sweep.list.ops, its first or next,
 * sweep.cache, sweep.init, sweep.guard.enter, sweep.guard.leave, synchronize), and then
 * swf_error_reason() names every NULL field in one reason, as "cfg->sweep.init and
 * cfg->synchronize are NULL"; or sweep holds what swf_sweep() refuses: pin, unpin and linked
 * neither all set nor all NULL, a reserve of 0 or above SWF_SWEEP_RESERVE_MAX, a slot offset that
 * is no multiple of the pointer size, a section bound (neither 0 nor SWF_SWEEP_SECTION_BOUND_AUTO)
 * for a list that cannot pin, or an algo outside enum swf_algo.
 * ENOMEM: no memory for the feature.
 */
SWF_API int swf_feature_create(const struct swf_feature_config *cfg, struct swf_feature **out);

/*
 * Free a feature that is off, and end its use of sweep.cache (swf_cache_destroy() may succeed
 * after this).
 *
 * Concurrency: exclusive: no other call on f may overlap it.
 * Progress: blocking: it frees memory.
 * Ordering: none.
 * Returns: 0, or an error number (and nothing is done).
 * Errors:
 * EINVAL: f is NULL.
 * EBUSY: f is on.
 */
SWF_API int swf_feature_destroy(struct swf_feature *f);

/*
 * Switch f on: grow sweep.cache by prepare (swf_cache_grow(), best effort), raise the flag, run
 * barrier B, then sweep the list once, publishing by compare-and-swap. stats, unless NULL,
 * receives that sweep's statistics.
 *
 * Concurrency: any thread the guard allows, concurrently with every call on f but
 * swf_feature_destroy(). swf_feature_activate(), swf_feature_deactivate() and
 * swf_feature_catch_up() serialise on f's mutex and run sweep.guard and synchronize on the
 * calling thread, which must be one the guard allows: a thread registered with the flavour for
 * the urcu guards; for swf_guard_epoch(), the one thread that owns the record, so that all three
 * run there, and members owed by adders of other threads wait for that thread's catch-up. None
 * of the three may be called inside one of the list's read sections, as they wait for grace
 * periods: if the calling thread is in a section of a sweepfill guard (a ready-made guard's,
 * list_urcu.h's, the registry's read lock), it aborts at once with one line on stderr; inside a
 * section of your own
 * (pthread_rwlock_rdlock(), rcu_read_lock(), ck_epoch_begin()) the wait that cannot end is
 * reported after SWF_WATCHDOG_SECONDS (5) seconds by the watchdog (sweep.h), once per call, and
 * goes on.
 * Progress: blocking: it takes f's mutex, grows the cache and sweeps. No adder waits for this
 * preparation: the cache is grown before the flag goes up.
 * Ordering: the flag is raised, then barrier B, then the walk starts from the head; against an
 * adder's fence A (swf_feature_added()) either the walk sees the adder's link or the adder sees
 * the flag. B is a sequentially consistent fence and, where swf_feature_create() registered it,
 * membarrier(2) with MEMBARRIER_CMD_PRIVATE_EXPEDITED, which makes every running thread of the
 * process execute a full barrier; should that system call fail, and fail again after registering
 * anew, activate aborts. Each object is initialised before the release compare-and-swap that
 * publishes it.
 * Returns: 0 or an error number. After 0, every member linked at the return has an object, but
 * for owed members (their swf_feature_added() returned EAGAIN or ENOMEM since) and members whose
 * swf_feature_added() has not returned yet; that holds of every linked member until
 * swf_feature_deactivate() is called. Each member holds at most one object: the sweep and the
 * adders both publish by compare-and-swap from NULL, and the loser's object goes back to the
 * cache unseen.
 * Errors:
 * EINVAL: f is NULL.
 * EALREADY: f is already on and its sweep completed.
 * ENOMEM: the sweep ran out of memory; f stays on (adders keep filling), the members it did not
 * reach are owed, and a later activate retries the sweep.
 */
SWF_API int swf_feature_activate(struct swf_feature *f, struct swf_sweep_stats *stats);

/*
 * Switch f off: clear the flag, wait for the adders counted in, walk the list taking every slot
 * (an exchange; the sweep's guard, bounded sections, a pinned cursor where the list can pin),
 * wait for a grace period (synchronize) and free the objects.
 *
 * Concurrency: as swf_feature_activate(); and no move (a member unlinked and linked again without
 * a retire) may overlap it.
 * Progress: blocking: it waits for the adders counted in (each does a bounded amount of work, plus
 * its allocation) and for a grace period. It never fails for want of memory: when its list of
 * taken objects cannot grow, it waits for a grace period and frees what it holds, then walks on.
 * Ordering: the flag's clearing and the loads of the adders' counts are sequentially consistent
 * (D), as an adder's count-in and second load of the flag are (C, swf_feature_added()): either
 * deactivate waits for the adder's count-out, which releases the adder's publication to the walk,
 * or the adder sees the flag down and publishes nothing. The objects go back to the cache after
 * synchronize has returned.
 * Returns: 0 or an error number. After 0, no member holds an object, and none will until the next
 * activation: every object was taken back and freed after a grace period, or is taken by
 * swf_feature_release() of a member deleted meanwhile. Each object is freed once: every taking is
 * an exchange.
 * Errors:
 * EINVAL: f is NULL.
 * EALREADY: f is not on.
 */
SWF_API int swf_feature_deactivate(struct swf_feature *f);

/*
 * Fill the owed members: the retry after swf_feature_added() returned EAGAIN or ENOMEM, or after
 * swf_feature_activate() returned ENOMEM. While f is on, unless a sweep that began after every
 * member owed before this call was left owed has completed (an earlier catch-up's, or one in
 * flight on another thread, which it waits for), it sweeps the list once more (publication by
 * compare-and-swap) inside the guard's sections, touching only linked members, so deletes may run
 * meanwhile. stats, unless NULL, receives that sweep's statistics, all zero when it ran none.
 *
 * Concurrency: as swf_feature_activate(); call it where you may block, and not holding your
 * writer lock if the guard takes its read side.
 * Progress: blocking, but two atomic loads and no lock when no member was left owed since the last
 * sweep that completed.
 * Ordering: an adder that leaves a slot empty increments an owed count (release) after its link;
 * each sweep reads it (acquire) as it begins and, once complete, raises a covered count to what it
 * read (release). swf_feature_catch_up() reads the owed count on entry and returns at once
 * only when the covered count (acquire) has reached it, so the publications of the sweep that
 * covered the caller's owed members happen before its return.
 * Returns: 0 or an error number. After 0, the feature is off, or every member owed before the call
 * (its swf_feature_added() returned EAGAIN or ENOMEM before the call began, or an activate
 * returned ENOMEM) that is still linked has an object, also while another thread's catch-up is
 * still walking (it waits for that one).
 * Errors:
 * EINVAL: f is NULL.
 * ENOMEM: the sweep ran out of memory: the members are still owed; call it again.
 */
SWF_API int swf_feature_catch_up(struct swf_feature *f, struct swf_sweep_stats *stats);

/*
 * The out-of-line half of swf_feature_added(), exported for its inline path: call
 * swf_feature_added() instead. Its messages name swf_feature_added().
 *
 * Concurrency: as swf_feature_added().
 * Progress: as swf_feature_added() while f is on; while off, a call and, where f uses no
 * membarrier, a full fence.
 * Ordering: as swf_feature_added().
 * Returns: as swf_feature_added().
 * Errors: those of swf_feature_added(), and:
 * EINVAL: f is NULL.
 */
SWF_API int swf_feature_added_slow_(struct swf_feature *f, void *member, enum swf_alloc_mode mode);

/*
 * Take back the object of member, deleted and past its grace period, and free it to sweep.cache:
 * call it from the callback that frees member (swf_pin_retire(3)), before the free.
 *
 * Concurrency: any thread, concurrently with every call on f but swf_feature_destroy(); never
 * overlapping swf_feature_added() of the same member (release comes after the member's grace
 * period, which follows its unlink, which follows its add).
 * Progress: lock-free, with no system call.
 * Ordering: the slot is taken with an atomic exchange, as deactivate takes it, so each object
 * goes back to the cache once; the free orders as swf_cache_free() does.
 * Returns: 0 (also when member holds no object), or an error number.
 * Errors:
 * EINVAL: f or member is NULL.
 */
SWF_API int swf_feature_release(struct swf_feature *f, void *member);

/*
 * Fill *out with f's counters (struct swf_feature_stats: each field's comment says what it
 * counts).
 *
 * Concurrency: any thread, concurrently with every call on f but swf_feature_destroy().
 * Progress: lock-free: relaxed loads only, no lock and no system call.
 * Ordering: none: each field was current at some instant during the call, not all at one.
 * Returns: 0 or an error number.
 * Errors:
 * EINVAL: f or out is NULL.
 */
SWF_CXX_SHADOW_OFF_
SWF_API int swf_feature_stats(struct swf_feature *f, struct swf_feature_stats *out);
SWF_CXX_SHADOW_ON_

/* The first bytes of a struct swf_feature, read by the inline path: 0 while off on a system
 * with membarrier; anything else sends swf_feature_added to the library. The library's. */
struct swf_feature_head_ {
    uint32_t x_gate;
};

/*
 * The adder's half: call it right after linking member (your list's insert made it reachable),
 * inside or outside your writer lock. While f is on it allocates an object with mode, initialises
 * it (sweep.init) and publishes it in member's slot by compare-and-swap from NULL, unless a sweep
 * filled the slot first; the loser's object goes back to the cache unseen.
 *
 * Concurrency: any thread, concurrently with every call on f but swf_feature_destroy(), and never
 * overlapping swf_feature_release() of member. With SWF_WAIT it may not be called inside one of
 * the list's read sections: if the calling thread is in a section of a sweepfill guard, it aborts
 * at once with one line on stderr (only while f is on: off, it returns 0 inline). Never make a
 * SWF_WAIT call holding a lock that other adders or deleters need: it may wait for the cache's
 * refill mutex.
 * Progress: while f is off, inline: a compiler barrier, one relaxed load and a branch (where f
 * uses no membarrier, a call and a full fence). While on, with SWF_NOWAIT lock-free, with no
 * system call; with SWF_WAIT it may block for memory.
 * Ordering: fence A, between the link (before the call) and the flag's load (relaxed), pairs with
 * swf_feature_activate()'s barrier B: either the activation's walk sees the link or this call
 * sees the flag up. A is a compiler barrier where f uses membarrier (swf_feature_stats() gives
 * membarrier 1); otherwise (older kernels, a seccomp filter that refuses it, a ThreadSanitizer
 * build of the library, or SWF_NO_MEMBARRIER set to 1, on, yes or true in the environment when f
 * was created) the inline path calls the library, which makes A a full fence. Seeing the flag up,
 * it counts itself in and loads the flag again, both sequentially consistent (C), publishes only
 * if f is still on, with a release compare-and-swap after init, and counts itself out (release),
 * against swf_feature_deactivate()'s D. A slot left empty increments the owed count (release)
 * after the link (swf_feature_catch_up()).
 * Returns: 0: f is off, or member has an object (a new one, or the sweep's); or an error number,
 * and then the slot is left empty and member is owed: swf_feature_catch_up() fills it.
 * Errors: checked only while f is on; f itself is not checked by the inline path, and must be a
 * feature.
 * EINVAL: member is NULL, or mode is neither SWF_NOWAIT nor SWF_WAIT.
 * EAGAIN: SWF_NOWAIT: no object is ready.
 * ENOMEM: SWF_WAIT: no memory.
 */
static inline int swf_feature_added(struct swf_feature *f, void *member, enum swf_alloc_mode mode)
{
    const struct swf_feature_head_ *h =
        SWF_STATIC_CAST_(const struct swf_feature_head_ *, SWF_STATIC_CAST_(const void *, f));
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the link stays before the load: fence A */
    if (__builtin_expect(__atomic_load_n(&h->x_gate, __ATOMIC_RELAXED) == 0, 1))
        return 0;
    return swf_feature_added_slow_(f, member, mode);
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_FEATURE_H */
