/*
 * bench/common/lists.c - the member lists, clock, timed guard and flag parsing that the benchmark
 * families share (see lists.h).
 */
#include "lists.h"
#include "shim/swfb.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/cache.h>

#define MAX_LISTS 16

static struct blist lists[MAX_LISTS];
static size_t nlists;

/* splitmix64: a fixed, seedable sequence, so every run links the same permutation. */
static uint64_t mix_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void bench_order(size_t *order, size_t n, bool shuffled)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (!shuffled)
        return;
    uint64_t seed = 0x5357463a5345ull ^ n;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(mix_next(&seed) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

static int blist_build(struct blist *l, size_t n, bool shuffled)
{
    size_t bytes = (n ? n : 1) * sizeof(struct bmember);
    l->m = aligned_alloc(64, bytes);
    size_t *order = malloc((n ? n : 1) * sizeof(size_t));
    if (l->m == NULL || order == NULL) {
        free(l->m);
        free(order);
        l->m = NULL;
        return ENOMEM;
    }
    memset(l->m, 0, bytes); /* faults the pages in now, not during a measurement */
    for (size_t i = 0; i < n; i++)
        l->m[i].id = i;
    bench_order(order, n, shuffled);
    CK_LIST_INIT(&l->head);
    /* Insert at the head in reverse, so the list runs order[0], order[1], ... */
    for (size_t i = n; i-- > 0;)
        CK_LIST_INSERT_HEAD(&l->head, &l->m[order[i]], link);
    free(order);
    l->n = n;
    l->shuffled = shuffled;
    return 0;
}

struct blist *blist_get(size_t n, bool shuffled)
{
    for (size_t i = 0; i < nlists; i++)
        if (lists[i].n == n && lists[i].shuffled == shuffled)
            return &lists[i];
    if (nlists == MAX_LISTS)
        return NULL;
    if (blist_build(&lists[nlists], n, shuffled) != 0)
        return NULL;
    return &lists[nlists++];
}

void blist_clear(struct blist *l)
{
    for (size_t i = 0; i < l->n; i++)
        l->m[i].slot = NULL;
}

size_t blist_release(struct blist *l, struct swf_cache *c, const void *sentinel)
{
    size_t freed = 0;
    for (size_t i = 0; i < l->n; i++) {
        void *obj = l->m[i].slot;
        if (obj != NULL && obj != sentinel) {
            swf_cache_free(c, obj);
            freed++;
        }
        l->m[i].slot = NULL;
    }
    return freed;
}

size_t blist_release_reverse(struct blist *l, struct swf_cache *c, const void *sentinel)
{
    void **objs = malloc((l->n ? l->n : 1) * sizeof(void *));
    if (objs == NULL)
        return (size_t)-1;
    size_t k = 0;
    struct bmember *m;
    CK_LIST_FOREACH(m, &l->head, link)
    {
        if (m->slot != NULL && m->slot != sentinel && k < l->n)
            objs[k++] = m->slot;
        m->slot = NULL;
    }
    for (size_t i = k; i-- > 0;)
        swf_cache_free(c, objs[i]);
    free(objs);
    blist_clear(l);
    return k;
}

size_t blist_empty(const struct blist *l)
{
    size_t empty = 0;
    for (size_t i = 0; i < l->n; i++)
        empty += l->m[i].slot == NULL;
    return empty;
}

/* ---- epoch and the timed guard ------------------------------------------------------------- */

static ck_epoch_t bench_epoch;
static _Thread_local ck_epoch_record_t *my_record;
static pthread_once_t epoch_once = PTHREAD_ONCE_INIT;

static void epoch_init_once(void)
{
    ck_epoch_init(&bench_epoch);
}

ck_epoch_record_t *bench_epoch_record(void)
{
    if (my_record != NULL)
        return my_record;
    pthread_once(&epoch_once, epoch_init_once);
    ck_epoch_record_t *rec = calloc(1, sizeof(*rec));
    if (rec == NULL) {
        fprintf(stderr, "bench: out of memory for an epoch record\n");
        abort();
    }
    ck_epoch_register(&bench_epoch, rec, NULL);
    my_record = rec;
    return rec;
}

static void timed_enter(void *arg)
{
    struct timed_guard *tg = arg;
    tg->inner.enter(tg->inner.arg);
    tg->entered_ns = bench_now_ns();
}

static void timed_leave(void *arg)
{
    struct timed_guard *tg = arg;
    tg->inside_ns += bench_now_ns() - tg->entered_ns;
    tg->inner.leave(tg->inner.arg);
}

void timed_guard_init(struct timed_guard *tg, struct swf_guard *out)
{
    memset(tg, 0, sizeof(*tg));
    swf_guard_epoch(&tg->inner, bench_epoch_record());
    out->enter = timed_enter;
    out->leave = timed_leave;
    out->arg = tg;
    out->flags = 0;
}

/* ---- flags ----------------------------------------------------------------------------------- */

const char *bench_take_flag(int *argc, char **argv, const char *name)
{
    const char *value = NULL;
    size_t len = strlen(name);
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, name, len) == 0 &&
            (a[2 + len] == '\0' || a[2 + len] == '=')) {
            value = a[2 + len] == '=' ? a + 3 + len : "";
            continue;
        }
        argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    return value;
}

int bench_parse_list(const char *s, int64_t *out, int max)
{
    int count = 0;
    while (*s != '\0') {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno != 0 || v <= 0)
            return -1;
        if (*end == 'k')
            v *= 1000, end++;
        else if (*end == 'M')
            v *= 1000000, end++;
        if (count == max || (*end != ',' && *end != '\0'))
            return -1;
        out[count++] = v;
        s = *end == ',' ? end + 1 : end;
    }
    return count;
}

int bench_take_list_flag(int *argc, char **argv, const char *program, const char *name,
                         int64_t *out, int max, int *count)
{
    const char *v = bench_take_flag(argc, argv, name);
    if (v == NULL)
        return 0;
    int k = bench_parse_list(v, out, max);
    if (k <= 0) {
        fprintf(stderr, "%s: --%s=%s: expected a comma-separated list of numbers\n", program, name,
                v);
        return -1;
    }
    *count = k;
    return 0;
}

void bench_args_size_n(struct swfb_bench *b, const int64_t *sizes, int nsizes, const int64_t *ns,
                       int nn)
{
    swfb_bench_arg_names(b, "size", "n");
    for (int s = 0; s < nsizes; s++)
        for (int k = 0; k < nn; k++)
            swfb_bench_args2(b, sizes[s], ns[k]);
}
