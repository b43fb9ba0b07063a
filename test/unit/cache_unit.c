/*
 * test/unit/cache_unit.c - every cache function and every error path, single-threaded unless a test
 * needs a second thread to show where freed objects go.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <sweepfill/cache.h>

#include "../common/tap.h"

static struct swf_cache *make(size_t size, size_t align, size_t prefill, size_t limit)
{
    struct swf_cache_config cfg = {
        .object_size = size, .align = align, .prefill = prefill, .limit = limit, .name = "unit"};
    struct swf_cache *c = NULL;
    int err = swf_cache_create(&cfg, &c);
    tap_require(err == 0 && c != NULL, "swf_cache_create");
    return c;
}

static struct swf_cache_stats stats_of(struct swf_cache *c)
{
    struct swf_cache_stats s;
    tap_require(swf_cache_stats(c, &s) == 0, "swf_cache_stats");
    return s;
}

static bool conserved(struct swf_cache *c)
{
    struct swf_cache_stats s = stats_of(c);
    return s.capacity == s.alive + s.ready && s.alive == s.allocs_nowait + s.allocs_wait - s.frees;
}

static void test_create_rejects_bad_config(void)
{
    struct swf_cache *c = (struct swf_cache *)0x1;
    struct swf_cache_config cfg = {.object_size = 64};
    const char *reasons[16], *causes[16];
    size_t n = 0;
#define EXPECT_CREATE_EINVAL(what)                                      \
    do {                                                                \
        ok(swf_cache_create(&cfg, &c) == EINVAL, "%s is EINVAL", what); \
        causes[n] = what;                                               \
        reasons[n++] = swf_error_reason();                              \
    } while (0)
    ok(swf_cache_create(NULL, &c) == EINVAL, "create(NULL config) is EINVAL");
    causes[n] = "NULL config";
    reasons[n++] = swf_error_reason();
    ok(swf_cache_create(&cfg, NULL) == EINVAL, "create(NULL out) is EINVAL");
    causes[n] = "NULL out";
    reasons[n++] = swf_error_reason();
    cfg.object_size = 0;
    EXPECT_CREATE_EINVAL("object size 0");
    cfg.object_size = SIZE_MAX;
    ok(swf_cache_create(&cfg, &c) == EINVAL, "object size SIZE_MAX is EINVAL");
    cfg.object_size = SIZE_MAX - 7;
    ok(swf_cache_create(&cfg, &c) == EINVAL, "object size near SIZE_MAX is EINVAL");
    cfg.object_size = SWF_CACHE_OBJECT_MAX + 1;
    EXPECT_CREATE_EINVAL("object size above SWF_CACHE_OBJECT_MAX");
    cfg.object_size = 64;
    cfg.align = 3;
    EXPECT_CREATE_EINVAL("alignment 3 (not a power of two)");
    cfg.align = 8192;
    EXPECT_CREATE_EINVAL("alignment above a page");
    cfg.align = 0;
    cfg.prefill = 10;
    cfg.limit = 5;
    EXPECT_CREATE_EINVAL("limit below prefill");
#undef EXPECT_CREATE_EINVAL
    tap_distinct_reasons("swf_cache_create", causes, reasons, n);
    ok(c == (struct swf_cache *)0x1, "a failed create leaves *out alone");
}

static void test_alignment_and_stride(void)
{
    static const struct {
        size_t size, align, stride;
    } cases[] = {
        {1, 0, 8},     {8, 0, 8},       {24, 0, 24},       {48, 0, 48},        {64, 0, 64},
        {100, 0, 104}, {4096, 0, 4096}, {100, 4096, 4096}, {4096, 4096, 4096}, {33, 32, 64},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct swf_cache *c = make(cases[i].size, cases[i].align, 0, 0);
        struct swf_cache_stats s = stats_of(c);
        size_t want_align = cases[i].align ? cases[i].align : 8;
        bool aligned = true;
        void *objs[70];
        for (int k = 0; k < 70; k++) {
            objs[k] = swf_cache_alloc(c, SWF_WAIT);
            aligned = aligned && objs[k] && ((uintptr_t)objs[k] % want_align) == 0;
            if (objs[k])
                memset(objs[k], 0xa5, cases[i].size);
        }
        ok(s.stride == cases[i].stride && aligned,
           "size %zu align %zu: stride %llu (want %zu), 70 objects %zu-aligned and writable",
           cases[i].size, cases[i].align, (unsigned long long)s.stride, cases[i].stride,
           want_align);
        for (int k = 0; k < 70; k++)
            swf_cache_free(c, objs[k]);
        ok(swf_cache_destroy(c) == 0, "destroy after freeing everything");
    }
}

static void test_alloc_arguments(void)
{
    errno = 0;
    ok(swf_cache_alloc(NULL, SWF_NOWAIT) == NULL && errno == EINVAL, "alloc(NULL) is EINVAL");
    struct swf_cache *c = make(64, 0, 0, 0);
    errno = 0;
    ok(swf_cache_alloc(c, (enum swf_alloc_mode)0) == NULL && errno == EINVAL,
       "alloc with mode 0 is EINVAL");
    errno = 0;
    ok(swf_cache_alloc(c, (enum swf_alloc_mode)3) == NULL && errno == EINVAL,
       "alloc with mode 3 is EINVAL");
    ok(swf_cache_free(NULL, (void *)&c) == EINVAL, "free(NULL cache) is EINVAL");
    ok(swf_cache_free(c, NULL) == 0, "free(c, NULL) does nothing and returns 0");
    ok(swf_cache_grow(NULL, 1) == EINVAL, "grow(NULL) is EINVAL");
    ok(swf_cache_flush(NULL) == EINVAL, "flush(NULL) is EINVAL");
    ok(swf_cache_set_limit(NULL, 1) == EINVAL, "set_limit(NULL) is EINVAL");
    ok(swf_cache_set_failslab(NULL, NULL) == EINVAL, "set_failslab(NULL) is EINVAL");
    struct swf_failslab bad = {.probability = 101, .interval = 1, .times = -1};
    ok(swf_cache_set_failslab(c, &bad) == EINVAL, "probability 101 is EINVAL");
    bad.probability = 50;
    bad.times = -2;
    ok(swf_cache_set_failslab(c, &bad) == EINVAL, "times -2 is EINVAL");
    struct swf_cache_stats s;
    ok(swf_cache_stats(NULL, &s) == EINVAL, "stats(NULL cache) is EINVAL");
    ok(swf_cache_stats(c, NULL) == EINVAL, "stats(NULL out) is EINVAL");
    ok(swf_cache_destroy(NULL) == EINVAL, "destroy(NULL) is EINVAL");
    ok(swf_cache_quiesce(NULL, NULL) == EINVAL, "quiesce(NULL) is EINVAL");
    ok(swf_cache_free_deferred(c, NULL, NULL, 0) == EINVAL, "free_deferred(NULL record) is EINVAL");
    ok(swf_cache_destroy(c) == 0, "destroy an unused cache");
}

static void test_nowait_needs_prepared_objects(void)
{
    struct swf_cache *c = make(64, 0, 0, 0);
    errno = 0;
    ok(swf_cache_alloc(c, SWF_NOWAIT) == NULL && errno == EAGAIN,
       "NOWAIT on a cache with nothing prepared fails with EAGAIN");
    struct swf_cache_stats s = stats_of(c);
    ok(s.fails_nowait == 1 && s.capacity == 0 && s.bytes_mapped == 0,
       "the failure is counted and nothing was mapped");
    void *o = swf_cache_alloc(c, SWF_WAIT);
    s = stats_of(c);
    ok(o != NULL && s.allocs_wait == 1 && s.alive == 1 && s.capacity > 0 && s.bytes_mapped > 0,
       "WAIT maps memory and returns an object");
    void *n = swf_cache_alloc(c, SWF_NOWAIT);
    ok(n != NULL && n != o, "after WAIT mapped a batch, NOWAIT finds the rest of it");
    swf_cache_free(c, o);
    swf_cache_free(c, n);
    ok(conserved(c), "capacity == alive + ready, alive == allocs - frees");
    ok(swf_cache_destroy(c) == 0, "destroy");
}

static void test_prefill_and_grow(void)
{
    enum { N = 1000 };
    struct swf_cache *c = make(96, 0, N, 0);
    struct swf_cache_stats s = stats_of(c);
    ok(s.capacity >= N && s.ready >= N && s.alive == 0, "prefill %d: capacity %llu, ready %llu", N,
       (unsigned long long)s.capacity, (unsigned long long)s.ready);
    void **objs = calloc(4 * N, sizeof(void *));
    int got = 0;
    for (int i = 0; i < N; i++)
        got += (objs[i] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL;
    ok(got == N, "the first %d NOWAIT allocations after prefill succeed (%d)", N, got);
    for (int i = 0; i < N; i++)
        memset(objs[i], i & 0xff, 96);
    bool distinct = true;
    for (int i = 0; i < N && distinct; i++)
        distinct = ((unsigned char *)objs[i])[0] == (i & 0xff) &&
                   ((unsigned char *)objs[i])[95] == (i & 0xff);
    ok(distinct, "every object is distinct memory (no two overlap)");
    for (int i = 0; i < N; i++)
        swf_cache_free(c, objs[i]);

    uint64_t cap = stats_of(c).capacity;
    ok(swf_cache_grow(c, 500) == 0 && stats_of(c).capacity == cap,
       "grow(500) with >= 500 already ready maps nothing");
    ok(swf_cache_grow(c, cap + 200) == 0 && stats_of(c).capacity >= cap + 200,
       "grow(capacity + 200) maps at least 200 more");
    size_t want = (size_t)cap + 200;
    tap_require(want <= 4 * N, "test array large enough");
    got = 0;
    for (size_t i = 0; i < want; i++)
        got += (objs[i] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL;
    ok((size_t)got == want, "all %zu objects grow promised come from NOWAIT", want);
    ok(stats_of(c).alive == want && conserved(c), "alive counts them; conservation holds");
    ok(swf_cache_destroy(c) == EBUSY, "destroy with objects alive is EBUSY and destroys nothing");
    ok((objs[want] = swf_cache_alloc(c, SWF_WAIT)) != NULL, "the cache still works after EBUSY");
    ok(stats_of(c).alive == want + 1, "and still counts its objects");
    for (size_t i = 0; i <= want; i++)
        swf_cache_free(c, objs[i]);
    ok(stats_of(c).alive == 0 && swf_cache_destroy(c) == 0, "free everything, then destroy");
    free(objs);
}

static void test_limit(void)
{
    struct swf_cache *c = make(64, 0, 0, 100);
    void *objs[200];
    int got = 0;
    for (int i = 0; i < 200; i++) {
        objs[i] = swf_cache_alloc(c, SWF_WAIT);
        if (objs[i] == NULL)
            break;
        got++;
    }
    int err = errno;
    struct swf_cache_stats s = stats_of(c);
    ok(got == 100 && err == ENOMEM, "limit 100: exactly 100 WAIT allocations, then ENOMEM (%d)",
       got);
    ok(s.fails_wait == 1 && s.capacity == 100 && s.limit == 100, "failure counted, capacity 100");
    ok(swf_cache_grow(c, 10) == ENOMEM, "grow past the limit is ENOMEM");
    ok(swf_cache_set_limit(c, 150) == 0, "raise the limit to 150");
    int more = 0;
    for (int i = got; i < 200 && (objs[i] = swf_cache_alloc(c, SWF_WAIT)) != NULL; i++)
        more++;
    ok(more == 50 && stats_of(c).capacity == 150, "50 more after raising it (%d)", more);
    for (int i = 0; i < got + more; i++)
        swf_cache_free(c, objs[i]);
    ok(swf_cache_set_limit(c, 10) == 0 && stats_of(c).capacity == 150,
       "lowering the limit below capacity unmaps nothing");
    void *o = swf_cache_alloc(c, SWF_WAIT);
    ok(o != NULL, "freed objects are reused under a lowered limit");
    swf_cache_free(c, o);
    ok(conserved(c), "conservation");
    ok(swf_cache_destroy(c) == 0, "destroy");
}

struct handoff {
    struct swf_cache *c;
    int n;
    void **objs;
    bool flush;
    bool wait_too; /* an allocation that NOWAIT could not serve tries WAIT */
};

static void *free_in_thread(void *arg)
{
    struct handoff *h = arg;
    for (int i = 0; i < h->n; i++)
        swf_cache_free(h->c, h->objs[i]);
    if (h->flush)
        swf_cache_flush(h->c);
    return NULL;
}

static void *alloc_in_thread(void *arg)
{
    struct handoff *h = arg;
    for (int i = 0; i < h->n; i++)
        if ((h->objs[i] = swf_cache_alloc(h->c, SWF_NOWAIT)) == NULL &&
            (!h->wait_too || (h->objs[i] = swf_cache_alloc(h->c, SWF_WAIT)) == NULL))
            return (void *)(intptr_t)i;
    return (void *)(intptr_t)h->n;
}

static int run_thread(void *(*fn)(void *), struct handoff *h)
{
    pthread_t t;
    void *ret;
    pthread_create(&t, NULL, fn, h);
    pthread_join(t, &ret);
    return (int)(intptr_t)ret;
}

static void test_cross_thread_frees(void)
{
    /* A cache with exactly 10 objects, all taken by this thread. */
    struct swf_cache *c = make(64, 0, 0, 10);
    void *objs[10];
    for (int i = 0; i < 10; i++)
        objs[i] = swf_cache_alloc(c, SWF_WAIT);
    /* Another thread frees them without flushing: they sit in that thread's magazine until it
     * exits, which hands them back (owner.h's exit hook). */
    struct handoff h = {c, 10, objs, false, false};
    run_thread(free_in_thread, &h);
    /* In the per-CPU mode they are in the magazine of the CPU the thread ran on: NOWAIT on
     * another CPU does not reach it, a WAIT allocation at the limit does (it drains every CPU's
     * magazine), and nothing more is mapped. */
    void *again[10] = {0};
    bool percpu = swf_cache_percpu() != 0;
    struct handoff a = {c, 10, again, false, percpu};
    ok(run_thread(alloc_in_thread, &a) == 10 && stats_of(c).capacity == 10,
       "objects freed by a thread that then exits are available to %s elsewhere",
       percpu ? "NOWAIT on that CPU and WAIT anywhere (per-CPU mode)" : "NOWAIT");
    h.objs = again;
    h.flush = true;
    /* Free from a long-lived thread with an explicit flush. */
    run_thread(free_in_thread, &h);
    ok(run_thread(alloc_in_thread, &a) == 10, "and after an explicit flush too");
    for (int i = 0; i < 10; i++)
        swf_cache_free(c, again[i]);
    ok(conserved(c) && stats_of(c).alive == 0, "conservation, nothing alive");
    ok(swf_cache_destroy(c) == 0, "destroy");
}

static void test_many_frees_reach_other_threads(void)
{
    /* More frees than two magazines hold spill to the depot without any flush. */
    enum { N = 10 * SWF_CACHE_MAGAZINE };
    static void *objs[N];
    struct swf_cache *c = make(32, 0, 0, N);
    for (int i = 0; i < N; i++)
        objs[i] = swf_cache_alloc(c, SWF_WAIT);
    ok(swf_cache_alloc(c, SWF_NOWAIT) == NULL, "cache at its limit: NOWAIT fails");
    for (int i = 0; i < N; i++)
        swf_cache_free(c, objs[i]);
    static void *got[N];
    struct handoff a = {c, N - 2 * SWF_CACHE_MAGAZINE, got, false, false};
    ok(run_thread(alloc_in_thread, &a) == N - 2 * SWF_CACHE_MAGAZINE,
       "all but this thread's two magazines' worth reach another thread's NOWAIT");
    for (int i = 0; i < a.n; i++)
        swf_cache_free(c, got[i]);
    ok(conserved(c), "conservation");
    ok(swf_cache_destroy(c) == 0, "destroy");
}

/* A thread's NOWAIT calls before its first blocking call run on a shared state; what it frees
 * there must stay within reach of WAIT, which binds the thread to a state of its own. */
static void *nowait_then_wait(void *arg)
{
    struct handoff *h = arg;
    void *first = swf_cache_alloc(h->c, SWF_NOWAIT); /* no blocking call yet: a shared state */
    if (first == NULL || swf_cache_free(h->c, first) != 0)
        return (void *)(intptr_t)-1;
    for (int i = 0; i < h->n; i++)
        if ((h->objs[i] = swf_cache_alloc(h->c, SWF_WAIT)) == NULL)
            return (void *)(intptr_t)i;
    return (void *)(intptr_t)h->n;
}

static void test_wait_reaches_shared_states(void)
{
    enum { N = 4 * SWF_CACHE_MAGAZINE };
    static void *objs[N];
    struct swf_cache *c = make(64, 0, N, N); /* N objects, all in the depot, and no more */
    struct handoff h = {c, N, objs, false, false};
    int got = run_thread(nowait_then_wait, &h);
    ok(got == N,
       "WAIT at the limit gets every object, those freed on a shared state too (%d of %d)", got, N);
    for (int i = 0; i < got; i++)
        swf_cache_free(c, objs[i]);
    ok(conserved(c) && stats_of(c).alive == 0, "conservation, nothing alive");
    ok(swf_cache_destroy(c) == 0, "destroy");
}

struct reader {
    ck_epoch_record_t *rec;
    int entered;
    int leave;
};

static void *hold_section(void *arg)
{
    struct reader *r = arg;
    ck_epoch_begin(r->rec, NULL);
    __atomic_store_n(&r->entered, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&r->leave, __ATOMIC_ACQUIRE))
        usleep(100);
    ck_epoch_end(r->rec, NULL);
    return NULL;
}

static void test_deferred_free(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t writer, reader_rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &writer, NULL);
    ck_epoch_register(&epoch, &reader_rec, NULL);

    struct swf_cache *c = make(128, 0, 0, 0);
    enum { N = 150 };
    void *objs[N];
    for (int i = 0; i < N; i++)
        objs[i] = swf_cache_alloc(c, SWF_WAIT);

    struct reader r = {&reader_rec, 0, 0};
    pthread_t t;
    pthread_create(&t, NULL, hold_section, &r);
    while (!__atomic_load_n(&r.entered, __ATOMIC_ACQUIRE))
        usleep(100);

    ok(swf_cache_free_deferred(c, &writer, objs, N) == 0, "queue %d deferred frees", N);
    struct swf_cache_stats s = stats_of(c);
    ok(s.deferred_queued == N && s.deferred_pending == N && s.alive == N,
       "queued: pending %llu, still alive %llu", (unsigned long long)s.deferred_pending,
       (unsigned long long)s.alive);
    for (int i = 0; i < 5; i++)
        ck_epoch_poll(&writer);
    s = stats_of(c);
    ok(s.deferred_pending == N, "a reader inside its section holds the grace period back");
    __atomic_store_n(&r.leave, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    ok(swf_cache_quiesce(c, &writer) == 0, "quiesce after the reader left");
    s = stats_of(c);
    ok(s.deferred_pending == 0 && s.alive == 0 && s.frees == N,
       "all %d freed after the grace period", N);
    int got = 0;
    for (int i = 0; i < N; i++)
        got += (objs[i] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL;
    ok(got == N, "deferred-freed objects are ready for NOWAIT again (%d)", got);
    for (int i = 0; i < N; i++)
        swf_cache_free(c, objs[i]);
    ok(swf_cache_free_deferred(c, &writer, NULL, 0) == 0, "an empty batch is fine");
    ok(conserved(c) && swf_cache_destroy(c) == 0, "conservation, destroy");
    ck_epoch_unregister(&writer);
    ck_epoch_unregister(&reader_rec);
}

static void test_system_refuses_memory(void)
{
    if (TAP_SANITIZED) {
        skip("RLIMIT_AS and sanitizer shadow memory do not mix");
        return;
    }
    if (tap_under_qemu()) {
        skip("qemu-user does not apply RLIMIT_AS to the guest; a native build runs this test");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        struct swf_cache *c = make((size_t)1 << 20, 0, 0, 0);
        struct rlimit rl = {(rlim_t)256 << 20, (rlim_t)256 << 20};
        setrlimit(RLIMIT_AS, &rl);
        int n = 0;
        while (n < 10000 && swf_cache_alloc(c, SWF_WAIT) != NULL)
            n++;
        _exit(n < 10000 && errno == ENOMEM ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "WAIT returns NULL with ENOMEM when the system refuses memory (RLIMIT_AS)");
}

int main(void)
{
    test_create_rejects_bad_config();
    test_alignment_and_stride();
    test_alloc_arguments();
    test_nowait_needs_prepared_objects();
    test_prefill_and_grow();
    test_limit();
    test_cross_thread_frees();
    test_many_frees_reach_other_threads();
    test_wait_reaches_shared_states();
    test_deferred_free();
    test_system_refuses_memory();
    return tap_done();
}
