/*
 * sweepfill/api.h - conventions shared by every sweepfill header.
 *
 * Errors: functions that can fail return 0 or a positive errno value (EINVAL, ENOMEM, EAGAIN,
 * EBUSY, ...), as pthreads does; they never crash on NULL pointers, zero or overflowing sizes.
 * Functions that return a pointer return NULL on failure and set errno.
 *
 * Misuse that cannot be checked cheaply (a double free, a pointer the cache never handed out) is
 * caught in debug builds (NDEBUG not defined when sweepfill was built): sweepfill prints a message
 * naming the function to stderr and aborts. In release builds it is undefined behaviour.
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

#define SWF_VERSION_MAJOR 0
#define SWF_VERSION_MINOR 1
#define SWF_VERSION_PATCH 0

#endif /* SWEEPFILL_API_H */
