/*
 * lib/sweep/unsweep.h - the deactivation walk: take every slot of a live list, as the sweep
 * walks it (bounded sections, the cursor pinned across them), and hand the objects taken over to
 * be freed after a grace period. swf_feature_deactivate and swf_registry_deactivate both run it
 * (lib/sweep/unsweep.c).
 */
#ifndef SWF_LIB_SWEEP_UNSWEEP_H
#define SWF_LIB_SWEEP_UNSWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "sweepfill/sweep.h"

struct swfi_unsweep {
    const struct swf_list *list;   /* the members, their slots, and pins where the list can */
    const struct swf_guard *guard; /* a read-side section */
    size_t section_bound;          /* members one section visits at most; 0: no bound */
    void **batch;                  /* the caller's buffer for the objects taken ... */
    size_t batch_cap;              /* ... of this many */
    /* When the batch is full: true, double it with malloc and go on (a failed malloc hands the
     * batch over instead); false, hand it over (no allocation at all). */
    bool grow;
    /* Outside any section, with n > 0: free objs after a grace period. */
    void (*hand_over)(void *arg, void **objs, size_t n);
    void *arg;
};

/* Take every member's object and hand them all over, in batches; the last hand_over has been
 * called when this returns. A member linked after its place was passed, or moved there, keeps
 * its object (the callers' flags keep new members empty). */
void swfi_unsweep(const struct swfi_unsweep *u);

#endif /* SWF_LIB_SWEEP_UNSWEEP_H */
