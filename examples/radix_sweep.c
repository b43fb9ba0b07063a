/*
 * examples/radix_sweep.c - a resumable sweep over a container that is not a list at all: a
 * two-level radix tree of members keyed by 16-bit numbers, with a writer inserting and deleting
 * members and a reader walking it while the sweep runs in bounded sections.
 *
 * It shows how to write struct swf_list_ops for any container with a cursor (list.h's top
 * comment states the contract; docs/design.md explains it):
 *
 *   first(list)     the member with the smallest key, or NULL
 *   next(list, m)   the member with the smallest key above m's key: a search by key, not a link
 *                   followed, so it is right whatever happened to m and its neighbours
 *   pin(list, m)    swf_pin_get: m's memory (its key) stays valid while the sweep is outside its
 *                   section, even if a writer deletes m meanwhile
 *   unpin(list, m)  swf_pin_put: frees m if it was deleted and its grace period is over
 *   linked(list, m) swf_pin_linked: whether m is still in the tree. next() would be right even
 *                   from a deleted m (it needs only the key), but after a refill the sweep
 *                   unpins its cursor and then visits it again, which a deleted member's last
 *                   unpin may have freed; so a deleted cursor sends the walk back to first().
 *
 * The walk state is the key itself, which is why no table of buckets or iterator is needed:
 * a container whose successor can be found from the cursor's key (a tree, a skip list, a sorted
 * array) resumes from it whatever was inserted or deleted meanwhile.
 *
 * The tree is guarded by a writer-preferring rwlock: readers and the sweep's sections hold the
 * read side, the writer the write side; deleted members are retired with swf_grace_lock (the
 * deletion under the write lock is the grace period).
 *
 * Usage: radix_sweep [--members N] [--bound K] [--rounds R]. Exits 0 when every member present
 * for a whole sweep got an object, every deleted member was freed exactly once and no object
 * leaked; prints what it measured.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sweepfill/sweep.h>

#define FANOUT 256

struct item {
    uint16_t key;
    void *obj;          /* the slot */
    struct swf_pin pin; /* the library's pin */
    uint64_t born;      /* the writer's clock when it was inserted */
    int deleted;
};

struct leaf {
    struct item *slot[FANOUT];
};

struct tree {
    struct leaf *leaf[FANOUT];
    pthread_rwlock_t lock;
};

static struct tree tree;
static struct swf_cache *cache;
static uint64_t clock_now, frees, deletes;
static int stop;

/* ---- the ops: a walk in key order ----------------------------------------------------------- */

/* [README] */
/* The first member whose key is at least k (k up to 65536), read under the read lock. */
static struct item *from_key(uint32_t k)
{
    for (; k < FANOUT * FANOUT; k = (k | (FANOUT - 1)) + 1) {
        struct leaf *l = tree.leaf[k / FANOUT];
        if (l == NULL)
            continue; /* skip the whole leaf */
        for (uint32_t i = k % FANOUT; i < FANOUT; i++)
            if (l->slot[i] != NULL)
                return l->slot[i];
    }
    return NULL;
}

static void *radix_first(void *list)
{
    (void)list;
    return from_key(0);
}

static void *radix_next(void *list, void *m)
{
    (void)list;
    return from_key((uint32_t)((struct item *)m)->key + 1);
}

static void radix_pin(void *list, void *m)
{
    (void)list;
    swf_pin_get(&((struct item *)m)->pin);
}

static void radix_unpin(void *list, void *m)
{
    (void)list;
    swf_pin_put(&((struct item *)m)->pin);
}

static bool radix_linked(void *list, void *m)
{
    (void)list;
    return swf_pin_linked(&((struct item *)m)->pin);
}

static const struct swf_list_ops radix_ops = {radix_first, radix_next, radix_pin, radix_unpin,
                                              radix_linked};
/* [README] */

/* ---- members -------------------------------------------------------------------------------- */

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    memcpy(obj, &member, sizeof(member)); /* the object records its owner */
}

static void free_item(struct swf_pin *pin)
{
    struct item *it = (struct item *)(void *)((char *)pin - offsetof(struct item, pin));
    void *obj = swf_slot_take(&it->obj);
    if (obj != NULL)
        swf_cache_free(cache, obj);
    __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
    free(it);
}

/* Under the write lock. */
static void insert(uint16_t key)
{
    struct leaf **l = &tree.leaf[key / FANOUT];
    if (*l == NULL && (*l = calloc(1, sizeof(**l))) == NULL)
        return;
    if ((*l)->slot[key % FANOUT] != NULL)
        return;
    struct item *it = calloc(1, sizeof(*it));
    if (it == NULL)
        return;
    it->key = key;
    it->born = __atomic_add_fetch(&clock_now, 1, __ATOMIC_RELAXED);
    (*l)->slot[key % FANOUT] = it;
}

/* Under the write lock: unlink, then retire (the retire rule: before anything else changes). */
static void delete (uint16_t key)
{
    struct leaf *l = tree.leaf[key / FANOUT];
    struct item *it = l ? l->slot[key % FANOUT] : NULL;
    if (it == NULL)
        return;
    l->slot[key % FANOUT] = NULL;
    it->deleted = 1;
    __atomic_fetch_add(&deletes, 1, __ATOMIC_RELAXED);
    struct swf_grace g;
    swf_grace_lock(&g);
    swf_pin_retire(&it->pin, &g, free_item); /* frees now, or at the sweep's unpin */
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *writer(void *arg)
{
    (void)arg;
    uint64_t rng = 0x5eed;
    const struct timespec pause = {0, 50000};
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        pthread_rwlock_wrlock(&tree.lock);
        for (int i = 0; i < 16; i++) {
            uint16_t key = (uint16_t)rng_next(&rng);
            if (rng_next(&rng) & 1)
                insert(key);
            else
                delete (key);
        }
        pthread_rwlock_unlock(&tree.lock);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void *reader(void *arg)
{
    uint64_t *bad = arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        pthread_rwlock_rdlock(&tree.lock);
        for (struct item *it = from_key(0); it != NULL; it = from_key((uint32_t)it->key + 1)) {
            void *obj = swf_slot_load(&it->obj);
            void *owner;
            if (obj != NULL && (memcpy(&owner, obj, sizeof(owner)), owner != it))
                (*bad)++;
        }
        pthread_rwlock_unlock(&tree.lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    size_t members = 20000, bound = 256;
    int rounds = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--members") == 0)
            members = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--bound") == 0)
            bound = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
    }
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&tree.lock, &ra);
    struct swf_cache_config cc = {.object_size = 64, .name = "radix"};
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    uint64_t rng = 42;
    for (size_t i = 0; i < members; i++)
        insert((uint16_t)rng_next(&rng));

    uint64_t bad = 0;
    pthread_t w, r;
    pthread_create(&w, NULL, writer, NULL);
    pthread_create(&r, NULL, reader, &bad);

    int failed = 0;
    for (int round = 0; round < rounds; round++) {
        struct swf_sweep_config cfg;
        swf_sweep_config_init(&cfg);
        cfg.list = (struct swf_list){&radix_ops, &tree, offsetof(struct item, obj)};
        cfg.cache = cache;
        cfg.init = init_obj;
        cfg.section_bound = bound;
        cfg.publish = SWF_PUBLISH_CAS; /* the tear-down below also writes slots */
        swf_guard_rwlock(&cfg.guard, &tree.lock);
        uint64_t since = __atomic_load_n(&clock_now, __ATOMIC_RELAXED);
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        /* Every member present for the whole sweep (inserted before it, still there) is filled. */
        size_t checked = 0, missing = 0;
        pthread_rwlock_rdlock(&tree.lock);
        for (struct item *it = from_key(0); it != NULL; it = from_key((uint32_t)it->key + 1)) {
            if (it->born > since)
                continue;
            checked++;
            missing += swf_slot_load(&it->obj) == NULL;
        }
        /* Take the objects back for the next round (under the write lock: no reader holds one). */
        pthread_rwlock_unlock(&tree.lock);
        pthread_rwlock_wrlock(&tree.lock);
        for (struct item *it = from_key(0); it != NULL; it = from_key((uint32_t)it->key + 1)) {
            void *obj = swf_slot_take(&it->obj);
            if (obj != NULL)
                swf_cache_free(cache, obj);
        }
        pthread_rwlock_unlock(&tree.lock);
        printf("round %d: err %d, %llu visits, %llu passes (a deleted cursor: %llu), %llu "
               "sections (longest %llu), %llu assigned; %zu of %zu members present throughout "
               "lack an object\n",
               round, err, (unsigned long long)st.visits, (unsigned long long)st.passes,
               (unsigned long long)st.restarts, (unsigned long long)st.sections,
               (unsigned long long)st.longest_section, (unsigned long long)st.assigned, missing,
               checked);
        failed |=
            err != 0 || missing != 0 || st.passes != 1 + st.restarts || st.longest_section > bound;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(w, NULL);
    pthread_join(r, NULL);

    pthread_rwlock_wrlock(&tree.lock);
    uint64_t inserted = 0;
    for (uint32_t k = 0; k < FANOUT * FANOUT; k++)
        if (tree.leaf[k / FANOUT] && tree.leaf[k / FANOUT]->slot[k % FANOUT])
            delete ((uint16_t)k), inserted++;
    for (int i = 0; i < FANOUT; i++)
        free(tree.leaf[i]);
    pthread_rwlock_unlock(&tree.lock);
    struct swf_cache_stats cs;
    swf_cache_stats(cache, &cs);
    printf("deleted %llu, freed %llu; readers saw %llu objects of another member; cache alive "
           "%llu\n",
           (unsigned long long)deletes, (unsigned long long)frees, (unsigned long long)bad,
           (unsigned long long)cs.alive);
    failed |= frees != deletes || bad != 0 || cs.alive != 0 || swf_cache_destroy(cache) != 0;
    (void)inserted;
    return failed;
}
