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
#include <strings.h>
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

/* ---- the mode: what SWF_PERCPU asks for, what the system has, and why ---- */

enum ask { ASK_DEFAULT, ASK_THREAD, ASK_CPU, ASK_CPU_ID };

static char mode_why[320] = "the mode is not decided yet";

/* SWF_PERCPU's values (sweepfill(7), ENVIRONMENT), in any case; unset or empty, the default. An
 * unknown value gets one line and the default, so that a typo never silently picks a mode. */
static enum ask read_ask(const char **value)
{
    static const char *const thread[] = {"0", "off", "no", "false"};
    static const char *const cpu[] = {"1", "on", "yes", "true"};
    const char *v = getenv("SWF_PERCPU");
    *value = v;
    if (v == NULL || v[0] == '\0')
        return ASK_DEFAULT;
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, thread[i]) == 0)
            return ASK_THREAD;
        if (strcasecmp(v, cpu[i]) == 0)
            return ASK_CPU;
    }
    if (strcasecmp(v, "cpu_id") == 0)
        return ASK_CPU_ID;
    fprintf(stderr,
            "sweepfill: SWF_PERCPU=\"%.64s\" is not one of 0, off, no, false (per-thread), 1, on, "
            "yes, true, cpu_id (per-CPU) or empty: using the default\n",
            v);
    return ASK_DEFAULT;
}

#ifdef SWF_RSEQ
/* Why the per-CPU mode cannot run in this process (NULL when it can: *mode is then set). */
static const char *percpu_unavailable(bool force_cpu, enum swfi_rseq_mode *mode)
{
    if (__rseq_size == 0)
        return "glibc registered no rseq area (glibc before 2.35, a kernel before 4.18, "
               "GLIBC_TUNABLES=glibc.pthread.rseq=0, valgrind or qemu-user)";
    int32_t cpu;
    memcpy(&cpu, swfi_rseq_area() + SWFI_RSEQ_CPU_ID_OFF, sizeof(cpu));
    if (cpu < 0)
        return "the calling thread's rseq area is not registered";
    /* Without the fence, no thread could reach another CPU's slot: no per-CPU mode at all. */
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) != 0)
        return "membarrier's rseq fence was refused (a kernel before 5.10, or a seccomp filter)";
    /* The kernel's feature size, not __rseq_size (which some glibc builds report as 20 and
     * others as 32 whatever the kernel fills): glibc registers a 32-byte area in any case. */
    if (!force_cpu && getauxval(AT_RSEQ_FEATURE_SIZE) >= MM_CID_FEATURE_SIZE) {
        swfi_rseq_index_off_ = SWFI_RSEQ_MM_CID_OFF;
        *mode = SWFI_RSEQ_MM_CID;
        return NULL;
    }
    swfi_rseq_index_off_ = SWFI_RSEQ_CPU_ID_OFF;
    *mode = SWFI_RSEQ_CPU_ID;
    return NULL;
}
#elif defined(SWF_TSAN)
static const char *percpu_unavailable(bool force_cpu, enum swfi_rseq_mode *mode)
{
    (void)force_cpu, (void)mode;
    return "a ThreadSanitizer build (TSan sees no happens-before through a per-CPU slot)";
}
#else
static const char *percpu_unavailable(bool force_cpu, enum swfi_rseq_mode *mode)
{
    (void)force_cpu, (void)mode;
    return "a build without the per-CPU sequences (only x86_64 and aarch64 with <sys/rseq.h> "
           "have them)";
}
#endif

/* The mode, and mode_why: what asked for it (the default or SWF_PERCPU) and what the system has.
 * A per-CPU mode asked for and unavailable gets one line (this runs once per process). */
static enum swfi_rseq_mode decide(void)
{
    const char *value;
    enum ask ask = read_ask(&value);
    char cause[96];
    if (ask == ASK_DEFAULT && value != NULL && value[0] != '\0')
        snprintf(cause, sizeof(cause), "SWF_PERCPU=\"%.40s\" not understood, so the default",
                 value);
    else if (ask == ASK_DEFAULT)
        snprintf(cause, sizeof(cause), "default");
    else
        snprintf(cause, sizeof(cause), "SWF_PERCPU=%.40s", value);
    if (ask == ASK_THREAD) {
        snprintf(mode_why, sizeof(mode_why), "%s: per-thread magazines, as asked", cause);
        return SWFI_RSEQ_OFF;
    }
    enum swfi_rseq_mode mode = SWFI_RSEQ_OFF;
    const char *why_not = percpu_unavailable(ask == ASK_CPU_ID, &mode);
    if (why_not != NULL) {
        if (ask != ASK_DEFAULT)
            fprintf(stderr,
                    "sweepfill: SWF_PERCPU=%.40s asked for per-CPU magazines, but %s: per-thread "
                    "magazines\n",
                    value, why_not);
        snprintf(mode_why, sizeof(mode_why), "%s, but %s: per-thread magazines", cause, why_not);
        return SWFI_RSEQ_OFF;
    }
    snprintf(mode_why, sizeof(mode_why), "%s: per-CPU magazines indexed by %s", cause,
             mode == SWFI_RSEQ_MM_CID ? "the kernel's mm_cid (Linux 6.3)" : "the CPU's number");
    return mode;
}

/* The registration for the rseq fence (decide) belongs to the address space, which a child of
 * fork inherits: the child's fence works without one of its own. */
static void choose(void)
{
    possible_cpus = read_possible_cpus();
    mode_chosen = decide();
}

enum swfi_rseq_mode swfi_rseq_mode(void)
{
    pthread_once(&mode_once, choose);
    return mode_chosen;
}

const char *swfi_rseq_mode_why(void)
{
    pthread_once(&mode_once, choose);
    return mode_why;
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
            uintptr_t w = swfi_load_relaxed_uptr(&slots[i]);
            while (!(w & SWFI_RSEQ_LOCKED) &&
                   !swfi_cas_acq_rel_uptr(&slots[i], &w, w | SWFI_RSEQ_LOCKED))
                ;
        }
        if (!fence()) {
            /* Unlock what is still ours (a swap that committed meanwhile stored a word without
             * the bit, which stays): the sequences in flight commit into magazines that are
             * still in their slots. */
            for (uint32_t i = 0; i < n; i++)
                swfi_fetch_and_release_uptr(&slots[i], ~SWFI_RSEQ_LOCKED);
            return false;
        }
        /* A sequence that committed between our compare-and-swap and the fence stored a word
         * without the bit: lock that slot again. After a fence with every bit still set, no
         * sequence that loaded an unlocked word can commit. */
        bool all = true;
        for (uint32_t i = 0; i < n; i++)
            all &= (swfi_load_acquire_uptr(&slots[i]) & SWFI_RSEQ_LOCKED) != 0;
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
