/*
 * sweepfill/abi/rseq_abi.h - the restartable sequences of the per-CPU mode (cache.h), written once
 * for the library and for cache.h's inline path. Included by cache_abi.h; nothing here is for a
 * user to call.
 *
 * A per-CPU slot is one word: the address of a magazine (cache_abi.h's struct swf_magazine_: its
 * word n at offset 8, obj[] at 16) or 0, with bit 0 set while a thread on another CPU works on it.
 * The magazine's word holds the objects it holds in its low SWF_RSEQ_N_BITS_ bits; in a slot, the
 * bits above hold 1 + the objects it held when it went there, and the bits from
 * SWF_RSEQ_MOVED_SHIFT_ up the objects the sequences moved in or out since: a pop adds
 * SWF_RSEQ_POP_STEP_ (n - 1, one more moved), a push SWF_RSEQ_PUSH_STEP_ (n + 1, one more moved),
 * in the one store that commits, so the library counts every allocation and free from the
 * magazines alone, each from one load of one word, with no state and no counter of a thread's
 * own. A sequence
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
 * linker keeps one, and a descriptor kept without its code would name a discarded section. The
 * abort handlers go to the section .text.unlikely.swf_rseq, in the same group: out of the hot
 * text, and jumping back to the sequence's common end. Descriptors and handlers get local symbols
 * (__swf_rseq_cs_pop_N, __swf_rseq_abort_pop_N: N is unique per instance of the asm); the
 * labels inside a sequence are numeric local labels.
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

/* The offsets the sequences use: the rseq area's cpu_id and rseq_cs (struct rseq, linux/rseq.h;
 * the index, cpu_id or mm_cid, is an input), and a magazine's word n and obj[] (cache_abi.h). */
#define SWF_RSEQ_CPU_ID_OFF_  4
#define SWF_RSEQ_CS_OFF_      8
#define SWF_RSEQ_MAG_N_OFF_   8
#define SWF_RSEQ_MAG_OBJ_OFF_ 16

#endif /* SWF_RSEQ_ABI_ */

/* A magazine's word (cache_abi.h's n): bits 0-5, the objects held; in a per-CPU slot, bits 6-11,
 * 1 + the objects it held when it went there (0: not in a slot), and bits 12-63, the objects the
 * sequences moved in or out since. Outside a slot the word is n alone. */
#define SWF_RSEQ_N_BITS_      6
#define SWF_RSEQ_N_MASK_      63u
#define SWF_RSEQ_MOVED_SHIFT_ 12
#define SWF_RSEQ_POP_STEP_    4095 /* one object out: n - 1, moved + 1 */
#define SWF_RSEQ_PUSH_STEP_   4097 /* one object in: n + 1, moved + 1 */

#ifdef SWF_RSEQ_ABI_

/* The library's abort test (SWF_RSEQ_DELAY) puts a delay loop inside every sequence, counting
 * down in the operand named r, a register the sequence no longer needs at that point. */
#ifndef SWF_RSEQ_DELAY_ASM_
#define SWF_RSEQ_DELAY_ASM_(r) ""
#define SWF_RSEQ_DELAY_IN_
#endif

/* The number of slots stays in memory on x86_64 (the cmp reads it there: one register less on
 * the fast path), and comes in a register on aarch64; n is where it lies (a uint32_t *). */
#if defined(__x86_64__)
#define SWF_RSEQ_NSLOTS_(n) "m"(*(n))
#else
#define SWF_RSEQ_NSLOTS_(n) "r"(*(n))
#endif

/* The sequence's inputs: the area, the offset of the index in it (a uintptr_t: it is an index
 * register), the slots and where their number lies; then the offsets, the word's steps and the
 * status codes, as constants. */
#define SWF_RSEQ_IN_(a, i, s, n)                                                \
    [area] "r"(a), [ioff] "r"(i), [slots] "r"(s), [nslots] SWF_RSEQ_NSLOTS_(n), \
        [cs_off] "n"(SWF_RSEQ_CS_OFF_), [cpu_off] "n"(SWF_RSEQ_CPU_ID_OFF_),    \
        [mag_n] "n"(SWF_RSEQ_MAG_N_OFF_), [mag_obj] "n"(SWF_RSEQ_MAG_OBJ_OFF_), \
        [n_mask] "n"(SWF_RSEQ_N_MASK_), [pop_step] "n"(SWF_RSEQ_POP_STEP_),     \
        [push_step] "n"(SWF_RSEQ_PUSH_STEP_), [done] "n"(SWF_RSEQ_DONE_),       \
        [fail] "n"(SWF_RSEQ_FAIL_), [abort] "n"(SWF_RSEQ_ABORT_)SWF_RSEQ_DELAY_IN_

// clang-format off
/* The names a sequence's descriptor and abort handler get (local symbols, seen by nm, perf and
 * gdb): %= makes each instance of the asm unique, an inline function being emitted many times. */
#define SWF_RSEQ_CS_NAME_(name)    "__swf_rseq_cs_" #name "_%="
#define SWF_RSEQ_ABORT_NAME_(name) "__swf_rseq_abort_" #name "_%="

/* The descriptor of the sequence `name`, from label 1 (start) to label 2 (post-commit), aborting
 * to its abort handler: version 0, flags 0, start_ip, post_commit_offset, abort_ip. */
#define SWF_RSEQ_CS_(name)                                                             \
    ".pushsection __swf_rseq_cs, \"aw?\"\n\t"                                          \
    ".balign 32\n"                                                                     \
    SWF_RSEQ_CS_NAME_(name) ":\n\t"                                                    \
    ".long 0, 0\n\t"                                                                   \
    ".quad 1f, 2f - 1f, " SWF_RSEQ_ABORT_NAME_(name) "\n\t"                            \
    ".type " SWF_RSEQ_CS_NAME_(name) ", STT_OBJECT\n\t"                                \
    ".size " SWF_RSEQ_CS_NAME_(name) ", 32\n\t"                                        \
    ".popsection\n\t"

/* The abort handler's section: out of the hot text, and in the section group of the function the
 * sequence is compiled into, if it has one (as the descriptor). */
#define SWF_RSEQ_COLD_ ".pushsection .text.unlikely.swf_rseq, \"ax?\"\n\t"

/* SWF_RSEQ_ENTER_(name) emits the descriptor, stores its address (through %[t]) to rseq_cs, and
 * from label 1 loads cpu_id, the index, and the slot into %[m]. SWF_RSEQ_LEAVE_(name) follows the
 * commit: done (2), the common end (6), which clears rseq_cs, and in their own section failure
 * (5; on aarch64 in the hot text: see there), the signature and the abort handler, both of which
 * jump back to 6. The status (SWF_RSEQ_DONE_, _FAIL_, _ABORT_) ends in %[t]: no register of its
 * own. Numeric local labels for the rest. */
#if defined(__x86_64__)
#define SWF_RSEQ_ENTER_(name)                                                          \
    SWF_RSEQ_CS_(name)                                                                 \
    "leaq " SWF_RSEQ_CS_NAME_(name) "(%%rip), %[t]\n\t"                                \
    /* rseq_cs = &descriptor: from label 1 the kernel aborts the sequence */           \
    "movq %[t], %c[cs_off](%[area])\n"                                                 \
    "1:\n\t"                                                                           \
    "movl %c[cpu_off](%[area]), %k[t]\n\t"                                             \
    "testl %k[t], %k[t]\n\t"                                                           \
    "js 5f\n\t" /* cpu_id < 0: not registered, nothing would abort us */               \
    "movl (%[area], %[ioff]), %k[t]\n\t"                                               \
    "cmpl %[nslots], %k[t]\n\t"                                                        \
    "jae 5f\n\t" /* index >= slots */                                                  \
    "movq (%[slots], %[t], 8), %[m]\n\t"                                               \
    "testq $1, %[m]\n\t"                                                               \
    "jnz 5f\n\t" /* locked (bit 0) */                                                  \
    "testq %[m], %[m]\n\t"                                                             \
    "jz 5f\n\t" /* no magazine */
#define SWF_RSEQ_LEAVE_(name)                                                          \
    "2:\n\t"                                                                           \
    "movl %[done], %k[t]\n" /* the status, in the register the index is done with */   \
    "6:\n\t"                                                                           \
    "movq $0, %c[cs_off](%[area])\n\t" /* rseq_cs = 0: the sequence is over */         \
    SWF_RSEQ_COLD_                                                                     \
    /* failure: out of the hot text, a jcc's rel32 reaches it */                       \
    "5:\n\t"                                                                           \
    "movl %[fail], %k[t]\n\t"                                                          \
    "jmp 6b\n\t"                                                                       \
    /* RSEQ_SIG, the 4 bytes before the handler: ud1 0x53053053(%rip), %edi */         \
    ".byte 0x0f, 0xb9, 0x3d\n\t"                                                       \
    ".long 0x53053053\n"                                                               \
    /* the abort handler: the kernel sends the thread here from 1 .. 2 */              \
    SWF_RSEQ_ABORT_NAME_(name) ":\n\t"                                                 \
    "movl %[abort], %k[t]\n\t"                                                         \
    "jmp 6b\n\t"                                                                       \
    ".type " SWF_RSEQ_ABORT_NAME_(name) ", STT_FUNC\n\t"                               \
    ".size " SWF_RSEQ_ABORT_NAME_(name) ", . - " SWF_RSEQ_ABORT_NAME_(name) "\n\t"     \
    ".popsection\n"
/* The abort handler's jump back is a rel32: no linker veneer, no register to spare. */
#define SWF_RSEQ_CLOBBER_ "memory", "cc"
#elif defined(__aarch64__)
#define SWF_RSEQ_ENTER_(name)                                                          \
    SWF_RSEQ_CS_(name)                                                                 \
    "adrp %[t], " SWF_RSEQ_CS_NAME_(name) "\n\t"                                       \
    "add %[t], %[t], :lo12:" SWF_RSEQ_CS_NAME_(name) "\n\t"                            \
    /* rseq_cs = &descriptor: from label 1 the kernel aborts the sequence */           \
    "str %[t], [%[area], #%c[cs_off]]\n"                                               \
    "1:\n\t"                                                                           \
    "ldr %w[t], [%[area], #%c[cpu_off]]\n\t"                                           \
    "tbnz %w[t], #31, 5f\n\t" /* cpu_id < 0: not registered */                         \
    "ldr %w[t], [%[area], %[ioff]]\n\t"                                                \
    "cmp %w[t], %w[nslots]\n\t"                                                        \
    "b.hs 5f\n\t" /* index >= slots */                                                 \
    "ldr %[m], [%[slots], %[t], lsl #3]\n\t"                                           \
    "tbnz %[m], #0, 5f\n\t" /* locked (bit 0) */                                       \
    "cbz %[m], 5f\n\t" /* no magazine */
#define SWF_RSEQ_LEAVE_(name)                                                          \
    "2:\n\t"                                                                           \
    "mov %w[t], #%c[done]\n\t" /* the status, in the register the index is done with */\
    "b 6f\n\t"                                                                         \
    SWF_RSEQ_COLD_                                                                     \
    ".balign 4\n\t"                                                                    \
    /* RSEQ_SIG, the 4 bytes before the handler: brk #0x45e0 */                        \
    ".inst 0xd428bc00\n"                                                               \
    /* the abort handler: the kernel sends the thread here from 1 .. 2 */              \
    SWF_RSEQ_ABORT_NAME_(name) ":\n\t"                                                 \
    "mov %w[t], #%c[abort]\n\t"                                                        \
    "b 6f\n\t"                                                                         \
    ".type " SWF_RSEQ_ABORT_NAME_(name) ", STT_FUNC\n\t"                               \
    ".size " SWF_RSEQ_ABORT_NAME_(name) ", . - " SWF_RSEQ_ABORT_NAME_(name) "\n\t"     \
    ".popsection\n"                                                                    \
    /* failure: in the hot text, where a conditional branch's short reach finds it */  \
    "5:\n\t"                                                                           \
    "mov %w[t], #%c[fail]\n"                                                           \
    "6:\n\t"                                                                           \
    "str xzr, [%[area], #%c[cs_off]]\n" /* rseq_cs = 0: the sequence is over */
/* The abort handler's jump back may go through a linker veneer (more than 128 MiB of code between
 * the sections), which may use x16 and x17: the sequences' operands stay out of them. */
#define SWF_RSEQ_CLOBBER_ "memory", "cc", "x16", "x17"
#endif
// clang-format on

/* What every sequence below does around its own part (rseq_abi.h's pseudo-code; one C line for
 * one or two instructions, the assembly then checked against it):
 *
 *     area->rseq_cs = &descriptor;                 // from label 1 the kernel aborts us
 *   1:
 *     if ((int32_t)area->cpu_id < 0) goto fail;    // not registered: nothing would abort us
 *     t = *(uint32_t *)(area + ioff);              // cpu_id or mm_cid
 *     if (t >= nslots) goto fail;
 *     m = slots[t];
 *     if (m & 1) goto fail;                        // locked by another CPU's thread
 *     if (m == 0) goto fail;                       // no magazine
 *     ... the sequence's own part, ending in its one committing store ...
 *   2:
 *     t = DONE;
 *   6:
 *     area->rseq_cs = 0;                           // over: no descriptor left pointed at
 *     return t;
 *   fail (5):   t = FAIL;  goto 6;
 *   abort:      t = ABORT; goto 6;                 // the kernel's, after RSEQ_SIG
 */

/* One attempt at popping an object from this CPU's magazine (fails when it is empty):
 *
 *     w = m->n;                                    // the word
 *     t = (w & N_MASK) - 1;                        // n - 1
 *     if (borrow) goto fail;                       // n == 0: empty
 *     o = m->obj[t];
 *     w += POP_STEP;                               // n - 1, one more object moved
 *     m->n = w;                                    // commit
 */
static inline uint32_t swf_rseq_pop_once_(char *area, uintptr_t ioff, uintptr_t *slots,
                                          const uint32_t *nslots, void **obj)
{
    uintptr_t t, m, w;
    void *o;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(pop)
                         "movq %c[mag_n](%[m]), %[w]\n\t"
                         "movl %k[w], %k[t]\n\t"
                         "andl %[n_mask], %k[t]\n\t" /* n: the word's low bits */
                         "subl $1, %k[t]\n\t"
                         "jc 5f\n\t" /* empty */
                         "movq %c[mag_obj](%[m], %[t], 8), %[o]\n\t"
                         "addq %[pop_step], %[w]\n\t"
                         SWF_RSEQ_DELAY_ASM_(t)
                         /* the commit: n - 1, one more object moved */
                         "movq %[w], %c[mag_n](%[m])\n"
                         SWF_RSEQ_LEAVE_(pop)
                         : [t] "=&r"(t), [m] "=&r"(m), [w] "=&r"(w), [o] "=&r"(o)
                         : SWF_RSEQ_IN_(area, ioff, slots, nslots)
                         : SWF_RSEQ_CLOBBER_);
#else
    __asm__ __volatile__(SWF_RSEQ_ENTER_(pop)
                         "ldr %[w], [%[m], #%c[mag_n]]\n\t"
                         "and %w[t], %w[w], #%c[n_mask]\n\t" /* n: the word's low bits */
                         "cbz %w[t], 5f\n\t" /* empty */
                         "sub %w[t], %w[t], #1\n\t"
                         "add %[o], %[m], #%c[mag_obj]\n\t"
                         "ldr %[o], [%[o], %[t], lsl #3]\n\t"
                         "add %[w], %[w], #%c[pop_step]\n\t"
                         SWF_RSEQ_DELAY_ASM_(t)
                         /* the commit: n - 1, one more object moved */
                         "str %[w], [%[m], #%c[mag_n]]\n"
                         SWF_RSEQ_LEAVE_(pop)
                         : [t] "=&r"(t), [m] "=&r"(m), [w] "=&r"(w), [o] "=&r"(o)
                         : SWF_RSEQ_IN_(area, ioff, slots, nslots)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    *obj = o;
    return t & 0xffffffffu; /* the status sits in the low half of the register */
}

/* One attempt at pushing obj on this CPU's magazine of capacity cap (fails when it is full):
 *
 *     w = m->n;                                    // the word
 *     t = w & N_MASK;                              // n
 *     if (t >= cap) goto fail;                     // full
 *     m->obj[t] = obj;                             // unseen until n moves
 *     w += PUSH_STEP;                              // n + 1, one more object moved
 *     m->n = w;                                    // commit
 */
static inline uint32_t swf_rseq_push_once_(char *area, uintptr_t ioff, uintptr_t *slots,
                                           const uint32_t *nslots, void *obj, uint32_t cap)
{
    uintptr_t t, m, w;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(push)
                         "movq %c[mag_n](%[m]), %[w]\n\t"
                         "movl %k[w], %k[t]\n\t"
                         "andl %[n_mask], %k[t]\n\t" /* n: the word's low bits */
                         "cmpl %[cap], %k[t]\n\t"
                         "jae 5f\n\t" /* full */
                         /* obj[n] = obj: unseen until n moves */
                         "movq %[o], %c[mag_obj](%[m], %[t], 8)\n\t"
                         "addq %[push_step], %[w]\n\t"
                         SWF_RSEQ_DELAY_ASM_(t)
                         /* the commit: n + 1, one more object moved */
                         "movq %[w], %c[mag_n](%[m])\n"
                         SWF_RSEQ_LEAVE_(push)
                         : [t] "=&r"(t), [m] "=&r"(m), [w] "=&r"(w)
                         : SWF_RSEQ_IN_(area, ioff, slots, nslots), [o] "r"(obj), [cap] "ri"(cap)
                         : SWF_RSEQ_CLOBBER_);
#else
    uintptr_t a;
    __asm__ __volatile__(SWF_RSEQ_ENTER_(push)
                         "ldr %[w], [%[m], #%c[mag_n]]\n\t"
                         "and %w[t], %w[w], #%c[n_mask]\n\t" /* n: the word's low bits */
                         "cmp %w[t], %w[cap]\n\t"
                         "b.hs 5f\n\t" /* full */
                         "add %[a], %[m], #%c[mag_obj]\n\t"
                         /* obj[n] = obj: unseen until n moves */
                         "str %[o], [%[a], %[t], lsl #3]\n\t"
                         /* push_step does not fit an immediate: moved + 1, then n + 1 */
                         "add %[w], %[w], #1, lsl #%c[moved]\n\t"
                         "add %[w], %[w], #1\n\t"
                         SWF_RSEQ_DELAY_ASM_(t)
                         /* the commit: n + 1, one more object moved */
                         "str %[w], [%[m], #%c[mag_n]]\n"
                         SWF_RSEQ_LEAVE_(push)
                         : [t] "=&r"(t), [m] "=&r"(m), [w] "=&r"(w), [a] "=&r"(a)
                         : SWF_RSEQ_IN_(area, ioff, slots, nslots), [o] "r"(obj), [cap] "r"(cap),
                           [moved] "n"(SWF_RSEQ_MOVED_SHIFT_)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    return t & 0xffffffffu; /* the status sits in the low half of the register */
}

#endif /* SWF_RSEQ_ABI_ */

#endif /* SWEEPFILL_RSEQ_ABI_H */
