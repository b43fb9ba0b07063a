/*
 * test/unit/registry_stall.c - no add or del of a registry waits for memory behind its writer
 * mutex.
 *
 * The static library is linked with -Wl,--wrap=mmap (and mmap64), and the wrapper can hold one
 * mapping (the next one made while armed) until the test lets it go: a grow whose mapping is held
 * keeps the cache's refill mutex, as a slow grow of 1M x 4 KiB does for seconds.
 *   1. activate's own grow is held: an add and a del made meanwhile complete (the flag goes up
 *      after the grow, so the add allocates nothing), and once the grow is let go the
 *      activation fills every member, the new one included.
 *   2. the registry is active, NOWAIT always fails (failslab), and another thread's grow is
 *      held: an add that must allocate with WAIT waits for that grow, but a del made meanwhile
 *      completes (the add waits outside the writer mutex); once the grow is let go the add links
 *      its member with an object.
 * Before the fix (flag, then grow; WAIT under the writer mutex) both the add of 1 and the del of
 * 2 waited for the held grow. "Completes" means within 10 s while the grow is held.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_armed, gate_holding, gate_open;

/* Hold the calling thread here if armed (the first caller disarms). */
static void gate_pass(void)
{
    pthread_mutex_lock(&gate_lock);
    if (gate_armed) {
        gate_armed = 0;
        gate_holding = 1;
        pthread_cond_broadcast(&gate_cond);
        while (!gate_open)
            pthread_cond_wait(&gate_cond, &gate_lock);
        gate_holding = 0;
    }
    pthread_mutex_unlock(&gate_lock);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    gate_pass();
    return __real_mmap(addr, len, prot, flags, fd, off);
}

/* The library's objects are mapped with mmap64 where off_t is 64 bits wide by request. */
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    gate_pass();
    return __real_mmap64(addr, len, prot, flags, fd, off);
}

static void gate_arm(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_armed = 1;
    gate_open = 0;
    pthread_mutex_unlock(&gate_lock);
}

/* Wait until a mapping is held; false after 10 s. */
static bool gate_wait_holding(void)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    pthread_mutex_lock(&gate_lock);
    int rc = 0;
    while (!gate_holding && rc == 0)
        rc = pthread_cond_timedwait(&gate_cond, &gate_lock, &dl);
    bool held = gate_holding;
    pthread_mutex_unlock(&gate_lock);
    return held;
}

static void gate_release(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_armed = 0;
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

enum { MEMBERS = 64 };
static struct swf_node nodes[MEMBERS + 2];
static struct swf_cache *cache;
static struct swf_registry *reg;

static void init_obj(void *o, void *node, void *arg)
{
    (void)arg;
    *(void **)o = node;
}

/* A registry call on its own thread, with a completion flag to wait on. */
enum op { OP_ADD, OP_DEL, OP_ACTIVATE, OP_GROW };
struct call {
    enum op op;
    struct swf_node *n;
    int err;
    int done;
    pthread_t t;
};

static void *call_run(void *arg)
{
    struct call *c = arg;
    switch (c->op) {
    case OP_ADD:
        c->err = swf_registry_add(reg, c->n);
        break;
    case OP_DEL:
        c->err = swf_registry_del(reg, c->n, NULL);
        break;
    case OP_ACTIVATE:
        c->err = swf_registry_activate(reg, NULL);
        break;
    case OP_GROW:
        c->err = swf_cache_grow(cache, 1u << 16);
        break;
    }
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void call_start(struct call *c, enum op op, struct swf_node *n)
{
    c->op = op;
    c->n = n;
    c->err = -1;
    c->done = 0;
    pthread_create(&c->t, NULL, call_run, c);
}

/* Whether c completed within 10 s. */
static bool call_completes(struct call *c)
{
    for (int i = 0; i < 10000 && !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
}

static int published(int upto)
{
    int n = 0;
    for (int i = 0; i < upto; i++)
        n += swf_node_object(&nodes[i]) != NULL;
    return n;
}

static void activation_grow_held(void)
{
    gate_arm();
    struct call act, add, del;
    call_start(&act, OP_ACTIVATE, NULL);
    tap_require(gate_wait_holding(), "activate's grow maps memory");
    call_start(&add, OP_ADD, &nodes[MEMBERS]);
    bool done = call_completes(&add);
    ok(done && add.err == 0, "an add while activate's grow is held completes (err %d)",
       done ? add.err : -1);
    call_start(&del, OP_DEL, &nodes[0]);
    done = call_completes(&del);
    ok(done && del.err == 0, "a del while activate's grow is held completes (err %d)",
       done ? del.err : -1);
    gate_release();
    pthread_join(act.t, NULL);
    pthread_join(add.t, NULL);
    pthread_join(del.t, NULL);
    ok(act.err == 0, "activate returns 0");
    int n = published(MEMBERS + 1) - (swf_node_object(&nodes[0]) != NULL);
    ok(n == MEMBERS && swf_node_object(&nodes[MEMBERS]) != NULL,
       "every linked member has an object, the one added during the grow too (%d of %d)", n,
       MEMBERS);
}

static void wait_allocation_held(void)
{
    struct swf_failslab fs = {.probability = 100, .interval = 1, .times = -1, .seed = 1};
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "failslab");
    struct swf_cache_stats before, now;
    swf_cache_stats(cache, &before);
    gate_arm();
    struct call grow, add, del;
    call_start(&grow, OP_GROW, NULL);
    tap_require(gate_wait_holding(), "the grow maps memory");
    call_start(&add, OP_ADD, &nodes[MEMBERS + 1]);
    /* The add's NOWAIT fails first; give it time to reach its WAIT allocation. */
    do {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        swf_cache_stats(cache, &now);
    } while (now.fails_injected == before.fails_injected);
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
    ok(!__atomic_load_n(&add.done, __ATOMIC_ACQUIRE),
       "the add that needs a WAIT allocation waits for the held grow");
    call_start(&del, OP_DEL, &nodes[1]);
    bool done = call_completes(&del);
    ok(done && del.err == 0,
       "a del meanwhile completes: the add does not wait behind the writer mutex (err %d)",
       done ? del.err : -1);
    gate_release();
    pthread_join(grow.t, NULL);
    pthread_join(add.t, NULL);
    pthread_join(del.t, NULL);
    tap_require(swf_cache_set_failslab(cache, NULL) == 0, "failslab off");
    ok(add.err == 0 && swf_node_object(&nodes[MEMBERS + 1]) != NULL,
       "the add links its member with an object (err %d)", add.err);
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "stall"};
    tap_require(swf_cache_create(&cfg, &cache) == 0, "cache");
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = cache;
    rc.init = init_obj;
    tap_require(swf_registry_create(&rc, &reg) == 0, "registry");
    for (int i = 0; i < MEMBERS; i++)
        tap_require(swf_registry_add(reg, &nodes[i]) == 0, "add");

    activation_grow_held();
    wait_allocation_held();

    ok(swf_registry_deactivate(reg) == 0 && published(MEMBERS + 2) == 0,
       "deactivate takes every object back");
    for (int i = 2; i < MEMBERS + 2; i++)
        swf_registry_del(reg, &nodes[i], NULL);
    ok(swf_registry_destroy(reg) == 0, "destroy");
    ok(swf_cache_destroy(cache) == 0, "every object came back to the cache");
    return tap_done();
}
