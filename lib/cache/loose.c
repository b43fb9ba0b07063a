/*
 * lib/cache/loose.c - the loose list: objects freed when no magazine had room for them.
 *
 * A Treiber stack linked through each object's first word, pushed one object at a time with a
 * release CAS and emptied only as a whole by an exchange (acquire): no pop of a single node, so
 * no ABA problem, and no tag to run out of. What a taker does with the chain (keep some, spread
 * the rest into magazines) is the allocation policy's business (policy.c); the blocking paths
 * drain the list into magazines, so it stays short.
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
