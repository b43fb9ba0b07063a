/*
 * sweepfill/cache.h - a lock-free cache of fixed-size objects: the sweep's nonblocking allocator.
 *
 * A cache hands out objects of one size and alignment. Its blocking calls (swf_cache_create(),
 * swf_cache_grow(), SWF_WAIT allocations) map memory and prepare it; an SWF_NOWAIT allocation
 * takes only objects of memory so prepared, which is why it may run where nothing may block.
 * Free objects wait in magazines, arrays of up to SWF_CACHE_MAGAZINE of them, in one of two
 * modes that every cache of the process shares (swf_cache_percpu()): per-CPU, one magazine per
 * CPU (or per concurrent thread id) that restartable sequences pop and push (the default where
 * the system has them), or per-thread, a pair of magazines per thread bound to the cache. In
 * both, a shared depot trades whole magazines on lock-free stacks. How, and at what cost:
 * swf_cache_alloc(3), swf_cache_create(3); why: docs/design.md.
 *
 * Concurrency: every function here may run concurrently with every other on the same cache,
 * from any threads (those that take an epoch record, with the caller's own), except
 * swf_cache_destroy(), which the caller keeps apart from every other call on the cache (a lock,
 * or a happens-before edge such as joining the threads).
 *
 * Progress: SWF_NOWAIT allocations, frees and flushes are lock-free (a thread retries a
 * compare-and-swap only because another thread's succeeded and, in the per-CPU mode, a
 * restartable sequence only because the kernel preempted, migrated or signalled it inside one),
 * and make no system call and no allocation. SWF_WAIT allocations, swf_cache_grow(),
 * swf_cache_set_failslab() and swf_cache_create() may take the cache's refill mutex, allocate
 * and map memory; swf_cache_set_limit() takes that mutex.
 *
 * Ordering: everything a thread wrote to an object before freeing it (or before the grace period
 * of a deferred free began) happens-before the object's next allocation, by any thread. Nothing
 * else is ordered by the cache: publishing an object to other threads is the caller's job (the
 * sweep publishes with a release store, see sweep.h).
 */
#ifndef SWEEPFILL_CACHE_H
#define SWEEPFILL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "abi/cache_abi.h" /* the layout the inline path reads */

#ifdef __cplusplus
extern "C" {
#endif

/* SWF_CACHE_MAGAZINE (cache_abi.h): the free objects one magazine holds; a thread bound to a
 * cache holds two magazines of it (per-thread mode), a CPU one (per-CPU mode). */

/* The largest object a cache accepts (1 GiB), and the strictest alignment (a 4 KiB page). */
#define SWF_CACHE_OBJECT_MAX ((size_t)1 << 30)
#define SWF_CACHE_ALIGN_MAX  ((size_t)4096)

/* Caches and registries alive at once; threads bound to one cache at once. */
#define SWF_CACHE_MAX         65536
#define SWF_CACHE_THREADS_MAX 1048576

struct ck_epoch_record; /* ck_epoch_record_t: declared, not included, so C++ can use this header */

/* How an allocation may wait. */
enum swf_alloc_mode {
    /* Never blocks: takes only objects already prepared, else fails (EAGAIN). Failure injection
     * (struct swf_failslab) applies to it. */
    SWF_NOWAIT = 1,
    /* May block to map and prepare memory; fails (ENOMEM) only where memory or the limit runs
     * out. Failure injection never applies to it. */
    SWF_WAIT = 2,
};

/*
 * Zero-initialise the whole struct (a designated initialiser does) and set what you need: fields
 * added in later versions take the place of `reserved`, with 0 meaning what it meant before.
 */
struct swf_cache_config {
    size_t object_size; /* bytes per object; 1 .. SWF_CACHE_OBJECT_MAX */
    size_t align;       /* power of two up to SWF_CACHE_ALIGN_MAX; 0 = natural: the largest power
                           of two dividing object_size, at least 8 and at most 16. Objects are
                           spaced by a multiple of 8 bytes whatever the alignment (a free object
                           holds a pointer or the free mark). */
    size_t prefill;     /* objects made ready for NOWAIT by swf_cache_create */
    size_t limit;       /* most objects the cache ever holds (alive + ready); 0 = no limit */
    const char *name;   /* optional, copied (first 63 bytes); used in messages, and matched in
                           full against SWF_FAILSLAB's cache= key */
    unsigned int lock_memory;  /* 1: mlock every chunk of objects as it is mapped (when
                                  RLIMIT_MEMLOCK forbids, a prefill or a grow then fails with
                                  EPERM or ENOMEM, a WAIT allocation with ENOMEM); 0: no */
    unsigned int huge_pages;   /* enum swf_huge_pages: transparent huge pages for the objects */
    unsigned int grow_threads; /* threads that prepare a large mapping in parallel (0 or 1: the
                                  calling thread alone; at most SWF_CACHE_GROW_THREADS_MAX) */
    unsigned int checks;       /* 1: full misuse checks for this cache (what SWF_DEBUG=checks
                                  gives every cache: see swf_cache_free); 0: the process's */
    unsigned int reserved[4];  /* must be zero */
};

/* Whether the objects' memory uses transparent huge pages (swf_cache_config.huge_pages). */
enum swf_huge_pages {
    /* Chunks of objects of a page or more, and chunks for 2 MiB of objects or more (a grow of
     * 32,768 objects of 64 bytes), are mapped 2 MiB-aligned with madvise(MADV_HUGEPAGE), in whole
     * huge pages whose slack holds more objects, when the system's transparent huge pages are
     * "always" or "madvise" and the host prepares them about as fast as base pages; smaller ones,
     * and all where the host does not, with base pages: in whole pages for a cache's first
     * chunk, in units of 4 pages (at most 64 KiB) for its second, and in 64 KiB units after that.
     * How fast is measured once per process, at the first chunk that would get huge pages: 2 MiB
     * (one huge page) prepared each way; base pages are chosen when they were more than 1.25
     * times faster than the huge page (stats.huge_choice tells which). The
     * kernel may still back huge ones with base pages (fragmentation): stats.huge_bytes tells. */
    SWF_HUGE_PAGES_AUTO = 0,
    /* Base pages only (no MADV_HUGEPAGE, and MADV_NOHUGEPAGE so that "always" does not apply). */
    SWF_HUGE_PAGES_OFF = 1,
    /* Every chunk as in AUTO whatever its size: swf_cache_create() fails (ENOTSUP) when the
     * system has transparent huge pages off, and a mapping (a prefill, a grow or a WAIT
     * allocation) fails (ENOMEM) when its chunk got no huge page at all. */
    SWF_HUGE_PAGES_REQUIRED = 2,
};

#define SWF_CACHE_GROW_THREADS_MAX 64

/*
 * Failure injection for a cache's SWF_NOWAIT allocations, modelled on the kernel's failslab:
 * which calls fail, swf_cache_set_failslab(3) says.
 */
struct swf_failslab {
    unsigned int probability; /* percent, 0 .. 100 */
    unsigned long interval;   /* 0 or 1: every call is a candidate */
    long times;               /* -1: unlimited; 0: injection spent */
    uint64_t seed;
};

/*
 * The environment variable that swf_cache_create() reads for failure injection, in the syntax of
 * swf_failslab_parse() (swf_cache_set_failslab(3)).
 */
#define SWF_FAILSLAB_ENV "SWF_FAILSLAB"

/* A snapshot of a cache's counters (swf_cache_stats). */
struct swf_cache_stats {
    uint64_t allocs_nowait;    /* successful NOWAIT allocations */
    uint64_t allocs_wait;      /* successful WAIT allocations */
    uint64_t fails_nowait;     /* NOWAIT allocations that found no ready object */
    uint64_t fails_injected;   /* NOWAIT allocations failed by injection */
    uint64_t fails_wait;       /* WAIT allocations that returned ENOMEM */
    uint64_t frees;            /* objects freed, directly or after their grace period */
    uint64_t deferred_queued;  /* objects handed to swf_cache_free_deferred */
    uint64_t deferred_pending; /* of those, still waiting for their grace period */
    uint64_t alive;            /* allocated and not yet freed (pending deferred ones included) */
    uint64_t ready;            /* prepared and free: capacity - alive */
    uint64_t capacity;         /* objects the cache holds in all */
    uint64_t limit;            /* the current limit (0 = none) */
    uint64_t bytes_mapped;     /* memory mapped for objects (a chunk of small objects on huge
                                  pages holds their magazines too) */
    uint64_t chunks;           /* mappings made */
    uint64_t object_size;      /* as configured */
    uint64_t stride;           /* bytes between consecutive objects: the size rounded up to
                                  the alignment, at least 8 and a multiple of 8 */
    uint64_t huge_bytes;       /* of bytes_mapped, how much the kernel backed with transparent
                                  huge pages when it was prepared (from the page tables:
                                  PAGEMAP_SCAN, or /proc/self/smaps where the kernel lacks it) */
    uint64_t percpu;           /* 1: the per-CPU mode (swf_cache_percpu), 0: per-thread */
    uint64_t huge_choice;      /* SWF_HUGE_PAGES_AUTO's measured choice, the same for the whole
                                  process: 0 not measured yet (no chunk needed it), 1 huge
                                  pages, 2 base pages */
    uint64_t reserved[5];      /* zero; later versions may fill them */
};

/*
 * Create a cache of the objects cfg describes (struct swf_cache_config) and store it in *out,
 * with cfg->prefill objects made ready for SWF_NOWAIT allocations.
 *
 * Concurrency: any thread, any time.
 * Progress: blocking: it may take the new cache's refill mutex, allocate and map memory (for the
 * prefill objects).
 * Ordering: it publishes nothing: the caller hands *out to other threads with its own
 * synchronisation. The objects follow the cache's rule (swf_cache_alloc(3)).
 * Returns: 0, or an error number; after a failure swf_error_reason() says which check failed or
 * what ran out.
 * Errors:
 * EINVAL: cfg or out is NULL; object_size is 0 or above SWF_CACHE_OBJECT_MAX; align is not a
 * power of two or is above SWF_CACHE_ALIGN_MAX; limit is not 0 and is below prefill; lock_memory
 * or checks is neither 0 nor 1; huge_pages is not an enum swf_huge_pages value; grow_threads is
 * above SWF_CACHE_GROW_THREADS_MAX; reserved is not zero; or SWF_FAILSLAB is malformed (a line on
 * standard error says what is wrong).
 * ENOMEM: the system refused memory; or prefill can never be had, which fails at once as in
 * swf_cache_grow(); or huge_pages is SWF_HUGE_PAGES_REQUIRED and a chunk got no huge page.
 * EPERM: lock_memory is 1 and mlock(2) was refused.
 * ENOTSUP: huge_pages is SWF_HUGE_PAGES_REQUIRED and the system has transparent huge pages off.
 * EAGAIN: SWF_CACHE_MAX caches and registries are alive.
 */
SWF_API int swf_cache_create(const struct swf_cache_config *cfg, struct swf_cache **out);

/*
 * Destroy c and give all its memory back to the system, with the objects cached in magazines
 * that other threads or CPUs hold.
 *
 * Concurrency: exclusive: the caller keeps every other call on c apart from it (a lock, or a
 * happens-before edge such as joining the threads), and makes none after it. The epoch callbacks
 * of swf_cache_free_deferred() may run (in ck_epoch_poll(), ck_epoch_barrier() or
 * swf_cache_quiesce() on their record) concurrently with it: it sees each callback either
 * finished or not begun, and returns EBUSY for the latter.
 * Progress: blocking: it waits until no exiting thread is handing back a magazine to c.
 * Ordering: it publishes nothing; the caller orders every other use of c before it.
 * Returns: 0, or an error number; after a failure swf_error_reason() says why.
 * Errors: on an error nothing is destroyed.
 * EINVAL: c is NULL.
 * EBUSY: a feature or a registry made on c exists (from its create to its destroy, on or off;
 * swf_error_reason() names it: "the cache is in use by a feature: swf_feature_destroy it first"),
 * or objects are alive, including those handed to swf_cache_free_deferred() whose grace period
 * has not run: free them first; or, in the per-CPU mode, another thread kept swapping a CPU's
 * magazine while it counted them, which only a call on c still running does.
 */
SWF_API int swf_cache_destroy(struct swf_cache *c);

/*
 * Allocate one object of c; its first 8 bytes are zero, the rest is unspecified.
 *
 * Concurrency: any thread, concurrently with every call on c but swf_cache_destroy().
 * Progress: with SWF_NOWAIT lock-free (a compare-and-swap retried only because another
 * thread's succeeded; in the per-CPU mode a restartable sequence retried only because the
 * kernel preempted, migrated or signalled the thread inside it), with no system call, no
 * allocation and, while the cache's memory stays resident, no page fault. With SWF_WAIT
 * blocking: it may take the refill mutex, allocate and map memory.
 * Ordering: everything a thread wrote to an object before freeing it happens-before the
 * object's next allocation, by any thread. Nothing else is ordered: publishing the object is
 * the caller's job (swf_slot_publish(3)).
 * Returns: the object, or NULL with errno set.
 * Errors: errno is set to:
 * EINVAL: c is NULL, or mode is neither SWF_NOWAIT nor SWF_WAIT.
 * EAGAIN: SWF_NOWAIT: no object is ready for this thread, or a failure was injected.
 * ENOMEM: SWF_WAIT: the system refused memory, or the cache's limit is reached.
 */
SWF_API void *swf_cache_alloc(struct swf_cache *c, enum swf_alloc_mode mode);

/*
 * Give obj, allocated from c, back to c. Misuse aborts with one line naming the function
 * (swf_cache_alloc(3), "Misuse", lists what is caught in every build and with full checks). With
 * the full checks on, it fills obj past its first 8 bytes, and a write found in that fill later
 * (at obj's next allocation, a move of its magazine, or swf_cache_destroy()) aborts naming this
 * function: a use after free.
 *
 * Concurrency: any thread, concurrently with every call on c but swf_cache_destroy(); an
 * object may be freed by a thread other than the one that allocated it.
 * Progress: lock-free, with no system call and no allocation.
 * Ordering: the free releases what the thread wrote to obj to obj's next allocation.
 * Returns: 0, also for a NULL obj (which does nothing), or an error number.
 * Errors:
 * EINVAL: c is NULL.
 */
SWF_API int swf_cache_free(struct swf_cache *c, void *obj);

/*
 * Free the n objects of c in objs once a ck_epoch grace period has elapsed after the call, for
 * objects that readers inside an epoch section may still hold: they are queued on rec, the
 * calling thread's epoch record, and go back to c when rec dispatches them.
 *
 * Concurrency: any thread, with its own record (ck_epoch_call() is single-producer per record),
 * concurrently with every call on c but swf_cache_destroy(). The callbacks may run concurrently
 * with swf_cache_destroy(), which sees each either finished or not begun and returns EBUSY for
 * the latter.
 * Progress: lock-free while spare magazines exist; otherwise it takes the refill mutex to make
 * one.
 * Ordering: everything a thread wrote to an object before the grace period of its deferred free
 * began happens-before the object's next allocation, by any thread. A full fence precedes the
 * ck_epoch_call(), so whatever the caller did before (the unpublication of the objects) is
 * visible before the grace period's epoch is read (why: sweepfill(7), "Weakly ordered
 * machines"). The grace period orders every epoch section that began before the call before the
 * objects' return to c.
 * Returns: 0, or an error number; after a failure swf_error_reason() says why.
 * Errors:
 * EINVAL: c or rec is NULL, or objs is NULL with n above 0.
 * ENOMEM: no magazine could be made; none of the n objects was queued, and the caller still
 * owns them.
 */
SWF_API int swf_cache_free_deferred(struct swf_cache *c, struct ck_epoch_record *rec,
                                    void *const *objs, size_t n);

/*
 * Wait for a grace period on rec and dispatch its callbacks (ck_epoch_barrier()): after it
 * returns, every object this thread queued on rec with swf_cache_free_deferred() is free.
 *
 * Concurrency: any thread, with its own record, outside any epoch section of its own;
 * concurrently with every call on c but swf_cache_destroy().
 * Progress: blocking, until the grace period is over. Inside a section of a sweepfill guard on
 * the calling thread it aborts at once; a wait still going after SWF_WATCHDOG_SECONDS (5) seconds
 * prints one line on standard error and goes on waiting.
 * Ordering: every epoch section that had begun when it was called has ended when it returns,
 * and the objects it frees keep the rule of swf_cache_free_deferred().
 * Returns: 0, or an error number; after a failure swf_error_reason() says why.
 * Errors:
 * EINVAL: c or rec is NULL.
 */
SWF_API int swf_cache_quiesce(struct swf_cache *c, struct ck_epoch_record *rec);

/*
 * Make at least n objects ready for the calling thread's SWF_NOWAIT allocations (in the per-CPU
 * mode, for those made on the CPU it runs on), binding the thread to c first; a grow of 0 objects
 * does only that. This is where page faults belong: outside any read-side section.
 *
 * Concurrency: any thread, concurrently with every call on c but swf_cache_destroy(). A fork(2)
 * waits for a grow in progress: the library's fork handlers take the refill mutex around it.
 * Progress: blocking: it takes c's refill mutex, allocates and maps memory (and, with
 * grow_threads above 1, starts and joins threads). It must not be called where blocking is not
 * allowed, such as inside a read-side section of a sweep.
 * Ordering: it publishes nothing; the objects keep the cache's rule (swf_cache_alloc(3)).
 * Returns: 0, or an error number; after a failure swf_error_reason() says why.
 * Errors: what was mapped before a failure stays ready.
 * EINVAL: c is NULL.
 * ENOMEM: the system, the limit or the magazine table (4M magazines: 251M free objects) stopped
 * it short of n, or would have (then at once, mapping nothing); or no memory was left for the
 * thread's magazines (per-thread mode); or huge pages were required and a chunk got none. Beyond
 * the magazine table, swf_error_reason() states the most objects the cache can have ready at that
 * moment, the table's size and what to do; where the kernel refused the fence that moves other
 * CPUs' magazines to the depot, it says so.
 * EPERM: lock_memory is set and mlock(2) was refused.
 */
SWF_API int swf_cache_grow(struct swf_cache *c, size_t n);

/*
 * Hand the calling thread's cached free objects (per-CPU mode: its CPU's magazine) back to the
 * depot, for other threads' SWF_NOWAIT allocations.
 *
 * Concurrency: any thread, concurrently with every call on c but swf_cache_destroy().
 * Progress: lock-free, with no system call and no allocation.
 * Ordering: none beyond what swf_cache_free() orders.
 * Returns: 0 or an error number.
 * Errors:
 * EINVAL: c is NULL.
 */
SWF_API int swf_cache_flush(struct swf_cache *c);

/*
 * Set the most objects c ever holds, alive and ready together (0: no limit). Lowering it below
 * the capacity maps nothing more but unmaps nothing either.
 *
 * Concurrency: any thread, concurrently with every call on c but swf_cache_destroy().
 * Progress: blocking: it takes c's refill mutex, so it must not be called where blocking is not
 * allowed either.
 * Ordering: it publishes nothing; the new limit applies to the calls that take the refill mutex
 * after this one released it.
 * Returns: 0, or an error number; after a failure swf_error_reason() says why.
 * Errors:
 * EINVAL: c is NULL.
 */
SWF_API int swf_cache_set_limit(struct swf_cache *c, size_t limit);

/*
 * Set failure injection for c's SWF_NOWAIT allocations from fs, or clear it (fs NULL); the
 * numbering of calls starts again at 0.
 *
 * Concurrency: any thread, concurrently with every call on c but swf_cache_destroy().
 * Progress: blocking: it takes c's refill mutex, and allocates when it switches injection on.
 * Ordering: the settings are published with one release store of a pointer to their immutable
 * copy, which a SWF_NOWAIT call loads with acquire: a call racing with this one uses the old or
 * the new settings, each whole, never a mix, and a call ordered after this one returned uses the
 * new ones.
 * Returns: 0 or an error number; after a failure, swf_error_reason() says why.
 * Errors:
 * EINVAL: c is NULL, fs->probability is above 100, or fs->times is below -1.
 * ENOMEM: no memory for the copy of the settings; nothing changed.
 */
SWF_API int swf_cache_set_failslab(struct swf_cache *c, const struct swf_failslab *fs);

/*
 * Parse spec, in the syntax of SWF_FAILSLAB_ENV, into *out, and copy its cache= value (or "")
 * into cache_name[0 .. name_len - 1] unless cache_name is NULL.
 *
 * Concurrency: any thread, any time: it touches only its arguments.
 * Progress: wait-free, in time linear in the length of spec; it allocates nothing.
 * Ordering: none.
 * Returns: 0 or an error number; after a failure, swf_error_reason() says why, and *out is
 * unchanged.
 * Errors:
 * EINVAL: spec or out is NULL, spec is malformed, or cache_name is not NULL and the cache= value
 * does not fit in name_len bytes with its terminating NUL. The reason is written to err, unless
 * err is NULL or err_len is 0, as a NUL-terminated message of at most err_len bytes.
 */
SWF_API int swf_failslab_parse(const char *spec, struct swf_failslab *out, char *cache_name,
                               size_t name_len, char *err, size_t err_len);

/*
 * Fill *out with a snapshot of c's counters.
 *
 * Concurrency: any thread, concurrently with every call on c but swf_cache_destroy().
 * Progress: lock-free; it reads the counters of every thread state bound to c, in O(threads
 * bound to c), and in the per-CPU mode the word of every CPU's magazine, again (at most four
 * readings) while other threads swap a CPU's magazine meanwhile.
 * Ordering: the fields agree exactly with each other when no other thread uses c meanwhile.
 * Otherwise frees are read before allocations, so alive may be high for a moment, never low, and
 * each counter holds a value it had during the call, unless other threads swapped CPUs'
 * magazines through all four readings (then allocs_nowait and frees may each be off by the
 * objects those magazines moved). A deferred free counted as done has finished its callback.
 * Nothing else is ordered.
 * Returns: 0 or an error number; after a failure, swf_error_reason() says why.
 * Errors:
 * EINVAL: c or out is NULL.
 */
SWF_CXX_SHADOW_OFF_
SWF_API int swf_cache_stats(struct swf_cache *c, struct swf_cache_stats *out);
SWF_CXX_SHADOW_ON_

/*
 * The magazines every cache of this process uses, the same for the life of the process.
 *
 * Concurrency: any thread, any time; concurrent first calls agree.
 * Progress: blocking until the mode is decided (the decision may register the process for
 * membarrier's rseq fence), then wait-free: one load.
 * Ordering: the decision is taken under pthread_once, which orders it before what every call
 * reads of it.
 * Returns: 0, per-thread magazines; 1, per-CPU magazines indexed by the CPU's number; 2, per-CPU
 * magazines indexed by the kernel's concurrent thread id (mm_cid).
 * Errors: none; it cannot fail.
 */
SWF_API int swf_cache_percpu(void);

/*
 * Why the process has the mode swf_cache_percpu() returns: one sentence, for people and not for
 * parsing. Decides the mode as swf_cache_percpu() does if it is not decided yet.
 *
 * Concurrency: any thread, any time; concurrent first calls agree.
 * Progress: blocking until the mode is decided (the decision may register the process for
 * membarrier's rseq fence), then wait-free: one load.
 * Ordering: the decision is taken under pthread_once, which orders it before what every call
 * reads of it.
 * Returns: the sentence, never NULL, in a string that lives as long as the process.
 * Errors: none; it cannot fail.
 */
SWF_API const char *swf_cache_percpu_reason(void);

/*
 * Give an object of c to every NULL entry of objs[0 .. n-1], leaving the other entries alone,
 * and count the entries set. It does not touch the objects: their first 8 bytes are unspecified.
 *
 * Concurrency: Any thread, concurrently with every call on c but swf_cache_destroy(); no other
 * thread may change objs during the call.
 * Progress: with SWF_NOWAIT lock-free, with no system call, no allocation and, while the
 * cache's memory stays resident, no page fault; with SWF_WAIT blocking: it may take the refill
 * mutex, allocate and map memory.
 * Ordering: as for single allocations, everything a thread wrote to an object before freeing it
 * happens-before the object's next allocation, by any thread. Nothing else is ordered.
 * Returns: the number of entries of objs that are set when it returns, those set before the call
 * included. When it is less than n, errno is set, and swf_error_reason() says why.
 * Errors: errno is set to:
 * EINVAL: c is NULL, mode is neither SWF_NOWAIT nor SWF_WAIT, or objs is NULL with n above 0;
 * it returns 0.
 * EAGAIN: SWF_NOWAIT: fewer objects than entries to fill were ready for this thread, or
 * failures were injected.
 * ENOMEM: SWF_WAIT: the system, the limit or the magazine table stopped it short.
 */
SWF_API size_t swf_cache_alloc_bulk(struct swf_cache *c, enum swf_alloc_mode mode, void **objs,
                                    size_t n);

/*
 * Give the non-NULL entries of objs[0 .. n-1], allocated from c, back to c, without touching the
 * objects. An entry that is not the start of an object of c aborts, naming the function.
 *
 * Concurrency: Any thread, concurrently with every call on c but swf_cache_destroy(); no other
 * thread may change objs during the call.
 * Progress: lock-free, with no system call and no allocation.
 * Ordering: the free releases what the thread wrote to each object to its next allocation.
 * Returns: 0 or an error number; after a failure, swf_error_reason() says why.
 * Errors:
 * EINVAL: c is NULL, or objs is NULL with n above 0.
 */
SWF_API int swf_cache_free_bulk(struct swf_cache *c, void *const *objs, size_t n);

/* ---- the inline NOWAIT path ----------------------------------------------------------------- */

/* The library's slow halves, which the inline path below calls when its common case cannot serve
 * the call: what swf_cache_alloc() with SWF_NOWAIT and swf_cache_free() do after their own common
 * case (the same), without trying it again. Part of the inline ABI, not for callers. */
SWF_API void *swf_cache_alloc_miss_(struct swf_cache *c);
SWF_API int swf_cache_free_miss_(struct swf_cache *c, void *obj);

/*
 * What swf_cache_alloc() does with SWF_NOWAIT, done inline in the caller while the calling
 * thread's loaded magazine (per-CPU mode: its CPU's) has an object, and by a call to it otherwise.
 * The inline part is the library's own common case, the same code (cache_abi.h), so the two
 * count alike and call the same slow path at an empty magazine.
 *
 * Concurrency: Any thread, concurrently with every call on c but swf_cache_destroy(). The inline
 * path touches only the calling thread's own swf_thread_self_, the object's first 8 bytes, and
 * one magazine: in the per-thread mode, the thread's own, through its binding table and its
 * state for c; in the per-CPU mode, the magazine of the CPU it runs on, inside a restartable
 * sequence that the kernel aborts if the thread is preempted, migrated or signalled, so that its
 * commit never races another thread's change to that magazine, and the rseq_cs field of the
 * thread's own rseq area (no state for c: a thread that never made a blocking call takes it too).
 * Progress: Lock-free, with no system call, no allocation and, while the cache's memory stays
 * resident, no page fault. The inline common case has no atomic read-modify-write instruction:
 * in the per-thread mode it is a fixed number of loads and stores; in the per-CPU mode, a
 * restartable sequence of a fixed number of instructions, run again only when the kernel
 * aborted it because the thread was preempted, migrated or signalled inside it (an attempt that
 * is not interrupted commits or fails).
 * Ordering: Everything a thread wrote to an object before freeing it happens-before the object's
 * next allocation, by any thread. In the per-thread mode, an object freed into this thread's
 * magazine and allocated again by the same thread is ordered by program order; objects move
 * between threads only through the library's paths, which order them. In the per-CPU mode, the
 * load of x_slots is an acquire load that pairs with the library's release store, so a thread
 * that sees the slots sees them and their magazines initialised; an object freed onto a CPU's
 * magazine and allocated from it by another thread on the same CPU is ordered by the context
 * switch between the two threads (the kernel's scheduler runs full barriers), and magazines
 * move between CPUs only through the depot, whose compare-and-swaps release and acquire them.
 * The per-thread mode's counters are relaxed stores; the per-CPU mode counts the call in the
 * magazine's word, in the store that commits it; the check of x_slow is a relaxed load.
 * Returns: the object, or NULL with errno set; after a failure, swf_error_reason() says why.
 * Errors: errno is set as swf_cache_alloc() with SWF_NOWAIT sets it:
 * EINVAL: c is NULL.
 * EAGAIN: no object is ready for this thread, or a failure was injected.
 */
static inline void *swf_cache_alloc_fast(struct swf_cache *c)
{
    void *obj;
    if (__builtin_expect(c != SWF_NULL_ && swf_cache_alloc_try_(c, &obj, SWF_NULL_), 1))
        return obj;
    return swf_cache_alloc_miss_(c);
}

/*
 * What swf_cache_free() does, done inline in the caller while the calling thread's loaded
 * magazine (per-CPU mode: its CPU's) has room, and by a call to it otherwise. The inline part is
 * the library's own common case, the same code (cache_abi.h), so the two count alike and call
 * the same slow path at a full magazine.
 *
 * Concurrency: Any thread, concurrently with every call on c but swf_cache_destroy(). The inline
 * path touches only the calling thread's own swf_thread_self_, the object's first 8 bytes, and
 * one magazine: in the per-thread mode, the thread's own, through its binding table and its
 * state for c; in the per-CPU mode, the magazine of the CPU it runs on, inside a restartable
 * sequence that the kernel aborts if the thread is preempted, migrated or signalled, so that its
 * commit never races another thread's change to that magazine, and the rseq_cs field of the
 * thread's own rseq area (no state for c: a thread that never made a blocking call takes it too).
 * Progress: Lock-free, with no system call, no allocation and, while the cache's memory stays
 * resident, no page fault. The inline common case has no atomic read-modify-write instruction:
 * in the per-thread mode it is a fixed number of loads and stores; in the per-CPU mode, a
 * restartable sequence of a fixed number of instructions, run again only when the kernel
 * aborted it because the thread was preempted, migrated or signalled inside it (an attempt that
 * is not interrupted commits or fails).
 * Ordering: Everything a thread wrote to an object before freeing it happens-before the object's
 * next allocation, by any thread. In the per-thread mode, an object freed into this thread's
 * magazine and allocated again by the same thread is ordered by program order; objects move
 * between threads only through the library's paths, which order them. In the per-CPU mode, the
 * load of x_slots is an acquire load that pairs with the library's release store, so a thread
 * that sees the slots sees them and their magazines initialised; an object freed onto a CPU's
 * magazine and allocated from it by another thread on the same CPU is ordered by the context
 * switch between the two threads (the kernel's scheduler runs full barriers), and magazines
 * move between CPUs only through the depot, whose compare-and-swaps release and acquire them.
 * The per-thread mode's counters are relaxed stores; the per-CPU mode counts the call in the
 * magazine's word, in the store that commits it; the check of x_slow is a relaxed load.
 * Returns: 0, also for a NULL obj (which does nothing), or an error number; after a failure,
 * swf_error_reason() says why.
 * Errors:
 * EINVAL: c is NULL.
 */
static inline int swf_cache_free_fast(struct swf_cache *c, void *obj)
{
    if (__builtin_expect(
            c != SWF_NULL_ && obj != SWF_NULL_ && swf_cache_free_try_(c, obj, SWF_NULL_), 1))
        return 0;
    return swf_cache_free_miss_(c, obj);
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_CACHE_H */
