/*
 * lib/base/section.c - the calling thread's sections and blocking call (section.h), and the
 * watchdog that reports a wait that does not end.
 *
 * The watchdog: a table of SLOTS watched waits and one thread, started by the first watched wait,
 * that sleeps until the nearest deadline (or, while nothing is watched, until a wait begins) and
 * prints one line per wait past its deadline. A slot's state word holds a generation (bumped at
 * each claim) and a status; the fields are written between the claim and the release store of
 * ACTIVE, and the watchdog prints only if its compare-and-swap ACTIVE -> SAID finds the word it
 * read before the fields, so the line it prints is the one of that wait. A waiter never waits for
 * the watchdog: ending a watch is one compare-and-swap loop on the slot.
 *
 * Waking: every watch bumps x_wake once it is ACTIVE. The watchdog reads x_wake before it scans;
 * with a deadline ahead it sleeps until the nearest (a watch it did not see began later, so its
 * deadline is later still); with none it sleeps on x_wake for as long as it stays as read. Before
 * that sleep it raises x_idle and reads x_wake again, and a watch reads x_idle after its bump (all
 * sequentially consistent): either the watchdog sees the bump and scans again, or the watch sees
 * x_idle and wakes it. A slot whose line was printed is not scanned again, so a wait that never
 * ends costs the watchdog nothing after its line.
 *
 * fork: the child has no watchdog thread and no wait in progress (only the forking thread runs
 * there, and it is not waiting): the table is emptied and the child's waits go unwatched. It
 * starts no watchdog of its own: after a fork of a threaded process only async-signal-safe calls
 * are allowed until exec (pthread_create is not one), and ThreadSanitizer ends such a child.
 */
#include "base/section.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/util.h"

_Thread_local unsigned int swfi_section_depth_ __attribute__((tls_model("initial-exec")));

/* The outermost blocking public call running on this thread, whether its watchdog line was
 * printed, and whether a wait of this thread is watched now. */
static _Thread_local const char *current_call __attribute__((tls_model("initial-exec")));
static _Thread_local bool call_said __attribute__((tls_model("initial-exec")));
static _Thread_local bool watching __attribute__((tls_model("initial-exec")));

int swfi_call_begin(const char *function)
{
    if (SWF_UNLIKELY(swfi_section_depth_ > 0))
        swfi_die(function,
                 "called inside a read-side section of a sweepfill guard on this thread (%u "
                 "open): a blocking call there can wait for itself; leave the section first",
                 swfi_section_depth_);
    if (current_call != NULL)
        return 0;
    current_call = function;
    call_said = false;
    return 1;
}

void swfi_call_end(int outermost)
{
    if (outermost)
        current_call = NULL;
}

const char *swfi_call_name(const char *fallback)
{
    return current_call != NULL ? current_call : fallback;
}

static const char *errno_name(int err)
{
    switch (err) {
    case EDEADLK:
        return "EDEADLK";
    case EAGAIN:
        return "EAGAIN";
    case EPERM:
        return "EPERM";
    case EINVAL:
        return "EINVAL";
    case EBUSY:
        return "EBUSY";
    case EOWNERDEAD:
        return "EOWNERDEAD";
    case ENOTRECOVERABLE:
        return "ENOTRECOVERABLE";
    default:
        return "an error";
    }
}

void swfi_lock_failed(const char *fallback, const char *what, int err, const char *hint)
{
    swfi_die(swfi_call_name(fallback), "%s failed: %s (%s)%s%s", what, strerror(err),
             errno_name(err), hint != NULL ? ": " : "", hint != NULL ? hint : "");
}

/* ---- the watchdog ------------------------------------------------------------------------- */

enum { SLOTS = 32 };
enum { FREE = 0u, FILLING = 1u, ACTIVE = 2u, SAID = 3u, STATUS = 3u, GENERATION = 4u };

struct watch {
    uint32_t x_state; /* generation | status */
    uint32_t pad_;
    uint64_t x_deadline_ns;
    void *x_function, *x_what, *x_cause; /* string literals */
} __attribute__((aligned(64)));

static struct watch table[SLOTS];
static uint32_t x_wake; /* bumped by each watch once it is ACTIVE */
static uint32_t x_idle; /* the watchdog sleeps with no deadline ahead */
enum { NEVER = 2u };
static uint32_t x_started; /* 1: a watchdog thread exists (or is being made); NEVER: a child of
                              fork, which starts none (top) */
static uint32_t x_delay_ms = SWFI_WATCH_DELAY_MS;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void futex_wait(uint32_t *word, uint32_t seen, uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, ns == UINT64_MAX ? NULL : &ts, NULL, 0);
}

static void say(struct watch *w, uint32_t seen)
{
    const char *function = swfi_load_relaxed_ptr(&w->x_function);
    const char *what = swfi_load_relaxed_ptr(&w->x_what);
    const char *cause = swfi_load_relaxed_ptr(&w->x_cause);
    uint32_t expected = seen;
    if (!swfi_cas_acq_rel_32(&w->x_state, &expected, (seen & ~STATUS) | SAID))
        return; /* it ended (or a newer wait took the slot) while we read */
    unsigned int ms = swfi_load_relaxed_32(&x_delay_ms);
    char delay[32];
    if (ms % 1000 == 0)
        snprintf(delay, sizeof(delay), "%u s", ms / 1000);
    else
        snprintf(delay, sizeof(delay), "%u ms", ms);
    fprintf(stderr, "sweepfill: %s: still waiting for %s after %s: %s\n", function, what, delay,
            cause);
}

/* One scan: report what is past its deadline; the nearest deadline not reached, or UINT64_MAX. */
static uint64_t scan(uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (int i = 0; i < SLOTS; i++) {
        uint32_t s = swfi_load_acquire_32(&table[i].x_state);
        if ((s & STATUS) != ACTIVE)
            continue;
        uint64_t deadline = swfi_load_relaxed_64(&table[i].x_deadline_ns);
        if (now >= deadline)
            say(&table[i], s);
        else if (deadline < next)
            next = deadline;
    }
    return next;
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        uint32_t seen = swfi_load_seq_cst_32(&x_wake);
        uint64_t now = now_ns();
        uint64_t next = scan(now);
        if (next != UINT64_MAX) {
            futex_wait(&x_wake, seen, next - now);
            continue;
        }
        swfi_store_seq_cst_32(&x_idle, 1);
        if (swfi_load_seq_cst_32(&x_wake) == seen)
            futex_wait(&x_wake, seen, UINT64_MAX);
        swfi_store_seq_cst_32(&x_idle, 0);
    }
    return NULL;
}

/* Only the forking thread runs in the child, and it is not inside a watched wait. */
static void fork_child(void)
{
    for (int i = 0; i < SLOTS; i++) {
        uint32_t s = swfi_load_relaxed_32(&table[i].x_state);
        swfi_store_relaxed_32(&table[i].x_state, (s & ~STATUS) | FREE);
    }
    swfi_store_relaxed_32(&x_idle, 0);
    swfi_store_relaxed_32(&x_started, NEVER);
    watching = false;
}

static void register_fork_child(void)
{
    (void)pthread_atfork(NULL, NULL, fork_child);
}

/* Start the watchdog unless it runs; false if no thread could be made (then nothing is watched,
 * and a later wait tries again). */
static bool watchdog_running(void)
{
    uint32_t started = swfi_load_acquire_32(&x_started);
    if (SWF_LIKELY(started != 0))
        return started == 1;
    uint32_t expected = 0;
    if (!swfi_cas_acq_rel_32(&x_started, &expected, 1))
        return true;
    pthread_once(&atfork_once, register_fork_child);
    /* No signal of the process is delivered to the watchdog: it blocks them all. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    int err = pthread_create(&t, &attr, watchdog, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        swfi_store_release_32(&x_started, 0);
        return false;
    }
    (void)pthread_setname_np(t, "swf-watchdog");
    return true;
}

int swfi_watch_begin(const char *what, const char *cause)
{
    return swfi_watch_begin_in("a sweepfill call", what, cause);
}

int swfi_watch_begin_in(const char *fallback, const char *what, const char *cause)
{
    if (watching || call_said || !watchdog_running())
        return 0;
    for (int i = 0; i < SLOTS; i++) {
        struct watch *w = &table[i];
        uint32_t s = swfi_load_relaxed_32(&w->x_state);
        if ((s & STATUS) != FREE)
            continue;
        uint32_t gen = (s & ~STATUS) + GENERATION;
        if (!swfi_cas_acq_rel_32(&w->x_state, &s, gen | FILLING))
            continue;
        swfi_store_relaxed_ptr(&w->x_function, (void *)swfi_call_name(fallback));
        swfi_store_relaxed_ptr(&w->x_what, (void *)what);
        swfi_store_relaxed_ptr(&w->x_cause, (void *)cause);
        uint64_t delay = (uint64_t)swfi_load_relaxed_32(&x_delay_ms) * 1000000u;
        swfi_store_relaxed_64(&w->x_deadline_ns, now_ns() + delay);
        swfi_store_release_32(&w->x_state, gen | ACTIVE);
        swfi_fetch_add_seq_cst_32(&x_wake, 1);
        if (swfi_load_seq_cst_32(&x_idle))
            syscall(SYS_futex, &x_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        watching = true;
        return i + 1;
    }
    return 0; /* every slot in use: this wait goes unwatched */
}

void swfi_watch_end(int token)
{
    if (token == 0)
        return;
    struct watch *w = &table[token - 1];
    uint32_t s = swfi_load_relaxed_32(&w->x_state);
    while (!swfi_cas_acq_rel_32(&w->x_state, &s, (s & ~STATUS) | FREE))
        ;
    if ((s & STATUS) == SAID && current_call != NULL)
        call_said = true; /* once per call: the rest of it goes unwatched */
    watching = false;
}

void swfi_watch_set_delay_ms(unsigned int ms)
{
    swfi_store_relaxed_32(&x_delay_ms, ms);
}
