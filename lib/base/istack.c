/*
 * lib/base/istack.c - growing the node tables behind the index stacks (see istack.h).
 */
#include "base/istack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int swfi_itable_init(struct swf_itable *t, size_t node_size, uint32_t shift, uint32_t max_blocks)
{
    t->x_blocks = NULL;
    t->x_count = 0;
    t->shift = shift;
    t->max_blocks = max_blocks;
    t->dir_cap = 0;
    t->dir_mem = NULL;
    t->node_size = node_size;
    return 0;
}

void swfi_itable_fini(struct swf_itable *t)
{
    uint32_t count = swfi_load_relaxed_32(&t->x_count);
    for (uint32_t b = 0; b < (count >> t->shift); b++)
        free(t->x_blocks[b]);
    for (void **dir = t->x_blocks ? t->x_blocks - 1 : NULL; dir != NULL;) {
        void **older = dir[0];
        free(dir);
        dir = older;
    }
    t->x_blocks = NULL;
    t->dir_mem = NULL;
    t->dir_cap = 0;
}

/* Make the directory hold at least `blocks` entries: a copy twice as large (8 entries at
 * first, at most max_blocks), published with a release store. 0 or ENOMEM. */
static int dir_reserve(struct swf_itable *t, uint32_t blocks)
{
    if (blocks <= t->dir_cap)
        return 0;
    uint32_t cap = t->dir_cap ? t->dir_cap * 2 : 8;
    if (cap > t->max_blocks)
        cap = t->max_blocks;
    /* Entry -1 links the directory this one replaces; every byte written (readers only read). */
    void **mem = calloc((size_t)cap + 1, sizeof(void *));
    if (mem == NULL)
        return ENOMEM;
    mem[0] = t->x_blocks ? t->x_blocks - 1 : NULL;
    if (t->dir_cap > 0)
        memcpy(mem + 1, t->x_blocks, t->dir_cap * sizeof(void *));
    t->dir_mem = mem;
    swfi_store_release_ptr((void **)&t->x_blocks, mem + 1);
    t->dir_cap = cap;
    return 0;
}

uint32_t swfi_itable_grow(struct swf_itable *t)
{
    uint32_t count = swfi_load_relaxed_32(&t->x_count);
    uint32_t b = count >> t->shift;
    if (b >= t->max_blocks || count + (1u << t->shift) > SWF_ISTACK_NODES_MAX ||
        dir_reserve(t, b + 1) != 0)
        return UINT32_MAX;
    size_t bytes = t->node_size << t->shift;
    void *block;
    /* Cache-line aligned, so that per-thread nodes sized in lines never share one. */
    if (posix_memalign(&block, 64, bytes) != 0)
        return UINT32_MAX;
    memset(block, 0, bytes); /* also prepares every page: NOWAIT paths write nodes */
    swfi_store_release_ptr(&t->x_blocks[b], block);
    /* Release: stats readers that acquire the count see the block and its zeroed nodes. */
    swfi_store_release_32(&t->x_count, count + (1u << t->shift));
    return count;
}
