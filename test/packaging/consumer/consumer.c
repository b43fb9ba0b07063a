/* A program built against an installed sweepfill with nothing but pkg-config. */
#include <stdio.h>
#include <sweepfill/sweepfill.h>

#if !SWF_VERSION_CHECK(0, 1, 0)
#error "sweepfill headers older than 0.1.0"
#endif

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 48, .prefill = 100, .name = "consumer"};
    struct swf_cache *c;
    if (swf_version() != SWF_VERSION) {
        printf("consumer: headers are %d, library is %u\n", SWF_VERSION, swf_version());
        return 1;
    }
    if (swf_cache_create(&cfg, &c) != 0)
        return 1;
    void *o = swf_cache_alloc(c, SWF_NOWAIT);
    int ok = o != NULL && swf_cache_free(c, o) == 0 && swf_cache_destroy(c) == 0;
    printf("consumer: %s (sweepfill %u)\n", ok ? "works" : "FAILED", swf_version());
    return ok ? 0 : 1;
}
