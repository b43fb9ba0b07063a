/*
 * sweepfill/version.h - which sweepfill these headers belong to, and what may change between
 * versions. api.h includes it, so every sweepfill header brings it in.
 *
 * Versions: MAJOR.MINOR.PATCH, the same as meson's project version (meson setup refuses to
 * configure when the numbers here disagree with it). MINOR and PATCH stay below 100, so that
 * SWF_VERSION orders versions as numbers.
 *
 * ABI policy. The shared library's soname is libsweepfill.so.0, and every symbol it exports is
 * versioned SWEEPFILL_0 (lib/sweepfill.map). Within soname 0:
 *   - compatible, and allowed in a minor release: adding functions, macros, enum constants and
 *     new types; giving a reserved field a meaning (see below);
 *   - incompatible, and only with a new soname (libsweepfill.so.1, version 1.0.0): removing or
 *     renaming an exported function or variable, changing its parameters or return type, and
 *     changing the size, member offsets or member types of a public struct that programs use by
 *     value or by pointer: swf_cache_config, swf_failslab, swf_cache_stats, swf_sweep_config,
 *     swf_sweep_stats, swf_guard, swf_list, swf_list_ops, swf_array, swf_node,
 *     swf_registry_config, swf_registry_stats; and changing the value of an enum constant or a
 *     flag (SWF_NOWAIT, SWF_RESUME, SWF_GUARD_BLOCKING_OK, ...).
 * Which structs may grow: none, except into room its header reserves. A reserved field is
 * documented as must-be-zero; a later minor version may give it a meaning whose zero value keeps
 * the old behaviour, so a program built against older headers (which zeroes it) keeps working,
 * and the library rejects a non-zero reserved field it does not know with EINVAL. Statistics
 * structs (swf_cache_stats, swf_sweep_stats, swf_registry_stats) are filled by the library through
 * the caller's pointer and never grow within soname 0. The opaque types (struct swf_cache,
 * struct swf_registry, struct swf_reader) have no public layout and may change freely.
 * Inline functions and macros (swf_slot_*, SWF_LIST_*, SWF_SWEEP_DEFINE) are compiled into the
 * program; they may change only in ways that old copies of them keep working with the new library.
 *
 * test/stages/abi.sh checks the built library against the baseline in abi/ with abidiff; after a
 * deliberate, compatible API addition, abi/update.sh regenerates the baseline.
 */
#ifndef SWEEPFILL_VERSION_H
#define SWEEPFILL_VERSION_H

#include "api.h"

#define SWF_VERSION_MAJOR 0
#define SWF_VERSION_MINOR 1
#define SWF_VERSION_PATCH 0

/* The version as one number: major * 10000 + minor * 100 + patch (0.1.0 is 100). */
#define SWF_VERSION (SWF_VERSION_MAJOR * 10000 + SWF_VERSION_MINOR * 100 + SWF_VERSION_PATCH)

/* True when these headers are version major.minor.patch or later; usable in #if. */
#define SWF_VERSION_CHECK(major, minor, patch) \
    (SWF_VERSION >= (major)*10000 + (minor)*100 + (patch))

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The version of the library the program runs with, as SWF_VERSION computes it for the headers:
 * a program built against older headers may compare the two to learn what the library offers.
 * Any thread, any time; wait-free; no allocation. Never fails.
 */
SWF_API unsigned swf_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_VERSION_H */
