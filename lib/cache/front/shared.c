/*
 * lib/cache/front/shared.c - the slow halves both front ends use: a thread with no state of its
 * own (single objects through the depot, or carved), the counting, the bulk calls' runs through
 * the depot, and a single free's check. The front ends themselves are thread.c (per-thread) and
 * pcpu.c (per-CPU), which never use each other's names (test/unit/layers.py).
 *
 * The order, every mode's, top to bottom:
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
#include "cache/front/front.h"

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

/* ---- counting and the bulk calls' runs through the depot ---------------------------------- */

void swfi_count_alloc(struct swf_cache *c, struct swfi_tstate *ts, enum swf_alloc_mode mode)
{
    if (ts != NULL)
        swfi_counter_add(mode == SWF_NOWAIT ? &ts->pub.x_allocs_nowait : &ts->x_allocs_wait, 1);
    else
        swfi_fetch_add_relaxed_64(mode == SWF_NOWAIT ? &c->x_allocs_nowait : &c->x_allocs_wait, 1);
}

void swfi_count_fail(struct swf_cache *c, struct swfi_tstate *ts)
{
    if (ts != NULL)
        swfi_counter_add(&ts->x_fails_nowait, 1);
    else
        swfi_fetch_add_relaxed_64(&c->x_fails_nowait, 1);
}

void *swfi_take_one_unbound(struct swf_cache *c)
{
    void *obj;
    return swfi_take_unbound(c, &obj, 1) ? obj : NULL;
}

/* objs[i .. end-1] were just handed out: move their full checks' states. Their free marks stay
 * (a bulk allocation does not touch the objects; cache.h). */
void swfi_mark_given(struct swf_cache *c, void *const *objs, size_t i, size_t end)
{
    for (; c->checks && i < end; i++)
        swfi_debug_transition(c, "swf_cache_alloc_bulk", objs[i], OBJ_FREE, OBJ_ALLOC);
}

/* Check the owner of objs[i .. end-1] (all non-NULL): cache.h's test against the chunk this
 * thread last freed into, the map for the others (which makes their chunk the remembered one). */
void swfi_owners_ok(struct swf_cache *c, void *const *objs, size_t i, size_t end)
{
    for (; i < end; i++)
        if (SWF_UNLIKELY(!swfi_owned(c, objs[i])))
            swfi_owner_check(c, "swf_cache_free_bulk", objs[i]);
}

size_t swfi_take_bulk_unbound(struct swf_cache *c, void **objs, size_t n, size_t nulls,
                              swfi_take_many_fn from_cpu, size_t *popped)
{
    size_t given = 0;
    void *buf[SWF_CACHE_MAGAZINE];
    uint32_t nbuf = 0, next = 0; /* objects in buf not given yet: buf[next .. nbuf-1] */
    for (size_t i = 0; i < n; i++) {
        if (objs[i] != NULL)
            continue;
        if (next == nbuf) {
            size_t want = nulls - given < SWF_CACHE_MAGAZINE ? nulls - given : SWF_CACHE_MAGAZINE;
            nbuf = from_cpu != NULL ? from_cpu(c, buf, (uint32_t)want) : 0;
            *popped += nbuf;
            if (nbuf == 0 && (nbuf = swfi_take_unbound(c, buf, SWF_CACHE_MAGAZINE)) == 0)
                break;
            next = 0;
        }
        objs[i] = buf[next++];
        swfi_mark_given(c, objs, i, i + 1);
        given++;
    }
    if (next < nbuf)
        swfi_put_unbound(c, buf + next, nbuf - next); /* took more than needed: back */
    return given;
}

/* buf[0 .. n-1] to this CPU's magazine as far as it has room when to_cpu is given (it counts
 * those itself), the rest to the depot. Returns how many went to the depot. */
static uint32_t put_buf(struct swf_cache *c, void *const *buf, uint32_t n, swfi_put_many_fn to_cpu)
{
    uint32_t kept = to_cpu != NULL && n > 0 ? to_cpu(c, buf, n) : 0;
    if (kept < n)
        swfi_put_unbound(c, buf + kept, n - kept);
    return n - kept;
}

void swfi_put_bulk_unbound(struct swf_cache *c, void *const *objs, size_t n,
                           swfi_put_many_fn to_cpu)
{
    void *buf[SWF_CACHE_MAGAZINE];
    uint32_t nbuf = 0;
    uint64_t to_depot = 0;
    for (size_t i = 0; i < n; i++) {
        if (objs[i] == NULL)
            continue;
        swfi_owners_ok(c, objs, i, i + 1);
        buf[nbuf++] = objs[i];
        if (nbuf == SWF_CACHE_MAGAZINE) {
            to_depot += put_buf(c, buf, nbuf, to_cpu);
            nbuf = 0;
        }
    }
    to_depot += put_buf(c, buf, nbuf, to_cpu);
    swfi_fetch_add_relaxed_64(&c->x_frees, to_depot);
}

/* ---- a single free's check ------------------------------------------------------------------ */

void swfi_free_check(struct swf_cache *c, struct swfi_tstate *ts, const char *fn, void *obj)
{
    swfi_owner_check(c, fn, obj);
    if (!swf_cache_marked_(&c->owner.head, obj))
        return;
    /* The magazines this free goes to: the thread's, or (per-CPU mode) its CPU's. */
    if (c->front->holds(c, ts, obj))
        swfi_die(fn, "double free of %p (cache '%s')", obj, c->name);
}
