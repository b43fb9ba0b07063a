/* A program that uses sweepfill as a Meson subproject. */
#include <stdio.h>
#include <sweepfill/sweepfill.h>

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 48, .prefill = 100, .name = "parent"};
    struct swf_cache *c;
    if (swf_cache_create(&cfg, &c) != 0)
        return 1;
    void *o = swf_cache_alloc(c, SWF_NOWAIT);
    int ok = o != NULL && swf_cache_free(c, o) == 0 && swf_cache_destroy(c) == 0;
    printf("parent: %s\n", ok ? "works" : "FAILED");
    return ok ? 0 : 1;
}
