/*
 * lib/failslab.h - failure injection for NOWAIT allocations (the state behind swf_failslab).
 */
#ifndef SWF_LIB_FAILSLAB_H
#define SWF_LIB_FAILSLAB_H

#include <stdbool.h>
#include <stdint.h>

#include "sweepfill/cache.h"

struct swf_failslab_state {
    uint32_t x_on; /* read on every NOWAIT allocation; 0 keeps the fast path untouched */
    uint32_t probability;
    uint64_t interval;
    uint64_t x_times; /* remaining failures as a signed count stored unsigned; -1 = unlimited */
    uint64_t seed;
    uint64_t x_calls; /* NOWAIT calls numbered so far */
};

/* Install fs (NULL: switch off). Writers are serialised by the caller's mutex. */
void swf_failslab_set(struct swf_failslab_state *s, const struct swf_failslab *fs);

/* Number this NOWAIT call and decide whether it fails. Lock-free; called only when x_on. */
bool swf_failslab_should_fail(struct swf_failslab_state *s);

/*
 * Apply SWF_FAILSLAB from the environment to a cache named name (may be NULL). Returns 0 (variable
 * unset, or set for another cache, or applied) or EINVAL after printing the reason to stderr.
 */
int swf_failslab_from_env(struct swf_failslab_state *s, const char *name);

#endif /* SWF_LIB_FAILSLAB_H */
