/*
 * lib/base/tsan.h - happens-before annotations for what ThreadSanitizer cannot see.
 *
 * A ck_epoch grace period orders every read-side section that ended before it with whatever the
 * waiting thread does next (typically a free), but it does so through ck's own fences and
 * volatile loads, invisible to TSan. sweepfill's epoch guards therefore "release" on the epoch
 * object when a section ends, and its grace-period waits "acquire" on it once the wait is over:
 * the same edge the grace period guarantees, stated to TSan. (It over-approximates: a section
 * that ended after the wait began also gets an edge, which can hide a race but never invents
 * one.) Without TSan these are no-ops.
 */
#ifndef SWF_LIB_TSAN_H
#define SWF_LIB_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define SWF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWF_TSAN 1
#endif
#endif

#ifdef SWF_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define swfi_tsan_release(addr) __tsan_release((void *)(addr))
#define swfi_tsan_acquire(addr) __tsan_acquire((void *)(addr))
#else
#define swfi_tsan_release(addr) ((void)(addr))
#define swfi_tsan_acquire(addr) ((void)(addr))
#endif

#endif /* SWF_LIB_TSAN_H */
