/*
 * lib/cache/loose.c - the loose list: objects freed when no magazine had room for them.
 *
 * A Treiber stack linked through each object's first word, pushed one object at a time with a
 * release CAS and emptied only as a whole by an exchange (acquire): no pop of a single node, so
 * no ABA problem, and no tag to run out of. Whoever takes the list keeps what it needs and puts
 * the rest into empty magazines on the depot, so that a later taker does not walk it again; only
 * when the depot has no empty magazine either does the rest go back on the list (the one walk,
 * to find its tail). The blocking paths make magazines and drain the list, so it stays short.
 *
 * Links are read with relaxed atomic loads: a chain taken by exchange is private, but its links
 * were written by other threads before their release CAS, which the exchange acquired.
 */
#include "cache/cache_internal.h"

static void push_chain(struct swf_cache *c, void *first, void *last)
{
    void *head = swfi_load_relaxed_ptr(&c->x_loose);
    do {
        swfi_store_relaxed_ptr((void **)last, head);
        /* Release: the chain's links and the freeing threads' writes reach the next taker. */
    } while (!swfi_cas_release_ptr(&c->x_loose, &head, first));
}

static void *next_of(void *obj)
{
    return swfi_load_relaxed_ptr((void *const *)obj);
}

void swfi_loose_push(struct swf_cache *c, void *obj)
{
    swfi_fetch_add_relaxed_64(&c->x_loose_objs, 1);
    push_chain(c, obj, obj);
}

/* Move objects from a private chain into m until it holds `until`; returns the rest. */
static void *fill(struct swf_mag *m, void *chain, uint32_t until, uint64_t *moved)
{
    while (chain != NULL && m->pub.n < until) {
        m->pub.obj[m->pub.n++] = chain;
        chain = next_of(chain);
        ++*moved;
    }
    return chain;
}

/* Put a private chain into empty magazines (making them when `make`, refill_lock held); what does
 * not fit goes back on the list. Returns how many objects left the loose count. */
static uint64_t spread(struct swf_cache *c, void *chain, bool make)
{
    uint64_t moved = 0;
    while (chain != NULL) {
        struct swf_mag *m = swfi_depot_get_empty(c);
        if (m == NULL && make && swfi_mags_make(c) == 0)
            m = swfi_depot_get_empty(c);
        if (m == NULL)
            break;
        chain = fill(m, chain, MAG_CAP, &moved);
        swfi_depot_put(c, m);
    }
    if (chain != NULL) {
        void *last = chain;
        for (void *next; (next = next_of(last)) != NULL;)
            last = next;
        push_chain(c, chain, last);
    }
    return moved;
}

uint32_t swfi_loose_take(struct swf_cache *c, struct swf_mag *m, uint32_t room)
{
    if (swfi_load_relaxed_ptr(&c->x_loose) == NULL)
        return 0;
    /* Acquire pairs with push_chain's release CAS. */
    void *chain = swfi_exchange_acquire_ptr(&c->x_loose, NULL);
    uint64_t moved = 0;
    chain = fill(m, chain, m->pub.n + room, &moved);
    uint64_t spread_out = chain ? spread(c, chain, false) : 0;
    swfi_fetch_sub_relaxed_64(&c->x_loose_objs, moved + spread_out);
    return (uint32_t)moved;
}

void swfi_loose_drain(struct swf_cache *c)
{
    if (swfi_load_relaxed_ptr(&c->x_loose) == NULL)
        return;
    void *chain = swfi_exchange_acquire_ptr(&c->x_loose, NULL);
    swfi_fetch_sub_relaxed_64(&c->x_loose_objs, spread(c, chain, true));
}
