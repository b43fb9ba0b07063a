/* examples/man/cache_set_failslab.c - swf_cache_set_failslab(3)'s example: every second NOWAIT
 * allocation fails, then the same settings parsed from a specification. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 64, .name = "shadow"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    /* [man] */
    /* or: SWF_FAILSLAB=probability=100,interval=2,times=-1,cache=shadow ./app */
    struct swf_failslab fs = {.probability = 100, .interval = 2, .times = -1, .seed = 0};
    swf_cache_set_failslab(c, &fs);
    /* [man] */
    void *objs[8];
    int ok = 1;
    for (int k = 0; k < 8; k++) { /* calls 1, 3, 5 and 7 fail, with EAGAIN */
        errno = 0;
        objs[k] = swf_cache_alloc(c, SWF_NOWAIT);
        ok &= (objs[k] == NULL) == (k % 2 == 1) && (objs[k] != NULL || errno == EAGAIN);
    }
    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    ok &= st.fails_injected == 4;
    swf_cache_set_failslab(c, NULL); /* off: every call succeeds again */
    void *again = swf_cache_alloc(c, SWF_NOWAIT);
    ok &= again != NULL;
    swf_cache_free(c, again);
    for (int k = 0; k < 8; k++)
        swf_cache_free(c, objs[k]);

    /* The specification the shell line gives, parsed. */
    struct swf_failslab parsed;
    char name[16], why[128];
    ok &= swf_failslab_parse("probability=100,interval=2,times=-1,cache=shadow", &parsed, name,
                             sizeof(name), why, sizeof(why)) == 0 &&
          parsed.probability == 100 && parsed.interval == 2 && parsed.times == -1 &&
          parsed.seed == 0 && strcmp(name, "shadow") == 0;
    ok &= swf_failslab_parse("interval=2", &parsed, NULL, 0, why, sizeof(why)) == EINVAL &&
          why[0] != '\0'; /* probability= is required */
    return ok && swf_cache_destroy(c) == 0 ? 0 : 1;
}
