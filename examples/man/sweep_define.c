/* examples/man/sweep_define.c - SWF_SWEEP_DEFINE(3)'s example: a sweep specialised for a CK_LIST
 * of tasks and its init function, which also refuses a configuration made for another list. */
#include <ck_epoch.h>
#include <ck_queue.h>
#include <errno.h>
#include <stdio.h>

#include <sweepfill/sweep.h>

#define NTASKS 1000

struct shadow_stack {
    unsigned long depth;
    void *owner;
};

/* [man] */
struct task {
    CK_LIST_ENTRY(task) link;
    void *shadow;
    struct swf_pin pin;
};
CK_LIST_HEAD(task_list, task);
SWF_LIST_CK_LIST_AUTO(tasks, task_list, task, link, shadow, pin)

static void init_shadow_stack(void *obj, void *member, void *arg)
{
    struct shadow_stack *s = obj;
    (void)arg;
    s->depth = 0;
    s->owner = member;
}

SWF_SWEEP_DEFINE(sweep_tasks, tasks, init_shadow_stack)
/* [man] */

int main(void)
{
    static struct task pool[NTASKS];
    static struct task_list all_tasks = CK_LIST_HEAD_INITIALIZER(all_tasks);
    for (size_t i = 0; i < NTASKS; i++)
        CK_LIST_INSERT_HEAD(&all_tasks, &pool[i], link);
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_cache_config cc = {.object_size = sizeof(struct shadow_stack), .name = "stacks"};
    struct swf_cache *stacks;
    if (swf_cache_create(&cc, &stacks) != 0)
        return 1;
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    swf_sweep_config_init(&cfg);
    cfg.list = tasks_list(&all_tasks); /* the adapter's slot offset */
    cfg.cache = stacks;
    swf_guard_epoch(&cfg.guard, &rec);
    /* cfg.init stays NULL: the generated sweep calls init_shadow_stack */
    int err = sweep_tasks(&cfg, &st);
    size_t ready = 0;
    for (size_t i = 0; i < NTASKS; i++) {
        struct shadow_stack *s = swf_slot_load(&pool[i].shadow);
        ready += s != NULL && s->owner == &pool[i];
    }
    /* another slot offset than the adapter's: refused */
    cfg.list.slot_offset = offsetof(struct task, pin);
    int refused = sweep_tasks(&cfg, NULL);
    printf("sweep_define: %d, %zu of %d tasks with a stack; wrong slot offset: %d (%s)\n", err,
           ready, NTASKS, refused, swf_error_reason());
    for (size_t i = 0; i < NTASKS; i++)
        swf_cache_free(stacks, swf_slot_take(&pool[i].shadow));
    return err == 0 && ready == NTASKS && st.assigned == NTASKS && refused == EINVAL &&
                   swf_cache_destroy(stacks) == 0
               ? 0
               : 1;
}
