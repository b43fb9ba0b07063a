/*
 * lib/base/prefault.c - swfi_prefault (util.h): back memory before a lock-free path writes it.
 * In the base layer, since both the owners' binding tables (owner.c) and the cache's chunks
 * (cache/store/chunk.c) are prefaulted.
 */
#include "base/util.h"

void swfi_prefault(void *p, size_t len)
{
    /* Every 4 KiB: the smallest page size of the systems we run on, so every page is hit. */
    volatile char *b = p;
    for (size_t off = 0; off < len; off += 4096)
        b[off] = b[off];
    if (len > 0)
        b[len - 1] = b[len - 1];
}
