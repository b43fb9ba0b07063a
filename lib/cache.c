/*
 * lib/cache.c - the lock-free object cache.
 *
 * Where a free object can be, and who may touch it there:
 *
 *   1. in a magazine loaded in a thread state (ts->loaded, ts->prev): only the thread bound to
 *      that state touches it, with plain loads and stores;
 *   2. in a full magazine on the depot's `full` stack: nobody, until a pop (acquire) hands the
 *      magazine to one thread;
 *   3. on the loose list (x_loose), linked through its first word: nobody, until an exchange
 *      (acquire) hands the whole list to one thread;
 *   4. in a magazine queued for a deferred free: nobody, until its grace period ends and the
 *      epoch callback puts the magazine on `full`.
 *
 * Every move between these places is a release (push, store) paired with an acquire (pop,
 * exchange), so whatever the freeing thread wrote happens-before the next allocation (cache.h's
 * ordering promise). Magazines and thread states live in tables that grow but never shrink while
 * the cache lives (istack.h), which is what lets a pop read a node another thread may be
 * reusing.
 *
 * Conservation (exact when no thread is inside the cache):
 *     capacity == alive + ready
 *     ready    == sum(ts->loaded->n + ts->prev->n) + x_depot_objs + x_loose_objs
 *     alive    == allocations - frees   (objects awaiting a grace period count as alive)
 * The unit and stress tests check the first and the third through swf_cache_stats.
 *
 * The NOWAIT path: magazine pop (no atomics) -> swap with prev -> exchange prev for a full depot
 * magazine (two CAS) -> refill from the loose list (one exchange) -> EAGAIN. No lock, no system
 * call, and only prepared memory: chunks are pre-faulted by map_chunk before any of their objects
 * enters a magazine.
 *
 * The blocking paths (WAIT, grow, set_limit, creating magazines or thread states) serialise on
 * refill_lock: mapping memory and growing tables happen there and nowhere else.
 */
#include "sweepfill/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ck_epoch.h>

#include "atomic.h"
#include "failslab.h"
#include "istack.h"
#include "thread.h"
#include "tsan.h"
#include "util.h"

#define MAG_CAP          SWF_CACHE_MAGAZINE
#define MAG_BLOCK_SHIFT  8     /* 256 magazines (130 KiB) per table block */
#define MAG_BLOCKS_MAX   16384 /* 4M magazines: 251M free objects at most */
#define TS_BLOCK_SHIFT   6     /* 64 thread states per block */
#define TS_BLOCKS_MAX    64    /* 4,096 threads bound to one cache at once */
#define SPARE_EMPTY_MAGS 16    /* kept on the empty stack by the blocking paths */
#define CHUNK_ALIGN      ((size_t)64 << 10)
#define WAIT_BATCH_BYTES ((size_t)16 << 20)
#define DMAP_L2_BITS     16 /* debug map: 64 KiB granules, 4 GiB per second-level table */
#define DMAP_L1_SIZE     ((size_t)1 << 16)

enum obj_state { OBJ_FREE = 0, OBJ_ALLOC = 1, OBJ_DEFERRED = 2 };

struct swf_mag {
    uint32_t x_next; /* istack link */
    uint32_t index;
    uint32_t n; /* objects held; owned by whoever holds the magazine */
    uint32_t unused;
    ck_epoch_entry_t epoch_entry; /* while queued for a deferred free */
    struct swf_cache *cache;
    void *epoch; /* the ck_epoch_t of a deferred free, for TSan's benefit (tsan.h) */
    void *obj[MAG_CAP];
};

struct swf_tstate {
    uint32_t x_next; /* istack link while free */
    uint32_t index;
    struct swf_mag *loaded; /* the bound thread's magazines */
    struct swf_mag *prev;
    /* Single writer (the bound thread), relaxed readers (stats). Cumulative across owners. */
    uint64_t x_allocs_nowait;
    uint64_t x_allocs_wait;
    uint64_t x_fails_nowait;
    uint64_t x_frees;
};

struct swf_chunk {
    struct swf_chunk *next;
    char *base;
    size_t map_bytes;
    size_t nobjs;
    uint8_t *state; /* debug builds: one enum obj_state per object */
};

struct swf_cache {
    struct swf_tls_owner owner;
    size_t object_size;
    size_t align;
    size_t stride;
    char name[64];

    /* Each hot shared word on its own cache line. */
    struct swf_istack full __attribute__((aligned(64)));
    uint64_t x_depot_objs;
    struct swf_istack empty __attribute__((aligned(64)));
    uint64_t x_empty_mags;
    void *x_loose __attribute__((aligned(64)));
    uint64_t x_loose_objs;
    struct swf_istack ts_free __attribute__((aligned(64)));
    struct swf_failslab_state fs __attribute__((aligned(64)));

    /* Counters for work done without a thread state (and for deferred frees). */
    uint64_t x_allocs_nowait __attribute__((aligned(64)));
    uint64_t x_allocs_wait;
    uint64_t x_fails_nowait;
    uint64_t x_fails_injected;
    uint64_t x_fails_wait;
    uint64_t x_frees;
    uint64_t x_deferred_queued;
    uint64_t x_deferred_done;

    struct swf_itable mags;
    struct swf_itable tstates;

    pthread_mutex_t refill_lock;
    /* Written under refill_lock; the x_ ones are also read by stats. */
    struct swf_chunk *chunks;
    uint64_t x_capacity;
    uint64_t x_limit;
    uint64_t x_bytes_mapped;
    uint64_t x_chunks;
    struct swf_chunk ***dmap; /* debug builds: granule -> chunk */
};

void swf_die(const char *function, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "sweepfill: %s: ", function);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

static inline struct swf_mag *mag_at(struct swf_cache *c, uint32_t index)
{
    return swf_itable_node(&c->mags, index);
}

/* ---- debug-build object states ------------------------------------------------------------ */

static struct swf_chunk *dmap_lookup(struct swf_cache *c, const void *p)
{
    uintptr_t a = (uintptr_t)p;
    size_t l1 = a >> 32;
    if (l1 >= DMAP_L1_SIZE)
        return NULL;
    struct swf_chunk **l2 = swf_load_acquire_ptr((void *const *)&c->dmap[l1]);
    if (l2 == NULL)
        return NULL;
    /* Acquire pairs with dmap_insert's release: the chunk's fields are initialised. */
    return swf_load_acquire_ptr((void *const *)&l2[(a >> DMAP_L2_BITS) & 0xffff]);
}

static int dmap_insert(struct swf_cache *c, struct swf_chunk *ch)
{
    for (uintptr_t a = (uintptr_t)ch->base; a < (uintptr_t)ch->base + ch->map_bytes;
         a += CHUNK_ALIGN) {
        struct swf_chunk **l2 = c->dmap[a >> 32];
        if (l2 == NULL) {
            l2 = calloc((size_t)1 << DMAP_L2_BITS, sizeof(*l2));
            if (l2 == NULL)
                return ENOMEM;
            swf_store_release_ptr((void **)&c->dmap[a >> 32], l2);
        }
        swf_store_release_ptr((void **)&l2[(a >> DMAP_L2_BITS) & 0xffff], ch);
    }
    return 0;
}

/* The state byte of obj, or NULL when obj is not an object of c. */
static uint8_t *obj_state(struct swf_cache *c, const void *obj)
{
    struct swf_chunk *ch = dmap_lookup(c, obj);
    if (ch == NULL || (const char *)obj < ch->base)
        return NULL;
    size_t off = (size_t)((const char *)obj - ch->base);
    if (off % c->stride != 0 || off / c->stride >= ch->nobjs)
        return NULL;
    return &ch->state[off / c->stride];
}

static void debug_transition(struct swf_cache *c, const char *fn, void *obj, uint8_t from,
                             uint8_t to)
{
    if (!SWF_DEBUG)
        return;
    uint8_t *st = obj_state(c, obj);
    if (st == NULL)
        swf_die(fn, "%p was not allocated from cache '%s'", obj, c->name);
    uint8_t seen = from;
    if (swf_cas_relaxed_8(st, &seen, to))
        return;
    if (seen == OBJ_FREE)
        swf_die(fn, "double free of %p (cache '%s')", obj, c->name);
    if (seen == OBJ_DEFERRED)
        swf_die(fn, "%p is already queued for a deferred free (cache '%s')", obj, c->name);
    swf_die(fn, "internal error: object %p of cache '%s' in state %u, expected %u", obj, c->name,
            seen, from);
}

/* ---- the depot ---------------------------------------------------------------------------- */

/* Put a magazine on the depot: full stack if it holds anything, else the empty stack. */
static void depot_put(struct swf_cache *c, struct swf_mag *m)
{
    if (m->n > 0) {
        swf_fetch_add_relaxed_64(&c->x_depot_objs, m->n);
        swf_istack_push(&c->full, &c->mags, m->index);
    } else {
        swf_fetch_add_relaxed_64(&c->x_empty_mags, 1);
        swf_istack_push(&c->empty, &c->mags, m->index);
    }
}

static struct swf_mag *depot_get_full(struct swf_cache *c)
{
    uint32_t i = swf_istack_pop(&c->full, &c->mags);
    if (i == UINT32_MAX)
        return NULL;
    struct swf_mag *m = mag_at(c, i);
    swf_fetch_sub_relaxed_64(&c->x_depot_objs, m->n);
    return m;
}

static struct swf_mag *depot_get_empty(struct swf_cache *c)
{
    uint32_t i = swf_istack_pop(&c->empty, &c->mags);
    if (i == UINT32_MAX)
        return NULL;
    swf_fetch_sub_relaxed_64(&c->x_empty_mags, 1);
    return mag_at(c, i);
}

/* ---- the loose list ----------------------------------------------------------------------- */

/* Push a chain first..last (linked through first words) on the loose list. */
static void loose_push_chain(struct swf_cache *c, void *first, void *last)
{
    void *head = swf_load_relaxed_ptr(&c->x_loose);
    do {
        swf_store_relaxed_ptr((void **)last, head);
        /* Release: the chain's links and the freeing threads' writes reach the next taker. */
    } while (!swf_cas_release_ptr(&c->x_loose, &head, first));
}

/* Push back the rest of a chain taken from the loose list (its tail found by walking it: the
 * chain is ours alone until the push). */
static void loose_push_rest(struct swf_cache *c, void *rest)
{
    void *last = rest;
    for (void *next; (next = swf_load_relaxed_ptr((void *const *)last)) != NULL;)
        last = next;
    loose_push_chain(c, rest, last);
}

static void loose_push(struct swf_cache *c, void *obj)
{
    swf_fetch_add_relaxed_64(&c->x_loose_objs, 1);
    loose_push_chain(c, obj, obj);
}

/* Move up to `room` loose objects into m. Takes the whole list in one exchange (ABA-free) and
 * pushes back what does not fit. Returns how many moved. */
static uint32_t loose_take(struct swf_cache *c, struct swf_mag *m, uint32_t room)
{
    if (swf_load_relaxed_ptr(&c->x_loose) == NULL)
        return 0;
    /* Acquire pairs with loose_push_chain's release CAS. */
    void *chain = swf_exchange_acquire_ptr(&c->x_loose, NULL);
    uint32_t moved = 0;
    while (chain != NULL && moved < room) {
        m->obj[m->n++] = chain;
        chain = swf_load_relaxed_ptr((void *const *)chain);
        moved++;
    }
    if (chain != NULL)
        loose_push_rest(c, chain);
    swf_fetch_sub_relaxed_64(&c->x_loose_objs, moved);
    return moved;
}

/* ---- thread states ------------------------------------------------------------------------ */

static void tstate_release(struct swf_tls_owner *o, void *state)
{
    struct swf_cache *c = SWF_CONTAINER_OF(o, struct swf_cache, owner);
    struct swf_tstate *ts = state;
    depot_put(c, ts->loaded);
    depot_put(c, ts->prev);
    ts->loaded = ts->prev = NULL;
    swf_istack_push(&c->ts_free, &c->tstates, ts->index);
}

/* Give the calling thread a state of its own: a free thread state and two empty magazines, all
 * popped lock-free. NULL when either pool is dry (the caller then works on the depot directly). */
static struct swf_tstate *tstate_bind(struct swf_cache *c)
{
    uint32_t i = swf_istack_pop(&c->ts_free, &c->tstates);
    if (i == UINT32_MAX)
        return NULL;
    struct swf_tstate *ts = swf_itable_node(&c->tstates, i);
    ts->loaded = depot_get_empty(c);
    ts->prev = ts->loaded ? depot_get_empty(c) : NULL;
    if (ts->prev == NULL) {
        if (ts->loaded != NULL)
            depot_put(c, ts->loaded);
        ts->loaded = NULL;
        swf_istack_push(&c->ts_free, &c->tstates, i);
        return NULL;
    }
    swf_tls_bind(&c->owner, ts);
    return ts;
}

/* ---- growing (refill_lock held) ----------------------------------------------------------- */

/* Add a block of magazines to the empty stack. */
static int make_mags(struct swf_cache *c)
{
    uint32_t first = swf_itable_grow(&c->mags);
    if (first == UINT32_MAX)
        return ENOMEM;
    for (uint32_t i = first; i < first + (1u << MAG_BLOCK_SHIFT); i++) {
        struct swf_mag *m = mag_at(c, i);
        m->index = i;
        m->cache = c;
        depot_put(c, m);
    }
    return 0;
}

static int make_tstates(struct swf_cache *c)
{
    uint32_t first = swf_itable_grow(&c->tstates);
    if (first == UINT32_MAX)
        return ENOMEM;
    for (uint32_t i = first; i < first + (1u << TS_BLOCK_SHIFT); i++) {
        struct swf_tstate *ts = swf_itable_node(&c->tstates, i);
        ts->index = i;
        swf_istack_push(&c->ts_free, &c->tstates, i);
    }
    return 0;
}

/* Keep spare empty magazines and free thread states around, so that the lock-free paths rarely
 * find either pool dry. Best effort: running out only sends frees to the loose list. */
static void replenish_pools(struct swf_cache *c)
{
    if (swf_load_relaxed_64(&c->x_empty_mags) < SPARE_EMPTY_MAGS)
        (void)make_mags(c);
    if ((uint32_t)swf_load_relaxed_64(&c->ts_free.x_head) == 0)
        (void)make_tstates(c);
}

/* Map a pre-faulted, CHUNK_ALIGN-aligned region of at least `bytes` bytes. */
static char *map_prefaulted(size_t bytes)
{
    size_t span = bytes + CHUNK_ALIGN;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *base = (char *)(((uintptr_t)raw + CHUNK_ALIGN - 1) & ~(uintptr_t)(CHUNK_ALIGN - 1));
    if (base > raw)
        munmap(raw, (size_t)(base - raw));
    if (raw + span > base + bytes)
        munmap(base + bytes, (size_t)(raw + span - (base + bytes)));
    /* First touch here, outside any read-side section, so that NOWAIT never faults. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < bytes; off += page)
        ((volatile char *)base)[off] = 0;
    return base;
}

/* Map up to `want` new objects (at least one unless the limit forbids) and put them on the full
 * stack in magazines. Returns 0 when all `want` were added, ENOMEM otherwise. */
static int map_objects(struct swf_cache *c, size_t want)
{
    uint64_t capacity = swf_load_relaxed_64(&c->x_capacity);
    uint64_t limit = swf_load_relaxed_64(&c->x_limit);
    size_t allowed = want;
    if (limit != 0)
        allowed = capacity >= limit                   ? 0
                  : (size_t)(limit - capacity) < want ? (size_t)(limit - capacity)
                                                      : want;
    if (allowed == 0)
        return ENOMEM;

    size_t bytes;
    if (swf_mul_overflows(allowed, c->stride, &bytes) || !swf_round_up(bytes, CHUNK_ALIGN, &bytes))
        return ENOMEM;
    struct swf_chunk *ch = calloc(1, sizeof(*ch));
    if (ch == NULL)
        return ENOMEM;
    ch->base = map_prefaulted(bytes);
    if (ch->base == NULL) {
        free(ch);
        return ENOMEM;
    }
    ch->map_bytes = bytes;
    ch->nobjs = bytes / c->stride;
    if (limit != 0 && ch->nobjs > limit - capacity)
        ch->nobjs = (size_t)(limit - capacity);
    if (SWF_DEBUG) {
        ch->state = calloc(ch->nobjs, 1);
        if (ch->state == NULL || dmap_insert(c, ch) != 0) {
            munmap(ch->base, ch->map_bytes);
            free(ch->state);
            free(ch);
            return ENOMEM;
        }
    }
    ch->next = c->chunks;
    c->chunks = ch;
    swf_store_relaxed_64(&c->x_chunks, swf_load_relaxed_64(&c->x_chunks) + 1);
    swf_store_relaxed_64(&c->x_bytes_mapped, swf_load_relaxed_64(&c->x_bytes_mapped) + bytes);

    /* Carve into magazines. The capacity grows by what actually reaches the depot. */
    size_t placed = 0;
    while (placed < ch->nobjs) {
        struct swf_mag *m = depot_get_empty(c);
        if (m == NULL && (make_mags(c) != 0 || (m = depot_get_empty(c)) == NULL))
            break;
        while (m->n < MAG_CAP && placed < ch->nobjs)
            m->obj[m->n++] = ch->base + placed++ * c->stride;
        swf_store_relaxed_64(&c->x_capacity, swf_load_relaxed_64(&c->x_capacity) + m->n);
        depot_put(c, m);
    }
    return placed >= want ? 0 : ENOMEM;
}

/* Objects the calling thread could take without mapping: its magazines and the shared pools. */
static uint64_t reachable_objects(struct swf_cache *c)
{
    struct swf_tstate *ts = swf_tls_get(&c->owner);
    uint64_t mine = ts ? ts->loaded->n + ts->prev->n : 0;
    return mine + swf_load_relaxed_64(&c->x_depot_objs) + swf_load_relaxed_64(&c->x_loose_objs);
}

static size_t wait_batch(struct swf_cache *c)
{
    size_t batch = (size_t)(swf_load_relaxed_64(&c->x_capacity) / 4);
    size_t max = WAIT_BATCH_BYTES / c->stride;
    if (batch > max)
        batch = max;
    return batch < MAG_CAP ? MAG_CAP : batch;
}

/* ---- allocation ----------------------------------------------------------------------------- */

/* Take an object for a thread with a state: prev, then the depot, then the loose list. */
static void *take_bound(struct swf_cache *c, struct swf_tstate *ts)
{
    if (ts->loaded->n == 0) {
        struct swf_mag *t = ts->loaded;
        ts->loaded = ts->prev;
        ts->prev = t;
    }
    if (ts->loaded->n == 0) {
        struct swf_mag *full = depot_get_full(c);
        if (full != NULL) {
            /* Both ours are empty: keep one as prev, give the other back. */
            depot_put(c, ts->prev);
            ts->prev = ts->loaded;
            ts->loaded = full;
        } else if (loose_take(c, ts->loaded, MAG_CAP) == 0) {
            return NULL;
        }
    }
    return ts->loaded->obj[--ts->loaded->n];
}

/* Take an object for a thread without a state: straight from the depot or the loose list. */
static void *take_unbound(struct swf_cache *c)
{
    struct swf_mag *m = depot_get_full(c);
    if (m != NULL) {
        void *obj = m->obj[--m->n];
        depot_put(c, m);
        return obj;
    }
    void *chain =
        swf_load_relaxed_ptr(&c->x_loose) ? swf_exchange_acquire_ptr(&c->x_loose, NULL) : NULL;
    if (chain == NULL)
        return NULL;
    void *rest = swf_load_relaxed_ptr((void *const *)chain);
    if (rest != NULL)
        loose_push_rest(c, rest);
    swf_fetch_sub_relaxed_64(&c->x_loose_objs, 1);
    return chain;
}

static void *take_any(struct swf_cache *c, struct swf_tstate **tsp)
{
    if (*tsp == NULL)
        *tsp = tstate_bind(c);
    return *tsp ? take_bound(c, *tsp) : take_unbound(c);
}

static void count_alloc(struct swf_cache *c, struct swf_tstate *ts, enum swf_alloc_mode mode)
{
    if (ts != NULL)
        swf_counter_add(mode == SWF_NOWAIT ? &ts->x_allocs_nowait : &ts->x_allocs_wait, 1);
    else
        swf_fetch_add_relaxed_64(mode == SWF_NOWAIT ? &c->x_allocs_nowait : &c->x_allocs_wait, 1);
}

static void *alloc_wait(struct swf_cache *c, struct swf_tstate *ts)
{
    pthread_mutex_lock(&c->refill_lock);
    replenish_pools(c);
    void *obj = take_any(c, &ts);
    if (obj == NULL) {
        (void)map_objects(c, wait_batch(c)); /* a partial success still serves this call */
        obj = take_any(c, &ts);
    }
    pthread_mutex_unlock(&c->refill_lock);
    if (obj == NULL) {
        swf_fetch_add_relaxed_64(&c->x_fails_wait, 1);
        errno = ENOMEM;
        return NULL;
    }
    count_alloc(c, ts, SWF_WAIT);
    debug_transition(c, "swf_cache_alloc", obj, OBJ_FREE, OBJ_ALLOC);
    return obj;
}

/* Everything but the common case: argument errors, injection, WAIT, and empty magazines. */
static __attribute__((noinline)) void *alloc_slow(struct swf_cache *c, enum swf_alloc_mode mode)
{
    if (SWF_UNLIKELY(c == NULL || (mode != SWF_NOWAIT && mode != SWF_WAIT))) {
        errno = EINVAL;
        return NULL;
    }
    if (mode == SWF_NOWAIT && swf_failslab_should_fail(&c->fs)) {
        swf_fetch_add_relaxed_64(&c->x_fails_injected, 1);
        errno = EAGAIN;
        return NULL;
    }
    struct swf_tstate *ts = swf_tls_get(&c->owner);
    void *obj = take_any(c, &ts);
    if (obj != NULL) {
        count_alloc(c, ts, mode);
        debug_transition(c, "swf_cache_alloc", obj, OBJ_FREE, OBJ_ALLOC);
        return obj;
    }
    if (mode == SWF_WAIT)
        return alloc_wait(c, ts);
    if (ts != NULL)
        swf_counter_add(&ts->x_fails_nowait, 1);
    else
        swf_fetch_add_relaxed_64(&c->x_fails_nowait, 1);
    errno = EAGAIN;
    return NULL;
}

void *swf_cache_alloc(struct swf_cache *c, enum swf_alloc_mode mode)
{
    /* The common case, kept small enough to need no stack frame: a NOWAIT allocation, no
     * injection configured, and an object in this thread's loaded magazine. */
    struct swf_tstate *ts;
    if (SWF_LIKELY(c != NULL && mode == SWF_NOWAIT && !swf_load_relaxed_32(&c->fs.x_on) &&
                   (ts = swf_tls_get(&c->owner)) != NULL && ts->loaded->n > 0)) {
        void *obj = ts->loaded->obj[--ts->loaded->n];
        swf_counter_add(&ts->x_allocs_nowait, 1);
        debug_transition(c, "swf_cache_alloc", obj, OBJ_FREE, OBJ_ALLOC);
        return obj;
    }
    return alloc_slow(c, mode);
}

/* ---- free ----------------------------------------------------------------------------------- */

static __attribute__((noinline)) int free_slow(struct swf_cache *c, void *obj)
{
    if (c == NULL)
        return EINVAL;
    if (obj == NULL)
        return 0;
    debug_transition(c, "swf_cache_free", obj, OBJ_ALLOC, OBJ_FREE);
    struct swf_tstate *ts = swf_tls_get(&c->owner);
    if (ts == NULL)
        ts = tstate_bind(c);
    if (ts == NULL) {
        loose_push(c, obj);
        swf_fetch_add_relaxed_64(&c->x_frees, 1);
        return 0;
    }
    swf_counter_add(&ts->x_frees, 1);
    if (ts->loaded->n == MAG_CAP) {
        if (ts->prev->n < MAG_CAP) {
            struct swf_mag *t = ts->loaded;
            ts->loaded = ts->prev;
            ts->prev = t;
        } else {
            struct swf_mag *e = depot_get_empty(c);
            if (e == NULL) {
                loose_push(c, obj);
                return 0;
            }
            depot_put(c, ts->prev);
            ts->prev = ts->loaded;
            ts->loaded = e;
        }
    }
    ts->loaded->obj[ts->loaded->n++] = obj;
    return 0;
}

int swf_cache_free(struct swf_cache *c, void *obj)
{
    /* The common case: room in this thread's loaded magazine. */
    struct swf_tstate *ts;
    if (SWF_LIKELY(c != NULL && obj != NULL && (ts = swf_tls_get(&c->owner)) != NULL &&
                   ts->loaded->n < MAG_CAP)) {
        debug_transition(c, "swf_cache_free", obj, OBJ_ALLOC, OBJ_FREE);
        ts->loaded->obj[ts->loaded->n++] = obj;
        swf_counter_add(&ts->x_frees, 1);
        return 0;
    }
    return free_slow(c, obj);
}

/* ---- deferred free ----------------------------------------------------------------------------
 */

static void deferred_done(ck_epoch_entry_t *e)
{
    struct swf_mag *m = SWF_CONTAINER_OF(e, struct swf_mag, epoch_entry);
    struct swf_cache *c = m->cache;
    uint32_t n = m->n;
    swf_tsan_acquire(m->epoch); /* the grace period is over: sections that saw these objects
                                   ended before this point */
    for (uint32_t i = 0; i < n; i++)
        debug_transition(c, "swf_cache_free_deferred", m->obj[i], OBJ_DEFERRED, OBJ_FREE);
    depot_put(c, m);
    swf_fetch_add_relaxed_64(&c->x_deferred_done, n);
}

/* Take `count` empty magazines into a private chain (linked through x_next as index + 1). */
static int take_empty_chain(struct swf_cache *c, size_t count, struct swf_mag **head)
{
    *head = NULL;
    for (size_t i = 0; i < count; i++) {
        struct swf_mag *m = depot_get_empty(c);
        if (m == NULL) {
            pthread_mutex_lock(&c->refill_lock);
            int err = make_mags(c);
            pthread_mutex_unlock(&c->refill_lock);
            m = err == 0 ? depot_get_empty(c) : NULL;
        }
        if (m == NULL) {
            while (*head != NULL) {
                struct swf_mag *h = *head;
                uint32_t link = swf_load_relaxed_32(&h->x_next);
                *head = link ? mag_at(c, link - 1) : NULL;
                depot_put(c, h);
            }
            return ENOMEM;
        }
        swf_store_relaxed_32(&m->x_next, *head ? (*head)->index + 1 : 0);
        *head = m;
    }
    return 0;
}

int swf_cache_free_deferred(struct swf_cache *c, ck_epoch_record_t *rec, void *const *objs,
                            size_t n)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(rec == NULL, EINVAL, "rec is NULL");
    SWF_CHECK_ARG(objs == NULL && n > 0, EINVAL, "objs is NULL and n is not 0");
    struct swf_mag *chain;
    if (take_empty_chain(c, (n + MAG_CAP - 1) / MAG_CAP, &chain) != 0)
        return ENOMEM;
    swf_fetch_add_relaxed_64(&c->x_deferred_queued, n);
    size_t done = 0;
    while (chain != NULL) {
        struct swf_mag *m = chain;
        uint32_t link = swf_load_relaxed_32(&m->x_next);
        chain = link ? mag_at(c, link - 1) : NULL;
        while (m->n < MAG_CAP && done < n) {
            debug_transition(c, "swf_cache_free_deferred", objs[done], OBJ_ALLOC, OBJ_DEFERRED);
            m->obj[m->n++] = objs[done++];
        }
        m->epoch = rec->global;
        ck_epoch_call(rec, &m->epoch_entry, deferred_done);
    }
    return 0;
}

int swf_cache_quiesce(struct swf_cache *c, ck_epoch_record_t *rec)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(rec == NULL, EINVAL, "rec is NULL");
    ck_epoch_barrier_wait(rec, swf_epoch_wait_yield, NULL);
    return 0;
}

/* ---- the blocking entry points -----------------------------------------------------------------
 */

int swf_cache_grow(struct swf_cache *c, size_t n)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    int err = 0;
    pthread_mutex_lock(&c->refill_lock);
    replenish_pools(c);
    uint64_t have = reachable_objects(c);
    if (have < n)
        err = map_objects(c, (size_t)(n - have));
    replenish_pools(c);
    pthread_mutex_unlock(&c->refill_lock);
    return err;
}

int swf_cache_flush(struct swf_cache *c)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    struct swf_tstate *ts = swf_tls_unbind(&c->owner);
    if (ts != NULL)
        tstate_release(&c->owner, ts);
    return 0;
}

int swf_cache_set_limit(struct swf_cache *c, size_t limit)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    pthread_mutex_lock(&c->refill_lock);
    swf_store_relaxed_64(&c->x_limit, limit);
    pthread_mutex_unlock(&c->refill_lock);
    return 0;
}

int swf_cache_set_failslab(struct swf_cache *c, const struct swf_failslab *fs)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(fs != NULL && fs->probability > 100, EINVAL, "fs->probability is above 100");
    SWF_CHECK_ARG(fs != NULL && fs->times < -1, EINVAL, "fs->times is below -1");
    pthread_mutex_lock(&c->refill_lock);
    swf_failslab_set(&c->fs, fs);
    pthread_mutex_unlock(&c->refill_lock);
    return 0;
}

int swf_cache_stats(struct swf_cache *c, struct swf_cache_stats *out)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(out == NULL, EINVAL, "out is NULL");
    struct swf_cache_stats s = {0};
    uint32_t nts = swf_load_acquire_32(&c->tstates.x_count);
    for (uint32_t i = 0; i < nts; i++) {
        struct swf_tstate *ts = swf_itable_node(&c->tstates, i);
        s.allocs_nowait += swf_load_relaxed_64(&ts->x_allocs_nowait);
        s.allocs_wait += swf_load_relaxed_64(&ts->x_allocs_wait);
        s.fails_nowait += swf_load_relaxed_64(&ts->x_fails_nowait);
        s.frees += swf_load_relaxed_64(&ts->x_frees);
    }
    uint64_t done = swf_load_relaxed_64(&c->x_deferred_done);
    s.allocs_nowait += swf_load_relaxed_64(&c->x_allocs_nowait);
    s.allocs_wait += swf_load_relaxed_64(&c->x_allocs_wait);
    s.fails_nowait += swf_load_relaxed_64(&c->x_fails_nowait);
    s.fails_injected = swf_load_relaxed_64(&c->x_fails_injected);
    s.fails_wait = swf_load_relaxed_64(&c->x_fails_wait);
    s.frees += swf_load_relaxed_64(&c->x_frees) + done;
    s.deferred_queued = swf_load_relaxed_64(&c->x_deferred_queued);
    s.deferred_pending = s.deferred_queued - done;
    s.alive = s.allocs_nowait + s.allocs_wait - s.frees;
    s.capacity = swf_load_relaxed_64(&c->x_capacity);
    s.ready = s.capacity - s.alive;
    s.limit = swf_load_relaxed_64(&c->x_limit);
    s.bytes_mapped = swf_load_relaxed_64(&c->x_bytes_mapped);
    s.chunks = swf_load_relaxed_64(&c->x_chunks);
    s.object_size = c->object_size;
    s.stride = c->stride;
    *out = s;
    return 0;
}

/* ---- create and destroy ------------------------------------------------------------------------
 */

static size_t natural_align(size_t size)
{
    size_t a = size & (~size + 1); /* lowest set bit */
    if (a < 8)
        a = 8;
    return a > 16 ? 16 : a;
}

static void cache_free_memory(struct swf_cache *c)
{
    for (struct swf_chunk *ch = c->chunks, *next; ch != NULL; ch = next) {
        next = ch->next;
        munmap(ch->base, ch->map_bytes);
        free(ch->state);
        free(ch);
    }
    if (c->dmap != NULL) {
        for (size_t i = 0; i < DMAP_L1_SIZE; i++)
            free(c->dmap[i]);
        free(c->dmap);
    }
    if (c->mags.x_blocks != NULL)
        swf_itable_fini(&c->mags);
    if (c->tstates.x_blocks != NULL)
        swf_itable_fini(&c->tstates);
    pthread_mutex_destroy(&c->refill_lock);
    free(c);
}

int swf_cache_create(const struct swf_cache_config *cfg, struct swf_cache **out)
{
    SWF_CHECK_ARG(cfg == NULL, EINVAL, "cfg is NULL");
    SWF_CHECK_ARG(out == NULL, EINVAL, "out is NULL");
    SWF_CHECK_ARG(cfg->object_size == 0, EINVAL, "cfg->object_size is 0");
    SWF_CHECK_ARG(cfg->object_size > SWF_CACHE_OBJECT_MAX, EINVAL,
                  "cfg->object_size is above SWF_CACHE_OBJECT_MAX");
    SWF_CHECK_ARG(cfg->align != 0 && !swf_is_pow2(cfg->align), EINVAL,
                  "cfg->align is not a power of two");
    SWF_CHECK_ARG(cfg->align > SWF_CACHE_ALIGN_MAX, EINVAL, "cfg->align is above SWF_CACHE_ALIGN_MAX");
    SWF_CHECK_ARG(cfg->limit != 0 && cfg->limit < cfg->prefill, EINVAL,
                  "cfg->limit is below cfg->prefill");

    struct swf_cache *c;
    if (posix_memalign((void **)&c, 64, sizeof(*c)) != 0)
        return ENOMEM;
    memset(c, 0, sizeof(*c));
    c->object_size = cfg->object_size;
    c->align = cfg->align ? cfg->align : natural_align(cfg->object_size);
    size_t min_size = cfg->object_size < sizeof(void *) ? sizeof(void *) : cfg->object_size;
    (void)swf_round_up(min_size, c->align, &c->stride); /* cannot overflow: size <= 1 GiB */
    snprintf(c->name, sizeof(c->name), "%s", cfg->name ? cfg->name : "");
    c->x_limit = cfg->limit;
    c->owner.release = tstate_release;
    pthread_mutex_init(&c->refill_lock, NULL);

    int err = swf_failslab_from_env(&c->fs, cfg->name);
    if (err == 0 &&
        (swf_itable_init(&c->mags, sizeof(struct swf_mag), MAG_BLOCK_SHIFT, MAG_BLOCKS_MAX) != 0 ||
         swf_itable_init(&c->tstates, (sizeof(struct swf_tstate) + 63) & ~(size_t)63,
                         TS_BLOCK_SHIFT, TS_BLOCKS_MAX) != 0))
        err = ENOMEM;
    if (err == 0 && SWF_DEBUG && (c->dmap = calloc(DMAP_L1_SIZE, sizeof(*c->dmap))) == NULL)
        err = ENOMEM;
    if (err == 0 && (make_mags(c) != 0 || make_tstates(c) != 0))
        err = ENOMEM;
    if (err == 0 && cfg->prefill > 0)
        err = map_objects(c, cfg->prefill);
    if (err == 0)
        err = swf_tls_owner_register(&c->owner);
    if (err != 0) {
        cache_free_memory(c);
        return err;
    }
    *out = c;
    return 0;
}

int swf_cache_destroy(struct swf_cache *c)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    if (s.alive != 0)
        return EBUSY;
    swf_tls_owner_unregister(&c->owner);
    cache_free_memory(c);
    return 0;
}
