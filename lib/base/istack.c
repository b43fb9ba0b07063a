/*
 * lib/base/istack.c - growing the node tables behind the index stacks (see istack.h).
 */
#include "base/istack.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int swfi_itable_init(struct swfi_itable *t, size_t node_size, uint32_t shift, uint32_t max_blocks)
{
    t->x_blocks = NULL;
    t->x_count = 0;
    t->shift = shift;
    t->max_blocks = max_blocks;
    t->dir_cap = 0;
    t->dir_mem = NULL;
    t->owns = NULL;
    t->node_size = node_size;
    return 0;
}

void swfi_itable_fini(struct swfi_itable *t)
{
    uint32_t count = swfi_load_relaxed_32(&t->x_count);
    for (uint32_t b = 0; b < (count >> t->shift); b++)
        if (t->owns[b])
            free(t->x_blocks[b]);
    for (void **dir = t->x_blocks ? t->x_blocks - 1 : NULL; dir != NULL;) {
        void **older = dir[0];
        free(dir);
        dir = older;
    }
    free(t->owns);
    t->x_blocks = NULL;
    t->dir_mem = NULL;
    t->owns = NULL;
    t->dir_cap = 0;
}

/* Make the directory hold at least `blocks` entries (at most max_blocks): a copy twice as large,
 * or more when that is short (8 entries at first), published with a release store. 0 or ENOMEM. */
static int dir_reserve(struct swfi_itable *t, uint32_t blocks)
{
    if (blocks <= t->dir_cap)
        return 0;
    uint32_t cap = t->dir_cap ? t->dir_cap * 2 : 8;
    while (cap < blocks)
        cap *= 2;
    if (cap > t->max_blocks)
        cap = t->max_blocks;
    /* Entry -1 links the directory this one replaces; every byte written (readers only read). */
    void **mem = calloc((size_t)cap + 1, sizeof(void *));
    uint8_t *owns = calloc(cap, 1); /* the owner's alone: replaced, not kept */
    if (mem == NULL || owns == NULL) {
        free(mem);
        free(owns);
        return ENOMEM;
    }
    mem[0] = t->x_blocks ? t->x_blocks - 1 : NULL;
    if (t->x_blocks != NULL) { /* dir_cap > 0: the two are set together, below */
        memcpy(mem + 1, t->x_blocks, t->dir_cap * sizeof(void *));
        memcpy(owns, t->owns, t->dir_cap);
    }
    free(t->owns);
    t->owns = owns;
    t->dir_mem = mem;
    swfi_store_release_ptr((void **)&t->x_blocks, mem + 1);
    t->dir_cap = cap;
    return 0;
}

int swfi_itable_reserve(struct swfi_itable *t, uint32_t blocks)
{
    uint32_t b = swfi_load_relaxed_32(&t->x_count) >> t->shift;
    if (blocks > t->max_blocks - b || ((uint64_t)b + blocks) << t->shift > SWF_ISTACK_NODES_MAX ||
        dir_reserve(t, b + blocks))
        return ENOMEM;
    return 0;
}

/* Publish `blocks` blocks from mem, one after another, as the next ones; returns the index of the
 * first node. owns: mem is the table's own allocation (fini frees it, through the first block). */
static uint32_t add_blocks(struct swfi_itable *t, uint32_t count, char *mem, uint32_t blocks,
                           bool owns)
{
    uint32_t b = count >> t->shift;
    size_t bytes = t->node_size << t->shift;
    for (uint32_t k = 0; k < blocks; k++) {
        t->owns[b + k] = owns && k == 0;
        swfi_store_release_ptr(&t->x_blocks[b + k], mem + k * bytes);
    }
    /* Release: stats readers that acquire the count see the blocks and their zeroed nodes. */
    swfi_store_release_32(&t->x_count, count + (blocks << t->shift));
    return count;
}

uint32_t swfi_itable_grow(struct swfi_itable *t, uint32_t blocks)
{
    uint32_t count = swfi_load_relaxed_32(&t->x_count);
    if (blocks == 0 || swfi_itable_reserve(t, blocks) != 0)
        return UINT32_MAX;
    size_t bytes = (t->node_size << t->shift) * blocks;
    void *mem;
    /* Cache-line aligned, so that per-thread nodes sized in lines never share one. */
    if (posix_memalign(&mem, 64, bytes) != 0)
        return UINT32_MAX;
    memset(mem, 0, bytes); /* also prepares every page: NOWAIT paths write nodes */
    return add_blocks(t, count, mem, blocks, true);
}

uint32_t swfi_itable_adopt(struct swfi_itable *t, void *block)
{
    uint32_t count = swfi_load_relaxed_32(&t->x_count);
    if (swfi_itable_reserve(t, 1) != 0)
        return UINT32_MAX;
    return add_blocks(t, count, block, 1, false);
}
