/*
 * sweepfill/api.h - conventions shared by every sweepfill header.
 *
 * Errors: functions that can fail return 0 or a positive errno value (EINVAL, ENOMEM, EAGAIN,
 * EBUSY, ...), as pthreads does; they never crash on NULL pointers, zero or overflowing sizes
 * passed to them. Functions that return a pointer return NULL on failure and set errno. After any
 * failure, swf_error_reason() says which check failed or what ran out, in words. (The inline
 * helpers of list.h and registry.h do not check their arguments: they are one load or store.)
 *
 * Misuse that cannot be checked cheaply (a double free, a pointer the cache never handed out) is
 * caught when sweepfill was built with debug checks (meson -Ddebug_checks=true; swf_debug_checks()
 * says): it prints "sweepfill: <function>: <what>" to stderr and aborts. Such builds also print
 * every EINVAL reason to stderr. Without debug checks such misuse is undefined behaviour.
 *
 * Every public symbol starts with swf_ (types, functions) or SWF_ (macros, constants); the shared
 * library exports nothing else.
 */
#ifndef SWEEPFILL_API_H
#define SWEEPFILL_API_H

#if defined(SWF_BUILDING_LIBRARY)
#define SWF_API __attribute__((visibility("default")))
#else
#define SWF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Why the most recent failing sweepfill call on the calling thread failed: a constant string
 * naming the check or condition ("cfg->reserve is 0", "no object ready for this thread"). Like
 * errno, successful calls leave it as it was. Never NULL. Any thread; wait-free; no allocation.
 */
SWF_API const char *swf_error_reason(void);

/* 1 when this build of the library has debug checks (meson -Ddebug_checks=true), else 0. */
SWF_API int swf_debug_checks(void);

#ifdef __cplusplus
}
#endif

/* SWF_VERSION_MAJOR/MINOR/PATCH, SWF_VERSION, SWF_VERSION_CHECK and swf_version() live here. */
#include "version.h"

#endif /* SWEEPFILL_API_H */
