/*
 * test/unit/cache_validate.c - the full checks' validator (lib/cache/validate.c) finds a cache
 * whose books do not balance, and passes one that is sound.
 *   - sound: a cache with the full checks, used by a bound thread (across magazines), by threads
 *     without magazines (the shared states and the depot), through bulk calls and deferred frees,
 *     is destroyed without complaint;
 *   - unsound, each in a child that corrupts one thing and destroys the cache: a counter of the
 *     depot, of the loose list or of the capacity off by one, a foreign pointer in a thread's
 *     magazine, an object's state byte, an uncarved object written to, a magazine that claims
 *     more than it can hold (caught when it is moved to the depot, not at destroy). Each child must
 * abort with the line that names the equation;
 *   - without the full checks, destroy does not validate (a corrupt counter goes unseen).
 * Built from the library's sources, to reach its structures.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ck_epoch.h>

#include "cache/cache_internal.h"

#include "../common/tap.h"

static struct swf_cache *make(unsigned checks)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "books", .checks = checks};
    struct swf_cache *c;
    if (swf_cache_create(&cfg, &c) != 0 || swf_cache_grow(c, 1000) != 0)
        exit(3);
    return c;
}

/* Allocate n and free them again, in an order that moves magazines to and from the depot. */
static void churn(struct swf_cache *c, size_t n)
{
    void **objs = calloc(n, sizeof(void *));
    for (size_t i = 0; i < n; i++)
        objs[i] = swf_cache_alloc(c, SWF_NOWAIT);
    for (size_t i = 0; i < n; i++)
        if (objs[i] != NULL)
            swf_cache_free(c, objs[n - 1 - i]);
    free(objs);
}

static void *unbound(void *arg)
{
    churn(arg, 150);
    return NULL;
}

static void use_everywhere(struct swf_cache *c)
{
    churn(c, 300); /* this thread: bound by the grow */
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, unbound, c);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    void *objs[100] = {0};
    size_t got = swf_cache_alloc_bulk(c, SWF_NOWAIT, objs, 100);
    swf_cache_free_bulk(c, objs + 50, got - 50);
    ck_epoch_t epoch;
    ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    swf_cache_free_deferred(c, &rec, objs, 50);
    swf_cache_quiesce(c, &rec);
}

enum corruption { DEPOT, LOOSE, CAPACITY, FOREIGN, STATE, OVERFULL, UNCARVED, NCORRUPTIONS };
static const char *const expected[NCORRUPTIONS] = {
    [DEPOT] = "objects on the depot (walked against x_depot_objs)",
    [LOOSE] = "loose objects (walked against x_loose_objs)",
    [CAPACITY] = "ready objects (magazines + depot + loose + uncarved against capacity - alive)",
    [FOREIGN] = "in a magazine is not one of its objects",
    [STATE] = "in a magazine is in state 1, not free",
    [OVERFULL] = "swfi_depot_put: cache 'books' is inconsistent: a magazine holds 61 objects",
    [UNCARVED] = "is inconsistent: uncarved object",
};

static void corrupt(struct swf_cache *c, enum corruption what)
{
    static char foreign[64];
    void *one = swf_cache_alloc(c, SWF_NOWAIT);
    swf_cache_free(c, one); /* this thread's loaded magazine holds at least one object */
    struct swfi_tstate *ts = swfi_tls_get(&c->owner);
    struct swfi_magazine *m = swfi_ts_loaded(ts);
    switch (what) {
    case DEPOT:
        c->x_depot_objs++;
        break;
    case LOOSE:
        c->x_loose_objs++;
        break;
    case CAPACITY:
        c->x_capacity++;
        break;
    case FOREIGN:
        m->pub.obj[0] = foreign;
        break;
    case STATE:
        *swfi_obj_state(c, m->pub.obj[0]) = OBJ_ALLOC;
        break;
    case OVERFULL:
        m->pub.n = SWF_CACHE_MAGAZINE + 1;
        swfi_tstate_release(c, ts); /* its magazines go to the depot */
        break;
    case UNCARVED: /* the last object of the first chunk: never carved by this test's use */
        memset(c->chunks->base + (c->chunks->nobjs - 1) * c->stride, 0xa5, 8);
        break;
    default:
        break;
    }
}

/* Run a child that corrupts c and destroys it; returns its signal (0: it exited) and its stderr
 * in err. */
static int child(enum corruption what, unsigned checks, char *err, size_t len)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        abort();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 2);
        struct swf_cache *c = make(checks);
        use_everywhere(c);
        corrupt(c, what);
        int rc = swf_cache_destroy(c);
        _exit(rc == 0 ? 0 : 1);
    }
    close(pipefd[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < len && (r = read(pipefd[0], err + got, len - 1 - got)) > 0)
        got += (size_t)r;
    err[got] = '\0';
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int main(void)
{
    struct swf_cache *c = make(1);
    use_everywhere(c);
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    ok(s.alive == 0 && s.ready == s.capacity && s.capacity >= 1000,
       "used everywhere: nothing alive, all %llu ready", (unsigned long long)s.ready);
    ok(swf_cache_destroy(c) == 0, "a sound cache with the full checks is destroyed");

    if (tap_under_qemu()) {
        skip(TAP_QEMU_THREADED_FORK);
        return tap_done();
    }
    char err[4096];
    for (int what = 0; what < NCORRUPTIONS; what++) {
        int sig = child(what, 1, err, sizeof(err));
        ok(sig == SIGABRT && strstr(err, expected[what]) != NULL,
           "corruption %d: abort (signal %d) with \"%s\"", what, sig, expected[what]);
        if (sig != SIGABRT || strstr(err, expected[what]) == NULL)
            diag("stderr: %s", err);
    }
    if (swfi_checks_all())
        skip("the full checks are on for every cache here (a debug-check build, or SWF_DEBUG)");
    else
        ok(child(DEPOT, 0, err, sizeof(err)) == 0,
           "without the full checks, destroy does not validate (the corrupt counter goes unseen)");
    return tap_done();
}
