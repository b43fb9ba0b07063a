/* examples/man/guard_epoch.c - swf_guard_epoch(3)'s example: a sweep of an array under the read
 * side of a read-write lock, leaving the lock every 64 members so that a writer can get in. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdio.h>

#include <sweepfill/sweep.h>

#define N 1000

struct member {
    int id;
    void *slot;
};

static struct member members[N];

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(int *)obj = ((struct member *)member)->id;
}

int main(void)
{
    struct swf_cache_config cc = {.object_size = 64, .name = "guard_epoch"};
    struct swf_cache *cache;
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    for (int i = 0; i < N; i++)
        members[i].id = i;
    struct swf_array all = {members, N, sizeof(struct member)};
    /* [man] */
    pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    swf_guard_rwlock(&cfg.guard, &lock);
    cfg.section_bound = 64; /* let writers in every 64 members */
    /* [man] */
    cfg.list = swf_list_array(&all, offsetof(struct member, slot));
    cfg.cache = cache;
    cfg.init = init_obj;
    struct swf_sweep_stats st;
    int err = swf_sweep(&cfg, &st);
    int filled = 0;
    for (int i = 0; i < N; i++) {
        int *obj = swf_slot_load(&members[i].slot);
        filled += obj != NULL && *obj == i;
    }
    /* the lock is free again: a writer gets it at once */
    int writer = pthread_rwlock_trywrlock(&lock) == 0 && pthread_rwlock_unlock(&lock) == 0;
    printf("guard_epoch: %d, %d of %d filled, %llu sections of at most %llu visits, writer %d\n",
           err, filled, N, (unsigned long long)st.sections, (unsigned long long)st.longest_section,
           writer);
    for (int i = 0; i < N; i++)
        swf_cache_free(cache, swf_slot_take(&members[i].slot));
    return err == 0 && filled == N && st.sections >= N / 64 && st.longest_section <= 64 && writer &&
                   swf_cache_destroy(cache) == 0
               ? 0
               : 1;
}
