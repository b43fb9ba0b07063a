/* examples/man/registry_add.c - swf_registry_add(3)'s example: a member added while the
 * registry is active gets its object first; a del hands the member back through its release
 * callback after a grace period. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/registry.h>

/* [member] */
struct task {
    struct swf_node node;
    int id;
};

static int released; /* members handed back by task_released */

static void task_released(struct swf_node *n)
{
    free(SWF_CONTAINER_OF(n, struct task, node));
    released++;
}
/* [member] */

static void init_counter(void *obj, void *member, void *arg)
{
    (void)member;
    (void)arg;
    *(long *)obj = 0;
}

int main(void)
{
    struct swf_cache_config ccfg = {.object_size = sizeof(long), .name = "counters"};
    struct swf_registry_config rcfg;
    struct swf_cache *counters;
    struct swf_registry *reg;
    if (swf_cache_create(&ccfg, &counters) != 0)
        return 1;
    swf_registry_config_init(&rcfg);
    rcfg.cache = counters;
    rcfg.init = init_counter;
    if (swf_registry_create(&rcfg, &reg) != 0 || swf_registry_activate(reg, NULL) != 0)
        return 1;
    int err;
    /* [man] */
    struct task *t = calloc(1, sizeof(*t)); /* zeroed: addable */
    if (t == NULL)
        return 1;
    err = swf_registry_add(reg, &t->node); /* active: t gets its object first */
    if (err != 0) {
        fprintf(stderr, "swf_registry_add: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    /* ... */
    err = swf_registry_del(reg, &t->node, task_released);
    /* t is not to be touched again: task_released frees it after a grace period */
    /* [man] */
    if (err != 0)
        return 1;
    swf_registry_synchronize(reg); /* the grace period: task_released has run */
    struct swf_registry_stats st;
    if (swf_registry_stats(reg, &st) != 0 || st.assigned_by_add != 1 || st.released != 1 ||
        released != 1)
        return 1;
    if (swf_registry_deactivate(reg) != 0 || swf_registry_destroy(reg) != 0)
        return 1;
    return swf_cache_destroy(counters) == 0 ? 0 : 1;
}
