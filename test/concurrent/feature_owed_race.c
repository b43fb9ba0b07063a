/*
 * test/concurrent/feature_owed_race.c - the owed table (feature.h) under a live list: members owed
 * by adds, filled by catch-ups from the table while a closer unlinks, releases and frees them
 * (their memory reused by the next opens), with adds retried on their own marked slot and a
 * table small enough to fill up, so that members are also owed beyond it and found by a walk.
 *
 * The list is a <sys/queue.h> TAILQ under an rwlock with the library's pin (as
 * examples/lists/sys_tailq.c). The opener links a member under the write lock and calls
 * swf_feature_added(SWF_NOWAIT) there, with most NOWAIT allocations failing (failslab) and no add
 * reserve, and now and then retries its own owed member while still holding the lock; a closer
 * unlinks a random member, whose release (after the grace period) runs before its memory is
 * poisoned and freed; a control thread calls swf_feature_catch_up() in a loop; two readers load
 * every slot under the read lock and check each object names its member.
 * Checked: readers never see a mark or another member's object; the run is quiet at the end and a
 * last catch-up leaves every linked member holding an object; deactivate leaves none; every
 * object is accounted for (published by adds, sweeps and table fills == taken back by deactivate
 * and release) and the cache's alive count is 0 once every member is closed. ASan and TSan
 * (test/run's stages) see every touch of a freed member.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/feature.h>
#include <sweepfill/list_sysqueue.h>

#include "../common/tap.h"

enum { TABLE = 64, READERS = 2 };

struct conn {
    TAILQ_ENTRY(conn) link;
    void *stats; /* the slot */
    struct swf_pin pin;
    uint64_t id;
};
TAILQ_HEAD(conn_q, conn);
SWF_LIST_SYS_TAILQ_AUTO(conns, conn_q, conn, link, stats, pin)

static struct conn_q q = TAILQ_HEAD_INITIALIZER(q);
static pthread_rwlock_t lock; /* writer-preferring: readers walk without pause */
static struct swf_cache *cache;
static struct swf_feature *feature;
static struct conn **open_conns; /* the opener's and closer's view, under the write lock */
static size_t nopen, cap;
static int stop_closer, stop_control, stop_readers;
static uint64_t opens_wanted, bad_objects, objects_seen, owed_adds, retries_filled;

static void init_conn(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void free_conn(struct swf_pin *pin)
{
    struct conn *c = (struct conn *)((char *)pin - offsetof(struct conn, pin));
    tap_require(swf_feature_release(feature, c) == 0, "swf_feature_release");
    memset(c, 0x5a, sizeof(*c)); /* a filler's touch after this shows (and ASan sees the free) */
    free(c);
}

/* Under the write lock. */
static void close_at(size_t i)
{
    struct conn *c = open_conns[i];
    open_conns[i] = open_conns[--nopen];
    struct swf_grace grace;
    swf_grace_lock(&grace);
    TAILQ_REMOVE(&q, c, link);
    swf_pin_retire(&c->pin, &grace, free_conn);
}

static void open_one(uint64_t *rng, uint64_t id)
{
    struct conn *c = calloc(1, sizeof(*c));
    tap_require(c != NULL, "calloc");
    c->id = id;
    pthread_rwlock_wrlock(&lock);
    TAILQ_INSERT_TAIL(&q, c, link);
    if (nopen == cap) {
        cap = cap ? 2 * cap : 1024;
        open_conns = realloc(open_conns, cap * sizeof(*open_conns));
        tap_require(open_conns != NULL, "realloc");
    }
    open_conns[nopen++] = c;
    int err = swf_feature_added(feature, c, SWF_NOWAIT);
    if (err == EAGAIN) {
        owed_adds++;
        /* Still under the lock, so c cannot be closed: a retry on its own marked slot races the
         * control thread's fill of the same entry. */
        if ((tap_rand(rng) & 3) == 0 && swf_feature_added(feature, c, SWF_NOWAIT) == 0)
            retries_filled++;
    } else {
        tap_require(err == 0, "swf_feature_added");
    }
    pthread_rwlock_unlock(&lock);
}

static void *closer(void *arg)
{
    uint64_t rng = (uintptr_t)arg;
    while (!__atomic_load_n(&stop_closer, __ATOMIC_ACQUIRE)) {
        pthread_rwlock_wrlock(&lock);
        if (nopen > 64)
            close_at(tap_rand(&rng) % nopen);
        pthread_rwlock_unlock(&lock);
    }
    return NULL;
}

static void *control(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_control, __ATOMIC_ACQUIRE)) {
        int err = swf_feature_catch_up(feature, NULL);
        tap_require(err == 0 || err == ENOMEM, "swf_feature_catch_up");
        sched_yield();
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_readers, __ATOMIC_ACQUIRE)) {
        pthread_rwlock_rdlock(&lock);
        struct conn *c;
        TAILQ_FOREACH(c, &q, link)
        {
            void *obj = swf_slot_load(&c->stats);
            if (obj == NULL)
                continue;
            __atomic_fetch_add(&objects_seen, 1, __ATOMIC_RELAXED);
            if (((uintptr_t)obj & SWF_SLOT_OWED_BIT) || *(void **)obj != c)
                __atomic_fetch_add(&bad_objects, 1, __ATOMIC_RELAXED);
        }
        pthread_rwlock_unlock(&lock);
        sched_yield();
    }
    return NULL;
}

static size_t linked_lacking(void)
{
    size_t n = 0;
    struct conn *c;
    pthread_rwlock_rdlock(&lock);
    TAILQ_FOREACH(c, &q, link)
    {
        n += swf_slot_load(&c->stats) == NULL;
    }
    pthread_rwlock_unlock(&lock);
    return n;
}

int main(void)
{
    bool small = TAP_SANITIZED || tap_under_valgrind() || tap_under_qemu();
    opens_wanted = small ? 20000 : 200000;
    pthread_rwlockattr_t la;
    pthread_rwlockattr_init(&la);
    pthread_rwlockattr_setkind_np(&la, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock, &la);
    struct swf_cache_config cc = {.object_size = 64, .name = "owed_race"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = conns_list(&q);
    fc.sweep.cache = cache;
    fc.sweep.init = init_conn;
    swf_guard_rwlock(&fc.sweep.guard, &lock);
    fc.sweep.section_bound = 64;
    fc.synchronize = swf_synchronize_rwlock;
    fc.synchronize_arg = &lock;
    fc.add_reserve = 0;
    fc.owed_table = TABLE;
    tap_require(swf_feature_create(&fc, &feature) == 0, "swf_feature_create");

    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < 1000; i++)
        open_one(&rng, i);
    tap_require(swf_feature_activate(feature, NULL) == 0, "activate");
    struct swf_failslab fs = {.probability = 20, .interval = 1, .times = -1, .seed = 11};
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "swf_cache_set_failslab");

    pthread_t cl, ct, rd[READERS];
    pthread_create(&cl, NULL, closer, (void *)(uintptr_t)0x2545f4914f6cdd1dull);
    pthread_create(&ct, NULL, control, NULL);
    for (int i = 0; i < READERS; i++)
        pthread_create(&rd[i], NULL, reader, NULL);
    for (uint64_t i = 1000; i < opens_wanted; i++)
        open_one(&rng, i);
    __atomic_store_n(&stop_closer, 1, __ATOMIC_RELEASE);
    pthread_join(cl, NULL);
    __atomic_store_n(&stop_control, 1, __ATOMIC_RELEASE);
    pthread_join(ct, NULL);
    swf_cache_set_failslab(cache, NULL);

    struct swf_feature_stats st;
    swf_feature_stats(feature, &st);
    diag("%llu opens, %llu owed (%llu beyond the table), %llu retries filled, %llu filled from the "
         "table, %llu catch-ups (%llu walked)",
         (unsigned long long)opens_wanted, (unsigned long long)owed_adds,
         (unsigned long long)st.owed_untabled, (unsigned long long)retries_filled,
         (unsigned long long)st.filled_by_catch_up, (unsigned long long)st.catch_ups,
         (unsigned long long)st.catch_up_walks);
    int err = swf_feature_catch_up(feature, NULL);
    swf_feature_stats(feature, &st);
    ok(st.filled_by_catch_up > 0 && st.released > 0 && retries_filled > 0,
       "the run filled members from the table, released members and retried adds");
    size_t lacking = linked_lacking();
    ok(err == 0 && lacking == 0 && swf_feature_stats(feature, &st) == 0 && st.owed_tabled == 0,
       "quiet, a last catch-up leaves every linked member an object (%zu lack one)", lacking);
    __atomic_store_n(&stop_readers, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++)
        pthread_join(rd[i], NULL);
    ok(bad_objects == 0, "readers saw %llu objects, no mark and none another member's (%llu bad)",
       (unsigned long long)objects_seen, (unsigned long long)bad_objects);

    ok(swf_feature_deactivate(feature) == 0, "deactivate");
    size_t holding = 0;
    struct conn *c;
    TAILQ_FOREACH(c, &q, link)
    {
        holding += swf_slot_peek(&c->stats) != NULL;
    }
    ok(holding == 0, "after deactivate no member holds an object or a mark (%zu do)", holding);
    pthread_rwlock_wrlock(&lock);
    while (nopen > 0)
        close_at(nopen - 1);
    pthread_rwlock_unlock(&lock);
    swf_feature_stats(feature, &st);
    struct swf_cache_stats cs;
    swf_cache_stats(cache, &cs);
    uint64_t published = st.assigned_by_add + st.assigned_by_sweep + st.filled_by_catch_up;
    ok(cs.alive == 0 && published == st.unpublished + st.released,
       "conservation: %llu published == %llu taken back by deactivate + %llu released; alive %llu",
       (unsigned long long)published, (unsigned long long)st.unpublished,
       (unsigned long long)st.released, (unsigned long long)cs.alive);
    ok(swf_feature_destroy(feature) == 0 && swf_cache_destroy(cache) == 0, "destroy");
    free(open_conns);
    return tap_done();
}
