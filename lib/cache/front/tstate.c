/*
 * lib/cache/front/tstate.c - thread states: a thread's pair of magazines for one cache, how a
 * thread gets one, and how it gives it back.
 *
 * A thread binds to a cache (owner.h's per-thread table, indexed by the cache's handle) on its
 * first blocking call on the cache (grow, a WAIT allocation), which first prepares the thread
 * (arms its exit hook, sizes its table) and makes a thread state and magazines if the pools are
 * dry. A prepared thread also binds lock-free on a NOWAIT call or a free, from the spare pools,
 * to a cache its table reaches: every blocking call sizes the table to the owners alive then.
 * A thread that cannot bind (never prepared, or the pools dry) claims one of the shared states
 * for the call, or takes single objects from the depot (policy.c), O(1) per object.
 *
 * The thread states' table grows in blocks on the blocking paths, up to TS_BLOCKS_MAX blocks, as
 * the magazine table does; thread states come back to the free pool when their thread exits or
 * flushes, so the table holds as many as threads bound at once.
 */
#include "cache/front/front.h"

#include <errno.h>
#include <time.h>

static int make_tstates(struct swf_cache *c)
{
    uint32_t first = swfi_itable_grow(&c->tstates, 1);
    if (first == UINT32_MAX)
        return ENOMEM;
    for (uint32_t i = first; i < first + (1u << TS_BLOCK_SHIFT); i++) {
        struct swfi_tstate *ts = swfi_itable_node(&c->tstates, i);
        ts->pub.index_ = i;
        swfi_istack_push(&c->ts_free, &c->tstates, i);
    }
    return 0;
}

void swfi_pools_replenish(struct swf_cache *c)
{
    (void)c->front->first_use(c); /* best effort, as the rest */
    swfi_mags_reserve(c, SPARE_EMPTY_MAGS);
    if (swfi_istack_empty(&c->ts_free))
        (void)make_tstates(c);
    swfi_loose_to_mags(c);
}

void swfi_tstate_release(struct swf_cache *c, struct swfi_tstate *ts)
{
    if (ts->pub.loaded != NULL) { /* the per-CPU mode's states hold no magazines */
        swfi_depot_put(c, swfi_ts_loaded(ts));
        swfi_depot_put(c, swfi_ts_prev(ts));
    }
    swfi_ts_set(ts, NULL, NULL);
    swfi_istack_push(&c->ts_free, &c->tstates, ts->pub.index_);
}

static void release_hook(struct swfi_tls_owner *o, void *state)
{
    swfi_tstate_release(SWF_CONTAINER_OF(o, struct swf_cache, owner), state);
}

/* A free thread state for the calling thread, lock-free: NULL when the thread was never prepared
 * (swfi_tls_bindable) or the pool is dry. */
static struct swfi_tstate *pop_state(struct swf_cache *c)
{
    if (!swfi_tls_bindable(&c->owner))
        return NULL;
    uint32_t i = swfi_istack_pop(&c->ts_free, &c->tstates);
    return i == UINT32_MAX ? NULL : swfi_itable_node(&c->tstates, i);
}

struct swfi_tstate *swfi_tstate_bind_nowait(struct swf_cache *c)
{
    struct swfi_tstate *ts = pop_state(c);
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
        if (swfi_istack_empty(&c->ts_free) && make_tstates(c) != 0)
            return NULL;
        swfi_mags_reserve(c, 2 + SPARE_EMPTY_MAGS);
    }
    return swfi_tstate_bind_nowait(c);
}

struct swfi_tstate *swfi_tstate_bind_bare(struct swf_cache *c)
{
    /* As swfi_tstate_bind_locked: the table made to reach every owner alive now. */
    int err = swfi_tls_prepare(&c->owner);
    if (swfi_tls_get(&c->owner) != NULL || err != 0 ||
        (swfi_istack_empty(&c->ts_free) && make_tstates(c) != 0))
        return NULL;
    struct swfi_tstate *ts = pop_state(c);
    if (ts != NULL) { /* counters and the free check's chunk only: no magazines */
        swfi_ts_set(ts, NULL, NULL);
        swfi_tls_bind(&c->owner, ts);
    }
    return NULL; /* the per-CPU calls need no state: the caller gets none */
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
        if (swfi_istack_empty(&c->ts_free) && make_tstates(c) != 0)
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
    *claimed = false; /* the per-thread mode's front end (policy.c) is the only caller */
    struct swfi_tstate *ts = swfi_tls_get(&c->owner);
    if (ts == NULL)
        ts = swfi_tstate_bind_nowait(c);
    if (ts == NULL && (ts = claim_shared(c)) != NULL)
        *claimed = true;
    return ts;
}

/* ---- fork ----------------------------------------------------------------------------------- */

void swfi_shared_fork_done(struct swf_cache *c, bool child)
{
    for (unsigned i = 0; child && i < SHARED_STATES; i++)
        if (c->shared[i] != NULL && swfi_load_relaxed_32(&c->shared[i]->x_claim) != 0)
            swfi_store_relaxed_32(&c->shared[i]->x_claim, CLAIM_ABANDONED);
}

/* The refill lock: no grow, WAIT allocation or drain is under way at the fork; then the front
 * end's part: in the per-CPU mode, no move of a CPU's magazine is under way either (percpu.c
 * says how). */
static void fork_prepare(struct swfi_tls_owner *o)
{
    struct swf_cache *c = SWF_CONTAINER_OF(o, struct swf_cache, owner);
    pthread_mutex_lock(&c->refill_lock);
    c->front->fork_prepare(c);
}

static void fork_parent(struct swfi_tls_owner *o)
{
    struct swf_cache *c = SWF_CONTAINER_OF(o, struct swf_cache, owner);
    c->front->fork_done(c, false);
    pthread_mutex_unlock(&c->refill_lock);
}

/*
 * In the child only the forking thread exists. The depot, the loose list and the tables are
 * consistent (every change is one compare-and-swap), and the forking thread's own state is
 * intact (it was inside fork, not inside the cache). Objects that other threads held at that
 * instant - in their magazines, or in a magazine they had popped - stay where they are: they are
 * counted as ready but no thread of the child will hand them out, and destroy's recount, told by
 * `forked`, allows for them (validate.c). No CPU's magazine was moving (fork_prepare waited), so
 * the counts are whole. A shared state claimed at that instant stays claimed, marked abandoned so
 * that a WAIT allocation does not wait for a claimer that does not exist here. The refill lock
 * was held by fork_prepare; it is made new.
 */
static void fork_child(struct swfi_tls_owner *o)
{
    struct swf_cache *c = SWF_CONTAINER_OF(o, struct swf_cache, owner);
    c->forked = true;
    c->front->fork_done(c, true);
    pthread_mutex_init(&c->refill_lock, NULL);
}

const struct swfi_owner_ops swfi_cache_owner_ops = {
    .release = release_hook,
    .fork_prepare = fork_prepare,
    .fork_parent = fork_parent,
    .fork_child = fork_child,
    .fork_rank = 1, /* after the registries: they take refill locks while holding theirs */
};
