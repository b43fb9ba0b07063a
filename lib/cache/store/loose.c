/*
 * lib/cache/store/loose.c - the loose list: objects freed when no magazine had room for them.
 *
 * A Treiber stack linked through each object's first word, pushed one object at a time with a
 * release CAS and emptied only as a whole by an exchange (acquire): no pop of a single node, so
 * no ABA problem, and no tag to run out of. When a taker looks here is the allocation policy's
 * business (front/shared.c); a taker keeps what it asked for and spreads the rest into empty
 * magazines on the depot (swfi_loose_fill), and the blocking paths drain the list into magazines
 * (swfi_loose_to_mags), so it stays short.
 *
 * Links are read with relaxed atomic loads: a chain taken by exchange is private, but its links
 * were written by other threads before their release CAS, which the exchange acquired.
 */
#include "cache/store/store.h"

static void push_chain(struct swf_cache *c, void *first, void *last)
{
    void *head = swfi_load_relaxed_ptr(&c->x_loose);
    do {
        swfi_store_relaxed_ptr((void **)last, head);
        /* Release: the chain's links and the freeing threads' writes reach the next taker. */
    } while (!swfi_cas_release_ptr(&c->x_loose, &head, first));
}

void *swfi_loose_next(void *obj)
{
    return swfi_load_relaxed_ptr((void *const *)obj);
}

void swfi_loose_push(struct swf_cache *c, void *obj)
{
    swfi_fetch_add_relaxed_64(&c->x_loose_objs, 1);
    push_chain(c, obj, obj);
}

void *swfi_loose_take_all(struct swf_cache *c)
{
    if (swfi_load_relaxed_ptr(&c->x_loose) == NULL)
        return NULL;
    /* Acquire pairs with push_chain's release CAS. */
    return swfi_exchange_acquire_ptr(&c->x_loose, NULL);
}

void swfi_loose_give_back(struct swf_cache *c, void *chain)
{
    if (chain == NULL)
        return;
    void *last = chain; /* the one walk of a chain: to find its tail */
    for (void *next; (next = swfi_loose_next(last)) != NULL;)
        last = next;
    push_chain(c, chain, last);
}

void swfi_loose_taken(struct swf_cache *c, uint64_t n)
{
    swfi_fetch_sub_relaxed_64(&c->x_loose_objs, n);
}

/* ---- the loose list, taken whole ------------------------------------------------------------ */

/* Move objects from a private chain into m until it holds `until`; returns the rest. */
static void *fill(struct swfi_magazine *m, void *chain, uint32_t until, uint64_t *moved)
{
    while (chain != NULL && m->pub.n < until) {
        m->pub.obj[m->pub.n++] = chain;
        chain = swfi_loose_next(chain);
        ++*moved;
    }
    return chain;
}

/* Put a private chain into empty magazines on the depot (making them when `make`, refill_lock
 * held); what does not fit goes back on the loose list. Returns how many left the loose list. */
static uint64_t spread(struct swf_cache *c, void *chain, bool make)
{
    uint64_t moved = 0;
    while (chain != NULL) {
        struct swfi_magazine *m = swfi_depot_get_empty(c);
        if (m == NULL && make && swfi_mags_make(c, 1) != 0)
            m = swfi_depot_get_empty(c);
        if (m == NULL)
            break;
        chain = fill(m, chain, SWF_CACHE_MAGAZINE, &moved);
        swfi_depot_put(c, m);
    }
    swfi_loose_give_back(c, chain);
    return moved;
}

/* Move up to `room` loose objects into m, the rest into empty depot magazines. Returns how many
 * moved into m. */
uint32_t swfi_loose_fill(struct swf_cache *c, struct swfi_magazine *m, uint32_t room)
{
    void *chain = swfi_loose_take_all(c);
    if (chain == NULL)
        return 0;
    uint64_t moved = 0;
    chain = fill(m, chain, m->pub.n + room, &moved);
    uint64_t spread_out = chain ? spread(c, chain, false) : 0;
    swfi_loose_taken(c, moved + spread_out);
    return (uint32_t)moved;
}

void swfi_loose_to_mags(struct swf_cache *c)
{
    void *chain = swfi_loose_take_all(c);
    if (chain != NULL)
        swfi_loose_taken(c, spread(c, chain, true));
}
