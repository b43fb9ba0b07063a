/*
 * lib/cache/depot.c - the depot's shared path, for threads without a thread state.
 *
 * The depot keeps magazines on three lock-free stacks (istack.h): full (MAG_CAP objects), partial
 * (some) and empty. A bound thread exchanges whole magazines with it (tstate.c); a thread without
 * a state takes or puts single objects through a partial magazine: one pop and one push, O(1)
 * per object, so such threads never walk a list. When the depot has no magazine to give, these
 * paths fall back on the loose list (loose.c); magazines are made in mag.c.
 */
#include "cache/cache_internal.h"

void *swfi_depot_take_one(struct swf_cache *c)
{
    void *obj;
    return swfi_depot_take_into(c, &obj, 1) ? obj : NULL;
}

void swfi_depot_put_one(struct swf_cache *c, void *obj)
{
    swfi_depot_put_many(c, &obj, 1);
}

uint32_t swfi_depot_take_into(struct swf_cache *c, void **dst, uint32_t want)
{
    uint32_t i = swfi_istack_pop(&c->partial, &c->mags);
    if (i == UINT32_MAX)
        i = swfi_istack_pop(&c->full, &c->mags);
    if (i == UINT32_MAX) { /* the loose list */
        struct swf_mag one;
        one.pub.n = 0;
        if (swfi_loose_take(c, &one, 1) == 0)
            return 0;
        dst[0] = one.pub.obj[0];
        return 1;
    }
    struct swf_mag *m = swfi_mag_at(c, i);
    swfi_fetch_sub_relaxed_64(&c->x_depot_objs, m->pub.n);
    uint32_t k = m->pub.n < want ? m->pub.n : want;
    for (uint32_t j = 0; j < k; j++)
        dst[j] = m->pub.obj[--m->pub.n];
    swfi_depot_put(c, m);
    return k;
}

void swfi_depot_put_many(struct swf_cache *c, void *const *objs, size_t n)
{
    size_t done = 0;
    while (done < n) {
        uint32_t i = swfi_istack_pop(&c->partial, &c->mags);
        struct swf_mag *m;
        if (i != UINT32_MAX) {
            m = swfi_mag_at(c, i);
            swfi_fetch_sub_relaxed_64(&c->x_depot_objs, m->pub.n);
        } else if ((m = swfi_depot_get_empty(c)) == NULL) {
            while (done < n)
                swfi_loose_push(c, objs[done++]);
            return;
        }
        while (m->pub.n < MAG_CAP && done < n)
            m->pub.obj[m->pub.n++] = objs[done++];
        swfi_depot_put(c, m);
    }
}
