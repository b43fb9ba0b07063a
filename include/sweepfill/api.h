/*
 * sweepfill/api.h - conventions shared by every sweepfill header (each one includes this one):
 * how failures are reported (swf_error_reason), what misuse does (swf_debug_checks), public
 * names, and SWF_CONTAINER_OF.
 *
 * Errors: functions that can fail return 0 or a positive errno value (EINVAL, ENOMEM, EAGAIN,
 * EBUSY, ...), as pthreads does; they never crash on NULL pointers, zero or overflowing sizes
 * passed to them. Functions that return a pointer return NULL on failure and set errno. After any
 * failure, swf_error_reason() says which check failed or what ran out. The inline helpers of
 * list.h and registry.h do not check their arguments and set no reason: each is a few loads
 * and stores at most.
 *
 * Misuse: what is caught prints one line, "sweepfill: <function>: <what>", to stderr and aborts
 * (the line names the pointer and, for a cache, the cache). Every build catches, in O(1) per
 * free, a free of a pointer the cache never handed out (from malloc, into an object, another
 * cache's), the common double free (of an object still in the freeing thread's magazines;
 * cache.h at swf_cache_free says exactly when), and a pin put without its get (pin.h). The full
 * checks also catch a double free wherever the object is, a free of an object queued for a
 * deferred free (cache.h), and a linked member that still holds an object once
 * swf_feature_deactivate has taken every slot (a move during it: feature.h). They are on for
 * every cache of the process in a library built with them or run with SWF_DEBUG=checks
 * (swf_debug_checks says which), and for one cache created with swf_cache_config.checks = 1.
 * With them on for the process, every EINVAL reason is printed to stderr too, as "sweepfill:
 * <function>: EINVAL: <reason>". Misuse not caught is undefined behaviour.
 *
 * Every public symbol starts with swf_ (types, functions) or SWF_ (macros, constants); the shared
 * library exports nothing else. Names that end in an underscore are internal.
 */
#ifndef SWEEPFILL_API_H
#define SWEEPFILL_API_H

#include <stddef.h>

#if defined(SWF_BUILDING_LIBRARY)
#define SWF_API __attribute__((visibility("default")))
#else
#define SWF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Why the most recent failing sweepfill call on the calling thread failed, in words.
 *
 * Concurrency: any thread, any time; the reason is kept per thread.
 * Progress: Wait-free, with no allocation.
 * Ordering: none: it reads only thread-local and constant data.
 * Returns: a constant string with static storage duration, never NULL, naming the check or the
 * condition ("cfg->reserve is 0", "no object ready for this thread"). Like errno, it means
 * something only right after a call that reported failure (an error number, or NULL): no call
 * clears it, so after a successful call it may still name an earlier failure. A sweep that
 * returns 0 (swf_sweep(), a sweep SWF_SWEEP_DEFINE() made, the sweeps of feature.h and
 * registry.h) leaves it as the sweep found it: its SWF_NOWAIT allocations that failed, and that
 * its reserve made up for, never show; nor does swf_registry_add()'s when SWF_WAIT then served.
 * Before any failure on the thread, it says that none has failed.
 * Errors: None; it cannot fail.
 */
SWF_API const char *swf_error_reason(void);

/* For the sweep inline in sweep.h: the calling thread's reason as it stands (NULL before any
 * failure), and the same put back. The library's; not for other code. */
SWF_API const char *swf_reason_keep_(void);
SWF_API void swf_reason_restore_(const char *kept);

/* The environment variable that turns the full misuse checks on for the whole process: a comma-
 * or space-separated list of words, of which "checks" is the one this version knows. */
#define SWF_DEBUG_ENV "SWF_DEBUG"

/*
 * Whether the full misuse checks are on for every cache of the process.
 *
 * Concurrency: any thread, any time.
 * Progress: Wait-free, with no allocation.
 * Ordering: none: it reads a flag that is set once, when the library is loaded.
 * Returns: 1 when the library was built with meson -Ddebug_checks=true, or when SWF_DEBUG named
 * the word "checks" as the library was loaded; otherwise 0, also when single caches have the
 * checks (swf_cache_config.checks = 1).
 * Errors: None; it cannot fail.
 */
SWF_API int swf_debug_checks(void);

#ifdef __cplusplus
}
#endif

/*
 * SWF_CONTAINER_OF(ptr, type, member): the structure of type type that holds *ptr as its field
 * member.
 *
 * Concurrency: Any thread, any time; it touches no memory.
 * Progress: A constant-time address computation.
 * Ordering: None.
 * Returns: A pointer to the enclosing type, computed with offsetof() and no access, so ptr must
 * point at that field of a live type.
 * Errors: None; a member that type does not have is a compile-time error.
 */
#ifndef __cplusplus
#define SWF_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#else
#define SWF_CONTAINER_OF(ptr, type, member) \
    (reinterpret_cast<type *>(reinterpret_cast<char *>(ptr) - offsetof(type, member)))
#endif

/* Internal: what the inline code of the headers uses so that it compiles without warnings as
 * C and as C++ (-Wzero-as-null-pointer-constant, -Wold-style-cast). */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define SWF_NULL_ nullptr
#else
#define SWF_NULL_ NULL
#endif
#if defined(__cplusplus)
#define SWF_STATIC_CAST_(type, x)      (static_cast<type>(x))
#define SWF_REINTERPRET_CAST_(type, x) (reinterpret_cast<type>(x))
#else
#define SWF_STATIC_CAST_(type, x)      ((type)(x))
#define SWF_REINTERPRET_CAST_(type, x) ((type)(x))
#endif
/* A function named like a struct (swf_cache_stats, swf_registry_stats) hides the struct's
 * implicit constructor in C++, which g++ -Wshadow reports; the names are the C API. */
#if defined(__cplusplus) && defined(__GNUC__)
#define SWF_CXX_SHADOW_OFF_ \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wshadow\"")
#define SWF_CXX_SHADOW_ON_ _Pragma("GCC diagnostic pop")
#else
#define SWF_CXX_SHADOW_OFF_
#define SWF_CXX_SHADOW_ON_
#endif

/* SWF_VERSION_MAJOR/MINOR/PATCH, SWF_VERSION, SWF_VERSION_CHECK and swf_version() live here. */
#include "version.h"

#endif /* SWEEPFILL_API_H */
