/*
 * lib/base/util.h - small helpers shared by the library's sources: branch hints, checked
 * arithmetic, argument validation and the debug-build misuse report.
 */
#ifndef SWF_LIB_UTIL_H
#define SWF_LIB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweepfill/api.h" /* SWF_CONTAINER_OF */

#define SWF_LIKELY(x)   __builtin_expect(!!(x), 1)
#define SWF_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Meson's debug_checks option (off in release installs): full checks from the start. */
#if defined(SWF_DEBUG_CHECKS) && SWF_DEBUG_CHECKS
#define SWF_DEBUG 1
#else
#define SWF_DEBUG 0
#endif

/* Whether the full misuse checks are on for the whole process: a debug-check build, or the
 * environment variable SWF_DEBUG names "checks" (read once, when the library is loaded; error.c).
 * A cache may also have them alone (swf_cache_config.checks). */
extern bool swfi_checks_all_on;

static inline bool swfi_checks_all(void)
{
    return swfi_checks_all_on;
}

/*
 * Misuse: print "sweepfill: <function>: <what>" on one line to stderr and abort. Never returns.
 */
__attribute__((noreturn, format(printf, 2, 3))) void swfi_die(const char *function, const char *fmt,
                                                              ...);

/*
 * Record why the calling public function fails with err (swf_error_reason() returns reason on
 * this thread until the next failure) and return err. reason is a string literal naming the
 * check or the condition. With the full checks on for the process (swfi_checks_all), it also
 * prints "sweepfill: <function>: <reason>" to stderr for EINVAL, always a caller's mistake.
 * Lock-free and allocation-free (the reason lives in initial-exec TLS), so the NOWAIT paths may use
 * it.
 */
int swfi_fail(const char *function, int err, const char *reason);

/* The same for functions that return a pointer: sets errno to err and returns NULL. */
void *swfi_fail_null(const char *function, int err, const char *reason);

/* Return err from the enclosing function when cond holds, recording reason: the cheap argument
 * checks every public function makes in every build. */
#define SWF_CHECK_ARG(cond, err, reason) SWF_CHECK_ARG_AS(__func__, cond, err, reason)

/* The same, naming fn: for a function whose caller is the public function the user called (the
 * inline path's out-of-line half, the validation several entry points share). */
#define SWF_CHECK_ARG_AS(fn, cond, err, reason)      \
    do {                                             \
        if (SWF_UNLIKELY(cond))                      \
            return swfi_fail((fn), (err), (reason)); \
    } while (0)

/*
 * A reason built in pieces, for messages that carry a number or a list: swfi_reason_start(&r),
 * then swfi_reason_add and swfi_reason_add_u64 (text beyond the buffer is cut short with "..."),
 * then swfi_fail(function, err, swfi_reason_text(&r, fallback)). swf_error_reason() promises
 * constant strings of static storage: the text is kept, once, in a static arena that only grows
 * (error.c; equal texts share one copy); when the arena is full, the literal fallback stands in.
 * Lock-free and allocation-free; the builder lives on the caller's stack.
 */
struct swfi_reason {
    size_t len;
    char text[480];
};
void swfi_reason_start(struct swfi_reason *r);
void swfi_reason_add(struct swfi_reason *r, const char *s);
void swfi_reason_add_u64(struct swfi_reason *r, uint64_t v);
const char *swfi_reason_text(const struct swfi_reason *r, const char *fallback);

static inline bool swfi_is_pow2(size_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

/* Round x up to a multiple of the power of two a; false on overflow. */
static inline bool swfi_round_up(size_t x, size_t a, size_t *out)
{
    if (x > SIZE_MAX - (a - 1))
        return false;
    *out = (x + a - 1) & ~(a - 1);
    return true;
}

static inline bool swfi_mul_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* Write every page of [p, p + len) once, so that the memory is backed before a lock-free path
 * writes it there: no page fault on that path (as long as the memory stays resident). Defined in
 * prefault.c. */
void swfi_prefault(void *p, size_t len);

struct ck_epoch;
struct ck_epoch_record;

/* The state of one grace-period wait (epoch_wait.c): pass it as the callback's argument. */
struct swfi_epoch_waiter {
    unsigned int scans;  /* scans that found a reader inside */
    unsigned int sleeps; /* futex sleeps so far */
    long sleep_ns;       /* the next sleep's timeout */
};

void swfi_epoch_waiter_init(struct swfi_epoch_waiter *w);

/*
 * The wait callback for ck_epoch_synchronize_wait / ck_epoch_barrier_wait (arg: a struct
 * swfi_epoch_waiter): spin through a few scans, then sleep on a futex until a read-side section
 * ends (or a short timeout passes).
 */
void swfi_epoch_wait(struct ck_epoch *epoch, struct ck_epoch_record *rec, void *arg);

/* Called by the library's read-side sections right after ck_epoch_end: wakes sleeping
 * grace-period waiters, if any (one relaxed load when none sleeps; a futex wake when one does). */
void swfi_epoch_section_ended(void);

/* In a child of fork: no grace-period waiter sleeps (owner.c's fork handler calls it). */
void swfi_epoch_wait_fork_child(void);

/* A 64-bit mixer (SplitMix64's finaliser): the failure injection's deterministic random source. */
static inline uint64_t swfi_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif /* SWF_LIB_UTIL_H */
