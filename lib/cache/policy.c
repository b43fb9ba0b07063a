/*
 * lib/cache/policy.c - where an allocation finds a free object, and where a free puts one: the
 * whole order, top to bottom, in this file. The places themselves know nothing of this order:
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
 * Every step is lock-free (the stacks' CAS, the bump index's CAS, the loose list's exchange), O(1)
 * per object save the spreading of a loose list, which moves each object once.
 */
#include "cache/cache_internal.h"

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
