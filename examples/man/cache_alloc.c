/* examples/man/cache_alloc.c - swf_cache_alloc(3)'s example: NOWAIT with a reserve, then WAIT. */
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

static char reserve[64];

/* The caller's own fallback when no object is ready: here, one static object. */
static void *take_from_reserve(void)
{
    return reserve;
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 8, .name = "example"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    /* [man] */
    /* inside a read-side section: never blocks */
    void *obj = swf_cache_alloc(c, SWF_NOWAIT);
    if (obj == NULL)
        obj = take_from_reserve();
    /* outside any section: may map memory */
    void *big = swf_cache_alloc(c, SWF_WAIT);
    swf_cache_free(c, big);
    /* [man] */
    if (obj == NULL || big == NULL || obj == big)
        return 1;
    if (obj != reserve)
        swf_cache_free(c, obj);
    return swf_cache_destroy(c) == 0 ? 0 : 1; /* nothing left alive */
}
