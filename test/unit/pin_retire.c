/*
 * test/unit/pin_retire.c - the library's pin (pin.h): a retired member is freed exactly once, by
 * whichever comes last of its grace period and the last put, with each grace mechanism (lock:
 * at once; ck_epoch: at the barrier; a hand-made one: whenever it says); linked says false from
 * the retire on; bad arguments get EINVAL and a second retire EALREADY, never a crash; debug
 * builds abort on a put without a get and on a get after the grace period.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <sweepfill/pin.h>

#include "../common/tap.h"

struct thing {
    struct swf_pin pin;
    int frees;
};

static int total_frees;

static void free_thing(struct swf_pin *pin)
{
    struct thing *t = (struct thing *)(void *)((char *)pin - offsetof(struct thing, pin));
    t->frees++;
    total_frees++;
}

/* A hand-made grace mechanism: remembers the pin; the test says when the period is over. */
static struct swf_pin *deferred;

static void defer_by_hand(void *arg, struct swf_pin *pin)
{
    (void)arg;
    deferred = pin;
}

static void test_arguments(void)
{
    struct thing t;
    memset(&t, 0, sizeof(t));
    struct swf_grace g;
    swf_grace_lock(&g);
    ok(swf_pin_retire(NULL, &g, free_thing) == EINVAL, "retire(NULL pin) is EINVAL");
    ok(swf_pin_retire(&t.pin, NULL, free_thing) == EINVAL, "retire(NULL grace) is EINVAL");
    ok(swf_pin_retire(&t.pin, &g, NULL) == EINVAL, "retire(NULL free_fn) is EINVAL");
    ok(swf_pin_linked(&t.pin), "the failed retires left the pin linked");
    swf_pin_get(NULL);
    swf_pin_put(NULL);
    swf_pin_grace_over(NULL);
    swf_pin_init(NULL);
    swf_grace_lock(NULL);
    swf_grace_epoch(NULL, NULL);
    swf_grace_epoch(&g, NULL);
    ok(!swf_pin_linked(NULL) && total_frees == 0,
       "get, put, grace_over, init, graces and linked do nothing with NULL");
    ok(swf_pin_from_grace_storage(swf_pin_grace_storage(&t.pin)) == &t.pin,
       "grace storage and back is the same pin");
}

static void test_lock_grace(void)
{
    struct swf_grace g;
    swf_grace_lock(&g);
    struct thing a, b, c;
    memset(&a, 0, sizeof(a)); /* zero-filled: a valid, linked, unpinned pin */
    swf_pin_init(&b.pin);
    b.frees = 0;
    memset(&c, 0, sizeof(c));

    ok(swf_pin_linked(&a.pin) && swf_pin_linked(&b.pin), "zeroed and initialised pins are linked");
    ok(swf_pin_retire(&a.pin, &g, free_thing) == 0 && a.frees == 1,
       "lock grace, unpinned: retire frees at once");

    swf_pin_get(&b.pin);
    ok(swf_pin_retire(&b.pin, &g, free_thing) == 0 && b.frees == 0 && !swf_pin_linked(&b.pin),
       "lock grace, pinned: retire does not free; linked is false");
    swf_pin_put(&b.pin);
    ok(b.frees == 1, "the sweep's put frees it");

    swf_pin_get(&c.pin);
    swf_pin_get(&c.pin); /* two sweeps */
    swf_pin_retire(&c.pin, &g, free_thing);
    swf_pin_put(&c.pin);
    ok(c.frees == 0, "pinned twice: the first put does not free");
    swf_pin_put(&c.pin);
    ok(c.frees == 1, "the last put frees, once");
}

static void test_hand_grace(void)
{
    struct swf_grace g = {defer_by_hand, NULL};
    struct thing a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));

    ok(swf_pin_retire(&a.pin, &g, free_thing) == 0 && deferred == &a.pin && a.frees == 0,
       "deferred grace: retire hands the pin to defer and frees nothing");
    ok(swf_pin_retire(&a.pin, &g, free_thing) == EALREADY && a.frees == 0,
       "a second retire is EALREADY and changes nothing");
    swf_pin_grace_over(deferred);
    ok(a.frees == 1, "grace over, unpinned: freed then");

    swf_pin_get(&b.pin);
    swf_pin_retire(&b.pin, &g, free_thing);
    swf_pin_grace_over(deferred);
    ok(b.frees == 0, "grace over while pinned: not freed");
    swf_pin_put(&b.pin);
    ok(b.frees == 1, "the put after the grace period frees, once");
}

static void test_epoch_grace(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_grace g;
    swf_grace_epoch(&g, &rec);
    struct thing a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));

    swf_pin_retire(&a.pin, &g, free_thing);
    ok(a.frees == 0, "epoch grace: not freed at retire");
    ck_epoch_barrier(&rec);
    ok(a.frees == 1, "freed by ck_epoch_barrier's callback");

    ck_epoch_begin(&rec, NULL);
    swf_pin_get(&b.pin); /* a sweep pins inside its section */
    ck_epoch_end(&rec, NULL);
    swf_pin_retire(&b.pin, &g, free_thing);
    ck_epoch_barrier(&rec);
    ok(b.frees == 0, "pinned across the grace period: the callback does not free");
    swf_pin_put(&b.pin);
    ok(b.frees == 1, "the put frees, once");
    ck_epoch_unregister(&rec);
}

/* Every build: misuse aborts with the function's name. */
static void put_without_get(void)
{
    struct thing t;
    memset(&t, 0, sizeof(t));
    swf_pin_put(&t.pin);
}

static void get_after_grace(void)
{
    struct thing t;
    memset(&t, 0, sizeof(t));
    struct swf_grace g = {defer_by_hand, NULL};
    swf_pin_get(&t.pin);
    swf_pin_retire(&t.pin, &g, free_thing);
    swf_pin_grace_over(deferred);
    swf_pin_get(&t.pin);
}

static void grace_over_unretired(void)
{
    struct thing t;
    memset(&t, 0, sizeof(t));
    swf_pin_init(&t.pin);
    swf_pin_grace_over(&t.pin);
}

static void expect_abort(void (*fn)(void), const char *what, const char *message)
{
    int fds[2];
    tap_require(pipe(fds) == 0, "pipe");
    fflush(stdout);
    pid_t pid = fork();
    tap_require(pid >= 0, "fork");
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    char buf[512] = {0};
    size_t len = 0;
    ssize_t r;
    while (len < sizeof(buf) - 1 && (r = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)r;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, message) != NULL,
       "%s aborts with \"%s\"", what, message);
}

int main(void)
{
    test_arguments();
    test_lock_grace();
    test_hand_grace();
    test_epoch_grace();
    ok(total_frees == 7, "7 retired things, 7 frees");
    /* In every build: each is a test of the value the atomic operation returned anyway. */
    expect_abort(put_without_get, "a put without a get", "sweepfill: swf_pin_put:");
    expect_abort(get_after_grace, "a get after the grace period", "sweepfill: swf_pin_get:");
    expect_abort(grace_over_unretired, "a grace_over for a pin never retired",
                 "sweepfill: swf_pin_grace_over:");
    return tap_done();
}
