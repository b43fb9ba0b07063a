/*
 * sweepfill/cache_abi.h - the library's structures as cache.h's inline path (swf_cache_alloc_fast,
 * swf_cache_free_fast) reads them, in the layout swf_cache_alloc_fast(3) ("The inline ABI")
 * promises. Included by cache.h; nothing here is for a user to call or touch.
 */
#ifndef SWEEPFILL_CACHE_ABI_H
#define SWEEPFILL_CACHE_ABI_H

#include <stdint.h>

#include "api.h"
#include "binding.h"  /* struct swf_owner_head_, swf_thread_self_ */
#include "rseq_abi.h" /* the per-CPU mode's sequences */

#ifdef __cplusplus
extern "C" {
#endif

struct swf_cache;

/* Free objects a magazine holds; the cache keeps two per thread (per-thread mode) or one per CPU
 * (per-CPU mode: cache.h). */
#define SWF_CACHE_MAGAZINE 60

#define SWF_CACHE_INLINE_ABI 3

struct swf_magazine_ {
    uint32_t x_link_; /* the depot's */
    uint32_t n;       /* objects held, obj[0 .. n-1]; written only by the holding thread (in
                         the per-CPU mode, by the thread on that CPU, in a restartable sequence,
                         or by a thread that locked the CPU's slot) */
    void *obj[SWF_CACHE_MAGAZINE];
};

struct swf_tstate_ {
    uint32_t x_link_, index_;     /* the library's */
    struct swf_magazine_ *loaded; /* the magazine alloc pops from and free pushes on; NULL in
                                     the per-CPU mode */
    struct swf_magazine_ *prev;   /* the library's */
    uint64_t x_allocs_nowait;     /* relaxed single-writer counters, summed by stats */
    uint64_t x_frees;
    uintptr_t base; /* the chunk this thread last freed into: its first object */
    uint64_t nobjs; /* and how many objects it holds (0: none checked yet) */
};

/* The head every struct swf_cache begins with. */
static inline const struct swf_owner_head_ *swf_cache_head_of_(const struct swf_cache *c)
{
    return SWF_STATIC_CAST_(const struct swf_owner_head_ *, SWF_STATIC_CAST_(const void *, c));
}

/* This thread's state for c, or NULL: what the inline path may use. */
static inline struct swf_tstate_ *swf_cache_state_(struct swf_cache *c)
{
    const struct swf_owner_head_ *h = swf_cache_head_of_(c);
    const struct swf_thread_ *t = &swf_thread_self_;
    if (__builtin_expect(h->handle >= t->cap || t->table[h->handle].id != h->id ||
                             __atomic_load_n(&h->x_slow, __ATOMIC_RELAXED) != 0,
                         0))
        return SWF_NULL_;
    return SWF_STATIC_CAST_(struct swf_tstate_ *, t->table[h->handle].state);
}

#ifdef SWF_RSEQ_ABI_
/* This thread's inputs to its sequences on the slots of h's cache (*slots), or NULL: no slots yet,
 * or the thread has no registered rseq area. They come from the cache's head and the thread's
 * TLS, not from its state, so that a sequence does not wait for the binding table's lookup. */
static inline const struct swf_thread_ *swf_cache_pcpu_thread_(const struct swf_owner_head_ *h,
                                                               uintptr_t **slots)
{
    const struct swf_thread_ *t = &swf_thread_self_;
    *slots = __atomic_load_n(&h->x_slots, __ATOMIC_ACQUIRE);
    return *slots != SWF_NULL_ && t->rseq != SWF_NULL_ ? t : SWF_NULL_;
}
#endif

/* Pop an object into *obj (push == 0) or push *obj (push == 1) on the magazine of the CPU the
 * thread runs on (the per-CPU mode): 1, or 0 when there is none to pop there or no room (or no
 * slots, no registered area, or no sequences in this build: the library decides). An aborted
 * sequence is tried again, counted in *aborts unless it is NULL. */
static inline int swf_cache_pcpu_move_(const struct swf_owner_head_ *h, void **obj, int push,
                                       uint64_t *aborts)
{
#ifdef SWF_RSEQ_ABI_
    uintptr_t *slots;
    const struct swf_thread_ *t = swf_cache_pcpu_thread_(h, &slots);
    uint32_t st = SWF_RSEQ_FAIL_;
    while (t != SWF_NULL_ && (st = push ? swf_rseq_push_once_(t->rseq, t->rseq_index, slots,
                                                              h->nslots, *obj, SWF_CACHE_MAGAZINE)
                                        : swf_rseq_pop_once_(t->rseq, t->rseq_index, slots,
                                                             h->nslots, obj)) == SWF_RSEQ_ABORT_)
        if (aborts != SWF_NULL_)
            ++*aborts;
    return st == SWF_RSEQ_DONE_;
#else
    (void)h, (void)obj, (void)push, (void)aborts;
    return 0;
#endif
}

/* Whether obj is an object of the chunk ts last freed into: one multiplication does both the
 * bounds and the divisibility test (the quotient of a multiple of the stride, or a huge number
 * otherwise). */
static inline int swf_cache_owned_(const struct swf_owner_head_ *h, const struct swf_tstate_ *ts,
                                   const void *obj)
{
    uint64_t q = (SWF_REINTERPRET_CAST_(uintptr_t, obj) - ts->base) * h->inv;
    q = (q >> h->shift) | (q << ((64 - h->shift) & 63));
    return q < ts->nobjs;
}

/* Whether obj's first word holds the free mark (key ^ obj): a free object still marked, or a
 * live one whose user left that value there (the library then looks for it, never aborts). */
static inline int swf_cache_marked_(const struct swf_owner_head_ *h, const void *obj)
{
    uint64_t word;
    __builtin_memcpy(&word, obj, sizeof(word));
    return word == (h->key ^ SWF_REINTERPRET_CAST_(uintptr_t, obj));
}

/* The common free's test: an object of the chunk ts last freed into, not marked free. */
static inline int swf_cache_free_ok_(const struct swf_owner_head_ *h, const struct swf_tstate_ *ts,
                                     const void *obj)
{
    return swf_cache_owned_(h, ts, obj) && !swf_cache_marked_(h, obj);
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_CACHE_ABI_H */
