/*
 * sweepfill/abi/binding.h - the owners' head and the per-thread binding table, as the inline path
 * of cache.h reads them. Included by cache.h; nothing here is for a program to use directly.
 *
 * Every library object that threads keep state for (an "owner": a cache or a registry) begins
 * with struct swf_owner_head_; each thread's binding table, indexed by the owner's handle, holds
 * (owner id, state) pairs and is found through swf_thread_self_, an initial-exec TLS variable the
 * library exports. These layouts are part of the ABI for as long as the soname is
 * libsweepfill.so.0 (cache.h: SWF_CACHE_INLINE_ABI). They are in a header of their own because
 * the library's owners and bindings (which caches and registries both use) rest on them, not on
 * the cache.
 */
#ifndef SWEEPFILL_BINDING_H
#define SWEEPFILL_BINDING_H

#include <stdint.h>

#include "../api.h"

#ifdef __cplusplus
extern "C" {
#endif

struct swf_owner_head_ {
    uint64_t id;        /* the owner's identity: unique in the process, never 0, never reused */
    uint32_t handle;    /* its index in every thread's binding table */
    uint32_t x_slow;    /* non-zero: calls must go to the library (full checks, injection) */
    uint64_t inv;       /* the inverse, modulo 2^64, of the stride's odd part */
    uint32_t shift;     /* the stride's trailing zero bits */
    uint32_t nslots;    /* entries in slots */
    uint64_t key;       /* random, never 0: a single free writes key ^ obj in obj's first word */
    uintptr_t *x_slots; /* the per-CPU mode: one magazine per CPU (rseq_abi.h), published with a
                           release store at the cache's first use; NULL before, and in the
                           per-thread mode */
};

struct swf_binding_ {
    uint64_t id; /* the owner this entry belongs to; any other value: not this cache's */
    void *state; /* for a cache: its struct swf_tstate_ for this thread */
};

struct swf_thread_ {
    struct swf_binding_ *table; /* indexed by handle; written by this thread only */
    uint32_t cap;               /* entries in table */
    uint32_t armed;             /* the library's */
    uint32_t rseq_index;        /* the per-CPU mode: the offset of the slot index (cpu_id or
                                   mm_cid) in this thread's rseq area */
    char *rseq;                 /* the per-CPU mode: this thread's rseq area, once registered */
    uint64_t chunk_owner;       /* the cache whose chunk this thread last freed into (its id;
                                   0: none yet), checked by the library */
    uintptr_t chunk_base;       /* that chunk's first object */
    uint64_t chunk_nobjs;       /* and how many objects it holds */
};

SWF_API extern __thread struct swf_thread_ swf_thread_self_
    __attribute__((tls_model("initial-exec")));

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_BINDING_H */
