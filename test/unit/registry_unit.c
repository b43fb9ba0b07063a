/*
 * test/unit/registry_unit.c - the registry's contract, one thread at a time: bad input and misuse
 * get their documented errors; activate fills every member; add while active fills the new member
 * at once; del frees a member's object after a grace period and then calls release; deactivate
 * takes every object back; running out of memory leaves a consistent state a retry completes.
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

#define CANARY 0x5245474953545259ull /* "REGISTRY" */

struct obj {
    uint64_t canary;
    struct swf_node *owner;
};

struct item {
    struct swf_node node;
    int released;
};

static uint64_t inits;

static void init_obj(void *o, void *node, void *arg)
{
    (void)arg;
    struct obj *p = o;
    p->canary = CANARY ^ (uint64_t)(uintptr_t)node;
    p->owner = node;
    inits++;
}

static bool obj_ok(const struct swf_node *n)
{
    const struct obj *p = swf_node_object(n);
    return p != NULL && p->canary == (CANARY ^ (uint64_t)(uintptr_t)n) && p->owner == n;
}

static void on_release(struct swf_node *n)
{
    ((struct item *)n)->released++;
}

static struct swf_cache *make_cache(size_t limit)
{
    struct swf_cache_config cfg = {
        .object_size = sizeof(struct obj), .limit = limit, .name = "registry"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "cache");
    return c;
}

static struct swf_registry *make_registry(struct swf_cache *c, size_t bound)
{
    struct swf_registry_config cfg;
    swf_registry_config_init(&cfg);
    cfg.cache = c;
    cfg.init = init_obj;
    cfg.section_bound = bound;
    struct swf_registry *r;
    tap_require(swf_registry_create(&cfg, &r) == 0, "registry");
    return r;
}

static uint64_t alive(struct swf_cache *c)
{
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    return s.alive;
}

/* Members reachable in a read section, and how many of them have a valid object. */
static size_t walk(struct swf_registry *r, size_t *with_object)
{
    size_t n = 0;
    *with_object = 0;
    struct swf_reader *rd = swf_registry_read_lock(r);
    struct swf_node *node;
    SWF_REGISTRY_FOREACH(r, node)
    {
        n++;
        *with_object += obj_ok(node);
    }
    swf_registry_read_unlock(rd);
    return n;
}

static void test_bad_input(void)
{
    struct swf_cache *c = make_cache(0);
    struct swf_registry_config cfg;
    struct swf_registry *r = NULL;
    swf_registry_config_init(&cfg);
    ok(swf_registry_create(NULL, &r) == EINVAL, "create(NULL config) is EINVAL");
    ok(swf_registry_create(&cfg, NULL) == EINVAL, "create(NULL out) is EINVAL");
    ok(swf_registry_create(&cfg, &r) == EINVAL, "create without a cache is EINVAL");
    cfg.cache = c;
    ok(swf_registry_create(&cfg, &r) == EINVAL, "create without init is EINVAL");
    cfg.init = init_obj;
    cfg.reserve = 0;
    ok(swf_registry_create(&cfg, &r) == EINVAL, "reserve 0 is EINVAL");
    cfg.reserve = SWF_SWEEP_RESERVE_MAX + 1;
    ok(swf_registry_create(&cfg, &r) == EINVAL, "reserve above the maximum is EINVAL");
    ok(r == NULL, "failed creates leave *out alone");

    struct swf_node n;
    swf_node_init(&n);
    struct swf_registry_stats st;
    ok(swf_registry_add(NULL, &n) == EINVAL, "add(NULL registry) is EINVAL");
    ok(swf_registry_del(NULL, &n, NULL) == EINVAL, "del(NULL registry) is EINVAL");
    ok(swf_registry_activate(NULL, NULL) == EINVAL, "activate(NULL) is EINVAL");
    ok(swf_registry_deactivate(NULL) == EINVAL, "deactivate(NULL) is EINVAL");
    ok(swf_registry_synchronize(NULL) == EINVAL, "synchronize(NULL) is EINVAL");
    ok(swf_registry_stats(NULL, &st) == EINVAL, "stats(NULL) is EINVAL");
    ok(swf_registry_destroy(NULL) == EINVAL, "destroy(NULL) is EINVAL");
    errno = 0;
    ok(swf_registry_read_lock(NULL) == NULL && errno == EINVAL, "read_lock(NULL) is EINVAL");
    swf_registry_read_unlock(NULL);
    ok(swf_registry_first(NULL) == NULL && swf_registry_next(NULL, NULL) == NULL,
       "first(NULL) and next(.., NULL) are NULL");

    r = make_registry(c, 1024);
    ok(swf_registry_add(r, NULL) == EINVAL, "add(NULL node) is EINVAL");
    ok(swf_registry_del(r, NULL, NULL) == EINVAL, "del(NULL node) is EINVAL");
    ok(swf_registry_stats(r, NULL) == EINVAL, "stats(NULL out) is EINVAL");
    ok(swf_registry_destroy(r) == 0 && swf_cache_destroy(c) == 0, "destroy both");
}

static void test_misuse(void)
{
    struct swf_cache *c = make_cache(0);
    struct swf_registry *r = make_registry(c, 1024);
    struct swf_registry *other = make_registry(c, 1024);
    struct item a = {0}, never = {0};
    ok(swf_registry_add(r, &a.node) == 0, "add");
    ok(swf_registry_add(r, &a.node) == EEXIST, "adding it again is EEXIST");
    ok(swf_registry_add(other, &a.node) == EEXIST, "adding it to another registry is EEXIST");
    ok(swf_registry_del(r, &never.node, on_release) == ENOENT, "del of a node never added: ENOENT");
    ok(swf_registry_del(other, &a.node, on_release) == ENOENT,
       "del from a registry it is not in: ENOENT");
    ok(swf_registry_destroy(r) == EBUSY, "destroy with a member linked is EBUSY");
    ok(swf_registry_deactivate(r) == EALREADY, "deactivate while inactive is EALREADY");
    ok(swf_registry_activate(r, NULL) == 0, "activate");
    ok(swf_registry_activate(r, NULL) == EALREADY, "activate again is EALREADY");
    ok(swf_registry_destroy(r) == EBUSY, "destroy while active is EBUSY");
    ok(swf_registry_del(r, &a.node, on_release) == 0, "del");
    ok(swf_registry_del(r, &a.node, on_release) == ENOENT, "del again is ENOENT");
    int again = swf_registry_add(r, &a.node);
    ok(again == EBUSY, "re-adding before its release ran is EBUSY (%d)", again);
    ok(swf_registry_synchronize(r) == 0 && a.released == 1, "synchronize runs the release");
    again = swf_registry_add(r, &a.node);
    ok(again == EBUSY && strstr(swf_error_reason(), "swf_node_init") != NULL,
       "after its release and before swf_node_init, add is EBUSY (%d: %s)", again,
       swf_error_reason());
    swf_node_init(&a.node);
    ok(swf_registry_add(r, &a.node) == 0 && obj_ok(&a.node),
       "after swf_node_init, a released node can be added again (and gets an object: active)");
    ok(swf_registry_del(r, &a.node, on_release) == 0, "del");
    ok(swf_registry_deactivate(r) == 0, "deactivate");
    ok(swf_registry_synchronize(r) == 0 && swf_registry_destroy(r) == 0 &&
           swf_registry_destroy(other) == 0,
       "destroy both once empty and inactive");
    ok(alive(c) == 0 && swf_cache_destroy(c) == 0, "every object went back to the cache");
}

static void test_lifecycle(void)
{
    enum { N = 1000 };
    struct swf_cache *c = make_cache(0);
    struct swf_registry *r = make_registry(c, 100);
    struct item *items = calloc(N + 10, sizeof(*items));
    for (int i = 0; i < N; i++)
        swf_registry_add(r, &items[i].node);
    size_t with;
    ok(walk(r, &with) == N && with == 0, "inactive: %d members, none with an object", N);
    struct swf_sweep_stats st;
    uint64_t inits_before = inits;
    ok(swf_registry_activate(r, &st) == 0, "activate");
    ok(walk(r, &with) == N && with == N && inits - inits_before == N && alive(c) == N,
       "after activate every member has its own initialised object (%zu of %d)", with, N);
    ok(st.passes == 1 && st.visits == N && st.longest_section <= 100 && st.sections >= N / 100,
       "one pass, %llu visits, %llu sections of at most 100 visits", (unsigned long long)st.visits,
       (unsigned long long)st.sections);
    for (int i = N; i < N + 10; i++)
        swf_registry_add(r, &items[i].node);
    ok(walk(r, &with) == N + 10 && with == N + 10, "members added while active get one at once");
    for (int i = 0; i < 10; i++)
        swf_registry_del(r, &items[i].node, on_release);
    swf_registry_synchronize(r);
    int released = 0;
    for (int i = 0; i < 10; i++)
        released += items[i].released == 1 && swf_node_object(&items[i].node) == NULL;
    ok(released == 10 && alive(c) == N, "del: after a grace period, 10 released, objects freed");
    struct swf_registry_stats rs;
    swf_registry_stats(r, &rs);
    ok(rs.members == N && rs.active == 1 && rs.assigned_by_sweep == N && rs.assigned_by_add == 10 &&
           rs.released == 10 && rs.pending_release == 0,
       "stats: %llu members, %llu by the sweep, %llu by add, %llu released",
       (unsigned long long)rs.members, (unsigned long long)rs.assigned_by_sweep,
       (unsigned long long)rs.assigned_by_add, (unsigned long long)rs.released);
    ok(swf_registry_deactivate(r) == 0, "deactivate");
    ok(walk(r, &with) == N && with == 0 && alive(c) == 0,
       "after deactivate: no slot set, every object freed (alive %llu)",
       (unsigned long long)alive(c));
    struct item late = {0};
    swf_registry_add(r, &late.node);
    ok(swf_node_object(&late.node) == NULL, "members added while inactive get nothing");
    swf_registry_del(r, &late.node, NULL);
    ok(swf_registry_activate(r, &st) == 0 && walk(r, &with) == N && with == N,
       "reactivation fills everyone again");
    for (int i = 10; i < N + 10; i++)
        swf_registry_del(r, &items[i].node, on_release);
    ok(swf_registry_deactivate(r) == 0 && swf_registry_synchronize(r) == 0 && alive(c) == 0,
       "delete everyone, deactivate: nothing alive");
    ok(swf_registry_destroy(r) == 0 && swf_cache_destroy(c) == 0, "destroy");
    free(items);
}

static void test_out_of_memory(void)
{
    enum { N = 500, LIMIT = 200 };
    struct swf_cache *c = make_cache(LIMIT);
    struct swf_registry *r = make_registry(c, 64);
    struct item *items = calloc(N + 1, sizeof(*items));
    for (int i = 0; i < N; i++)
        swf_registry_add(r, &items[i].node);
    size_t with;
    ok(swf_registry_activate(r, NULL) == ENOMEM, "activate with the cache limit below N: ENOMEM");
    size_t members = walk(r, &with);
    ok(members == N && with == alive(c) && with <= LIMIT,
       "the %zu objects it did publish are valid and nothing leaked", with);
    ok(swf_registry_add(r, &items[N].node) == ENOMEM && swf_node_object(&items[N].node) == NULL,
       "add while active with no memory: ENOMEM, and the member is not linked");
    ok(walk(r, &with) == N, "still %d members", N);
    swf_cache_set_limit(c, N + 100);
    ok(swf_registry_activate(r, NULL) == 0 && walk(r, &with) == N && with == N,
       "after raising the limit, activate again completes the job");
    ok(swf_registry_deactivate(r) == 0 && alive(c) == 0, "deactivate frees all");
    for (int i = 0; i < N; i++)
        swf_registry_del(r, &items[i].node, NULL);
    ok(swf_registry_destroy(r) == 0 && swf_cache_destroy(c) == 0, "destroy");
    free(items);
}

int main(void)
{
    test_bad_input();
    test_misuse();
    test_lifecycle();
    test_out_of_memory();
    return tap_done();
}
