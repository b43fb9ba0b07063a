/*
 * test/unit/guard_watchdog.c - a blocking call that waits for a section the library cannot see
 * prints one line on stderr after the watchdog's delay, keeps waiting, and completes once the
 * section ends (sweep.h, SWF_WATCHDOG_SECONDS). Linked with the static library, whose internal
 * setter shortens the delay from 5 s to DELAY_MS for this program.
 *
 * Each case runs the blocking call on a worker thread while another thread holds what it waits
 * for, reads stderr (a pipe, here) until the line comes (bounded at a minute: a line that never
 * comes fails), checks it, waits ten delays more for a second line that must not come, then lets
 * go and checks that the call returned 0:
 *   - a cfg.synchronize of the user's that blocks (swf_feature_deactivate);
 *   - swf_synchronize_rwlock while another thread holds the user's read lock (the user's own
 *     section, which the library cannot see);
 *   - the rwlock guard's read lock while another thread holds the write lock
 *     (swf_feature_activate);
 *   - the registry's grace period while another thread holds swf_registry_read_lock;
 *   - swf_synchronize_epoch while another thread is inside ck_epoch_begin on its own record;
 *   - the enter of a guard written by hand (a read lock) while another thread holds the write
 *     lock (swf_sweep): watched as the ready-made guards' waits are;
 *   - WAITERS (more than the watchdog's table of 32) swf_synchronize_rwlock calls at once while
 *     another thread holds the read lock: each prints its line, none goes unwatched;
 *   - the same in a child of fork, after the parent's watchdog ran: the child starts no watchdog
 *     (a new thread is not safe after a fork of a threaded process) - it prints no line and has
 *     no thread but its own three (the parent kills it once the count came).
 * Nothing here asserts a duration: the line is awaited, and a second line would be a failure
 * however late it came.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ck_epoch.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sweepfill/feature.h>
#include <sweepfill/registry.h>

#include "../common/tap.h"

/* Under ThreadSanitizer (TEST_TSAN, tap.h) the fork case skips: TSan refuses threads in a child
 * of a threaded fork. */

#ifndef OLD_LIBRARY
#include "base/section.h" /* swfi_watch_set_delay_ms */
#endif

#ifndef LINE_WAIT_MS
#define LINE_WAIT_MS 60000 /* a line that has not come within a minute never will */
#endif
enum { N = 64, DELAY_MS = 100 };
#define DELAY_TEXT "100 ms"

struct item {
    void *slot;
    int id;
};

static struct item items[N];
static struct swf_array arr = {items, N, sizeof(struct item)};
static struct swf_cache *cache;
static int err_pipe[2];
static int saved_stderr;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

/* ---- a thread that holds something until told ------------------------------------------- */

static int x_go;      /* the holder may let go */
static int x_holding; /* the holder holds */

static void wait_flag(int *flag)
{
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
        usleep(1000);
}

static void set_flag(int *flag, int v)
{
    __atomic_store_n(flag, v, __ATOMIC_RELEASE);
}

static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static ck_epoch_t epoch;
static ck_epoch_record_t reader_rec, sync_rec;
static struct swf_registry *registry;

static void *hold_rdlock(void *arg)
{
    (void)arg;
    pthread_rwlock_rdlock(&rwlock);
    set_flag(&x_holding, 1);
    wait_flag(&x_go);
    pthread_rwlock_unlock(&rwlock);
    return NULL;
}

static void *hold_wrlock(void *arg)
{
    (void)arg;
    pthread_rwlock_wrlock(&rwlock);
    set_flag(&x_holding, 1);
    wait_flag(&x_go);
    pthread_rwlock_unlock(&rwlock);
    return NULL;
}

static void *hold_epoch(void *arg)
{
    (void)arg;
    ck_epoch_begin(&reader_rec, NULL);
    set_flag(&x_holding, 1);
    wait_flag(&x_go);
    ck_epoch_end(&reader_rec, NULL);
    return NULL;
}

static void *hold_registry(void *arg)
{
    (void)arg;
    struct swf_reader *rd = swf_registry_read_lock(registry);
    set_flag(&x_holding, 1);
    wait_flag(&x_go);
    swf_registry_read_unlock(rd);
    return NULL;
}

/* A user's synchronize that waits for the holder's go. */
static void slow_synchronize(void *arg)
{
    (void)arg;
    set_flag(&x_holding, 1);
    wait_flag(&x_go);
}

#ifdef OLD_LIBRARY
static void swf_synchronize_rwlock(void *lock)
{
    pthread_rwlock_wrlock(lock);
    pthread_rwlock_unlock(lock);
}
#endif

/* ---- the calls under test, on a worker ---------------------------------------------------- */

static struct swf_feature *feature;
static int result;

static struct swf_feature *make_feature(bool rwlock_guard, void (*sync)(void *), void *arg)
{
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
    fc.sweep.cache = cache;
    fc.sweep.init = init_obj;
    if (rwlock_guard)
        swf_guard_rwlock(&fc.sweep.guard, &rwlock);
    else
        swf_guard_none(&fc.sweep.guard);
    fc.synchronize = sync;
    fc.synchronize_arg = arg;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "feature");
    return f;
}

static void *do_deactivate(void *arg)
{
    (void)arg;
    result = swf_feature_deactivate(feature);
    return NULL;
}

static void *do_activate(void *arg)
{
    (void)arg;
    result = swf_feature_activate(feature, NULL);
    return NULL;
}

static void *do_registry_deactivate(void *arg)
{
    (void)arg;
    result = swf_registry_deactivate(registry);
    return NULL;
}

#ifndef OLD_LIBRARY
static void *do_synchronize_epoch(void *arg)
{
    (void)arg;
    swf_synchronize_epoch(&sync_rec);
    result = 0;
    return NULL;
}
#endif

/* In a child of fork: after the main thread began its wait (20 delays later), one line on stderr
 * with the process's thread count. A watchdog would have printed its line first, and would be a
 * fourth thread. */
__attribute__((unused)) static void *count_threads_later(void *arg)
{
    (void)arg;
    struct timespec t = {0, 0};
    t.tv_sec = 20 * DELAY_MS / 1000;
    t.tv_nsec = (long)(20 * DELAY_MS % 1000) * 1000000L;
    nanosleep(&t, NULL);
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    fprintf(stderr, "child threads: %d\n", n);
    return NULL;
}

/* A guard written by hand: the user's own read lock, unchecked. */
static void hand_enter(void *lock)
{
    pthread_rwlock_rdlock(lock);
}

static void hand_leave(void *lock)
{
    pthread_rwlock_unlock(lock);
}

static void *do_hand_sweep(void *arg)
{
    (void)arg;
    static struct item hand_items[N];
    static struct swf_array hand_arr = {hand_items, N, sizeof(struct item)};
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = swf_list_array(&hand_arr, offsetof(struct item, slot));
    cfg.cache = cache;
    cfg.init = init_obj;
    cfg.guard = (struct swf_guard){hand_enter, hand_leave, &rwlock, 0};
    result = swf_sweep(&cfg, NULL);
    for (int i = 0; i < N; i++)
        if (hand_items[i].slot == NULL)
            result = -2;
    return NULL;
}

/* More blocking calls waiting at once than the watchdog's table has slots (32). */
enum { WAITERS = 40 };
static int x_waiters_done;

static void *synchronize_rwlock_waiter(void *arg)
{
    (void)arg;
    swf_synchronize_rwlock(&rwlock);
    __atomic_fetch_add(&x_waiters_done, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

/* ---- stderr ---------------------------------------------------------------------------------- */

/* One line from the stderr pipe within timeout_ms, without its newline; false if none came. */
static bool read_line(char *buf, size_t size, int timeout_ms)
{
    size_t len = 0;
    while (len < size - 1) {
        struct pollfd p = {err_pipe[0], POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        char c;
        if (read(err_pipe[0], &c, 1) != 1)
            break;
        if (c == '\n') {
            buf[len] = '\0';
            return true;
        }
        buf[len++] = c;
    }
    buf[len] = '\0';
    return false;
}

/*
 * Run `call` on a worker while `holder` (NULL: the call's own synchronize holds) holds; expect
 * one line that starts with `start` and holds `cause`, no second one, then the call's 0.
 */
static void expect_one_line(const char *name, void *(*holder)(void *), void *(*call)(void *),
                            const char *start, const char *cause)
{
    set_flag(&x_go, 0);
    set_flag(&x_holding, 0);
    pthread_t h, w;
    if (holder != NULL) {
        pthread_create(&h, NULL, holder, NULL);
        wait_flag(&x_holding);
    }
    result = -1;
    pthread_create(&w, NULL, call, NULL);
    char line[1024], more[1024];
    bool got = read_line(line, sizeof(line), LINE_WAIT_MS);
    ok(got && strncmp(line, start, strlen(start)) == 0 && strstr(line, cause) != NULL,
       "%s: one line \"%s...%s\"", name, start, cause);
    if (!got || strncmp(line, start, strlen(start)) != 0)
        diag("got \"%s\"", got ? line : "(nothing)");
    bool second = read_line(more, sizeof(more), 10 * DELAY_MS);
    set_flag(&x_go, 1);
    pthread_join(w, NULL);
    if (holder != NULL)
        pthread_join(h, NULL);
    second = second || read_line(more, sizeof(more), 0);
    ok(!second, "%s: no second line while it kept waiting (got \"%s\")", name, second ? more : "");
    ok(result == 0, "%s: the call completed once the wait ended (returned %d)", name, result);
}

/* WAITERS calls wait at once behind a reader: each prints its one line (a line never seen
 * within LINE_WAIT_MS fails), none a second, and all complete once the reader lets go. */
static void many_waiters(void)
{
    set_flag(&x_go, 0);
    set_flag(&x_holding, 0);
    pthread_t h, w[WAITERS];
    pthread_create(&h, NULL, hold_rdlock, NULL);
    wait_flag(&x_holding);
    for (int i = 0; i < WAITERS; i++)
        tap_require(pthread_create(&w[i], NULL, synchronize_rwlock_waiter, NULL) == 0, "waiter");
    static const char START[] = "sweepfill: swf_synchronize_rwlock: still waiting for "
                                "swf_synchronize_rwlock's pthread_rwlock_wrlock after " DELAY_TEXT
                                ": a reader holds the lock";
    int lines = 0, right = 0;
    char line[1024], bad[1024] = "";
    while (lines < WAITERS && read_line(line, sizeof(line), LINE_WAIT_MS)) {
        lines++;
        if (strncmp(line, START, strlen(START)) == 0)
            right++;
        else
            snprintf(bad, sizeof(bad), "%s", line);
    }
    bool second = read_line(line, sizeof(line), 10 * DELAY_MS);
    set_flag(&x_go, 1);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(w[i], NULL);
    pthread_join(h, NULL);
    second = second || read_line(line, sizeof(line), 0);
    ok(lines == WAITERS && right == WAITERS,
       "%d calls waiting at once (the table has 32 slots): each printed its line (%d lines, %d "
       "right%s%s)",
       WAITERS, lines, right, bad[0] ? "; other: " : "", bad);
    ok(!second, "and no call a second one (got \"%s\")", second ? line : "");
    ok(__atomic_load_n(&x_waiters_done, __ATOMIC_ACQUIRE) == WAITERS,
       "and every call completed once the reader let go");
}

/* fork: the child's watched wait starts no watchdog (not under TSan: see main). */
__attribute__((unused)) static void fork_case(void)
{
    /* fork: the child's watched wait starts no watchdog; its checker's count is its first line. */
    fflush(stdout);
    set_flag(&x_go, 0);
    set_flag(&x_holding, 0);
    pid_t pid = fork();
    tap_require(pid >= 0, "fork");
    if (pid == 0) {
        pthread_t h, k;
        pthread_create(&h, NULL, hold_epoch, NULL);
        wait_flag(&x_holding);
        pthread_create(&k, NULL, count_threads_later, NULL);
        swf_synchronize_epoch(&sync_rec); /* waits until the parent kills this process */
        _exit(3);
    }
    char line[1024];
    bool got = read_line(line, sizeof(line), LINE_WAIT_MS);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ok(got && strcmp(line, "child threads: 3") == 0,
       "a child of fork, waiting as the last case did, prints no line and starts no watchdog "
       "(main, holder and checker: got \"%s\")",
       got ? line : "(nothing)");
}

int main(void)
{
#ifndef OLD_LIBRARY
    swfi_watch_set_delay_ms(DELAY_MS);
#endif
    struct swf_cache_config cc = {.object_size = 64, .name = "guard-watchdog"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "cache");
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &reader_rec, NULL);
    ck_epoch_register(&epoch, &sync_rec, NULL);
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = cache;
    rc.init = init_obj;
    tap_require(swf_registry_create(&rc, &registry) == 0, "registry");

    tap_require(pipe(err_pipe) == 0, "pipe");
    fflush(stderr);
    saved_stderr = dup(2);
    dup2(err_pipe[1], 2);

    static const char START[] = "sweepfill: swf_feature_deactivate: still waiting for "
                                "cfg.synchronize after " DELAY_TEXT ": ";
    feature = make_feature(false, slow_synchronize, NULL);
    tap_require(swf_feature_activate(feature, NULL) == 0, "activate");
    expect_one_line("a cfg.synchronize that blocks", NULL, do_deactivate, START,
                    "a read-side section that began before it has not ended");
    swf_feature_destroy(feature);

    feature = make_feature(true, swf_synchronize_rwlock, &rwlock);
    tap_require(swf_feature_activate(feature, NULL) == 0, "activate");
    expect_one_line("swf_synchronize_rwlock, a reader in the user's own read lock", hold_rdlock,
                    do_deactivate, START, "pthread_rwlock_rdlock");
    ok(items[0].slot == NULL && items[N - 1].slot == NULL, "and every slot was taken back");

    expect_one_line("the rwlock guard, a writer holding the lock", hold_wrlock, do_activate,
                    "sweepfill: swf_feature_activate: still waiting for the rwlock guard's "
                    "pthread_rwlock_rdlock after " DELAY_TEXT ": ",
                    "a writer holds or waits for the lock");
    ok(items[0].slot != NULL && items[N - 1].slot != NULL, "and every member has an object");
    tap_require(swf_feature_deactivate(feature) == 0, "deactivate");
    swf_feature_destroy(feature);

    tap_require(swf_registry_activate(registry, NULL) == 0, "registry activate");
    expect_one_line("the registry's grace period, a reader inside swf_registry_read_lock",
                    hold_registry, do_registry_deactivate,
                    "sweepfill: swf_registry_deactivate: still waiting for the registry's grace "
                    "period after " DELAY_TEXT ": ",
                    "a reader has not left swf_registry_read_lock's section");

    expect_one_line("a guard written by hand, a writer holding its lock", hold_wrlock,
                    do_hand_sweep,
                    "sweepfill: swf_sweep: still waiting for the guard's enter (a guard written by "
                    "hand) after " DELAY_TEXT ": ",
                    "it has not returned");
    many_waiters();

#ifndef OLD_LIBRARY
    expect_one_line("swf_synchronize_epoch, a reader inside ck_epoch_begin", hold_epoch,
                    do_synchronize_epoch,
                    "sweepfill: swf_synchronize_epoch: still waiting for swf_synchronize_epoch's "
                    "grace period after " DELAY_TEXT ": ",
                    "ck_epoch_begin");
#ifdef TEST_TSAN
    skip("fork: ThreadSanitizer does not support threads in a child of a threaded parent");
#else
    if (tap_under_qemu())
        skip(TAP_QEMU_THREADED_FORK);
    else
        fork_case();
#endif
#else
    (void)hold_epoch;
#endif

    fflush(stderr);
    dup2(saved_stderr, 2);
    return tap_done();
}
