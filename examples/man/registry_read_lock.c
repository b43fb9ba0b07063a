/* examples/man/registry_read_lock.c - swf_registry_read_lock(3)'s example: sum the members'
 * objects in one read section. */
#include <err.h>
#include <stdlib.h>

#include <sweepfill/registry.h>

#define THREADS 10

struct stats {
    long count;
};

struct thread_info {
    struct swf_node node;
    long id;
};

/* Each object starts as its member's id, so that the sum says every member was seen. */
static void init_stats(void *obj, void *member, void *arg)
{
    struct stats *s = obj;
    (void)arg;
    s->count = SWF_CONTAINER_OF((struct swf_node *)member, struct thread_info, node)->id;
}

int main(void)
{
    struct swf_cache_config ccfg = {.object_size = sizeof(struct stats), .name = "stats"};
    struct swf_registry_config rcfg;
    struct swf_cache *cache;
    struct swf_registry *reg;
    static struct thread_info ti[THREADS];
    if (swf_cache_create(&ccfg, &cache) != 0)
        return 1;
    swf_registry_config_init(&rcfg);
    rcfg.cache = cache;
    rcfg.init = init_stats;
    if (swf_registry_create(&rcfg, &reg) != 0 || swf_registry_activate(reg, NULL) != 0)
        return 1;
    for (int i = 0; i < THREADS; i++) {
        ti[i].id = i + 1;
        if (swf_registry_add(reg, &ti[i].node) != 0)
            return 1;
    }
    long total = 0;
    /* [man] */
    struct swf_reader *rd = swf_registry_read_lock(reg);
    if (rd == NULL)
        err(1, "swf_registry_read_lock");
    struct swf_node *n;
    SWF_REGISTRY_FOREACH(reg, n)
    {
        struct stats *s = swf_node_object(n);
        if (s != NULL)
            total += s->count;
    }
    swf_registry_read_unlock(rd);
    /* [man] */
    if (total != THREADS * (THREADS + 1) / 2)
        return 1;
    if (swf_registry_deactivate(reg) != 0)
        return 1;
    for (int i = 0; i < THREADS; i++)
        if (swf_registry_del(reg, &ti[i].node, NULL) != 0)
            return 1;
    if (swf_registry_destroy(reg) != 0)
        return 1;
    return swf_cache_destroy(cache) == 0 ? 0 : 1;
}
