/*
 * lib/base/atomic.h - the atomic operations sweepfill uses, each named with its memory order.
 *
 * Library code touches shared words only through these wrappers, so every ordering decision is
 * visible at the call site and reviewable ("store_release", never "store, order as passed").
 * Fields accessed through them are named with an `x_` prefix.
 *
 * Two implementations with the same meaning:
 *   - ck (default): Concurrency Kit's ck_pr loads, stores, read-modify-writes and fences. ck_pr
 *     operations carry no ordering of their own, so each wrapper adds the fences its name promises
 *     (they compile to nothing on x86's TSO model, and to real barriers elsewhere).
 *   - c11 (meson -Datomics=c11, and always under ThreadSanitizer): <stdatomic.h> explicit
 *     operations on the same plain fields viewed as _Atomic, which ThreadSanitizer understands
 *     (ck_pr's volatile accesses and fences it cannot see as synchronisation).
 *
 * Sizes: pointers, uintptr_t, unsigned int, uint32_t and uint64_t. The c11 build relies on
 * _Atomic(T) having T's size and representation, which holds on every target GCC and Clang support
 * for these types.
 */
#ifndef SWF_LIB_ATOMIC_H
#define SWF_LIB_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/tsan.h" /* SWF_TSAN */

#if defined(SWF_ATOMICS_C11) || defined(SWF_TSAN)

#include <stdatomic.h>

#define SWF_AP(p)  ((_Atomic(void *) *)(p))
#define SWF_A32(p) ((_Atomic(uint32_t) *)(p))
#define SWF_A64(p) ((_Atomic(uint64_t) *)(p))
#define SWF_A8(p)  ((_Atomic(uint8_t) *)(p))

/* pointers */
static inline void *swfi_load_relaxed_ptr(void *const *p)
{
    return atomic_load_explicit(SWF_AP(p), memory_order_relaxed);
}
static inline void *swfi_load_acquire_ptr(void *const *p)
{
    return atomic_load_explicit(SWF_AP(p), memory_order_acquire);
}
static inline void swfi_store_relaxed_ptr(void **p, void *v)
{
    atomic_store_explicit(SWF_AP(p), v, memory_order_relaxed);
}
static inline void swfi_store_release_ptr(void **p, void *v)
{
    atomic_store_explicit(SWF_AP(p), v, memory_order_release);
}
/* Strong compare-and-swap; on failure *expected receives the value seen. */
static inline bool swfi_cas_acq_rel_ptr(void **p, void **expected, void *desired)
{
    return atomic_compare_exchange_strong_explicit(SWF_AP(p), expected, desired,
                                                   memory_order_acq_rel, memory_order_acquire);
}
static inline bool swfi_cas_release_ptr(void **p, void **expected, void *desired)
{
    return atomic_compare_exchange_strong_explicit(SWF_AP(p), expected, desired,
                                                   memory_order_release, memory_order_relaxed);
}
static inline void *swfi_exchange_acquire_ptr(void **p, void *v)
{
    return atomic_exchange_explicit(SWF_AP(p), v, memory_order_acquire);
}

/* 32-bit */
static inline uint32_t swfi_load_relaxed_32(const uint32_t *p)
{
    return atomic_load_explicit(SWF_A32(p), memory_order_relaxed);
}
static inline uint32_t swfi_load_acquire_32(const uint32_t *p)
{
    return atomic_load_explicit(SWF_A32(p), memory_order_acquire);
}
static inline void swfi_store_relaxed_32(uint32_t *p, uint32_t v)
{
    atomic_store_explicit(SWF_A32(p), v, memory_order_relaxed);
}
static inline void swfi_store_release_32(uint32_t *p, uint32_t v)
{
    atomic_store_explicit(SWF_A32(p), v, memory_order_release);
}
static inline bool swfi_cas_acq_rel_32(uint32_t *p, uint32_t *expected, uint32_t desired)
{
    return atomic_compare_exchange_strong_explicit(SWF_A32(p), expected, desired,
                                                   memory_order_acq_rel, memory_order_acquire);
}
static inline uint32_t swfi_fetch_add_acq_rel_32(uint32_t *p, uint32_t v)
{
    return atomic_fetch_add_explicit(SWF_A32(p), v, memory_order_acq_rel);
}
static inline uint32_t swfi_fetch_sub_acq_rel_32(uint32_t *p, uint32_t v)
{
    return atomic_fetch_sub_explicit(SWF_A32(p), v, memory_order_acq_rel);
}
static inline uint32_t swfi_fetch_add_relaxed_32(uint32_t *p, uint32_t v)
{
    return atomic_fetch_add_explicit(SWF_A32(p), v, memory_order_relaxed);
}
static inline uint32_t swfi_exchange_relaxed_32(uint32_t *p, uint32_t v)
{
    return atomic_exchange_explicit(SWF_A32(p), v, memory_order_relaxed);
}
/* Sequentially consistent: for the protocols that need one total order of a store (or a
 * read-modify-write) and a later load on another word (a Dekker pair: feature.c's C and D,
 * section.c's wake and idle words). */
static inline uint32_t swfi_load_seq_cst_32(const uint32_t *p)
{
    return atomic_load_explicit(SWF_A32(p), memory_order_seq_cst);
}
static inline void swfi_store_seq_cst_32(uint32_t *p, uint32_t v)
{
    atomic_store_explicit(SWF_A32(p), v, memory_order_seq_cst);
}
static inline uint32_t swfi_fetch_add_seq_cst_32(uint32_t *p, uint32_t v)
{
    return atomic_fetch_add_explicit(SWF_A32(p), v, memory_order_seq_cst);
}
static inline uint32_t swfi_fetch_or_seq_cst_32(uint32_t *p, uint32_t v)
{
    return atomic_fetch_or_explicit(SWF_A32(p), v, memory_order_seq_cst);
}
static inline uint32_t swfi_fetch_and_seq_cst_32(uint32_t *p, uint32_t v)
{
    return atomic_fetch_and_explicit(SWF_A32(p), v, memory_order_seq_cst);
}

/* unsigned int (Concurrency Kit's epoch record fields) */
static inline unsigned int swfi_load_relaxed_uint(const unsigned int *p)
{
    return atomic_load_explicit((_Atomic(unsigned int) *)p, memory_order_relaxed);
}
static inline void swfi_store_relaxed_uint(unsigned int *p, unsigned int v)
{
    atomic_store_explicit((_Atomic(unsigned int) *)p, v, memory_order_relaxed);
}

/* uintptr_t (the per-CPU slots: a pointer with a lock bit) */
static inline uintptr_t swfi_load_relaxed_uptr(const uintptr_t *p)
{
    return atomic_load_explicit((_Atomic(uintptr_t) *)p, memory_order_relaxed);
}
static inline uintptr_t swfi_load_acquire_uptr(const uintptr_t *p)
{
    return atomic_load_explicit((_Atomic(uintptr_t) *)p, memory_order_acquire);
}
/* Strong compare-and-swap, acq_rel on success; a failure is relaxed (the caller retries with
 * the value seen). */
static inline bool swfi_cas_acq_rel_uptr(uintptr_t *p, uintptr_t *expected, uintptr_t desired)
{
    return atomic_compare_exchange_strong_explicit((_Atomic(uintptr_t) *)p, expected, desired,
                                                   memory_order_acq_rel, memory_order_relaxed);
}
static inline uintptr_t swfi_fetch_and_release_uptr(uintptr_t *p, uintptr_t v)
{
    return atomic_fetch_and_explicit((_Atomic(uintptr_t) *)p, v, memory_order_release);
}

/* 64-bit */
static inline uint64_t swfi_load_relaxed_64(const uint64_t *p)
{
    return atomic_load_explicit(SWF_A64(p), memory_order_relaxed);
}
static inline uint64_t swfi_load_acquire_64(const uint64_t *p)
{
    return atomic_load_explicit(SWF_A64(p), memory_order_acquire);
}
static inline void swfi_store_relaxed_64(uint64_t *p, uint64_t v)
{
    atomic_store_explicit(SWF_A64(p), v, memory_order_relaxed);
}
static inline void swfi_store_release_64(uint64_t *p, uint64_t v)
{
    atomic_store_explicit(SWF_A64(p), v, memory_order_release);
}
static inline bool swfi_cas_acq_rel_64(uint64_t *p, uint64_t *expected, uint64_t desired)
{
    return atomic_compare_exchange_strong_explicit(SWF_A64(p), expected, desired,
                                                   memory_order_acq_rel, memory_order_acquire);
}
static inline uint64_t swfi_fetch_add_relaxed_64(uint64_t *p, uint64_t v)
{
    return atomic_fetch_add_explicit(SWF_A64(p), v, memory_order_relaxed);
}
static inline uint64_t swfi_fetch_sub_relaxed_64(uint64_t *p, uint64_t v)
{
    return atomic_fetch_sub_explicit(SWF_A64(p), v, memory_order_relaxed);
}
static inline uint64_t swfi_fetch_add_release_64(uint64_t *p, uint64_t v)
{
    return atomic_fetch_add_explicit(SWF_A64(p), v, memory_order_release);
}

/* 8-bit (debug-build object states only) */
static inline uint8_t swfi_load_relaxed_8(const uint8_t *p)
{
    return atomic_load_explicit(SWF_A8(p), memory_order_relaxed);
}
static inline void swfi_store_relaxed_8(uint8_t *p, uint8_t v)
{
    atomic_store_explicit(SWF_A8(p), v, memory_order_relaxed);
}
static inline bool swfi_cas_relaxed_8(uint8_t *p, uint8_t *expected, uint8_t desired)
{
    return atomic_compare_exchange_strong_explicit(SWF_A8(p), expected, desired,
                                                   memory_order_relaxed, memory_order_relaxed);
}

/* Fences keep their meaning for the hardware; ThreadSanitizer does not model them (GCC says so
 * with -Wtsan), which is fine here: sweepfill's fences order accesses inside Concurrency Kit's
 * uninstrumented ck_epoch, and the edges TSan needs are stated with lib/base/tsan.h. */
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wtsan"
#endif
/* A full fence: orders earlier stores before later loads (the store-load case). */
static inline void swfi_fence_seq_cst(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}
/* An acquire fence: earlier loads before later loads and stores. */
static inline void swfi_fence_acquire(void)
{
    atomic_thread_fence(memory_order_acquire);
}
#pragma GCC diagnostic pop

#else /* ck_pr */

#include <ck_pr.h>

static inline void *swfi_load_relaxed_ptr(void *const *p)
{
    return ck_pr_load_ptr(p);
}
static inline void *swfi_load_acquire_ptr(void *const *p)
{
    void *v = ck_pr_load_ptr(p);
    ck_pr_fence_acquire();
    return v;
}
static inline void swfi_store_relaxed_ptr(void **p, void *v)
{
    ck_pr_store_ptr(p, v);
}
static inline void swfi_store_release_ptr(void **p, void *v)
{
    ck_pr_fence_release();
    ck_pr_store_ptr(p, v);
}
static inline bool swfi_cas_acq_rel_ptr(void **p, void **expected, void *desired)
{
    ck_pr_fence_release();
    bool ok = ck_pr_cas_ptr_value(p, *expected, desired, expected);
    ck_pr_fence_acquire();
    return ok;
}
static inline bool swfi_cas_release_ptr(void **p, void **expected, void *desired)
{
    ck_pr_fence_release();
    return ck_pr_cas_ptr_value(p, *expected, desired, expected);
}
static inline void *swfi_exchange_acquire_ptr(void **p, void *v)
{
    void *old = ck_pr_fas_ptr(p, v);
    ck_pr_fence_acquire();
    return old;
}

static inline uint32_t swfi_load_relaxed_32(const uint32_t *p)
{
    return ck_pr_load_32(p);
}
static inline uint32_t swfi_load_acquire_32(const uint32_t *p)
{
    uint32_t v = ck_pr_load_32(p);
    ck_pr_fence_acquire();
    return v;
}
static inline void swfi_store_relaxed_32(uint32_t *p, uint32_t v)
{
    ck_pr_store_32(p, v);
}
static inline void swfi_store_release_32(uint32_t *p, uint32_t v)
{
    ck_pr_fence_release();
    ck_pr_store_32(p, v);
}
static inline bool swfi_cas_acq_rel_32(uint32_t *p, uint32_t *expected, uint32_t desired)
{
    ck_pr_fence_release();
    bool ok = ck_pr_cas_32_value(p, *expected, desired, expected);
    ck_pr_fence_acquire();
    return ok;
}
static inline uint32_t swfi_fetch_add_acq_rel_32(uint32_t *p, uint32_t v)
{
    ck_pr_fence_release();
    uint32_t old = ck_pr_faa_32(p, v);
    ck_pr_fence_acquire();
    return old;
}
static inline uint32_t swfi_fetch_sub_acq_rel_32(uint32_t *p, uint32_t v)
{
    return swfi_fetch_add_acq_rel_32(p, (uint32_t)0 - v);
}
static inline uint32_t swfi_fetch_add_relaxed_32(uint32_t *p, uint32_t v)
{
    return ck_pr_faa_32(p, v);
}
static inline uint32_t swfi_exchange_relaxed_32(uint32_t *p, uint32_t v)
{
    return ck_pr_fas_32(p, v);
}
/* ck_pr has no sequentially consistent operation (its fences would add a full fence to the load,
 * which x86 does not need): these are the compiler's own atomics, which the c11 branch gets
 * through <stdatomic.h>, on the same plain words. */
static inline uint32_t swfi_load_seq_cst_32(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}
static inline void swfi_store_seq_cst_32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}
static inline uint32_t swfi_fetch_add_seq_cst_32(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline uint32_t swfi_fetch_or_seq_cst_32(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
}
static inline uint32_t swfi_fetch_and_seq_cst_32(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
}

static inline unsigned int swfi_load_relaxed_uint(const unsigned int *p)
{
    return ck_pr_load_uint(p);
}
static inline void swfi_store_relaxed_uint(unsigned int *p, unsigned int v)
{
    ck_pr_store_uint(p, v);
}

/* ck_pr has no uintptr_t operations and no ordered ones: the compiler's atomics, as above. */
static inline uintptr_t swfi_load_relaxed_uptr(const uintptr_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline uintptr_t swfi_load_acquire_uptr(const uintptr_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline bool swfi_cas_acq_rel_uptr(uintptr_t *p, uintptr_t *expected, uintptr_t desired)
{
    return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
}
static inline uintptr_t swfi_fetch_and_release_uptr(uintptr_t *p, uintptr_t v)
{
    return __atomic_fetch_and(p, v, __ATOMIC_RELEASE);
}

static inline uint64_t swfi_load_relaxed_64(const uint64_t *p)
{
    return ck_pr_load_64(p);
}
static inline uint64_t swfi_load_acquire_64(const uint64_t *p)
{
    uint64_t v = ck_pr_load_64(p);
    ck_pr_fence_acquire();
    return v;
}
static inline void swfi_store_relaxed_64(uint64_t *p, uint64_t v)
{
    ck_pr_store_64(p, v);
}
static inline void swfi_store_release_64(uint64_t *p, uint64_t v)
{
    ck_pr_fence_release();
    ck_pr_store_64(p, v);
}
static inline bool swfi_cas_acq_rel_64(uint64_t *p, uint64_t *expected, uint64_t desired)
{
    ck_pr_fence_release();
    bool ok = ck_pr_cas_64_value(p, *expected, desired, expected);
    ck_pr_fence_acquire();
    return ok;
}
static inline uint64_t swfi_fetch_add_relaxed_64(uint64_t *p, uint64_t v)
{
    return ck_pr_faa_64(p, v);
}
static inline uint64_t swfi_fetch_sub_relaxed_64(uint64_t *p, uint64_t v)
{
    return ck_pr_faa_64(p, (uint64_t)0 - v);
}
static inline uint64_t swfi_fetch_add_release_64(uint64_t *p, uint64_t v)
{
    ck_pr_fence_release();
    return ck_pr_faa_64(p, v);
}

static inline uint8_t swfi_load_relaxed_8(const uint8_t *p)
{
    return ck_pr_load_8(p);
}
static inline void swfi_store_relaxed_8(uint8_t *p, uint8_t v)
{
    ck_pr_store_8(p, v);
}
static inline bool swfi_cas_relaxed_8(uint8_t *p, uint8_t *expected, uint8_t desired)
{
    return ck_pr_cas_8_value(p, *expected, desired, expected);
}

static inline void swfi_fence_seq_cst(void)
{
    ck_pr_fence_memory();
}
static inline void swfi_fence_acquire(void)
{
    ck_pr_fence_acquire();
}

#endif

/*
 * A counter with a single writer (its owning thread) and any number of relaxed readers: a plain
 * increment, no read-modify-write instruction. Readers see a value that was current at some moment.
 */
static inline void swfi_counter_add(uint64_t *p, uint64_t v)
{
    swfi_store_relaxed_64(p, swfi_load_relaxed_64(p) + v);
}

#endif /* SWF_LIB_ATOMIC_H */
