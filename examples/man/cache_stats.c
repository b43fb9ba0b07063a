/* examples/man/cache_stats.c - swf_cache_stats(3)'s example: the counters, and the mode. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 8, .name = "example"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    void *a = swf_cache_alloc(c, SWF_WAIT), *b = swf_cache_alloc(c, SWF_WAIT);
    if (a == NULL || b == NULL)
        return 1;
    /* [man] */
    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    printf("%" PRIu64 " alive, %" PRIu64 " ready\n", st.alive, st.ready);
    printf("%" PRIu64 " of %" PRIu64 " bytes on huge pages\n", st.huge_bytes, st.bytes_mapped);
    printf("mode %d: %s\n", swf_cache_percpu(), swf_cache_percpu_reason());
    /* [man] */
    int mode = swf_cache_percpu();
    /* no other thread: the counters agree exactly */
    int ok = st.alive == 2 && st.capacity == st.alive + st.ready &&
             st.allocs_nowait + st.allocs_wait - st.frees == st.alive && st.object_size == 64 &&
             (mode == 0 || mode == 1 || mode == 2) && st.percpu == (mode != 0) &&
             swf_cache_stats(NULL, &st) == EINVAL;
    swf_cache_free(c, a);
    swf_cache_free(c, b);
    return ok && swf_cache_destroy(c) == 0 ? 0 : 1;
}
