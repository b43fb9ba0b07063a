/* examples/readme_first.c - README's first example: switch a feature on, and each of 10,000
 * tasks gets its own 4 KiB object in one sweep; a task added while it is on gets one at once. */
#include <stdio.h>

#include <sweepfill/registry.h>

#define NTASKS 10000

struct task {
    int id;
    struct swf_node node; /* a list link and the slot; zeroed before its first add */
};
static struct task tasks[NTASKS + 1];

static void init(void *obj, void *node, void *arg) /* before publication; must not block */
{
    (void)arg;
    *(int *)obj = SWF_CONTAINER_OF(node, struct task, node)->id;
}

int main(void)
{
    struct swf_cache_config ccfg = {.object_size = 4096, .name = "per-task"};
    struct swf_cache *objs;
    if (swf_cache_create(&ccfg, &objs) != 0)
        return 1;
    struct swf_registry_config rcfg;
    struct swf_registry *reg;
    swf_registry_config_init(&rcfg); /* reserve 32, read sections of 1024 visits */
    rcfg.cache = objs;
    rcfg.init = init;
    if (swf_registry_create(&rcfg, &reg) != 0)
        return 1;
    for (int i = 0; i < NTASKS; i++) {
        tasks[i].id = i;
        swf_registry_add(reg, &tasks[i].node);
    }
    int err = swf_registry_activate(reg, NULL); /* one sweep: every task has its object */
    tasks[NTASKS].id = NTASKS;
    swf_registry_add(reg, &tasks[NTASKS].node); /* while on, the object comes with the add */

    struct swf_reader *rd = swf_registry_read_lock(reg); /* the hot path, in a reader: */
    int *a = swf_node_object(&tasks[42].node);           /* NULL, or an initialised object */
    int *b = swf_node_object(&tasks[NTASKS].node);
    int ok = err == 0 && a != NULL && *a == 42 && b != NULL && *b == NTASKS;
    swf_registry_read_unlock(rd);

    swf_registry_deactivate(reg); /* switch off: every object back, after a grace period */
    for (int i = 0; i <= NTASKS; i++)
        swf_registry_del(reg, &tasks[i].node, NULL);
    printf("readme_first: activate %d, tasks 42 and %d %s\n", err, NTASKS,
           ok ? "have their objects" : "lack an object");
    return ok && swf_registry_destroy(reg) == 0 && swf_cache_destroy(objs) == 0 ? 0 : 1;
}
