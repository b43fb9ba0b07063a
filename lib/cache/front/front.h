/*
 * lib/cache/front/front.h - the cache's front ends: the slow halves of the calls that cache.h's
 * inline path could not serve, one front end per mode behind struct swfi_front: the per-thread
 * one (thread.c), the per-CPU one (pcpu.c) with its magazines and their restartable sequences
 * (percpu.c, seq.h), which never use each other's names (test/unit/layers.py), and what both use:
 * the slow halves of a thread with no state (shared.c) and the thread states (tstate.c). They take
 * objects from and put them in the store (store/store.h) and are called by the entry points
 * (cache_internal.h), which they never call.
 */
#ifndef SWF_LIB_CACHE_FRONT_H
#define SWF_LIB_CACHE_FRONT_H

#include "cache/store/store.h"

#define TS_BLOCK_SHIFT   3      /* 8 thread states (512 bytes) per block */
#define TS_BLOCKS_MAX    131072 /* 1M threads bound to one cache at once; others share */
#define SPARE_EMPTY_MAGS 8      /* kept on the empty stack by the blocking paths */
#define CLAIM_ABANDONED  2      /* a shared state's claim word: claimed by a thread lost in fork */

/* A thread state: a bound thread's magazines and counters. Its head is cache_abi.h's struct
 * swf_tstate_ (istack link, index, loaded, prev, the inline path's two counters). Counters
 * have a single writer (the bound thread) and relaxed readers (stats); cumulative across owners. */
struct swfi_tstate {
    struct swf_tstate_ pub;
    uint64_t x_allocs_wait;
    uint64_t x_fails_nowait;
    uint32_t x_claim; /* shared states: 1 while a thread without a state of its own uses it,
                       * CLAIM_ABANDONED in a child of fork when a thread of the parent did */
};

static inline struct swfi_magazine *swfi_ts_loaded(const struct swfi_tstate *ts)
{
    return swfi_mag_of(ts->pub.loaded);
}

static inline struct swfi_magazine *swfi_ts_prev(const struct swfi_tstate *ts)
{
    return swfi_mag_of(ts->pub.prev);
}

static inline void swfi_ts_set(struct swfi_tstate *ts, struct swfi_magazine *loaded,
                               struct swfi_magazine *prev)
{
    ts->pub.loaded = loaded ? &loaded->pub : NULL;
    ts->pub.prev = prev ? &prev->pub : NULL;
}

/*
 * A cache's front end: the slow halves of the calls that cache.h's inline path could not serve,
 * each in its mode's order (shared.c's top comment). Two, chosen once at create (c->front):
 * swfi_front_thread (per-thread magazines, shared states, the depot) and swfi_front_pcpu (per-CPU
 * magazines, then the depot). The public entry points (cache.c) check arguments, inject failures
 * and move the full checks' states, and call through it; none tests the mode.
 */
struct swfi_front {
    /* A NOWAIT allocation (injection decided): the object, counted, or NULL, counted as a
     * failure. Lock-free. */
    void *(*alloc)(struct swf_cache *c);
    /* Under refill_lock, for a WAIT allocation by the thread whose state is ts (NULL: none): an
     * object counted as a WAIT allocation, or NULL. Lock-free itself. */
    void *(*take_locked)(struct swf_cache *c, struct swfi_tstate *ts);
    /* Under refill_lock, when the cache can map no more: the other CPUs' objects to the depot.
     * How many moved; 0 and *refused set when the kernel refused the fence. Blocking. */
    uint64_t (*reclaim)(struct swf_cache *c, const char **refused);
    /* A single free of a non-NULL obj: checked, its full checks' state moved, marked, put,
     * counted. Lock-free. */
    void (*free)(struct swf_cache *c, void *obj);
    /* NOWAIT objects for the `nulls` NULL entries of objs[0 .. n-1], no injection; the entries
     * left NULL count as failed NOWAIT calls. Returns how many it gave. Lock-free. */
    size_t (*alloc_bulk)(struct swf_cache *c, void **objs, size_t n, size_t nulls);
    /* The non-NULL entries (full checks' states moved by the caller): owners checked, put,
     * counted. Lock-free. */
    void (*free_bulk)(struct swf_cache *c, void *const *objs, size_t n);
    /* The objects the calling thread holds (its CPU's, per-CPU) to the depot. Lock-free. */
    void (*flush)(struct swf_cache *c);
    /* The cache's first use (a blocking path, refill_lock held): make what the mode's calls
     * work on (the shared states and their magazines; the CPUs' slots and theirs), unless it was
     * made. 0 or ENOMEM (nothing made; the next use tries again). Until then NOWAIT finds
     * nothing (EAGAIN). */
    int (*first_use)(struct swf_cache *c);
    /* Under refill_lock, for a blocking call: bind the calling thread (its table first made to
     * reach every owner alive now), making thread states and magazines as needed. The state the
     * call works on: the thread's own, or NULL (memory or the tables ran out, or the mode's calls
     * need none, the thread bound best effort for its counters alone). Allocates. */
    struct swfi_tstate *(*bind)(struct swf_cache *c);
    /* A single free's double-free search: whether obj is in the magazines the free goes to, those
     * of ts (the state it works on; NULL: none), or this CPU's. Lock-free. */
    bool (*holds)(struct swf_cache *c, const struct swfi_tstate *ts, const void *obj);
    /* The sum (stats): add to *allocs and *frees what the mode counts beside the thread states'
     * and the cache's counters. Whether the sum is a snapshot (swfi_pcpu_counts). Lock-free. */
    bool (*counts)(struct swf_cache *c, uint64_t *allocs, uint64_t *frees);
    /* The full checks' walk (validate.c, no thread inside the cache): check the magazines the
     * threads or the CPUs hold, and return how many objects they hold. */
    uint64_t (*validate)(struct swf_cache *c, const char *fn);
    /* Free what first use made beyond the tables (destroy, or create's failure). */
    void (*fini)(struct swf_cache *c);
    /* The fork hooks' part (tstate.c; refill_lock held): before the fork, and after it in the
     * parent or the child (where only the forking thread exists). Blocking. */
    void (*fork_prepare)(struct swf_cache *c);
    void (*fork_done)(struct swf_cache *c, bool child);
    /* Whether a thread needs a state of its own for what grow promises (its magazines). */
    bool needs_state;
    /* The mode, for stats (swf_cache_stats's percpu). */
    bool percpu;
};

extern const struct swfi_front swfi_front_thread, swfi_front_pcpu;

/* ---- shared.c: what both front ends use ------------------------------------------------------ */

/* A thread with no state: up to `want` objects from one depot magazine into dst (or carved, or
 * one from the loose list), returning how many; and n objects into as few magazines as have room
 * (or the loose list). O(1) per object. */
uint32_t swfi_take_unbound(struct swf_cache *c, void **dst, uint32_t want);
void swfi_put_unbound(struct swf_cache *c, void *const *objs, size_t n);

/* One object as a thread with no state, or NULL. */
void *swfi_take_one_unbound(struct swf_cache *c);

/* Count a successful allocation: in ts (a bound or claimed state), else in the cache; and a
 * failed NOWAIT one the same way. */
void swfi_count_alloc(struct swf_cache *c, struct swfi_tstate *ts, enum swf_alloc_mode mode);
void swfi_count_fail(struct swf_cache *c, struct swfi_tstate *ts);

/* objs[i .. end-1] were just handed out: move their full checks' states. Their free marks stay
 * (a bulk allocation does not touch the objects; cache.h). */
void swfi_mark_given(struct swf_cache *c, void *const *objs, size_t i, size_t end);

/* Check the owner of objs[i .. end-1] (all non-NULL): cache.h's test against the chunk this
 * thread last freed into, the map for the others (which makes their chunk the remembered one). */
void swfi_owners_ok(struct swf_cache *c, void *const *objs, size_t i, size_t end);

/* A CPU's magazine for the bulk calls (percpu.c's swfi_pcpu_take_many and swfi_pcpu_put_many),
 * given by the front end that has one: how many objects moved. */
typedef uint32_t (*swfi_take_many_fn)(struct swf_cache *c, void **buf, uint32_t k);
typedef uint32_t (*swfi_put_many_fn)(struct swf_cache *c, void *const *buf, uint32_t k);

/* A thread without magazines of its own (every thread, in the per-CPU mode): NOWAIT objects for
 * the NULL entries, a magazine's worth at a time, from this CPU's magazine first when from_cpu is
 * given (*popped counts those: the magazine counted them itself), else from the depot. Returns
 * how many it gave. */
size_t swfi_take_bulk_unbound(struct swf_cache *c, void **objs, size_t n, size_t nulls,
                              swfi_take_many_fn from_cpu, size_t *popped);

/* The same thread's frees: owners checked, a magazine's worth at a time, to this CPU's magazine
 * first when to_cpu is given, the rest to the depot, counted here. */
void swfi_put_bulk_unbound(struct swf_cache *c, void *const *objs, size_t n,
                           swfi_put_many_fn to_cpu);

/* A single free's check: swfi_owner_check, then, when obj carries the free mark, abort if obj is
 * in the magazines this free goes to (the front's holds: ts's, or this CPU's). Reads obj's first
 * word only. */
void swfi_free_check(struct swf_cache *c, struct swfi_tstate *ts, const char *fn, void *obj);

/* ---- tstate.c: thread states, which both front ends bind ------------------------------------- */

/* Make a block of thread states on the free pool (refill_lock held). 0 or ENOMEM. */
int swfi_tstates_make(struct swf_cache *c);

/* A free thread state for the calling thread, lock-free: NULL when the thread was never prepared
 * (swfi_tls_bindable) or the pool is dry. Not yet bound. */
struct swfi_tstate *swfi_tstate_pop(struct swf_cache *c);

/* Give a thread state back: its magazines to the depot, itself to the free pool. Lock-free. */
void swfi_tstate_release(struct swf_cache *c, struct swfi_tstate *ts);

/* Keep spare empty magazines and free thread states around, and put loose objects back into
 * magazines (refill_lock held; best effort). */
void swfi_pools_replenish(struct swf_cache *c);

extern const struct swfi_owner_ops swfi_cache_owner_ops;

/* ---- thread.c: the per-thread front end ------------------------------------------------------ */

/* A bound thread's slow halves (ts its own state or a claimed shared one): its prev magazine,
 * then the depot, then uncarved objects, then the loose list. take returns NULL when nothing is
 * ready for the thread. */
void *swfi_take_bound(struct swf_cache *c, struct swfi_tstate *ts);
void swfi_put_bound(struct swf_cache *c, struct swfi_tstate *ts, void *obj);

/* An object from any shared state but `held` (the one the caller holds, or NULL): where an
 * allocation looks before it gives up (NOWAIT) or maps memory (WAIT), so that objects freed by
 * threads without a state of their own are never stranded there. Without `wait`, NULL when none
 * has one or all are taken at this moment; with `wait` (WAIT only, after mapping failed, never
 * under refill_lock), it waits out each state's current claimer in short sleeps, so NULL means
 * none had one (always, in the per-CPU mode: it makes no shared states). */
void *swfi_take_shared(struct swf_cache *c, struct swfi_tstate *held, bool wait);

/* The per-thread front's binding: the calling thread to c from the spare pools, lock-free, with
 * two empty magazines; NULL when the thread was never prepared (swfi_tls_bindable) or a pool is
 * dry. */
struct swfi_tstate *swfi_tstate_bind_nowait(struct swf_cache *c);

/* The per-thread front's bind (struct swfi_front): the calling thread's state, binding it first
 * if need be, making thread states and magazines as needed (refill_lock held; allocates). NULL
 * only when memory or the tables ran out. */
struct swfi_tstate *swfi_tstate_bind_locked(struct swf_cache *c);

/* The per-thread front's first use (struct swfi_front): make the shared states and their
 * magazines, unless they were made. 0 or ENOMEM (nothing made). */
int swfi_shared_make(struct swf_cache *c);

/* The per-thread front's part of the fork hooks: in the child, a shared state claimed at the
 * fork stays claimed, marked abandoned (fork_child, tstate.c; thread.c). */
void swfi_shared_fork_done(struct swf_cache *c, bool child);

/* The per-thread front's walk (validate): check the bound and shared states' magazines and return
 * how many objects they hold. */
uint64_t swfi_tstates_validate(struct swf_cache *c, const char *fn);

/* The thread state a lock-free call works on: the calling thread's own (bound now if it can be),
 * else a shared state claimed for this call (*claimed set: give it back with swfi_tstate_done),
 * else NULL: the call goes to the depot. Lock-free. */
struct swfi_tstate *swfi_tstate_for_call(struct swf_cache *c, bool *claimed);

/* Whether the shared states exist (the cache was used; acquire, paired with first use). */
bool swfi_shared_made(struct swf_cache *c);

/* Claim the shared state ts for one call (acquire: the previous claimer's work on its magazines
 * is ours to build on); give it back with swfi_tstate_done. With `wait`, until its current
 * claimer (one call long) lets go, in short sleeps; without, false when it is taken. */
bool swfi_shared_claim(struct swfi_tstate *ts, bool wait);

static inline void swfi_tstate_done(struct swfi_tstate *ts, bool claimed)
{
    if (claimed) /* Release: our work on its magazines before the next claimer's acquire. */
        swfi_store_release_32(&ts->x_claim, 0);
}

/* The per-thread front's search (struct swfi_front's holds): whether obj is in ts's loaded or
 * prev magazine (none when ts is NULL). */
bool swfi_tstate_holds(struct swf_cache *c, const struct swfi_tstate *ts, const void *obj);

/* ---- pcpu.c: the per-CPU front end ----------------------------------------------------------- */

/* The per-CPU front's bind (struct swfi_front): bind as the per-thread front does (best effort),
 * a state with no magazines (counters and the free check's chunk only); NULL, always: the
 * per-CPU calls need no state. refill_lock held; allocates. */
struct swfi_tstate *swfi_tstate_bind_bare(struct swf_cache *c);

/* ---- percpu.c: the per-CPU mode -------------------------------------------------------------- */

/* Make the slot array, a magazine in each (first use, refill_lock held). 0 or ENOMEM. */
int swfi_pcpu_init(struct swf_cache *c);
void swfi_pcpu_fini(struct swf_cache *c);

/* The fast paths' sequences: cache.h's, with aborts counted (swfi_rseq_aborts). */
#ifdef SWF_RSEQ
#define SWFI_ABORTS (&swfi_rseq_aborts_)
#else
#define SWFI_ABORTS NULL
#endif

/* The slow halves (pcpu.c's pcpu_alloc, pcpu_take_locked and pcpu_free): an object from this
 * CPU's magazine, or obj into it, after one refill of the slot from the depot (a magazine with
 * objects, or an empty one) when it is empty (full). after_fast: the caller comes from the common
 * case, whose sequence need not run again. NULL (false) when that failed too: the caller goes to
 * the depot as a thread with no state. Lock-free, no system call. */
void *swfi_pcpu_take(struct swf_cache *c, bool after_fast);
bool swfi_pcpu_put(struct swf_cache *c, void *obj, bool after_fast);

/* Up to k objects from this CPU's magazine into buf, or from buf on top of it (the bulk calls),
 * in one restartable sequence each; they return how many moved (0: none, or no slots). Lock-free,
 * no system call. */
uint32_t swfi_pcpu_take_many(struct swf_cache *c, void **buf, uint32_t k);
uint32_t swfi_pcpu_put_many(struct swf_cache *c, void *const *buf, uint32_t k);

/* This CPU's magazine to the depot, an empty one in its place (flush). Lock-free, no system
 * call; nothing when the depot has no empty magazine or the thread moved meanwhile. */
void swfi_pcpu_flush(struct swf_cache *c);

/* Add the per-CPU magazines' allocations and frees to *allocs and *frees (stats): those of
 * the magazines in the slots now, by what their words moved since they went there, and those
 * of the magazines that left. Lock-free. Returns whether the sum is a snapshot: no magazine
 * moved between slots and the cache while it was read (exact when no thread is inside the
 * cache); false after a few tries that saw them move, the sum then being the last try's. */
bool swfi_pcpu_counts(struct swf_cache *c, uint64_t *allocs, uint64_t *frees);

/* The full checks' walk (validate.c, no thread inside the cache): check every CPU's magazine and
 * return how many objects they hold. */
uint64_t swfi_pcpu_validate(struct swf_cache *c, const char *fn);

/* The fork hooks' part (tstate.c; refill_lock held): before the fork, stop new moves of a slot's
 * magazine and wait for those in progress; after it, let them begin again (in the child, with
 * the count of the moves that only backed off, by threads it does not have, cleared). Blocking:
 * the wait sleeps while other threads finish their moves, each a bounded, lock-free step. */
void swfi_pcpu_fork_prepare(struct swf_cache *c);
void swfi_pcpu_fork_done(struct swf_cache *c, bool child);

/* Whether obj is in this CPU's magazine (a single free's double-free search). Lock-free. */
bool swfi_pcpu_holds(struct swf_cache *c, const void *obj);

/* Move every CPU's objects to the depot (refill_lock held; blocking: membarrier). Returns how
 * many objects moved; 0 when the kernel refused the fence, every magazine left in its slot, with
 * *refused set to the reason an ENOMEM that follows gives. */
uint64_t swfi_pcpu_drain(struct swf_cache *c, const char **refused);

#endif /* SWF_LIB_CACHE_FRONT_H */
