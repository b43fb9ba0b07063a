/*
 * test/unit/cache_bulk.c - the bulk calls and the inline path keep the single calls' contract.
 *
 * swf_cache_alloc_bulk fills only the NULL entries and says how many entries are set, so a
 * caller can retry with the same array; it fails with EAGAIN (NOWAIT) or ENOMEM (WAIT) when it
 * comes up short, and numbers each entry as one NOWAIT call under failure injection.
 * swf_cache_free_bulk skips NULL entries. Both work for threads with and without magazines of
 * their own. swf_cache_alloc_fast and swf_cache_free_fast hand out and take back the same objects
 * as the library calls, and fall back to them under injection. Counts balance throughout.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { N = 1000 };

static struct swf_cache_stats stats_of(struct swf_cache *c)
{
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    return s;
}

static int distinct(void **objs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = i + 1; k < n; k++)
            if (objs[i] == objs[k])
                return 0;
    return 1;
}

struct run {
    struct swf_cache *c;
    int bound;
    const char *who;
};

static void *bulk_contract(void *arg)
{
    struct run *r = arg;
    struct swf_cache *c = r->c;
    if (r->bound)
        swf_cache_grow(c, 0);
    void *objs[N];
    memset(objs, 0, sizeof(objs));
    size_t got = swf_cache_alloc_bulk(c, SWF_NOWAIT, objs, N);
    ok(got == N && distinct(objs, N), "%s: NOWAIT bulk fills %d entries with distinct objects",
       r->who, (int)got);
    swf_cache_free(c, objs[7]);
    swf_cache_free(c, objs[500]);
    objs[7] = NULL;
    objs[500] = NULL;
    got = swf_cache_alloc_bulk(c, SWF_NOWAIT, objs, N);
    ok(got == N && objs[7] != NULL && objs[500] != NULL && distinct(objs, N),
       "%s: a retry fills only the NULL entries", r->who);
    ok(swf_cache_free_bulk(c, objs, N) == 0 && stats_of(c).alive == 0,
       "%s: free_bulk gives all of them back", r->who);
    objs[3] = NULL;
    ok(swf_cache_free_bulk(c, objs + 3, 1) == 0, "%s: a NULL entry is skipped", r->who);
    return NULL;
}

static void run_thread(struct run *r, void *(*fn)(void *))
{
    pthread_t t;
    pthread_create(&t, NULL, fn, r);
    pthread_join(t, NULL);
}

static void short_and_invalid(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .limit = 100, .name = "short"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    void *objs[200];
    memset(objs, 0, sizeof(objs));
    errno = 0;
    size_t got = swf_cache_alloc_bulk(c, SWF_WAIT, objs, 200);
    int err = errno;
    ok(got == 100 && err == ENOMEM, "WAIT bulk beyond the limit: %zu set, ENOMEM (%d: %s)", got,
       err, swf_error_reason());
    void *more[10] = {0};
    got = swf_cache_alloc_bulk(c, SWF_NOWAIT, more, 10);
    err = errno;
    ok(got == 0 && err == EAGAIN, "NOWAIT bulk with nothing ready: 0 set, EAGAIN");
    swf_cache_free_bulk(c, objs, 200);
    got = swf_cache_alloc_bulk(NULL, SWF_NOWAIT, more, 10);
    err = errno;
    ok(got == 0 && err == EINVAL && strcmp(swf_error_reason(), "c is NULL") == 0,
       "bulk on NULL: 0, EINVAL (%s)", swf_error_reason());
    got = swf_cache_alloc_bulk(c, (enum swf_alloc_mode)7, more, 10);
    err = errno;
    ok(got == 0 && err == EINVAL, "bulk with a bad mode: EINVAL");
    got = swf_cache_alloc_bulk(c, SWF_NOWAIT, NULL, 3);
    err = errno;
    ok(got == 0 && err == EINVAL, "bulk into NULL: EINVAL");
    ok(swf_cache_alloc_bulk(c, SWF_NOWAIT, NULL, 0) == 0 && swf_cache_free_bulk(c, NULL, 0) == 0,
       "n = 0 with NULL: nothing to do");
    ok(swf_cache_free_bulk(NULL, objs, 1) == EINVAL && swf_cache_free_bulk(c, NULL, 1) == EINVAL,
       "free_bulk with NULL: EINVAL");
    ok(stats_of(c).alive == 0 && swf_cache_destroy(c) == 0, "balanced; destroy");
}

static void injected(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 2000, .name = "bulkinject"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    struct swf_failslab fs = {.probability = 100, .interval = 3, .times = -1};
    swf_cache_set_failslab(c, &fs);
    void *objs[300];
    memset(objs, 0, sizeof(objs));
    size_t got = swf_cache_alloc_bulk(c, SWF_NOWAIT, objs, 300);
    struct swf_cache_stats s = stats_of(c);
    ok(got == 200 && s.fails_injected == 100,
       "under injection (every third call), 300 entries are 300 calls: %zu set, %llu injected", got,
       (unsigned long long)s.fails_injected);
    void *f = swf_cache_alloc_fast(c);
    void *g = swf_cache_alloc_fast(c);
    void *h = swf_cache_alloc_fast(c);
    ok(f != NULL && g != NULL && h == NULL && stats_of(c).fails_injected == 101,
       "the inline path goes through the library while injection is on");
    swf_cache_free_fast(c, f);
    swf_cache_free_fast(c, g);
    swf_cache_set_failslab(c, NULL);
    swf_cache_free_bulk(c, objs, 300);
    ok(stats_of(c).alive == 0 && swf_cache_destroy(c) == 0, "balanced; destroy");
}

static void *inline_path(void *arg)
{
    struct run *r = arg;
    struct swf_cache *c = r->c;
    if (r->bound)
        swf_cache_grow(c, N);
    void *objs[N];
    int got = 0;
    for (int i = 0; i < N; i++)
        got += (objs[i] = swf_cache_alloc_fast(c)) != NULL;
    ok(got == N && distinct(objs, N), "%s: %d objects from the inline path, all distinct", r->who,
       got);
    for (int i = 0; i < N; i += 2)
        swf_cache_free_fast(c, objs[i]);
    for (int i = 1; i < N; i += 2)
        swf_cache_free(c, objs[i]);
    struct swf_cache_stats s = stats_of(c);
    ok(s.alive == 0 && s.allocs_nowait >= (uint64_t)N,
       "%s: inline and library frees mix; alive %llu", r->who, (unsigned long long)s.alive);
    ok(swf_cache_alloc_fast(NULL) == NULL && errno == EINVAL &&
           swf_cache_free_fast(NULL, objs[0]) == EINVAL && swf_cache_free_fast(c, NULL) == 0,
       "%s: NULL arguments: EINVAL as the library calls, a NULL object is nothing to do", r->who);
    return NULL;
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 2 * N, .name = "bulk"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    struct run bound = {c, 1, "a bound thread"}, shared = {c, 0, "a thread on the shared path"};
    run_thread(&bound, bulk_contract);
    run_thread(&shared, bulk_contract);
    run_thread(&bound, inline_path);
    run_thread(&shared, inline_path);
    ok(stats_of(c).alive == 0 && swf_cache_destroy(c) == 0, "balanced; destroy");
    short_and_invalid();
    injected();
    return tap_done();
}
