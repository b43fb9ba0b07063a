/* examples/man/synchronize_epoch.c - swf_synchronize_epoch(3)'s example: a feature over an array
 * read under a read-write lock, whose deactivation waits with swf_synchronize_rwlock. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdio.h>

#include <sweepfill/feature.h>

#define N 100

struct member {
    void *slot;
};

static struct member members[N];

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static int filled(void)
{
    int n = 0;
    for (int i = 0; i < N; i++)
        n += swf_slot_load(&members[i].slot) != NULL;
    return n;
}

int main(void)
{
    struct swf_cache_config cc = {.object_size = 64, .name = "synchronize_epoch"};
    struct swf_cache *cache;
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    struct swf_array all = {members, N, sizeof(struct member)};
    struct swf_feature *f;
    /* [man] */
    pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    swf_guard_rwlock(&fc.sweep.guard, &lock);
    fc.synchronize = swf_synchronize_rwlock;
    fc.synchronize_arg = &lock;
    /* [man] */
    fc.sweep.list = swf_list_array(&all, offsetof(struct member, slot));
    fc.sweep.cache = cache;
    fc.sweep.init = init_obj;
    if (swf_feature_create(&fc, &f) != 0)
        return 1;
    int err = swf_feature_activate(f, NULL);
    int on = filled();
    /* takes every object back, waits with swf_synchronize_rwlock, then frees them */
    err |= swf_feature_deactivate(f);
    int off = filled();
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    printf("synchronize_epoch: %d, %d of %d filled while on, %d after; %llu objects alive\n", err,
           on, N, off, (unsigned long long)st.alive);
    return err == 0 && on == N && off == 0 && st.alive == 0 && swf_feature_destroy(f) == 0 &&
                   swf_cache_destroy(cache) == 0
               ? 0
               : 1;
}
