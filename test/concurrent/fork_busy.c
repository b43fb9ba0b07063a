/*
 * test/concurrent/fork_busy.c - fork() while other threads are inside the library: the child can
 * use what it inherited, and the parent goes on unaffected.
 *
 * Threads of the parent keep growing a cache, allocating with WAIT and NOWAIT (bound and on the
 * shared path), freeing, activating and deactivating a registry, adding and deleting members,
 * reading inside sections, waiting for grace periods, starting short-lived threads that bind to
 * a cache and exit (the exit hook pins the cache while it hands back), and, in two threads that
 * only ever make NOWAIT calls, claiming the shared states of a capped cache. Meanwhile the main
 * thread forks again and again. Each child, under an alarm (a hang fails the test), allocates,
 * frees and grows the busy cache, creates and destroys a cache, destroys the idle cache that the
 * short-lived threads bind to (no pin left by a thread that does not exist in the child may hold
 * it up), adds, deletes, activates, deactivates and synchronizes on the busy registry (no reader
 * of the parent's other threads may hold its grace periods up), and allocates with WAIT from the
 * capped cache until ENOMEM (no claim of a thread lost in the fork may hold that up). After the
 * forks, the parent's threads stop and every count must balance.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

enum { MEMBERS = 2000, FORKS = 24, CHILD_SECONDS = 20, CAPPED = 600 };

struct member {
    struct swf_node node;
    int linked; /* owned by the churn thread */
};

static struct swf_cache *busy, *idle, *objs_cache, *capped;
static struct swf_registry *reg;
static struct member members[MEMBERS];
static int stop;

static void init_obj(void *o, void *node, void *arg)
{
    (void)arg;
    *(void **)o = node;
}

static bool running(void)
{
    return !__atomic_load_n(&stop, __ATOMIC_ACQUIRE);
}

static void *grower(void *arg)
{
    (void)arg;
    for (size_t n = 1000; running(); n = n % 50000 + 1000)
        swf_cache_grow(busy, n);
    return NULL;
}

static void *wait_allocator(void *arg)
{
    (void)arg;
    void *held[64];
    while (running()) {
        for (int i = 0; i < 64; i++)
            held[i] = swf_cache_alloc(busy, SWF_WAIT);
        for (int i = 0; i < 64; i++)
            swf_cache_free(busy, held[i]);
    }
    swf_cache_flush(busy);
    return NULL;
}

/* Never a blocking call: the shared depot path. */
static void *nowait_allocator(void *arg)
{
    (void)arg;
    while (running()) {
        void *o = swf_cache_alloc(busy, SWF_NOWAIT);
        swf_cache_free(busy, o);
    }
    return NULL;
}

/* Only NOWAIT calls, ever: the thread never gets magazines of its own and claims one of the
 * cache's shared states for each call, so a fork often finds some claimed. */
static void *shared_path_user(void *arg)
{
    (void)arg;
    while (running()) {
        void *o = swf_cache_alloc(capped, SWF_NOWAIT);
        swf_cache_free(capped, o);
    }
    return NULL;
}

static void *activator(void *arg)
{
    (void)arg;
    while (running()) {
        swf_registry_activate(reg, NULL);
        swf_registry_deactivate(reg);
    }
    return NULL;
}

static void *churner(void *arg)
{
    uint64_t rng = (uintptr_t)arg | 1;
    while (running()) {
        struct member *m = &members[tap_rand(&rng) % MEMBERS];
        if (m->linked) {
            if (swf_registry_del(reg, &m->node, NULL) == 0)
                m->linked = 0;
        } else if (swf_registry_add(reg, &m->node) == 0) {
            m->linked = 1;
        }
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    while (running()) {
        struct swf_reader *rd = swf_registry_read_lock(reg);
        struct swf_node *n;
        int count = 0;
        SWF_REGISTRY_FOREACH(reg, n)
        {
            count += swf_node_object(n) != NULL;
        }
        swf_registry_read_unlock(rd);
        swf_registry_synchronize(reg);
    }
    return NULL;
}

static void *short_lived(void *arg)
{
    (void)arg;
    swf_cache_grow(idle, 0); /* binds; the exit hook hands the binding back under a pin */
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    while (running()) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_lived, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

/* The child's work: each step that fails exits with its number; a hang is killed by alarm. */
static void child(void)
{
    alarm(CHILD_SECONDS);
    void *o[100];
    for (int i = 0; i < 100; i++)
        if ((o[i] = swf_cache_alloc(busy, i % 2 ? SWF_WAIT : SWF_NOWAIT)) == NULL &&
            (o[i] = swf_cache_alloc(busy, SWF_WAIT)) == NULL)
            _exit(10);
    for (int i = 0; i < 100; i++)
        swf_cache_free(busy, o[i]);
    if (swf_cache_grow(busy, 5000) != 0)
        _exit(11);
    struct swf_cache_config cfg = {.object_size = 100, .prefill = 10};
    struct swf_cache *fresh;
    if (swf_cache_create(&cfg, &fresh) != 0 || swf_cache_destroy(fresh) != 0)
        _exit(12);
    if (swf_cache_destroy(idle) != 0)
        _exit(13);
    struct member extra;
    memset(&extra, 0, sizeof(extra));
    if (swf_registry_add(reg, &extra.node) != 0)
        _exit(14);
    if (swf_registry_del(reg, &extra.node, NULL) != 0)
        _exit(15);
    int err = swf_registry_activate(reg, NULL);
    if (err != 0 && err != EALREADY)
        _exit(16);
    if (swf_registry_deactivate(reg) != 0)
        _exit(17);
    if (swf_registry_synchronize(reg) != 0)
        _exit(18);
    struct swf_reader *rd = swf_registry_read_lock(reg);
    if (rd == NULL)
        _exit(19);
    swf_registry_read_unlock(rd);
    /* WAIT at the limit looks into the shared states, waiting out their claimers: never for a
     * claimer that was a thread of the parent. */
    size_t got = 0;
    while (got <= CAPPED && swf_cache_alloc(capped, SWF_WAIT) != NULL)
        got++;
    if (got > CAPPED || errno != ENOMEM)
        _exit(20);
    _exit(0);
}

int main(void)
{
    if (tap_under_valgrind()) {
        skip("fork under valgrind with this many threads is too slow; the plain builds run it");
        return tap_done();
    }
    struct swf_cache_config cfg = {.object_size = 128, .name = "busy"};
    tap_require(swf_cache_create(&cfg, &busy) == 0, "busy cache");
    cfg.name = "idle";
    tap_require(swf_cache_create(&cfg, &idle) == 0, "idle cache");
    struct swf_cache_config capped_cfg = {
        .object_size = 64, .prefill = CAPPED, .limit = CAPPED, .name = "capped"};
    tap_require(swf_cache_create(&capped_cfg, &capped) == 0, "capped cache");
    cfg.name = "objects";
    cfg.object_size = 64;
    tap_require(swf_cache_create(&cfg, &objs_cache) == 0, "objects cache");
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = objs_cache;
    rc.init = init_obj;
    rc.section_bound = 64;
    tap_require(swf_registry_create(&rc, &reg) == 0, "registry");

    void *(*fns[])(void *) = {grower, wait_allocator, nowait_allocator, activator,       churner,
                              reader, spawner,        shared_path_user, shared_path_user};
    enum { THREADS = sizeof(fns) / sizeof(fns[0]) };
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, fns[i], (void *)(uintptr_t)(i + 1));

    int clean = 0, hung = 0, failed_step = 0;
    for (int f = 0; f < FORKS; f++) {
        usleep(20000 + 5000 * (f % 7));
        pid_t pid = fork();
        if (pid == 0)
            child();
        int status;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            clean++;
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            hung++;
        else if (failed_step == 0)
            failed_step = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    }
    ok(hung == 0, "no child hung (%d of %d killed after %d s)", hung, FORKS, CHILD_SECONDS);
    ok(clean == FORKS, "%d of %d children did everything (first failure: step %d)", clean, FORKS,
       failed_step);

    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < MEMBERS; i++)
        if (members[i].linked)
            swf_registry_del(reg, &members[i].node, NULL);
    swf_registry_deactivate(reg); /* 0, or EALREADY when the activator left it off */
    ok(swf_registry_synchronize(reg) == 0 && swf_registry_destroy(reg) == 0,
       "the parent's registry: every member deleted, destroyed");
    struct swf_cache_stats sb, so;
    swf_cache_stats(busy, &sb);
    swf_cache_stats(objs_cache, &so);
    ok(sb.alive == 0 && so.alive == 0 && sb.capacity == sb.ready,
       "the parent's caches balance: alive %llu and %llu, capacity %llu == ready %llu",
       (unsigned long long)sb.alive, (unsigned long long)so.alive, (unsigned long long)sb.capacity,
       (unsigned long long)sb.ready);
    ok(swf_cache_destroy(busy) == 0 && swf_cache_destroy(objs_cache) == 0 &&
           swf_cache_destroy(idle) == 0 && swf_cache_destroy(capped) == 0,
       "the parent destroys its caches");
    return tap_done();
}
