/*
 * lib/cache/front/seq.h - the per-CPU magazines' restartable sequences (the per-CPU mode:
 * percpu.c).
 *
 * sweepfill/rseq_abi.h's pop and push, which cache.h's inline path runs too (through
 * cache_abi.h's swf_cache_pop_ and swf_cache_push_, for the library as well, which counts the
 * aborts: swfi_rseq_aborts); and the library's own sequences: replace a slot's
 * magazine (swap), find an object in it, move up to k objects at once (the bulk calls). They
 * know a magazine's layout (cache_abi.h's struct swf_magazine_ and its word), so they belong to
 * the cache; lib/base/rseq.h keeps what belongs to the thread and the process: the rseq area and
 * its registration, the mode, the slots' lock bit and the fence. So a slot's magazine is only
 * ever changed by the thread running on that CPU (index) at that moment, each change whole or
 * not at all, or by a thread that locked every slot (swfi_rseq_lock_slots).
 */
#ifndef SWF_LIB_CACHE_SEQ_H
#define SWF_LIB_CACHE_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rseq.h" /* first: a SWF_RSEQ_DELAY build's delay reaches the sequences */

#include <string.h>
#include <sweepfill/abi/cache_abi.h> /* swf_cache_pop_, swf_cache_push_; rseq_abi.h */

#define SWFI_RSEQ_MAG_N   8  /* offset of the magazine's word n */
#define SWFI_RSEQ_MAG_OBJ 16 /* offset of its obj[] */

#ifdef SWF_RSEQ

_Static_assert(SWFI_RSEQ_CPU_ID_OFF == SWF_RSEQ_CPU_ID_OFF_ &&
                   SWFI_RSEQ_CS_OFF == SWF_RSEQ_CS_OFF_ && SWFI_RSEQ_MAG_N == SWF_RSEQ_MAG_N_OFF_ &&
                   SWFI_RSEQ_MAG_OBJ == SWF_RSEQ_MAG_OBJ_OFF_,
               "the sequences' offsets");

/* The library's sequences take their inputs where cache.h's inline path takes them: the thread's
 * rseq area and the offset of its index in swf_thread_self_ (binding.h), given once per thread
 * by swfi_rseq_armed(); so every caller checks that first. */
#define SWFI_RSEQ_IN(slots, nslots) \
    SWF_RSEQ_IN_(swf_thread_self_.rseq, (uintptr_t)swf_thread_self_.rseq_index, slots, &(nslots))

/* Whether this thread's sequences have their inputs (binding.h's rseq and rseq_index), which it
 * gets here the first time it asks, once the mode is per-CPU and its area is registered; false
 * otherwise (its sequences would fail: the callers take the depot's way). Lock-free. */
static inline bool swfi_rseq_armed(void)
{
    struct swf_thread_ *t = &swf_thread_self_;
    if (__builtin_expect(t->rseq != NULL, 1))
        return true;
    int32_t cpu;
    if (swfi_rseq_mode() == SWFI_RSEQ_OFF)
        return false;
    memcpy(&cpu, swfi_rseq_area() + SWFI_RSEQ_CPU_ID_OFF, sizeof(cpu));
    if (cpu < 0) /* not registered: nothing would abort its sequences */
        return false;
    t->rseq_index = swfi_rseq_index_off_;
    t->rseq = swfi_rseq_area();
    return true;
}

/* One attempt at replacing this CPU's slot word, if it is still `old` (unlocked, not 0), with
 * `new_word` (rseq_abi.h has the pseudo-code of what every sequence does around this):
 *
 *     if (m != old) goto fail;                     // the slot changed
 *     slots[t] = new_word;                         // commit
 */
static inline uint32_t swfi_rseq_swap_once(uintptr_t *slots, uint32_t nslots, uintptr_t old,
                                           uintptr_t new_word)
{
    uintptr_t t, m;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(swap)
                         "cmpq %[old], %[m]\n\t"
                         "jne 5f\n\t" /* the slot changed */
                         SWF_RSEQ_DELAY_ASM_(m)
                         /* the commit: the slot's new word */
                         "movq %[new], (%[slots], %[t], 8)\n"
                         SWF_RSEQ_LEAVE_(swap)
                         : [t] "=&r"(t), [m] "=&r"(m)
                         : SWFI_RSEQ_IN(slots, nslots), [old] "r"(old), [new] "r"(new_word)
                         : SWF_RSEQ_CLOBBER_);
#else
    __asm__ __volatile__(SWF_RSEQ_ENTER_(swap)
                         "cmp %[m], %[old]\n\t"
                         "b.ne 5f\n\t" /* the slot changed */
                         SWF_RSEQ_DELAY_ASM_(m)
                         /* the commit: the slot's new word */
                         "str %[new], [%[slots], %[t], lsl #3]\n"
                         SWF_RSEQ_LEAVE_(swap)
                         : [t] "=&r"(t), [m] "=&r"(m)
                         : SWFI_RSEQ_IN(slots, nslots), [old] "r"(old), [new] "r"(new_word)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    return (uint32_t)t;
}

/* One attempt at finding obj in this CPU's magazine: DONE when it is there (a read-only
 * sequence: reaching its end is its commit), FAIL when it is not (or the slot is locked):
 *
 *     t = m->n & N_MASK;                           // n
 *   8:
 *     if (t-- == 0) goto fail;                     // not there
 *     x = m->obj[t];
 *     if (x != obj) goto 8;
 *                                                  // found: reaching 2 commits, no store
 */
static inline uint32_t swfi_rseq_find_once(uintptr_t *slots, uint32_t nslots, const void *obj)
{
    uintptr_t t, m, x;
    // clang-format off
#if defined(__x86_64__)
    __asm__ __volatile__(SWF_RSEQ_ENTER_(find)
                         "movl %c[mag_n](%[m]), %k[t]\n\t"
                         "andl %[n_mask], %k[t]\n" /* n: the word's low bits */
                         "8:\n\t"
                         "subl $1, %k[t]\n\t"
                         "jc 5f\n\t" /* not there */
                         SWF_RSEQ_DELAY_ASM_(x)
                         "movq %c[mag_obj](%[m], %[t], 8), %[x]\n\t"
                         "cmpq %[o], %[x]\n\t"
                         /* no store: reaching 2 (found) is the commit */
                         "jne 8b\n"
                         SWF_RSEQ_LEAVE_(find)
                         : [t] "=&r"(t), [m] "=&r"(m), [x] "=&r"(x)
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
                         SWF_RSEQ_DELAY_ASM_(x)
                         "ldr %[x], [%[a], %[t], lsl #3]\n\t"
                         "cmp %[x], %[o]\n\t"
                         /* no store: reaching 2 (found) is the commit */
                         "b.ne 8b\n"
                         SWF_RSEQ_LEAVE_(find)
                         : [t] "=&r"(t), [m] "=&r"(m), [x] "=&r"(x), [a] "=&r"(a)
                         : SWFI_RSEQ_IN(slots, nslots), [o] "r"(obj)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    return (uint32_t)t;
}

/* One attempt at moving up to k objects between this CPU's magazine and buf (the bulk calls):
 * pop copies the magazine's last min(n, k) objects to buf[0 ..], push copies min(cap - n, k) of
 * buf[0 ..] on top of it; the copy is undone by nothing, since only the store of the new word
 * (n - c or n + c, c more objects moved) commits. *moved gets the count; FAIL when it would be 0.
 * k's register holds the word once c is known (x86_64 has no register to spare). The pop:
 *
 *     w = m->n;  n = w & N_MASK;                   // the word, in kw from here on
 *     c = min(n, k);
 *     if (c == 0) goto fail;                       // empty
 *     for (i = 0; i < c; i++)
 *         buf[i] = m->obj[n - c + i];
 *     m->n = w + c * POP_STEP;                     // commit: n - c, c more objects moved
 */
static inline uint32_t swfi_rseq_pop_many_once(uintptr_t *slots, uint32_t nslots, void **buf,
                                               uint32_t k, uint32_t *moved)
{
    uintptr_t t, m, c, i, x, kw = k;
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
                         SWF_RSEQ_DELAY_ASM_(x)
                         /* the commit: n - c, c more objects moved */
                         "movq %[kw], %c[mag_n](%[m])\n"
                         SWF_RSEQ_LEAVE_(pop_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [kw] "+&r"(kw)
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
                         SWF_RSEQ_DELAY_ASM_(y)
                         /* the commit: n - c, c more objects moved */
                         "str %[kw], [%[m], #%c[mag_n]]\n"
                         SWF_RSEQ_LEAVE_(pop_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [y] "=&r"(y), [kw] "+&r"(kw)
                         : SWFI_RSEQ_IN(slots, nslots), [buf] "r"(buf), [bits] "n"(SWF_RSEQ_MOVED_SHIFT_)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    *moved = (uint32_t)c;
    return (uint32_t)t;
}

/* The push:
 *
 *     w = m->n;  n = w & N_MASK;                   // the word, in kw from here on
 *     if (cap <= n) goto fail;                     // full
 *     c = min(cap - n, k);
 *     if (c == 0) goto fail;                       // nothing to push
 *     for (i = 0; i < c; i++)
 *         m->obj[n + i] = buf[i];                  // unseen until n moves
 *     m->n = w + c * PUSH_STEP;                    // commit: n + c, c more objects moved
 */
static inline uint32_t swfi_rseq_push_many_once(uintptr_t *slots, uint32_t nslots, void *const *buf,
                                                uint32_t k, uint32_t cap, uint32_t *moved)
{
    uintptr_t t, m, c, i, x, kw = k;
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
                         SWF_RSEQ_DELAY_ASM_(x)
                         /* the commit: n + c, c more objects moved */
                         "movq %[kw], %c[mag_n](%[m])\n"
                         SWF_RSEQ_LEAVE_(push_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [kw] "+&r"(kw)
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
                         SWF_RSEQ_DELAY_ASM_(y)
                         /* the commit: n + c, c more objects moved */
                         "str %[kw], [%[m], #%c[mag_n]]\n"
                         SWF_RSEQ_LEAVE_(push_many)
                         : [t] "=&r"(t), [m] "=&r"(m), [c] "=&r"(c), [i] "=&r"(i), [x] "=&r"(x),
                           [y] "=&r"(y), [kw] "+&r"(kw)
                         : SWFI_RSEQ_IN(slots, nslots), [buf] "r"(buf), [cap] "r"(cap),
                           [bits] "n"(SWF_RSEQ_MOVED_SHIFT_)
                         : SWF_RSEQ_CLOBBER_);
#endif
    // clang-format on
    *moved = (uint32_t)c;
    return (uint32_t)t;
}

/* The same, retried after each abort (counted): DONE or FAIL. The pop and push of one object
 * are cache_abi.h's swf_cache_pop_ and swf_cache_push_, the same for every caller. */
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

#else /* !SWF_RSEQ: never called, since the mode is SWFI_RSEQ_OFF */

static inline bool swfi_rseq_armed(void)
{
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

#endif /* SWF_RSEQ */

#endif /* SWF_LIB_CACHE_SEQ_H */
