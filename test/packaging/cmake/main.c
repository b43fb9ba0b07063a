/*
 * Built by test/packaging/cmake/CMakeLists.txt against an installed sweepfill. It calls Concurrency
 * Kit (ck_epoch_*) and pthreads itself, with nothing but the sweepfill target linked, so it builds
 * only if the target's link interface brings in ck and Threads::Threads.
 */
#include <ck_epoch.h>
#include <pthread.h>
#include <stdio.h>

#include <sweepfill/sweepfill.h>

static void *work(void *arg)
{
    struct swf_cache *c = arg;
    void *o = swf_cache_alloc(c, SWF_WAIT);
    return o != NULL && swf_cache_free(c, o) == 0 ? arg : NULL;
}

int main(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 8, .name = "cmake"};
    struct swf_cache *c;
    pthread_t t;
    void *res = NULL;

    if (swf_version() != SWF_VERSION || !SWF_VERSION_CHECK(0, 1, 0))
        return 1;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    if (swf_cache_create(&cfg, &c) != 0)
        return 1;
    if (pthread_create(&t, NULL, work, c) != 0 || pthread_join(t, &res) != 0 || res != c)
        return 1;
    void *o = swf_cache_alloc(c, SWF_NOWAIT);
    int ok = o != NULL && swf_cache_free_deferred(c, &rec, &o, 1) == 0 &&
             swf_cache_quiesce(c, &rec) == 0 && swf_cache_destroy(c) == 0;
    printf("cmake consumer: %s (sweepfill %u)\n", ok ? "works" : "FAILED", swf_version());
    return ok ? 0 : 1;
}
