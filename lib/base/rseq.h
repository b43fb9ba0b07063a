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
 * The slots and the sequences that pop and push their magazines are sweepfill/rseq_abi.h's (the
 * inline path runs them too); this file adds the library's own (move up to k objects at once for
 * the bulk calls, swap a slot's magazine, find an object in it), the retries that count aborts
 * (swfi_rseq_aborts), and the mode. So a slot's magazine is only ever changed by the thread running
 * on that CPU (index) at that moment, each change whole or not at all.
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

#define SWFI_RSEQ_LOCKED  ((uintptr_t)1)
#define SWFI_RSEQ_MAG_N   8  /* offset of the magazine's word n */
#define SWFI_RSEQ_MAG_OBJ 16 /* offset of its obj[] */

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
#define SWF_RSEQ_DELAY_ASM_           \
    "movl %[delay], %k[st]\n"         \
    "7:\n\t"                          \
    "subl $1, %k[st]\n\t"             \
    "jnc 7b\n\t"
#else
#define SWF_RSEQ_DELAY_ASM_           \
    "mov %w[st], %w[delay]\n"         \
    "7:\n\t"                          \
    "subs %w[st], %w[st], #1\n\t"     \
    "b.hs 7b\n\t"
#endif
// clang-format on
#define SWF_RSEQ_DELAY_IN_ , [delay] "r"(swfi_rseq_delay_)
#endif

/* The sequences themselves: written once, for the library and cache.h's inline path. */
#include <sweepfill/rseq_abi.h>

_Static_assert(offsetof(struct rseq, cpu_id) == SWFI_RSEQ_CPU_ID_OFF &&
                   offsetof(struct rseq, rseq_cs) == SWFI_RSEQ_CS_OFF &&
                   SWFI_RSEQ_CPU_ID_OFF == SWF_RSEQ_CPU_ID_OFF_ &&
                   SWFI_RSEQ_CS_OFF == SWF_RSEQ_CS_OFF_ && SWFI_RSEQ_MAG_N == SWF_RSEQ_MAG_N_OFF_ &&
                   SWFI_RSEQ_MAG_OBJ == SWF_RSEQ_MAG_OBJ_OFF_,
               "the sequences' offsets");

/* The calling thread's rseq area: the thread pointer plus glibc's (signed) offset. */
static inline char *swfi_rseq_area(void)
{
    return (char *)__builtin_thread_pointer() + __rseq_offset;
}

#define SWFI_RSEQ_IN(slots, nslots) \
    SWF_RSEQ_IN_(swfi_rseq_area(), (uintptr_t)swfi_rseq_index_off_, slots, nslots)

/* One attempt at popping an object from this CPU's magazine (fails when it is empty). */
static inline uint32_t swfi_rseq_pop_once(uintptr_t *slots, uint32_t nslots, void **obj)
{
    return swf_rseq_pop_once_(swfi_rseq_area(), swfi_rseq_index_off_, slots, nslots, obj);
}

/* One attempt at pushing obj on this CPU's magazine of capacity cap (fails when it is full). */
static inline uint32_t swfi_rseq_push_once(uintptr_t *slots, uint32_t nslots, void *obj,
                                           uint32_t cap)
{
    return swf_rseq_push_once_(swfi_rseq_area(), swfi_rseq_index_off_, slots, nslots, obj, cap);
}

/* One attempt at replacing this CPU's slot word, if it is still `old` (unlocked, not 0), with
 * `new_word`. */
static inline uint32_t swfi_rseq_swap_once(uintptr_t *slots, uint32_t nslots, uintptr_t old,
                                           uintptr_t new_word)
{
    uintptr_t t, m;
    uint32_t st;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(swap)
                         "cmpq %[old], %[m]\n\t"
                         "jne 5f\n\t" /* the slot changed */
                         SWF_RSEQ_DELAY_ASM_
                         /* the commit: the slot's new word */
                         "movq %[new], (%[slots], %[t], 8)\n"
                         SWF_RSEQ_LEAVE_(swap)
                         : [t] "=&r"(t), [m] "=&r"(m), [st] "=&r"(st)
                         : SWFI_RSEQ_IN(slots, nslots), [old] "r"(old), [new] "r"(new_word)
                         : SWF_RSEQ_CLOBBER_);
#else
    __asm__ __volatile__(SWF_RSEQ_ENTER_(swap)
                         "cmp %[m], %[old]\n\t"
                         "b.ne 5f\n\t" /* the slot changed */
                         SWF_RSEQ_DELAY_ASM_
                         /* the commit: the slot's new word */
                         "str %[new], [%[slots], %[t], lsl #3]\n"
                         SWF_RSEQ_LEAVE_(swap)
                         : [t] "=&r"(t), [m] "=&r"(m), [st] "=&r"(st)
                         : SWFI_RSEQ_IN(slots, nslots), [old] "r"(old), [new] "r"(new_word)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    return st;
}

/* One attempt at finding obj in this CPU's magazine: DONE when it is there (a read-only
 * sequence: reaching its end is its commit), FAIL when it is not (or the slot is locked). */
static inline uint32_t swfi_rseq_find_once(uintptr_t *slots, uint32_t nslots, const void *obj)
{
    uintptr_t t, m, x;
    uint32_t st;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(find)
                         "movl %c[mag_n](%[m]), %k[t]\n\t"
                         "andl %[n_mask], %k[t]\n" /* n: the word's low bits */
                         "8:\n\t"
                         "subl $1, %k[t]\n\t"
                         "jc 5f\n\t" /* not there */
                         "movq %c[mag_obj](%[m], %[t], 8), %[x]\n\t"
                         SWF_RSEQ_DELAY_ASM_
                         "cmpq %[o], %[x]\n\t"
                         /* no store: reaching 2 (found) is the commit */
                         "jne 8b\n"
                         SWF_RSEQ_LEAVE_(find)
                         : [t] "=&r"(t), [m] "=&r"(m), [x] "=&r"(x), [st] "=&r"(st)
                         : SWFI_RSEQ_IN(slots, nslots), [o] "r"(obj)
                         : SWF_RSEQ_CLOBBER_);
#else
    uintptr_t a;
    __asm__ __volatile__(SWF_RSEQ_ENTER_(find)
                         "ldr %w[t], [%[m], #%c[mag_n]]\n\t"
                         "and %w[t], %w[t], #%c[n_mask]\n\t" /* n: the word's low bits */
                         "add %[a], %[m], #%c[mag_obj]\n"
                         "8:\n\t"
                         "cbz %w[t], 5f\n\t" /* not there */
                         "sub %w[t], %w[t], #1\n\t"
                         "ldr %[x], [%[a], %[t], lsl #3]\n\t"
                         SWF_RSEQ_DELAY_ASM_
                         "cmp %[x], %[o]\n\t"
                         /* no store: reaching 2 (found) is the commit */
                         "b.ne 8b\n"
                         SWF_RSEQ_LEAVE_(find)
                         : [t] "=&r"(t), [m] "=&r"(m), [x] "=&r"(x), [a] "=&r"(a), [st] "=&r"(st)
                         : SWFI_RSEQ_IN(slots, nslots), [o] "r"(obj)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    return st;
}

/* One attempt at moving up to k objects between this CPU's magazine and buf (the bulk calls):
 * pop copies the magazine's last min(n, k) objects to buf[0 ..], push copies min(cap - n, k) of
 * buf[0 ..] on top of it; the copy is undone by nothing, since only the store of the new word
 * (n - c or n + c, c more objects moved) commits. *moved gets the count; FAIL when it would be 0.
 * k's register holds the word once c is known (x86_64 has no register to spare). */
static inline uint32_t swfi_rseq_pop_many_once(uintptr_t *slots, uint32_t nslots, void **buf,
                                               uint32_t k, uint32_t *moved)
{
    uintptr_t t, m, c, i, x, kw = k;
    uint32_t st;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(pop_many)
                         "movq %c[mag_n](%[m]), %[t]\n\t"
                         "movl %k[t], %k[c]\n\t"
                         "andl %[n_mask], %k[c]\n\t" /* n: the word's low bits */
                         "cmpl %k[kw], %k[c]\n\t"
                         "cmoval %k[kw], %k[c]\n\t" /* c = min(n, k) */
                         "testl %k[c], %k[c]\n\t"
                         "jz 5f\n\t" /* empty */
                         "movq %[t], %[kw]\n\t" /* kw: the word from here on */
                         "andl %[n_mask], %k[t]\n\t"
                         "subl %k[c], %k[t]\n\t" /* t = n - c: the first object to copy */
                         "xorl %k[i], %k[i]\n"
                         "8:\n\t"
                         "leaq (%[t], %[i]), %[x]\n\t"
                         "movq %c[mag_obj](%[m], %[x], 8), %[x]\n\t"
                         "movq %[x], (%[buf], %[i], 8)\n\t"
                         "addq $1, %[i]\n\t"
                         "cmpq %[c], %[i]\n\t"
                         "jb 8b\n\t"
                         "imulq %[pop_step], %[c], %[x]\n\t"
                         "addq %[x], %[kw]\n\t"
                         SWF_RSEQ_DELAY_ASM_
                         /* the commit: n - c, c more objects moved */
                         "movq %[kw], %c[mag_n](%[m])\n"
                         SWF_RSEQ_LEAVE_(pop_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [st] "=&r"(st), [kw] "+&r"(kw)
                         : SWFI_RSEQ_IN(slots, nslots), [buf] "r"(buf)
                         : SWF_RSEQ_CLOBBER_);
#else
    uintptr_t y;
    __asm__ __volatile__(SWF_RSEQ_ENTER_(pop_many)
                         "ldr %[y], [%[m], #%c[mag_n]]\n\t"
                         "and %w[t], %w[y], #%c[n_mask]\n\t" /* n: the word's low bits */
                         "cmp %w[t], %w[kw]\n\t"
                         "csel %w[c], %w[t], %w[kw], lo\n\t" /* c = min(n, k) */
                         "cbz %w[c], 5f\n\t" /* empty */
                         "mov %[kw], %[y]\n\t" /* kw: the word from here on */
                         "sub %w[t], %w[t], %w[c]\n\t"
                         "mov %w[i], #0\n\t"
                         "add %[x], %[m], #%c[mag_obj]\n\t"
                         "add %[x], %[x], %[t], lsl #3\n"
                         "8:\n\t"
                         "ldr %[y], [%[x], %[i], lsl #3]\n\t"
                         "str %[y], [%[buf], %[i], lsl #3]\n\t"
                         "add %[i], %[i], #1\n\t"
                         "cmp %[i], %[c]\n\t"
                         "b.lo 8b\n\t"
                         "add %[kw], %[kw], %[c], lsl #%c[bits]\n\t"
                         "sub %[kw], %[kw], %[c]\n\t"
                         SWF_RSEQ_DELAY_ASM_
                         /* the commit: n - c, c more objects moved */
                         "str %[kw], [%[m], #%c[mag_n]]\n"
                         SWF_RSEQ_LEAVE_(pop_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [y] "=&r"(y), [st] "=&r"(st), [kw] "+&r"(kw)
                         : SWFI_RSEQ_IN(slots, nslots), [buf] "r"(buf), [bits] "n"(SWF_RSEQ_MOVED_SHIFT_)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    *moved = (uint32_t)c;
    return st;
}

static inline uint32_t swfi_rseq_push_many_once(uintptr_t *slots, uint32_t nslots, void *const *buf,
                                                uint32_t k, uint32_t cap, uint32_t *moved)
{
    uintptr_t t, m, c, i, x, kw = k;
    uint32_t st;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(push_many)
                         "movq %c[mag_n](%[m]), %[t]\n\t"
                         "movl %k[t], %k[i]\n\t"
                         "andl %[n_mask], %k[i]\n\t" /* n: the word's low bits */
                         "movl %[cap], %k[c]\n\t"
                         "subl %k[i], %k[c]\n\t"
                         "jbe 5f\n\t" /* full */
                         "cmpl %k[kw], %k[c]\n\t"
                         "cmoval %k[kw], %k[c]\n\t" /* c = min(cap - n, k) */
                         "testl %k[c], %k[c]\n\t"
                         "jz 5f\n\t" /* nothing to push */
                         "movq %[t], %[kw]\n\t" /* kw: the word from here on */
                         "movl %k[i], %k[t]\n\t" /* t = n: where the copy goes */
                         "xorl %k[i], %k[i]\n"
                         "8:\n\t"
                         "movq (%[buf], %[i], 8), %[x]\n\t"
                         /* obj[n + i]: unseen until n moves */
                         "movq %[x], %c[mag_obj](%[m], %[t], 8)\n\t"
                         "addq $1, %[t]\n\t"
                         "addq $1, %[i]\n\t"
                         "cmpq %[c], %[i]\n\t"
                         "jb 8b\n\t"
                         "imulq %[push_step], %[c], %[x]\n\t"
                         "addq %[x], %[kw]\n\t"
                         SWF_RSEQ_DELAY_ASM_
                         /* the commit: n + c, c more objects moved */
                         "movq %[kw], %c[mag_n](%[m])\n"
                         SWF_RSEQ_LEAVE_(push_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [st] "=&r"(st), [kw] "+&r"(kw)
                         : SWFI_RSEQ_IN(slots, nslots), [buf] "r"(buf), [cap] "r"(cap)
                         : SWF_RSEQ_CLOBBER_);
#else
    uintptr_t y;
    __asm__ __volatile__(SWF_RSEQ_ENTER_(push_many)
                         "ldr %[y], [%[m], #%c[mag_n]]\n\t"
                         "and %w[t], %w[y], #%c[n_mask]\n\t" /* n: the word's low bits */
                         "subs %w[c], %w[cap], %w[t]\n\t"
                         "b.ls 5f\n\t" /* full */
                         "cmp %w[c], %w[kw]\n\t"
                         "csel %w[c], %w[kw], %w[c], hi\n\t" /* c = min(cap - n, k) */
                         "cbz %w[c], 5f\n\t" /* nothing to push */
                         "mov %[kw], %[y]\n\t" /* kw: the word from here on */
                         "mov %w[i], #0\n\t"
                         "add %[x], %[m], #%c[mag_obj]\n"
                         "8:\n\t"
                         "ldr %[y], [%[buf], %[i], lsl #3]\n\t"
                         /* obj[n + i]: unseen until n moves */
                         "str %[y], [%[x], %[t], lsl #3]\n\t"
                         "add %[t], %[t], #1\n\t"
                         "add %[i], %[i], #1\n\t"
                         "cmp %[i], %[c]\n\t"
                         "b.lo 8b\n\t"
                         "add %[kw], %[kw], %[c], lsl #%c[bits]\n\t"
                         "add %[kw], %[kw], %[c]\n\t"
                         SWF_RSEQ_DELAY_ASM_
                         /* the commit: n + c, c more objects moved */
                         "str %[kw], [%[m], #%c[mag_n]]\n"
                         SWF_RSEQ_LEAVE_(push_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [y] "=&r"(y), [st] "=&r"(st), [kw] "+&r"(kw)
                         : SWFI_RSEQ_IN(slots, nslots), [buf] "r"(buf), [cap] "r"(cap),
                           [bits] "n"(SWF_RSEQ_MOVED_SHIFT_)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    *moved = (uint32_t)c;
    return st;
}

/* The same, retried after each abort (counted): DONE or FAIL. */
static inline bool swfi_rseq_pop(uintptr_t *slots, uint32_t nslots, void **obj)
{
    uint32_t st;
    while ((st = swfi_rseq_pop_once(slots, nslots, obj)) == SWF_RSEQ_ABORT_)
        swfi_rseq_aborts_++;
    return st == SWF_RSEQ_DONE_;
}

static inline bool swfi_rseq_push(uintptr_t *slots, uint32_t nslots, void *obj, uint32_t cap)
{
    uint32_t st;
    while ((st = swfi_rseq_push_once(slots, nslots, obj, cap)) == SWF_RSEQ_ABORT_)
        swfi_rseq_aborts_++;
    return st == SWF_RSEQ_DONE_;
}

static inline bool swfi_rseq_swap(uintptr_t *slots, uint32_t nslots, uintptr_t old,
                                  uintptr_t new_word)
{
    uint32_t st;
    while ((st = swfi_rseq_swap_once(slots, nslots, old, new_word)) == SWF_RSEQ_ABORT_)
        swfi_rseq_aborts_++;
    return st == SWF_RSEQ_DONE_;
}

static inline uint32_t swfi_rseq_pop_many(uintptr_t *slots, uint32_t nslots, void **buf, uint32_t k)
{
    uint32_t st, moved;
    while ((st = swfi_rseq_pop_many_once(slots, nslots, buf, k, &moved)) == SWF_RSEQ_ABORT_)
        swfi_rseq_aborts_++;
    return st == SWF_RSEQ_DONE_ ? moved : 0;
}

static inline uint32_t swfi_rseq_push_many(uintptr_t *slots, uint32_t nslots, void *const *buf,
                                           uint32_t k, uint32_t cap)
{
    uint32_t st, moved;
    while ((st = swfi_rseq_push_many_once(slots, nslots, buf, k, cap, &moved)) == SWF_RSEQ_ABORT_)
        swfi_rseq_aborts_++;
    return st == SWF_RSEQ_DONE_ ? moved : 0;
}

static inline bool swfi_rseq_find(uintptr_t *slots, uint32_t nslots, const void *obj)
{
    uint32_t st;
    while ((st = swfi_rseq_find_once(slots, nslots, obj)) == SWF_RSEQ_ABORT_)
        swfi_rseq_aborts_++;
    return st == SWF_RSEQ_DONE_;
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

static inline bool swfi_rseq_pop(uintptr_t *slots, uint32_t nslots, void **obj)
{
    (void)slots, (void)nslots, (void)obj;
    return false;
}

static inline bool swfi_rseq_push(uintptr_t *slots, uint32_t nslots, void *obj, uint32_t cap)
{
    (void)slots, (void)nslots, (void)obj, (void)cap;
    return false;
}

static inline bool swfi_rseq_swap(uintptr_t *slots, uint32_t nslots, uintptr_t old,
                                  uintptr_t new_word)
{
    (void)slots, (void)nslots, (void)old, (void)new_word;
    return false;
}

static inline uint32_t swfi_rseq_pop_many(uintptr_t *slots, uint32_t nslots, void **buf, uint32_t k)
{
    (void)slots, (void)nslots, (void)buf, (void)k;
    return 0;
}

static inline uint32_t swfi_rseq_push_many(uintptr_t *slots, uint32_t nslots, void *const *buf,
                                           uint32_t k, uint32_t cap)
{
    (void)slots, (void)nslots, (void)buf, (void)k, (void)cap;
    return 0;
}

static inline bool swfi_rseq_find(uintptr_t *slots, uint32_t nslots, const void *obj)
{
    (void)slots, (void)nslots, (void)obj;
    return false;
}

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
