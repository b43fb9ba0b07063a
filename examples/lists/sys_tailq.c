/*
 * examples/lists/sys_tailq.c - README "Your lists": a <sys/queue.h> TAILQ under an rwlock, the
 * lock being the read-side section; resumable with the library's pin.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

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

static void free_conn(struct swf_pin *pin)
{
    struct conn *c = (struct conn *)((char *)pin - offsetof(struct conn, pin));
    swf_cache_free(cache, swf_slot_take(&c->stats));
    free(c);
}

static int fill(struct conn_q *q, pthread_rwlock_t *lock)
{
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = conns_list(q);
    cfg.cache = cache;
    cfg.init = init_conn;
    swf_guard_rwlock(&cfg.guard, lock); /* a section holds the read lock */
    cfg.section_bound = 64;             /* writers get in every 64 members */
    return swf_sweep(&cfg, NULL);
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

int main(void)
{
    pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    struct conn_q q = TAILQ_HEAD_INITIALIZER(q);
    struct swf_cache_config cc = {.object_size = 64, .name = "tailq"};
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    for (int i = 0; i < 10000; i++) {
        struct conn *c = calloc(1, sizeof(*c));
        TAILQ_INSERT_TAIL(&q, c, link);
    }
    int err = fill(&q, &lock);
    while (!TAILQ_EMPTY(&q))
        close_conn(&q, TAILQ_FIRST(&q), &lock);
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    printf("sys_tailq: fill %d, objects alive after every connection closed: %llu\n", err,
           (unsigned long long)st.alive);
    return err != 0 || st.alive != 0 || swf_cache_destroy(cache) != 0;
}
