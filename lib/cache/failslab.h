/*
 * lib/cache/failslab.h - failure injection for NOWAIT allocations (the state behind swf_failslab).
 */
#ifndef SWF_LIB_FAILSLAB_H
#define SWF_LIB_FAILSLAB_H

#include <stdbool.h>
#include <stdint.h>

#include "cache/store/store.h" /* first (base/rseq.h before cache.h); struct swfi_failslab_state */

#include "base/atomic.h"

/*
 * The settings in force, published as one pointer to an immutable block: a NOWAIT call that
 * loads the pointer (acquire) sees one complete set of parameters, never a mix of two settings,
 * whatever the interleaving with swf_cache_set_failslab. Only the call counter and the remaining
 * `times` change in a published block (atomically). Replaced blocks are kept until the cache is
 * destroyed, since a NOWAIT call may still be reading one: they are a few dozen bytes per
 * set_failslab call.
 */
struct swfi_failslab_block {
    unsigned int probability;
    uint64_t interval;
    uint64_t seed;
    uint64_t x_times; /* remaining failures as a signed count stored unsigned; -1 = unlimited */
    uint64_t x_calls; /* NOWAIT calls numbered so far */
    struct swfi_failslab_block *replaced; /* the block in force before this one */
};

/* Install fs (NULL: switch off). Writers are serialised by the caller's mutex. Returns 0 or
 * ENOMEM (nothing changed). Blocking (allocates). */
int swfi_failslab_set(struct swfi_failslab_state *s, const struct swf_failslab *fs);

/* Whether injection is on: one relaxed load, for the NOWAIT fast path. */
static inline bool swfi_failslab_on(const struct swfi_failslab_state *s)
{
    return swfi_load_relaxed_ptr((void *const *)&s->x_cur) != NULL;
}

/* Number this NOWAIT call and decide whether it fails. A thread that has a private slot for the
 * cache (owner.h: it was prepared) numbers its calls there with plain stores: *block is the
 * settings block it counts for (a new block restarts at 0), *calls its count. Other threads
 * (block NULL) share the block's atomic counter. Lock-free. */
bool swfi_failslab_should_fail(struct swfi_failslab_state *s, const void **block, uint64_t *calls);

/* Free every block (the cache is being destroyed: no call can be reading them). */
void swfi_failslab_fini(struct swfi_failslab_state *s);

/*
 * Apply SWF_FAILSLAB from the environment to a cache named name (may be NULL). Returns 0 (variable
 * unset, or set for another cache, or applied), EINVAL after printing the reason to stderr, or
 * ENOMEM.
 */
int swfi_failslab_from_env(struct swfi_failslab_state *s, const char *name);

#endif /* SWF_LIB_FAILSLAB_H */
