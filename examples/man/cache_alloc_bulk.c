/* examples/man/cache_alloc_bulk.c - swf_cache_alloc_bulk(3)'s example: NOWAIT as far as it goes,
 * then WAIT for the rest of the same array, and one free for all. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

static void *many[4096];

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 10, .name = "example"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    /* [man] */
    void *objs[32] = {0};
    size_t got = swf_cache_alloc_bulk(c, SWF_NOWAIT, objs, 32);
    if (got < 32) /* errno is EAGAIN: finish outside the section */
        got = swf_cache_alloc_bulk(c, SWF_WAIT, objs, 32);
    /* ... */
    swf_cache_free_bulk(c, objs, 32);
    /* [man] */
    int ok = got == 32;
    for (int i = 0; i < 32; i++) /* 32 objects, all different */
        for (int j = 0; j < i; j++)
            ok &= objs[i] != NULL && objs[i] != objs[j];
    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    ok &= st.alive == 0 && st.frees == 32 && st.capacity < 4096;
    /* More entries than the cache has objects: NOWAIT fills what it can, and says why not all. */
    errno = 0;
    got = swf_cache_alloc_bulk(c, SWF_NOWAIT, many, 4096);
    ok &= got <= st.capacity && errno == EAGAIN;
    swf_cache_free_bulk(c, many, 4096); /* the NULL entries are skipped */
    return ok && swf_cache_destroy(c) == 0 ? 0 : 1;
}
