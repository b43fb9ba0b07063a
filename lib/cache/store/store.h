/*
 * lib/cache/store/store.h - where the cache's free objects lie, knowing no mode: magazines and
 * the depot's stacks (mag.c, and inline below), the loose list (loose.c), chunks and carving
 * (chunk.c), the map from address to chunk (chunkmap.c), and the checks every free makes with
 * the free mark (freecheck.c). The cache's struct is here, the lowest room that reads it; the
 * front ends (front/front.h) and the entry points (cache_internal.h) are above, and nothing here
 * uses them. lib/cache/cache_internal.h says where a free object can be and what is conserved.
 */
#ifndef SWF_LIB_CACHE_STORE_H
#define SWF_LIB_CACHE_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ck_epoch.h>

#include "base/rseq.h" /* before cache.h: a SWF_RSEQ_DELAY build's delay reaches its sequences */
#include "sweepfill/cache.h"

#include "base/atomic.h"
#include "base/istack.h"
#include "base/owner.h"
#include "base/util.h"

#define MAG_BLOCK_SHIFT 3         /* 8 magazines (4,288 bytes) per table block */
#ifndef SWF_MAG_BLOCKS_MAX        /* a test build lowers it (test/unit/cache_limits.c) */
#define SWF_MAG_BLOCKS_MAX 524288 /* 4M magazines: 251M free objects at most */
#endif
#define MAG_BLOCKS_MAX SWF_MAG_BLOCKS_MAX
#define SHARED_STATES  8 /* thread states that threads without one claim for a call (front.h) */
#define CHUNK_ALIGN    ((size_t)64 << 10)

/* An object's full checks' state. OBJ_POISONED is free, with its bytes from 8 to the stride
 * holding POISON_BYTE (freecheck.c); OBJ_FREE is free and unpoisoned (never allocated, or given
 * back by a bulk free, which does not touch the objects). */
enum obj_state { OBJ_FREE = 0, OBJ_ALLOC = 1, OBJ_DEFERRED = 2, OBJ_POISONED = 3 };
#define POISON_BYTE 0x6b /* slub's POISON_FREE */

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

static inline struct swfi_magazine *swfi_mag_of(struct swf_magazine_ *m)
{
    return (struct swfi_magazine *)(void *)m; /* pub is the first member */
}

/* The failure injection's state (cache/failslab.h, above: what works on it), defined here because
 * the cache embeds it. */
struct swfi_failslab_block;
struct swfi_failslab_state {
    struct swfi_failslab_block *x_cur; /* NULL: no injection (the fast path's only check) */
    struct swfi_failslab_block *last;  /* the newest block installed; writers only */
};

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
    const struct swfi_front
        *front; /* the mode's (front/thread.c, front/pcpu.c), chosen at create */
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
    uint32_t x_users[2]; /* features and registries alive on the cache: one count per kind of
                          * user (cache/users.h; cache.c checks the number) */
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

#endif /* SWF_LIB_CACHE_STORE_H */
