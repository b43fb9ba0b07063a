/* examples/man/cache_grow.c - swf_cache_grow(3)'s example: grow before a sweep, within a limit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "grown"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    size_t members = 1000;

    /* [man] */
    /* outside any read-side section: map and prepare an object per member */
    err = swf_cache_grow(c, members);
    if (err != 0)
        fprintf(stderr, "swf_cache_grow: %s: %s\n", strerror(err), swf_error_reason());
    /* ... a sweep allocates with SWF_NOWAIT ... */
    /* never more than 4096 objects, alive and ready together */
    swf_cache_set_limit(c, 4096);
    int over = swf_cache_grow(c, 5000); /* ENOMEM at once, mapping nothing */
    /* [man] */

    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    if (err != 0 || over != ENOMEM || st.ready < members || st.capacity > 4096) {
        fprintf(stderr, "cache_grow: grow %d, over %d, ready %llu, capacity %llu\n", err, over,
                (unsigned long long)st.ready, (unsigned long long)st.capacity);
        return 1;
    }
    return swf_cache_destroy(c) == 0 ? 0 : 1;
}
