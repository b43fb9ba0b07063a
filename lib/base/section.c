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
 * Past the table: a thread watches one wait at a time, so each thread has one spare record of its
 * own (initial-exec TLS: nothing is allocated, nothing can fail), linked into the spill list under
 * spill_lock while the table is full. The watchdog holds that lock only to scan the list and copy
 * out the lines it will print, never while printing: a waiter that ends such a watch waits for a
 * scan at most. A record is linked only between its thread's begin and end of a watch, so it is
 * never read once its thread could exit. Every wait is watched, however many run at once; if no
 * watchdog thread can be made, one line says the waits are not watched.
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

/* A thread's record for a wait the table has no room for; fields under spill_lock once linked. */
struct spill {
    struct spill *next;
    uint64_t deadline_ns;
    const char *function, *what, *cause;
    bool said;
};
enum { SPILLED = -1 }; /* the token of a watch in the thread's spill record */
static _Thread_local struct spill my_spill __attribute__((tls_model("initial-exec")));
static pthread_mutex_t spill_lock = PTHREAD_MUTEX_INITIALIZER;
static struct spill *spills;      /* the linked records, under spill_lock */
static uint32_t x_no_thread_said; /* the line that no watchdog thread could be made */

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

static void print_line(const char *function, const char *what, const char *cause)
{
    unsigned int ms = swfi_load_relaxed_32(&x_delay_ms);
    char delay[32];
    if (ms % 1000 == 0)
        snprintf(delay, sizeof(delay), "%u s", ms / 1000);
    else
        snprintf(delay, sizeof(delay), "%u ms", ms);
    fprintf(stderr, "sweepfill: %s: still waiting for %s after %s: %s\n", function, what, delay,
            cause);
}

static void say(struct watch *w, uint32_t seen)
{
    const char *function = swfi_load_relaxed_ptr(&w->x_function);
    const char *what = swfi_load_relaxed_ptr(&w->x_what);
    const char *cause = swfi_load_relaxed_ptr(&w->x_cause);
    uint32_t expected = seen;
    if (!swfi_cas_acq_rel_32(&w->x_state, &expected, (seen & ~STATUS) | SAID))
        return; /* it ended (or a newer wait took the slot) while we read */
    print_line(function, what, cause);
}

/* The spilled watches: report what is past its deadline (a few lines per lock hold, printed
 * after it); the nearest deadline not reached, or UINT64_MAX. */
static uint64_t scan_spills(uint64_t now)
{
    enum { BATCH = 8 };
    for (;;) {
        const char *due[BATCH][3];
        int n = 0;
        bool more = false;
        uint64_t next = UINT64_MAX;
        pthread_mutex_lock(&spill_lock);
        for (struct spill *p = spills; p != NULL; p = p->next) {
            if (p->said)
                continue;
            if (now < p->deadline_ns) {
                next = p->deadline_ns < next ? p->deadline_ns : next;
            } else if (n < BATCH) {
                p->said = true;
                due[n][0] = p->function, due[n][1] = p->what, due[n][2] = p->cause;
                n++;
            } else {
                more = true;
            }
        }
        pthread_mutex_unlock(&spill_lock);
        for (int i = 0; i < n; i++)
            print_line(due[i][0], due[i][1], due[i][2]);
        if (!more)
            return next;
    }
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
    uint64_t spilled = scan_spills(now);
    return spilled < next ? spilled : next;
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
    /* The watchdog may have held the lock at the fork: the child's copy is made afresh. */
    pthread_mutex_init(&spill_lock, NULL);
    spills = NULL;
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
        uint32_t unsaid = 0;
        if (swfi_cas_acq_rel_32(&x_no_thread_said, &unsaid, 1))
            fprintf(stderr,
                    "sweepfill: watchdog: no thread could be made for it (pthread_create: %s): "
                    "waits are not watched until one can be (each wait tries again)\n",
                    strerror(err));
        return false;
    }
    (void)pthread_setname_np(t, "swf-watchdog");
    return true;
}

/* After a watch became visible (a slot ACTIVE, or a record linked): the watchdog scans again, or
 * is woken from its sleep with nothing ahead (see the top). */
static void wake_watchdog(void)
{
    swfi_fetch_add_seq_cst_32(&x_wake, 1);
    if (swfi_load_seq_cst_32(&x_idle))
        syscall(SYS_futex, &x_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
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
        wake_watchdog();
        watching = true;
        return i + 1;
    }
    /* Every slot in use: this thread's own record. */
    struct spill *p = &my_spill;
    p->deadline_ns = now_ns() + (uint64_t)swfi_load_relaxed_32(&x_delay_ms) * 1000000u;
    p->function = swfi_call_name(fallback);
    p->what = what;
    p->cause = cause;
    p->said = false;
    pthread_mutex_lock(&spill_lock);
    p->next = spills;
    spills = p;
    pthread_mutex_unlock(&spill_lock);
    wake_watchdog();
    watching = true;
    return SPILLED;
}

void swfi_watch_end(int token)
{
    if (token == 0)
        return;
    if (token == SPILLED) {
        pthread_mutex_lock(&spill_lock);
        struct spill **pp = &spills;
        while (*pp != &my_spill)
            pp = &(*pp)->next;
        *pp = my_spill.next;
        bool said = my_spill.said;
        pthread_mutex_unlock(&spill_lock);
        if (said && current_call != NULL)
            call_said = true;
        watching = false;
        return;
    }
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
