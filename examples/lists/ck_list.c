/*
 * examples/lists/ck_list.c - README "Your lists": a CK_LIST read in ck_epoch sections, resumable
 * with the library's pin, switched on and off exactly (feature.h): the adder and the deleter
 * each make one more call. Built and run by the examples build; the README shows the part
 * between the [README] markers (test/packaging/readme_snippets.py checks that they agree).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ck_epoch.h>
#include <ck_queue.h>
#include <sweepfill/feature.h>

static struct swf_cache *cache;

static void init_shadow(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

/* [README] */
struct task {
    CK_LIST_ENTRY(task) link;
    void *shadow;       /* the slot */
    struct swf_pin pin; /* the library's pin: RESUME resumes, no pin code of yours */
};
CK_LIST_HEAD(task_list, task);
SWF_LIST_CK_LIST_AUTO(tasks, task_list, task, link, shadow, pin)

static struct swf_feature *tracing; /* one shadow per task while on */

/* rec belongs to the control thread: activate, deactivate and catch_up run there, never on an
 * adder's thread (an epoch record serves one thread at a time). */
static int make_feature(struct task_list *all, ck_epoch_record_t *rec)
{
    struct swf_feature_config cfg;
    swf_feature_config_init(&cfg); /* RESUME, compare-and-swap publication */
    cfg.sweep.list = tasks_list(all);
    cfg.sweep.cache = cache;
    cfg.sweep.init = init_shadow;
    swf_guard_epoch(&cfg.sweep.guard, rec);  /* the sections run on rec, on the calling thread */
    cfg.sweep.section_bound = 1024;          /* leave the epoch section every 1024 members */
    cfg.synchronize = swf_synchronize_epoch; /* sleeps while it waits */
    cfg.synchronize_arg = rec;
    return swf_feature_create(&cfg, &tracing);
}

static void add_task(struct task_list *all, struct task *t) /* any thread, writer lock held */
{
    CK_LIST_INSERT_HEAD(all, t, link);
    (void)swf_feature_added(tracing, t, SWF_NOWAIT); /* off: one load; EAGAIN: t is owed, */
    /* recorded for tend_tasks: no retry here, and none after the unlock (a delete may free t) */
}

/* The control thread (rec's), not holding the writer lock, on a timer of its loop: refill the add
 * reserve and the headroom, then give each task owed so far its object, one visit each from the
 * owed table, in epoch sections on rec. Both return at once when there is nothing to do. */
static int tend_tasks(void)
{
    int err = swf_feature_maintain(tracing);
    return err != 0 ? err : swf_feature_catch_up(tracing, NULL);
}

static void free_task(struct swf_pin *pin) /* after the grace period and any sweep's unpin */
{
    struct task *t = (struct task *)((char *)pin - offsetof(struct task, pin));
    swf_feature_release(tracing, t); /* its shadow, if any, back to the cache */
    free(t);
}

/* With the writer lock held; own is the calling thread's own epoch record. */
static void delete_task(struct task *t, ck_epoch_record_t *own)
{
    struct swf_grace grace;
    swf_grace_epoch(&grace, own); /* ck_epoch_call on own; its ck_epoch_poll/barrier runs it */
    CK_LIST_REMOVE(t, link);
    swf_pin_retire(&t->pin, &grace, free_task);
}
/* [README] */

static size_t with_shadow(struct task_list *all)
{
    size_t n = 0;
    struct task *t;
    CK_LIST_FOREACH(t, all, link)
    {
        n += swf_slot_load(&t->shadow) != NULL;
    }
    return n;
}

static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;

static void *adder(void *all) /* another thread: adds, and touches no epoch record of main's */
{
    for (int i = 0; i < 1000; i++) { /* added while on: filled by their adder, or owed */
        pthread_mutex_lock(&writer);
        add_task(all, calloc(1, sizeof(struct task)));
        pthread_mutex_unlock(&writer);
    }
    return NULL;
}

int main(void) /* the control thread: rec is its record */
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_cache_config cc = {.object_size = 64, .name = "ck_list"};
    static struct task_list all = CK_LIST_HEAD_INITIALIZER(all);
    if (swf_cache_create(&cc, &cache) != 0 || make_feature(&all, &rec) != 0)
        return 1;
    for (int i = 0; i < 10000; i++)
        add_task(&all, calloc(1, sizeof(struct task)));
    int err = swf_feature_activate(tracing, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, adder, &all) != 0)
        return 1;
    pthread_join(t, NULL);
    err |= tend_tasks(); /* here, on rec's thread */
    size_t on = with_shadow(&all);
    err |= swf_feature_deactivate(tracing);
    size_t off = with_shadow(&all);
    pthread_mutex_lock(&writer);
    while (CK_LIST_FIRST(&all) != NULL)
        delete_task(CK_LIST_FIRST(&all), &rec);
    pthread_mutex_unlock(&writer);
    ck_epoch_barrier(&rec);
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    printf("ck_list: activate/deactivate %d, %zu of 11000 shadowed while on, %zu after; objects "
           "alive after every task was deleted: %llu\n",
           err, on, off, (unsigned long long)st.alive);
    return err != 0 || on != 11000 || off != 0 || st.alive != 0 ||
           swf_feature_destroy(tracing) != 0 || swf_cache_destroy(cache) != 0;
}
