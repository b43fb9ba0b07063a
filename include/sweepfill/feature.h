/*
 * sweepfill/feature.h - switch a feature on and off exactly over a list you own: one object per
 * member while on, members added at any moment included, and none once off.
 *
 * swf_sweep fills only the members linked for the whole call; struct swf_feature adds the adder's
 * half. You keep your list, its lock or RCU, its add and its delete, and add two calls:
 *
 *     add:     link m (your list's insert);  swf_feature_added(f, m, SWF_NOWAIT);
 *     delete:  unlink m;  retire m as the sweep requires (swf_pin_retire);  and in the callback
 *              that frees m after its grace period:  swf_feature_release(f, m);  free m
 *
 * What is guaranteed (with the calls above, and the sweep's own rules: sweep.h, list.h):
 *   - Once swf_feature_activate has returned 0 and until swf_feature_deactivate is called, every
 *     linked member has an object, except members whose swf_feature_added returned EAGAIN or
 *     ENOMEM since (they are *owed*) and members whose swf_feature_added has not returned yet.
 *   - Each member holds at most one object: the sweep and the adder both publish with a
 *     compare-and-swap from NULL, and the loser's object goes back to the cache unseen.
 *   - When swf_feature_deactivate returns, no member holds an object (no move may overlap it:
 *     see Moves below), and none will until the next activation: every object was taken back
 *     and freed after a grace period (cfg.synchronize), or is taken by swf_feature_release of a
 *     member deleted meanwhile. Each object is freed once: every taking is an exchange.
 *
 * Adders: SWF_NOWAIT (hot paths, under your writer lock) is lock-free, with no system call; when
 * no object is ready it returns EAGAIN, the slot empty and the member owed. Fill it with
 * swf_feature_catch_up(f), then or later, where you may block (not holding your writer lock if
 * the guard takes its read side; on a thread the guard allows): one walk of the list inside
 * the guard's sections gives an object to every member owed before the call (N visits, objects
 * only for empty slots; nothing to do when no member is owed), and it touches only members
 * still linked, so deletes may run meanwhile. Calling swf_feature_added(f, m, SWF_WAIT) on m
 * again instead is safe only while something keeps m from being released until it returns:
 * the caller is m's only deleter, or holds a reference your deleter waits for. Otherwise a
 * delete may unlink, release and free m once your lock is released, and the retry would write
 * into freed memory and publish an object that nobody frees. Never make a SWF_WAIT call holding
 * a lock that other adders or deleters need: it may wait for the cache's refill mutex. No adder
 * waits for activate's own preparation: activate grows the cache (cfg.prepare) before it raises
 * the flag.
 *
 * Moves: a member unlinked and linked again without a retire (an LRU's move-to-front) keeps its
 * slot, and no move may overlap swf_feature_deactivate: its walk may pass the place the member
 * leaves before the move and the place it goes to after, and the member would keep its object.
 * Keep moves out of deactivate (a lock or flag of yours that your movers respect), or move by
 * deleting the member (retire) and adding a new one. With the full checks on
 * (swf_debug_checks()), deactivate walks the list once more and aborts if it finds a linked
 * member that still holds an object.
 *
 * Cost: while off, swf_feature_added is inline: a compiler barrier, one relaxed load and a branch
 * (bench/RESULTS.md, sweep_overhead). While on: a call, an increment and a decrement of a
 * per-thread-stripe counter, one NOWAIT allocation, init, and a compare-and-swap.
 *
 * Memory ordering (the argument: docs/design.md, 'Activation: fences A and B' and 'Deactivation:
 * C and D, and the adders counted in'; the model: docs/model/feature.pml). The adder links m,
 * then fence A, then reads the flag (relaxed); activate raises the flag, then barrier B, then
 * walks from the head: the walk sees the link or the adder sees the flag. Where the kernel has
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (Linux 4.14; registered when the feature is
 * created), A is a compiler barrier and B that system call; otherwise (older kernels, a seccomp
 * filter that refuses it, a ThreadSanitizer build of the library, or SWF_NO_MEMBARRIER set to 1,
 * on, yes or true in the environment when the feature is created) the flag word says so and the
 * adder calls the library, which makes A a full fence. A membarrier that fails after a
 * successful registration makes activate abort. An adder that saw the flag on counts itself in
 * and reads it again, both sequentially consistent (C), publishes only if it is still on, and
 * counts itself out (release); deactivate clears the flag and loads the counts, both
 * sequentially consistent (D), and waits until no adder is counted in before it walks. An adder
 * that leaves a slot empty increments an owed count (release) after its link; each sweep reads
 * it (acquire) as it begins and, once complete, raises a covered count to what it read
 * (release); catch_up returns at once only when the covered count (acquire) has reached the owed
 * count it read on entry, so the covering sweep's publications are visible to its caller.
 *
 * Synchronisation: every call may run concurrently with every other from any threads, except
 * swf_feature_destroy, which no other call on f may overlap, and swf_feature_added and
 * swf_feature_release of one member (release comes after m's grace period, which follows its
 * unlink, which follows its add). activate, deactivate and catch_up serialise on the feature's
 * mutex and run the guard and cfg.synchronize on the calling thread, which must be the guard's
 * thread where the guard requires it: a thread registered with the flavour (urcu), or the one
 * thread that owns the epoch record (swf_guard_epoch: all three on that thread, so an adder of
 * another thread leaves its owed members to that thread's catch-up). None of them, nor
 * swf_feature_added with SWF_WAIT, may be called inside one of the list's read sections: inside
 * a section of a sweepfill guard on the calling thread (a ready-made guard's, list_urcu.h's, the
 * registry's read lock) each aborts at once with one line on stderr (swf_feature_added only
 * while the feature is on: off, it returns 0 inline); inside a section of your own (rdlock,
 * rcu_read_lock, ck_epoch_begin) the wait that cannot end is reported after 5 s by the watchdog
 * (sweep.h, SWF_WATCHDOG_SECONDS), once per call, and goes on.
 *
 * fork: no fork handlers. A child may use a feature only if no other thread of the parent was
 * inside its activate, deactivate or catch_up or between an adder's count-in and count-out;
 * membarrier's registration is inherited by the child.
 *
 * Progress: added with SWF_NOWAIT and release are lock-free; with SWF_WAIT added may block for
 * memory. activate, deactivate and catch_up block; deactivate waits for the adders counted in
 * (each does a bounded amount of work, plus its allocation) and for a grace period.
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
     * returned after SWF_WATCHDOG_SECONDS (5) seconds prints one line on stderr (sweep.h). */
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
 * reserve. The walk costs one visit per member, without allocating. A value rather than a
 * callback: the figure is the list's own, counted through the ops and guard the sweep uses,
 * and the config keeps its layout. To use a count you keep yourself instead, leave prepare 0
 * and call swf_cache_grow(cache, count + reserve) just before activate, on the same thread. */
#define SWF_FEATURE_PREPARE_COUNT ((size_t)-1)

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
    uint32_t membarrier;        /* 1: adders pay no fence while off (see the top comment) */
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
 * Create a feature, off. Copies cfg. Returns 0; EINVAL (cfg or out NULL; sweep.list.ops, first,
 * next, cache, init, guard.enter or guard.leave NULL, or synchronize NULL: swf_error_reason()
 * names every NULL field at once; pin/unpin/linked not all set or all NULL; reserve 0 or above
 * SWF_SWEEP_RESERVE_MAX; slot_offset not a multiple of sizeof(void *); a section bound other
 * than 0 and SWF_SWEEP_SECTION_BOUND_AUTO on a list that cannot pin; an unknown algo); ENOMEM.
 * Registers the process for membarrier's private expedited command if the kernel has it. From
 * here to swf_feature_destroy, on or off, the feature uses sweep.cache: swf_cache_destroy of it
 * returns EBUSY until then.
 */
SWF_API int swf_feature_create(const struct swf_feature_config *cfg, struct swf_feature **out);

/* Free an inactive feature (and release its cache: swf_cache_destroy may succeed after this).
 * Returns 0; EINVAL (NULL); EBUSY while active (nothing is done). Exclusive: no other call on f
 * may run. */
SWF_API int swf_feature_destroy(struct swf_feature *f);

/*
 * Switch on: swf_cache_grow(cache, cfg.prepare) (best effort; SWF_FEATURE_PREPARE_COUNT: the
 * members counted now plus the reserve), raise the flag, the barrier B, then one sweep (CAS
 * publication). stats (may be NULL) receives the sweep's statistics.
 * Returns 0: every member linked now has an object, but for owed ones (see the top comment);
 * EALREADY: already on and complete; ENOMEM: the sweep ran out of memory - the feature stays on
 * (adders keep filling) and a later activate retries the sweep; EINVAL (f NULL).
 * Blocking; not inside a read section.
 */
SWF_API int swf_feature_activate(struct swf_feature *f, struct swf_sweep_stats *stats);

/*
 * Switch off: clear the flag and wait for the adders counted in (D), then walk the list
 * (bounded sections, a pinned cursor where the list can pin) taking every slot, wait for a grace
 * period (cfg.synchronize) and free the objects. Returns 0, with no member holding an object
 * (no move may overlap it: see the top comment); EALREADY (not on); EINVAL (f NULL). Never fails
 * for want of memory: if the list of taken objects cannot grow, it waits for a grace period and
 * frees what it holds before walking on. With the full checks on (swf_debug_checks()) it walks
 * once more after taking every slot and aborts, with one line naming a move as the likely cause,
 * if it finds a linked member that still holds an object. Blocking; not inside a read section.
 */
SWF_API int swf_feature_deactivate(struct swf_feature *f);

/*
 * Fill the owed members: the way to retry after swf_feature_added returned EAGAIN or ENOMEM.
 * While the feature is on, unless a sweep that began after every member owed before this call
 * was left owed has completed (an earlier catch-up's, or one in flight on another thread, which
 * it waits for), sweep the list once more (CAS publication), inside the guard's sections,
 * touching only linked members. Returns 0: the feature is off, or every member owed before the
 * call (its swf_feature_added returned EAGAIN or ENOMEM before the call began, or an activate
 * returned ENOMEM) that is still linked has an object; ENOMEM (the sweep ran out of memory:
 * still owed, call again); EINVAL. When no member was left owed since the last sweep that
 * completed: two atomic loads, no lock. Blocking; not inside a read section.
 */
SWF_API int swf_feature_catch_up(struct swf_feature *f, struct swf_sweep_stats *stats);

/* The out-of-line half of swf_feature_added: call that instead. Its messages name
 * swf_feature_added. */
SWF_API int swf_feature_added_slow_(struct swf_feature *f, void *member, enum swf_alloc_mode mode);

/* Take back the object of a member whose grace period is over (from the callback that frees
 * it), and free it to the cache. Returns 0; EINVAL (f or member NULL). Lock-free. */
SWF_API int swf_feature_release(struct swf_feature *f, void *member);

/* Fill *out; each field was current at some instant during the call. Returns 0; EINVAL. */
SWF_CXX_SHADOW_OFF_
SWF_API int swf_feature_stats(struct swf_feature *f, struct swf_feature_stats *out);
SWF_CXX_SHADOW_ON_

/* The first bytes of a struct swf_feature, read by the inline path: 0 while off on a system
 * with membarrier; anything else sends swf_feature_added to the library. The library's. */
struct swf_feature_head_ {
    uint32_t x_gate;
};

/*
 * The adder's half: call right after linking member (your list's insert made it reachable),
 * inside or outside your writer lock. Returns 0: the feature is off, or member has an object (a
 * new one, or the sweep's); EAGAIN (SWF_NOWAIT: no object ready; the slot is left empty and
 * owed - see the top comment for what to do); ENOMEM (SWF_WAIT: no memory; owed likewise);
 * EINVAL (member NULL, or mode neither SWF_NOWAIT nor SWF_WAIT: checked only while on). f must
 * be a feature: the inline path does not check it. Off: a compiler barrier, a relaxed load and
 * a branch, inline.
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
