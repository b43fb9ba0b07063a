/*
 * examples/lists/ck_list.c - README "Your lists": a CK_LIST read in ck_epoch sections, resumable
 * with the library's pin. Built and run by the examples build; the README shows the part between
 * the [README] markers (test/readme_snippets.py checks that they agree).
 */
#include <stdio.h>
#include <stdlib.h>

#include <ck_epoch.h>
#include <ck_queue.h>
#include <sweepfill/sweep.h>

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

static void free_task(struct swf_pin *pin) /* after the grace period and any sweep's unpin */
{
    struct task *t = (struct task *)((char *)pin - offsetof(struct task, pin));
    swf_cache_free(cache, swf_slot_take(&t->shadow));
    free(t);
}

static int fill(struct task_list *all, ck_epoch_record_t *rec)
{
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg); /* RESUME */
    cfg.list = tasks_list(all);
    cfg.cache = cache;
    cfg.init = init_shadow;
    swf_guard_epoch(&cfg.guard, rec);
    cfg.section_bound = 1024; /* leave the epoch section every 1024 members */
    return swf_sweep(&cfg, NULL);
}

static void delete_task(struct task *t, ck_epoch_record_t *rec) /* with the writer lock held */
{
    struct swf_grace grace;
    swf_grace_epoch(&grace, rec); /* ck_epoch_call on rec; ck_epoch_poll/barrier runs it */
    CK_LIST_REMOVE(t, link);
    swf_pin_retire(&t->pin, &grace, free_task);
}
/* [README] */

int main(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_cache_config cc = {.object_size = 64, .name = "ck_list"};
    struct task_list all = CK_LIST_HEAD_INITIALIZER(all);
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    for (int i = 0; i < 10000; i++) {
        struct task *t = calloc(1, sizeof(*t));
        CK_LIST_INSERT_HEAD(&all, t, link);
    }
    int err = fill(&all, &rec);
    while (CK_LIST_FIRST(&all) != NULL)
        delete_task(CK_LIST_FIRST(&all), &rec);
    ck_epoch_barrier(&rec);
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    printf("ck_list: fill %d, objects alive after every task was deleted: %llu\n", err,
           (unsigned long long)st.alive);
    return err != 0 || st.alive != 0 || swf_cache_destroy(cache) != 0;
}
