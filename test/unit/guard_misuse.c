/*
 * test/unit/guard_misuse.c - the ready-made guards check their locks and count their sections
 * (sweep.h), in every build: each case runs in a child (this program run again with the case's
 * name), which must abort with one line on stderr that names the public call and the cause.
 *
 *   - a guard whose lock call fails aborts, naming the call running: swf_feature_activate from a
 *     thread that holds the list's write lock (the rwlock guard's pthread_rwlock_rdlock returns
 *     EDEADLK), the same in swf_sweep, an error-checking mutex held by the caller, the mutex
 *     guard's unlock of a mutex the thread does not hold, the epoch guard's leave outside a
 *     section;
 *   - the epoch guard's record used by a thread that does not own it says so: a leave on a
 *     thread that did not enter (another thread holds the section), and a section of another
 *     thread that began inside the owner's, caught at the owner's leave;
 *   - a blocking call inside a section of a sweepfill guard (entered by hand, or the registry's
 *     read lock) aborts at once, whatever the guard: activate, deactivate, catch_up, added with
 *     SWF_WAIT, swf_sweep, the registry's activate, deactivate and synchronize, the synchronize
 *     functions.
 * A child that does not abort within its alarm (the old library waited for ever in some cases)
 * fails its point. Also checked: a failing case's caller kept its write lock when it did not
 * abort (the old library's silent unlock: another thread's trywrlock succeeded).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ck_epoch.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/queue.h>

#include <sweepfill/feature.h>
#include <sweepfill/list_sysqueue.h>
#include <sweepfill/registry.h>

#include "../common/child.h"

/* Under ThreadSanitizer (TEST_TSAN, tap.h) some cases skip: TSan reports these misuses itself,
 * first (an unlock of a mutex not held), and refuses threads in a child of a threaded fork. */

enum { N = 64 };

struct item {
    void *slot;
    int id;
    TAILQ_ENTRY(item) link;
};
TAILQ_HEAD(item_tailq, item);

static struct item items[N];
static struct swf_array arr = {items, N, sizeof(struct item)};
static struct swf_cache *cache;
static ck_epoch_t epoch;
static ck_epoch_record_t rec, sync_rec;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t mutex;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

/* A sweep generated for a TAILQ of items: it checks as swf_sweep does, under its own name. */
static struct item_tailq tailq = TAILQ_HEAD_INITIALIZER(tailq);
SWF_LIST_SYS_TAILQ(tq, item_tailq, item, link, slot)
SWF_SWEEP_DEFINE(tailq_sweep, tq, init_obj)

static void no_grace(void *arg)
{
    (void)arg;
}

static void epoch_synchronize(void *arg)
{
    ck_epoch_synchronize(arg);
}

static void setup(void)
{
    struct swf_cache_config cc = {.object_size = 64, .name = "guard-misuse"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "cache");
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    ck_epoch_register(&epoch, &sync_rec, NULL);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&mutex, &ma);
}

static struct swf_feature *feature(const char *guard)
{
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
    fc.sweep.cache = cache;
    fc.sweep.init = init_obj;
    fc.synchronize = no_grace;
    if (strcmp(guard, "rwlock") == 0)
        swf_guard_rwlock(&fc.sweep.guard, &rwlock);
    else if (strcmp(guard, "mutex") == 0)
        swf_guard_mutex(&fc.sweep.guard, &mutex);
    else if (strcmp(guard, "epoch") == 0)
        swf_guard_epoch(&fc.sweep.guard, &rec);
    else
        swf_guard_none(&fc.sweep.guard);
    if (strcmp(guard, "epoch") == 0) /* what the old library's users wrote: it spins */
        fc.synchronize = epoch_synchronize, fc.synchronize_arg = &sync_rec;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "feature");
    return f;
}

static void *try_write(void *arg)
{
    (void)arg;
    int err = pthread_rwlock_trywrlock(&rwlock);
    if (err == 0)
        pthread_rwlock_unlock(&rwlock);
    return (void *)(intptr_t)err;
}

/* What the old library did instead of aborting: say whether the caller still holds its lock. */
static int report_write_lock(int ret)
{
    pthread_t t;
    void *err;
    pthread_create(&t, NULL, try_write, NULL);
    pthread_join(t, &err);
    printf("returned %d; another thread's trywrlock %s\n", ret,
           err == NULL ? "succeeded: the caller's write lock was released" : "failed");
    return 0;
}

/* ---- the epoch record of another thread ------------------------------------------------- */

static struct swf_guard owner_guard;
static int x_step; /* 1: the owner is in its section; 2: the intruder is in one too */

static void wait_step(int step)
{
    while (__atomic_load_n(&x_step, __ATOMIC_ACQUIRE) < step)
        usleep(1000);
}

/* Enters the guard's section on rec and stays in it; with leave_after, leaves once another
 * thread entered one too (that leave is where the owner finds out). */
static void *owner(void *leave_after)
{
    owner_guard.enter(owner_guard.arg);
    __atomic_store_n(&x_step, 1, __ATOMIC_RELEASE);
    if (leave_after != NULL) {
        wait_step(2);
        owner_guard.leave(owner_guard.arg);
    }
    for (;;)
        pause();
    return NULL;
}

static int epoch_other_thread(bool leave_first)
{
    swf_guard_epoch(&owner_guard, &rec);
    pthread_t t;
    pthread_create(&t, NULL, owner, leave_first ? NULL : (void *)1);
    wait_step(1);
    if (leave_first) {
        owner_guard.leave(owner_guard.arg); /* never entered on this thread */
    } else {
        owner_guard.enter(owner_guard.arg);
        __atomic_store_n(&x_step, 2, __ATOMIC_RELEASE);
        for (;;)
            pause(); /* the owner's leave aborts the process */
    }
    printf("returned\n");
    return 0;
}

/* The case runs; it returns only if nothing aborted. */
static int child(const char *name)
{
    alarm(20); /* the old library waited for ever in some cases: end as a failure */
    setup();
    if (strcmp(name, "activate_holding_wrlock") == 0) {
        struct swf_feature *f = feature("rwlock");
        pthread_rwlock_wrlock(&rwlock);
        return report_write_lock(swf_feature_activate(f, NULL));
    }
    if (strcmp(name, "sweep_holding_wrlock") == 0) {
        struct swf_sweep_config sc;
        swf_sweep_config_init(&sc);
        sc.list = swf_list_array(&arr, offsetof(struct item, slot));
        sc.cache = cache;
        sc.init = init_obj;
        swf_guard_rwlock(&sc.guard, &rwlock);
        pthread_rwlock_wrlock(&rwlock);
        return report_write_lock(swf_sweep(&sc, NULL));
    }
    if (strcmp(name, "activate_holding_mutex") == 0) {
        struct swf_feature *f = feature("mutex");
        pthread_mutex_lock(&mutex);
        return printf("returned %d\n", swf_feature_activate(f, NULL)), 0;
    }
    if (strcmp(name, "mutex_leave_unheld") == 0) {
        struct swf_guard g;
        swf_guard_mutex(&g, &mutex);
        g.leave(g.arg);
        return 0;
    }
    if (strcmp(name, "epoch_leave_outside") == 0) {
        struct swf_guard g;
        swf_guard_epoch(&g, &rec);
        g.leave(g.arg);
        return 0;
    }
    if (strcmp(name, "epoch_leave_other_thread") == 0)
        return epoch_other_thread(true);
    if (strcmp(name, "epoch_enter_other_thread") == 0)
        return epoch_other_thread(false);
    /* In a section of a ready-made guard: "<call>_in_<guard>". */
    char call[64], guard[16];
    const char *in = strstr(name, "_in_");
    tap_require(in != NULL && (size_t)(in - name) < sizeof(call), "case name");
    memcpy(call, name, (size_t)(in - name));
    call[in - name] = '\0';
    snprintf(guard, sizeof(guard), "%s", in + 4);
    struct swf_feature *f = feature(strcmp(guard, "registry") == 0 ? "none" : guard);
    struct swf_registry *r = NULL;
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = cache;
    rc.init = init_obj;
    tap_require(swf_registry_create(&rc, &r) == 0, "registry");
    if (strcmp(call, "deactivate") == 0 || strcmp(call, "added") == 0 ||
        strcmp(call, "catch_up") == 0) {
        tap_require(swf_feature_activate(f, NULL) == 0, "activate");
    }
    if (strcmp(call, "registry_deactivate") == 0)
        tap_require(swf_registry_activate(r, NULL) == 0, "registry activate");
    struct swf_sweep_config sweep_cfg;
    swf_sweep_config_init(&sweep_cfg);
    sweep_cfg.list = swf_list_array(&arr, offsetof(struct item, slot));
    sweep_cfg.cache = cache;
    sweep_cfg.init = init_obj;
    swf_guard_none(&sweep_cfg.guard);
    sweep_cfg.algo = SWF_RESTART; /* the TAILQ cannot pin: no line about RESUME's fallback */
    struct swf_guard g;
    struct swf_reader *rd = NULL;
    if (strcmp(guard, "registry") == 0) {
        rd = swf_registry_read_lock(r);
    } else {
        if (strcmp(guard, "rwlock") == 0)
            swf_guard_rwlock(&g, &rwlock);
        else if (strcmp(guard, "mutex") == 0)
            swf_guard_mutex(&g, &mutex);
        else if (strcmp(guard, "epoch") == 0)
            swf_guard_epoch(&g, &rec);
        else
            swf_guard_none(&g);
        g.enter(g.arg);
    }
    int ret = -1;
    if (strcmp(call, "activate") == 0)
        ret = swf_feature_activate(f, NULL);
    else if (strcmp(call, "deactivate") == 0)
        ret = swf_feature_deactivate(f);
    else if (strcmp(call, "catch_up") == 0)
        ret = swf_feature_catch_up(f, NULL);
    else if (strcmp(call, "added") == 0)
        ret = swf_feature_added(f, &items[1], SWF_WAIT);
    else if (strcmp(call, "registry_activate") == 0)
        ret = swf_registry_activate(r, NULL);
    else if (strcmp(call, "registry_deactivate") == 0)
        ret = swf_registry_deactivate(r);
    else if (strcmp(call, "registry_synchronize") == 0)
        ret = swf_registry_synchronize(r);
    else if (strcmp(call, "sweep") == 0)
        ret = swf_sweep(&sweep_cfg, NULL);
    else if (strcmp(call, "cache_quiesce") == 0)
        ret = swf_cache_quiesce(cache, &sync_rec);
    else if (strcmp(call, "tailq_sweep") == 0)
        sweep_cfg.list = tq_list(&tailq), ret = tailq_sweep(&sweep_cfg, NULL);
#ifndef OLD_LIBRARY /* the library before the synchronize functions: the rest of the cases */
    else if (strcmp(call, "synchronize_rwlock") == 0)
        swf_synchronize_rwlock(&rwlock), ret = 0;
    else if (strcmp(call, "synchronize_epoch") == 0)
        swf_synchronize_epoch(&sync_rec), ret = 0;
#endif
    printf("returned %d\n", ret);
    if (rd != NULL)
        swf_registry_read_unlock(rd);
    else
        g.leave(g.arg);
    return 0;
}

static const char *self;

static int child_of(char *const argv[])
{
    return child(argv[1]);
}

/* The case aborts with one line "sweepfill: <fn>: ..." that holds each of what[]. */
static void expect_abort(const char *name, const char *fn, const char *what1, const char *what2)
{
    static struct tap_child o;
    char *argv[] = {(char *)self, (char *)name, NULL};
    tap_run_child(&o, argv, NULL, NULL, child_of);
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "sweepfill: %s: ", fn);
    char *nl = strchr(o.err, '\n');
    bool one_line = nl != NULL && nl[1] == '\0';
    if (nl)
        *nl = '\0';
    bool pass = WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT && one_line &&
                strncmp(o.err, prefix, strlen(prefix)) == 0 && strstr(o.err, what1) != NULL &&
                (what2 == NULL || strstr(o.err, what2) != NULL);
    if (!ok(pass, "%s: aborts with one line \"%s...%s...%s\"", name, prefix, what1,
            what2 ? what2 : ""))
        diag("status %#x, stderr \"%s\", stdout \"%s\"", o.status, o.err, o.out);
}

static const char IN_SECTION[] = "called inside a read-side section of a sweepfill guard";

int main(int argc, char **argv)
{
    if (argc == 2)
        return child(argv[1]);
    self = argv[0];
    if (tap_under_valgrind()) {
        skip("aborts under valgrind: its reports would be the children's stderr");
        return tap_done();
    }
    if (tap_under_qemu()) {
        skip(TAP_QEMU_THREADED_FORK);
        return tap_done();
    }
    expect_abort("activate_holding_wrlock", "swf_feature_activate",
                 "the rwlock guard's pthread_rwlock_rdlock failed: ",
                 "(EDEADLK): does this thread hold the write lock?");
    expect_abort("sweep_holding_wrlock", "swf_sweep",
                 "the rwlock guard's pthread_rwlock_rdlock failed: ", "(EDEADLK)");
    expect_abort("activate_holding_mutex", "swf_feature_activate",
                 "the mutex guard's pthread_mutex_lock failed: ",
                 "(EDEADLK): does this thread hold the mutex?");
#ifdef TEST_TSAN
    skip("mutex_leave_unheld: ThreadSanitizer reports the unlock first");
#else
    expect_abort("mutex_leave_unheld", "swf_guard_mutex",
                 "the mutex guard's pthread_mutex_unlock failed: ", "(EPERM)");
#endif
    expect_abort("epoch_leave_outside", "swf_guard_epoch", "the epoch guard's leave found record",
                 "outside any section");
#ifdef TEST_TSAN
    skip("the epoch record of another thread: ThreadSanitizer reports the race on it first");
#else
    expect_abort("epoch_leave_other_thread", "swf_guard_epoch",
                 "the calling thread does not own the epoch record",
                 "leaving a section it did not enter through the guard");
    expect_abort("epoch_enter_other_thread", "swf_guard_epoch",
                 "the calling thread does not own the epoch record",
                 "another thread entered or left a section on it during this thread's section");
#endif
    static const char *const guards[] = {"epoch", "rwlock", "mutex", "none", "registry"};
    static const char *const calls[][2] = {
        {"activate", "swf_feature_activate"},
        {"deactivate", "swf_feature_deactivate"},
        {"catch_up", "swf_feature_catch_up"},
        {"added", "swf_feature_added"},
        {"registry_activate", "swf_registry_activate"},
        {"registry_deactivate", "swf_registry_deactivate"},
        {"registry_synchronize", "swf_registry_synchronize"},
        {"sweep", "swf_sweep"},
        {"tailq_sweep", "tailq_sweep"},
        {"cache_quiesce", "swf_cache_quiesce"},
#ifndef OLD_LIBRARY
        {"synchronize_rwlock", "swf_synchronize_rwlock"},
        {"synchronize_epoch", "swf_synchronize_epoch"},
#endif
    };
    for (size_t g = 0; g < sizeof(guards) / sizeof(guards[0]); g++) {
        for (size_t c = 0; c < sizeof(calls) / sizeof(calls[0]); c++) {
            /* The mutex guard's section holds the list's mutex: the feature made with it would
             * fail its own lock first (EDEADLK, above); the section check comes before. */
            char name[96];
            snprintf(name, sizeof(name), "%s_in_%s", calls[c][0], guards[g]);
            expect_abort(name, calls[c][1], IN_SECTION,
                         "a blocking call there can wait for itself");
        }
    }
    return tap_done();
}
