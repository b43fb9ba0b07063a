/*
 * examples/lists/hash.c - README "Your lists": a hash table of your own (a bucket array of
 * CK_LISTs, resized under a lock) switched on and off exactly (feature.h) with its adder and
 * deleter, and a ck_hs swept with a resumable cursor.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ck_epoch.h>
#include <sweepfill/feature.h>
#include <sweepfill/list_hash.h>

static struct swf_cache *cache;

static void init_entry(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

/* [README] */
struct entry {
    CK_LIST_ENTRY(entry) link; /* in its bucket */
    uint64_t key;
    void *obj; /* the slot */
    struct swf_pin pin;
};
CK_LIST_HEAD(bucket, entry);
struct table {
    struct bucket *buckets;
    size_t nbuckets;
    uint64_t gen; /* swf_buckets_resized() after a resize, under the write lock */
};
SWF_LIST_BUCKETS_CK_LIST_AUTO(table_entries, table, buckets, nbuckets, gen, bucket, entry, link,
                              obj, pin)
SWF_LIST_CK_HS_AUTO(hs_entries, entry, obj, pin) /* a ck_hs whose keys are struct entry * */

static struct swf_feature *cached;    /* one object per entry of the table while on */
static struct swf_bucket_walk cursor; /* a bucket index and a pinned entry: lives as long */

static int make_feature(struct table *t, pthread_rwlock_t *lock)
{
    struct swf_feature_config cfg;
    swf_feature_config_init(&cfg);
    cfg.sweep.list = table_entries_list(&cursor, t);
    cfg.sweep.cache = cache;
    cfg.sweep.init = init_entry;
    swf_guard_rwlock(&cfg.sweep.guard, lock);
    cfg.sweep.section_bound = 256; /* a resize in between: the walk starts again, nothing missed */
    cfg.synchronize = swf_synchronize_rwlock; /* the write lock once: every reader has left */
    cfg.synchronize_arg = lock;
    return swf_feature_create(&cfg, &cached);
}

static void add_entry(struct table *t, struct entry *e, pthread_rwlock_t *lock)
{
    pthread_rwlock_wrlock(lock);
    CK_LIST_INSERT_HEAD(&t->buckets[e->key % t->nbuckets], e, link);
    int err = swf_feature_added(cached, e, SWF_NOWAIT); /* under the lock */
    pthread_rwlock_unlock(lock);
    if (err == EAGAIN) /* e is owed; a remove_entry may have released it by now */
        swf_feature_catch_up(cached, NULL); /* so catch up: it fills only what is linked */
}

static void entry_gone(struct swf_pin *pin) /* the entry's memory is the caller's */
{
    swf_feature_release(cached, (char *)pin - offsetof(struct entry, pin));
}

static void remove_entry(struct entry *e, pthread_rwlock_t *lock)
{
    struct swf_grace grace;
    swf_grace_lock(&grace);
    pthread_rwlock_wrlock(lock);
    CK_LIST_REMOVE(e, link);
    swf_pin_retire(&e->pin, &grace, entry_gone);
    pthread_rwlock_unlock(lock);
}

static int fill_hs(ck_hs_t *hs, ck_epoch_record_t *rec) /* see hs_malloc below */
{
    struct swf_hs_walk walk; /* the cursor: ck_hs's SPMC iterator and a pinned entry */
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = hs_entries_list(&walk, hs);
    cfg.cache = cache;
    cfg.init = init_entry;
    swf_guard_epoch(&cfg.guard, rec);
    cfg.section_bound = 256;
    return swf_sweep(&cfg, NULL);
}
/* [README] */

static unsigned long hash_entry(const void *e, unsigned long seed)
{
    return (unsigned long)(((const struct entry *)e)->key * 0x9e3779b97f4a7c15ull ^ seed);
}

static bool same_entry(const void *a, const void *b)
{
    return a == b;
}

static void *hs_malloc(size_t n)
{
    swf_ck_hs_changed(); /* a map may replace another at the same address: say so */
    return malloc(n);
}

static void hs_free(void *p, size_t n, bool defer)
{
    (void)n, (void)defer; /* single-threaded here; a live table defers with ck_epoch_call */
    free(p);
}

int main(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    struct swf_cache_config cc = {.object_size = 64, .name = "hash"};
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    enum { N = 10000 };
    struct entry *e = calloc(N, sizeof(*e));
    struct table t = {calloc(1024, sizeof(struct bucket)), 1024, 0};
    static struct ck_malloc alloc = {hs_malloc, NULL, hs_free};
    ck_hs_t hs;
    ck_hs_init(&hs, CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT, hash_entry, same_entry, &alloc, 64, 1);
    if (make_feature(&t, &lock) != 0)
        return 1;
    for (size_t i = 0; i < N; i++) {
        e[i].key = i;
        if (i == N / 2 && swf_feature_activate(cached, NULL) != 0)
            return 1; /* half added before, half after */
        add_entry(&t, &e[i], &lock);
    }
    size_t filled = 0, left = 0;
    for (size_t i = 0; i < N; i++)
        filled += e[i].obj != NULL;
    int err = swf_feature_deactivate(cached);
    for (size_t i = 0; i < N; i++) {
        left += e[i].obj != NULL;
        remove_entry(&e[i], &lock);
        swf_pin_init(&e[i].pin); /* reused below */
        ck_hs_put(&hs, CK_HS_HASH(&hs, hash_entry, &e[i]), &e[i]);
    }
    err |= swf_feature_destroy(cached) != 0 || left != 0;
    err |= fill_hs(&hs, &rec);
    for (size_t i = 0; i < N; i++) {
        filled += e[i].obj != NULL;
        swf_cache_free(cache, swf_slot_take(&e[i].obj));
    }
    printf("hash: %d, %zu of %d slots filled (bucket array while on, then ck_hs)\n", err, filled,
           2 * N);
    ck_hs_destroy(&hs);
    free(t.buckets);
    free(e);
    return err != 0 || filled != 2 * N || swf_cache_destroy(cache) != 0;
}
