/*
 * lib/cache/front/tstate.c - thread states: a thread's pair of magazines for one cache (none, in
 * the per-CPU mode: counters and the free check's chunk alone), how the pools of them are kept,
 * and how a thread gives one back; both front ends bind them (thread.c with magazines, pcpu.c
 * without), and the owner's hooks (exit, fork) are here.
 *
 * In the per-thread mode (thread.c), a thread binds to a cache (owner.h's per-thread table, indexed
 * by the cache's handle) on its first blocking call on the cache (grow, a WAIT allocation), which
 * first prepares the thread (arms its exit hook, sizes its table) and makes a thread state and
 * magazines if the pools are dry. A prepared thread also binds lock-free on a NOWAIT call or a
 * free, from the spare pools, to a cache its table reaches: every blocking call sizes the table to
 * the owners alive then. A thread that cannot bind (never prepared, or the pools dry) claims one of
 * the shared states for the call, or takes single objects from the depot (shared.c), O(1) per
 * object.
 *
 * The thread states' table grows in blocks on the blocking paths, up to TS_BLOCKS_MAX blocks, as
 * the magazine table does; thread states come back to the free pool when their thread exits or
 * flushes, so the table holds as many as threads bound at once.
 */
#include "cache/front/front.h"

#include <errno.h>
#include <time.h>

int swfi_tstates_make(struct swf_cache *c)
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
        (void)swfi_tstates_make(c);
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

struct swfi_tstate *swfi_tstate_pop(struct swf_cache *c)
{
    if (!swfi_tls_bindable(&c->owner))
        return NULL;
    uint32_t i = swfi_istack_pop(&c->ts_free, &c->tstates);
    return i == UINT32_MAX ? NULL : swfi_itable_node(&c->tstates, i);
}

/* ---- fork ----------------------------------------------------------------------------------- */

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
