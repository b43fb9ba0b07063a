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
 * list_urcu.h (liburcu flavours).
 *
 * What the ready-made guards check, in every build (each failure is one line on stderr,
 * "sweepfill: <the public call running on the thread, else the guard's maker>: ...", then abort):
 *   - every lock and unlock call's result: the rwlock guard's pthread_rwlock_rdlock and unlock,
 *     the mutex guard's pthread_mutex_lock and unlock. A call that fails (EDEADLK: the thread
 *     already holds the write lock, or an error-checking mutex; EAGAIN; EOWNERDEAD; EPERM on
 *     unlock) aborts, naming the call, the error and its likely cause; the guard never goes on
 *     without its lock. The epoch guard's leave aborts when the record is not inside a section.
 *   - sections: each guard (these, list_urcu.h's, the registry's readers) counts the sections it
 *     has open on the calling thread. A blocking call made while one is open aborts at once
 *     ("called inside a read-side section of a sweepfill guard on this thread ... a blocking
 *     call there can wait for itself"): swf_sweep and the sweeps of SWF_SWEEP_DEFINE,
 *     swf_feature_activate, swf_feature_deactivate, swf_feature_catch_up, swf_feature_added
 *     with SWF_WAIT while the feature is on, swf_registry_activate, swf_registry_deactivate,
 *     swf_registry_synchronize, swf_registry_destroy, swf_cache_quiesce and the swf_synchronize_*
 *     functions.
 * Sections the library cannot see (your own pthread_rwlock_rdlock, rcu_read_lock or
 * ck_epoch_begin) are the watchdog's: a blocking call whose wait for a lock (a ready-made guard's
 * or synchronize function's, once its try found the lock held), for cfg.synchronize or for a
 * grace period has not ended after SWF_WATCHDOG_SECONDS seconds prints one line on stderr
 * ("sweepfill: <call>: still waiting for <what> after 5 s: <likely cause>") and goes on
 * waiting. One line per call at most (per wait outside a call: a guard entered by hand names
 * its maker, "swf_guard_rwlock"). The first watched wait of a process starts one thread (named
 * swf-watchdog, every signal blocked) that sleeps while nothing is watched; a child of fork has
 * none and starts none (after a fork of a threaded process a new thread is not safe): its waits
 * go unwatched. Guards you write yourself are neither counted nor
 * watched. */
#define SWF_WATCHDOG_SECONDS 5
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

/*
 * Ready-made synchronize functions for struct swf_feature_config.synchronize (feature.h): each
 * waits until every read section of its guard's kind that began before the call has ended, and
 * sleeps while it waits (it never spins for long: a reader it waits for may need the CPU).
 *   swf_synchronize_epoch(rec)    rec: a struct ck_epoch_record registered on the list's epoch,
 *                                 used by the calling thread only (the feature's own guard
 *                                 record does: activate, deactivate and catch_up run on its
 *                                 thread). ck_epoch_synchronize_wait that spins a few scans,
 *                                 then sleeps on a futex that sweepfill's epoch sections wake
 *                                 when they end (timeouts of 50 us to 1 ms: sections of your own
 *                                 code are seen too). Aborts if rec is inside a section.
 *   swf_synchronize_rwlock(lock)  a pthread_rwlock_t: takes the write lock once and releases it
 *                                 (readers whose sections overlap without a gap hold off a
 *                                 reader-preferring rwlock's writer, glibc's default: prefer
 *                                 PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP).
 *   swf_synchronize_mutex(lock)   a pthread_mutex_t: takes the mutex once and releases it.
 *   list_urcu.h: swf_synchronize_urcu(flavor), the flavour's synchronize_rcu.
 * Every lock call is checked as the guards' are; each aborts on a NULL argument and inside a
 * sweepfill section (above), and waits under the watchdog. Blocking; any thread but as said.
 */
SWF_API void swf_synchronize_epoch(void *rec);
SWF_API void swf_synchronize_rwlock(void *lock);
SWF_API void swf_synchronize_mutex(void *lock);

/* For guards and sweeps defined in headers (list_urcu.h, SWF_SWEEP_DEFINE): count a section
 * entered and left on the calling thread; begin and end a blocking call (aborts inside a
 * section; returns whether the call is the outermost, to pass to swf_blocking_leave_). The
 * library's; not for other code. */
SWF_API void swf_section_entered_(void);
SWF_API void swf_section_left_(void);
SWF_API int swf_blocking_enter_(const char *function);
SWF_API void swf_blocking_leave_(int outermost);

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
        int outermost_ = swf_blocking_enter_(#fn);                                                \
        err = swf_sweep_run_(cfg, &list_name##_ops, fn##_init_, (size_t)list_name##_slot_offset,  \
                             stats);                                                              \
        swf_blocking_leave_(outermost_);                                                          \
        return err;                                                                               \
    }

#endif /* SWEEPFILL_SWEEP_H */
