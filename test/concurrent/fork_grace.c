/*
 * test/concurrent/fork_grace.c - fork() while another thread waits for a grace period.
 *
 * Sleeper: a thread sleeps in swf_cache_quiesce (which takes no lock, so the fork does not wait
 * for it) on a user epoch that a reader holds in a section. Each child enters seccomp strict
 * mode and runs 1,000 swf_registry_read_lock/unlock pairs and 1,000 epoch-guard sections: a
 * section end makes a system call only while a grace-period waiter sleeps, and none sleeps in the
 * child (the sleeper is a thread of the parent), so a child that inherited the sleeper's count
 * would be killed at its first section end.
 *
 * Deadlock: reader R is inside a section of registry r1; D calls swf_registry_synchronize(r1),
 * which holds r1's reclaim mutex while it waits for R; the main thread forks; then R, still in its
 * section, makes its first read of registry r0 (a new reader record: r0's records mutex) or
 * creates a cache (the owner table's mutex). The fork must take the locks held across grace
 * periods before those, or nothing proceeds. Both variants, 100 times each, under an alarm: a
 * hang fails the test.
 *
 * Churn: 50 forks while two threads create, read, synchronize and destroy registries, so that
 * registries appear while a fork is between taking the grace-period locks and the owner table,
 * and disappear while it holds them; each child makes and destroys a registry of its own.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <sweepfill/registry.h>

#include "../common/tap.h"

enum { PAIRS = 1000, SLEEPER_FORKS = 20, ROUNDS = 100, ROUND_SECONDS = 20 };

static void init_obj(void *o, void *node, void *arg)
{
    (void)arg;
    *(void **)o = node;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static struct swf_cache *cache;

static struct swf_registry *make_registry(void)
{
    struct swf_registry_config cfg;
    swf_registry_config_init(&cfg);
    cfg.cache = cache;
    cfg.init = init_obj;
    struct swf_registry *r = NULL;
    if (swf_registry_create(&cfg, &r) != 0)
        abort();
    return r;
}

static int flag_get(int *f)
{
    return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static void flag_set(int *f)
{
    __atomic_store_n(f, 1, __ATOMIC_RELEASE);
}

static void flag_wait(int *f)
{
    while (!flag_get(f))
        pause_ms(1);
}

/* ---- a sleeping grace-period waiter --------------------------------------------------------- */

static ck_epoch_t user_epoch;
static ck_epoch_record_t reader_rec, waiter_rec;
static int in_section, quiesced, leave;

static void *user_reader(void *arg)
{
    (void)arg;
    ck_epoch_begin(&reader_rec, NULL);
    flag_set(&in_section);
    flag_wait(&leave);
    ck_epoch_end(&reader_rec, NULL);
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    swf_cache_quiesce(cache, &waiter_rec);
    flag_set(&quiesced);
    return NULL;
}

static void noop_enter_leave(struct swf_guard *g)
{
    g->enter(g->arg);
    g->leave(g->arg);
}

/* The child: reads in seccomp strict mode, reports on fd, ends without exit_group. */
static void strict_child(int fd, struct swf_registry *r, ck_epoch_record_t *rec)
{
    struct swf_guard g;
    swf_guard_epoch(&g, rec);
    char strict = prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) == 0 ? 's' : 'n';
    for (int i = 0; i < PAIRS; i++) {
        struct swf_reader *rd = swf_registry_read_lock(r);
        swf_registry_read_unlock(rd);
    }
    for (int i = 0; i < PAIRS; i++)
        noop_enter_leave(&g);
    if (write(fd, &strict, 1) != 1)
        strict = 'x';
    syscall(SYS_exit, 0); /* exit_group is not allowed in strict mode */
}

static void test_sleeper(void)
{
    struct swf_registry *r = make_registry();
    ck_epoch_init(&user_epoch);
    ck_epoch_register(&user_epoch, &reader_rec, NULL);
    ck_epoch_register(&user_epoch, &waiter_rec, NULL);
    ck_epoch_record_t child_rec;
    ck_epoch_register(&user_epoch, &child_rec, NULL);
    /* This thread's reader and guard record exist before the forks: the child only reads. */
    swf_registry_read_unlock(swf_registry_read_lock(r));

    pthread_t rt, st;
    pthread_create(&rt, NULL, user_reader, NULL);
    flag_wait(&in_section);
    pthread_create(&st, NULL, sleeper, NULL);
    pause_ms(50); /* past the spinning scans: asleep, but for the wakes of its timeouts */

    int killed = 0, clean = 0, unavailable = 0;
    for (int i = 0; i < SLEEPER_FORKS; i++) {
        int fds[2];
        if (pipe(fds) != 0)
            abort();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            strict_child(fds[1], r, &child_rec);
        }
        close(fds[1]);
        char c = 0;
        ssize_t got = read(fds[0], &c, 1);
        close(fds[0]);
        int status;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
            killed++;
        else if (got == 1 && c == 'n')
            unavailable++;
        else if (got == 1 && c == 's' && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            clean++;
        pause_ms(3);
    }
    ok(!flag_get(&quiesced), "the quiesce was still waiting after the forks (the reader held it)");
    flag_set(&leave);
    pthread_join(rt, NULL);
    pthread_join(st, NULL);
    if (unavailable == SLEEPER_FORKS) {
        skip("seccomp strict mode is not available here");
    } else {
        ok(killed == 0 && clean + unavailable == SLEEPER_FORKS,
           "%d children forked while a thread slept in a grace-period wait: %d read pairs and %d "
           "guard sections each in seccomp strict mode, %d killed",
           SLEEPER_FORKS, PAIRS, PAIRS, killed);
    }
    ok(swf_registry_destroy(r) == 0, "registry destroyed");
}

/* ---- fork against a grace-period wait ------------------------------------------------------- */

struct round {
    struct swf_registry *r0, *r1;
    int variant; /* 0: first read of r0 inside the section; 1: swf_cache_create inside it */
    int in_section, synchronizing, forking;
    int inner_ok;
};

static void *reader(void *arg)
{
    struct round *rd = arg;
    struct swf_reader *s1 = swf_registry_read_lock(rd->r1);
    flag_set(&rd->in_section);
    flag_wait(&rd->forking);
    pause_ms(5); /* let the fork handlers run into the grace-period wait */
    if (rd->variant == 0) {
        struct swf_reader *s0 = swf_registry_read_lock(rd->r0);
        rd->inner_ok = s0 != NULL;
        swf_registry_read_unlock(s0);
    } else {
        struct swf_cache_config cfg = {.object_size = 32};
        struct swf_cache *c = NULL;
        rd->inner_ok = swf_cache_create(&cfg, &c) == 0 && swf_cache_destroy(c) == 0;
    }
    swf_registry_read_unlock(s1);
    return NULL;
}

static void *synchronizer(void *arg)
{
    struct round *rd = arg;
    flag_wait(&rd->in_section);
    flag_set(&rd->synchronizing);
    swf_registry_synchronize(rd->r1);
    return NULL;
}

static int round_variant, round_index;

static void on_alarm(int sig)
{
    (void)sig;
    char msg[160];
    int n = snprintf(msg, sizeof(msg),
                     "not ok - fork against a grace-period wait, variant %d, round %d: no progress "
                     "in %d s\n",
                     round_variant, round_index, ROUND_SECONDS);
    (void)!write(1, msg, (size_t)n);
    _exit(1);
}

/* One round; true when the child ran and the reader's inner call succeeded. */
static bool fork_round(int variant)
{
    struct round rd = {0};
    rd.variant = variant;
    rd.r0 = make_registry(); /* a fresh r0: no recycled record, so the first read registers */
    rd.r1 = make_registry();
    pthread_t rt, dt;
    pthread_create(&rt, NULL, reader, &rd);
    pthread_create(&dt, NULL, synchronizer, &rd);
    flag_wait(&rd.synchronizing);
    pause_ms(2); /* D is now waiting for R under r1's reclaim mutex */
    flag_set(&rd.forking);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child's one thread: the reader of the parent left no section behind. The exit
         * bypasses _exit, where ThreadSanitizer would report the parent's threads as leaked. */
        bool done = swf_registry_synchronize(rd.r1) == 0 && swf_registry_synchronize(rd.r0) == 0;
        syscall(SYS_exit_group, done ? 0 : 1);
    }
    int status = -1;
    if (pid > 0)
        waitpid(pid, &status, 0);
    pthread_join(rt, NULL);
    pthread_join(dt, NULL);
    bool good = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && rd.inner_ok;
    if (swf_registry_destroy(rd.r1) != 0 || swf_registry_destroy(rd.r0) != 0)
        good = false;
    return good;
}

static void test_deadlock(int variant, const char *what)
{
    int good = 0;
    round_variant = variant;
    for (int i = 0; i < ROUNDS; i++) {
        round_index = i;
        alarm(ROUND_SECONDS);
        good += fork_round(variant);
        alarm(0);
    }
    ok(good == ROUNDS,
       "fork while a thread waits for a grace period and its reader %s: %d of %d "
       "rounds finished, child and parent",
       what, good, ROUNDS);
}

/* ---- registries that come and go while the fork holds the others ----------------------------- */

enum { CHURN_FORKS = 50 };
static int churn_stop;

/* Registries created (between the fork's two steps, it must go back for them) and destroyed
 * (while the fork holds them pinned, destroy must wait), each read and synchronized once. */
static void *churner(void *arg)
{
    (void)arg;
    while (!flag_get(&churn_stop)) {
        struct swf_registry *r = make_registry();
        swf_registry_read_unlock(swf_registry_read_lock(r));
        swf_registry_synchronize(r);
        if (swf_registry_destroy(r) != 0)
            abort();
    }
    return NULL;
}

static void test_churn(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, churner, NULL);
    int good = 0;
    round_variant = 2;
    for (int i = 0; i < CHURN_FORKS; i++) {
        round_index = i;
        alarm(ROUND_SECONDS);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            struct swf_registry *r = make_registry();
            swf_registry_read_unlock(swf_registry_read_lock(r));
            bool done = swf_registry_synchronize(r) == 0 && swf_registry_destroy(r) == 0;
            syscall(SYS_exit_group, done ? 0 : 1);
        }
        int status = -1;
        if (pid > 0)
            waitpid(pid, &status, 0);
        alarm(0);
        good += pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        pause_ms(1);
    }
    flag_set(&churn_stop);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    ok(good == CHURN_FORKS,
       "%d forks while two threads create, read, synchronize and destroy registries: %d children "
       "made and destroyed a registry of their own",
       CHURN_FORKS, good);
}

int main(void)
{
    if (tap_under_valgrind()) {
        /* Memcheck reports, at each child's exit, the binding tables of the parent's threads
         * (which do not exist in the child) as lost; and it cannot run seccomp strict mode. */
        skip("fork while threads hold per-thread state, under valgrind; the plain, ASan and "
             "TSan builds run it");
        return tap_done();
    }
    signal(SIGALRM, on_alarm);
    struct swf_cache_config cfg = {.object_size = 64};
    if (swf_cache_create(&cfg, &cache) != 0)
        abort();
    test_sleeper();
    test_deadlock(0, "first reads another registry");
    test_deadlock(1, "creates a cache");
    test_churn();
    ok(swf_cache_destroy(cache) == 0, "cache destroyed");
    return tap_done();
}
