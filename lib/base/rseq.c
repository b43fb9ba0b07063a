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

/* One decimal number at *p, advancing *p past it; false when there is none or it exceeds
 * UINT32_MAX. No sign: in a CPU list a dash separates a range's ends. */
static bool cpu_number(const char **p, uint32_t *out)
{
    uint64_t v = 0;
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++)
        if ((v = v * 10 + (uint64_t)(*s - '0')) > UINT32_MAX)
            return false;
    *p = s;
    *out = (uint32_t)v;
    return true;
}

uint32_t swfi_cpu_list_max(const char *list)
{
    uint32_t max = 0;
    const char *p = list;
    for (;;) {
        uint32_t lo, hi;
        if (!cpu_number(&p, &lo))
            return 0;
        hi = lo;
        if (*p == '-') {
            p++;
            if (!cpu_number(&p, &hi) || hi < lo)
                return 0;
        }
        if (hi == UINT32_MAX) /* no count fits */
            return 0;
        if (hi + 1 > max)
            max = hi + 1;
        if (*p != ',')
            break;
        p++;
    }
    return *p == '\0' || (*p == '\n' && p[1] == '\0') ? max : 0;
}

uint32_t swfi_cpu_list_file_max(const char *path)
{
    uint32_t max = 0;
    FILE *f = fopen(path, "re");
    if (f != NULL) {
        char buf[4096];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        if (n > 0 && n < sizeof(buf) - 1 && !ferror(f)) { /* a longer list: not trusted */
            buf[n] = '\0';
            max = swfi_cpu_list_max(buf);
        }
        fclose(f);
    }
    return max;
}

/* The possible CPUs: one more than the highest number in /sys/devices/system/cpu/possible
 * ("0-63", "0,2-5"), or sysconf's configured count where that is more. */
static uint32_t read_possible_cpus(void)
{
    long n = swfi_cpu_list_file_max("/sys/devices/system/cpu/possible");
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
 * preempted thread then holds nothing, bench/README.md measures what that costs). */
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

/* The registration for the rseq fence (decide) belongs to the address space, which a child of
 * fork inherits: the child's fence works without one of its own. */
static void choose(void)
{
    possible_cpus = read_possible_cpus();
#ifdef SWF_RSEQ
    mode_chosen = decide();
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

/* Abort every sequence in flight in this process: the rseq fence registered when the mode was
 * chosen. false when the kernel refuses it (a seccomp filter installed since, or no memory):
 * nothing else aborts a sequence that runs on (MEMBARRIER_CMD_GLOBAL waits for every CPU to pass
 * through the kernel, and a timer interrupt's return to the thread does not abort its sequence),
 * so the caller must not touch what the slots hold. */
static bool fence(void)
{
    return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0;
}

bool swfi_rseq_lock_slots(uintptr_t *slots, uint32_t n)
{
    for (;;) {
        for (uint32_t i = 0; i < n; i++) {
            uintptr_t w = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
            while (!(w & SWFI_RSEQ_LOCKED) &&
                   !__atomic_compare_exchange_n(&slots[i], &w, w | SWFI_RSEQ_LOCKED, false,
                                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                ;
        }
        if (!fence()) {
            /* Unlock what is still ours (a swap that committed meanwhile stored a word without
             * the bit, which stays): the sequences in flight commit into magazines that are
             * still in their slots. */
            for (uint32_t i = 0; i < n; i++)
                __atomic_fetch_and(&slots[i], ~SWFI_RSEQ_LOCKED, __ATOMIC_RELEASE);
            return false;
        }
        /* A sequence that committed between our compare-and-swap and the fence stored a word
         * without the bit: lock that slot again. After a fence with every bit still set, no
         * sequence that loaded an unlocked word can commit. */
        bool all = true;
        for (uint32_t i = 0; i < n; i++)
            all &= (__atomic_load_n(&slots[i], __ATOMIC_ACQUIRE) & SWFI_RSEQ_LOCKED) != 0;
        if (all)
            return true;
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
