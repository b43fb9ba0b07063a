/*
 * sweepfill/cache.h - a lock-free cache of fixed-size objects: the sweep's nonblocking allocator.
 *
 * A cache hands out objects of one size and alignment. Its memory comes from the system in chunks
 * mapped and prepared (every page written, optionally locked) by the blocking paths (create,
 * grow, WAIT allocations); the nonblocking path (SWF_NOWAIT) only ever hands out objects from
 * memory prepared that way, so it takes no lock, makes no system call and, while that memory
 * stays resident, causes no page fault. This is what makes an allocation legal inside a
 * read-side section in which nothing may block.
 *
 * Structure (docs/design.md has the whole argument). Two modes, one for every cache of the
 * process (swf_cache_percpu):
 *   - per-CPU magazines, the default where the system supports them (Linux rseq as glibc 2.35 and
 *     later registers it, x86_64 and aarch64): one magazine per CPU (per concurrent thread id,
 *     mm_cid, where the kernel has it), which a NOWAIT allocation or a free pops or pushes in a
 *     restartable sequence, committed by one store or aborted and retried by the kernel when the
 *     thread is preempted, migrated or signalled. Threads' states hold their counters only, and
 *     there are no shared pairs;
 *   - per-thread magazines, elsewhere and where SWF_PERCPU=0 asks for them: a thread bound to a
 *     cache holds a pair of magazines (arrays of up to SWF_CACHE_MAGAZINE free objects) that the
 *     common alloc and free touch with no atomic read-modify-write. A thread is bound at its first
 *     blocking call on the cache (swf_cache_grow - swf_cache_grow(c, 0) does only that - or a WAIT
 *     allocation), or, once it has made such a call on any cache after this one was created, at
 *     its first NOWAIT allocation or free when spare magazines are at hand; a thread without
 *     magazines borrows one of a few shared pairs for a call, or takes and puts single objects
 *     through the depot.
 * In both, a shared depot keeps full, partial and empty magazines on lock-free stacks, exchanged
 * whole; the objects of memory a grow maps stay uncarved until an allocation that finds no
 * magazine of objects on the depot carves up to a magazine's worth with one compare-and-swap; a
 * free that finds no room pushes the object on a lock-free loose list.
 *
 * What another thread holds. Per-CPU: a preempted thread holds nothing, except a thread
 * preempted between taking a magazine from the depot and swapping it into its CPU's slot, which
 * holds that one magazine; NOWAIT calls reach the magazine of the CPU they run on, not the others
 * (at most one magazine per CPU out of reach); a WAIT allocation that finds nothing and can map no
 * more, and a grow that needs more than the depot has, move every CPU's magazine to the depot
 * (they lock each CPU's slot, and membarrier(2)'s rseq fence aborts the sequences in flight).
 * Where the kernel refuses that fence after the mode was chosen (a seccomp filter that denies
 * membarrier, installed after start-up), nothing else can stand in for it: those moves move
 * nothing, and the objects in other CPUs' magazines stay there for the threads that run on those
 * CPUs. The stats still count them as ready and destroy still recounts and unmaps them, but such
 * a WAIT allocation or grow maps new memory instead, and fails with ENOMEM where the limit or
 * the system allows none (its swf_error_reason() names the refused fence).
 * Per-thread: objects cached in another thread's magazines, or being moved by another thread at
 * that moment, are not available to this thread until that thread frees enough to fill a
 * magazine, calls swf_cache_flush(), or exits. Objects left in the shared pairs are: a NOWAIT
 * allocation looks there before it fails; a WAIT allocation looks in the pairs not in use at that
 * moment before it maps memory, and, when no memory is to be had, waits for those in use
 * (sleeping, with no lock held, so a claimer of lower priority can finish) before it fails. A move
 * holds up to a magazine's worth for a few instructions; a thread preempted in the middle of one
 * keeps them out of reach until it runs again. So with many more runnable threads than cores,
 * NOWAIT can fail with EAGAIN while the stats count objects ready: grow the cache by a magazine's
 * worth per thread that may be preempted, or use the per-CPU mode.
 *
 * Concurrency: every function here may run concurrently with every other on the same cache,
 * from any threads (those that take an epoch record, with the caller's own), except
 * swf_cache_destroy, which the caller keeps apart from every other call on the cache (a lock, or
 * a happens-before edge such as joining the threads). The epoch callbacks of
 * swf_cache_free_deferred may run (in ck_epoch_poll, ck_epoch_barrier or swf_cache_quiesce on the
 * record) concurrently with swf_cache_destroy: destroy sees a callback either finished or not
 * begun, and returns EBUSY for the latter.
 *
 * Progress: alloc(SWF_NOWAIT), free and flush are lock-free (a thread may retry a compare-and-swap
 * only because another thread's succeeded, and, in the per-CPU mode, a restartable sequence only
 * because the kernel preempted, migrated or signalled it inside one), make no system call and no
 * allocation.
 * alloc(SWF_WAIT), grow, set_limit, set_failslab and create may take the cache's refill mutex,
 * allocate and map memory. destroy blocks until no exiting thread is handing back a magazine.
 *
 * Memory ordering: everything a thread wrote to an object before freeing it (or before the grace
 * period of a deferred free began) happens-before the object's next allocation, by any thread.
 * Nothing else is ordered by the cache: publishing an object to other threads is the caller's job
 * (the sweep publishes with a release store, see sweep.h).
 *
 * Residency: "no page fault" holds while the cache's memory stays resident. Memory can be swapped
 * out, and after fork() every page the parent or the child writes first is copied (a fault) in
 * the writer. lock_memory (swf_cache_config) mlocks the objects' memory, which rules out the
 * first; mlockall(MCL_CURRENT | MCL_FUTURE) also covers the cache's own tables and the copy on
 * write is avoided by touching them after the fork.
 *
 * Signals: no function here is async-signal-safe. A signal handler that interrupts a thread
 * inside a cache call and calls into the same cache from that thread corrupts its magazines.
 *
 * fork: the library's fork handlers take every cache's refill mutex around fork(), so a fork waits
 * for the grows and WAIT allocations in progress. In the child, every cache is usable by its one
 * thread: alloc, free, grow, flush, stats and destroy work as in the parent (the per-CPU mode
 * included: the CPUs' magazines stay reachable, and the membarrier registration is inherited). What
 * the parent's other threads had in hand at the fork is lost to the child, counted as ready but
 * never handed out there: the objects in their magazines (per-thread mode) or in a shared pair one
 * of them was using; a magazine one of them had popped from the depot and not yet put where it was
 * going (a refill or a flush swapping it into its CPU's slot, a call taking some of its objects, a
 * free filling it); a magazine a refill or a flush had just swapped out of a CPU's slot and not yet
 * pushed on the depot; the objects a bulk call had taken into its own buffer (from a CPU's
 * magazine, the depot or uncarved memory) and not yet given out or put back; an object a single
 * call had taken and not yet counted; and a chain of the loose list taken whole and not yet spread
 * into magazines. All but the first kind lie where the full checks' walk does not look, so with the
 * full checks on, destroy's recount in the child finds them missing and aborts. The objects those
 * threads had allocated count as alive, and so do those a free was putting back and had not yet
 * counted (a free counts its object once it is back, a bulk free all of its objects at its end),
 * even where the object is back in a magazine already; so destroy in the child returns EBUSY unless
 * the child frees every object its own threads hold, and for the latter kind it never can.
 * NOWAIT's "no system call, no fault" holds in the child as in the parent (with the
 * copy-on-write caveat above).
 *
 * Limits: at most SWF_CACHE_MAX caches and registries (registry.h) are alive at once; a thread
 * can use any number of them (its binding table grows on each swf_cache_grow, WAIT allocation
 * and first read of a registry by the thread, to reach every cache and registry alive then, in
 * steps of 64 entries of 40 bytes: 2.5 MiB to reach all 65,536); at most SWF_CACHE_THREADS_MAX
 * threads are bound to one cache at once (hold a state of it: per-thread, with its magazines;
 * per-CPU, with its counters); more use the shared pairs and the depot (per-thread) or count
 * with an atomic add (per-CPU).
 *
 * Footprint (a 64-bit library built without debug checks): a cache keeps about 1 KiB until its
 * first use - a prefill, a grow or a WAIT allocation - which makes its tables and pools: magazines
 * (528 bytes each) and thread states (128 bytes each), as many as that use needs, in blocks of 8;
 * 8 shared pairs and 8 spare magazines; and the objects' memory in chunks, the first of which,
 * with base pages, holds what the use maps (a WAIT allocation: a magazine's worth of objects)
 * rounded up to whole pages (swf_huge_pages). A cache of 64-byte objects keeps about 29 KiB
 * resident after its first allocation (one page of objects among it), and 30 KiB while 8 threads
 * that made one allocation each are bound to it; 20 and 21 KiB in the per-CPU mode with 2
 * possible CPUs (bench/RESULTS.md, footprint). Each thread bound to a cache costs that cache a
 * thread state and two magazines (1,184 bytes), and costs the thread 40 bytes of binding table per
 * handle (above). In the per-CPU mode the first use makes, instead of shared pairs, an 8-byte
 * slot, 64 bytes of counters and one magazine (528 bytes) per possible CPU, and a thread bound to
 * it costs a thread state (128 bytes, counters only). A cache keeps what it made until it is
 * destroyed.
 *
 * Object memory: the cache uses an object's first 8 bytes only from the moment it is freed (a
 * single free reads them, then writes its mark there: swf_cache_free) and zeroes them when a
 * single allocation hands the object out; it never looks at the rest. Memory goes back to the
 * system only at destroy. (What the cache does not offer, and why: docs/design.md, section 1, "Not
 * offered".)
 */
#ifndef SWEEPFILL_CACHE_H
#define SWEEPFILL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "cache_abi.h" /* the layout the inline path reads */

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
    /* Lock-free; no lock, no system call, no page fault (memory resident). NULL + EAGAIN when no
     * object is ready for this thread or a failure was injected (see swf_failslab). */
    SWF_NOWAIT = 1,
    /* May take the refill mutex and map memory. NULL + ENOMEM only when the system refuses memory
     * or the cache's limit is reached. Never affected by fault injection. */
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
    unsigned int lock_memory;  /* 1: mlock every chunk of objects as it is mapped (a grow then
                                  fails with EPERM or ENOMEM when RLIMIT_MEMLOCK forbids); 0: no */
    unsigned int huge_pages;   /* enum swf_huge_pages: transparent huge pages for the objects */
    unsigned int grow_threads; /* threads that prepare a large mapping in parallel (0 or 1: the
                                  calling thread alone; at most SWF_CACHE_GROW_THREADS_MAX) */
    unsigned int checks;       /* 1: full misuse checks for this cache (what SWF_DEBUG=checks
                                  gives every cache: see swf_cache_free); 0: the process's */
    unsigned int reserved[4];  /* must be zero */
};

/*
 * How the objects' memory is mapped (swf_cache_config.huge_pages). Every mapping is prepared
 * before any of its objects is handed out, by the fastest way the kernel offers:
 * madvise(MADV_POPULATE_WRITE) (Linux 5.14), else a write to every page.
 */
enum swf_huge_pages {
    /* Chunks of objects of a page or more, and chunks for 2 MiB of objects or more (a grow of
     * 32,768 objects of 64 bytes), are mapped 2 MiB-aligned with madvise(MADV_HUGEPAGE), in whole
     * huge pages whose slack holds more objects, when the system's transparent huge pages are
     * "always" or "madvise"; smaller ones with base pages: in whole pages for a cache's first
     * chunk, in units of 4 pages (at most 64 KiB) for its second, and in 64 KiB units after that.
     * The kernel may still back huge ones with base pages (fragmentation): stats.huge_bytes
     * tells. */
    SWF_HUGE_PAGES_AUTO = 0,
    /* Base pages only (no MADV_HUGEPAGE, and MADV_NOHUGEPAGE so that "always" does not apply). */
    SWF_HUGE_PAGES_OFF = 1,
    /* Every chunk as in AUTO whatever its size, and a grow fails (ENOTSUP) when the system has
     * transparent huge pages off, or (ENOMEM) when a chunk got no huge page at all. */
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
    uint64_t reserved[6];      /* zero; later versions may fill them */
};

/*
 * Create a cache. On success stores it in *out and returns 0.
 * Concurrency: any thread, any time. Progress: blocking (maps memory for prefill).
 * Returns EINVAL: cfg or out NULL, object_size 0 or above SWF_CACHE_OBJECT_MAX, align not a power
 * of two or above SWF_CACHE_ALIGN_MAX, limit below prefill, lock_memory or checks not 0 or 1,
 * huge_pages not an enum swf_huge_pages value, grow_threads above SWF_CACHE_GROW_THREADS_MAX,
 * reserved not zero, or a malformed SWF_FAILSLAB; ENOMEM: the system refused memory, or prefill
 * can never be had (as for swf_cache_grow); EPERM: lock_memory and mlock was refused; ENOTSUP:
 * huge_pages is SWF_HUGE_PAGES_REQUIRED and the system has transparent huge pages off; EAGAIN:
 * SWF_CACHE_MAX caches and registries are alive.
 */
SWF_API int swf_cache_create(const struct swf_cache_config *cfg, struct swf_cache **out);

/*
 * Destroy a cache and return all its memory to the system. Objects still cached in other threads'
 * magazines are reclaimed with it; those threads may go on using other caches.
 * Concurrency: exclusive (see the top of this file). Progress: blocking.
 * Returns 0; EINVAL if c is NULL; EBUSY, destroying nothing, while a feature or a registry
 * made on c exists (from its create to its destroy, on or off; swf_error_reason() names it:
 * "the cache is in use by a feature: swf_feature_destroy it first"), or while objects are alive
 * (including deferred frees whose grace period has not run): free them first.
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
 * (swf_cache_alloc(3), "Misuse", lists what is caught in every build and with full checks).
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
 * Free n objects (none NULL) once a ck_epoch grace period has elapsed after this call: for
 * objects that readers inside an epoch section may still hold. The objects are queued on rec
 * (the calling thread's epoch record) with ck_epoch_call, in batches of up to
 * SWF_CACHE_MAGAZINE, and return to the cache when that record dispatches them (ck_epoch_poll,
 * ck_epoch_reclaim, ck_epoch_barrier, or swf_cache_quiesce).
 * Concurrency: any thread, with its own record (ck_epoch_call is single-producer per record).
 * Progress: lock-free while spare magazines exist; otherwise it takes the refill mutex to make
 * one. Ordering: a full fence precedes the ck_epoch_call, so whatever the caller did before (the
 * unpublication of the objects) is visible before the grace period's epoch is read (why:
 * sweepfill(7), "Weakly ordered machines").
 * Returns 0; EINVAL if c or rec is NULL or objs is NULL with n > 0; ENOMEM if no magazine
 * could be made, in which case none of the n objects was queued and the caller still owns them.
 * Misuse aborts as swf_cache_free's does, naming swf_cache_free_deferred: always, before
 * anything is queued, an entry that is not an object of c (NULL included) or that is in the
 * calling thread's magazines as swf_cache_free finds it; with the full checks, an entry that is
 * free or already queued. The objects themselves are not written: readers may still hold them.
 */
SWF_API int swf_cache_free_deferred(struct swf_cache *c, struct ck_epoch_record *rec,
                                    void *const *objs, size_t n);

/*
 * Wait for a grace period on rec and dispatch its callbacks (ck_epoch_barrier): after it returns,
 * every object this thread queued on rec with swf_cache_free_deferred is free.
 * Must not be called inside an epoch section: inside a section of a sweepfill guard it aborts at
 * once, and a wait still going after 5 s prints one line (sweep.h, SWF_WATCHDOG_SECONDS).
 * Blocking. Returns 0; EINVAL if c or rec is NULL.
 */
SWF_API int swf_cache_quiesce(struct swf_cache *c, struct ck_epoch_record *rec);

/*
 * Make at least n objects ready for the calling thread's NOWAIT allocations: first give the
 * thread magazines of its own (if it has none), then count the free objects in its magazines, in
 * the depot, on the loose list and in memory mapped but not yet carved into magazines, and map
 * (and prepare) memory for the rest; in the per-CPU mode, when those hold fewer than n, it first
 * moves every CPU's magazine to the depot (a membarrier(2) fence), and the n are ready for the
 * NOWAIT allocations of the CPU the thread runs on: objects left in another CPU's magazine (at
 * most SWF_CACHE_MAGAZINE per CPU, as when the thread moves between CPUs while it allocates) are
 * out of its reach until a thread runs there or a blocking call moves them. This is where page
 * faults belong: outside any read-side section. Every object of each mapping becomes ready at once,
 * with a magazine per SWF_CACHE_MAGAZINE of them made beforehand; allocations carve the objects
 * into magazines a magazine's worth at a time (one compare-and-swap), so a grow costs the memory's
 * preparation, not a step per object. None is mapped that the cache cannot hold.
 * With grow_threads > 1, a mapping of more than 16 MiB is prepared by that many threads at once
 * (the calling thread and grow_threads - 1 it starts and joins before returning).
 * A count that can never be had - beyond what the limit or the magazine table still allows, or
 * more bytes (objects and magazines) than memory and swap or RLIMIT_AS - fails at once, mapping
 * nothing; otherwise memory is mapped in steps of at most 64 MiB, and a failure part-way keeps the
 * steps before it ready.
 * Blocking. Returns 0; EINVAL if c is NULL; ENOMEM if the system, the limit or the magazine table
 * (4M magazines: 251M free objects) stopped it short or would have, or no memory was left for the
 * thread's magazines, or huge pages were required and none were had (what was mapped stays
 * ready; beyond the magazine table, swf_error_reason() states the most objects the cache can
 * have ready now, the table's size and what to do); EPERM: lock_memory and mlock was refused.
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
 * Change the limit on objects (0 = none). Lowering it below the current capacity maps nothing
 * more but unmaps nothing either. Blocking (refill mutex). Returns 0; EINVAL if c is NULL.
 * A WAIT allocation that must map maps at most 16 MiB of objects at once (a quarter of the
 * capacity, at least 60 objects where 60 fit in 16 MiB, at least 1), within the limit.
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
 * bound to c).
 * Ordering: every field holds a value it had at some instant during the call, and the fields
 * agree exactly with each other when no other thread uses c meanwhile. A deferred free counted as
 * done has finished its callback. Nothing else is ordered.
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

/*
 * What swf_cache_alloc() does with SWF_NOWAIT, done inline in the caller while the calling
 * thread's loaded magazine (per-CPU mode: its CPU's) has an object, and by a call to it otherwise.
 *
 * Concurrency: Any thread, concurrently with every call on c but swf_cache_destroy(). The inline
 * path touches only the calling thread's own binding table and state, the object's first 8
 * bytes, and one magazine: the thread's own in the per-thread mode; in the per-CPU mode, the
 * magazine of the CPU it runs on, inside a restartable sequence that the kernel aborts if the
 * thread is preempted, migrated or signalled, so that its commit never races another thread's
 * change to that magazine, and the rseq_cs field of the thread's own rseq area.
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
 * The counters are relaxed stores; the check of x_slow is a relaxed load.
 * Returns: the object, or NULL with errno set; after a failure, swf_error_reason() says why.
 * Errors: errno is set as swf_cache_alloc() with SWF_NOWAIT sets it:
 * EINVAL: c is NULL.
 * EAGAIN: no object is ready for this thread, or a failure was injected.
 */
static inline void *swf_cache_alloc_fast(struct swf_cache *c)
{
    struct swf_thread_cache_ *ts;
    void *obj;
    if (__builtin_expect(c != SWF_NULL_ && (ts = swf_cache_state_(c)) != SWF_NULL_, 1)) {
        struct swf_magazine_ *m = ts->loaded;
        if (__builtin_expect(m != SWF_NULL_ && m->n > 0, 1))
            obj = m->obj[--m->n];
        else if (m != SWF_NULL_ || !swf_cache_pcpu_move_(swf_cache_head_of_(c), &obj, 0, SWF_NULL_))
            return swf_cache_alloc(c, SWF_NOWAIT);
        uint64_t zero = 0; /* clear the free mark: a later free of it is not suspect */
        __builtin_memcpy(obj, &zero, sizeof(zero));
        __atomic_store_n(&ts->x_allocs_nowait, ts->x_allocs_nowait + 1, __ATOMIC_RELAXED);
        return obj;
    }
    return swf_cache_alloc(c, SWF_NOWAIT);
}

/*
 * What swf_cache_free() does, done inline in the caller while the calling thread's loaded
 * magazine (per-CPU mode: its CPU's) has room, and by a call to it otherwise.
 *
 * Concurrency: Any thread, concurrently with every call on c but swf_cache_destroy(). The inline
 * path touches only the calling thread's own binding table and state, the object's first 8
 * bytes, and one magazine: the thread's own in the per-thread mode; in the per-CPU mode, the
 * magazine of the CPU it runs on, inside a restartable sequence that the kernel aborts if the
 * thread is preempted, migrated or signalled, so that its commit never races another thread's
 * change to that magazine, and the rseq_cs field of the thread's own rseq area.
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
 * The counters are relaxed stores; the check of x_slow is a relaxed load.
 * Returns: 0, also for a NULL obj (which does nothing), or an error number; after a failure,
 * swf_error_reason() says why.
 * Errors:
 * EINVAL: c is NULL.
 */
static inline int swf_cache_free_fast(struct swf_cache *c, void *obj)
{
    struct swf_thread_cache_ *ts;
    const struct swf_cache_head_ *h = swf_cache_head_of_(c);
    if (__builtin_expect(c != SWF_NULL_ && obj != SWF_NULL_ &&
                             (ts = swf_cache_state_(c)) != SWF_NULL_ &&
                             swf_cache_free_ok_(h, ts, obj),
                         1)) {
        struct swf_magazine_ *m = ts->loaded;
        uint64_t mark = h->key ^ SWF_REINTERPRET_CAST_(uintptr_t, obj), word;
        if (__builtin_expect(m != SWF_NULL_ && m->n < SWF_CACHE_MAGAZINE, 1)) {
            uint32_t n = m->n; /* read before the mark's store, which may alias it */
            __builtin_memcpy(obj, &mark, sizeof(mark));
            m->obj[n] = obj;
            m->n = n + 1;
        } else if (m == SWF_NULL_) {
            __builtin_memcpy(&word, obj, sizeof(word)); /* the mark goes before the push */
            __builtin_memcpy(obj, &mark, sizeof(mark));
            if (!swf_cache_pcpu_move_(h, &obj, 1, SWF_NULL_)) {
                __builtin_memcpy(obj, &word, sizeof(word)); /* full: the library frees it */
                return swf_cache_free(c, obj);
            }
        } else {
            return swf_cache_free(c, obj);
        }
        __atomic_store_n(&ts->x_frees, ts->x_frees + 1, __ATOMIC_RELAXED);
        return 0;
    }
    return swf_cache_free(c, obj);
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_CACHE_H */
