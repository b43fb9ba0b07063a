/* examples/man/cache_alloc_fast.c - swf_cache_alloc_fast(3)'s example: a hot loop of inline
 * allocations and frees. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

static int fresh = 1; /* every object came with its first 8 bytes zero */

static void use(void *o)
{
    uint64_t first;
    memcpy(&first, o, sizeof(first));
    fresh &= first == 0;
    memset(o, 0xa5, 64);
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "example"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err == 0)
        err = swf_cache_grow(c, 64); /* outside any section: objects ready for NOWAIT */
    if (err != 0) {
        fprintf(stderr, "sweepfill: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    int i, n = 1000;
    /* [man] */
    /* a hot loop inside a read-side section */
    for (i = 0; i < n; i++) {
        void *o = swf_cache_alloc_fast(c);
        if (o == NULL)
            break; /* errno EAGAIN: nothing ready here */
        use(o);
        swf_cache_free_fast(c, o);
    }
    /* [man] */
    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    int ok = i == n && fresh && st.allocs_nowait == (uint64_t)n && st.frees == (uint64_t)n &&
             st.alive == 0 && swf_cache_free_fast(c, NULL) == 0;
    errno = 0;
    ok &= swf_cache_alloc_fast(NULL) == NULL && errno == EINVAL;
    return ok && swf_cache_destroy(c) == 0 ? 0 : 1;
}
