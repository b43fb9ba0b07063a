/*
 * examples/lists/sys_tailq.c - README "Your lists": a <sys/queue.h> TAILQ under an rwlock, the
 * lock being the read-side section; resumable with the library's pin; switched on and off
 * exactly (feature.h) with an adder and a deleter that each make one more call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <sweepfill/feature.h>
#include <sweepfill/list_sysqueue.h>

static struct swf_cache *cache;

static void init_conn(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

/* [README] */
struct conn {
    TAILQ_ENTRY(conn) link;
    void *stats; /* the slot */
    struct swf_pin pin;
};
TAILQ_HEAD(conn_q, conn);
SWF_LIST_SYS_TAILQ_AUTO(conns, conn_q, conn, link, stats, pin)

static struct swf_feature *stats_on; /* one object per connection while on */

static int make_feature(struct conn_q *q, pthread_rwlock_t *lock, size_t conns_expected)
{
    struct swf_feature_config cfg;
    swf_feature_config_init(&cfg); /* RESUME, compare-and-swap publication */
    cfg.sweep.list = conns_list(q);
    cfg.sweep.cache = cache;
    cfg.sweep.init = init_conn;
    swf_guard_rwlock(&cfg.sweep.guard, lock); /* a section holds the read lock */
    cfg.sweep.section_bound = 64;             /* writers get in every 64 members */
    cfg.synchronize = swf_synchronize_rwlock; /* the write lock once: every reader has left */
    cfg.synchronize_arg = lock;
    cfg.prepare = conns_expected + cfg.sweep.reserve; /* grown before the flag goes up */
    return swf_feature_create(&cfg, &stats_on);
}

static void open_conn(struct conn_q *q, struct conn *c, pthread_rwlock_t *lock)
{
    pthread_rwlock_wrlock(lock);
    TAILQ_INSERT_TAIL(q, c, link);
    int err = swf_feature_added(stats_on, c, SWF_NOWAIT); /* under the lock; never blocks */
    pthread_rwlock_unlock(lock);
    if (err == EAGAIN) /* c is owed, and recorded. Nothing on c: a close may have freed it */
        swf_feature_catch_up(stats_on, NULL); /* one visit per owed member, from the table */
}

static void free_conn(struct swf_pin *pin)
{
    struct conn *c = (struct conn *)((char *)pin - offsetof(struct conn, pin));
    swf_feature_release(stats_on, c); /* its object, if any, back to the cache */
    free(c);
}

static void close_conn(struct conn_q *q, struct conn *c, pthread_rwlock_t *lock)
{
    struct swf_grace grace;
    swf_grace_lock(&grace); /* the unlink under the write lock is the grace period */
    pthread_rwlock_wrlock(lock);
    TAILQ_REMOVE(q, c, link);
    swf_pin_retire(&c->pin, &grace, free_conn); /* frees now, or at the sweep's unpin */
    pthread_rwlock_unlock(lock);
}
/* [README] */

static size_t with_stats(struct conn_q *q)
{
    size_t n = 0;
    struct conn *c;
    TAILQ_FOREACH(c, q, link)
    {
        n += swf_slot_load(&c->stats) != NULL;
    }
    return n;
}

int main(void)
{
    pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    struct conn_q q = TAILQ_HEAD_INITIALIZER(q);
    struct swf_cache_config cc = {.object_size = 64, .name = "tailq"};
    if (swf_cache_create(&cc, &cache) != 0 || make_feature(&q, &lock, 10000) != 0)
        return 1;
    for (int i = 0; i < 10000; i++)
        open_conn(&q, calloc(1, sizeof(struct conn)), &lock);
    int err = swf_feature_activate(stats_on, NULL);
    for (int i = 0; i < 1000; i++) /* opened while on: filled by their adder */
        open_conn(&q, calloc(1, sizeof(struct conn)), &lock);
    size_t on = with_stats(&q);
    err |= swf_feature_deactivate(stats_on);
    size_t off = with_stats(&q);
    while (!TAILQ_EMPTY(&q))
        close_conn(&q, TAILQ_FIRST(&q), &lock);
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    printf("sys_tailq: activate/deactivate %d, %zu of 11000 with stats while on, %zu after; "
           "objects alive after every connection closed: %llu\n",
           err, on, off, (unsigned long long)st.alive);
    return err != 0 || on != 11000 || off != 0 || st.alive != 0 ||
           swf_feature_destroy(stats_on) != 0 || swf_cache_destroy(cache) != 0;
}
