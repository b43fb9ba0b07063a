/*
 * test/unit/cache_failslab.c - failure injection: parsing, determinism, probability, interval,
 * times, the environment variable, and that WAIT is never affected.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { CALLS = 1000 };

static struct swf_cache *make_named(const char *name, size_t prefill, int *err)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = prefill, .name = name};
    struct swf_cache *c = NULL;
    *err = swf_cache_create(&cfg, &c);
    return c;
}

static struct swf_cache *make(size_t prefill)
{
    int err;
    struct swf_cache *c = make_named("failslab", prefill, &err);
    tap_require(err == 0, "swf_cache_create");
    return c;
}

/* Run CALLS NOWAIT allocations (freeing each success at once) and record which failed. */
static int pattern(struct swf_cache *c, const struct swf_failslab *fs, uint8_t *failed)
{
    swf_cache_set_failslab(c, fs);
    int fails = 0;
    for (int k = 0; k < CALLS; k++) {
        void *o = swf_cache_alloc(c, SWF_NOWAIT);
        failed[k] = o == NULL;
        fails += o == NULL;
        swf_cache_free(c, o);
    }
    swf_cache_set_failslab(c, NULL);
    return fails;
}

static void test_parse(void)
{
    struct swf_failslab fs;
    char name[32], err[128];
    ok(swf_failslab_parse("probability=100,interval=1,times=-1,seed=42", &fs, name, sizeof(name),
                          err, sizeof(err)) == 0 &&
           fs.probability == 100 && fs.interval == 1 && fs.times == -1 && fs.seed == 42 &&
           name[0] == '\0',
       "parse the documented example");
    ok(swf_failslab_parse("probability=7", &fs, NULL, 0, NULL, 0) == 0 && fs.probability == 7 &&
           fs.interval == 1 && fs.times == -1 && fs.seed == 0,
       "defaults: interval 1, times -1, seed 0");
    ok(swf_failslab_parse("seed=0xff,probability=0,cache=objs,times=3,interval=0", &fs, name,
                          sizeof(name), err, sizeof(err)) == 0 &&
           fs.seed == 255 && fs.times == 3 && fs.interval == 0 && strcmp(name, "objs") == 0,
       "any key order, hex seed, cache= name");
    static const char *bad[] = {
        "",
        "probability",
        "probability=101",
        "probability=-1",
        "probability=abc",
        "probability=50,",
        "probability=50,,seed=1",
        "probability=50,bogus=1",
        "probability=50,times=-2",
        "probability=50,interval=-3",
        "probability=50,seed=1x",
        "probability=50,seed=99999999999999999999999",
        "interval=3",
        "probability=50,cache=",
        "probability= 5",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        int r = swf_failslab_parse(bad[i], &fs, name, sizeof(name), err, sizeof(err));
        ok(r == EINVAL && err[0] != '\0', "reject \"%s\": %s", bad[i], err);
    }
    ok(swf_failslab_parse("probability=010,seed=010", &fs, NULL, 0, NULL, 0) == 0 &&
           fs.probability == 10 && fs.seed == 10,
       "a leading zero is still decimal (010 is 10, not octal 8)");
    ok(swf_failslab_parse("probability=08,seed=0XfF,times=-1", &fs, NULL, 0, NULL, 0) == 0 &&
           fs.probability == 8 && fs.seed == 255 && fs.times == -1,
       "08 is 8; 0X hex in either case; times=-1");
    static const char *bad_numbers[] = {"probability=5,interval=\t-1", "probability=5,seed=\n-1",
                                        "probability=5,seed=0x",       "probability=5,seed=-1",
                                        "probability=5,times=-2",      "probability=0x",
                                        "probability=5,times=+3"};
    for (size_t i = 0; i < sizeof(bad_numbers) / sizeof(bad_numbers[0]); i++)
        ok(swf_failslab_parse(bad_numbers[i], &fs, NULL, 0, NULL, 0) == EINVAL,
           "reject malformed number %zu (whitespace, sign, empty hex)", i);
    ok(swf_failslab_parse(NULL, &fs, NULL, 0, NULL, 0) == EINVAL, "NULL spec is EINVAL");
    ok(swf_failslab_parse("probability=1", NULL, NULL, 0, NULL, 0) == EINVAL, "NULL out is EINVAL");
    ok(swf_failslab_parse("probability=1,cache=waytoolongname", &fs, name, 4, err, sizeof(err)) ==
           EINVAL,
       "a cache name that does not fit is EINVAL");
}

static void test_determinism(void)
{
    struct swf_cache *c = make(4096);
    static uint8_t a[CALLS], b[CALLS], d[CALLS];
    struct swf_failslab fs = {.probability = 30, .interval = 1, .times = -1, .seed = 1234};
    int fa = pattern(c, &fs, a);
    int fb = pattern(c, &fs, b);
    fs.seed = 1235;
    int fd = pattern(c, &fs, d);
    ok(fa == fb && memcmp(a, b, CALLS) == 0, "the same seed gives the same failure sequence");
    ok(memcmp(a, d, CALLS) != 0, "another seed gives another sequence");
    ok(fa > CALLS * 20 / 100 && fa < CALLS * 40 / 100 && fd > CALLS * 20 / 100 &&
           fd < CALLS * 40 / 100,
       "probability 30 fails about 30%% of %d calls (%d, %d)", CALLS, fa, fd);
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    ok(s.fails_injected == (uint64_t)(fa + fb + fd) && s.fails_nowait == 0,
       "injected failures are counted apart from natural ones");
    swf_cache_destroy(c);
}

static void test_probability_interval_times(void)
{
    struct swf_cache *c = make(4096);
    static uint8_t f[CALLS];
    struct swf_failslab fs = {.probability = 100, .interval = 1, .times = -1, .seed = 9};
    ok(pattern(c, &fs, f) == CALLS, "probability 100 fails every NOWAIT call");
    fs.probability = 0;
    ok(pattern(c, &fs, f) == 0, "probability 0 fails none");
    fs.probability = 100;
    fs.interval = 3;
    int fails = pattern(c, &fs, f);
    bool every_third = true;
    for (int k = 0; k < CALLS; k++)
        every_third = every_third && f[k] == (k % 3 == 2);
    ok(fails == CALLS / 3 && every_third, "interval 3: exactly calls 2, 5, 8, ... fail (%d)",
       fails);
    fs.interval = 1;
    fs.times = 5;
    fails = pattern(c, &fs, f);
    ok(fails == 5 && f[0] && f[4] && !f[5], "times 5: the first five calls fail, then none");
    fs.times = 0;
    ok(pattern(c, &fs, f) == 0, "times 0: injection is spent before it starts");

    fs.times = -1;
    swf_cache_set_failslab(c, &fs);
    int got = 0;
    void *objs[100];
    for (int i = 0; i < 100; i++)
        got += (objs[i] = swf_cache_alloc(c, SWF_WAIT)) != NULL;
    ok(got == 100, "at probability 100, WAIT allocations are unaffected");
    for (int i = 0; i < 100; i++)
        swf_cache_free(c, objs[i]);
    swf_cache_set_failslab(c, NULL);
    void *o = swf_cache_alloc(c, SWF_NOWAIT);
    ok(o != NULL, "clearing injection restores NOWAIT");
    swf_cache_free(c, o);
    ok(swf_cache_destroy(c) == 0, "destroy");
}

static void test_environment(void)
{
    int err;
    setenv(SWF_FAILSLAB_ENV, "probability=100,times=-1,seed=42", 1);
    struct swf_cache *c = make_named("env", 64, &err);
    ok(err == 0 && swf_cache_alloc(c, SWF_NOWAIT) == NULL && errno == EAGAIN,
       "SWF_FAILSLAB applies to caches created while it is set");
    swf_cache_destroy(c);

    setenv(SWF_FAILSLAB_ENV, "probability=100,cache=other", 1);
    c = make_named("env", 64, &err);
    void *o = err == 0 ? swf_cache_alloc(c, SWF_NOWAIT) : NULL;
    ok(o != NULL, "cache= limits it to caches of that name");
    swf_cache_free(c, o);
    swf_cache_destroy(c);
    c = make_named("other", 64, &err);
    ok(err == 0 && swf_cache_alloc(c, SWF_NOWAIT) == NULL, "... and the named cache gets it");
    swf_cache_destroy(c);

    setenv(SWF_FAILSLAB_ENV, "probability=lots", 1);
    c = make_named("env", 64, &err);
    ok(err == EINVAL && c == NULL, "a malformed SWF_FAILSLAB makes create fail with EINVAL");
    unsetenv(SWF_FAILSLAB_ENV);
}

int main(void)
{
    test_parse();
    test_determinism();
    test_probability_interval_times();
    test_environment();
    return tap_done();
}
