/*
 * test/unit/feature_between.c - feature.h between the switches, on an array of members: the
 * headroom that activate and swf_feature_maintain() keep ready, the add reserve that serves adds
 * whose NOWAIT allocation fails, the owed table that lets a catch-up fill owed members without a
 * walk (counted by the list's next() calls), and a walk only for members owed while it is full;
 * swf_feature_prepare() from another thread, the maintainer thread of cfg.maintain_ms (and a
 * fork child's destroy, which has no such thread to stop), and
 * swf_feature_destroy() refusing while a deactivate runs on another thread or while a member
 * that left the list still holds an object (aborting with one line under SWF_DEBUG=checks).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sweepfill/feature.h>

#include "../common/child.h"
#include "../common/tap.h"

enum { N = 2000, RESERVE = 8, TABLE = 16 };

struct item {
    void *slot;
    int id;
};

static struct item items[N];
static struct swf_array arr = {items, N, sizeof(struct item)};
static struct swf_cache *cache;
static uint64_t nexts; /* the list's next() calls: the walks' visits */

static void *counted_next(void *list, void *member)
{
    __atomic_fetch_add(&nexts, 1, __ATOMIC_RELAXED);
    return swf_array_ops.next(list, member);
}

static struct swf_list_ops counting_ops;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static volatile int hold_grace; /* deactivate's grace period waits while set */
static volatile int in_grace;

static void grace(void *arg)
{
    (void)arg;
    in_grace = 1;
    for (long i = 0; hold_grace && i < 2000000000L; i++)
        sched_yield();
    in_grace = 0;
}

static void config(struct swf_feature_config *fc)
{
    counting_ops = swf_array_ops;
    counting_ops.next = counted_next;
    swf_feature_config_init(fc);
    fc->sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
    fc->sweep.list.ops = &counting_ops;
    fc->sweep.cache = cache;
    fc->sweep.init = init_obj;
    swf_guard_none(&fc->sweep.guard);
    fc->synchronize = grace;
}

static struct swf_cache_stats cstats(void)
{
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    return s;
}

static struct swf_feature_stats fstats(struct swf_feature *f)
{
    struct swf_feature_stats s;
    swf_feature_stats(f, &s);
    return s;
}

static void fail_nowait(bool on)
{
    struct swf_failslab fs = {.probability = 100, .interval = 1, .times = -1, .seed = 1};
    swf_cache_set_failslab(cache, on ? &fs : NULL);
}

static void new_cache(void)
{
    struct swf_cache_config cc = {.object_size = 64, .name = "between"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
    memset(items, 0, sizeof(items));
    arr.count = N;
}

static void end(struct swf_feature *f)
{
    if (fstats(f).active)
        tap_require(swf_feature_deactivate(f) == 0, "deactivate");
    uint64_t alive = cstats().alive;
    ok(swf_feature_destroy(f) == 0 && alive == 0 && swf_cache_destroy(cache) == 0,
       "deactivate and destroy leave nothing alive (%llu)", (unsigned long long)alive);
}

/* The headroom: ready after activate, spent by adds, restored by maintain. */
static void headroom(void)
{
    new_cache();
    struct swf_feature_config fc;
    config(&fc);
    fc.headroom = 300;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    arr.count = N - 500; /* 500 members arrive once it is on */
    int err = swf_feature_activate(f, NULL);
    uint64_t ready = cstats().ready;
    ok(err == 0 && ready >= 300 && fstats(f).headroom == 300,
       "activate leaves the headroom ready (%llu ready, headroom %llu)", (unsigned long long)ready,
       (unsigned long long)fstats(f).headroom);
    uint64_t maintains = fstats(f).maintains;
    ok(swf_feature_maintain(f) == 0 && fstats(f).maintains == maintains,
       "maintain with no add since: nothing done");
    err = 0;
    for (int i = N - 500; i < N; i++) {
        arr.count = (size_t)i + 1;
        err |= swf_feature_added(f, &items[i], SWF_NOWAIT);
    }
    struct swf_feature_stats st = fstats(f);
    ok(err == 0 && st.left_owed == 0 && st.add_reserve_uses == 0,
       "500 adds after a headroom of 300 and the reserve: none owed, the reserve unused "
       "(the cache had the rest ready)");
    err = swf_feature_maintain(f);
    ready = cstats().ready;
    ok(err == 0 && ready >= 300 && fstats(f).maintains == maintains + 1,
       "maintain after the adds: the headroom is ready again (%llu ready)",
       (unsigned long long)ready);
    end(f);

    new_cache();
    config(&fc);
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    err = swf_feature_activate(f, NULL);
    uint64_t auto_room = fstats(f).headroom;
    ok(err == 0 &&
           auto_room == (N / 16 > SWF_FEATURE_HEADROOM_MIN ? N / 16 : SWF_FEATURE_HEADROOM_MIN),
       "SWF_FEATURE_HEADROOM_AUTO: a sixteenth of the %d members, at least %d (%llu)", N,
       SWF_FEATURE_HEADROOM_MIN, (unsigned long long)auto_room);
    end(f);
}

/* The add reserve: serves NOWAIT misses, then members are owed; maintain refills it. */
static void add_reserve(void)
{
    new_cache();
    struct swf_feature_config fc;
    config(&fc);
    fc.add_reserve = RESERVE;
    fc.owed_table = 0;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    arr.count = N - 20;
    tap_require(swf_feature_activate(f, NULL) == 0, "activate");
    ok(fstats(f).add_reserve_ready == RESERVE, "activate fills the add reserve (%llu of %d)",
       (unsigned long long)fstats(f).add_reserve_ready, RESERVE);
    fail_nowait(true);
    int served = 0, owed = 0;
    for (int i = N - 20; i < N - 20 + RESERVE + 2; i++) {
        arr.count = (size_t)i + 1;
        int err = swf_feature_added(f, &items[i], SWF_NOWAIT);
        served += err == 0 && swf_slot_load(&items[i].slot) != NULL;
        owed += err == EAGAIN && swf_slot_load(&items[i].slot) == NULL;
    }
    fail_nowait(false);
    struct swf_feature_stats st = fstats(f);
    ok(served == RESERVE && owed == 2 && st.add_reserve_uses == RESERVE && st.left_owed == 2 &&
           st.add_reserve_ready == 0,
       "NOWAIT failing: the reserve serves %d adds (%d), then adds are owed (%d)", RESERVE, served,
       owed);
    ok(swf_feature_maintain(f) == 0 && fstats(f).add_reserve_ready == RESERVE,
       "maintain refills the reserve");
    ok(swf_feature_catch_up(f, NULL) == 0 && swf_slot_load(&items[N - 20 + RESERVE].slot) &&
           swf_slot_load(&items[N - 20 + RESERVE + 1].slot),
       "catch-up fills the 2 owed members (no table: by a walk)");
    end(f);
}

/* The owed table: marks readers see as empty, a catch-up without a walk, release of an owed
 * member, and a walk only for the members owed while it was full. */
static void owed_table(void)
{
    new_cache();
    struct swf_feature_config fc;
    config(&fc);
    fc.add_reserve = 0;
    fc.owed_table = TABLE;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    arr.count = N - 100;
    tap_require(swf_feature_activate(f, NULL) == 0, "activate");
    fail_nowait(true);
    int again = 0;
    for (int i = N - 100; i < N - 100 + TABLE; i++) {
        arr.count = (size_t)i + 1;
        again += swf_feature_added(f, &items[i], SWF_NOWAIT) == EAGAIN;
    }
    void *raw = swf_slot_peek(&items[N - 100].slot);
    ok(again == TABLE && fstats(f).owed_tabled == TABLE && fstats(f).owed_untabled == 0,
       "%d owed adds: each in the table (%llu)", TABLE, (unsigned long long)fstats(f).owed_tabled);
    ok(raw != NULL && ((uintptr_t)raw & SWF_SLOT_OWED_BIT) &&
           swf_slot_load(&items[N - 100].slot) == NULL,
       "an owed slot holds an odd mark (%p) that swf_slot_load reads as NULL", raw);

    /* One owed member leaves the list: its release gives the entry back. */
    ok(swf_feature_release(f, &items[N - 100]) == 0 && items[N - 100].slot == NULL &&
           fstats(f).owed_tabled == TABLE - 1,
       "release of an owed member clears its mark and frees its entry");
    fail_nowait(false);
    uint64_t before = __atomic_load_n(&nexts, __ATOMIC_RELAXED);
    struct swf_sweep_stats sw;
    int err = swf_feature_catch_up(f, &sw);
    uint64_t walked = __atomic_load_n(&nexts, __ATOMIC_RELAXED) - before;
    int filled = 0;
    for (int i = N - 99; i < N - 100 + TABLE; i++)
        filled += swf_slot_load(&items[i].slot) != NULL;
    struct swf_feature_stats st = fstats(f);
    ok(err == 0 && filled == TABLE - 1 && walked == 0 && sw.visits == 0 && st.catch_up_walks == 0 &&
           st.filled_by_catch_up == TABLE - 1 && st.owed_tabled == 0,
       "catch-up fills the %d tabled members without a walk (%llu next() calls, %d filled)",
       TABLE - 1, (unsigned long long)walked, filled);

    /* The table full: the members beyond it are owed the old way, and one walk fills them. */
    fail_nowait(true);
    again = 0;
    for (int i = N - 100 + TABLE; i < N - 100 + 2 * TABLE + 3; i++) {
        arr.count = (size_t)i + 1;
        again += swf_feature_added(f, &items[i], SWF_NOWAIT) == EAGAIN;
    }
    st = fstats(f);
    ok(again == TABLE + 3 && st.owed_tabled == TABLE && st.owed_untabled == 3,
       "%d more owed adds: %d tabled, 3 beyond a full table (%llu, %llu)", TABLE + 3, TABLE,
       (unsigned long long)st.owed_tabled, (unsigned long long)st.owed_untabled);
    fail_nowait(false);
    before = __atomic_load_n(&nexts, __ATOMIC_RELAXED);
    err = swf_feature_catch_up(f, NULL);
    walked = __atomic_load_n(&nexts, __ATOMIC_RELAXED) - before;
    filled = 0;
    for (size_t i = 0; i < arr.count; i++)
        filled += i != N - 100 && swf_slot_load(&items[i].slot) != NULL;
    st = fstats(f);
    ok(err == 0 && filled == (int)arr.count - 1 && st.catch_up_walks == 1 &&
           walked >= arr.count - 1,
       "catch-up fills all, with one walk for the 3 (%llu next() calls, %d of %zu filled)",
       (unsigned long long)walked, filled, arr.count - 1);

    /* Owed members at deactivate: their marks are cleared, nothing is freed twice. */
    fail_nowait(true);
    arr.count++;
    ok(swf_feature_added(f, &items[arr.count - 1], SWF_NOWAIT) == EAGAIN, "one more owed add");
    fail_nowait(false);
    ok(swf_feature_deactivate(f) == 0 && items[arr.count - 1].slot == NULL &&
           fstats(f).owed_tabled == 0,
       "deactivate clears an owed mark");
    end(f);
}

static void *prepare_elsewhere(void *arg)
{
    return (void *)(intptr_t)swf_feature_prepare(arg, 1000);
}

/* swf_feature_prepare from another thread, ahead of activate. */
static void prepare(void)
{
    new_cache();
    struct swf_feature_config fc;
    config(&fc);
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    pthread_t t;
    void *ret;
    pthread_create(&t, NULL, prepare_elsewhere, f);
    pthread_join(t, &ret);
    size_t want = 1000 + SWF_SWEEP_RESERVE_DEFAULT + SWF_FEATURE_ADD_RESERVE_DEFAULT +
                  SWF_FEATURE_HEADROOM_MIN;
    ok(ret == NULL && cstats().ready >= want && fstats(f).active == 0,
       "prepare(1000) on another thread: %zu objects ready, the feature still off (%llu)", want,
       (unsigned long long)cstats().ready);
    ok(swf_feature_prepare(NULL, 1) == EINVAL, "prepare(NULL): EINVAL");
    ok(swf_feature_prepare(f, SIZE_MAX) == ENOMEM, "prepare(SIZE_MAX): ENOMEM");
    end(f);
}

/* cfg.maintain_ms: the feature's thread refills the reserve without any call of ours. */
static void maintainer(void)
{
    new_cache();
    struct swf_feature_config fc;
    config(&fc);
    fc.add_reserve = RESERVE;
    fc.maintain_ms = 1;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    arr.count = N - 4;
    tap_require(swf_feature_activate(f, NULL) == 0, "activate");
    fail_nowait(true);
    for (int i = N - 4; i < N; i++) {
        arr.count = (size_t)i + 1;
        (void)swf_feature_added(f, &items[i], SWF_NOWAIT);
    }
    fail_nowait(false);
    bool refilled = false;
    for (int i = 0; i < 200000 && !refilled; i++) { /* up to minutes: a bound, not a timing */
        refilled = fstats(f).add_reserve_ready == RESERVE;
        if (!refilled)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    ok(refilled, "maintain_ms: the feature's thread refills the add reserve");
    tap_require(swf_feature_deactivate(f) == 0, "deactivate");
    if (tap_under_qemu()) {
        skip("a fork child's destroy: " TAP_QEMU_THREADED_FORK);
    } else if (tap_under_valgrind()) {
        skip("a fork child's destroy: valgrind counts the parent's threads' memory as the "
             "child's leak and makes that its exit status");
    } else {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(60); /* a join of the parent's thread would hang: fail instead */
            _exit(swf_feature_destroy(f) == 0 ? 0 : 1);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "maintain_ms: a fork child destroys the feature without its parent's thread (%#x)",
           status);
    }
    end(f);
}

static void *deactivate_elsewhere(void *arg)
{
    return (void *)(intptr_t)swf_feature_deactivate(arg);
}

/* destroy refuses while another thread's deactivate runs, and while a member that left the
 * list still holds an object. */
static void destroy_busy(void)
{
    new_cache();
    struct swf_feature_config fc;
    config(&fc);
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    tap_require(swf_feature_activate(f, NULL) == 0, "activate");
    hold_grace = 1;
    pthread_t t;
    pthread_create(&t, NULL, deactivate_elsewhere, f);
    for (long i = 0; !in_grace && i < 2000000000L; i++)
        sched_yield();
    int err = swf_feature_destroy(f);
    hold_grace = 0;
    void *ret;
    pthread_join(t, &ret);
    ok(err == EBUSY && ret == NULL,
       "destroy while another thread's deactivate waits for its grace period: EBUSY (%d)", err);
    end(f);
}

/* A member leaves the list holding an object; its release is still to come at destroy. */
static int left_holding(bool expect_busy)
{
    new_cache();
    struct swf_feature_config fc;
    config(&fc);
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    tap_require(swf_feature_activate(f, NULL) == 0, "activate");
    arr.count = N - 1; /* the last member leaves the list, holding its object */
    tap_require(swf_feature_deactivate(f) == 0, "deactivate");
    int err = swf_feature_destroy(f);
    if (!expect_busy)
        return 0; /* the child: it aborted above, or this says it did not */
    ok(err == EBUSY && strstr(swf_error_reason(), "swf_feature_release") != NULL,
       "destroy before a left member's release: EBUSY, the reason names swf_feature_release (%s)",
       swf_error_reason());
    ok(swf_feature_release(f, &items[N - 1]) == 0 && swf_feature_destroy(f) == 0 &&
           swf_cache_destroy(cache) == 0,
       "after the release: destroy succeeds");
    return 0;
}

static int child_of(char *const argv[])
{
    (void)argv;
    return left_holding(false);
}

static void set_checks(void *arg)
{
    (void)arg;
    setenv("SWF_DEBUG", "checks", 1);
}

static void destroy_left(const char *self)
{
    if (!swf_debug_checks())
        left_holding(true);
    else
        skip("destroy's EBUSY for a left member: this build has the checks on (it aborts)");
    if (tap_under_valgrind() || tap_under_qemu()) {
        skip("its abort under SWF_DEBUG=checks: in a child, not under valgrind or qemu");
        return;
    }
    static struct tap_child o;
    char *argv[] = {(char *)self, (char *)"left", NULL};
    tap_run_child(&o, argv, set_checks, NULL, child_of);
    char *nl = strchr(o.err, '\n');
    bool one_line = nl != NULL && nl[1] == '\0';
    ok(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT && one_line &&
           strncmp(o.err, "sweepfill: swf_feature_destroy: 1 objects", 41) == 0 &&
           strstr(o.err, "swf_feature_release") != NULL,
       "SWF_DEBUG=checks: destroy before a left member's release aborts with one line");
    if (!one_line || !WIFSIGNALED(o.status))
        diag("status %#x, stderr \"%s\"", o.status, o.err);
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return left_holding(false);
    headroom();
    add_reserve();
    owed_table();
    prepare();
    maintainer();
    destroy_busy();
    destroy_left(argv[0]);
    return tap_done();
}
