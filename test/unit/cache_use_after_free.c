/*
 * test/unit/cache_use_after_free.c - with the full checks on (SWF_DEBUG=checks), a write into a
 * freed object beyond its first 8 bytes (the free mark) aborts with one line that names
 * swf_cache_free, the cache, the object and the byte, when the object is allocated again, when
 * its magazine moves to the depot, and when the cache is destroyed; in the per-CPU mode and in
 * the per-thread mode (SWF_PERCPU=0). An object freed and not written is handed out again
 * without a word, also after a bulk free (which does not touch the objects, so poisons none).
 * Each case runs in a child (this program, executed again with the case's name) that prints the
 * pointer it writes to on stdout; the parent checks the child's signal and its stderr line.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <sweepfill/cache.h>

#include "../common/child.h"

enum { SIZE = 64, GROW = 200, BYTE = 24 };

static struct swf_cache *cache;

static void say(void *p)
{
    printf("%p\n", p);
    fflush(stdout);
}

/* Allocate until o comes back (the objects taken meanwhile stay allocated); false if it never
 * does among the cache's objects. */
static bool alloc_until(void *o)
{
    for (int i = 0; i < 4 * GROW; i++) {
        void *p = swf_cache_alloc(cache, SWF_NOWAIT);
        if (p == o)
            return true;
        if (p == NULL && swf_cache_grow(cache, GROW) != 0)
            return false;
    }
    return false;
}

static void *freed_and_written(void)
{
    char *o = swf_cache_alloc(cache, SWF_NOWAIT);
    say(o);
    swf_cache_free(cache, o);
    o[BYTE] = 0x41; /* the use after free */
    return o;
}

static int realloc_written(void)
{
    return alloc_until(freed_and_written()) ? 0 : 4;
}

static int realloc_written_fast(void)
{
    char *o = swf_cache_alloc_fast(cache);
    say(o);
    swf_cache_free_fast(cache, o);
    o[SIZE - 1] = 0;
    void *p;
    while ((p = swf_cache_alloc_fast(cache)) != o)
        if (p == NULL)
            return 4;
    return 0;
}

static int flush_written(void)
{
    freed_and_written();
    swf_cache_flush(cache); /* the magazine that holds it goes to the depot */
    return 0;
}

static int destroy_written(void)
{
    void *keep[GROW]; /* a magazine's worth more than one, so the object leaves its magazine */
    for (int i = 0; i < SWF_CACHE_MAGAZINE + 1; i++)
        keep[i] = swf_cache_alloc(cache, SWF_NOWAIT);
    char *o = keep[0];
    say(o);
    for (int i = 0; i < SWF_CACHE_MAGAZINE + 1; i++)
        swf_cache_free(cache, keep[i]);
    o[BYTE] = 0x41;
    return swf_cache_destroy(cache) == 0 ? 0 : 5;
}

static int deferred_written(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    char *o = swf_cache_alloc(cache, SWF_NOWAIT);
    say(o);
    void *objs[1] = {o};
    swf_cache_free_deferred(cache, &rec, objs, 1);
    swf_cache_quiesce(cache, &rec); /* the grace period is over: o is free */
    o[BYTE] = 0x41;
    return alloc_until(o) ? 0 : 4;
}

/* No write: every object comes back without an abort, and the cache is destroyed. */
static int clean(void)
{
    void *objs[GROW];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < GROW; i++)
            objs[i] = swf_cache_alloc(cache, SWF_NOWAIT);
        for (int i = 0; i < GROW; i++)
            if (objs[i] == NULL)
                return 4;
        if (round == 1) {
            swf_cache_free_bulk(cache, objs, GROW); /* not poisoned: nothing to find */
        } else {
            for (int i = 0; i < GROW; i++)
                swf_cache_free(cache, objs[i]);
        }
        swf_cache_flush(cache);
    }
    say(NULL);
    return swf_cache_destroy(cache) == 0 ? 0 : 5;
}

struct uaf_case {
    const char *name;
    int (*fn)(void);
};

static const struct uaf_case cases[] = {
    {"realloc", realloc_written}, {"realloc_fast", realloc_written_fast}, {"flush", flush_written},
    {"destroy", destroy_written}, {"deferred", deferred_written},         {"clean", clean},
};

static int child(const char *name)
{
    struct swf_cache_config cfg = {.object_size = SIZE, .name = "uaf"};
    if (swf_cache_create(&cfg, &cache) != 0 || swf_cache_grow(cache, GROW) != 0)
        return 3;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (strcmp(cases[i].name, name) == 0)
            return cases[i].fn();
    return 2;
}

static int child_of(char *const argv[])
{
    return child(argv[1]);
}

/* SWF_DEBUG=checks, and SWF_PERCPU as the case asks (NULL: the default). */
static void set_env(void *arg)
{
    setenv(SWF_DEBUG_ENV, "checks", 1);
    if (arg != NULL)
        setenv("SWF_PERCPU", arg, 1);
    else
        unsetenv("SWF_PERCPU");
}

static const char *self;

static struct tap_child *run(const char *name, const char *percpu)
{
    static struct tap_child o;
    char *argv[] = {(char *)self, (char *)name, NULL};
    tap_run_child(&o, argv, set_env, (void *)percpu, child_of);
    tap_first_line(o.out);
    tap_first_line(o.err);
    return &o;
}

static void expect_abort(const char *name, const char *percpu, int byte)
{
    struct tap_child o = *run(name, percpu);
    char want[sizeof(o.out) + 128];
    snprintf(want, sizeof(want),
             "sweepfill: swf_cache_free: cache 'uaf': object %s was written after it was freed "
             "(byte %d changed",
             o.out, byte);
    ok(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT && o.out[0] != '\0' &&
           strncmp(o.err, want, strlen(want)) == 0,
       "%s (SWF_PERCPU=%s): aborts with \"%s...\" (status %#x, got \"%s\")", name,
       percpu ? percpu : "default", want, o.status, o.err);
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return child(argv[1]);
    self = argv[0];
    tap_require(strchr(self, '/') != NULL, "run by a path (argv[0] has a slash)");
    if (tap_under_qemu()) {
        skip("qemu-user cannot exec this program again (no binfmt_misc) with SWF_DEBUG set");
        return tap_done();
    }
    const char *modes[] = {NULL, "0"};
    for (int m = 0; m < 2; m++) {
        expect_abort("realloc", modes[m], BYTE);
        expect_abort("realloc_fast", modes[m], SIZE - 1);
        expect_abort("flush", modes[m], BYTE);
        expect_abort("destroy", modes[m], BYTE);
        expect_abort("deferred", modes[m], BYTE);
        struct tap_child o = *run("clean", modes[m]);
        ok(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0,
           "clean (SWF_PERCPU=%s): objects freed and not written come back, and destroy "
           "succeeds (status %#x, stderr \"%s\")",
           modes[m] ? modes[m] : "default", o.status, o.err);
    }
    return tap_done();
}
