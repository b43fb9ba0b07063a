/*
 * lib/base/epoch_wait.c - how sweepfill waits for a ck_epoch grace period: spin briefly, then sleep
 * until a read-side section ends.
 *
 * ck_epoch_synchronize_wait and ck_epoch_barrier_wait call swfi_epoch_wait each time a scan finds
 * a reader still inside an older section, and scan again when it returns. The readers a grace
 * period waits for are usually running on another CPU (then a short spin sees them leave) or
 * preempted (then spinning, or yielding in a loop, only steals the CPU they need: under load the
 * old sched_yield loop was preempted tens of thousands of times per activation). So: spin for a
 * little while, then sleep on a futex that the library's read-side sections (the registry's
 * readers, swf_guard_epoch) bump and wake when they end while someone sleeps. A wake can be
 * missed (the reader checked for sleepers before the sleeper registered) and readers that do not
 * go through sweepfill never wake anyone, so every sleep has a timeout: correctness never depends
 * on a wake, only latency does.
 *
 * A wake-up is lost when the reader ends its section between the scan that found it inside and
 * the sleeper's registration: the sleep then lasts its timeout, which starts at 50 us and doubles
 * up to 1 ms for one wait. (Looking at the reader's record once more after registering would
 * narrow that window, but the record is ck_epoch's, written with plain volatile stores.)
 */
#include <ck_epoch.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/util.h"

#define SPIN_SCANS   32      /* scans to spin through before sleeping */
#define SPIN_PAUSES  64      /* pause instructions per spinning scan */
#define SLEEP_MIN_NS 50000   /* the first sleep's timeout: 50 us */
#define SLEEP_MAX_NS 1000000 /* the timeout doubles up to 1 ms */

static uint32_t x_section_ends; /* bumped by a section end while someone sleeps */
static uint32_t x_sleepers;

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

static void futex_wait(uint32_t *word, uint32_t seen, long ns)
{
    struct timespec ts = {0, ns};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

void swfi_epoch_section_ended(void)
{
    if (SWF_LIKELY(swfi_load_relaxed_32(&x_sleepers) == 0))
        return;
    swfi_fetch_add_acq_rel_32(&x_section_ends, 1);
    syscall(SYS_futex, &x_section_ends, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void swfi_epoch_wait(struct ck_epoch *epoch, struct ck_epoch_record *rec, void *arg)
{
    (void)epoch;
    struct swfi_epoch_waiter *w = arg;
    if (w->scans++ < SPIN_SCANS) {
        for (int i = 0; i < SPIN_PAUSES; i++)
            cpu_relax();
        return;
    }
    (void)rec;
    uint32_t seen = swfi_load_acquire_32(&x_section_ends);
    swfi_fetch_add_acq_rel_32(&x_sleepers, 1);
    futex_wait(&x_section_ends, seen, w->sleep_ns);
    w->sleeps++;
    if (w->sleep_ns < SLEEP_MAX_NS)
        w->sleep_ns *= 2;
    swfi_fetch_sub_acq_rel_32(&x_sleepers, 1);
}

/* Only the forking thread exists in the child, and it is not waiting. A thread of the parent that
 * slept at the fork left its count here: kept, it would make every section end in the child a
 * futex wake for ever (and kill a child under seccomp strict mode at its first section end). */
void swfi_epoch_wait_fork_child(void)
{
    swfi_store_relaxed_32(&x_sleepers, 0);
}

void swfi_epoch_waiter_init(struct swfi_epoch_waiter *w)
{
    w->scans = 0;
    w->sleeps = 0;
    w->sleep_ns = SLEEP_MIN_NS;
}
