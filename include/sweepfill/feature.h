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
     * plus the reserve, the add reserve and the headroom is the best figure (then the sweep's
     * NOWAIT allocations succeed and the first adds find objects ready); 0: none;
     * SWF_FEATURE_PREPARE_COUNT: that figure as it is when activate runs (below). */
    size_t prepare;
    /* Objects kept ready beyond the members while f is on, so that adds find one at once: the
     * watermark that swf_feature_maintain() grows sweep.cache back to. SWF_FEATURE_HEADROOM_AUTO
     * (the default): a sixteenth of the members the activation's sweep visited, and at least
     * SWF_FEATURE_HEADROOM_MIN; 0: none; any other value: that many. */
    size_t headroom;
    /* Objects f keeps aside for adders whose NOWAIT allocation fails (the sweep's reserve, for
     * adds): filled by activate and swf_feature_maintain(), emptied by deactivate. 0 to
     * SWF_FEATURE_ADD_RESERVE_MAX; default SWF_FEATURE_ADD_RESERVE_DEFAULT. */
    size_t add_reserve;
    /* Entries in f's owed table: a member left owed while an entry is free gets one (its slot
     * holds the entry's mark, which readers see as empty), and swf_feature_catch_up() finds it
     * there, without walking the list. When every entry is taken, further owed members are
     * found by a walk of the whole list. 0 to SWF_FEATURE_OWED_TABLE_MAX; default
     * SWF_FEATURE_OWED_TABLE_DEFAULT; 0: every catch-up walks. */
    size_t owed_table;
    /* Milliseconds between the calls of swf_feature_maintain() made by a thread that f owns
     * while it is on (created by swf_feature_create(), joined by swf_feature_destroy()); 0 (the
     * default): no thread, your control thread calls swf_feature_maintain(). */
    unsigned int maintain_ms;
};

/* cfg.prepare for a list whose size moves between create and activate (a server's
 * connections): activate counts the members linked at that moment, walking the list as the
 * sweep does (the guard, bounded sections, the cursor pinned; a cursor unlinked meanwhile
 * restarts the count, a few times at most), then grows the cache by that count plus the
 * reserve. The walk costs one visit per member, without allocating. To use a count you keep
 * yourself instead, leave prepare 0 and call swf_cache_grow(cache, count + reserve) just before
 * activate, on the same thread. */
#define SWF_FEATURE_PREPARE_COUNT SWF_STATIC_CAST_(size_t, -1)

/* cfg.headroom's default, and the least headroom it gives. */
#define SWF_FEATURE_HEADROOM_AUTO SWF_STATIC_CAST_(size_t, -1)
#define SWF_FEATURE_HEADROOM_MIN  64

/* cfg.add_reserve's default and largest value. */
#define SWF_FEATURE_ADD_RESERVE_DEFAULT 32
#define SWF_FEATURE_ADD_RESERVE_MAX     4096

/* cfg.owed_table's default and largest value (8 bytes an entry). */
#define SWF_FEATURE_OWED_TABLE_DEFAULT 1024
#define SWF_FEATURE_OWED_TABLE_MAX     65536

/*
 * Set cfg to the defaults: the sweep's (swf_sweep_config_init(), publication by compare-and-swap),
 * no synchronize, prepare 0, headroom SWF_FEATURE_HEADROOM_AUTO, add_reserve
 * SWF_FEATURE_ADD_RESERVE_DEFAULT, owed_table SWF_FEATURE_OWED_TABLE_DEFAULT and maintain_ms 0. Set
 * at least sweep.list, sweep.cache, sweep.init, sweep.guard and synchronize before
 * swf_feature_create().
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
    cfg->headroom = SWF_FEATURE_HEADROOM_AUTO;
    cfg->add_reserve = SWF_FEATURE_ADD_RESERVE_DEFAULT;
    cfg->owed_table = SWF_FEATURE_OWED_TABLE_DEFAULT;
    cfg->maintain_ms = 0;
}

struct swf_feature_stats {
    uint32_t active;             /* 1 from the flag's raising to its clearing */
    uint32_t membarrier;         /* 1: adders pay no fence while off (fence A) */
    uint64_t activations;        /* activate calls that returned 0 */
    uint64_t deactivations;      /* deactivate calls that returned 0 */
    uint64_t assigned_by_add;    /* objects published by swf_feature_added (either step) */
    uint64_t add_reserve_uses;   /* of those, taken from the add reserve (NOWAIT had failed) */
    uint64_t assigned_by_sweep;  /* objects published by activation and catch-up sweeps */
    uint64_t lost_races;         /* compare-and-swaps lost by either (the object went back) */
    uint64_t left_owed;          /* swf_feature_added calls that left the slot empty */
    uint64_t owed_untabled;      /* of those, found the owed table full (a catch-up walks) */
    uint64_t catch_ups;          /* catch-up calls that filled or walked */
    uint64_t catch_up_walks;     /* catch-ups that walked the whole list */
    uint64_t filled_by_catch_up; /* owed members filled from the owed table */
    uint64_t maintains;          /* swf_feature_maintain calls (or activate's) that refilled */
    uint64_t unpublished;        /* objects taken back by deactivate */
    uint64_t released;           /* objects taken back by swf_feature_release */
    uint64_t headroom;           /* the watermark in force (cfg.headroom resolved at activate) */
    uint64_t add_reserve_ready;  /* objects in the add reserve */
    uint64_t owed_tabled;        /* owed members in the owed table now */
};

/*
 * Create a feature, off, from a copy of cfg, and register the process for membarrier's private
 * expedited command where the kernel has it.
 *
 * Concurrency: any thread. From here to swf_feature_destroy(), on or off, the feature is a user
 * of sweep.cache: swf_cache_destroy() of that cache returns EBUSY until then.
 * Progress: blocking: it allocates memory, makes the membarrier system calls and, with
 * maintain_ms, creates a thread (which inherits the calling thread's CPU affinity).
 * Ordering: none; hand the feature to other threads as any pointer (a lock, a release store,
 * pthread_create()).
 * Returns: 0 with *out set, or an error number.
 * Errors:
 * EINVAL: cfg or out is NULL; or a required field is NULL (sweep.list.ops, its first or next,
 * sweep.list.list, sweep.cache, sweep.init, sweep.guard.enter, sweep.guard.leave, synchronize), and
 * then swf_error_reason() names every NULL field in one reason, as "cfg->sweep.init and
 * cfg->synchronize are NULL"; or sweep holds what swf_sweep() refuses: pin, unpin and linked
 * neither all set nor all NULL, a reserve of 0 or above SWF_SWEEP_RESERVE_MAX, a slot offset that
 * is no multiple of the pointer size, a section bound (neither 0 nor SWF_SWEEP_SECTION_BOUND_AUTO)
 * for a list that cannot pin, or an algo outside enum swf_algo; or add_reserve is above
 * SWF_FEATURE_ADD_RESERVE_MAX, or owed_table above SWF_FEATURE_OWED_TABLE_MAX.
 * ENOMEM: no memory for the feature.
 * EAGAIN: maintain_ms is set and its thread could not be created.
 */
SWF_API int swf_feature_create(const struct swf_feature_config *cfg, struct swf_feature **out);

/*
 * Free a feature that is off, and end its use of sweep.cache (swf_cache_destroy() may succeed
 * after this). With maintain_ms, it first stops and joins the feature's thread.
 *
 * Concurrency: exclusive: no other call on f may overlap it. A call that does (a deactivate or
 * catch-up still running on another thread) is refused with EBUSY rather than freeing f under it,
 * as far as the call can be seen: one that has not yet taken f's mutex cannot be.
 * Progress: blocking: it takes f's mutex, joins its thread and frees memory.
 * Ordering: none.
 * Returns: 0, or an error number (and nothing is done).
 * Errors:
 * EINVAL: f is NULL.
 * EBUSY: f is on; or another thread is inside activate, deactivate, catch-up or maintain on f;
 * or a member that left the list still holds an object of f: its swf_feature_release() is still
 * to come. With SWF_DEBUG=checks the last case aborts with one line that says how many objects,
 * since a release after the free would read freed memory.
 */
SWF_API int swf_feature_destroy(struct swf_feature *f);

/*
 * Make sweep.cache ready for count members ahead of activate, from any thread and at any time
 * (at start-up, on a thread that runs where the service does not): grows it by count plus the
 * sweep's reserve, the add reserve and the headroom that count gives (swf_cache_grow()), so that
 * activate's own grow, and its first adds, find the objects there. Objects prepared stay ready
 * in the cache, on or off; the cache's limit and swf_cache_set_limit() still apply.
 *
 * Concurrency: any thread, concurrently with every call on f but swf_feature_destroy().
 * Progress: blocking: it maps memory under the cache's refill mutex. Never inside a read section.
 * Ordering: none; the objects keep the cache's rule (swf_cache_alloc(3)).
 * Returns: 0 or an error number.
 * Errors:
 * EINVAL: f is NULL.
 * ENOMEM: as swf_cache_grow(): what was mapped before the failure stays ready.
 */
SWF_API int swf_feature_prepare(struct swf_feature *f, size_t count);

/*
 * Keep f ready for adds while it is on: refill the add reserve and grow sweep.cache back to the
 * headroom, when adds since the last refill (or the reserve's uses) say it is needed. Call it
 * from the control thread, or a timer of its event loop, every few milliseconds to a second
 * (more often the faster members arrive), or set cfg.maintain_ms and let f's own thread call it.
 * activate, catch-up and deactivate do the same on their way.
 *
 * Concurrency: any thread, concurrently with every call on f but swf_feature_destroy(); it
 * serialises with activate, deactivate and catch-up on f's mutex, and only a try of that mutex:
 * when another of them holds it, it returns 0 at once (that call maintains).
 * Progress: blocking (the mutex's try, allocations that may map memory), but relaxed loads only
 * (the flag, and the adders' counters when on), no lock, when f is off or no add came since the
 * last refill. Never inside a read section.
 * Ordering: objects put in the add reserve are released to the adders that take them (an
 * exchange); the headroom keeps the cache's rule.
 * Returns: 0 or an error number.
 * Errors:
 * EINVAL: f is NULL.
 * ENOMEM: no memory for the reserve or the headroom (what was made ready stays).
 */
SWF_API int swf_feature_maintain(struct swf_feature *f);

/*
 * Switch f on: grow sweep.cache by prepare (swf_cache_grow(), best effort), raise the flag, run
 * barrier B, then sweep the list once, publishing by compare-and-swap; then resolve the headroom
 * from the members the sweep visited and maintain (swf_feature_maintain()): the add reserve is
 * filled and the headroom made ready before it returns. stats, unless NULL, receives the sweep's
 * statistics.
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
 * swf_feature_activate() returned ENOMEM. While f is on, it first fills the members in the owed
 * table (cfg.owed_table): one visit and one allocation each, however long the list. Then, only if
 * a member was owed without an entry (the table was full, or a sweep ran out of memory) and no
 * sweep that began after it was left owed has completed (an earlier catch-up's, or one in flight
 * on another thread, which it waits for), it sweeps the whole list once more (publication by
 * compare-and-swap) inside the guard's sections, touching only linked members, so deletes may
 * run meanwhile. stats, unless NULL, receives that walk's statistics, all zero when it walked
 * none. On its way it maintains (swf_feature_maintain()).
 *
 * Concurrency: as swf_feature_activate(); call it where you may block, and not holding your
 * writer lock if the guard takes its read side.
 * Progress: blocking, but three atomic loads and no lock when no member is owed. An owed member
 * costs one allocation (SWF_WAIT when SWF_NOWAIT finds none) and one init, whatever the list's
 * length; a walk of the list is paid only for the members the table could not hold.
 * Ordering: an adder that leaves a slot empty (or marked with its owed entry) records it with a
 * release (the entry's store, or the owed count's increment) after its link; this call acquires
 * them. A table entry is claimed by a compare-and-swap, so that swf_feature_release() of that
 * member waits for its fill to end (its init and one compare-and-swap) before the member's memory
 * may be freed. Each sweep reads the owed count (acquire) as it begins and, once complete, raises
 * a covered count to what it read (release); the call returns at once only when the covered count
 * (acquire) has reached the count it read on entry, so the publications of the sweep that covered
 * the caller's owed members happen before its return.
 * Returns: 0 or an error number. After 0, the feature is off, or every member owed before the call
 * (its swf_feature_added() returned EAGAIN or ENOMEM before the call began, or an activate
 * returned ENOMEM) that is still linked has an object, also while another thread's catch-up is
 * still running (it waits for that one), and also while that member's own adder retries
 * swf_feature_added() (it waits for that fill too); except a member that such a retry, running
 * during the call, leaves owed again: the retry returns EAGAIN or ENOMEM, and the member waits
 * for the next catch-up.
 * Errors:
 * EINVAL: f is NULL.
 * ENOMEM: an allocation or the sweep ran out of memory: those members are still owed; call it
 * again.
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
 * call it from the callback that frees member (swf_pin_retire(3)), before the free. A member
 * still owed gives back its owed-table entry instead.
 *
 * Concurrency: any thread, concurrently with every call on f but swf_feature_destroy(); never
 * overlapping swf_feature_added() of the same member (release comes after the member's grace
 * period, which follows its unlink, which follows its add). Every member that held an object of
 * f, or was owed, after it left the list must be released before swf_feature_destroy().
 * Progress: lock-free, with no system call; except that when a catch-up is filling this very
 * member from the owed table, it waits for that fill to end (sweep.init and one compare-and-swap,
 * on the catch-up's thread), so that the member's memory is not freed under it.
 * Ordering: the slot is taken with an atomic exchange, as deactivate takes it, so each object
 * goes back to the cache once; the free orders as swf_cache_free() does. The owed entry is freed
 * by a compare-and-swap (acquire), after which no catch-up touches member.
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
 * while your writer lock is still held, or while something else keeps member from being released
 * (after the unlock, a concurrent close may unlink and release member before this call publishes,
 * and its object would then stay in a member that left the list). While f is on it allocates an
 * object (with SWF_NOWAIT: the cache's ready objects, then, when none is ready, one from f's add
 * reserve), initialises it (sweep.init) and publishes it in member's slot by compare-and-swap
 * from NULL, unless a sweep filled the slot first; the loser's object goes back to the cache
 * unseen. When both steps find nothing, member is owed: its slot gets an owed-table entry's mark
 * (readers, swf_slot_load(), see it as empty) while an entry is free, so that
 * swf_feature_catch_up() finds it without a walk.
 *
 * Concurrency: any thread, concurrently with every call on f but swf_feature_destroy(), and never
 * overlapping swf_feature_release() of member. With SWF_WAIT it may not be called inside one of
 * the list's read sections: if the calling thread is in a section of a sweepfill guard, it aborts
 * at once with one line on stderr (only while f is on: off, it returns 0 inline). Never make a
 * SWF_WAIT call holding a lock that other adders or deleters need: it may wait for the cache's
 * refill mutex.
 * Progress: while f is off, inline: a compiler barrier, one relaxed load and a branch (where f
 * uses no membarrier, a call and a full fence). While on, with SWF_NOWAIT lock-free, with no
 * system call (the add reserve and the owed table are scanned from a per-thread start, at most
 * once each); except that a call on a member it left owed (a retry), while a catch-up is filling
 * that member from the owed table, yields until that fill ends (sweep.init and one
 * compare-and-swap, on the catch-up's thread). With SWF_WAIT it may block for memory.
 * Ordering: fence A, between the link (before the call) and the flag's load (relaxed), pairs with
 * swf_feature_activate()'s barrier B: either the activation's walk sees the link or this call
 * sees the flag up. A is a compiler barrier where f uses membarrier (swf_feature_stats() gives
 * membarrier 1); otherwise (older kernels, a seccomp filter that refuses it, a ThreadSanitizer
 * build of the library, or SWF_NO_MEMBARRIER set to 1, on, yes or true in the environment when f
 * was created) the inline path calls the library, which makes A a full fence. Seeing the flag up,
 * it counts itself in and loads the flag again, both sequentially consistent (C), publishes only
 * if f is still on, with a release compare-and-swap after init, and counts itself out (release),
 * against swf_feature_deactivate()'s D. An owed member is recorded with a release (its table
 * entry's store, or the owed count's increment) after the link (swf_feature_catch_up()).
 * Returns: 0: f is off, or member has an object (a new one, the reserve's, or the sweep's); or an
 * error number, and then the slot is left empty and member is owed: swf_feature_catch_up() fills
 * it.
 * Errors: checked only while f is on; f itself is not checked by the inline path, and must be a
 * feature.
 * EINVAL: member is NULL, or mode is neither SWF_NOWAIT nor SWF_WAIT.
 * EAGAIN: SWF_NOWAIT: no object is ready and the add reserve is empty.
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
