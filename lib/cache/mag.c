/*
 * lib/cache/mag.c - making magazines, and private chains of empty ones.
 *
 * Magazines are made only on the blocking paths (refill_lock held), in blocks of 64, and live
 * until the cache is destroyed; new ones go on the depot's empty stack. The policy (policy.c)
 * makes them when spreading the loose list finds no empty one.
 */
#include "cache/cache_internal.h"

#include <errno.h>

int swfi_mags_make(struct swf_cache *c)
{
    uint32_t first = swfi_itable_grow(&c->mags);
    if (first == UINT32_MAX)
        return ENOMEM;
    for (uint32_t i = first; i < first + (1u << MAG_BLOCK_SHIFT); i++) {
        struct swf_mag *m = swfi_mag_at(c, i);
        m->index = i;
        m->cache = c;
        swfi_depot_put(c, m);
    }
    return 0;
}

void swfi_mags_reserve(struct swf_cache *c, uint64_t n)
{
    while (swfi_load_relaxed_64(&c->x_empty_mags) < n && swfi_mags_make(c) == 0)
        ;
}

struct swf_mag *swfi_mags_chain_next(struct swf_cache *c, struct swf_mag *m)
{
    uint32_t link = swfi_load_relaxed_32(&m->pub.x_link_);
    return link ? swfi_mag_at(c, link - 1) : NULL;
}

void swfi_mags_put_chain(struct swf_cache *c, struct swf_mag *head)
{
    while (head != NULL) {
        struct swf_mag *next = swfi_mags_chain_next(c, head);
        swfi_depot_put(c, head);
        head = next;
    }
}

size_t swfi_mags_take_chain(struct swf_cache *c, size_t count, bool locked, struct swf_mag **head)
{
    *head = NULL;
    size_t taken = 0;
    while (taken < count) {
        struct swf_mag *m = swfi_depot_get_empty(c);
        if (m == NULL) {
            if (!locked)
                pthread_mutex_lock(&c->refill_lock);
            int err = swfi_mags_make(c);
            if (!locked)
                pthread_mutex_unlock(&c->refill_lock);
            if (err != 0)
                break;
            continue;
        }
        swfi_store_relaxed_32(&m->pub.x_link_, *head ? (*head)->index + 1 : 0);
        *head = m;
        taken++;
    }
    return taken;
}
