/*
 * lib/sweep/list_hash.c - the process-wide count of ck_hs map allocations and moves that
 * list_hash.h's ck_hs adapter compares to tell a resumed cursor's map from a new map at the same
 * address.
 */
#include "sweepfill/list_hash.h"

#include "base/atomic.h"

static uint64_t x_hs_generation;

void swf_ck_hs_changed(void)
{
    /* Relaxed: what orders the count before the writer's next change is ck_hs's own store fence
     * before it publishes a new map (or moves an entry), which covers every earlier store. */
    swfi_fetch_add_relaxed_64(&x_hs_generation, 1);
}

uint64_t swf_ck_hs_generation(void)
{
    return swfi_load_acquire_64(&x_hs_generation);
}
