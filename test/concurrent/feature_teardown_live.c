/*
 * test/concurrent/feature_teardown_live.c - the teardown docs/server.md gives ("Teardown"), run
 * while the worker threads are still alive: some blocked in read() outside any section, each
 * holding a registered epoch record and a binding to the cache, and others still going in and out
 * of epoch sections, reading the list.
 *
 * The workers add members under the writer mutex (swf_feature_added, NOWAIT, a third of the
 * NOWAIT allocations failing) and delete a third of them with swf_pin_retire, the grace period's
 * callbacks queued on the reclaim record (used under the writer mutex, never on a worker's own
 * record); the control thread (main) maintains, catches up and polls the reclaim record
 * meanwhile, as its timer would. Then every worker parks in read() on a pipe, outside its
 * sections, and main tears down as the page says: stop the adds, deactivate, unlink what is
 * linked, run the reclaim record's callbacks (swf_synchronize_epoch, then ck_epoch_reclaim),
 * destroy the feature and the cache. Checked: each step returns 0 with the workers still blocked
 * and the readers still reading; every member added was released exactly once and holds no
 * object; 0 objects alive before the cache is destroyed; then the workers wake up and exit (their
 * bindings to the destroyed cache are forgotten) and the readers stop.
 */
#include <ck_epoch.h>
#include <ck_queue.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sweepfill/feature.h>

#include "../common/tap.h"

enum { WORKERS = 3, READERS = 2, MAX_PER_WORKER = 3000 };
static int per_worker = MAX_PER_WORKER; /* fewer under valgrind */

struct member {
    CK_LIST_ENTRY(member) link;
    void *slot;
    struct swf_pin pin;
    uint32_t released; /* times free_member ran: 1 at the end */
};
CK_LIST_HEAD(member_list, member);
SWF_LIST_CK_LIST_AUTO(members, member_list, member, link, slot, pin)

static struct member_list all = CK_LIST_HEAD_INITIALIZER(all);
static struct member pool[WORKERS][MAX_PER_WORKER]; /* made by main: no free, no reuse */
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static int closing; /* writer mutex: set, no add links any more */
static ck_epoch_t epoch;
static ck_epoch_record_t control_rec; /* the feature's guard and synchronize: main's */
static ck_epoch_record_t reclaim_rec; /* the frees' grace periods: under the writer mutex */
static struct swf_cache *cache;
static struct swf_feature *f;
static uint64_t added, released_twice, held_at_release, mismatched;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

/* After the grace period of the reclaim record (or a sweep's unpin): on the thread that polls it.
 */
static void free_member(struct swf_pin *pin)
{
    struct member *m = (struct member *)((char *)pin - offsetof(struct member, pin));
    swf_feature_release(f, m);
    held_at_release += swf_slot_load(&m->slot) != NULL;
    released_twice += m->released++ != 0;
}

/* Under the writer mutex: unlink m and queue its free on the reclaim record. */
static void unlink_member(struct member *m)
{
    struct swf_grace grace;
    swf_grace_epoch(&grace, &reclaim_rec);
    CK_LIST_REMOVE(m, link);
    tap_require(swf_pin_retire(&m->pin, &grace, free_member) == 0, "swf_pin_retire");
}

/* ---- the workers: add, delete, then park in read() outside any section ---- */

struct worker {
    pthread_t thread;
    int index, pipe[2];
    pid_t tid;
    ck_epoch_record_t rec; /* its own: its sections only */
    uint32_t woke;
};
static struct worker workers[WORKERS];
static uint32_t parked;

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct swf_guard g;
    swf_guard_epoch(&g, &w->rec);
    for (int i = 0; i < per_worker; i++) {
        struct member *m = &pool[w->index][i];
        pthread_mutex_lock(&writer);
        if (!closing) {
            CK_LIST_INSERT_HEAD(&all, m, link);
            (void)swf_feature_added(f, m, SWF_NOWAIT); /* under the lock; EAGAIN: owed */
            added++;
        }
        pthread_mutex_unlock(&writer);
        g.enter(g.arg); /* a look at the member just added, in a section of its own record */
        void *obj = swf_slot_load(&m->slot);
        __atomic_fetch_add(&mismatched, obj != NULL && *(void **)obj != m, __ATOMIC_RELAXED);
        g.leave(g.arg);
        if (i % 3 == 2) { /* delete the one added two turns ago */
            pthread_mutex_lock(&writer);
            unlink_member(&pool[w->index][i - 2]);
            pthread_mutex_unlock(&writer);
        }
    }
    w->tid = (pid_t)syscall(SYS_gettid);
    __atomic_fetch_add(&parked, 1, __ATOMIC_RELEASE);
    char c;
    while (read(w->pipe[0], &c, 1) < 0) /* parked: a registered record, no section, blocked */
        ;
    __atomic_store_n(&w->woke, 1, __ATOMIC_RELEASE);
    return NULL; /* exits without calling the library: its binding to the cache is forgotten */
}

/* Whether thread tid sleeps (state S in /proc): blocked in its read(). Unknown: say so. */
static int sleeping(pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the state follows the command name */
    return p != NULL && p[1] == ' ' && p[2] == 'S';
}

/* ---- the readers: in and out of epoch sections on their own records, to the end ---- */

struct reader {
    pthread_t thread;
    ck_epoch_record_t rec;
    uint64_t sections;
};
static struct reader readers[READERS];
static uint32_t stop_readers;

static void *reader_main(void *arg)
{
    struct reader *r = arg;
    struct swf_guard g;
    swf_guard_epoch(&g, &r->rec);
    while (!__atomic_load_n(&stop_readers, __ATOMIC_ACQUIRE)) {
        g.enter(g.arg);
        struct member *m;
        CK_LIST_FOREACH(m, &all, link)
        {
            void *obj = swf_slot_load(&m->slot);
            if (obj != NULL && *(void **)obj != m)
                __atomic_fetch_add(&mismatched, 1, __ATOMIC_RELAXED);
        }
        g.leave(g.arg);
        __atomic_fetch_add(&r->sections, 1, __ATOMIC_RELEASE);
        sched_yield();
    }
    return NULL;
}

static uint64_t alive(void)
{
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    return st.alive;
}

/* The control thread's timer, while the workers add: what docs/server.md has it do. */
static void control_turn(void)
{
    tap_require(swf_feature_maintain(f) == 0, "swf_feature_maintain");
    tap_require(swf_feature_catch_up(f, NULL) == 0, "swf_feature_catch_up");
    pthread_mutex_lock(&writer); /* the reclaim record's callbacks run here: none takes it */
    ck_epoch_poll(&reclaim_rec);
    pthread_mutex_unlock(&writer);
}

int main(void)
{
    if (tap_under_valgrind())
        per_worker = 600;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &control_rec, NULL);
    ck_epoch_register(&epoch, &reclaim_rec, NULL);
    for (int w = 0; w < WORKERS; w++)
        for (int i = 0; i < per_worker; i++)
            swf_pin_init(&pool[w][i].pin);
    struct swf_cache_config cc = {.object_size = 64, .name = "teardown"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
    struct swf_feature_config cfg;
    swf_feature_config_init(&cfg);
    cfg.sweep.list = members_list(&all);
    cfg.sweep.cache = cache;
    cfg.sweep.init = init_obj;
    swf_guard_epoch(&cfg.sweep.guard, &control_rec);
    cfg.sweep.section_bound = 64;
    cfg.synchronize = swf_synchronize_epoch;
    cfg.synchronize_arg = &control_rec;
    tap_require(swf_feature_create(&cfg, &f) == 0, "swf_feature_create");
    tap_require(swf_feature_prepare(f, (size_t)(WORKERS * per_worker)) == 0, "prepare");
    tap_require(swf_feature_activate(f, NULL) == 0, "activate");
    struct swf_failslab fs = {33, 0, -1, 5}; /* a third of the NOWAIT allocations fail */
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "swf_cache_set_failslab");

    for (int r = 0; r < READERS; r++) {
        ck_epoch_register(&epoch, &readers[r].rec, NULL);
        tap_require(pthread_create(&readers[r].thread, NULL, reader_main, &readers[r]) == 0,
                    "pthread_create");
    }
    for (int w = 0; w < WORKERS; w++) {
        workers[w].index = w;
        tap_require(pipe(workers[w].pipe) == 0, "pipe");
        ck_epoch_register(&epoch, &workers[w].rec, NULL);
        tap_require(pthread_create(&workers[w].thread, NULL, worker_main, &workers[w]) == 0,
                    "pthread_create");
    }
    while (__atomic_load_n(&parked, __ATOMIC_ACQUIRE) < WORKERS) {
        control_turn();
        sched_yield();
    }
    struct swf_failslab none = {0, 0, 0, 0};
    swf_cache_set_failslab(cache, &none);
    control_turn();
    int asleep = 0;
    for (int w = 0; w < WORKERS; w++) { /* until each sleeps in its read() (Linux: /proc) */
        int s;
        while ((s = sleeping(workers[w].tid)) == 0)
            sched_yield();
        asleep += s == 1;
    }
    for (int r = 0; r < READERS; r++) /* and each reader has been through a section */
        while (__atomic_load_n(&readers[r].sections, __ATOMIC_ACQUIRE) == 0)
            sched_yield();
    struct swf_feature_stats fst;
    swf_feature_stats(f, &fst);
    diag("%llu members added, %llu left owed, %llu from the add reserve; %d of %d workers seen "
         "asleep in read()",
         (unsigned long long)added, (unsigned long long)fst.left_owed,
         (unsigned long long)fst.add_reserve_uses, asleep, WORKERS);
    size_t linked = 0, with = 0;
    pthread_mutex_lock(&writer);
    struct member *m;
    CK_LIST_FOREACH(m, &all, link)
    {
        linked++;
        with += swf_slot_load(&m->slot) != NULL;
    }
    pthread_mutex_unlock(&writer);
    ok(fst.left_owed > 0 && linked > 0 && with == linked,
       "before the teardown: every linked member has its object after a catch-up (%zu of %zu)",
       with, linked);

    /* The teardown, on the thread that owns the feature's guard record. */
    pthread_mutex_lock(&writer);
    closing = 1; /* 1. no add links a member any more */
    pthread_mutex_unlock(&writer);
    ok(swf_feature_deactivate(f) == 0, "2. deactivate, the workers parked outside their sections");
    pthread_mutex_lock(&writer);
    while ((m = CK_LIST_FIRST(&all)) != NULL) /* 3. unlink what is linked */
        unlink_member(m);
    pthread_mutex_unlock(&writer);
    swf_synchronize_epoch(&reclaim_rec); /* 4. nobody queues on it now: its callbacks, here */
    ck_epoch_reclaim(&reclaim_rec);
    size_t once = 0;
    for (int w = 0; w < WORKERS; w++)
        for (int i = 0; i < per_worker; i++)
            once += pool[w][i].released == 1 && swf_slot_load(&pool[w][i].slot) == NULL;
    ok(added == (uint64_t)(WORKERS * per_worker) && once == added && released_twice == 0 &&
           held_at_release == 0,
       "3-4. every member added was released once, holding no object (%zu of %llu; %llu twice, "
       "%llu held one)",
       once, (unsigned long long)added, (unsigned long long)released_twice,
       (unsigned long long)held_at_release);
    ok(alive() == 0, "0 objects alive (%llu)", (unsigned long long)alive());
    ok(swf_feature_destroy(f) == 0, "5. swf_feature_destroy");
    ok(swf_cache_destroy(cache) == 0, "6. swf_cache_destroy, the workers still bound to it");
    uint32_t woke = 0;
    for (int w = 0; w < WORKERS; w++)
        woke += __atomic_load_n(&workers[w].woke, __ATOMIC_ACQUIRE);
    ok(woke == 0, "no worker ran meanwhile: all %d still parked (%u woke)", WORKERS, woke);

    for (int w = 0; w < WORKERS; w++) { /* now they may go, and exit */
        tap_require(write(workers[w].pipe[1], "x", 1) == 1, "write");
        pthread_join(workers[w].thread, NULL);
        close(workers[w].pipe[0]);
        close(workers[w].pipe[1]);
    }
    __atomic_store_n(&stop_readers, 1, __ATOMIC_RELEASE);
    uint64_t reader_sections = 0;
    for (int r = 0; r < READERS; r++) {
        pthread_join(readers[r].thread, NULL);
        reader_sections += readers[r].sections;
    }
    ok(mismatched == 0,
       "the readers went on through the teardown (%llu sections), every object they found was "
       "their member's (%llu not)",
       (unsigned long long)reader_sections, (unsigned long long)mismatched);
    return tap_done();
}
