/*
 * lib/base/rseq.c - deciding the per-CPU mode once per process, the possible CPUs, and locking
 * other CPUs' slots with membarrier's rseq fence (rseq.h has the design).
 */
#include "base/rseq.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/membarrier.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include "base/atomic.h"

#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#endif
#define MM_CID_FEATURE_SIZE 28 /* the area's size up to and including mm_cid (Linux 6.3) */

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static enum swfi_rseq_mode mode_chosen = SWFI_RSEQ_OFF;
static uint32_t possible_cpus = 1;

#ifdef SWF_RSEQ
__thread uint64_t swfi_rseq_aborts_ __attribute__((tls_model("initial-exec")));
uint32_t swfi_rseq_index_off_ = SWFI_RSEQ_CPU_ID_OFF;
#ifdef SWF_RSEQ_DELAY
uint32_t swfi_rseq_delay_;
#endif
#endif

static long membarrier(int cmd, unsigned int flags, int cpu)
{
    return syscall(__NR_membarrier, cmd, flags, cpu);
}

/* The possible CPUs: one more than the highest number in /sys/devices/system/cpu/possible
 * ("0-63", "0,2-5"), else sysconf's configured count. */
static uint32_t read_possible_cpus(void)
{
    long n = 0;
    FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
    if (f != NULL) {
        char buf[256];
        if (fgets(buf, sizeof(buf), f) != NULL) {
            for (char *p = buf; *p != '\0';) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p) {
                    p++;
                    continue;
                }
                if (v + 1 > n)
                    n = v + 1;
                p = end;
            }
        }
        fclose(f);
    }
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    if (conf > n)
        n = conf;
    if (n < 1)
        n = 1;
    return n > 65536 ? 65536 : (uint32_t)n;
}

#ifdef SWF_RSEQ
/* SWF_PERCPU: "0", the per-thread mode; "cpu_id", per-CPU magazines indexed by cpu_id; unset,
 * empty or anything else, per-CPU magazines by the best index the system has (the default: a
 * preempted thread then holds nothing, bench/RESULTS.md measures what that costs). */
static enum swfi_rseq_mode decide(void)
{
    const char *env = getenv("SWF_PERCPU");
    if (env != NULL && strcmp(env, "0") == 0)
        return SWFI_RSEQ_OFF;
    if (__rseq_size == 0)
        return SWFI_RSEQ_OFF;
    int32_t cpu;
    memcpy(&cpu, swfi_rseq_area() + SWFI_RSEQ_CPU_ID_OFF, sizeof(cpu));
    if (cpu < 0)
        return SWFI_RSEQ_OFF;
    /* Without the fence, no thread could reach another CPU's slot: no per-CPU mode at all. */
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) != 0)
        return SWFI_RSEQ_OFF;
    bool force_cpu = env != NULL && strcmp(env, "cpu_id") == 0;
    /* The kernel's feature size, not __rseq_size (which some glibc builds report as 20 and
     * others as 32 whatever the kernel fills): glibc registers a 32-byte area in any case. */
    if (!force_cpu && getauxval(AT_RSEQ_FEATURE_SIZE) >= MM_CID_FEATURE_SIZE) {
        swfi_rseq_index_off_ = SWFI_RSEQ_MM_CID_OFF;
        return SWFI_RSEQ_MM_CID;
    }
    swfi_rseq_index_off_ = SWFI_RSEQ_CPU_ID_OFF;
    return SWFI_RSEQ_CPU_ID;
}
#endif

#ifdef SWF_RSEQ
static void fork_child(void)
{
    /* The child's address space is new: its fence needs a registration of its own. Should it
     * fail, lock_slots falls back on the plain fence (below). */
    if (mode_chosen != SWFI_RSEQ_OFF)
        (void)membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0);
}
#endif

static void choose(void)
{
    possible_cpus = read_possible_cpus();
#ifdef SWF_RSEQ
    mode_chosen = decide();
    if (mode_chosen != SWFI_RSEQ_OFF)
        pthread_atfork(NULL, NULL, fork_child);
#endif
}

enum swfi_rseq_mode swfi_rseq_mode(void)
{
    pthread_once(&mode_once, choose);
    return mode_chosen;
}

uint32_t swfi_rseq_slots(void)
{
    pthread_once(&mode_once, choose);
    return possible_cpus;
}

uint64_t swfi_rseq_aborts(void)
{
#ifdef SWF_RSEQ
    return swfi_rseq_aborts_;
#else
    return 0;
#endif
}

/* Abort every sequence in flight in this process. The registered rseq fence; if it fails (a
 * child of fork whose registration failed), MEMBARRIER_CMD_GLOBAL's grace period, which also
 * waits for every CPU to pass through the kernel (a context switch or return to user space
 * aborts any sequence it interrupts). */
static void fence(void)
{
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0) != 0)
        (void)membarrier(MEMBARRIER_CMD_GLOBAL, 0, 0);
}

void swfi_rseq_lock_slots(uintptr_t *slots, uint32_t n)
{
    for (;;) {
        for (uint32_t i = 0; i < n; i++) {
            uintptr_t w = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
            while (!(w & SWFI_RSEQ_LOCKED) &&
                   !__atomic_compare_exchange_n(&slots[i], &w, w | SWFI_RSEQ_LOCKED, false,
                                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                ;
        }
        fence();
        /* A sequence that committed between our compare-and-swap and the fence stored a word
         * without the bit: lock that slot again. After a fence with every bit still set, no
         * sequence that loaded an unlocked word can commit. */
        bool all = true;
        for (uint32_t i = 0; i < n; i++)
            all &= (__atomic_load_n(&slots[i], __ATOMIC_ACQUIRE) & SWFI_RSEQ_LOCKED) != 0;
        if (all)
            return;
    }
}

#ifdef SWF_RSEQ
extern const struct swfi_rseq_cs __start___swf_rseq_cs[] __attribute__((weak));
extern const struct swfi_rseq_cs __stop___swf_rseq_cs[] __attribute__((weak));
#endif

void swfi_rseq_descriptors(const struct swfi_rseq_cs **begin, const struct swfi_rseq_cs **end)
{
#ifdef SWF_RSEQ
    *begin = __start___swf_rseq_cs;
    *end = __stop___swf_rseq_cs;
#else
    *begin = *end = NULL;
#endif
}
