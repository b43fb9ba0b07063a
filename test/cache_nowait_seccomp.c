/*
 * test/cache_nowait_seccomp.c - NOWAIT makes no system call: proven, not assumed.
 *
 * A fresh thread (one that has never touched the cache, so its first NOWAIT call also binds its
 * per-thread state) switches itself into seccomp strict mode, in which any system call other than
 * read, write, _exit and sigreturn kills the process with SIGKILL. It then allocates, frees,
 * exhausts, flushes and defers through the lock-free paths, writes its counts to a pipe and ends
 * with a raw exit system call. The parent process checks that the child was not killed and that
 * every count is what the work implies.
 */
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

#include "tap.h"

enum { N = 3000, INJECT_CALLS = 1000 };

struct result {
    int strict;         /* prctl succeeded */
    int first_pass;     /* NOWAIT successes in the first pass */
    int second_pass;    /* after freeing everything */
    int extra;          /* successes beyond N (a bound on the cache's slack) */
    int eagain;         /* the final failure set errno to EAGAIN */
    int deferred_ok;    /* swf_cache_free_deferred returned 0 */
    int injected_fails; /* NOWAIT failures on the injected cache */
};

struct work {
    struct swf_cache *c;
    struct swf_cache *injected;
    ck_epoch_record_t *rec;
    int fd;
    void **objs;
};

static void *strict_thread(void *arg)
{
    struct work *w = arg;
    struct result r = {0};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) {
        write(w->fd, &r, sizeof(r));
        return NULL;
    }
    r.strict = 1;
    for (int i = 0; i < N; i++)
        r.first_pass += (w->objs[i] = swf_cache_alloc(w->c, SWF_NOWAIT)) != NULL;
    for (int i = 0; i < N; i++)
        swf_cache_free(w->c, w->objs[i]);
    for (int i = 0; i < N; i++)
        r.second_pass += (w->objs[i] = swf_cache_alloc(w->c, SWF_NOWAIT)) != NULL;
    void *o;
    while ((o = swf_cache_alloc(w->c, SWF_NOWAIT)) != NULL && r.extra < N)
        w->objs[N + r.extra++] = o;
    r.eagain = o == NULL && errno == EAGAIN;
    for (int i = 0; i < N + r.extra; i++)
        swf_cache_free(w->c, w->objs[i]);
    swf_cache_flush(w->c);

    void *batch[100];
    for (int i = 0; i < 100; i++)
        batch[i] = swf_cache_alloc(w->c, SWF_NOWAIT);
    r.deferred_ok = swf_cache_free_deferred(w->c, w->rec, batch, 100) == 0;

    for (int i = 0; i < INJECT_CALLS; i++) {
        o = swf_cache_alloc(w->injected, SWF_NOWAIT);
        r.injected_fails += o == NULL;
        swf_cache_free(w->injected, o);
    }
    write(w->fd, &r, sizeof(r));
    /* exit_group and the thread teardown's madvise are not allowed: end this thread directly. */
    syscall(SYS_exit, 0);
    return NULL;
}

static void child(int fd)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_cache_config cfg = {.object_size = 128, .name = "strict"};
    struct work w = {.fd = fd, .rec = &rec};
    w.objs = calloc(2 * N, sizeof(void *));
    swf_cache_create(&cfg, &w.c);
    swf_cache_grow(w.c, N);
    cfg.name = "injected";
    cfg.prefill = 256;
    swf_cache_create(&cfg, &w.injected);
    struct swf_failslab fs = {.probability = 50, .interval = 1, .times = -1, .seed = 7};
    swf_cache_set_failslab(w.injected, &fs);
    pthread_t t;
    pthread_create(&t, NULL, strict_thread, &w);
    pthread_join(t, NULL);
    _exit(0);
}

int main(void)
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
    int fds[2];
    tap_require(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(fds[1]);
    }
    close(fds[1]);
    struct result r;
    ssize_t got = read(fds[0], &r, sizeof(r));
    int status;
    waitpid(pid, &status, 0);
    bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (got == (ssize_t)sizeof(r) && !r.strict) {
        skip("seccomp strict mode is not available here");
        return tap_done();
    }
    ok(!killed && WIFEXITED(status) && got == (ssize_t)sizeof(r),
       "the strict-mode thread made no forbidden system call (not SIGKILLed)");
    if (got != (ssize_t)sizeof(r))
        return tap_done();
    ok(r.first_pass == N, "first NOWAIT of a fresh thread binds it; %d of %d succeed", r.first_pass,
       N);
    ok(r.second_pass == N, "after freeing them, %d of %d succeed again", r.second_pass, N);
    ok(r.extra < N && r.eagain, "exhausting the cache ends in EAGAIN (after %d more)", r.extra);
    ok(r.deferred_ok, "swf_cache_free_deferred queues lock-free with spare magazines");
    ok(r.injected_fails > INJECT_CALLS / 4 && r.injected_fails < 3 * INJECT_CALLS / 4,
       "injected failures at 50%% (%d of %d) make no system call either", r.injected_fails,
       INJECT_CALLS);
    return tap_done();
}
