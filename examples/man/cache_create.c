/* examples/man/cache_create.c - swf_cache_create(3)'s example: create, use, destroy. */
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

int main(void)
{
    /* [man] */
    struct swf_cache_config cfg = {
        .object_size = 4096,
        .prefill = 1024, /* ready for SWF_NOWAIT at once */
        .name = "shadow",
        .huge_pages = SWF_HUGE_PAGES_OFF,
    };
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    void *obj = swf_cache_alloc(c, SWF_NOWAIT); /* one of the prefill: not NULL */
    /* ... */
    swf_cache_free(c, obj);
    err = swf_cache_destroy(c); /* 0: no object is alive */
    /* [man] */
    if (obj == NULL || err != 0) {
        fprintf(stderr, "cache_create: obj %p, destroy: %s\n", obj, strerror(err));
        return 1;
    }
    return 0;
}
