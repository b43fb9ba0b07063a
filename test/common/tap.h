/*
 * test/common/tap.h - a minimal Test Anything Protocol producer for sweepfill's tests.
 *
 * ok(cond, fmt, ...) prints "ok N - what" or "not ok N - what" (plus the file and line of a
 * failure); skip(why, fmt, ...) prints a skipped point; tap_done() prints the plan "1..N" and
 * returns the exit status (1 if anything failed). Meson runs the programs with protocol 'tap' and
 * test/run counts the points. Thread-safe: points may be reported from several threads.
 */
#ifndef SWF_TEST_TAP_H
#define SWF_TEST_TAP_H

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "one_cpu.h"

/* SWF_TEST_ONE_CPU=1 (the unit and nowait suites set it, test/README.md): the process stays on
 * the CPU it started on (one_cpu.h says why). Each test of these suites counts exactly what a grow
 * made ready, so every thread stays on one CPU; the concurrent suite lets threads move. */
__attribute__((constructor)) static void tap_one_cpu(void)
{
    const char *env = getenv("SWF_TEST_ONE_CPU");
    if (env == NULL || strcmp(env, "1") != 0)
        return;
    if (one_cpu_stay() < 0)
        fprintf(stderr, "# SWF_TEST_ONE_CPU: sched_setaffinity failed; threads may move\n");
}

static int tap_count;
static int tap_failed;
static pthread_mutex_t tap_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 4, 5))) static inline bool tap_ok(bool pass, const char *file,
                                                                int line, const char *fmt, ...)
{
    pthread_mutex_lock(&tap_lock);
    va_list ap;
    printf("%sok %d - ", pass ? "" : "not ", ++tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!pass) {
        tap_failed++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    pthread_mutex_unlock(&tap_lock);
    return pass;
}

#define ok(cond, ...) tap_ok((cond), __FILE__, __LINE__, __VA_ARGS__)

__attribute__((format(printf, 1, 2))) static inline void diag(const char *fmt, ...)
{
    pthread_mutex_lock(&tap_lock);
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    pthread_mutex_unlock(&tap_lock);
}

__attribute__((format(printf, 1, 2))) static inline void skip(const char *fmt, ...)
{
    pthread_mutex_lock(&tap_lock);
    va_list ap;
    printf("ok %d # SKIP ", ++tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    pthread_mutex_unlock(&tap_lock);
}

/* Abort the whole program with a TAP bail-out: for setup that cannot go on. */
#define tap_require(cond, what)                                           \
    do {                                                                  \
        if (!(cond)) {                                                    \
            printf("Bail out! %s (%s:%d)\n", (what), __FILE__, __LINE__); \
            fflush(stdout);                                               \
            exit(2);                                                      \
        }                                                                 \
    } while (0)

/* xorshift64: the tests' deterministic random source (state must start non-zero). */
/*
 * The reasons (swf_error_reason()) that `function` gave for n causes of failure, causes[i] giving
 * reasons[i]: one point, ok when each is a non-empty sentence of its own, no two causes sharing
 * one.
 */
static inline void tap_distinct_reasons(const char *function, const char **causes,
                                        const char **reasons, size_t n)
{
    size_t clashes = 0;
    for (size_t i = 0; i < n; i++) {
        if (reasons[i] == NULL || reasons[i][0] == '\0') {
            diag("%s: no reason for %s", function, causes[i]);
            clashes++;
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            if (reasons[j] != NULL && strcmp(reasons[i], reasons[j]) == 0) {
                diag("%s: %s and %s share the reason \"%s\"", function, causes[j], causes[i],
                     reasons[i]);
                clashes++;
            }
        }
    }
    ok(clashes == 0, "%s: each of its %zu causes of EINVAL has a reason of its own", function, n);
}

static inline uint64_t tap_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline int tap_done(void)
{
    printf("1..%d\n", tap_count);
    fflush(stdout);
    return tap_failed ? 1 : 0;
}

/* True when built with a sanitizer: tests that fork into seccomp or limit memory skip then. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TAP_SANITIZED 1
#endif
#endif
#ifndef TAP_SANITIZED
#define TAP_SANITIZED 0
#endif

/* Defined when built with ThreadSanitizer: tests whose cases TSan reports first, or that start
 * threads in a child of a threaded fork, skip those cases then. */
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif

/* True when the environment variable `name` is set to something other than "" or "0". */
static inline bool tap_env_flag(const char *name)
{
    const char *e = getenv(name);
    return e != NULL && e[0] != '\0' && e[0] != '0';
}

/* True when the test runs under valgrind: `meson test --setup valgrind` (test/common/meson.build)
 * sets SWF_UNDER_VALGRIND=1. Tests that fork into seccomp skip then; heavy ones shrink. */
static inline bool tap_under_valgrind(void)
{
    return tap_env_flag("SWF_UNDER_VALGRIND");
}

/* True when the test runs under qemu user-mode emulation: test/stages/aarch64.sh sets
 * SWF_UNDER_QEMU=1. qemu-user makes its own system calls (so seccomp strict mode would kill it,
 * not the code under test), does not apply RLIMIT_AS to the guest, and runs 10-50 times slower:
 * tests that depend on the first two skip, and heavy ones shrink as they do under valgrind. */
static inline bool tap_under_qemu(void)
{
    return tap_env_flag("SWF_UNDER_QEMU");
}

/* Why forked cases skip under qemu-user: its fork of a guest process that has threads aborts in
 * qemu itself (qemu_plugin_vcpu_init_hook, cpu_exec assertions), and the library's watchdog
 * thread exists after the first watched wait. The native stages and aarch64_kernel run them. */
#define TAP_QEMU_THREADED_FORK                                                               \
    "qemu-user cannot fork a guest process that has threads (the watchdog is one after the " \
    "first watched wait); the native stages and aarch64_kernel run these cases"

#endif /* SWF_TEST_TAP_H */
