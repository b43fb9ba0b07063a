/*
 * sweepfill/version.h - which sweepfill these headers belong to (SWF_VERSION_MAJOR, _MINOR,
 * _PATCH, SWF_VERSION, SWF_VERSION_CHECK), which one the program runs with (swf_version), and
 * what may change between versions (the ABI policy below). api.h includes it, so every
 * sweepfill header brings it in.
 *
 * Versions: MAJOR.MINOR.PATCH, the same as meson's project version (meson setup refuses to
 * configure when the numbers here disagree with it). MINOR and PATCH stay below 100, so that
 * SWF_VERSION orders versions as numbers.
 *
 * ABI policy. The shared library's soname is libsweepfill.so.0, and every symbol it exports is
 * versioned SWEEPFILL_0 (lib/sweepfill.map): the functions, the variable swf_array_ops and the
 * initial-exec TLS variable swf_thread_self_ (the inline path's, binding.h). Within soname 0:
 *   - compatible, and allowed in a minor release: adding functions, macros, enum constants and
 *     new types; giving a reserved field a meaning (see below);
 *   - incompatible, and only with a new soname (libsweepfill.so.1, version 1.0.0): removing or
 *     renaming an exported function or variable, changing its parameters, return type or type;
 *     changing the value of an enum constant or a flag (SWF_NOWAIT, SWF_HUGE_PAGES_AUTO,
 *     SWF_RESUME, SWF_PUBLISH_CAS, SWF_GUARD_BLOCKING_OK, ...) or of a constant that sizes a
 *     public struct (SWF_CACHE_MAGAZINE, SWF_PIN_GRACE_WORDS); and changing the size, member
 *     offsets or member types of a public struct that programs and the library share: those
 *     passed by pointer and filled by the program (swf_cache_config, swf_failslab,
 *     swf_sweep_config, swf_registry_config, swf_feature_config, swf_array) or by the library
 *     (swf_cache_stats, swf_sweep_stats, swf_registry_stats, swf_feature_stats, swf_guard,
 *     swf_grace), held by value inside
 *     swf_sweep_config (swf_list, swf_guard), called through (swf_list_ops: swf_array_ops,
 *     NAME_ops), or embedded in the program's members (swf_node, swf_pin: programs touch their
 *     fields only through sweepfill's functions).
 * No struct may grow. Room is reserved in two of them, and only there may a later minor version
 * add something:
 *   - swf_cache_config.reserved[4]: must be zero; swf_cache_create rejects a non-zero one with
 *     EINVAL. A later minor version may give a field a meaning whose zero value keeps the old
 *     behaviour, so a program built against older headers (which zero it) keeps working.
 *   - swf_cache_stats.reserved[6] (of 7: percpu took the first): the library writes zeros
 *     there; a later minor version may fill them with new counters. Programs must not rely on
 *     them being zero.
 * Every other public struct has no reserved room and stays exactly as it is within soname 0 (a
 * new option or counter needs a new function or a new struct). The opaque types (struct
 * swf_cache beyond its first bytes, struct swf_registry, struct swf_reader) may change freely.
 *
 * The inline NOWAIT path (cache_abi.h, SWF_CACHE_INLINE_ABI 4) reads and writes library memory
 * directly, so these never change within soname 0, neither their layout nor what the library
 * stores in them: struct swf_owner_head_, struct swf_magazine_, struct swf_tstate_,
 * struct swf_binding_, struct swf_thread_, the TLS variable swf_thread_self_ and its
 * initial-exec model, and the per-CPU slots and restartable sequences of rseq_abi.h. Inline
 * functions and macros (swf_cache_alloc_fast, swf_slot_*, the SWF_LIST_* adapters, list_urcu.h's
 * guards and grace, SWF_SWEEP_DEFINE and sweep_inline.h's walker, ...) are compiled into the
 * program; they may change only in ways that old copies of them keep working with the new library.
 * The walk structs of list_hash.h (swf_bucket_walk, swf_hs_walk) are used only by that inline code.
 */
#ifndef SWEEPFILL_VERSION_H
#define SWEEPFILL_VERSION_H

#include "api.h"

/* The headers' version, MAJOR.MINOR.PATCH. */
#define SWF_VERSION_MAJOR 0
#define SWF_VERSION_MINOR 1
#define SWF_VERSION_PATCH 0

/*
 * SWF_VERSION: the headers' version as one number, major * 10000 + minor * 100 + patch (0.1.0 is
 * 100). SWF_VERSION_CHECK(major, minor, patch): whether these headers are that version or later.
 *
 * Concurrency: Any thread, any time: a constant.
 * Progress: evaluated at compile time.
 * Ordering: None.
 * Returns: 1 when the headers are that version or later, else 0 (SWF_VERSION: the headers'
 * version number); both are integer constant expressions, usable in #if.
 * Errors: none.
 */
#define SWF_VERSION (SWF_VERSION_MAJOR * 10000 + SWF_VERSION_MINOR * 100 + SWF_VERSION_PATCH)
#define SWF_VERSION_CHECK(major, minor, patch) \
    (SWF_VERSION >= (major)*10000 + (minor)*100 + (patch))

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The version of the library the program runs with, as SWF_VERSION computes it for the headers.
 *
 * Concurrency: Any thread, any time: a constant.
 * Progress: wait-free, with no allocation.
 * Ordering: None.
 * Returns: the library's version number.
 * Errors: none; it cannot fail.
 */
SWF_API unsigned swf_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_VERSION_H */
