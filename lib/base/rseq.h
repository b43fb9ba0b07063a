/*
 * lib/base/rseq.h - per-CPU slots updated by restartable sequences (Linux rseq, as registered by
 * glibc 2.35 and later for every thread).
 *
 * The mode is decided once per process (swfi_rseq_mode), at the first call:
 *   SWFI_RSEQ_OFF     no per-CPU slots: the build has no <sys/rseq.h>, is not for x86_64 or
 *                     aarch64, or is a ThreadSanitizer build (TSan sees no happens-before through
 *                     a per-CPU slot); or glibc registered no rseq area (__rseq_size is 0: an old
 *                     kernel, GLIBC_TUNABLES=glibc.pthread.rseq=0, valgrind, qemu-user); or the
 *                     calling thread's area says it is not registered; or membarrier's rseq fence
 *                     could not be registered; or SWF_PERCPU asks for the per-thread mode (0,
 *                     off, no, false);
 *   SWFI_RSEQ_MM_CID  slots indexed by the area's mm_cid (Linux 6.3: a dense per-process id below
 *                     the number of threads running at once, so a process allowed 2 CPUs uses 2
 *                     slots), when the kernel's rseq feature size (getauxval(AT_RSEQ_FEATURE_SIZE))
 *                     is at least 28, unless SWF_PERCPU=cpu_id (the default, SWF_PERCPU unset or
 *                     empty, and SWF_PERCPU=1, on, yes or true get either where the system has
 *                     rseq; an unknown value gets one line on stderr and the default);
 *   SWFI_RSEQ_CPU_ID  slots indexed by the area's cpu_id otherwise.
 * Either index is below swfi_rseq_slots(), the possible CPUs (/sys/devices/system/cpu/possible).
 *
 * This file has what belongs to the thread and the process: the mode, the rseq area and the
 * offsets of its fields, the count of aborted sequences (swfi_rseq_aborts), the delay the abort
 * test injects, a slot's lock bit and the fence. The sequences that change a slot's magazine
 * know the magazine's layout, so they are the cache's: sweepfill/rseq_abi.h's pop and push (the
 * inline path runs them too) and lib/cache/front/seq.h's own.
 *
 * Reaching another CPU's slot (swfi_rseq_lock_slots): set its lock bit with a compare-and-swap,
 * then membarrier's rseq fence aborts every sequence in flight; a sequence that committed a new
 * word before the fence cleared the bit, which the locker sees when it reads the slot again.
 * Nothing else can stand in for the fence: where the kernel refuses it (a seccomp filter
 * installed after the mode was chosen), the locker unlocks and leaves the magazines in place.
 */
#ifndef SWF_LIB_RSEQ_H
#define SWF_LIB_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/tsan.h"

#if !defined(SWF_TSAN) && (defined(__x86_64__) || defined(__aarch64__)) && defined(__has_include)
#if __has_include(<sys/rseq.h>)
#define SWF_RSEQ 1 /* the per-CPU sequences are built; whether they run is swfi_rseq_mode's */
#endif
#endif

enum swfi_rseq_mode {
    SWFI_RSEQ_OFF = 0,
    SWFI_RSEQ_CPU_ID = 1,
    SWFI_RSEQ_MM_CID = 2,
};

#define SWFI_RSEQ_LOCKED ((uintptr_t)1)

/* The mode, decided at the first call (which may register membarrier: blocking, once). */
enum swfi_rseq_mode swfi_rseq_mode(void);

/* Why the process has that mode: what asked for it and what the system has (one sentence,
 * swf_cache_percpu_reason's). Decides the mode if it is not decided yet. */
const char *swfi_rseq_mode_why(void);

/* Slots a per-CPU array needs: the possible CPUs (at least 1). */
uint32_t swfi_rseq_slots(void);

/* The highest CPU number in a CPU list (the kernel's format: "0-63", "0,2-5,7", with or without a
 * final newline) plus 1; 0 when the list is empty or malformed. And the same for the list a file
 * holds (0 too when it cannot be read). */
uint32_t swfi_cpu_list_max(const char *list);
uint32_t swfi_cpu_list_file_max(const char *path);

/* Aborts counted on the calling thread (its sequences started again after an abort). */
uint64_t swfi_rseq_aborts(void);

/* Lock slots[i] (i < n) for this thread, whatever their contents: true when each has the lock
 * bit and no sequence that saw the slot unlocked can still commit; false, every slot unlocked
 * again and nothing else changed, when the kernel refused the rseq fence (a seccomp filter
 * installed after the mode was chosen): the caller must then leave the slots' magazines alone.
 * Blocking (membarrier). */
bool swfi_rseq_lock_slots(uintptr_t *slots, uint32_t n);

/* The descriptors of every sequence in this object ([*begin, *end)), for the static check. */
struct swfi_rseq_cs {
    uint32_t version;
    uint32_t flags;
    uint64_t start_ip;
    uint64_t post_commit_offset;
    uint64_t abort_ip;
} __attribute__((aligned(32)));
void swfi_rseq_descriptors(const struct swfi_rseq_cs **begin, const struct swfi_rseq_cs **end);

#ifdef SWF_RSEQ
#include <sys/rseq.h>

/* The area's fields the sequences use (struct rseq of linux/rseq.h, mm_cid since Linux 6.3). */
#define SWFI_RSEQ_CPU_ID_OFF 4
#define SWFI_RSEQ_CS_OFF     8
#define SWFI_RSEQ_MM_CID_OFF 24

extern __thread uint64_t swfi_rseq_aborts_ __attribute__((tls_model("initial-exec")));
extern uint32_t swfi_rseq_index_off_; /* SWFI_RSEQ_CPU_ID_OFF or SWFI_RSEQ_MM_CID_OFF */

#ifdef SWF_RSEQ_DELAY /* the abort test: loop iterations injected inside every sequence */
extern uint32_t swfi_rseq_delay_;
// clang-format off
#if defined(__x86_64__)
#define SWF_RSEQ_DELAY_ASM_(r)        \
    "movl %[delay], %k[" #r "]\n"     \
    "7:\n\t"                          \
    "subl $1, %k[" #r "]\n\t"         \
    "jnc 7b\n\t"
#else
#define SWF_RSEQ_DELAY_ASM_(r)        \
    "mov %w[" #r "], %w[delay]\n"     \
    "7:\n\t"                          \
    "subs %w[" #r "], %w[" #r "], #1\n\t" \
    "b.hs 7b\n\t"
#endif
// clang-format on
#define SWF_RSEQ_DELAY_IN_ , [delay] "r"(swfi_rseq_delay_)
#endif

_Static_assert(offsetof(struct rseq, cpu_id) == SWFI_RSEQ_CPU_ID_OFF &&
                   offsetof(struct rseq, rseq_cs) == SWFI_RSEQ_CS_OFF,
               "the area's offsets");

/* The calling thread's rseq area: the thread pointer plus glibc's (signed) offset. */
static inline char *swfi_rseq_area(void)
{
    return (char *)__builtin_thread_pointer() + __rseq_offset;
}

/* The index this thread would use now (a hint: it may move at once). Not a sequence. */
static inline uint32_t swfi_rseq_hint(void)
{
    return __atomic_load_n((const uint32_t *)(swfi_rseq_area() + swfi_rseq_index_off_),
                           __ATOMIC_RELAXED);
}

/* The word of the slot this thread would use now (a hint for a later swap: the thread may move
 * before it), or SWFI_RSEQ_LOCKED when it has none. Not a sequence: relaxed loads. */
static inline uintptr_t swfi_rseq_peek(uintptr_t *slots, uint32_t nslots)
{
    const char *area = swfi_rseq_area();
    int32_t cpu = __atomic_load_n((const int32_t *)(area + SWFI_RSEQ_CPU_ID_OFF), __ATOMIC_RELAXED);
    uint32_t i = __atomic_load_n((const uint32_t *)(area + swfi_rseq_index_off_), __ATOMIC_RELAXED);
    if (cpu < 0 || i >= nslots)
        return SWFI_RSEQ_LOCKED;
    return __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
}

#else /* !SWF_RSEQ: never called, since the mode is SWFI_RSEQ_OFF */

static inline uint32_t swfi_rseq_hint(void)
{
    return 0;
}

static inline uintptr_t swfi_rseq_peek(uintptr_t *slots, uint32_t nslots)
{
    (void)slots, (void)nslots;
    return SWFI_RSEQ_LOCKED;
}

#endif /* SWF_RSEQ */

#endif /* SWF_LIB_RSEQ_H */
