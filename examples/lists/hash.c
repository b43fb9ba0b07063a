/*
 * examples/lists/hash.c - README "Your lists": a hash table of your own (a bucket array of
 * CK_LISTs, resized under a lock) and a ck_hs, each swept with a resumable cursor.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ck_epoch.h>
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

static int fill_table(struct table *t, pthread_rwlock_t *lock)
{
    struct swf_bucket_walk walk; /* the cursor: a bucket index and a pinned entry */
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = table_entries_list(&walk, t);
    cfg.cache = cache;
    cfg.init = init_entry;
    swf_guard_rwlock(&cfg.guard, lock);
    cfg.section_bound = 256; /* a resize in between: the walk starts again, nothing missed */
    return swf_sweep(&cfg, NULL);
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
    for (size_t i = 0; i < N; i++) {
        e[i].key = i;
        CK_LIST_INSERT_HEAD(&t.buckets[i % t.nbuckets], &e[i], link);
    }
    int err = fill_table(&t, &lock);
    size_t filled = 0;
    for (size_t i = 0; i < N; i++) {
        filled += e[i].obj != NULL;
        swf_cache_free(cache, swf_slot_take(&e[i].obj));
        ck_hs_put(&hs, CK_HS_HASH(&hs, hash_entry, &e[i]), &e[i]);
    }
    err |= fill_hs(&hs, &rec);
    for (size_t i = 0; i < N; i++) {
        filled += e[i].obj != NULL;
        swf_cache_free(cache, swf_slot_take(&e[i].obj));
    }
    printf("hash: fill %d, %zu of %d slots filled (bucket array, then ck_hs)\n", err, filled,
           2 * N);
    ck_hs_destroy(&hs);
    free(t.buckets);
    free(e);
    return err != 0 || filled != 2 * N || swf_cache_destroy(cache) != 0;
}
