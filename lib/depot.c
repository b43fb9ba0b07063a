/*
 * lib/depot.c - magazines and the depot, and the shared path of threads without a thread state.
 *
 * The depot keeps magazines on three lock-free stacks (istack.h): full (MAG_CAP objects), partial
 * (some) and empty. A bound thread exchanges whole magazines with it (tstate.c); a thread without
 * a state takes or puts single objects through a partial magazine: one pop and one push, O(1)
 * per object, so such threads never walk a list.
 *
 * Magazines are made only on the blocking paths (refill_lock held), in blocks of 64, and live
 * until the cache is destroyed.
 */
#include "cache_internal.h"

#include <errno.h>

int swf_mags_make(struct swf_cache *c)
{
    uint32_t first = swf_itable_grow(&c->mags);
    if (first == UINT32_MAX)
        return ENOMEM;
    for (uint32_t i = first; i < first + (1u << MAG_BLOCK_SHIFT); i++) {
        struct swf_mag *m = swf_mag_at(c, i);
        m->index = i;
        m->cache = c;
        swf_depot_put(c, m);
    }
    return 0;
}

void swf_mags_reserve(struct swf_cache *c, uint64_t n)
{
    while (swf_load_relaxed_64(&c->x_empty_mags) < n && swf_mags_make(c) == 0)
        ;
}

struct swf_mag *swf_mags_chain_next(struct swf_cache *c, struct swf_mag *m)
{
    uint32_t link = swf_load_relaxed_32(&m->pub.x_link_);
    return link ? swf_mag_at(c, link - 1) : NULL;
}

void swf_mags_put_chain(struct swf_cache *c, struct swf_mag *head)
{
    while (head != NULL) {
        struct swf_mag *next = swf_mags_chain_next(c, head);
        swf_depot_put(c, head);
        head = next;
    }
}

size_t swf_mags_take_chain(struct swf_cache *c, size_t count, bool locked, struct swf_mag **head)
{
    *head = NULL;
    size_t taken = 0;
    while (taken < count) {
        struct swf_mag *m = swf_depot_get_empty(c);
        if (m == NULL) {
            if (!locked)
                pthread_mutex_lock(&c->refill_lock);
            int err = swf_mags_make(c);
            if (!locked)
                pthread_mutex_unlock(&c->refill_lock);
            if (err != 0)
                break;
            continue;
        }
        swf_store_relaxed_32(&m->pub.x_link_, *head ? (*head)->index + 1 : 0);
        *head = m;
        taken++;
    }
    return taken;
}

void *swf_depot_take_one(struct swf_cache *c)
{
    void *obj;
    return swf_depot_take_into(c, &obj, 1) ? obj : NULL;
}

void swf_depot_put_one(struct swf_cache *c, void *obj)
{
    swf_depot_put_many(c, &obj, 1);
}

uint32_t swf_depot_take_into(struct swf_cache *c, void **dst, uint32_t want)
{
    uint32_t i = swf_istack_pop(&c->partial, &c->mags);
    if (i == UINT32_MAX)
        i = swf_istack_pop(&c->full, &c->mags);
    if (i == UINT32_MAX) { /* the loose list */
        struct swf_mag one;
        one.pub.n = 0;
        if (swf_loose_take(c, &one, 1) == 0)
            return 0;
        dst[0] = one.pub.obj[0];
        return 1;
    }
    struct swf_mag *m = swf_mag_at(c, i);
    swf_fetch_sub_relaxed_64(&c->x_depot_objs, m->pub.n);
    uint32_t k = m->pub.n < want ? m->pub.n : want;
    for (uint32_t j = 0; j < k; j++)
        dst[j] = m->pub.obj[--m->pub.n];
    swf_depot_put(c, m);
    return k;
}

void swf_depot_put_many(struct swf_cache *c, void *const *objs, size_t n)
{
    size_t done = 0;
    while (done < n) {
        uint32_t i = swf_istack_pop(&c->partial, &c->mags);
        struct swf_mag *m;
        if (i != UINT32_MAX) {
            m = swf_mag_at(c, i);
            swf_fetch_sub_relaxed_64(&c->x_depot_objs, m->pub.n);
        } else if ((m = swf_depot_get_empty(c)) == NULL) {
            while (done < n)
                swf_loose_push(c, objs[done++]);
            return;
        }
        while (m->pub.n < MAG_CAP && done < n)
            m->pub.obj[m->pub.n++] = objs[done++];
        swf_depot_put(c, m);
    }
}
