/*
 * lib/cache/front/policy.c - where an allocation finds a free object, and where a free puts one:
 * the whole order, top to bottom, in this file. The places themselves know nothing of this order:
 * magazines and the depot's stacks (cache_internal.h), the loose list (loose.c, which spreads a
 * list taken whole into magazines), the shared states (tstate.c), new memory and the chunks it is
 * carved from (chunk.c).
 *
 * An allocation by a thread bound to the cache (its own thread state, or a shared state claimed
 * for the call) looks, in order:
 *   1. its loaded magazine (cache.h's inline path, or the library's fast path);
 *   2. its prev magazine                                     (take_bound)
 *   3. a magazine from the depot, full ones first            (take_bound)
 *   4. uncarved objects, a magazine's worth carved into its
 *      empty loaded magazine                                 (take_bound, swfi_carve)
 *   5. the loose list, taken whole                           (take_bound, swfi_loose_fill)
 *   6. the other shared states' magazines                    (swfi_take_shared)
 *   7. WAIT only, under refill_lock: new memory, then 1-5    (cache.c, alloc_wait)
 *   8. WAIT only, when mapping failed: 6, waiting out claims (cache.c, alloc_wait)
 * A thread with no state at all takes one object straight from a depot magazine (partial ones
 * first, so that full ones stay whole for bound threads), then carves what it asked for (one
 * object, or a magazine's worth for a bulk allocation) straight into its hands, then the loose
 * list, then 6.
 *
 * Why carving comes after the depot and before the loose list: objects on the depot were freed,
 * so their cache lines may still be warm, and taking them keeps the memory in use compact;
 * carving costs one compare-and-swap per magazine's worth and reads no object, where the loose
 * list costs an exchange, a walk through every object's first word (a cache miss each) and the
 * spreading of what is left into magazines. The loose list holds objects only when no magazine
 * had room, and the blocking paths put it back into magazines, so it waits little for it.
 *
 * A free by a bound thread puts the object, in order:
 *   1. into its loaded magazine; 2. its prev, when that has room (the two swap);
 *   3. a fresh empty magazine from the depot, the full prev going to the depot;
 *   4. the loose list.
 * A thread with no state puts it into a partial depot magazine, else an empty one, else the
 * loose list. A loose list taken whole is spread into empty magazines, so nobody walks it twice.
 *
 * In the per-CPU mode (percpu.c) no thread has magazines: an allocation looks first in the
 * magazine of the CPU it runs on (refilled by swapping in a depot magazine with objects, or an
 * empty one it carved a magazine's worth into), then as a thread with no state; a free puts the
 * object into that magazine (swapped for an empty one from the depot when full), else as a
 * thread with no state. Only the blocking paths reach the other CPUs' magazines
 * (swfi_pcpu_drain).
 *
 * Each mode's order is one front end at the end of this file (struct swfi_front: the slow halves
 * of every call that cache.h's inline path could not serve), chosen once when the cache is
 * created; the public entry points (cache.c) call through it and never test the mode.
 *
 * Every step is lock-free (the stacks' CAS, the bump index's CAS, the loose list's exchange), O(1)
 * per object save the spreading of a loose list, which moves each object once.
 */
#include "cache/front/front.h"

#include <string.h>

/* ---- a bound thread ------------------------------------------------------------------------- */

void *swfi_take_bound(struct swf_cache *c, struct swfi_tstate *ts)
{
    struct swfi_magazine *loaded = swfi_ts_loaded(ts), *prev = swfi_ts_prev(ts);
    if (loaded->pub.n == 0) {
        struct swfi_magazine *t = loaded;
        loaded = prev;
        prev = t;
    }
    if (loaded->pub.n == 0) {
        struct swfi_magazine *got = swfi_depot_get_objects(c);
        if (got != NULL) {
            /* Both ours are empty: keep one as prev, give the other back. */
            swfi_depot_put(c, prev);
            prev = loaded;
            loaded = got;
        } else if ((loaded->pub.n = swfi_carve(c, loaded->pub.obj, SWF_CACHE_MAGAZINE)) == 0 &&
                   swfi_loose_fill(c, loaded, SWF_CACHE_MAGAZINE) == 0) {
            swfi_ts_set(ts, loaded, prev);
            return NULL;
        }
    }
    swfi_ts_set(ts, loaded, prev);
    return loaded->pub.obj[--loaded->pub.n];
}

void swfi_put_bound(struct swf_cache *c, struct swfi_tstate *ts, void *obj)
{
    struct swfi_magazine *loaded = swfi_ts_loaded(ts), *prev = swfi_ts_prev(ts);
    if (loaded->pub.n == SWF_CACHE_MAGAZINE) {
        if (prev->pub.n < SWF_CACHE_MAGAZINE) {
            struct swfi_magazine *t = loaded;
            loaded = prev;
            prev = t;
        } else {
            struct swfi_magazine *e = swfi_depot_get_empty(c);
            if (e == NULL) {
                swfi_loose_push(c, obj);
                return;
            }
            swfi_depot_put(c, prev);
            prev = loaded;
            loaded = e;
        }
        swfi_ts_set(ts, loaded, prev);
    }
    loaded->pub.obj[loaded->pub.n++] = obj;
}

/* ---- the shared states ---------------------------------------------------------------------- */

void *swfi_take_shared(struct swf_cache *c, struct swfi_tstate *held, bool wait)
{
    if (!swfi_shared_made(c))
        return NULL;
    for (unsigned i = 0; i < SHARED_STATES; i++) {
        struct swfi_tstate *ts = c->shared[i];
        if (ts == held || !swfi_shared_claim(ts, wait))
            continue;
        void *obj =
            swfi_ts_loaded(ts)->pub.n || swfi_ts_prev(ts)->pub.n ? swfi_take_bound(c, ts) : NULL;
        swfi_tstate_done(ts, true);
        if (obj != NULL)
            return obj;
    }
    return NULL;
}

/* ---- a thread with no state: single objects through the depot, or carved ------------------- */

uint32_t swfi_take_unbound(struct swf_cache *c, void **dst, uint32_t want)
{
    uint32_t i = swfi_istack_pop(&c->partial, &c->mags);
    if (i == UINT32_MAX)
        i = swfi_istack_pop(&c->full, &c->mags);
    if (i == UINT32_MAX) {
        uint32_t k = swfi_carve(c, dst, want);
        if (k > 0)
            return k;
        struct swfi_magazine one;
        one.pub.n = 0;
        if (swfi_loose_fill(c, &one, 1) == 0)
            return 0;
        dst[0] = one.pub.obj[0];
        return 1;
    }
    struct swfi_magazine *m = swfi_mag_at(c, i);
    swfi_fetch_sub_relaxed_64(&c->x_depot_objs, m->pub.n);
    uint32_t k = m->pub.n < want ? m->pub.n : want;
    for (uint32_t j = 0; j < k; j++)
        dst[j] = m->pub.obj[--m->pub.n];
    swfi_depot_put(c, m);
    return k;
}

void swfi_put_unbound(struct swf_cache *c, void *const *objs, size_t n)
{
    size_t done = 0;
    while (done < n) {
        uint32_t i = swfi_istack_pop(&c->partial, &c->mags);
        struct swfi_magazine *m;
        if (i != UINT32_MAX) {
            m = swfi_mag_at(c, i);
            swfi_fetch_sub_relaxed_64(&c->x_depot_objs, m->pub.n);
        } else if ((m = swfi_depot_get_empty(c)) == NULL) {
            while (done < n)
                swfi_loose_push(c, objs[done++]);
            return;
        }
        while (m->pub.n < SWF_CACHE_MAGAZINE && done < n)
            m->pub.obj[m->pub.n++] = objs[done++];
        swfi_depot_put(c, m);
    }
}

/* ---- the front ends: one per mode, each the order above for its calls ----------------------- */

void swfi_count_alloc(struct swf_cache *c, struct swfi_tstate *ts, enum swf_alloc_mode mode)
{
    if (ts != NULL)
        swfi_counter_add(mode == SWF_NOWAIT ? &ts->pub.x_allocs_nowait : &ts->x_allocs_wait, 1);
    else
        swfi_fetch_add_relaxed_64(mode == SWF_NOWAIT ? &c->x_allocs_nowait : &c->x_allocs_wait, 1);
}

static void count_fail(struct swf_cache *c, struct swfi_tstate *ts)
{
    if (ts != NULL)
        swfi_counter_add(&ts->x_fails_nowait, 1);
    else
        swfi_fetch_add_relaxed_64(&c->x_fails_nowait, 1);
}

static void *take_one_unbound(struct swf_cache *c)
{
    void *obj;
    return swfi_take_unbound(c, &obj, 1) ? obj : NULL;
}

/* objs[i .. end-1] were just handed out: move their full checks' states. Their free marks stay
 * (a bulk allocation does not touch the objects; cache.h). */
static void mark_given(struct swf_cache *c, void *const *objs, size_t i, size_t end)
{
    for (; c->checks && i < end; i++)
        swfi_debug_transition(c, "swf_cache_alloc_bulk", objs[i], OBJ_FREE, OBJ_ALLOC);
}

/* The run of entries from i that are NULL (want_null) or not: one past its end. */
static size_t run_end(void *const *objs, size_t i, size_t n, bool want_null)
{
    while (i < n && (objs[i] == NULL) == want_null)
        i++;
    return i;
}

/* Check the owner of objs[i .. end-1] (all non-NULL): cache.h's test against the chunk this
 * thread last freed into, the map for the others (which makes their chunk the remembered one). */
static void owners_ok(struct swf_cache *c, void *const *objs, size_t i, size_t end)
{
    for (; i < end; i++)
        if (SWF_UNLIKELY(!swfi_owned(c, objs[i])))
            swfi_owner_check(c, "swf_cache_free_bulk", objs[i]);
}

/* A thread without magazines of its own (every thread, in the per-CPU mode): NOWAIT objects for
 * the NULL entries, a magazine's worth at a time, from this CPU's magazine first when from_cpu
 * (*popped counts those: the magazine counted them itself), else from the depot. */
static size_t take_bulk_shared(struct swf_cache *c, void **objs, size_t n, size_t nulls,
                               bool from_cpu, size_t *popped)
{
    size_t given = 0;
    void *buf[SWF_CACHE_MAGAZINE];
    uint32_t nbuf = 0, next = 0; /* objects in buf not given yet: buf[next .. nbuf-1] */
    for (size_t i = 0; i < n; i++) {
        if (objs[i] != NULL)
            continue;
        if (next == nbuf) {
            size_t want = nulls - given < SWF_CACHE_MAGAZINE ? nulls - given : SWF_CACHE_MAGAZINE;
            nbuf = from_cpu ? swfi_pcpu_take_many(c, buf, (uint32_t)want) : 0;
            *popped += nbuf;
            if (nbuf == 0 && (nbuf = swfi_take_unbound(c, buf, SWF_CACHE_MAGAZINE)) == 0)
                break;
            next = 0;
        }
        objs[i] = buf[next++];
        mark_given(c, objs, i, i + 1);
        given++;
    }
    if (next < nbuf)
        swfi_put_unbound(c, buf + next, nbuf - next); /* took more than needed: back */
    return given;
}

/* buf[0 .. n-1] to this CPU's magazine as far as it has room when to_cpu (it counts those
 * itself), the rest to the depot. Returns how many went to the depot. */
static uint32_t put_buf(struct swf_cache *c, void *const *buf, uint32_t n, bool to_cpu)
{
    uint32_t kept = to_cpu && n > 0 ? swfi_pcpu_put_many(c, buf, n) : 0;
    if (kept < n)
        swfi_put_unbound(c, buf + kept, n - kept);
    return n - kept;
}

/* The same thread's frees: owners checked, a magazine's worth at a time, to this CPU's magazine
 * first when to_cpu, the rest to the depot, counted here. */
static void put_bulk_shared(struct swf_cache *c, void *const *objs, size_t n, bool to_cpu)
{
    void *buf[SWF_CACHE_MAGAZINE];
    uint32_t nbuf = 0;
    uint64_t to_depot = 0;
    for (size_t i = 0; i < n; i++) {
        if (objs[i] == NULL)
            continue;
        owners_ok(c, objs, i, i + 1);
        buf[nbuf++] = objs[i];
        if (nbuf == SWF_CACHE_MAGAZINE) {
            to_depot += put_buf(c, buf, nbuf, to_cpu);
            nbuf = 0;
        }
    }
    to_depot += put_buf(c, buf, nbuf, to_cpu);
    swfi_fetch_add_relaxed_64(&c->x_frees, to_depot);
}

/* -- per-thread: the thread's own magazines, else a shared state claimed for the call, else the
 * depot; the shared states before giving up. */

static void *thread_alloc(struct swf_cache *c)
{
    bool claimed;
    struct swfi_tstate *ts = swfi_tstate_for_call(c, &claimed);
    void *obj = ts != NULL ? swfi_take_bound(c, ts) : take_one_unbound(c);
    if (obj == NULL)
        obj = swfi_take_shared(c, claimed ? ts : NULL, false);
    if (obj != NULL)
        swfi_count_alloc(c, ts, SWF_NOWAIT);
    else
        count_fail(c, ts);
    swfi_tstate_done(ts, claimed);
    return obj;
}

static void *thread_take_locked(struct swf_cache *c, struct swfi_tstate *ts)
{
    void *obj = ts != NULL ? swfi_take_bound(c, ts) : take_one_unbound(c);
    if (obj == NULL) /* what threads without a state of their own freed, before new memory */
        obj = swfi_take_shared(c, NULL, false);
    if (obj != NULL)
        swfi_count_alloc(c, ts, SWF_WAIT);
    return obj;
}

static uint64_t thread_reclaim(struct swf_cache *c, const char **refused)
{
    (void)c, (void)refused; /* every object out of reach is a thread's own, until it flushes */
    return 0;
}

static void thread_free(struct swf_cache *c, void *obj)
{
    bool claimed;
    struct swfi_tstate *ts = swfi_tstate_for_call(c, &claimed);
    swfi_free_check(c, ts, "swf_cache_free", obj);
    swfi_debug_free(c, "swf_cache_free", obj, OBJ_ALLOC); /* the poison */
    swfi_mark_free(c, obj); /* before the object goes where another thread can take it */
    if (ts == NULL) {
        swfi_put_unbound(c, &obj, 1);
        swfi_fetch_add_relaxed_64(&c->x_frees, 1);
        return;
    }
    swfi_counter_add(&ts->pub.x_frees, 1);
    swfi_put_bound(c, ts, obj);
    swfi_tstate_done(ts, claimed);
}

/* Give a bound thread's objects to the NULL entries: whole runs copied from its loaded magazine,
 * which swfi_take_bound refills (prev, then a depot magazine) as it runs dry. */
static size_t take_bulk_bound(struct swf_cache *c, struct swfi_tstate *ts, void **objs, size_t n)
{
    size_t given = 0;
    for (size_t i = run_end(objs, 0, n, false); i < n; i = run_end(objs, i, n, false)) {
        for (size_t end = run_end(objs, i, n, true); i < end;) {
            struct swf_magazine_ *m = ts->pub.loaded;
            if (m->n == 0) {
                void *obj = swfi_take_bound(c, ts);
                if (obj == NULL)
                    return given;
                objs[i] = obj;
                mark_given(c, objs, i, i + 1);
                i++;
                given++;
                continue;
            }
            uint32_t k = m->n < end - i ? (uint32_t)m->n : (uint32_t)(end - i);
            m->n -= k;
            memcpy(&objs[i], &m->obj[m->n], k * sizeof(void *));
            mark_given(c, objs, i, i + k);
            i += k;
            given += k;
        }
    }
    return given;
}

static size_t thread_alloc_bulk(struct swf_cache *c, void **objs, size_t n, size_t nulls)
{
    bool claimed;
    size_t popped = 0; /* none: no CPU magazines */
    struct swfi_tstate *ts = swfi_tstate_for_call(c, &claimed);
    size_t given =
        ts ? take_bulk_bound(c, ts, objs, n) : take_bulk_shared(c, objs, n, nulls, false, &popped);
    for (size_t i = 0; given < nulls && i < n; i++) {
        if (objs[i] != NULL)
            continue;
        if ((objs[i] = swfi_take_shared(c, claimed ? ts : NULL, false)) == NULL)
            break;
        mark_given(c, objs, i, i + 1);
        given++;
    }
    if (ts != NULL) {
        swfi_counter_add(&ts->pub.x_allocs_nowait, given);
        swfi_counter_add(&ts->x_fails_nowait, nulls - given);
        swfi_tstate_done(ts, claimed);
    } else {
        swfi_fetch_add_relaxed_64(&c->x_allocs_nowait, given);
        swfi_fetch_add_relaxed_64(&c->x_fails_nowait, nulls - given);
    }
    return given;
}

/* Put a bound thread's non-NULL entries into its loaded magazine: whole runs checked (the owner
 * only: a bulk free writes no mark) and copied; swfi_put_bound makes room (prev, an empty depot
 * magazine) when it is full. Returns how many. */
static uint64_t put_bulk_bound(struct swf_cache *c, struct swfi_tstate *ts, void *const *objs,
                               size_t n)
{
    uint64_t freed = 0;
    for (size_t i = run_end(objs, 0, n, true); i < n; i = run_end(objs, i, n, true)) {
        for (size_t end = run_end(objs, i, n, false); i < end;) {
            struct swf_magazine_ *m = ts->pub.loaded;
            uint32_t room = SWF_CACHE_MAGAZINE - (uint32_t)m->n;
            if (room == 0) {
                owners_ok(c, objs, i, i + 1);
                swfi_put_bound(c, ts, objs[i++]);
                freed++;
                continue;
            }
            uint32_t k = room < end - i ? room : (uint32_t)(end - i);
            owners_ok(c, objs, i, i + k);
            memcpy(&m->obj[m->n], &objs[i], k * sizeof(void *));
            m->n += k;
            i += k;
            freed += k;
        }
    }
    return freed;
}

static void thread_free_bulk(struct swf_cache *c, void *const *objs, size_t n)
{
    bool claimed;
    struct swfi_tstate *ts = swfi_tstate_for_call(c, &claimed);
    if (ts == NULL) {
        put_bulk_shared(c, objs, n, false);
        return;
    }
    swfi_counter_add(&ts->pub.x_frees, put_bulk_bound(c, ts, objs, n));
    swfi_tstate_done(ts, claimed);
}

static bool thread_counts(struct swf_cache *c, uint64_t *allocs, uint64_t *frees)
{
    (void)c, (void)allocs, (void)frees; /* all in the thread states' and the cache's counters */
    return true;
}

static void thread_nothing(struct swf_cache *c)
{
    (void)c; /* no slots to free, no move to wait for at a fork */
}

static void thread_flush(struct swf_cache *c)
{
    struct swfi_tstate *ts = swfi_tls_unbind(&c->owner);
    if (ts != NULL)
        swfi_tstate_release(c, ts);
}

const struct swfi_front swfi_front_thread = {
    .alloc = thread_alloc,
    .take_locked = thread_take_locked,
    .reclaim = thread_reclaim,
    .free = thread_free,
    .alloc_bulk = thread_alloc_bulk,
    .free_bulk = thread_free_bulk,
    .flush = thread_flush,
    .first_use = swfi_shared_make,
    .bind = swfi_tstate_bind_locked,
    .holds = swfi_tstate_holds,
    .counts = thread_counts,
    .validate = swfi_tstates_validate,
    .fini = thread_nothing,
    .fork_prepare = thread_nothing,
    .fork_done = swfi_shared_fork_done,
    .needs_state = true,
    .percpu = false,
};

/* -- per-CPU: this CPU's magazine (its pops and pushes count themselves, percpu.c), else the
 * depot as a thread with no state; the other CPUs' magazines on the blocking paths only. */

static void *pcpu_alloc(struct swf_cache *c)
{
    void *obj = swfi_pcpu_take(c, true);
    if (obj != NULL)
        return obj;
    if ((obj = take_one_unbound(c)) != NULL)
        swfi_count_alloc(c, NULL, SWF_NOWAIT);
    else
        count_fail(c, NULL);
    return obj;
}

static void *pcpu_take_locked(struct swf_cache *c, struct swfi_tstate *ts)
{
    (void)ts; /* a state of the per-CPU mode holds no magazine */
    void *obj = swfi_pcpu_take(c, false);
    if (obj != NULL) {
        /* The CPU's magazine counted it as a NOWAIT allocation: take that back, after the WAIT
         * count (release: a sum that sees this sees that, percpu.c). */
        swfi_count_alloc(c, NULL, SWF_WAIT);
        swfi_fetch_add_release_64(&c->x_slot_pops, UINT64_MAX);
        return obj;
    }
    if ((obj = take_one_unbound(c)) != NULL)
        swfi_count_alloc(c, NULL, SWF_WAIT);
    return obj;
}

static uint64_t pcpu_reclaim(struct swf_cache *c, const char **refused)
{
    return swfi_pcpu_drain(c, refused);
}

static void pcpu_free(struct swf_cache *c, void *obj)
{
    bool ok = swfi_free_ok(c, obj); /* the common case's test: it pushed only when it held */
    if (!ok)
        swfi_free_check(c, NULL, "swf_cache_free", obj);
    swfi_debug_free(c, "swf_cache_free", obj, OBJ_ALLOC); /* the poison */
    swfi_mark_free(c, obj); /* before the object goes where another thread can take it */
    if (!swfi_pcpu_put(c, obj, ok)) {
        swfi_put_unbound(c, &obj, 1);
        swfi_fetch_add_relaxed_64(&c->x_frees, 1);
    }
}

static size_t pcpu_alloc_bulk(struct swf_cache *c, void **objs, size_t n, size_t nulls)
{
    size_t popped = 0; /* counted by this CPU's magazine */
    size_t given = take_bulk_shared(c, objs, n, nulls, true, &popped);
    swfi_fetch_add_relaxed_64(&c->x_allocs_nowait, given - popped);
    swfi_fetch_add_relaxed_64(&c->x_fails_nowait, nulls - given);
    return given;
}

static void pcpu_free_bulk(struct swf_cache *c, void *const *objs, size_t n)
{
    put_bulk_shared(c, objs, n, true);
}

static bool pcpu_holds(struct swf_cache *c, const struct swfi_tstate *ts, const void *obj)
{
    (void)ts; /* a state of the per-CPU mode holds no magazine */
    return swfi_pcpu_holds(c, obj);
}

const struct swfi_front swfi_front_pcpu = {
    .alloc = pcpu_alloc,
    .take_locked = pcpu_take_locked,
    .reclaim = pcpu_reclaim,
    .free = pcpu_free,
    .alloc_bulk = pcpu_alloc_bulk,
    .free_bulk = pcpu_free_bulk,
    .flush = swfi_pcpu_flush,
    .first_use = swfi_pcpu_init,
    .bind = swfi_tstate_bind_bare,
    .holds = pcpu_holds,
    .counts = swfi_pcpu_counts,
    .validate = swfi_pcpu_validate,
    .fini = swfi_pcpu_fini,
    .fork_prepare = swfi_pcpu_fork_prepare,
    .fork_done = swfi_pcpu_fork_done,
    .needs_state = false,
    .percpu = true,
};
