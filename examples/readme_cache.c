/* examples/readme_cache.c - README's object cache, as a whole program. */
#include <ck_epoch.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 4096, .prefill = 1024, .name = "shadow"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c); /* 0 or an errno value */
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    swf_cache_grow(c, 2048);                    /* blocking: map and pre-fault 2048 objects */
    void *obj = swf_cache_alloc(c, SWF_NOWAIT); /* lock-free, no syscall, no page fault */
    void *big = swf_cache_alloc(c, SWF_WAIT);   /* may lock and map memory */
    swf_cache_free(c, obj);                     /* lock-free, from any thread */

    /* For an object readers may still hold: free it after a ck_epoch grace period. */
    ck_epoch_t epoch;
    ck_epoch_record_t rec; /* this thread's epoch record */
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    swf_cache_free_deferred(c, &rec, &big, 1);
    swf_cache_quiesce(c, &rec); /* wait for the grace period: big is free */

    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    printf("readme_cache: %llu objects alive, %llu ready\n", (unsigned long long)st.alive,
           (unsigned long long)st.ready);
    ck_epoch_unregister(&rec);
    return swf_cache_destroy(c) == 0 && st.alive == 0 ? 0 : 1;
}
