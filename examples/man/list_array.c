/* examples/man/list_array.c - swf_list_array(3)'s example: one sweep gives each connection of an
 * array its own statistics object, with a cursor that survives every section boundary. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/list.h>
#include <sweepfill/sweep.h>

struct stats {
    unsigned long bytes;
};

static void init_stats(void *obj, void *member, void *arg)
{
    (void)member, (void)arg;
    memset(obj, 0, sizeof(struct stats));
}

int main(void)
{
    struct swf_cache_config cc = {.object_size = sizeof(struct stats), .name = "stats"};
    struct swf_cache *cache;
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    /* [man] */
    struct conn {
        int fd;
        void *stats; /* the slot */
    };
    static struct conn conns[1024];
    struct swf_array a = {conns, 1024, sizeof(conns[0])};

    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    swf_sweep_config_init(&cfg);
    cfg.list = swf_list_array(&a, offsetof(struct conn, stats));
    cfg.cache = cache;
    cfg.init = init_stats;
    swf_guard_none(&cfg.guard); /* members never leave the array: nothing to guard */
    cfg.section_bound = 100;    /* an array can pin: the cursor resumes after each section */
    int err = swf_sweep(&cfg, &st);
    /* [man] */
    size_t filled = 0;
    for (size_t i = 0; i < 1024; i++)
        filled += swf_slot_load(&conns[i].stats) != NULL;
    printf("list_array: swf_sweep %d, %zu of 1024 slots filled, %llu passes, can pin %d\n", err,
           filled, (unsigned long long)st.passes, swf_list_can_pin(&swf_array_ops));
    if (err != 0 || filled != 1024 || st.passes != 1 || !swf_list_can_pin(&swf_array_ops))
        return 1;
    for (size_t i = 0; i < 1024; i++)
        swf_cache_free(cache, swf_slot_take(&conns[i].stats));
    return swf_cache_destroy(cache) == 0 ? 0 : 1;
}
