/*
 * test/unit/cache_misuse.c - misuse of a cache or a pin ends in an abort with one line on stderr
 * that names sweepfill, the function, the pointer and the cache, never in a corrupt cache:
 *   - in every build (release included): a double free of an object still in the freeing
 *     thread's magazines, its free mark untouched (swf_cache_free, swf_cache_free_fast; the
 *     object freed last or an earlier one; also by a thread without magazines of its own, in the
 *     shared pair it borrows), a free of another cache's object (of the same size or
 *     another), of a malloc'd pointer, of a pointer into an object (also through
 *     swf_cache_free_deferred, swf_cache_free_bulk and a thread without magazines), and
 *     swf_pin_put without a get;
 *   - with the full checks (SWF_DEBUG=checks in the environment, swf_cache_config.checks = 1, or a
 *     debug-check build): also a double free of an object that has left the thread's magazines,
 *     an entry given twice to swf_cache_free_bulk (which reads no mark), and frees of objects
 *     queued for a deferred free.
 * Each case runs in a child (this program, executed again with the case's name) that prints the
 * pointer it misuses on stdout; the parent checks the child's signal and its stderr line.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <sweepfill/cache.h>
#include <sweepfill/pin.h>

#include "../common/child.h"

static struct swf_cache *make(const char *name, size_t size, unsigned checks)
{
    struct swf_cache_config cfg = {.object_size = size, .name = name, .checks = checks};
    struct swf_cache *c;
    if (swf_cache_create(&cfg, &c) != 0 || swf_cache_grow(c, 200) != 0)
        exit(3);
    return c;
}

/* The child's pointer, for the parent to find in the message. */
static void *say(void *p)
{
    printf("%p\n", p);
    fflush(stdout);
    return p;
}

static struct swf_cache *cache; /* "misuse", 64-byte objects */
static ck_epoch_record_t rec;

static void double_free(void)
{
    void *o = say(swf_cache_alloc(cache, SWF_NOWAIT));
    swf_cache_free(cache, o);
    swf_cache_free(cache, o);
}

static void double_free_fast(void)
{
    void *o = say(swf_cache_alloc_fast(cache));
    swf_cache_free_fast(cache, o);
    swf_cache_free_fast(cache, o);
}

/* Not the object freed last: the mark, not a memory of the last free, catches it. */
static void double_free_earlier(void)
{
    void *a = say(swf_cache_alloc(cache, SWF_NOWAIT)), *b = swf_cache_alloc(cache, SWF_NOWAIT);
    swf_cache_free(cache, a);
    swf_cache_free(cache, b);
    swf_cache_free(cache, a);
}

static void double_free_earlier_fast(void)
{
    void *a = say(swf_cache_alloc_fast(cache)), *b = swf_cache_alloc_fast(cache);
    swf_cache_free_fast(cache, a);
    swf_cache_free_fast(cache, b);
    swf_cache_free_fast(cache, a);
}

/* Only the full checks: a bulk free reads no mark. */
static void double_free_bulk(void)
{
    void *o[3] = {swf_cache_alloc(cache, SWF_NOWAIT), NULL, NULL};
    o[2] = say(o[0]);
    swf_cache_free_bulk(cache, o, 3);
}

/* The reported sequence: before, the next two NOWAIT allocations returned the same pointer. */
static void double_free_then_alloc(void)
{
    void *o = say(swf_cache_alloc(cache, SWF_NOWAIT));
    swf_cache_free(cache, o);
    swf_cache_free(cache, o);
    void *a = swf_cache_alloc(cache, SWF_NOWAIT), *b = swf_cache_alloc(cache, SWF_NOWAIT);
    fprintf(stderr, "not caught: %p %p\n", a, b);
}

static void other_cache_same_size(void)
{
    struct swf_cache *d = make("other", 64, 0);
    swf_cache_free(cache, say(swf_cache_alloc(d, SWF_NOWAIT)));
}

/* A 64-byte object freed into a cache of 4 KiB objects: before, later handed out as 4 KiB. */
static void other_size(void)
{
    struct swf_cache *big = make("big", 4096, 0);
    swf_cache_free(big, say(swf_cache_alloc(cache, SWF_NOWAIT)));
}

static void other_cache_fast(void)
{
    struct swf_cache *d = make("other", 64, 0);
    void *o = swf_cache_alloc(cache, SWF_NOWAIT);
    swf_cache_free(cache, swf_cache_alloc(cache, SWF_NOWAIT)); /* the chunk checked last */
    swf_cache_free(cache, o);
    swf_cache_free_fast(cache, say(swf_cache_alloc(d, SWF_NOWAIT)));
}

static void malloc_pointer(void)
{
    swf_cache_free(cache, say(malloc(64)));
}

static void interior_pointer(void)
{
    swf_cache_free(cache, say((char *)swf_cache_alloc(cache, SWF_NOWAIT) + 8));
}

/* Right after a legitimate free, so that the chunk is the thread's cached one: the fast test
 * itself must refuse it. */
static void interior_pointer_fast(void)
{
    char *o = swf_cache_alloc(cache, SWF_NOWAIT), *p = swf_cache_alloc(cache, SWF_NOWAIT);
    swf_cache_free_fast(cache, o);
    swf_cache_free_fast(cache, say(p + 64 / 2));
}

static void deferred_malloc_pointer(void)
{
    void *o = say(malloc(64));
    swf_cache_free_deferred(cache, &rec, &o, 1);
}

static void *free_unbound(void *arg)
{
    swf_cache_free(cache, arg); /* a thread that never made a blocking call: the depot path */
    return NULL;
}

/* A thread without magazines of its own frees through a shared pair it borrows: the second free
 * finds the mark and the object in that pair. */
static void *double_free_shared(void *arg)
{
    (void)arg;
    void *o = say(swf_cache_alloc(cache, SWF_NOWAIT));
    swf_cache_free(cache, o);
    swf_cache_free(cache, o);
    return NULL;
}

static void unbound_double_free(void)
{
    pthread_t t;
    pthread_create(&t, NULL, double_free_shared, NULL);
    pthread_join(t, NULL);
}

static void unbound_malloc_pointer(void)
{
    pthread_t t;
    pthread_create(&t, NULL, free_unbound, say(malloc(64)));
    pthread_join(t, NULL);
}

static void bulk_other_cache(void)
{
    struct swf_cache *d = make("other", 64, 0);
    void *o[2] = {swf_cache_alloc(cache, SWF_NOWAIT), say(swf_cache_alloc(d, SWF_NOWAIT))};
    swf_cache_free_bulk(cache, o, 2);
}

static void pin_free(struct swf_pin *p)
{
    (void)p;
}

static void pin_put_without_get(void)
{
    static struct swf_pin pin;
    swf_pin_init(&pin);
    say(&pin);
    swf_pin_put(&pin);
    struct swf_grace g;
    swf_grace_lock(&g);
    swf_pin_retire(&pin, &g, pin_free);
}

/* Only the full checks: the object has gone to the depot, out of this thread's magazines. */
static void depot_double_free(void)
{
    void *o = say(swf_cache_alloc(cache, SWF_NOWAIT));
    swf_cache_free(cache, o);
    swf_cache_flush(cache);
    swf_cache_free(cache, o);
}

static void free_while_deferred(void)
{
    void *o = say(swf_cache_alloc(cache, SWF_NOWAIT));
    swf_cache_free_deferred(cache, &rec, &o, 1);
    swf_cache_free(cache, o);
}

static void defer_twice(void)
{
    void *o = say(swf_cache_alloc(cache, SWF_NOWAIT));
    swf_cache_free_deferred(cache, &rec, &o, 1);
    swf_cache_free_deferred(cache, &rec, &o, 1);
}

/* Not an abort: the reason of an EINVAL on stderr, with the full checks on for the process. */
static void einval(void)
{
    struct swf_cache *c;
    say(NULL);
    swf_cache_create(NULL, &c);
}

static void report(void)
{
    say((void *)(size_t)swf_debug_checks());
}

struct misuse {
    const char *name;
    void (*fn)(void);
};

static const struct misuse cases[] = {
    {"double_free", double_free},
    {"double_free_fast", double_free_fast},
    {"double_free_earlier", double_free_earlier},
    {"double_free_earlier_fast", double_free_earlier_fast},
    {"double_free_bulk", double_free_bulk},
    {"double_free_then_alloc", double_free_then_alloc},
    {"other_cache_same_size", other_cache_same_size},
    {"other_size", other_size},
    {"other_cache_fast", other_cache_fast},
    {"malloc_pointer", malloc_pointer},
    {"interior_pointer", interior_pointer},
    {"interior_pointer_fast", interior_pointer_fast},
    {"deferred_malloc_pointer", deferred_malloc_pointer},
    {"unbound_malloc_pointer", unbound_malloc_pointer},
    {"unbound_double_free", unbound_double_free},
    {"bulk_other_cache", bulk_other_cache},
    {"pin_put_without_get", pin_put_without_get},
    {"depot_double_free", depot_double_free},
    {"free_while_deferred", free_while_deferred},
    {"defer_twice", defer_twice},
    {"report", report},
    {"einval", einval},
};

/* Child: argv[1] names the case, argv[2] is "checks" for a cache with cfg.checks = 1. */
static int child(const char *name, const char *how)
{
    static ck_epoch_t epoch;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    cache = make("misuse", 64, strcmp(how, "checks") == 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (strcmp(cases[i].name, name) == 0) {
            cases[i].fn();
            return 0; /* not caught */
        }
    }
    return 2;
}

static const char *self;

static int child_of(char *const argv[])
{
    return child(argv[1], argv[2]);
}

/* SWF_DEBUG set to arg, or unset (arg NULL). */
static void set_debug(void *arg)
{
    if (arg != NULL)
        setenv(SWF_DEBUG_ENV, arg, 1);
    else
        unsetenv(SWF_DEBUG_ENV);
}

/* Run case `name` in a child; env_checks: with SWF_DEBUG=checks; how: "plain" or "checks". The
 * first lines of its stdout (the pointer) and stderr. */
static struct tap_child *run(const char *name, bool env_checks, const char *how)
{
    static struct tap_child o;
    char *argv[] = {(char *)self, (char *)name, (char *)how, NULL};
    tap_run_child(&o, argv, set_debug, env_checks ? "checks" : NULL, child_of);
    tap_first_line(o.out);
    tap_first_line(o.err);
    return &o;
}

/* The case aborts with "sweepfill: <fn>: " + a line that holds `what` and the pointer. */
static void expect_abort(const char *name, bool env_checks, const char *how, const char *fn,
                         const char *what)
{
    struct tap_child o = *run(name, env_checks, how);
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "sweepfill: %s: ", fn);
    ok(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT &&
           strncmp(o.err, prefix, strlen(prefix)) == 0 && strstr(o.err, what) != NULL &&
           o.out[0] != '\0' && strstr(o.err, o.out) != NULL,
       "%s%s%s: aborts with \"%s...%s...%s\" (status %#x, got \"%s\")", name,
       env_checks ? " (SWF_DEBUG=checks)" : "", strcmp(how, "checks") ? "" : " (cfg.checks)",
       prefix, what, o.out, o.status, o.err);
}

static void always_on(bool env_checks)
{
    expect_abort("double_free", env_checks, "plain", "swf_cache_free", "double free of 0x");
    expect_abort("double_free", env_checks, "plain", "swf_cache_free", "(cache 'misuse')");
    expect_abort("double_free_fast", env_checks, "plain", "swf_cache_free", "double free of 0x");
    expect_abort("double_free_earlier", env_checks, "plain", "swf_cache_free", "double free of 0x");
    expect_abort("double_free_earlier_fast", env_checks, "plain", "swf_cache_free",
                 "double free of 0x");
    expect_abort("double_free_then_alloc", env_checks, "plain", "swf_cache_free",
                 "(cache 'misuse')");
    expect_abort("other_cache_same_size", env_checks, "plain", "swf_cache_free",
                 "was not allocated from cache 'misuse' (it belongs to cache 'other'");
    expect_abort("other_size", env_checks, "plain", "swf_cache_free",
                 "was not allocated from cache 'big' (it belongs to cache 'misuse', of 64-byte");
    expect_abort("other_cache_fast", env_checks, "plain", "swf_cache_free",
                 "was not allocated from cache 'misuse' (it belongs to cache 'other'");
    expect_abort("malloc_pointer", env_checks, "plain", "swf_cache_free",
                 "was not allocated from cache 'misuse' (no cache holds it)");
    expect_abort("interior_pointer", env_checks, "plain", "swf_cache_free",
                 "was not allocated from cache 'misuse' (it points inside an object)");
    expect_abort("interior_pointer_fast", env_checks, "plain", "swf_cache_free",
                 "was not allocated from cache 'misuse' (it points inside an object)");
    expect_abort("deferred_malloc_pointer", env_checks, "plain", "swf_cache_free_deferred",
                 "was not allocated from cache 'misuse'");
    expect_abort("unbound_malloc_pointer", env_checks, "plain", "swf_cache_free",
                 "was not allocated from cache 'misuse'");
    expect_abort("unbound_double_free", env_checks, "plain", "swf_cache_free", "double free of 0x");
    expect_abort("bulk_other_cache", env_checks, "plain", "swf_cache_free_bulk",
                 "was not allocated from cache 'misuse' (it belongs to cache 'other'");
    expect_abort("pin_put_without_get", env_checks, "plain", "swf_pin_put",
                 "released more often than taken");
}

/* What only the full checks catch, turned on by `env_checks` or `how`. */
static void full_checks(bool env_checks, const char *how)
{
    expect_abort("depot_double_free", env_checks, how, "swf_cache_free", "double free of 0x");
    expect_abort("depot_double_free", env_checks, how, "swf_cache_free", "(cache 'misuse')");
    expect_abort("double_free_bulk", env_checks, how, "swf_cache_free_bulk", "double free of 0x");
    expect_abort("free_while_deferred", env_checks, how, "swf_cache_free",
                 "is already queued for a deferred free (cache 'misuse')");
    expect_abort("defer_twice", env_checks, how, "swf_cache_free_deferred",
                 "is already queued for a deferred free (cache 'misuse')");
}

int main(int argc, char **argv)
{
    if (argc == 3)
        return child(argv[1], argv[2]);
    self = argv[0];
    tap_require(strchr(self, '/') != NULL, "run by a path (argv[0] has a slash)");

    always_on(false);
    /* SWF_DEBUG is read when the library loads: its cases need a fresh process (exec). */
    if (tap_under_qemu()) {
        skip("qemu-user cannot exec this program again (no binfmt_misc) with SWF_DEBUG set; a "
             "native build runs the SWF_DEBUG=checks cases");
        full_checks(false, "checks");
        return tap_done();
    }
    always_on(true);

    struct tap_child o = *run("report", true, "plain");
    ok(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && strcmp(o.out, "0x1") == 0,
       "SWF_DEBUG=checks: swf_debug_checks() is 1 (got %s)", o.out);
    o = *run("report", false, "plain");
    ok(WIFEXITED(o.status) && strcmp(o.out, swf_debug_checks() ? "0x1" : "(nil)") == 0,
       "without SWF_DEBUG: swf_debug_checks() is what the build says (got %s)", o.out);

    o = *run("einval", true, "plain");
    ok(WIFEXITED(o.status) &&
           strcmp(o.err, "sweepfill: swf_cache_create: EINVAL: cfg is NULL") == 0,
       "SWF_DEBUG=checks: an EINVAL prints its reason (got \"%s\")", o.err);
    if (!swf_debug_checks()) {
        o = *run("einval", false, "plain");
        ok(WIFEXITED(o.status) && o.err[0] == '\0', "without full checks: it prints nothing");
    }

    full_checks(true, "plain");
    full_checks(false, "checks");
    if (swf_debug_checks()) {
        full_checks(false, "plain");
    } else {
        /* Documented as caught by the full checks only: without them, what it does is not the
         * test's business (undefined behaviour), so it is not run. */
        skip("without full checks: a double free of an object in the depot is not caught");
        skip("without full checks: an entry given twice to swf_cache_free_bulk is not caught");
    }
    return tap_done();
}
