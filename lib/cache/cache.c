/*
 * lib/cache/cache.c - the object cache's public entry points (cache_internal.h has the design).
 *
 * The NOWAIT path is cache.h's inline path itself (cache_abi.h's swf_cache_alloc_try_ and
 * swf_cache_free_try_, one body for both): this thread's loaded magazine (no atomics), or in the
 * per-CPU mode its CPU's magazine in a restartable sequence (percpu.c) with no state of the
 * thread's own. Its slow path follows the allocation policy (front/shared.c) down to EAGAIN: no
 * lock, no system call, and only prepared memory.
 */
#include "cache/cache_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tell cache.h's inline path whether it must call the library (refill_lock held, or creating). */
static void update_slow(struct swf_cache *c)
{
    uint32_t slow = (c->checks ? SLOW_DEBUG : 0) | (swfi_failslab_on(&c->fs) ? SLOW_FAILSLAB : 0);
    swfi_store_relaxed_32(&c->owner.head.x_slow, slow);
}

/* ---- allocation ----------------------------------------------------------------------------- */

/* Objects in batches sized in bytes: a quarter of the capacity, at most WAIT_BATCH_BYTES, at
 * least one magazine's worth where that fits in WAIT_BATCH_BYTES, and at least one object. */
static size_t wait_batch(struct swf_cache *c)
{
    size_t max = WAIT_BATCH_BYTES / c->stride;
    size_t batch = (size_t)(swfi_load_relaxed_64(&c->x_capacity) / 4);
    if (batch < SWF_CACHE_MAGAZINE)
        batch = SWF_CACHE_MAGAZINE;
    if (batch > max)
        batch = max;
    return batch ? batch : 1;
}

static void *alloc_wait(struct swf_cache *c)
{
    pthread_mutex_lock(&c->refill_lock);
    struct swfi_tstate *ts = c->front->bind(c);
    swfi_pools_replenish(c);
    void *obj = c->front->take_locked(c, ts);
    int err = 0;
    const char *why = NULL;
    if (obj == NULL) {
        err = swfi_map_objects(c, wait_batch(c)); /* a partial success still serves this call */
        why = c->map_why;
        obj = c->front->take_locked(c, ts);
    }
    /* At the limit (or out of memory): what other CPUs' magazines hold (a membarrier fence). */
    const char *refused = NULL;
    if (obj == NULL && c->front->reclaim(c, &refused) > 0)
        obj = c->front->take_locked(c, ts);
    pthread_mutex_unlock(&c->refill_lock);
    /* No memory to be had: the shared pairs that were in use a moment ago, waited for now that
     * the refill lock is free (their claimers may need to run first). */
    if (obj == NULL && (obj = swfi_take_shared(c, NULL, true)) != NULL)
        swfi_count_alloc(c, ts, SWF_WAIT);
    if (obj == NULL) {
        swfi_fetch_add_relaxed_64(&c->x_fails_wait, 1);
        return swfi_fail_null("swf_cache_alloc", ENOMEM,
                              err == ENOMEM && refused ? refused
                              : err                    ? why
                                                       : "no memory for this thread's magazines");
    }
    swfi_debug_transition(c, "swf_cache_alloc", obj, OBJ_FREE, OBJ_ALLOC);
    swfi_mark_clear(obj);
    return obj;
}

/* Everything but the common case: argument errors, injection, WAIT, and empty magazines. */
static __attribute__((noinline)) void *alloc_slow(struct swf_cache *c, enum swf_alloc_mode mode)
{
    if (SWF_UNLIKELY(c == NULL))
        return swfi_fail_null("swf_cache_alloc", EINVAL, "c is NULL");
    if (SWF_UNLIKELY(mode != SWF_NOWAIT && mode != SWF_WAIT))
        return swfi_fail_null("swf_cache_alloc", EINVAL, "mode is neither SWF_NOWAIT nor SWF_WAIT");
    if (mode == SWF_WAIT)
        return alloc_wait(c);
    struct swfi_tls_slot *mine = swfi_tls_slot(&c->owner);
    if (swfi_failslab_should_fail(&c->fs, mine ? &mine->block : NULL, mine ? &mine->count : NULL)) {
        swfi_fetch_add_relaxed_64(&c->x_fails_injected, 1);
        return swfi_fail_null("swf_cache_alloc", EAGAIN, "failure injected (swf_failslab)");
    }
    void *obj = c->front->alloc(c);
    if (obj == NULL)
        return swfi_fail_null("swf_cache_alloc", EAGAIN, "no object ready for this thread");
    swfi_debug_transition(c, "swf_cache_alloc", obj, OBJ_FREE, OBJ_ALLOC);
    swfi_mark_clear(obj);
    return obj;
}

/* The common case: cache.h's inline path, the same body, as a leaf that saves no register; the
 * rest is a tail call of the slow half, which does not try the common case again. */
void *swf_cache_alloc(struct swf_cache *c, enum swf_alloc_mode mode)
{
    void *obj;
    if (SWF_UNLIKELY(c == NULL || mode != SWF_NOWAIT))
        return alloc_slow(c, mode);
    if (SWF_LIKELY(swf_cache_alloc_try_(c, &obj, SWFI_ABORTS)))
        return obj;
    return alloc_slow(c, SWF_NOWAIT);
}

void *swf_cache_alloc_miss_(struct swf_cache *c)
{
    return alloc_slow(c, SWF_NOWAIT);
}

/* ---- free ----------------------------------------------------------------------------------- */

static __attribute__((noinline)) int free_slow(struct swf_cache *c, void *obj)
{
    if (c == NULL)
        return swfi_fail("swf_cache_free", EINVAL, "c is NULL");
    if (obj != NULL)
        c->front->free(c, obj);
    return 0;
}

int swf_cache_free(struct swf_cache *c, void *obj)
{
    /* The common case: cache.h's inline path, the same body (obj of the chunk this thread last
     * freed into, not marked; with full checks on, no chunk is remembered, so every free takes
     * the slow path), with room in the magazine. */
    if (SWF_LIKELY(c != NULL && obj != NULL && swf_cache_free_try_(c, obj, SWFI_ABORTS)))
        return 0;
    return free_slow(c, obj);
}

int swf_cache_free_miss_(struct swf_cache *c, void *obj)
{
    return free_slow(c, obj);
}

/* ---- bulk ----------------------------------------------------------------------------------- */

/* An alloc_bulk failure: errno and the reason set, nothing to count. */
static size_t bulk_fails(int err, const char *reason)
{
    errno = swfi_fail("swf_cache_alloc_bulk", err, reason);
    return 0;
}

size_t swf_cache_alloc_bulk(struct swf_cache *c, enum swf_alloc_mode mode, void **objs, size_t n)
{
    if (c == NULL)
        return bulk_fails(EINVAL, "c is NULL");
    if (mode != SWF_NOWAIT && mode != SWF_WAIT)
        return bulk_fails(EINVAL, "mode is neither SWF_NOWAIT nor SWF_WAIT");
    if (objs == NULL && n > 0)
        return bulk_fails(EINVAL, "objs is NULL and n is not 0");
    size_t nulls = 0;
    for (size_t i = 0; i < n; i++)
        nulls += objs[i] == NULL;
    size_t given = 0;
    if (mode == SWF_NOWAIT && !(swfi_load_relaxed_32(&c->owner.head.x_slow) & SLOW_FAILSLAB)) {
        given = c->front->alloc_bulk(c, objs, n, nulls);
    } else {
        /* WAIT, and NOWAIT under injection, one call per entry: injection numbers every call. */
        for (size_t i = 0; i < n; i++)
            if (objs[i] == NULL && (objs[i] = swf_cache_alloc(c, mode)) != NULL)
                given++;
    }
    if (given < nulls)
        errno = swfi_fail(__func__, mode == SWF_NOWAIT ? EAGAIN : ENOMEM,
                          mode == SWF_NOWAIT
                              ? "not enough objects ready for this thread (or failures injected)"
                              : "the limit, the magazine table or the system stopped it");
    return n - nulls + given;
}

int swf_cache_free_bulk(struct swf_cache *c, void *const *objs, size_t n)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(objs == NULL && n > 0, EINVAL, "objs is NULL and n is not 0");
    for (size_t i = 0; c->checks && i < n; i++)
        if (objs[i] != NULL)
            swfi_debug_transition(c, "swf_cache_free_bulk", objs[i], OBJ_ALLOC, OBJ_FREE);
    c->front->free_bulk(c, objs, n);
    return 0;
}

/* ---- the other entry points ----------------------------------------------------------------- */

/* Objects the calling thread could take without mapping: its magazines, the shared pools and
 * the uncarved objects. */
static uint64_t reachable_objects(struct swf_cache *c, struct swfi_tstate *ts)
{
    uint64_t mine = ts ? ts->pub.loaded->n + ts->pub.prev->n : 0;
    return mine + swfi_load_relaxed_64(&c->x_depot_objs) + swfi_load_relaxed_64(&c->x_loose_objs) +
           swfi_uncarved(c);
}

/* ENOMEM from grow when n is beyond the magazine table: the most objects the cache can have ready
 * now (a bound: the chunks' layout may keep a few magazines' worth below it), and the way out. */
static int table_full(const char *fn, uint64_t most)
{
    uint64_t mags = (uint64_t)MAG_BLOCKS_MAX << MAG_BLOCK_SHIFT;
    if (mags > SWF_ISTACK_NODES_MAX)
        mags = SWF_ISTACK_NODES_MAX;
    struct swfi_reason r;
    swfi_reason_start(&r);
    swfi_reason_add(&r, swfi_table_why);
    swfi_reason_add(&r, ": at most ");
    swfi_reason_add_u64(&r, most);
    swfi_reason_add(&r, " objects can be ready in this cache now (a cache's table has room for ");
    swfi_reason_add_u64(&r, mags);
    swfi_reason_add(&r, " magazines of ");
    swfi_reason_add_u64(&r, SWF_CACHE_MAGAZINE);
    swfi_reason_add(&r, " free objects: ");
    swfi_reason_add_u64(&r, mags * SWF_CACHE_MAGAZINE);
    swfi_reason_add(&r, " in all); grow by less, or spread the objects over more caches");
    return swfi_fail(fn, ENOMEM,
                     swfi_reason_text(&r, "n is beyond what the magazine table can still hold: "
                                          "grow by less, or spread the objects over more caches"));
}

int swf_cache_grow(struct swf_cache *c, size_t n)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    int err = 0;
    const char *why = NULL;
    pthread_mutex_lock(&c->refill_lock);
    struct swfi_tstate *ts = c->front->bind(c);
    swfi_pools_replenish(c);
    uint64_t have = reachable_objects(c, ts);
    const char *refused = NULL; /* the drain was refused: the rest is mapped instead */
    if (have < n && c->front->reclaim(c, &refused) > 0) /* every CPU's, to the depot */
        have = reachable_objects(c, ts);
    uint64_t room = 0;
    if (have < n && ((err = swfi_map_check(c, (size_t)(n - have))) != 0 ||
                     (err = swfi_map_objects(c, (size_t)(n - have))) != 0)) {
        why = err == ENOMEM && refused ? refused : c->map_why;
        room = have + c->map_room;
    }
    swfi_pools_replenish(c);
    pthread_mutex_unlock(&c->refill_lock);
    if (err != 0 && why == swfi_table_why)
        return table_full(__func__, room);
    if (err != 0)
        return swfi_fail(__func__, err, why);
    if (ts == NULL && c->front->needs_state)
        return swfi_fail(__func__, ENOMEM, "no memory for this thread's magazines");
    return 0;
}

int swf_cache_flush(struct swf_cache *c)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    c->front->flush(c); /* the thread's magazines, or (per-CPU) its CPU's, to the depot */
    return 0;
}

int swf_cache_set_limit(struct swf_cache *c, size_t limit)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    pthread_mutex_lock(&c->refill_lock);
    swfi_store_relaxed_64(&c->x_limit, limit);
    pthread_mutex_unlock(&c->refill_lock);
    return 0;
}

int swf_cache_set_failslab(struct swf_cache *c, const struct swf_failslab *fs)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(fs != NULL && fs->probability > 100, EINVAL, "fs->probability is above 100");
    SWF_CHECK_ARG(fs != NULL && fs->times < -1, EINVAL, "fs->times is below -1");
    pthread_mutex_lock(&c->refill_lock);
    int err = swfi_failslab_set(&c->fs, fs);
    update_slow(c);
    pthread_mutex_unlock(&c->refill_lock);
    return err ? swfi_fail(__func__, err, "no memory for the settings") : 0;
}

int swf_cache_stats(struct swf_cache *c, struct swf_cache_stats *out)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(out == NULL, EINVAL, "out is NULL");
    swfi_cache_stats(c, out);
    return 0;
}

/* ---- create and destroy --------------------------------------------------------------------- */

static size_t natural_align(size_t size)
{
    size_t a = size & (~size + 1); /* lowest set bit */
    if (a < 8)
        a = 8;
    return a > 16 ? 16 : a;
}

static void cache_free_memory(struct swf_cache *c)
{
    swfi_chunks_free(c);
    c->front->fini(c);
    swfi_failslab_fini(&c->fs);
    if (c->mags.x_blocks != NULL)
        swfi_itable_fini(&c->mags);
    if (c->tstates.x_blocks != NULL)
        swfi_itable_fini(&c->tstates);
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
    SWF_CHECK_ARG(cfg->align != 0 && !swfi_is_pow2(cfg->align), EINVAL,
                  "cfg->align is not a power of two");
    SWF_CHECK_ARG(cfg->align > SWF_CACHE_ALIGN_MAX, EINVAL,
                  "cfg->align is above SWF_CACHE_ALIGN_MAX");
    SWF_CHECK_ARG(cfg->limit != 0 && cfg->limit < cfg->prefill, EINVAL,
                  "cfg->limit is below cfg->prefill");
    SWF_CHECK_ARG(cfg->lock_memory > 1, EINVAL, "cfg->lock_memory is neither 0 nor 1");
    SWF_CHECK_ARG(cfg->huge_pages > SWF_HUGE_PAGES_REQUIRED, EINVAL,
                  "cfg->huge_pages is not an enum swf_huge_pages value");
    SWF_CHECK_ARG(cfg->grow_threads > SWF_CACHE_GROW_THREADS_MAX, EINVAL,
                  "cfg->grow_threads is above SWF_CACHE_GROW_THREADS_MAX");
    SWF_CHECK_ARG(cfg->checks > 1, EINVAL, "cfg->checks is neither 0 nor 1");
    SWF_CHECK_ARG(cfg->huge_pages == SWF_HUGE_PAGES_REQUIRED && !swfi_thp_available(), ENOTSUP,
                  "huge pages are required but the system has transparent huge pages off");
    for (size_t i = 0; i < sizeof(cfg->reserved) / sizeof(cfg->reserved[0]); i++)
        SWF_CHECK_ARG(cfg->reserved[i] != 0, EINVAL, "cfg->reserved is not zero");

    struct swf_cache *c;
    if (posix_memalign((void **)&c, 64, sizeof(*c)) != 0)
        return swfi_fail(__func__, ENOMEM, "no memory for the cache");
    memset(c, 0, sizeof(*c));
    c->object_size = cfg->object_size;
    c->align = cfg->align ? cfg->align : natural_align(cfg->object_size);
    /* Free objects hold a link in their first word: every stride keeps it pointer-aligned, so
     * objects of align 1, 2 or 4 are spaced (and aligned) as if their alignment were 8. */
    size_t link_align = c->align < sizeof(void *) ? sizeof(void *) : c->align;
    size_t min_size = cfg->object_size < sizeof(void *) ? sizeof(void *) : cfg->object_size;
    (void)swfi_round_up(min_size, link_align, &c->stride); /* cannot overflow: size <= 1 GiB */
    c->lock_memory = cfg->lock_memory;
    c->huge_pages = cfg->huge_pages;
    c->grow_threads = cfg->grow_threads ? cfg->grow_threads : 1;
    c->checks = cfg->checks || swfi_checks_all();
    /* The one choice of the mode, the same for every cache: rseq's is decided once per process. */
    c->front = swfi_rseq_mode() != SWFI_RSEQ_OFF ? &swfi_front_pcpu : &swfi_front_thread;
    c->owner.head.nslots = swfi_rseq_slots();
    swfi_free_check_init(c);
    snprintf(c->name, sizeof(c->name), "%s", cfg->name ? cfg->name : "");
    c->x_limit = cfg->limit;
    c->owner.ops = &swfi_cache_owner_ops;
    pthread_mutex_init(&c->refill_lock, NULL);

    int err = swfi_failslab_from_env(&c->fs, cfg->name);
    update_slow(c);
    const char *why = err == EINVAL ? "SWF_FAILSLAB is malformed" : "no memory for the cache";
    if (err == 0 && (swfi_itable_init(&c->mags, sizeof(struct swfi_magazine), MAG_BLOCK_SHIFT,
                                      MAG_BLOCKS_MAX) != 0 ||
                     swfi_itable_init(&c->tstates, (sizeof(struct swfi_tstate) + 63) & ~(size_t)63,
                                      TS_BLOCK_SHIFT, TS_BLOCKS_MAX) != 0))
        err = ENOMEM;
    pthread_mutex_lock(&c->refill_lock);
    /* Tables and shared states wait for the first use (the front's); a prefill is one. */
    if (err == 0 && cfg->prefill > 0 && (err = c->front->first_use(c)) == 0) {
        swfi_pools_replenish(c);
        if ((err = swfi_map_check(c, cfg->prefill)) != 0 ||
            (err = swfi_map_objects(c, cfg->prefill)) != 0)
            why = c->map_why;
    }
    pthread_mutex_unlock(&c->refill_lock);
    if (err == 0 && (err = swfi_tls_owner_register(&c->owner)) != 0)
        why = "SWF_CACHE_MAX caches and registries are alive";
    if (err != 0) {
        cache_free_memory(c);
        return swfi_fail(__func__, err, why);
    }
    *out = c;
    return 0;
}

/* The store, below, sizes the users' counts without users.h: one per kind. */
_Static_assert(sizeof(((struct swf_cache *)0)->x_users) == SWFI_CACHE_USERS * sizeof(uint32_t),
               "one count per kind of user");

void swfi_cache_use(struct swf_cache *c, enum swfi_cache_user who)
{
    swfi_fetch_add_acq_rel_32(&c->x_users[who], 1);
}

void swfi_cache_unuse(struct swf_cache *c, enum swfi_cache_user who)
{
    swfi_fetch_sub_acq_rel_32(&c->x_users[who], 1);
}

int swf_cache_destroy(struct swf_cache *c)
{
    static const char *const in_use[SWFI_CACHE_USERS] = {
        [SWFI_CACHE_USER_FEATURE] =
            "the cache is in use by a feature: swf_feature_destroy it first",
        [SWFI_CACHE_USER_REGISTRY] =
            "the cache is in use by a registry: swf_registry_destroy it first",
    };
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    /* Before the objects: an inactive feature holds none, and would use the cache after this. */
    for (int who = 0; who < SWFI_CACHE_USERS; who++)
        if (swfi_load_acquire_32(&c->x_users[who]) != 0)
            return swfi_fail(__func__, EBUSY, in_use[who]);
    struct swf_cache_stats s;
    if (!swfi_cache_stats(c, &s))
        return swfi_fail(__func__, EBUSY, "another thread is moving the cache's magazines");
    if (s.alive != 0)
        return swfi_fail(__func__, EBUSY, "objects are alive (or awaiting a grace period)");
    swfi_tls_owner_unregister(&c->owner); /* waits for threads handing back their magazines */
    swfi_cache_validate(c, __func__);     /* none is inside the cache now: every equation holds */
    cache_free_memory(c);
    return 0;
}

int swf_cache_percpu(void)
{
    return (int)swfi_rseq_mode();
}

const char *swf_cache_percpu_reason(void)
{
    return swfi_rseq_mode_why();
}
