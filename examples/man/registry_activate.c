/* examples/man/registry_activate.c - swf_registry_activate(3)'s example: switch a registry on and
 * off, retrying on ENOMEM in the way each call's errors allow. */
#include <errno.h>
#include <stdlib.h>

#include <sweepfill/registry.h>

#define MEMBERS 64

static void init_zero(void *obj, void *member, void *arg)
{
    (void)member;
    (void)arg;
    *(long *)obj = 0;
}

/* Members that hold an object now. */
static int filled(struct swf_registry *reg)
{
    int count = 0;
    struct swf_reader *rd = swf_registry_read_lock(reg);
    struct swf_node *n;
    if (rd == NULL)
        return -1;
    SWF_REGISTRY_FOREACH(reg, n)
    {
        if (swf_node_object(n) != NULL)
            count++;
    }
    swf_registry_read_unlock(rd);
    return count;
}

int main(void)
{
    struct swf_cache_config ccfg = {.object_size = sizeof(long), .name = "example"};
    struct swf_registry_config rcfg;
    struct swf_cache *cache;
    struct swf_registry *reg;
    static struct swf_node nodes[MEMBERS]; /* zeroed: addable */
    if (swf_cache_create(&ccfg, &cache) != 0)
        return 1;
    swf_registry_config_init(&rcfg);
    rcfg.cache = cache;
    rcfg.init = init_zero;
    if (swf_registry_create(&rcfg, &reg) != 0)
        return 1;
    for (int i = 0; i < MEMBERS; i++)
        if (swf_registry_add(reg, &nodes[i]) != 0)
            return 1;
    int err, on, off;
    /* [man] */
    struct swf_sweep_stats st;
    err = swf_registry_activate(reg, &st);
    if (err == ENOMEM)                         /* active; adds keep assigning */
        err = swf_registry_activate(reg, &st); /* later */
    on = filled(reg);                          /* 0 returned: every member has an object */
    /* ... */
    err = swf_registry_deactivate(reg);
    if (err == ENOMEM) {
        struct swf_registry_stats rs;
        swf_registry_stats(reg, &rs);
        if (rs.active) /* nothing changed: retry later */
            err = swf_registry_deactivate(reg);
        else
            err = 0; /* switched off; the objects were freed all the same */
    }
    off = filled(reg); /* none has one now */
    /* [man] */
    if (err != 0 || on != MEMBERS || off != 0)
        return 1;
    for (int i = 0; i < MEMBERS; i++)
        if (swf_registry_del(reg, &nodes[i], NULL) != 0)
            return 1;
    if (swf_registry_destroy(reg) != 0)
        return 1;
    return swf_cache_destroy(cache) == 0 ? 0 : 1;
}
