/*
 * lib/base/istack.h - a lock-free LIFO of nodes named by 32-bit index, safe against ABA.
 *
 * The cache keeps its magazines and per-thread states in tables that only grow while the cache
 * lives, so a node is never unmapped under a thread that still looks at it; what remains is the
 * ABA problem of a Treiber stack (a pop reads head A and A->next B, A is popped and pushed back
 * meanwhile, and a compare-and-swap from A to B would resurrect B). The head therefore packs a
 * tag with the index and every successful push or pop bumps the tag, so a stale compare-and-swap
 * fails, with one word-sized CAS and no double-width atomics (which the c11 build could not
 * express portably). The index takes SWF_ISTACK_INDEX_BITS = 24 bits (16M nodes: tables are
 * capped below that) and the tag the other 40. A wrong CAS would need exactly a multiple of 2^40
 * (about 10^12) successful pushes and pops on one stack between one thread's load and its CAS:
 * at 10 ns each, a thread preempted for three hours, and then the same node on top.
 *
 * Nodes live in a two-level table: block i holds nodes [i << shift, (i + 1) << shift). Blocks are
 * added under the owner's mutex and published with a release store of the node count; a node's
 * index reaches another thread only through a stack (release CAS, acquire load), which orders
 * the block pointer store before any use of the index. The directory of block pointers starts
 * empty and doubles as blocks are added (the first grow makes it): a table that is never used
 * costs nothing, and a small one little. A larger directory is a copy published with a release
 * store, and the old ones stay allocated until the table is freed, so that a thread still
 * reading an old one reads valid block pointers there.
 *
 * Every node starts with `uint32_t x_next`: the index + 1 of the node below it (0 = none).
 */
#ifndef SWF_LIB_ISTACK_H
#define SWF_LIB_ISTACK_H

#include <stddef.h>
#include <stdint.h>

#include "base/atomic.h"

struct swfi_itable {
    void **x_blocks;  /* the directory: dir_cap block pointers, NULL before the first grow;
                         replaced (release) under the owner's mutex; entry -1 links the one
                         it replaced */
    uint32_t x_count; /* nodes created; release-stored after their block is in x_blocks */
    uint32_t shift;   /* log2 of nodes per block */
    uint32_t max_blocks;
    uint32_t dir_cap; /* entries in the directory (the owner's mutex) */
    void **dir_mem;   /* x_blocks - 1, the directory's allocation: a pointer to its start, so
                         that a cache never destroyed is "still reachable" to leak checkers */
    uint8_t *owns;    /* dir_cap flags (the owner's mutex): 1 where the block starts an
                         allocation of the table's own (swfi_itable_grow), which fini frees; 0
                         for the rest of that allocation and for the caller's blocks
                         (swfi_itable_adopt), which fini leaves alone */
    size_t node_size;
};

#define SWF_ISTACK_INDEX_BITS 24
#define SWF_ISTACK_NODES_MAX  ((UINT32_C(1) << SWF_ISTACK_INDEX_BITS) - 1)
#define SWF_ISTACK_INDEX_MASK ((UINT64_C(1) << SWF_ISTACK_INDEX_BITS) - 1)
#define SWF_ISTACK_TAG_ONE    (UINT64_C(1) << SWF_ISTACK_INDEX_BITS)

struct swfi_istack {
    uint64_t x_head; /* tag << 24 | (index + 1); index part 0 = empty */
};

static inline void *swfi_itable_node(const struct swfi_itable *t, uint32_t index)
{
    /* The index came to us through a stack whose release CAS was ordered after the stores of
     * its block's pointer and of a directory holding it: we see that directory or a later copy,
     * whose entries the acquire makes visible. */
    void **dir = (void **)swfi_load_acquire_ptr((void *const *)&t->x_blocks);
    char *block = (char *)swfi_load_relaxed_ptr(&dir[index >> t->shift]);
    return block + (size_t)(index & ((1u << t->shift) - 1)) * t->node_size;
}

static inline void swfi_istack_push(struct swfi_istack *s, const struct swfi_itable *t,
                                    uint32_t index)
{
    uint32_t *next = (uint32_t *)swfi_itable_node(t, index);
    uint64_t head = swfi_load_relaxed_64(&s->x_head);
    uint64_t desired;
    do {
        swfi_store_relaxed_32(next, (uint32_t)(head & SWF_ISTACK_INDEX_MASK));
        desired = ((head & ~SWF_ISTACK_INDEX_MASK) + SWF_ISTACK_TAG_ONE) | (uint64_t)(index + 1);
        /* Release: the node's contents (a magazine's objects, written by this thread) happen-
         * before the pop that acquires this head. */
    } while (!swfi_cas_acq_rel_64(&s->x_head, &head, desired));
}

/* Push a private chain of nodes in one compare-and-swap: first .. last, linked through x_next
 * (index + 1) by the caller; last's link is set here. The same release as a push. */
static inline void swfi_istack_push_chain(struct swfi_istack *s, const struct swfi_itable *t,
                                          uint32_t first, uint32_t last)
{
    uint32_t *next = (uint32_t *)swfi_itable_node(t, last);
    uint64_t head = swfi_load_relaxed_64(&s->x_head);
    uint64_t desired;
    do {
        swfi_store_relaxed_32(next, (uint32_t)(head & SWF_ISTACK_INDEX_MASK));
        desired = ((head & ~SWF_ISTACK_INDEX_MASK) + SWF_ISTACK_TAG_ONE) | (uint64_t)(first + 1);
    } while (!swfi_cas_acq_rel_64(&s->x_head, &head, desired));
}

/* Pop the top node; returns its index, or UINT32_MAX when the stack is empty. */
static inline uint32_t swfi_istack_pop(struct swfi_istack *s, const struct swfi_itable *t)
{
    /* Acquire pairs with the pushing CAS: we read the node's link and, after winning, its
     * contents. */
    uint64_t head = swfi_load_acquire_64(&s->x_head);
    for (;;) {
        uint32_t top = (uint32_t)(head & SWF_ISTACK_INDEX_MASK);
        if (top == 0)
            return UINT32_MAX;
        /* The node may be popped and reused by another thread right now; its link is then stale
         * but the tag makes our CAS fail. The node's memory stays mapped (see above). */
        uint32_t next = swfi_load_relaxed_32((const uint32_t *)swfi_itable_node(t, top - 1));
        uint64_t desired = ((head & ~SWF_ISTACK_INDEX_MASK) + SWF_ISTACK_TAG_ONE) | next;
        if (swfi_cas_acq_rel_64(&s->x_head, &head, desired))
            return top - 1;
    }
}

/* Whether the stack is empty (a relaxed look). */
static inline int swfi_istack_empty(const struct swfi_istack *s)
{
    return (swfi_load_relaxed_64(&s->x_head) & SWF_ISTACK_INDEX_MASK) == 0;
}

/* Add `blocks` blocks of nodes (zeroed, every page written), in one allocation, to the table; the
 * caller holds the owner's mutex. Returns the index of the first new node, or UINT32_MAX if the
 * table would be full (max_blocks, or SWF_ISTACK_NODES_MAX nodes) or memory ran out. */
uint32_t swfi_itable_grow(struct swfi_itable *t, uint32_t blocks);
/* Make room for `blocks` more blocks (the directory sized for them; the caller holds the owner's
 * mutex): 0, after which that many swfi_itable_adopt calls cannot fail, or ENOMEM (the table
 * would be full, or no memory for the directory). */
int swfi_itable_reserve(struct swfi_itable *t, uint32_t blocks);
/* Add one block of nodes that the caller made: node_size << shift bytes, 64-byte aligned, zeroed
 * and every page prepared, alive until after swfi_itable_fini, which leaves it alone (the caller
 * unmaps it). The caller holds the owner's mutex. Returns the index of its first node, or
 * UINT32_MAX if the table is full or memory ran out (then the block is not the table's). */
uint32_t swfi_itable_adopt(struct swfi_itable *t, void *block);
/* An empty table (allocates nothing: the first grow makes the directory). Returns 0. */
int swfi_itable_init(struct swfi_itable *t, size_t node_size, uint32_t shift, uint32_t max_blocks);
void swfi_itable_fini(struct swfi_itable *t);

#endif /* SWF_LIB_ISTACK_H */
