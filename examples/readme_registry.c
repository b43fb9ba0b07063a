/* examples/readme_registry.c - README's registry, as a whole program: members come and go while
 * the feature is switched on and off; readers walk the members in read sections. */
#include <stdio.h>
#include <stdlib.h>

#include <sweepfill/registry.h>

struct shadow_stack {
    unsigned long depth;
    unsigned long owner;
    unsigned long ret[510];
};

struct thread_info {
    int tid;
    struct swf_node node; /* zeroed before its first add (calloc does it) */
    /* ... */
};

static void init_shadow_stack(void *obj, void *node, void *arg)
{
    struct shadow_stack *s = obj;
    (void)arg;
    s->depth = 0;
    s->owner = (unsigned long)SWF_CONTAINER_OF(node, struct thread_info, node)->tid;
}

static void release(struct swf_node *n) /* after del's grace period: the member is ours again */
{
    free(SWF_CONTAINER_OF(n, struct thread_info, node));
}

int main(void)
{
    struct swf_cache_config ccfg = {.object_size = sizeof(struct shadow_stack), .name = "shadow"};
    struct swf_cache *stacks;
    struct swf_registry *reg;
    struct swf_registry_config rcfg;
    if (swf_cache_create(&ccfg, &stacks) != 0)
        return 1;
    swf_registry_config_init(&rcfg); /* reserve 32, section bound 1024 */
    rcfg.cache = stacks;
    rcfg.init = init_shadow_stack; /* runs before publication; must not block */
    if (swf_registry_create(&rcfg, &reg) != 0)
        return 1;

    struct thread_info *ti[100];
    for (int i = 0; i < 100; i++) {
        ti[i] = calloc(1, sizeof(*ti[i]));
        ti[i]->tid = i;
        swf_registry_add(reg, &ti[i]->node); /* while active, the member gets its object first */
    }
    struct swf_sweep_stats stats;
    int err = swf_registry_activate(reg, &stats); /* 0: every member linked now has an object */

    unsigned long seen = 0;
    struct swf_reader *rd = swf_registry_read_lock(reg);
    struct swf_node *n;
    SWF_REGISTRY_FOREACH(reg, n)
    {
        struct thread_info *t = SWF_CONTAINER_OF(n, struct thread_info, node);
        struct shadow_stack *s = swf_node_object(n); /* NULL, or initialised */
        if (s != NULL && s->owner == (unsigned long)t->tid)
            seen++;
    }
    swf_registry_read_unlock(rd);

    for (int i = 0; i < 100; i++) /* object freed, release() called, after a grace period */
        swf_registry_del(reg, &ti[i]->node, release);
    swf_registry_deactivate(reg); /* every object taken back and freed after a grace period */
    printf("readme_registry: activate %d, %llu visits, %lu members seen with their object\n", err,
           (unsigned long long)stats.visits, seen);
    int ok = err == 0 && seen == 100;
    ok = swf_registry_destroy(reg) == 0 && ok;
    return swf_cache_destroy(stacks) == 0 && ok ? 0 : 1;
}
