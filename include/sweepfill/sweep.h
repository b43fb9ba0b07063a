/*
 * sweepfill/sweep.h - sweep-and-assign: give every member of a live list an object in its slot.
 *
 * In this file: the guards that make a sweep's read-side sections and the synchronize functions
 * that wait for them (swf_guard_epoch(3), swf_synchronize_epoch(3)); the sweep's configuration,
 * its statistics and swf_sweep() itself (swf_sweep(3)); and SWF_SWEEP_DEFINE, the same sweep
 * specialised at compile time for one list type (SWF_SWEEP_DEFINE(3)), whose walker
 * sweep_inline.h holds. A sweep reads its list through list.h's operations, takes its objects
 * from a cache (cache.h), and publishes them as list.h's swf_slot_publish() does. Names ending
 * in an underscore are the library's, for the code its headers define inline; not for other code.
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

/* How long a watched wait of a blocking call lasts before the watchdog prints its one line on
 * stderr, in seconds; the wait goes on after it (swf_synchronize_epoch(3)). Every such wait is
 * watched, however many wait at once, the enter of a guard written by hand included (once per
 * section a sweep enters); none in a child of fork(), and none while no thread can be made for
 * the watchdog, which one line on stderr says. */
#define SWF_WATCHDOG_SECONDS 5

/*
 * Fill in g with a ready-made read-side section, flags 0. swf_guard_epoch's is a ck_epoch section
 * on rec: ck_epoch_begin with an acquire fence after it, and ck_epoch_end; swf_guard_rwlock's
 * holds lock's read side; swf_guard_mutex's holds the mutex lock; swf_guard_none's does nothing,
 * for single-threaded lists. With a NULL argument, each leaves g untouched. swf_guard_rwlock is
 * declared only where <pthread.h> has read-write locks; elsewhere, in C, calling it stops the
 * compilation (swf_guard_epoch(3)).
 *
 * Concurrency: Filling in a guard writes g only: any thread. The epoch guard's sections run only
 * on the thread that owns rec; a lock guard's run on any thread, one section per thread at a
 * time. No section of these guards may be open on the thread that calls a blocking function of
 * sweepfill: the call aborts (the manual page lists them).
 * Progress: Filling in a guard is wait-free. Entering the epoch guard's section is wait-free;
 * leaving it makes one futex wake system call when a sweepfill grace-period waiter sleeps, and
 * none otherwise (one relaxed load). Entering a lock guard's section blocks while a writer holds
 * the lock (the mutex: while another thread holds it).
 * Ordering: The epoch guard's sections order as ck_epoch_begin(3) and ck_epoch_end(3) do, and
 * the acquire fence after ck_epoch_begin() keeps the section's loads after its announcement on
 * weakly ordered machines (sweepfill(7)): a grace period a writer waits for after unlinking a
 * member ends only after every section that could have reached that member. The lock guards'
 * sections order as pthread_rwlock_rdlock(), pthread_mutex_lock() and their unlocks do.
 * Returns: Nothing.
 * Errors: None: they cannot fail. A lock call that fails in a section aborts, with one line on
 * stderr, as does the epoch guard used on a thread that does not own rec, where it shows (a
 * leave on a thread that did not enter; another thread's section begun or ended inside this
 * one's); a sweep refuses a guard whose enter or leave is NULL with EINVAL.
 */
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
 * Wait until every read section of a ready-made guard's kind that began before the call has
 * ended: for struct swf_feature_config.synchronize (feature.h), with the guard's argument as
 * synchronize_arg. swf_synchronize_epoch waits for a grace period of the epoch rec (a struct
 * ck_epoch_record registered on the list's epoch) is registered on; swf_synchronize_rwlock takes
 * the write side of lock (a pthread_rwlock_t) once and releases it; swf_synchronize_mutex takes
 * lock (a pthread_mutex_t) once and releases it. list_urcu.h has those of the liburcu guards.
 *
 * Concurrency: Any thread, but not inside a read section of the function's kind on the calling
 * thread (it would wait for itself) nor inside any section of a sweepfill guard there (it
 * aborts); swf_synchronize_epoch() only on a thread that is rec's only user (the feature's guard
 * record is: activate, deactivate and catch-up run on its thread), and never inside a section on
 * rec (it aborts).
 * Progress: Blocking: it waits for the sections that began before it, and sleeps while it waits
 * rather than spin for long, since a reader it waits for may need the CPU. Its wait for a lock
 * held when it tried it, or for the grace period, is watched (SWF_WATCHDOG_SECONDS).
 * swf_synchronize_epoch() waits only for records inside a section: a record registered on the
 * epoch whose thread is outside its sections (blocked in epoll_wait() or read(), or never to run
 * again) holds it up not at all.
 * Ordering: Everything a reader did inside a section that began before the call happens-before
 * the call returns (the write lock's or the mutex's unlock and lock, or the epoch's grace period,
 * order it).
 * Returns: Nothing.
 * Errors: None: it cannot fail. A NULL argument and a lock call that fails abort, with one line
 * on stderr.
 */
SWF_API void swf_synchronize_epoch(void *rec);
SWF_API void swf_synchronize_rwlock(void *lock);
SWF_API void swf_synchronize_mutex(void *lock);

/* For the sweeps: enter g's section, watching a hand-written enter (SWF_WATCHDOG_SECONDS); the
 * flag marks a guard of the library's own whose enter never waits. The library's; not for other
 * code. */
#define SWF_GUARD_UNWATCHED_ 0x80000000u
SWF_API void swf_guard_enter_(const struct swf_guard *g);

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

/*
 * Fill *cfg with the defaults: reserve SWF_SWEEP_RESERVE_DEFAULT, SWF_RESUME, SWF_PUBLISH_STORE,
 * section bound SWF_SWEEP_SECTION_BOUND_AUTO, and every other field 0 or NULL: no list, cache,
 * init or guard yet, which the caller fills in.
 *
 * Concurrency: Any thread; it writes *cfg only.
 * Progress: Wait-free.
 * Ordering: None.
 * Returns: Nothing.
 * Errors: None: it cannot fail; cfg must not be NULL.
 */
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
 * Give every member of cfg->list whose slot is NULL an object of cfg->cache, initialised by
 * cfg->init and then published in the slot, walking the list in the read-side sections of
 * cfg->guard with the algorithm cfg->algo (swf_sweep(3)). stats, unless NULL, receives the
 * counts.
 *
 * Concurrency: Any thread, with these limits:
 * - with SWF_PUBLISH_STORE the sweep must be the only assigner of the slots it fills: two store
 *   sweeps at once could both fill a slot and leak an object;
 * - with SWF_PUBLISH_CAS any number of sweeps and other assigners may race;
 * - readers, the cache's other calls, and list additions and deletions may run at the same time,
 *   on any threads; additions and deletions follow the list's own rules (for CK_LIST, one writer
 *   at a time, readers in epoch sections), and a deleter that frees a member waits for a grace
 *   period first and, where the list pins, for the unpin (swf_pin_retire(3));
 * - never inside a section of a sweepfill guard on the calling thread: there it aborts.
 * Progress: Blocking overall, since refills may wait for memory; never inside a read-side
 * section, where its only calls are the list's operations, init (which must not block either),
 * the cache's lock-free SWF_NOWAIT allocations (swf_cache_alloc_bulk(3)) and frees, and the
 * guard's enter and leave.
 * Ordering: The call init(obj, member, init_arg) happens-before the release store or release
 * compare-and-swap that publishes obj: a reader whose swf_slot_load(3) returns obj sees it
 * initialised. The test for an empty slot is a relaxed load: a slot someone else fills at the
 * same moment is seen filled, or, with SWF_PUBLISH_CAS, wins the compare-and-swap against the
 * sweep, whose object goes back to the cache.
 * Returns: 0 when every member linked for the whole call has a non-NULL slot, each new object
 * initialised once and published once, every slot found set left as it was, and the unused
 * reserve objects back in the cache; the objects alive in the cache then grew by exactly
 * stats->assigned, for a cache nothing else uses. Otherwise an error number, and
 * swf_error_reason(3) says which check failed or what ran out, naming swf_sweep, and in one
 * reason every required field that is NULL ("cfg->cache and cfg->init are NULL").
 * Errors:
 * EINVAL: cfg is NULL; the list's ops, first or next, the list pointer list.list (which every
 * ready-made adapter reads through), the cache, init, guard.enter or guard.leave is NULL; pin,
 * unpin and linked are neither all set nor all NULL; the reserve is 0 or above
 * SWF_SWEEP_RESERVE_MAX; the slot offset is not a multiple of sizeof(void *); the section bound
 * is neither 0 nor SWF_SWEEP_SECTION_BOUND_AUTO on a list that cannot pin; or algo or publish is
 * not one of its enum's values.
 * ENOMEM: A refill got no object where one was needed (the cache's limit, or the system); the
 * objects published so far stay valid, nothing leaks, and a later call finishes the job once
 * memory is to be had. Also, with nothing done, when a reserve of more than 64 objects could not
 * be given the memory the call allocates for it.
 */
SWF_API int swf_sweep(const struct swf_sweep_config *cfg, struct swf_sweep_stats *stats);

/*
 * Make the checks swf_sweep() makes of cfg, with ops in place of cfg->list.ops, and nothing
 * else.
 *
 * Concurrency: Any thread; it only reads cfg and ops.
 * Progress: Wait-free, but for the line the full checks may print when SWF_RESUME cannot pin.
 * Ordering: None.
 * Returns: 0 if swf_sweep() would accept cfg with ops, else an error number; swf_error_reason(3)
 * then names swf_sweep_validate and the check that failed.
 * Errors:
 * EINVAL: cfg is NULL, or cfg with ops fails a check of swf_sweep() (its EINVAL).
 */
SWF_API int swf_sweep_validate(const struct swf_sweep_config *cfg, const struct swf_list_ops *ops);

/*
 * The out-of-line half of each sweep SWF_SWEEP_DEFINE generates, exported for it alone: the
 * checks of swf_sweep_validate() but the one of cfg->init, then that cfg->list.slot_offset is
 * slot_offset; the failures' reasons name fn, the generated sweep.
 *
 * Concurrency: Any thread; it only reads its arguments.
 * Progress: Wait-free, but for the line the full checks may print when SWF_RESUME cannot pin.
 * Ordering: None.
 * Returns: 0 if the generated sweep may run, else an error number.
 * Errors:
 * EINVAL: As the sweep that SWF_SWEEP_DEFINE() generates returns it.
 */
SWF_API int swf_sweep_define_check_(const struct swf_sweep_config *cfg,
                                    const struct swf_list_ops *ops, size_t slot_offset,
                                    const char *fn);

#ifdef __cplusplus
}
#endif

#include "abi/sweep_inline.h"

/*
 * Define fn, a static function with swf_sweep()'s parameters and result: swf_sweep()
 * specialised for the list adapter list_name and the init function init_fn, which stand for
 * cfg->list.ops and cfg->init (those two are ignored). list_name is the first argument of one of
 * the SWF_LIST_* macros, or an adapter written by hand (SWF_SWEEP_DEFINE(3)).
 *
 * Concurrency: As for swf_sweep(3).
 * Progress: As for swf_sweep(3); init_fn must not block.
 * Ordering: As for swf_sweep(3): init_fn(obj, member, arg) happens-before the release store or
 * compare-and-swap that publishes obj.
 * Returns: As swf_sweep(3) returns, but the reasons of swf_error_reason() and the full checks'
 * lines name fn.
 * Errors: The generated sweep fn fails as swf_sweep(3) does, except that it checks neither
 * cfg->list.ops nor cfg->init, and besides:
 * EINVAL: cfg->list.slot_offset is not list_name's (the one NAME_list() sets).
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
