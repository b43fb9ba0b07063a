/*
 * test/unit/registry_sections.c - bounded read-side sections in the registry's activation sweep.
 *
 * With K = 64 on 100,000 members the longest section is at most K visits and, with nothing
 * deleted and NOWAIT never failing, the walk is still one pass of exactly N visits. Without a
 * bound the whole walk is one section. Deleting the cursor member while the sweep is outside its
 * section (done here from init, which runs on the member the sweep will yield at) makes the sweep
 * restart from the head, once per deletion, and still fill every linked member; the deleted
 * members' objects are freed after their grace period.
 */
#include <errno.h>
#include <stdlib.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

enum { N = 100000, K = 64 };

struct obj {
    uint64_t tag;
};

static struct swf_registry *reg;
static struct swf_node *nodes;
static uint64_t init_calls;
static int deletions_left;
static int deleted;

static void init_plain(void *o, void *node, void *arg)
{
    (void)arg;
    ((struct obj *)o)->tag = (uint64_t)(uintptr_t)node;
    init_calls++;
}

/* The sweep yields after the member at visit K, 2K, ...: with nothing deleted yet and every
 * member empty, that is init call K, 2K, ...; delete that member while it is the cursor. */
static void init_deleting(void *o, void *node, void *arg)
{
    init_plain(o, node, arg);
    if (deletions_left > 0 && init_calls % (K * 500) == 0) {
        swf_registry_del(reg, node, NULL);
        deletions_left--;
        deleted++;
    }
}

static uint64_t alive(struct swf_cache *c)
{
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    return s.alive;
}

static void run(size_t bound, swf_init_fn *init, int deletions)
{
    struct swf_cache_config ccfg = {
        .object_size = sizeof(struct obj), .prefill = N + 100, .name = "sections"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&ccfg, &c) == 0, "cache");
    struct swf_registry_config cfg;
    swf_registry_config_init(&cfg);
    cfg.cache = c;
    cfg.init = init;
    cfg.section_bound = bound;
    tap_require(swf_registry_create(&cfg, &reg) == 0, "registry");
    nodes = calloc(N, sizeof(*nodes));
    for (size_t i = 0; i < N; i++)
        swf_registry_add(reg, &nodes[i]);
    init_calls = 0;
    deletions_left = deletions;
    deleted = 0;

    struct swf_sweep_stats st;
    int err = swf_registry_activate(reg, &st);
    size_t linked = 0, filled = 0;
    struct swf_reader *rd = swf_registry_read_lock(reg);
    struct swf_node *n;
    SWF_REGISTRY_FOREACH(reg, n)
    {
        linked++;
        filled += swf_node_object(n) != NULL;
    }
    swf_registry_read_unlock(rd);

    if (bound == 0) {
        ok(err == 0 && st.sections == 1 && st.longest_section == N && filled == N,
           "no bound: one section of %llu visits", (unsigned long long)st.longest_section);
    } else if (deletions == 0) {
        ok(err == 0 && st.longest_section <= bound && st.passes == 1 && st.visits == N &&
               st.visits <= N + st.sections && filled == N,
           "bound %zu on %d members: longest section %llu, %llu sections, 1 pass, %llu visits",
           bound, N, (unsigned long long)st.longest_section, (unsigned long long)st.sections,
           (unsigned long long)st.visits);
    } else {
        ok(err == 0 && deleted == deletions && st.restarts == (uint64_t)deletions &&
               st.passes == 1 + (uint64_t)deletions && linked == N - (size_t)deletions &&
               filled == linked && st.longest_section <= bound,
           "cursor deleted %d time(s) while outside the section: %llu restart from the head, "
           "every one of the %zu linked members filled",
           deleted, (unsigned long long)st.restarts, linked);
    }
    struct swf_registry_stats rs;
    swf_registry_stats(reg, &rs);
    if (bound != 0)
        ok(rs.longest_section == st.longest_section && rs.cursor_restarts == st.restarts,
           "the registry's statistics report the longest section (%llu)",
           (unsigned long long)rs.longest_section);
    swf_registry_deactivate(reg);
    for (size_t i = 0; i < N; i++)
        swf_registry_del(reg, &nodes[i], NULL); /* ENOENT for the ones init deleted */
    swf_registry_synchronize(reg);
    ok(alive(c) == 0 && swf_registry_destroy(reg) == 0 && swf_cache_destroy(c) == 0,
       "every object freed, deleted cursors included");
    free(nodes);
}

int main(void)
{
    run(K, init_plain, 0);
    run(0, init_plain, 0);
    run(K, init_deleting, 1);
    return tap_done();
}
