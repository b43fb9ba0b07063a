/*
 * lib/cache/cache_internal.h - the object cache's structures and the functions its files share,
 * grouped by the file that defines them (one concept per file). The files, bottom up: each uses
 * the functions and variables of only the files listed before it (by name, or through an inline
 * function of this folder's headers), so their uses form no circle (test/unit/layers.py checks
 * it):
 *
 *   chunkmap.c  the process-wide map from address to chunk, and an object's full checks' state
 *   mag.c       making magazines (in blocks), private chains of empty ones, and a magazine's
 *               own check, with its objects' poison (freecheck.c fills it); the depot's full,
 *               partial and empty stacks of magazines are inline, below
 *   loose.c     the loose list: objects freed when no magazine had room, and its spreading
 *               into magazines
 *   chunk.c     mapping and preparing memory for objects, and carving objects from it
 *   percpu.c    the per-CPU mode's magazines: one per CPU in the slot array, moved by rseq
 *               (seq.h: the sequences, which know the magazine's layout)
 *   freecheck.c the always-on check of every free, the free mark's double-free check, and the
 *               full checks' state moves
 *   stats.c     the counters summed (swf_cache_stats)
 *   tstate.c    thread states: binding a thread to a cache, its magazine pair, giving it back,
 *               and the fork hooks
 *   policy.c    the order in which an allocation seeks a free object and a free puts one, as
 *               one front end per mode (struct swfi_front), chosen at create
 *   validate.c  the full checks' recount of the conservation equations below
 *   deferred.c  frees after an epoch grace period
 *   failslab.c  failure injection (failslab.h)
 *   cache.c     the public entry points: the alloc and free fast paths (cache_abi.h's body),
 *               argument checks and injection, then the front end; grow, flush, limits,
 *               statistics, create and destroy
 *
 * Where a free object can be, and who may touch it there:
 *   1. in a magazine loaded in a thread state (ts->loaded, ts->prev): only the thread bound to
 *      that state touches it, with plain loads and stores;
 *   2. in a magazine on one of the depot's stacks (full: SWF_CACHE_MAGAZINE objects; partial:
 *      fewer): nobody, until a pop (acquire) hands the magazine to one thread;
 *   3. on the loose list (x_loose), linked through its first word: nobody, until an exchange
 *      (acquire) hands the whole list to one thread;
 *   4. in a magazine queued for a deferred free: nobody, until its grace period ends and the
 *      epoch callback puts the magazine on the depot;
 *   5. uncarved, in a chunk that allocations carve from (x_carve's stack, chunk.c): never handed
 *      out yet, so nothing of it was written since the kernel zeroed it (its first word is 0, and
 *      its full checks' state OBJ_FREE); nobody, until a compare-and-swap on the chunk's bump
 *      index (x_carved) hands a run of them to one thread, which puts them straight into its
 *      own empty magazine or hands them out (policy.c).
 *   6. per-CPU mode: in a CPU's magazine (owner.head.x_slots): only a thread running on that CPU,
 * in a restartable sequence (base/rseq.h), or a thread that locked the slot (percpu.c). Every move
 * between these places is a release (push, store) paired with an acquire (pop, exchange), so
 * whatever the freeing thread wrote happens-before the next allocation (cache.h's ordering
 * promise); a carved object was written by nobody but the kernel. Magazines and thread states live
 * in tables that grow but never shrink while the cache lives (istack.h), which is what lets a pop
 * read a node another thread may be reusing.
 *
 * Conservation (exact when no thread is inside the cache):
 *     capacity == alive + ready
 *     ready    == sum(ts->loaded->n + ts->prev->n) + sum(CPU magazines' n) + x_depot_objs
 *                 + x_loose_objs + uncarved
 *     alive    == allocations - frees   (objects awaiting a grace period count as alive)
 * where uncarved (swfi_uncarved) is the sum over the chunks on x_carve's stack of nobjs -
 * x_carved. A grow makes a magazine per SWF_CACHE_MAGAZINE objects it maps (mag.c), before
 * it maps them, so that the magazines made for objects could hold every object of every chunk.
 *
 * The blocking paths (WAIT, grow, set_limit, set_failslab, binding a thread on one of them)
 * serialise on refill_lock: mapping memory and growing tables happen there and nowhere else.
 * A cache makes its tables, shared states and spare magazines at its first use on one of them
 * (swfi_cache_first_use), not at create: a cache that is never used costs its struct alone.
 */
#ifndef SWF_LIB_CACHE_INTERNAL_H
#define SWF_LIB_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ck_epoch.h>

#include "base/rseq.h" /* before cache.h: a SWF_RSEQ_DELAY build's delay reaches its sequences */
#include "sweepfill/cache.h"

#include "base/atomic.h"
#include "cache/failslab.h"
#include "cache/users.h"
#include "base/istack.h"
#include "base/owner.h"
#include "base/util.h"

#define MAG_BLOCK_SHIFT 3         /* 8 magazines (4,288 bytes) per table block */
#ifndef SWF_MAG_BLOCKS_MAX        /* a test build lowers it (test/unit/cache_limits.c) */
#define SWF_MAG_BLOCKS_MAX 524288 /* 4M magazines: 251M free objects at most */
#endif
#define MAG_BLOCKS_MAX   SWF_MAG_BLOCKS_MAX
#define TS_BLOCK_SHIFT   3      /* 8 thread states (512 bytes) per block */
#define TS_BLOCKS_MAX    131072 /* 1M threads bound to one cache at once; others share */
#define SPARE_EMPTY_MAGS 8      /* kept on the empty stack by the blocking paths */
#define SHARED_STATES    8      /* thread states that threads without one claim for a call */
#define CLAIM_ABANDONED  2      /* a shared state's claim word: claimed by a thread lost in fork */
#define CHUNK_ALIGN      ((size_t)64 << 10)
#define WAIT_BATCH_BYTES ((size_t)16 << 20) /* most a WAIT allocation maps at once */

/* An object's full checks' state. OBJ_POISONED is free, with its bytes from 8 to the stride
 * holding POISON_BYTE (freecheck.c); OBJ_FREE is free and unpoisoned (never allocated, or given
 * back by a bulk free, which does not touch the objects). */
enum obj_state { OBJ_FREE = 0, OBJ_ALLOC = 1, OBJ_DEFERRED = 2, OBJ_POISONED = 3 };
#define POISON_BYTE 0x6b /* slub's POISON_FREE */

/* Bits of owner.x_slow: why cache.h's inline path must call the library. */
#define SLOW_DEBUG    1u /* full checks: every object's state is tracked */
#define SLOW_FAILSLAB 2u /* failure injection is on */

/* A magazine. Its head is cache_abi.h's struct swf_magazine_, which the inline path reads and
 * writes (n, obj) and which starts with the istack link. "mag" in the names of functions and
 * fields (swfi_mag_of, swfi_mag_validate, c->mags) means this struct. */
struct swfi_magazine {
    struct swf_magazine_ pub;
    uint32_t index;
    uint32_t unused;
    ck_epoch_entry_t epoch_entry; /* while queued for a deferred free */
    struct swf_cache *cache;
    void *epoch; /* the ck_epoch_t of a deferred free, for TSan's benefit (tsan.h) */
};

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

static inline struct swfi_magazine *swfi_mag_of(struct swf_magazine_ *m)
{
    return (struct swfi_magazine *)(void *)m; /* pub is the first member */
}

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

_Static_assert(offsetof(struct swfi_tls_owner, head) == 0, "the owner's head comes first");

struct swfi_chunk {
    struct swfi_chunk *next;
    struct swf_cache *cache; /* the owner: what every free checks (freecheck.c) */
    char *base;
    size_t map_bytes;
    size_t nobjs;
    uint8_t *state; /* full checks: one enum obj_state per object, prepared memory */
    size_t state_bytes;
    uint64_t huge_bytes;           /* backed by huge pages when prepared */
    struct swfi_chunk *carve_next; /* below it on x_carve's stack; set before it is pushed */
    /* Objects carved so far: [0, x_carved) went to magazines, [x_carved, nobjs) are uncarved.
     * Only grows, by compare-and-swap (swfi_carve); on a line of its own. */
    uint64_t x_carved __attribute__((aligned(64)));
};

struct swf_cache {
    struct swfi_tls_owner owner; /* first: its head is binding.h's struct swf_owner_head_ */
    size_t object_size;
    size_t align;
    size_t stride;
    unsigned int lock_memory;
    unsigned int huge_pages;
    unsigned int grow_threads;
    bool checks; /* full checks (cfg->checks, SWF_DEBUG=checks or a debug-check build) */
    bool pcpu;   /* the per-CPU mode (percpu.c): per-CPU magazines, no thread's own */
    const struct swfi_front *front; /* the mode's (policy.c), chosen at create */
    char name[64];

    /* Each hot shared word on its own cache line. */
    struct swfi_istack full __attribute__((aligned(64)));
    struct swfi_istack partial;
    uint64_t x_depot_objs;
    struct swfi_istack empty __attribute__((aligned(64)));
    uint64_t x_empty_mags;
    void *x_loose __attribute__((aligned(64)));
    uint64_t x_loose_objs;
    struct swfi_istack ts_free __attribute__((aligned(64)));
    struct swfi_failslab_state fs __attribute__((aligned(64)));

    /* Counters for work done without a thread state (and for deferred frees). */
    uint64_t x_allocs_nowait __attribute__((aligned(64)));
    uint64_t x_allocs_wait;
    uint64_t x_fails_nowait;
    uint64_t x_fails_injected;
    uint64_t x_fails_wait;
    uint64_t x_frees;
    uint64_t x_deferred_queued;
    uint64_t x_deferred_done; /* release-added by the callback: its last touch of the cache */
    /* Per-CPU mode: the pops and pushes the magazines' words counted, added here when a magazine
     * leaves its slot (percpu.c); a WAIT allocation's pop is taken back from x_slot_pops. */
    uint64_t x_slot_pops;
    uint64_t x_slot_pushes;
    uint32_t x_slot_moving;  /* moves of a slot's magazine in progress (percpu.c) */
    uint32_t x_fork_pending; /* 1 while a fork waits for the moves: none may begin (percpu.c) */
    bool forked; /* a child of fork: the parent's other threads may have held objects then */

    struct swfi_itable mags;
    struct swfi_itable tstates;
    struct swfi_tstate *shared[SHARED_STATES]; /* made on first use, never bound to a thread */
    uint32_t x_shared_made; /* release-stored once shared[] is filled (refill_lock held) */

    pthread_mutex_t refill_lock;
    /* Written under refill_lock; the x_ ones are also read by stats. */
    struct swfi_chunk *chunks;
    struct swfi_chunk *x_carve; /* the chunks with uncarved objects, a stack: pushed under
                                  refill_lock, popped by carvers once carved out (chunk.c) */
    uint64_t mag_credit;        /* magazines made for objects, not yet promised to a chunk's */
    uint64_t x_capacity;
    uint64_t x_limit;
    uint64_t x_bytes_mapped;
    uint64_t x_huge_bytes;
    uint64_t x_chunks;
    const char *map_why; /* why the last swfi_map_objects came up short */
    uint64_t map_room;   /* with the magazine table's why: the objects it can still take */
    uint32_t x_users[SWFI_CACHE_USERS]; /* features and registries alive on the cache (users.h) */
};

/* Full checks (mag.c): abort naming fn unless magazine m (held by the caller) holds at most
 * SWF_CACHE_MAGAZINE free objects of c. O(m->pub.n): cheap enough for every move of a magazine to
 * the depot. */
void swfi_mag_validate(struct swf_cache *c, const struct swfi_magazine *m, const char *fn);

/* Full checks: abort, naming swf_cache_free, the cache, obj and the first byte changed, unless
 * obj's bytes from 8 to the stride all hold POISON_BYTE (obj in state OBJ_POISONED;
 * mag.c). */
void swfi_poison_check(struct swf_cache *c, const void *obj);

/* Full checks: abort naming fn unless obj, found in `where` (a place where free objects wait),
 * is an object of c in state FREE, or POISONED with its poison whole (swfi_poison_check, which
 * names swf_cache_free). */
void swfi_obj_validate(struct swf_cache *c, const char *fn, const void *obj, const char *where);

/* ---- the depot's stacks ---------------------------------------------------------------------- */

static inline struct swfi_magazine *swfi_mag_at(struct swf_cache *c, uint32_t index)
{
    return (struct swfi_magazine *)swfi_itable_node(&c->mags, index);
}

/* Put a magazine on the depot: the full, partial or empty stack, by how much it holds. */
static inline void swfi_depot_put(struct swf_cache *c, struct swfi_magazine *m)
{
    if (SWF_UNLIKELY(c->checks))
        swfi_mag_validate(c, m, "swfi_depot_put");
    if (m->pub.n == 0) {
        swfi_fetch_add_relaxed_64(&c->x_empty_mags, 1);
        swfi_istack_push(&c->empty, &c->mags, m->index);
        return;
    }
    swfi_fetch_add_relaxed_64(&c->x_depot_objs, m->pub.n);
    swfi_istack_push(m->pub.n == SWF_CACHE_MAGAZINE ? &c->full : &c->partial, &c->mags, m->index);
}

/* A magazine holding objects, full ones first; NULL when the depot has none. */
static inline struct swfi_magazine *swfi_depot_get_objects(struct swf_cache *c)
{
    uint32_t i = swfi_istack_pop(&c->full, &c->mags);
    if (i == UINT32_MAX && (i = swfi_istack_pop(&c->partial, &c->mags)) == UINT32_MAX)
        return NULL;
    struct swfi_magazine *m = swfi_mag_at(c, i);
    swfi_fetch_sub_relaxed_64(&c->x_depot_objs, m->pub.n);
    return m;
}

static inline struct swfi_magazine *swfi_depot_get_empty(struct swf_cache *c)
{
    uint32_t i = swfi_istack_pop(&c->empty, &c->mags);
    if (i == UINT32_MAX)
        return NULL;
    swfi_fetch_sub_relaxed_64(&c->x_empty_mags, 1);
    return swfi_mag_at(c, i);
}

/* ---- mag.c ----------------------------------------------------------------------------------- */

/* Add `want` empty magazines, rounded up to whole table blocks of 8, in one allocation: at most
 * 512, and no more than the table still has room for (refill_lock held). Returns how many it
 * made: 0 when the table is full or memory ran out. */
uint32_t swfi_mags_make(struct swf_cache *c, uint32_t want);

/* A chunk's own blocks of magazines (zeroed and prepared, `count` of them in a row at mem, a
 * whole number of table blocks), room for which swfi_itable_reserve made: adopted by the table,
 * put on the depot's empty stack in one push, and counted in the credit (refill_lock held). */
void swfi_mags_adopt(struct swf_cache *c, void *mem, uint32_t count);

/* Make magazines for n new objects, beyond the credit (refill_lock held): returns how many
 * objects the credit covers, n or fewer when the magazine table is full. */
size_t swfi_mags_cover(struct swf_cache *c, size_t n);

/* n objects were mapped: take their magazines from the credit (refill_lock held). */
void swfi_mags_promise(struct swf_cache *c, size_t n);

/* Make sure at least n empty magazines are on the depot (refill_lock held); best effort. */
void swfi_mags_reserve(struct swf_cache *c, uint64_t n);

/* Take `count` empty magazines into a private chain linked through x_next (index + 1), making
 * more if the depot runs dry (under refill_lock, which the caller holds when `locked`). Returns
 * how many it took: all, or fewer when the magazine table or memory ran out. */
size_t swfi_mags_take_chain(struct swf_cache *c, size_t count, bool locked,
                            struct swfi_magazine **head);

/* Give a private chain's magazines back to the depot. */
void swfi_mags_put_chain(struct swf_cache *c, struct swfi_magazine *head);

/* The next magazine of a private chain, or NULL. */
struct swfi_magazine *swfi_mags_chain_next(struct swf_cache *c, struct swfi_magazine *m);

/* ---- policy.c: where an allocation looks, and where a free puts ------------------------------ */

/* A bound thread's slow halves (ts its own state or a claimed shared one): its prev magazine,
 * then the depot, then uncarved objects, then the loose list. take returns NULL when nothing is
 * ready for the thread. */
void *swfi_take_bound(struct swf_cache *c, struct swfi_tstate *ts);
void swfi_put_bound(struct swf_cache *c, struct swfi_tstate *ts, void *obj);

/* A thread with no state: up to `want` objects from one depot magazine into dst (or carved, or
 * one from the loose list), returning how many; and n objects into as few magazines as have room
 * (or the loose list). O(1) per object. */
uint32_t swfi_take_unbound(struct swf_cache *c, void **dst, uint32_t want);
void swfi_put_unbound(struct swf_cache *c, void *const *objs, size_t n);

/* An object from any shared state but `held` (the one the caller holds, or NULL): where an
 * allocation looks before it gives up (NOWAIT) or maps memory (WAIT), so that objects freed by
 * threads without a state of their own are never stranded there. Without `wait`, NULL when none
 * has one or all are taken at this moment; with `wait` (WAIT only, after mapping failed, never
 * under refill_lock), it waits out each state's current claimer in short sleeps, so NULL means
 * none had one. */
void *swfi_take_shared(struct swf_cache *c, struct swfi_tstate *held, bool wait);

/* Count a successful allocation: in ts (a bound or claimed state), else in the cache. */
void swfi_count_alloc(struct swf_cache *c, struct swfi_tstate *ts, enum swf_alloc_mode mode);

/*
 * A cache's front end: the slow halves of the calls that cache.h's inline path could not serve,
 * each in its mode's order (above). Two, chosen once at create (c->front): swfi_front_thread
 * (per-thread magazines, shared states, the depot) and swfi_front_pcpu (per-CPU magazines, then
 * the depot). The public entry points (cache.c) check arguments, inject failures and move the
 * full checks' states, and call through it; none tests the mode.
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
    /* Whether a thread needs a state of its own for what grow promises (its magazines). */
    bool needs_state;
};

extern const struct swfi_front swfi_front_thread, swfi_front_pcpu;

/* ---- loose.c --------------------------------------------------------------------------------- */

/* Push one object (counted in x_loose_objs). */
void swfi_loose_push(struct swf_cache *c, void *obj);

/* Take the whole list (NULL when empty): a private chain, linked through the objects' first
 * words (swfi_loose_next). Its objects stay counted until swfi_loose_taken. */
void *swfi_loose_take_all(struct swf_cache *c);
void *swfi_loose_next(void *obj);

/* Put a taken chain (or what is left of it; NULL is nothing) back on the list. */
void swfi_loose_give_back(struct swf_cache *c, void *chain);

/* n objects of taken chains went elsewhere: uncount them. */
void swfi_loose_taken(struct swf_cache *c, uint64_t n);

/* Take the whole list: up to `room` objects into m (held by the caller), the rest spread into
 * empty magazines on the depot, and what finds none back on the list. Returns how many went into
 * m. Lock-free. */
uint32_t swfi_loose_fill(struct swf_cache *c, struct swfi_magazine *m, uint32_t room);

/* Put every loose object into magazines, making magazines as needed (refill_lock held). */
void swfi_loose_to_mags(struct swf_cache *c);

/* ---- tstate.c -------------------------------------------------------------------------------- */

/* Bind the calling thread to c from the spare pools, lock-free; NULL when the thread was never
 * prepared (swfi_tls_bindable) or a pool is dry. */
struct swfi_tstate *swfi_tstate_bind_nowait(struct swf_cache *c);

/* The calling thread's state, binding it first if need be, making thread states and magazines as
 * needed (refill_lock held; allocates). NULL only when memory or the tables ran out. */
struct swfi_tstate *swfi_tstate_bind_locked(struct swf_cache *c);

/* The cache's first use (a blocking path, refill_lock held): make the shared states and the
 * first magazines, unless they were made. 0 or ENOMEM (nothing made; the next use tries again).
 * Until then the cache holds no table block, and NOWAIT finds nothing (EAGAIN). */
int swfi_cache_first_use(struct swf_cache *c);

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

/* Give a thread state back: its magazines to the depot, itself to the free pool. Lock-free. */
void swfi_tstate_release(struct swf_cache *c, struct swfi_tstate *ts);

/* Keep spare empty magazines and free thread states around, and put loose objects back into
 * magazines (refill_lock held; best effort). */
void swfi_pools_replenish(struct swf_cache *c);

extern const struct swfi_owner_ops swfi_cache_owner_ops;

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

/* The slow halves (policy.c's pcpu_alloc, pcpu_take_locked and pcpu_free): an object from this
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

/* ---- chunk.c --------------------------------------------------------------------------------- */

/* How swfi_map_prepared prepares a mapping. */
struct swfi_prep {
    unsigned int lock;    /* mlock it */
    bool huge;            /* 2 MiB-aligned, MADV_HUGEPAGE */
    bool no_huge;         /* MADV_NOHUGEPAGE */
    unsigned int threads; /* populate with this many threads (1: this one) */
    uint64_t *huge_bytes; /* if not NULL: receives the bytes the kernel backed with huge pages */
};

/* Map, align and prepare (every page present and writable; locked if asked) `bytes` bytes.
 * Sets *err (ENOMEM, or mlock's error) and returns NULL on failure, having unmapped it. */
char *swfi_map_prepared(size_t bytes, size_t align, const struct swfi_prep *how, int *err);

/* Whether the system's transparent huge pages are "always" or "madvise". */
bool swfi_thp_available(void);

/* SWF_HUGE_PAGES_AUTO's choice for this process (chunk.c measures it at the first chunk that
 * would use huge pages): not measured yet, huge pages, or base pages. */
enum swfi_thp_choice { SWFI_THP_UNMEASURED = 0, SWFI_THP_HUGE = 1, SWFI_THP_BASE = 2 };
enum swfi_thp_choice swfi_thp_choice(void);

/* Map up to `want` new objects (at least one unless the limit forbids), with their magazines
 * made before any memory is mapped, and make them ready, uncarved, in chunks of at most 64 MiB of
 * objects. 0 when all `want` were added; ENOMEM (limit, system, tables) or mlock's error
 * otherwise, having mapped only memory that became ready objects (and their magazines), with the
 * reason in c->map_why. refill_lock held. */
int swfi_map_objects(struct swf_cache *c, size_t want);

/* Carve up to `want` uncarved objects into dst, the lowest address last (a magazine hands it
 * out first); returns how many, 0 when none is left. Lock-free: a compare-and-swap on a chunk's
 * bump index; no system call, no allocation, and only memory prepared at grow. */
uint32_t swfi_carve(struct swf_cache *c, void **dst, uint32_t want);

/* The uncarved objects (exact when no thread is inside the cache). Lock-free. */
uint64_t swfi_uncarved(struct swf_cache *c);

/* Whether `want` more objects could ever be mapped: 0, or ENOMEM at once (the limit, the
 * magazine table, memory and swap, or RLIMIT_AS forbids it) with the reason in c->map_why.
 * refill_lock held. */
int swfi_map_check(struct swf_cache *c, size_t want);

/* swfi_map_check's reason when the magazine table cannot take n more objects; c->map_room says
 * how many it can. */
extern const char swfi_table_why[];

/* Unmap every chunk (destroy). */
void swfi_chunks_free(struct swf_cache *c);

/* ---- chunkmap.c ------------------------------------------------------------------------------ */

/* Record a chunk's granules in the process-wide map (refill_lock held), and forget them (before
 * the chunk is unmapped). 0 or ENOMEM (no memory for a table, or an address beyond 2^48). */
int swfi_dmap_insert(struct swfi_chunk *ch);
void swfi_dmap_remove(const struct swfi_chunk *ch);

/* The chunk that holds address p, whatever its cache; NULL when none does. Lock-free. */
struct swfi_chunk *swfi_dmap_lookup(const void *p);

/* obj's index in ch, or ch->nobjs when obj is not the start of one of its objects. */
static inline size_t swfi_obj_index(const struct swf_cache *c, const struct swfi_chunk *ch,
                                    const void *obj)
{
    uint64_t q = ((uintptr_t)obj - (uintptr_t)ch->base) * c->owner.head.inv;
    q = (q >> c->owner.head.shift) | (q << ((64 - c->owner.head.shift) & 63));
    return q < ch->nobjs ? (size_t)q : ch->nobjs;
}

/* Full checks: the state byte of obj, or NULL when obj is not an object of c or c keeps none. */
uint8_t *swfi_obj_state(struct swf_cache *c, const void *obj);

/* ---- freecheck.c ----------------------------------------------------------------------------- */

/* Set the head's free mark key and stride inverse (create; after the owner has its id). */
void swfi_free_check_init(struct swf_cache *c);

/* Whether obj is an object of the chunk this thread last freed into and not marked free:
 * cache.h's test, the fast path's. */
static inline bool swfi_free_ok(const struct swf_cache *c, const void *obj)
{
    return swf_cache_free_ok_(&c->owner.head, obj);
}

/* Whether obj is an object of the chunk this thread last freed into (the bulk free's test: no
 * mark). */
static inline bool swfi_owned(const struct swf_cache *c, const void *obj)
{
    return swf_cache_owned_(&c->owner.head, obj);
}

/* Mark obj free (a single free, before the object goes anywhere another thread can take it), and
 * clear the mark (a single allocation): the first word, which every stride holds. */
static inline void swfi_mark_free(const struct swf_cache *c, void *obj)
{
    uint64_t m = c->owner.head.key ^ (uintptr_t)obj;
    memcpy(obj, &m, sizeof(m));
}

static inline void swfi_mark_clear(void *obj)
{
    uint64_t zero = 0;
    memcpy(obj, &zero, sizeof(zero));
}

/* The owner check of every free, in every build: abort naming fn unless obj is an object of c
 * (the map's chunk is c's, and obj is the start of one of its objects); then, when the full
 * checks are off, make the chunk the one this thread's fast path tests (binding.h). */
void swfi_owner_check(struct swf_cache *c, const char *fn, const void *obj);

/* A single free's check: swfi_owner_check, then, when obj carries the free mark, abort if obj is
 * in the magazines this free goes to: ts's (loaded or prev; none when ts is NULL), or, in the
 * per-CPU mode, this CPU's. Reads obj's first word only. */
void swfi_free_check(struct swf_cache *c, struct swfi_tstate *ts, const char *fn, void *obj);

/* Full checks: move obj from state `from` to `to` or abort naming fn. From OBJ_FREE, an object
 * in state OBJ_POISONED moves too, once swfi_poison_check found its poison whole. */
void swfi_debug_transition_slow(struct swf_cache *c, const char *fn, void *obj, uint8_t from,
                                uint8_t to);

/* Full checks: a single free (or a deferred one's end): move obj from `from` to OBJ_POISONED, or
 * abort naming fn, and fill its bytes from 8 to the stride with POISON_BYTE. */
void swfi_debug_free_slow(struct swf_cache *c, const char *fn, void *obj, uint8_t from);

static inline void swfi_debug_transition(struct swf_cache *c, const char *fn, void *obj,
                                         uint8_t from, uint8_t to)
{
    if (SWF_UNLIKELY(c->checks))
        swfi_debug_transition_slow(c, fn, obj, from, to);
}

static inline void swfi_debug_free(struct swf_cache *c, const char *fn, void *obj, uint8_t from)
{
    if (SWF_UNLIKELY(c->checks))
        swfi_debug_free_slow(c, fn, obj, from);
}

/* ---- stats.c --------------------------------------------------------------------------------- */

/* Sum the counters into *out: swf_cache_stats without its argument checks. Lock-free. Returns
 * false when the per-CPU magazines kept moving while it read them (swfi_pcpu_counts): a thread
 * is inside the cache. */
bool swfi_cache_stats(struct swf_cache *c, struct swf_cache_stats *out);

/* ---- validate.c ------------------------------------------------------------------------------ */

/* Full checks (c->checks): abort naming fn unless the conservation equations above hold and
 * every free object is where its state byte says. Only where no thread is inside the cache
 * (destroy); O(capacity). */
void swfi_cache_validate(struct swf_cache *c, const char *fn);

#endif /* SWF_LIB_CACHE_INTERNAL_H */
