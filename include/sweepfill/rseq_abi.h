/*
 * sweepfill/rseq_abi.h - the restartable sequences of the per-CPU mode (cache.h), written once for
 * the library and for cache.h's inline path. Included by cache_abi.h; nothing here is for a user
 * to call.
 *
 * A per-CPU slot is one word: the address of a magazine (cache_abi.h's struct swf_magazine_: n at
 * offset 4, obj[] at 8) or 0, with bit 0 set while a thread on another CPU works on it. A sequence
 * stores its descriptor's address in the calling thread's rseq area (rseq_cs), loads cpu_id
 * (negative: the area is not registered, so nothing would abort the sequence: fail), the slot
 * index (cpu_id or mm_cid: the area's field at the offset the library chose), the slot (0 or
 * locked: fail), and commits with one store, its last instruction. Preemption, migration or a
 * signal before that store sends the thread to the abort handler, which the kernel requires
 * outside the section and after glibc's signature (RSEQ_SIG). Every sequence clears rseq_cs when
 * it ends, committed, failed or aborted, so no thread still points at a descriptor once the call
 * returns: an object holding inline sequences may be unloaded.
 *
 * The descriptors (struct rseq_cs: version 0, flags 0, start, post-commit offset, abort) go to the
 * section __swf_rseq_cs of the object the sequence is compiled into, 32-byte aligned and writable
 * (they hold absolute addresses: relocations in a PIC object), and into the section group of the
 * function they are compiled into, if it has one (the "?" flag): a C++ inline function or
 * template member is emitted in every unit that uses it, each copy in a COMDAT group of which the
 * linker keeps one, and a descriptor kept without its code would name a discarded section.
 * Numeric local labels only.
 */
#ifndef SWEEPFILL_RSEQ_ABI_H
#define SWEEPFILL_RSEQ_ABI_H

#include <stdint.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWF_RSEQ_TSAN_ 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SWF_RSEQ_TSAN_ 1
#endif

/* The sequences are compiled for x86_64 and aarch64 with GNU C's inline assembly, except under
 * ThreadSanitizer, which sees no happens-before through a per-CPU slot. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__)) && !defined(SWF_RSEQ_TSAN_)
#define SWF_RSEQ_ABI_ 1
#endif

#ifdef SWF_RSEQ_ABI_

/* What one attempt returns. */
#define SWF_RSEQ_DONE_  0u /* committed */
#define SWF_RSEQ_FAIL_  1u /* not committed: empty, full, locked, no slot, or not registered */
#define SWF_RSEQ_ABORT_ 2u /* aborted by the kernel: try again */

/* The library's abort test (SWF_RSEQ_DELAY) puts a delay loop inside every sequence. */
#ifndef SWF_RSEQ_DELAY_ASM_
#define SWF_RSEQ_DELAY_ASM_ ""
#define SWF_RSEQ_DELAY_IN_
#endif

/* The sequence's inputs: the area, the offset of the index in it (a uintptr_t: it is an index
 * register), the slots and their number. */
#define SWF_RSEQ_IN_(a, i, s, n) \
    [area] "r"(a), [ioff] "r"(i), [slots] "r"(s), [nslots] "r"(n)SWF_RSEQ_DELAY_IN_

/* The descriptor of a sequence from label 1 (start) to label 2 (post-commit), aborting to 4; %[t]
 * gets its address and goes to rseq_cs; then label 1 loads cpu_id, the index, and the slot into
 * %[m]. SWF_RSEQ_LEAVE_ follows the commit: done (2), the signature, the abort handler (4), failure
 * (5), and the common end (6), which clears rseq_cs. */
#if defined(__x86_64__)
#define SWF_RSEQ_ENTER_                                                              \
    ".pushsection __swf_rseq_cs, \"aw?\"\n\t.balign 32\n3:\n\t.long 0, 0\n\t"        \
    ".quad 1f, 2f - 1f, 4f\n\t.popsection\n\t"                                       \
    "leaq 3b(%%rip), %[t]\n\tmovq %[t], 8(%[area])\n"                                \
    "1:\n\t"                                                                         \
    "movl 4(%[area]), %k[t]\n\ttestl %k[t], %k[t]\n\tjs 5f\n\t" /* not registered */ \
    "movl (%[area], %[ioff]), %k[t]\n\tcmpl %[nslots], %k[t]\n\tjae 5f\n\t"          \
    "movq (%[slots], %[t], 8), %[m]\n\ttestq $1, %[m]\n\tjnz 5f\n\t" /* locked */    \
    "testq %[m], %[m]\n\tjz 5f\n\t"
#define SWF_RSEQ_LEAVE_                            \
    "2:\n\txorl %k[st], %k[st]\n\tjmp 6f\n\t"      \
    ".byte 0x0f, 0xb9, 0x3d\n\t.long 0x53053053\n" \
    "4:\n\tmovl $2, %k[st]\n\tjmp 6f\n"            \
    "5:\n\tmovl $1, %k[st]\n"                      \
    "6:\n\tmovq $0, 8(%[area])\n"
#elif defined(__aarch64__)
#define SWF_RSEQ_ENTER_                                                       \
    ".pushsection __swf_rseq_cs, \"aw?\"\n\t.balign 32\n3:\n\t.long 0, 0\n\t" \
    ".quad 1f, 2f - 1f, 4f\n\t.popsection\n\t"                                \
    "adrp %[t], 3b\n\tadd %[t], %[t], :lo12:3b\n\tstr %[t], [%[area], #8]\n"  \
    "1:\n\t"                                                                  \
    "ldr %w[t], [%[area], #4]\n\ttbnz %w[t], #31, 5f\n\t"                     \
    "ldr %w[t], [%[area], %[ioff]]\n\tcmp %w[t], %w[nslots]\n\tb.hs 5f\n\t"   \
    "ldr %[m], [%[slots], %[t], lsl #3]\n\ttbnz %[m], #0, 5f\n\t"             \
    "cbz %[m], 5f\n\t"
#define SWF_RSEQ_LEAVE_                \
    "2:\n\tmov %w[st], #0\n\tb 6f\n\t" \
    ".inst 0xd428bc00\n"               \
    "4:\n\tmov %w[st], #2\n\tb 6f\n"   \
    "5:\n\tmov %w[st], #1\n"           \
    "6:\n\tstr xzr, [%[area], #8]\n"
#endif

/* One attempt at popping an object from this CPU's magazine (fails when it is empty). */
static inline uint32_t swf_rseq_pop_once_(char *area, uintptr_t ioff, uintptr_t *slots,
                                          uint32_t nslots, void **obj)
{
    uintptr_t t, m;
    void *o;
    uint32_t st;
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_ "movl 4(%[m]), %k[t]\n\tsubl $1, %k[t]\n\tjc 5f\n\t"
                                         "movq 8(%[m], %[t], 8), %[o]\n\t" SWF_RSEQ_DELAY_ASM_
                                         "movl %k[t], 4(%[m])\n" SWF_RSEQ_LEAVE_
                         : [t] "=&r"(t), [m] "=&r"(m), [o] "=&r"(o), [st] "=&r"(st)
                         : SWF_RSEQ_IN_(area, ioff, slots, nslots)
                         : "memory", "cc");
#else
    __asm__ __volatile__(
        SWF_RSEQ_ENTER_
        "ldr %w[t], [%[m], #4]\n\tcbz %w[t], 5f\n\tsub %w[t], %w[t], #1\n\t"
        "add %[o], %[m], #8\n\tldr %[o], [%[o], %[t], lsl #3]\n\t" SWF_RSEQ_DELAY_ASM_
        "str %w[t], [%[m], #4]\n" SWF_RSEQ_LEAVE_
        : [t] "=&r"(t), [m] "=&r"(m), [o] "=&r"(o), [st] "=&r"(st)
        : SWF_RSEQ_IN_(area, ioff, slots, nslots)
        : "memory", "cc");
#endif
    *obj = o;
    return st;
}

/* One attempt at pushing obj on this CPU's magazine of capacity cap (fails when it is full). */
static inline uint32_t swf_rseq_push_once_(char *area, uintptr_t ioff, uintptr_t *slots,
                                           uint32_t nslots, void *obj, uint32_t cap)
{
    uintptr_t t, m;
    uint32_t st;
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_
                         "movl 4(%[m]), %k[t]\n\tcmpl %[cap], %k[t]\n\tjae 5f\n\t"
                         "movq %[o], 8(%[m], %[t], 8)\n\taddl $1, %k[t]\n\t" SWF_RSEQ_DELAY_ASM_
                         "movl %k[t], 4(%[m])\n" SWF_RSEQ_LEAVE_
                         : [t] "=&r"(t), [m] "=&r"(m), [st] "=&r"(st)
                         : SWF_RSEQ_IN_(area, ioff, slots, nslots), [o] "r"(obj), [cap] "r"(cap)
                         : "memory", "cc");
#else
    uintptr_t a;
    __asm__ __volatile__(SWF_RSEQ_ENTER_
                         "ldr %w[t], [%[m], #4]\n\tcmp %w[t], %w[cap]\n\tb.hs 5f\n\t"
                         "add %[a], %[m], #8\n\tstr %[o], [%[a], %[t], lsl #3]\n\t"
                         "add %w[t], %w[t], #1\n\t" SWF_RSEQ_DELAY_ASM_
                         "str %w[t], [%[m], #4]\n" SWF_RSEQ_LEAVE_
                         : [t] "=&r"(t), [m] "=&r"(m), [a] "=&r"(a), [st] "=&r"(st)
                         : SWF_RSEQ_IN_(area, ioff, slots, nslots), [o] "r"(obj), [cap] "r"(cap)
                         : "memory", "cc");
#endif
    return st;
}

#endif /* SWF_RSEQ_ABI_ */

#endif /* SWEEPFILL_RSEQ_ABI_H */
