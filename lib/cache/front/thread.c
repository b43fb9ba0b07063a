/*
 * lib/cache/front/thread.c - the per-thread front end (swfi_front_thread): a bound thread's two
 * magazines (its own thread state, bound lock-free or on a blocking call, or a shared state
 * claimed for one call), else the depot as a thread with no state (shared.c), the shared states
 * before giving up. The order is shared.c's top comment; thread states themselves, which the
 * per-CPU front binds too, are tstate.c's.
 */
#include "cache/front/front.h"

#include <errno.h>
#include <string.h>
#include <time.h>

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

/* ---- binding; making and claiming the shared states ----------------------------------------- */

struct swfi_tstate *swfi_tstate_bind_nowait(struct swf_cache *c)
{
    struct swfi_tstate *ts = swfi_tstate_pop(c);
    if (ts == NULL)
        return NULL;
    struct swfi_magazine *loaded = swfi_depot_get_empty(c);
    struct swfi_magazine *prev = loaded ? swfi_depot_get_empty(c) : NULL;
    if (prev == NULL) {
        if (loaded != NULL)
            swfi_depot_put(c, loaded);
        swfi_istack_push(&c->ts_free, &c->tstates, ts->pub.index_);
        return NULL;
    }
    swfi_ts_set(ts, loaded, prev);
    swfi_tls_bind(&c->owner, ts);
    return ts;
}

struct swfi_tstate *swfi_tstate_bind_locked(struct swf_cache *c)
{
    /* Every blocking call, bound or not, makes the thread's table reach every owner alive now:
     * its later NOWAIT calls on caches created since its last blocking call then bind too. */
    int err = swfi_tls_prepare(&c->owner);
    struct swfi_tstate *ts = swfi_tls_get(&c->owner);
    if (ts != NULL)
        return ts;
    if (err != 0)
        return NULL;
    /* Lock-free poppers may empty the pools between our refills: bounded retries. */
    for (int tries = 0; tries < 4; tries++) {
        if ((ts = swfi_tstate_bind_nowait(c)) != NULL)
            return ts;
        if (swfi_istack_empty(&c->ts_free) && swfi_tstates_make(c) != 0)
            return NULL;
        swfi_mags_reserve(c, 2 + SPARE_EMPTY_MAGS);
    }
    return swfi_tstate_bind_nowait(c);
}

uint64_t swfi_tstates_validate(struct swf_cache *c, const char *fn)
{
    uint64_t objs = 0;
    for (uint32_t i = 0; i < c->tstates.x_count; i++) {
        const struct swfi_tstate *ts = swfi_itable_node(&c->tstates, i);
        if (ts->pub.loaded == NULL)
            continue; /* on the free pool */
        swfi_mag_validate(c, swfi_ts_loaded(ts), fn);
        swfi_mag_validate(c, swfi_ts_prev(ts), fn);
        objs += swfi_ts_loaded(ts)->pub.n + swfi_ts_prev(ts)->pub.n;
    }
    return objs;
}

int swfi_shared_make(struct swf_cache *c)
{
    if (swfi_load_relaxed_32(&c->x_shared_made))
        return 0;
    swfi_mags_reserve(c, SPARE_EMPTY_MAGS + 2 * SHARED_STATES);
    struct swfi_tstate *made[SHARED_STATES];
    int n = 0;
    for (; n < SHARED_STATES; n++) {
        if (swfi_istack_empty(&c->ts_free) && swfi_tstates_make(c) != 0)
            break;
        swfi_mags_reserve(c, 2);
        uint32_t k = swfi_istack_pop(&c->ts_free, &c->tstates);
        struct swfi_magazine *loaded = swfi_depot_get_empty(c);
        struct swfi_magazine *prev = loaded ? swfi_depot_get_empty(c) : NULL;
        if (k == UINT32_MAX || prev == NULL) {
            if (loaded != NULL)
                swfi_depot_put(c, loaded);
            if (k != UINT32_MAX)
                swfi_istack_push(&c->ts_free, &c->tstates, k);
            break;
        }
        made[n] = swfi_itable_node(&c->tstates, k);
        swfi_ts_set(made[n], loaded, prev);
    }
    if (n < SHARED_STATES) { /* all or none: give back what was made */
        while (n > 0)
            swfi_tstate_release(c, made[--n]);
        return ENOMEM;
    }
    for (int i = 0; i < SHARED_STATES; i++)
        c->shared[i] = made[i];
    /* Release: a NOWAIT call that acquires the flag sees the states and their magazines. */
    swfi_store_release_32(&c->x_shared_made, 1);
    return 0;
}

bool swfi_shared_made(struct swf_cache *c)
{
    return swfi_load_acquire_32(&c->x_shared_made) != 0;
}

bool swfi_shared_claim(struct swfi_tstate *ts, bool wait)
{
    for (;;) {
        uint32_t free_word = 0;
        if (swfi_load_relaxed_32(&ts->x_claim) == 0 &&
            swfi_cas_acq_rel_32(&ts->x_claim, &free_word, 1))
            return true;
        if (!wait || swfi_load_relaxed_32(&ts->x_claim) == CLAIM_ABANDONED)
            return false;
        /* Sleep, not spin: the claimer may be a preempted thread of lower priority on this CPU,
         * which a SCHED_FIFO waiter that only yielded would never let run. Nothing wakes us (the
         * claimer's NOWAIT call makes no system call), so the sleep is short; no lock is held. */
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000}, NULL);
    }
}

/* A shared state for this call: the first free one from a place that depends on the thread, so
 * that threads spread over them. NULL when all are taken at this moment. The place is a mix of
 * the address of the thread's TLS block: those of threads other than the first differ by whole
 * pages (and their stacks' sizes), so the address's own low bits would send them all to one. */
static struct swfi_tstate *claim_shared(struct swf_cache *c)
{
    if (!swfi_shared_made(c))
        return NULL;
    unsigned start = (unsigned)(swfi_mix64((uintptr_t)&swf_tls_self) >> 32);
    for (unsigned i = 0; i < SHARED_STATES; i++) {
        struct swfi_tstate *ts = c->shared[(start + i) % SHARED_STATES];
        if (swfi_shared_claim(ts, false))
            return ts;
    }
    return NULL;
}

struct swfi_tstate *swfi_tstate_for_call(struct swf_cache *c, bool *claimed)
{
    *claimed = false; /* the per-thread front end (this file) is the only caller */
    struct swfi_tstate *ts = swfi_tls_get(&c->owner);
    if (ts == NULL)
        ts = swfi_tstate_bind_nowait(c);
    if (ts == NULL && (ts = claim_shared(c)) != NULL)
        *claimed = true;
    return ts;
}

void swfi_shared_fork_done(struct swf_cache *c, bool child)
{
    for (unsigned i = 0; child && i < SHARED_STATES; i++)
        if (c->shared[i] != NULL && swfi_load_relaxed_32(&c->shared[i]->x_claim) != 0)
            swfi_store_relaxed_32(&c->shared[i]->x_claim, CLAIM_ABANDONED);
}

/* ---- the double-free search ---------------------------------------------------------------- */

static bool in_mag(const struct swf_magazine_ *m, const void *obj)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->obj[i] == obj)
            return true;
    return false;
}

bool swfi_tstate_holds(struct swf_cache *c, const struct swfi_tstate *ts, const void *obj)
{
    (void)c;
    return ts != NULL && (in_mag(ts->pub.loaded, obj) || in_mag(ts->pub.prev, obj));
}

/* ---- the front end ------------------------------------------------------------------------- */

/* The run of entries from i that are NULL (want_null) or not: one past its end. */
static size_t run_end(void *const *objs, size_t i, size_t n, bool want_null)
{
    while (i < n && (objs[i] == NULL) == want_null)
        i++;
    return i;
}

/* The calls: the thread's own magazines, else a shared state claimed for the call, else the
 * depot; the shared states before giving up. */

static void *thread_alloc(struct swf_cache *c)
{
    bool claimed;
    struct swfi_tstate *ts = swfi_tstate_for_call(c, &claimed);
    void *obj = ts != NULL ? swfi_take_bound(c, ts) : swfi_take_one_unbound(c);
    if (obj == NULL)
        obj = swfi_take_shared(c, claimed ? ts : NULL, false);
    if (obj != NULL)
        swfi_count_alloc(c, ts, SWF_NOWAIT);
    else
        swfi_count_fail(c, ts);
    swfi_tstate_done(ts, claimed);
    return obj;
}

static void *thread_take_locked(struct swf_cache *c, struct swfi_tstate *ts)
{
    void *obj = ts != NULL ? swfi_take_bound(c, ts) : swfi_take_one_unbound(c);
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
                swfi_mark_given(c, objs, i, i + 1);
                i++;
                given++;
                continue;
            }
            uint32_t k = m->n < end - i ? (uint32_t)m->n : (uint32_t)(end - i);
            m->n -= k;
            memcpy(&objs[i], &m->obj[m->n], k * sizeof(void *));
            swfi_mark_given(c, objs, i, i + k);
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
    size_t given = ts ? take_bulk_bound(c, ts, objs, n)
                      : swfi_take_bulk_unbound(c, objs, n, nulls, NULL, &popped);
    for (size_t i = 0; given < nulls && i < n; i++) {
        if (objs[i] != NULL)
            continue;
        if ((objs[i] = swfi_take_shared(c, claimed ? ts : NULL, false)) == NULL)
            break;
        swfi_mark_given(c, objs, i, i + 1);
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
                swfi_owners_ok(c, objs, i, i + 1);
                swfi_put_bound(c, ts, objs[i++]);
                freed++;
                continue;
            }
            uint32_t k = room < end - i ? room : (uint32_t)(end - i);
            swfi_owners_ok(c, objs, i, i + k);
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
        swfi_put_bulk_unbound(c, objs, n, NULL);
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
