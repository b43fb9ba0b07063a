/*
 * sweepfill/sweep.h - sweep-and-assign: give every member of a live list an object in its slot.
 *
 * One call walks the list inside read-side sections and, for each member whose slot is NULL,
 * takes an object (a NOWAIT allocation from the cache, else one from a small reserve filled
 * beforehand with WAIT allocations), runs init(obj, member) on it and publishes it with a release
 * store. Nothing inside a section blocks: WAIT allocations happen only between sections. With N
 * members, every slot empty, and B the reserve (docs/design.md, 'One walker, three algorithms'):
 *
 *   SWF_RESUME (default)   one pass. When NOWAIT fails and the reserve is empty it pins the
 *                          member it stands on, leaves the section, refills the reserve, enters
 *                          again and continues from that member. Visits: N + refills at most,
 *                          even at 100% NOWAIT failure; N visits and no refill when NOWAIT never
 *                          fails. Needs a list that can pin (list.h; every _AUTO adapter can);
 *                          without one it behaves as SWF_RESTART and sets stats.fell_back,
 *                          unless the guard declares SWF_GUARD_BLOCKING_OK: then it refills
 *                          inside the section and keeps its cursor (stats.inplace_refills). The
 *                          fallback still returns 0; with the full checks on
 *                          (swf_debug_checks() == 1) it also prints one line to stderr per such
 *                          call, naming the function called ("sweepfill: swf_sweep: the list
 *                          cannot pin ... SWF_RESUME runs as SWF_RESTART ..."; a sweep that
 *                          SWF_SWEEP_DEFINE generated gives its own name).
 *   SWF_RESTART            like RESUME, but after a refill it walks again from the head.
 *                          Passes: P = max(1, ceil(N / B)) at 100% NOWAIT failure, with
 *                          B*P*(P-1)/2 + N + (P-1) visits; 1 pass and N visits when NOWAIT never
 *                          fails, which takes a cache with N ready objects for the sweeping
 *                          thread (swf_cache_grow(cache, N + B) before the sweep: the
 *                          reserve's fill takes B of them).
 *   SWF_BATCH_RESTART      no NOWAIT at all: fill the reserve, walk from the head giving reserve
 *                          objects to empty slots; with the reserve used up, leave, refill, walk
 *                          again. P = max(1, ceil(N / B)) passes, B*P*(P-1)/2 + N + (P-1) visits.
 *                          If a refill comes back empty it walks on without a reserve and
 *                          returns ENOMEM only at a member that needs an object.
 *
 * A section bound K > 0 makes every algorithm leave and re-enter its section after K visits,
 * resuming after the member it just handled (so the walk stays one pass and visits do not grow);
 * it needs a list that can pin. If a pinned cursor was unlinked while the sweep was outside its
 * section, the walk restarts from the head (stats.restarts) - the only case in which RESUME
 * makes more than one pass. The default, SWF_SWEEP_SECTION_BOUND_AUTO, is a bound of
 * SWF_SWEEP_SECTION_BOUND_DEFAULT (1024) visits where the list can pin, and one section per pass
 * where it cannot (stats.unbounded says so); 0 asks for one section per pass on any list.
 *
 * Contract: when swf_sweep returns 0, every member that was linked for the whole call has a
 * non-NULL slot; each new object was initialised once and published once; pre-set slots were not
 * touched; unused reserve objects went back to the cache. Objects alive in the cache grew by
 * exactly stats.assigned (for a cache used by nothing else).
 *
 * Memory ordering: init(obj, member) happens-before the release store (or release CAS) that
 * publishes obj, so a reader's swf_slot_load() (acquire) that returns obj sees its
 * initialisation. The emptiness check is a relaxed load: a slot set concurrently by someone else
 * is either seen set or, in SWF_PUBLISH_CAS mode, loses the CAS and its object goes back.
 *
 * Synchronisation:
 *                      sweep   list add   list del   readers   cache ops
 *   sweep (STORE)        X        -          -          -          -
 *   sweep (CAS)          -        -          -          -          -
 * With SWF_PUBLISH_STORE the sweep must be the only assigner of the slots it fills; with
 * SWF_PUBLISH_CAS any number of sweeps and other assigners may race. List adds and deletes follow
 * the list's own rules; a deleter that frees a member must wait for a grace period, and for
 * unpin when the list pins (pin.h).
 *
 * Progress: blocking overall (refills may wait for memory), but nothing inside a read-side
 * section blocks: the only calls made there are the list ops, init (which must not block
 * either), the cache's lock-free NOWAIT allocation (swf_cache_alloc_bulk, 32 objects at a time,
 * one at a time while the cache has failure injection on) and free, and the guard itself.
 * Objects the last batch did not use go back to the cache before the sweep returns.
 */
#ifndef SWEEPFILL_SWEEP_H
#define SWEEPFILL_SWEEP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "api.h"
#include "cache.h"
#include "list.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SWF_SWEEP_RESERVE_DEFAULT 32 /* FTRACE_RETSTACK_ALLOC_SIZE */
#define SWF_SWEEP_RESERVE_MAX     65536

/* Visits per read-side section by default where the list can pin: the figure behind the grace
 * periods README.md and docs/design.md measure. */
#define SWF_SWEEP_SECTION_BOUND_DEFAULT 1024
/* section_bound's default: SWF_SWEEP_SECTION_BOUND_DEFAULT where the list can pin, one section
 * per pass where it cannot (never EINVAL). */
#define SWF_SWEEP_SECTION_BOUND_AUTO SIZE_MAX

enum swf_algo {
    SWF_RESUME = 0,
    SWF_RESTART = 1,
    SWF_BATCH_RESTART = 2,
};

enum swf_publish {
    SWF_PUBLISH_STORE = 0, /* release store: the sweep is the only assigner */
    SWF_PUBLISH_CAS = 1,   /* release CAS from NULL: the loser's object goes back */
};

/* The read-side section: enter and leave are called in pairs on the sweeping thread. */
struct swf_guard {
    void (*enter)(void *arg);
    void (*leave)(void *arg);
    void *arg;
    unsigned int flags;
};

/* The guard tolerates blocking inside its section (a ck_epoch section does: blocking there only
 * delays reclamation). Lets RESUME refill in place on lists that cannot pin. Off by default. */
#define SWF_GUARD_BLOCKING_OK 1u

/* Ready-made guards. The epoch guard uses ck_epoch_begin/end on rec (owned by the calling
 * thread), with an acquire fence after ck_epoch_begin (sweepfill(7): weakly ordered machines)
 * and, after ck_epoch_end, a futex wake when a sweepfill
 * grace-period waiter sleeps (one relaxed load otherwise); the rwlock guard takes the read lock;
 * the mutex guard takes the mutex (for lists whose readers and writers share one mutex); the none
 * guard does nothing (single-threaded lists). All set flags to 0: blocking inside a locked
 * section holds up every writer. No-ops on NULL arguments. swf_guard_rwlock is declared when
 * <pthread.h> provides read-write locks (POSIX.1-2001: under strict -std=c11, define
 * _POSIX_C_SOURCE=200112L or _GNU_SOURCE before the first #include); in C without them, a call
 * of swf_guard_rwlock stops the compilation with a static assertion that says so.
 * Section bounds under a lock help a waiting writer only if the lock hands over to it when the
 * sweep leaves. Measured here (bench/RESULTS.md, section_bounds, 1M members, bound 64): with a
 * glibc rwlock, writer-preferring (pthread_rwlockattr_setkind_np with
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) or default, a writer's longest wait fell from
 * the whole sweep (~300 ms) to ~0.1 ms; with a glibc mutex, which does not queue, only to ~5 ms:
 * the sweeping thread often takes it again before the woken writer runs. Other guards:
 * list_urcu.h (liburcu flavours). */
SWF_API void swf_guard_epoch(struct swf_guard *g, struct ck_epoch_record *rec);
SWF_API void swf_guard_mutex(struct swf_guard *g, pthread_mutex_t *lock);
SWF_API void swf_guard_none(struct swf_guard *g);
#if defined(PTHREAD_RWLOCK_INITIALIZER)
SWF_API void swf_guard_rwlock(struct swf_guard *g, pthread_rwlock_t *lock);
#elif !defined(__cplusplus)
/* The fix named where the call is, rather than an implicit declaration: an expression, so that
 * it stands wherever the call could, whose struct's static assertion fails. */
#define swf_guard_rwlock(g, lock)                                                                 \
    ((void)(g), (void)(lock), (void)sizeof(struct {                                               \
         _Static_assert(0,                                                                        \
                        "swf_guard_rwlock needs POSIX read-write locks: define "                  \
                        "_POSIX_C_SOURCE as 200112L (or _GNU_SOURCE) before the first #include"); \
         int swf_unused_;                                                                         \
     }))
#endif

/* Initialise obj for member before it is published. Runs inside a read-side section: must not
 * block. obj's previous contents are whatever the cache left. */
typedef void swf_init_fn(void *obj, void *member, void *arg);

struct swf_sweep_config {
    struct swf_list list;
    struct swf_cache *cache;
    size_t reserve;    /* objects kept for when NOWAIT fails; 1 .. SWF_SWEEP_RESERVE_MAX */
    swf_init_fn *init; /* required */
    void *init_arg;
    struct swf_guard guard;
    size_t section_bound; /* visits per read-side section; 0 = one section per pass;
                             SWF_SWEEP_SECTION_BOUND_AUTO (the default): 1024 where the
                             list can pin, one section per pass where it cannot */
    enum swf_publish publish;
    enum swf_algo algo;
};

/* A config with the defaults: reserve 32, RESUME, release-store publication, section bound
 * SWF_SWEEP_SECTION_BOUND_AUTO (1024 visits where the list can pin), no guard (fill in list,
 * cache, init and guard). */
static inline void swf_sweep_config_init(struct swf_sweep_config *cfg)
{
    struct swf_sweep_config d = {{SWF_NULL_, SWF_NULL_, 0},
                                 SWF_NULL_,
                                 SWF_SWEEP_RESERVE_DEFAULT,
                                 SWF_NULL_,
                                 SWF_NULL_,
                                 {SWF_NULL_, SWF_NULL_, SWF_NULL_, 0},
                                 SWF_SWEEP_SECTION_BOUND_AUTO,
                                 SWF_PUBLISH_STORE,
                                 SWF_RESUME};
    *cfg = d;
}

struct swf_sweep_stats {
    uint64_t passes;          /* walks started from the head */
    uint64_t visits;          /* members stepped on (a revisit counts again) */
    uint64_t assigned;        /* objects published */
    uint64_t already_set;     /* visits that found the slot set */
    uint64_t nowait_failures; /* NOWAIT allocations that returned NULL */
    uint64_t reserve_uses;    /* objects taken from the reserve */
    uint64_t refills;         /* reserve refills after the initial fill */
    uint64_t inplace_refills; /* of those, done inside a section (SWF_GUARD_BLOCKING_OK) */
    uint64_t restarts;        /* passes after the first: refills (RESTART, BATCH_RESTART) or
                                 lost cursors */
    uint64_t sections;        /* read-side sections entered */
    uint64_t longest_section; /* most visits in one section */
    uint64_t lost_races;      /* SWF_PUBLISH_CAS: slots set by someone else first */
    uint32_t fell_back;       /* RESUME ran as RESTART: the list cannot pin */
    uint32_t unbounded;       /* one read-side section per pass: section_bound 0, or
                                 SWF_SWEEP_SECTION_BOUND_AUTO on a list that cannot pin */
};

/* The section bound a sweep runs with (SWF_SWEEP_SECTION_BOUND_AUTO resolved against ops). */
static inline size_t swf_section_bound_of_(size_t bound, const struct swf_list_ops *ops)
{
    if (bound != SWF_SWEEP_SECTION_BOUND_AUTO)
        return bound;
    return swf_list_can_pin(ops) ? SWF_SWEEP_SECTION_BOUND_DEFAULT : 0;
}

/*
 * Run a sweep. stats may be NULL.
 * Returns 0; EINVAL: cfg NULL; list ops, first, next, cache, init, guard.enter or guard.leave
 * NULL; pin/unpin/linked not all set or all NULL; reserve 0 or above SWF_SWEEP_RESERVE_MAX;
 * slot_offset not a multiple of sizeof(void *); a section bound other than 0 and
 * SWF_SWEEP_SECTION_BOUND_AUTO on a list that cannot pin; an unknown algo or publish value
 * (every NULL field is named in one swf_error_reason()). ENOMEM: a refill obtained no object when
 * one was needed (the cache's limit, or the system); every object published so far stays valid,
 * nothing leaks, and a later call completes the job once memory is available.
 * Concurrency: see the table above. Progress: blocking, never inside a section.
 */
SWF_API int swf_sweep(const struct swf_sweep_config *cfg, struct swf_sweep_stats *stats);

/* The checks swf_sweep makes: cfg validated against ops (which replace cfg->list.ops). Reads
 * only; any thread. Returns 0, or EINVAL as swf_sweep. */
SWF_API int swf_sweep_validate(const struct swf_sweep_config *cfg, const struct swf_list_ops *ops);

/* The out-of-line half of a sweep SWF_SWEEP_DEFINE generates: swf_sweep_validate, and the slot
 * offset the adapter fixes, with messages that name fn (the generated function). Call that. */
SWF_API int swf_sweep_define_check_(const struct swf_sweep_config *cfg,
                                    const struct swf_list_ops *ops, size_t slot_offset,
                                    const char *fn);

#ifdef __cplusplus
}
#endif

#include "sweep_inline.h"

/*
 * SWF_SWEEP_DEFINE(fn, list_name, init_fn) defines
 *     static int fn(const struct swf_sweep_config *cfg, struct swf_sweep_stats *stats)
 * a sweep specialised for a list adapter generated with one of the SWF_LIST_* macros (list.h,
 * list_sysqueue.h, list_urcu.h, list_hash.h; list_name is that macro's first argument) and for
 * the init function init_fn: the list ops, the slot's offset and init are compile-time constants,
 * called or used directly and inline, with no indirect call per member. cfg->list.ops and
 * cfg->init are ignored (list_name's ops and init_fn are used); cfg->list.slot_offset must be the
 * adapter's (as NAME_list() sets it), else EINVAL; everything else is as swf_sweep, and its
 * messages (swf_error_reason, the full checks' lines) name fn. An adapter
 * written by hand works too if it defines `NAME_ops` (static const struct swf_list_ops whose
 * functions are visible for inlining) and `enum { NAME_slot_offset = offsetof(...) }`.
 */
#define SWF_SWEEP_DEFINE(fn, list_name, init_fn)                                                  \
    static inline void fn##_init_(void *obj, void *member, void *arg)                             \
    {                                                                                             \
        init_fn(obj, member, arg);                                                                \
    }                                                                                             \
    __attribute__((unused)) static int fn(const struct swf_sweep_config *cfg,                     \
                                          struct swf_sweep_stats *stats)                          \
    {                                                                                             \
        int err =                                                                                 \
            swf_sweep_define_check_(cfg, &list_name##_ops, (size_t)list_name##_slot_offset, #fn); \
        if (err != 0)                                                                             \
            return err;                                                                           \
        return swf_sweep_run_(cfg, &list_name##_ops, fn##_init_, (size_t)list_name##_slot_offset, \
                              stats);                                                             \
    }

#endif /* SWEEPFILL_SWEEP_H */
