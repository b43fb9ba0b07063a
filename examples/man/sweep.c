/* examples/man/sweep.c - swf_sweep(3)'s example: one sweep gives each task of a CK_LIST a shadow
 * stack, in ck_epoch sections of at most 1024 members. */
#include <ck_epoch.h>
#include <ck_queue.h>
#include <stdio.h>

#include <sweepfill/sweep.h>

#define NTASKS 5000

struct shadow_stack {
    unsigned long depth;
    void *owner;
};

struct task {
    CK_LIST_ENTRY(task) link;
    void *shadow;       /* the slot */
    struct swf_pin pin; /* lets the sweep keep its place when it leaves a section */
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

int main(void)
{
    static struct task pool[NTASKS];
    static struct task_list all_tasks = CK_LIST_HEAD_INITIALIZER(all_tasks);
    for (size_t i = 0; i < NTASKS; i++)
        CK_LIST_INSERT_HEAD(&all_tasks, &pool[i], link);
    static ck_epoch_t epoch;
    static ck_epoch_record_t record;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &record, NULL);
    ck_epoch_record_t *my_epoch_record = &record;
    size_t ntasks = NTASKS;
    struct swf_cache_config cc = {.object_size = sizeof(struct shadow_stack), .name = "stacks"};
    struct swf_cache *stacks;
    if (swf_cache_create(&cc, &stacks) != 0)
        return 1;
    /* [man] */
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;

    swf_sweep_config_init(&cfg);
    cfg.list = tasks_list(&all_tasks);
    cfg.cache = stacks;
    cfg.init = init_shadow_stack;
    swf_guard_epoch(&cfg.guard, my_epoch_record);
    cfg.section_bound = 1024;
    /* fault memory in first: N objects, plus B for the reserve */
    swf_cache_grow(stacks, ntasks + cfg.reserve);
    int err = swf_sweep(&cfg, &st);
    /* [man] */
    size_t ready = 0;
    for (size_t i = 0; i < NTASKS; i++) {
        struct shadow_stack *s = swf_slot_load(&pool[i].shadow);
        ready += s != NULL && s->owner == &pool[i] && s->depth == 0;
    }
    printf("sweep: %d, %zu of %d tasks with a stack, %llu assigned, longest section %llu\n", err,
           ready, NTASKS, (unsigned long long)st.assigned, (unsigned long long)st.longest_section);
    for (size_t i = 0; i < NTASKS; i++)
        swf_cache_free(stacks, swf_slot_take(&pool[i].shadow));
    return err == 0 && ready == NTASKS && st.assigned == NTASKS && st.longest_section <= 1024 &&
                   swf_cache_destroy(stacks) == 0
               ? 0
               : 1;
}
