/*
 * lib/sweep/check.h - the checks a sweep's configuration passes, shared by swf_sweep,
 * swf_sweep_validate, the sweeps SWF_SWEEP_DEFINE generates and swf_feature_create, each naming
 * itself in the messages (sweep.c).
 */
#ifndef SWF_LIB_SWEEP_CHECK_H
#define SWF_LIB_SWEEP_CHECK_H

#include "sweepfill/sweep.h"

/* Where the sweep's configuration sits in what the user passed: cfg itself (swf_sweep) or
 * cfg->sweep (swf_feature_create). Reasons name the fields as the user wrote them. */
enum swfi_sweep_in { SWFI_SWEEP_IN_CFG = 0, SWFI_SWEEP_IN_FEATURE = 1 };

/*
 * Validate cfg against ops (which replace cfg->list.ops) for the public function fn. Every
 * required field that is NULL is named in one reason (plus cfg->synchronize when
 * synchronize_missing, for the feature); then the other checks, the first that fails. Returns 0
 * or EINVAL, recorded with swfi_fail(fn, ...).
 */
int swfi_sweep_check(const struct swf_sweep_config *cfg, const struct swf_list_ops *ops,
                     const char *fn, enum swfi_sweep_in in, bool synchronize_missing);

/* The section bound a sweep of cfg over ops runs with: SWF_SWEEP_SECTION_BOUND_AUTO resolved
 * (SWF_SWEEP_SECTION_BOUND_DEFAULT where ops can pin, 0 where they cannot), anything else as
 * given. */
static inline size_t swfi_section_bound(const struct swf_sweep_config *cfg,
                                        const struct swf_list_ops *ops)
{
    return swf_section_bound_of_(cfg->section_bound, ops);
}

#endif /* SWF_LIB_SWEEP_CHECK_H */
