/*
 * sweepfill/abi/cache_abi.h - the library's structures as cache.h's inline path
 * (swf_cache_alloc_fast, swf_cache_free_fast) reads them, in the layout swf_cache_alloc_fast(3)
 * ("The inline ABI") promises. Included by cache.h; nothing here is for a user to call or touch.
 */
#ifndef SWEEPFILL_CACHE_ABI_H
#define SWEEPFILL_CACHE_ABI_H

#include <stdint.h>

#include "../api.h"
#include "binding.h"  /* struct swf_owner_head_, swf_thread_self_ */
#include "rseq_abi.h" /* the per-CPU mode's sequences */

#ifdef __cplusplus
extern "C" {
#endif

struct swf_cache;

/* Free objects a magazine holds; the cache keeps two per thread (per-thread mode) or one per CPU
 * (per-CPU mode: cache.h). */
#define SWF_CACHE_MAGAZINE 60

#define SWF_CACHE_INLINE_ABI 5

struct swf_magazine_ {
    uint32_t x_link_;   /* the depot's */
    uint32_t x_unused_; /* the library's */
    uint64_t n;         /* the word: objects held, obj[0 .. (n & SWF_RSEQ_N_MASK_) - 1], in its low
                           bits; written only by the holding thread (in the per-CPU mode, by the
                           thread on that CPU, in a restartable sequence, or by a thread that
                           locked the CPU's slot). In a per-CPU slot the bits above count the
                           objects moved in and out since it went there (rseq_abi.h); elsewhere
                           they are 0 and n is the number of objects */
    void *obj[SWF_CACHE_MAGAZINE];
};

struct swf_tstate_ {
    uint32_t x_link_, index_;     /* the library's */
    struct swf_magazine_ *loaded; /* the magazine alloc pops from and free pushes on */
    struct swf_magazine_ *prev;   /* the library's */
    uint64_t x_allocs_nowait;     /* relaxed single-writer counters, summed by stats */
    uint64_t x_frees;
};

/* The head every struct swf_cache begins with. */
static inline const struct swf_owner_head_ *swf_cache_head_of_(const struct swf_cache *c)
{
    return SWF_STATIC_CAST_(const struct swf_owner_head_ *, SWF_STATIC_CAST_(const void *, c));
}

/* This thread's state for c in the per-thread mode, or NULL: not bound to c. */
static inline struct swf_tstate_ *swf_cache_state_(struct swf_cache *c)
{
    const struct swf_owner_head_ *h = swf_cache_head_of_(c);
    const struct swf_thread_ *t = &swf_thread_self_;
    if (__builtin_expect(h->handle >= t->cap || t->table[h->handle].id != h->id, 0))
        return SWF_NULL_;
    return SWF_STATIC_CAST_(struct swf_tstate_ *, t->table[h->handle].state);
}

/* Whether obj is an object of the chunk this thread last freed into, a chunk of h's cache: one
 * multiplication does both the bounds and the divisibility test (the quotient of a multiple of
 * the stride, or a huge number otherwise). */
static inline int swf_cache_owned_(const struct swf_owner_head_ *h, const void *obj)
{
    const struct swf_thread_ *t = &swf_thread_self_;
    uint64_t q = (SWF_REINTERPRET_CAST_(uintptr_t, obj) - t->chunk_base) * h->inv;
    q = (q >> h->shift) | (q << ((64 - h->shift) & 63));
    return t->chunk_owner == h->id && q < t->chunk_nobjs;
}

/* Whether obj's first word holds the free mark (key ^ obj): a free object still marked, or a
 * live one whose user left that value there (the library then looks for it, never aborts). */
static inline int swf_cache_marked_(const struct swf_owner_head_ *h, const void *obj)
{
    uint64_t word;
    __builtin_memcpy(&word, obj, sizeof(word));
    return word == (h->key ^ SWF_REINTERPRET_CAST_(uintptr_t, obj));
}

/* The common free's test: an object of the chunk this thread last freed into, not marked free. */
static inline int swf_cache_free_ok_(const struct swf_owner_head_ *h, const void *obj)
{
    return swf_cache_owned_(h, obj) && !swf_cache_marked_(h, obj);
}

#ifdef SWF_RSEQ_ABI_
/* The per-CPU mode's one pop and one push, for cache.h's inline path and for every caller in the
 * library: one object from this CPU's magazine into *obj, or obj on top of it (of capacity cap:
 * SWF_CACHE_MAGAZINE but in the library's tests); nslots: the slots' number, read where it lies
 * (x86_64 compares with it in memory, sparing a register). 1, or 0 when there is none to pop or no
 * room, the slot is locked, or the thread has no inputs for its sequences yet: they are in
 * swf_thread_self_ (binding.h: its rseq area and the offset of its index), which the library's slow
 * path fills once per thread. An aborted sequence is tried again, counted in *aborts unless it is
 * NULL. */
static inline int swf_cache_pop_(uintptr_t *slots, const uint32_t *nslots, void **obj,
                                 uint64_t *aborts)
{
    /* Read once: the retries need no more than the sequence's inputs. Named, not through a
     * pointer: GCC 12's -fsanitize=null tests such a pointer to a TLS variable on stale flags. */
    char *area = swf_thread_self_.rseq;
    uintptr_t ioff = swf_thread_self_.rseq_index;
    if (__builtin_expect(area == SWF_NULL_, 0))
        return 0;
    for (;;) {
        uint32_t st = swf_rseq_pop_once_(area, ioff, slots, nslots, obj);
        if (__builtin_expect(st == SWF_RSEQ_DONE_, 1))
            return 1;
        if (st != SWF_RSEQ_ABORT_)
            return 0;
        if (aborts != SWF_NULL_)
            ++*aborts;
    }
}

static inline int swf_cache_push_(uintptr_t *slots, const uint32_t *nslots, void *obj, uint32_t cap,
                                  uint64_t *aborts)
{
    char *area = swf_thread_self_.rseq;
    uintptr_t ioff = swf_thread_self_.rseq_index;
    if (__builtin_expect(area == SWF_NULL_, 0))
        return 0;
    for (;;) {
        uint32_t st = swf_rseq_push_once_(area, ioff, slots, nslots, obj, cap);
        if (__builtin_expect(st == SWF_RSEQ_DONE_, 1))
            return 1;
        if (st != SWF_RSEQ_ABORT_)
            return 0;
        if (aborts != SWF_NULL_)
            ++*aborts;
    }
}
#endif

/*
 * The common NOWAIT allocation, one body for cache.h's inline path and the library's
 * swf_cache_alloc(): 1 with an object in *obj, or 0 when the library's slow half
 * (swf_cache_alloc_miss_) must serve the call (x_slow set; the magazine empty; the thread not
 * bound in the per-thread mode, or without sequences in the per-CPU mode). The mode is told by
 * the slots: the per-CPU mode has them once the cache is first used, the per-thread mode never.
 * In the per-CPU mode the thread needs no state for c: the sequence counts the allocation in the
 * magazine's word. Aborted sequences are counted in *aborts unless it is NULL.
 */
static inline int swf_cache_alloc_try_(struct swf_cache *c, void **obj, uint64_t *aborts)
{
    const struct swf_owner_head_ *h = swf_cache_head_of_(c);
    if (__builtin_expect(__atomic_load_n(&h->x_slow, __ATOMIC_RELAXED) != 0, 0))
        return 0;
#ifdef SWF_RSEQ_ABI_
    uintptr_t *slots = __atomic_load_n(&h->x_slots, __ATOMIC_ACQUIRE);
    if (slots != SWF_NULL_) {
        if (!swf_cache_pop_(slots, &h->nslots, obj, aborts))
            return 0;
    } else
#endif
    {
        (void)aborts;
        struct swf_tstate_ *ts = swf_cache_state_(c);
        struct swf_magazine_ *m = ts != SWF_NULL_ ? ts->loaded : SWF_NULL_;
        if (__builtin_expect(m == SWF_NULL_ || m->n == 0, 0))
            return 0;
        *obj = m->obj[--m->n];
        __atomic_store_n(&ts->x_allocs_nowait, ts->x_allocs_nowait + 1, __ATOMIC_RELAXED);
    }
    uint64_t zero = 0; /* clear the free mark: a later free of it is not suspect */
    __builtin_memcpy(*obj, &zero, sizeof(zero));
    return 1;
}

/*
 * The common free, one body for cache.h's inline path and the library's swf_cache_free(): 1 when
 * obj is freed, or 0, obj untouched, when the library's slow half (swf_cache_free_miss_) must do
 * it (x_slow set; obj not of the chunk this thread last freed into, or marked free; the magazine
 * full; the thread not bound, or without sequences). The free mark goes into obj before the
 * object goes where another thread can take it.
 */
static inline int swf_cache_free_try_(struct swf_cache *c, void *obj, uint64_t *aborts)
{
    const struct swf_owner_head_ *h = swf_cache_head_of_(c);
    if (__builtin_expect(__atomic_load_n(&h->x_slow, __ATOMIC_RELAXED) != 0, 0))
        return 0;
    uint64_t mark = h->key ^ SWF_REINTERPRET_CAST_(uintptr_t, obj);
#ifdef SWF_RSEQ_ABI_
    uintptr_t *slots = __atomic_load_n(&h->x_slots, __ATOMIC_ACQUIRE);
    if (slots != SWF_NULL_) {
        if (__builtin_expect(!swf_cache_free_ok_(h, obj), 0))
            return 0;
        uint64_t word;
        __builtin_memcpy(&word, obj, sizeof(word));
        __builtin_memcpy(obj, &mark, sizeof(mark));
        if (swf_cache_push_(slots, &h->nslots, obj, SWF_CACHE_MAGAZINE, aborts))
            return 1;
        __builtin_memcpy(obj, &word, sizeof(word)); /* full: the library frees it */
        return 0;
    }
#endif
    (void)aborts;
    struct swf_tstate_ *ts = swf_cache_state_(c);
    struct swf_magazine_ *m = ts != SWF_NULL_ ? ts->loaded : SWF_NULL_;
    if (__builtin_expect(
            m == SWF_NULL_ || m->n >= SWF_CACHE_MAGAZINE || !swf_cache_free_ok_(h, obj), 0))
        return 0;
    uint64_t n = m->n; /* read before the mark's store, which may alias it */
    __builtin_memcpy(obj, &mark, sizeof(mark));
    m->obj[n] = obj;
    m->n = n + 1;
    __atomic_store_n(&ts->x_frees, ts->x_frees + 1, __ATOMIC_RELAXED);
    return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_CACHE_ABI_H */
