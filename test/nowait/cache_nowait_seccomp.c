/*
 * test/nowait/cache_nowait_seccomp.c - NOWAIT makes no system call: proven, not assumed.
 *
 * A thread switches itself into seccomp strict mode, in which any system call other than read,
 * write, _exit and sigreturn kills the process with SIGKILL. It then allocates, frees, exhausts,
 * flushes and defers through the lock-free paths, writes its counts to a pipe and ends with a raw
 * exit system call. The parent process checks that the child was not killed and that every count
 * is what the work implies. Two threads run it: a fresh one (never a blocking call: the shared
 * depot path) and a prepared one (it grew the cache first: its own magazines, and a lock-free
 * binding to a second cache under seccomp).
 *
 * Built twice. Linked normally (cache_nowait_seccomp), and as cache_nowait_late_dlopen: the
 * program first creates 40 pthread keys of its own, then dlopens libsweepfill.so (the path is its
 * first argument), so the library's thread-exit key lies beyond glibc's 32 in-place keys, whose
 * first pthread_setspecific in a thread allocates: NOWAIT must stay free of system calls there
 * too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <sweepfill/cache.h>

#include "../common/tap.h"

#ifdef LATE_DLOPEN
/* The API through dlsym: the library is not linked in, only loaded late. */
#define API(name) static __typeof__(name) *p_##name;
/* One name a line: clang-format 14 never settles on a layout for this list. */
// clang-format off
#define API_LIST(X)                                                                                \
    X(swf_cache_create)                                                                            \
    X(swf_cache_grow)                                                                              \
    X(swf_cache_alloc)                                                                             \
    X(swf_cache_free)                                                                              \
    X(swf_cache_flush)                                                                             \
    X(swf_cache_free_deferred)                                                                     \
    X(swf_cache_set_failslab)                                                                      \
    X(swf_cache_stats)                                                                             \
    X(swf_cache_alloc_bulk)                                                                        \
    X(swf_cache_free_bulk)
// clang-format on
API_LIST(API)
#define swf_cache_create        p_swf_cache_create
#define swf_cache_grow          p_swf_cache_grow
#define swf_cache_alloc         p_swf_cache_alloc
#define swf_cache_free          p_swf_cache_free
#define swf_cache_flush         p_swf_cache_flush
#define swf_cache_free_deferred p_swf_cache_free_deferred
#define swf_cache_set_failslab  p_swf_cache_set_failslab
#define swf_cache_stats         p_swf_cache_stats
#define swf_cache_alloc_bulk    p_swf_cache_alloc_bulk
#define swf_cache_free_bulk     p_swf_cache_free_bulk
#endif

enum { N = 3000, INJECT_CALLS = 1000, OWN_KEYS = 40 };

struct result {
    int strict;         /* prctl succeeded */
    int first_pass;     /* NOWAIT successes in the first pass */
    int second_pass;    /* after freeing everything */
    int extra;          /* successes beyond N (a bound on the cache's slack) */
    int eagain;         /* the final failure set errno to EAGAIN */
    int deferred_ok;    /* swf_cache_free_deferred returned 0 */
    int injected_fails; /* NOWAIT failures on the injected cache */
    int other_ok;       /* NOWAIT on a second cache (a lock-free binding when prepared) */
    int bulk_ok;        /* objects from swf_cache_alloc_bulk, given back with free_bulk */
    int inline_ok;      /* objects from swf_cache_alloc_fast (linked build only) */
};

struct work {
    struct swf_cache *c;
    struct swf_cache *injected;
    struct swf_cache *other;
    ck_epoch_record_t *rec;
    int fd;
    int prepare; /* make a blocking call before seccomp */
    void **objs;
};

static void nowait_work(struct work *w, struct result *r)
{
    for (int i = 0; i < N; i++)
        r->first_pass += (w->objs[i] = swf_cache_alloc(w->c, SWF_NOWAIT)) != NULL;
    for (int i = 0; i < N; i++)
        swf_cache_free(w->c, w->objs[i]);
    for (int i = 0; i < N; i++)
        r->second_pass += (w->objs[i] = swf_cache_alloc(w->c, SWF_NOWAIT)) != NULL;
    void *o;
    while ((o = swf_cache_alloc(w->c, SWF_NOWAIT)) != NULL && r->extra < N)
        w->objs[N + r->extra++] = o;
    r->eagain = o == NULL && errno == EAGAIN;
    for (int i = 0; i < N + r->extra; i++)
        swf_cache_free(w->c, w->objs[i]);
    swf_cache_flush(w->c);
    for (int round = 0; round < 3; round++) {
        memset(w->objs, 0, N * sizeof(void *));
        r->bulk_ok += (int)swf_cache_alloc_bulk(w->c, SWF_NOWAIT, w->objs, N);
        swf_cache_free_bulk(w->c, w->objs, N);
    }
#ifndef LATE_DLOPEN
    for (int i = 0; i < N; i++)
        r->inline_ok += (w->objs[i] = swf_cache_alloc_fast(w->c)) != NULL;
    for (int i = 0; i < N; i++)
        swf_cache_free_fast(w->c, w->objs[i]);
#else
    r->inline_ok = N; /* the inline path needs the library linked: the linked build runs it */
#endif

    void *batch[100];
    for (int i = 0; i < 100; i++)
        batch[i] = swf_cache_alloc(w->c, SWF_NOWAIT);
    r->deferred_ok = swf_cache_free_deferred(w->c, w->rec, batch, 100) == 0;

    for (int i = 0; i < INJECT_CALLS; i++) {
        o = swf_cache_alloc(w->injected, SWF_NOWAIT);
        r->injected_fails += o == NULL;
        swf_cache_free(w->injected, o);
    }
    for (int i = 0; i < 200; i++) {
        o = swf_cache_alloc(w->other, SWF_NOWAIT);
        r->other_ok += o != NULL;
        swf_cache_free(w->other, o);
    }
}

static void *strict_thread(void *arg)
{
    struct work *w = arg;
    struct result r = {0};
    if (w->prepare)
        swf_cache_grow(w->c, 0); /* blocking: arms the exit hook, gives this thread magazines */
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) {
        write(w->fd, &r, sizeof(r));
        return NULL;
    }
    r.strict = 1;
    nowait_work(w, &r);
    write(w->fd, &r, sizeof(r));
    /* exit_group and the thread teardown's madvise are not allowed: end this thread directly. */
    syscall(SYS_exit, 0);
    return NULL;
}

static int load_library(const char *path)
{
#ifdef LATE_DLOPEN
    static pthread_key_t own[OWN_KEYS];
    for (int i = 0; i < OWN_KEYS; i++)
        if (pthread_key_create(&own[i], NULL) != 0)
            return -1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return -1;
#define RESOLVE(name) p_##name = (__typeof__(p_##name))dlsym(h, #name);
    API_LIST(RESOLVE)
    return p_swf_cache_create && p_swf_cache_stats ? 0 : -1;
#else
    (void)path;
    return 0;
#endif
}

static void child(int fd, int prepare, const char *path)
{
    if (load_library(path) != 0)
        _exit(3);
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_cache_config cfg = {.object_size = 128, .name = "strict"};
    struct work w = {.fd = fd, .rec = &rec, .prepare = prepare};
    w.objs = calloc(2 * N, sizeof(void *));
    swf_cache_create(&cfg, &w.c);
    swf_cache_grow(w.c, N);
    cfg.name = "other";
    cfg.prefill = 256;
    swf_cache_create(&cfg, &w.other);
    cfg.name = "injected";
    swf_cache_create(&cfg, &w.injected);
    struct swf_failslab fs = {.probability = 50, .interval = 1, .times = -1, .seed = 7};
    swf_cache_set_failslab(w.injected, &fs);
    pthread_t t;
    pthread_create(&t, NULL, strict_thread, &w);
    pthread_join(t, NULL);
    _exit(0);
}

static void run(int prepare, const char *path)
{
    const char *who = prepare ? "a prepared thread" : "a fresh thread";
    int fds[2];
    tap_require(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], prepare, path);
    }
    close(fds[1]);
    struct result r;
    ssize_t got = read(fds[0], &r, sizeof(r));
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        ok(false, "%s: the library could not be loaded from %s", who, path);
        return;
    }
    bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (got == (ssize_t)sizeof(r) && !r.strict) {
        skip("seccomp strict mode is not available here");
        return;
    }
    ok(!killed && WIFEXITED(status) && got == (ssize_t)sizeof(r),
       "%s in strict mode made no forbidden system call (not SIGKILLed)", who);
    if (got != (ssize_t)sizeof(r))
        return;
    ok(r.first_pass == N, "%s: %d of %d NOWAIT allocations succeed", who, r.first_pass, N);
    ok(r.second_pass == N, "%s: after freeing them, %d of %d succeed again", who, r.second_pass, N);
    ok(r.extra < N && r.eagain, "%s: exhausting the cache ends in EAGAIN (after %d more)", who,
       r.extra);
    ok(r.deferred_ok, "%s: swf_cache_free_deferred queues lock-free with spare magazines", who);
    ok(r.injected_fails > INJECT_CALLS / 4 && r.injected_fails < 3 * INJECT_CALLS / 4,
       "%s: injected failures at 50%% (%d of %d) make no system call either", who, r.injected_fails,
       INJECT_CALLS);
    ok(r.other_ok == 200, "%s: NOWAIT on a second cache (%d of 200)", who, r.other_ok);
    ok(r.bulk_ok == 3 * N, "%s: NOWAIT bulk allocations and frees (%d of %d)", who, r.bulk_ok,
       3 * N);
    ok(r.inline_ok == N, "%s: the inline NOWAIT path (%d of %d)", who, r.inline_ok, N);
}

int main(int argc, char **argv)
{
    if (TAP_SANITIZED) {
        skip("sanitizer runtimes make their own system calls; the plain build runs this test");
        return tap_done();
    }
    if (tap_under_valgrind()) {
        skip("valgrind makes its own system calls; the plain build runs this test");
        return tap_done();
    }
    if (tap_under_qemu()) {
        skip("qemu-user makes its own system calls; a native build runs this test");
        return tap_done();
    }
    const char *path = argc > 1 ? argv[1] : "";
#ifdef LATE_DLOPEN
    tap_require(argc > 1, "usage: cache_nowait_late_dlopen PATH-OF-libsweepfill.so");
    diag("%d keys created before dlopen(\"%s\")", OWN_KEYS, path);
#endif
    run(0, path);
    run(1, path);
    return tap_done();
}
