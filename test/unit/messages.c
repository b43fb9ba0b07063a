/*
 * test/unit/messages.c - what the library says names the public function the user called and
 * says enough to act on:
 *   - swf_feature_added's out-of-line half reports as swf_feature_added;
 *   - swf_feature_create names every NULL field of its config in one reason (and its line), and
 *     its other refusals name swf_feature_create and the field as cfg->sweep.FIELD;
 *   - swf_sweep names every NULL field; a sweep SWF_SWEEP_DEFINE generated names itself, for its
 *     checks and for its slot offset;
 *   - a NULL list pointer (list.list, what every ready-made adapter reads through) is refused
 *     at swf_sweep and swf_feature_create, with a reason naming the field, instead of crashing
 *     the first walk (swf_feature_activate);
 *   - a pin that was never initialised says so when retired or taken (not "grace period over
 *     twice"); a pin reused after free_fn without swf_pin_init says what to do;
 *   - swf_cache_grow beyond the magazine table states the most it can grow by and what to do.
 * Each case runs in a child (this program, executed again with SWF_DEBUG=checks, so that every
 * EINVAL is printed too) that prints swf_error_reason() on stdout; the parent checks the child's
 * exit or signal, its stdout and its stderr's first line.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/members.h"
#include "../common/child.h"

#include <sweepfill/feature.h>
#include <sweepfill/pin.h>

SWF_SWEEP_DEFINE(my_sweep, mla, payload_init)

enum { N = 16 };

struct item {
    void *slot;
    int id;
};

static struct item items[N];
static struct swf_array arr = {items, N, sizeof(struct item)};
static struct swf_cache *cache;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void grace(void *arg)
{
    (void)arg;
}

static void reason(void)
{
    printf("%s\n", swf_error_reason());
    fflush(stdout);
}

static void feature_config(struct swf_feature_config *fc)
{
    swf_feature_config_init(fc);
    fc->sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
    fc->sweep.cache = cache;
    fc->sweep.init = init_obj;
    swf_guard_none(&fc->sweep.guard);
    fc->synchronize = grace;
}

/* An active feature, kept in a static so that the child's exit leaves it reachable (LeakSanitizer
 * in the ASan build reports only what nothing points to). */
static struct swf_feature *active_feature(void)
{
    static struct swf_feature *f;
    struct swf_feature_config fc;
    feature_config(&fc);
    if (swf_feature_create(&fc, &f) != 0 || swf_feature_activate(f, NULL) != 0)
        exit(3);
    return f;
}

static void added_null_member(void)
{
    swf_feature_added(active_feature(), NULL, SWF_NOWAIT);
    reason();
}

static void added_bad_mode(void)
{
    swf_feature_added(active_feature(), &items[0], (enum swf_alloc_mode)7);
    reason();
}

static void feature_missing(void)
{
    struct swf_feature_config fc;
    feature_config(&fc);
    fc.sweep.init = NULL;
    fc.sweep.guard.enter = NULL;
    fc.sweep.guard.leave = NULL;
    fc.synchronize = NULL;
    struct swf_feature *f;
    swf_feature_create(&fc, &f);
    reason();
}

static void feature_all_missing(void)
{
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    struct swf_feature *f;
    swf_feature_create(&fc, &f);
    reason();
}

static void feature_synchronize_missing(void)
{
    struct swf_feature_config fc;
    feature_config(&fc);
    fc.synchronize = NULL;
    struct swf_feature *f;
    swf_feature_create(&fc, &f);
    reason();
}

static void feature_reserve_0(void)
{
    struct swf_feature_config fc;
    feature_config(&fc);
    fc.sweep.reserve = 0;
    struct swf_feature *f;
    swf_feature_create(&fc, &f);
    reason();
}

/* A NULL list head handed to an adapter: refused at create, not a crash at activate. */
static void feature_null_list(void)
{
    struct swf_feature_config fc;
    feature_config(&fc);
    fc.sweep.list = swf_list_array(NULL, offsetof(struct item, slot));
    struct swf_feature *f;
    if (swf_feature_create(&fc, &f) != EINVAL)
        exit(3);
    reason();
}

static void sweep_null_list(void)
{
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = mla_list(NULL);
    cfg.cache = cache;
    cfg.init = payload_init;
    swf_guard_none(&cfg.guard);
    if (swf_sweep(&cfg, NULL) != EINVAL)
        exit(3);
    reason();
}

static void define_null_list(void)
{
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = mla_list(NULL);
    cfg.cache = cache;
    swf_guard_none(&cfg.guard);
    if (my_sweep(&cfg, NULL) != EINVAL)
        exit(3);
    reason();
}

static void sweep_missing(void)
{
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = swf_list_array(&arr, offsetof(struct item, slot));
    swf_guard_none(&cfg.guard);
    swf_sweep(&cfg, NULL);
    reason();
}

static void define_missing(void)
{
    struct member_list list;
    CK_LIST_INIT(&list);
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = mla_list(&list);
    cfg.init = payload_init;
    swf_guard_none(&cfg.guard);
    my_sweep(&cfg, NULL); /* no cache */
    reason();
}

static void define_offset(void)
{
    struct member_list list;
    CK_LIST_INIT(&list);
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = mla_list(&list);
    cfg.list.slot_offset += sizeof(void *);
    cfg.cache = cache;
    cfg.init = payload_init;
    swf_guard_none(&cfg.guard);
    my_sweep(&cfg, NULL);
    reason();
}

/* A feature over a list that cannot pin: create says so (full checks), activate adds nothing
 * that names swf_sweep. */
static void feature_fallback(void)
{
    struct member_list list;
    CK_LIST_INIT(&list);
    struct swf_feature_config fc;
    feature_config(&fc);
    fc.sweep.list = ml_list(&list);
    fc.sweep.init = payload_init;
    struct swf_feature *f;
    if (swf_feature_create(&fc, &f) != 0 || swf_feature_activate(f, NULL) != 0 ||
        swf_feature_deactivate(f) != 0 || swf_feature_destroy(f) != 0)
        exit(3);
    reason();
}

static int frees;

static void free_pin(struct swf_pin *pin)
{
    (void)pin;
    frees++;
}

static struct swf_pin garbage_pin(void)
{
    struct swf_pin pin;
    memset(&pin, 0xa5, sizeof(pin)); /* what malloc'ed memory may hold */
    return pin;
}

static void pin_retire_uninit(void)
{
    struct swf_pin pin = garbage_pin();
    struct swf_grace g;
    swf_grace_lock(&g);
    swf_pin_retire(&pin, &g, free_pin);
    reason();
}

static void pin_get_uninit(void)
{
    struct swf_pin pin = garbage_pin();
    swf_pin_get(&pin);
    reason();
}

static void pin_reused(void)
{
    struct swf_pin pin;
    swf_pin_init(&pin);
    struct swf_grace g;
    swf_grace_lock(&g);
    if (swf_pin_retire(&pin, &g, free_pin) != 0 || frees != 1)
        exit(3);
    /* The member is linked again without swf_pin_init. */
    if (swf_pin_retire(&pin, &g, free_pin) != EALREADY)
        exit(4);
    reason();
}

static void grow_table(void)
{
    if (swf_cache_grow(cache, (size_t)1 << 40) != ENOMEM)
        exit(3);
    reason();
}

struct message_case {
    const char *name;
    void (*fn)(void);
};

static const struct message_case cases[] = {
    {"added_null_member", added_null_member},
    {"added_bad_mode", added_bad_mode},
    {"feature_missing", feature_missing},
    {"feature_all_missing", feature_all_missing},
    {"feature_synchronize_missing", feature_synchronize_missing},
    {"feature_reserve_0", feature_reserve_0},
    {"feature_null_list", feature_null_list},
    {"sweep_null_list", sweep_null_list},
    {"define_null_list", define_null_list},
    {"sweep_missing", sweep_missing},
    {"define_missing", define_missing},
    {"define_offset", define_offset},
    {"feature_fallback", feature_fallback},
    {"pin_retire_uninit", pin_retire_uninit},
    {"pin_get_uninit", pin_get_uninit},
    {"pin_reused", pin_reused},
    {"grow_table", grow_table},
};

static int child(const char *name)
{
    struct swf_cache_config cc = {.object_size = sizeof(struct payload), .name = "messages"};
    if (swf_cache_create(&cc, &cache) != 0)
        return 3;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (strcmp(cases[i].name, name) == 0) {
            cases[i].fn();
            return 0;
        }
    }
    return 2;
}

static const char *self;
static bool printing; /* the child prints every EINVAL (SWF_DEBUG=checks took effect) */

struct outcome {
    int status;
    char out[4096]; /* stdout's first line: swf_error_reason() */
    char err[4096]; /* stderr's first line */
    char all[4096]; /* stderr, its lines joined with " | " for one TAP line */
};

static int child_of(char *const argv[])
{
    return child(argv[1]);
}

static void set_checks(void *arg)
{
    (void)arg;
    setenv(SWF_DEBUG_ENV, "checks", 1);
}

/* Run case `name` in a child, with SWF_DEBUG=checks. */
static struct outcome run(const char *name)
{
    static struct tap_child c;
    char *argv[] = {(char *)self, (char *)name, NULL};
    tap_run_child(&c, argv, set_checks, NULL, child_of);
    struct outcome o = {.status = c.status};
    size_t w = 0, len = strlen(c.err);
    for (size_t i = 0; i < len && w + 4 < sizeof(o.all); i++) {
        if (c.err[i] != '\n') {
            o.all[w++] = c.err[i];
        } else if (i + 1 < len) {
            memcpy(o.all + w, " | ", 3);
            w += 3;
        }
    }
    o.all[w] = '\0';
    snprintf(o.out, sizeof(o.out), "%s", tap_first_line(c.out));
    snprintf(o.err, sizeof(o.err), "%s", tap_first_line(c.err));
    return o;
}

/* The case returns with reason `want` and, where EINVAL is printed, the line
 * "sweepfill: <fn>: EINVAL: <want>". */
static void expect_reason(const char *name, const char *fn, const char *want)
{
    struct outcome o = run(name);
    char line[1200];
    snprintf(line, sizeof(line), "sweepfill: %s: EINVAL: %s", fn, want);
    ok(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && strcmp(o.out, want) == 0 &&
           (!printing || strcmp(o.err, line) == 0),
       "%s: \"%s\" (status %#x, reason \"%s\", stderr \"%s\")", name, printing ? line : want,
       o.status, o.out, o.err);
}

/* The case aborts with "sweepfill: <fn>: " and a line that holds `what`. */
static void expect_abort(const char *name, const char *fn, const char *what)
{
    struct outcome o = run(name);
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "sweepfill: %s: ", fn);
    ok(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT &&
           strncmp(o.err, prefix, strlen(prefix)) == 0 && strstr(o.err, what) != NULL,
       "%s: aborts with \"%s...%s\" (status %#x, got \"%s\")", name, prefix, what, o.status, o.err);
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return child(argv[1]);
    self = argv[0];
    tap_require(strchr(self, '/') != NULL, "run by a path (argv[0] has a slash)");
    printing = !tap_under_qemu() || swf_debug_checks();

    expect_reason("added_null_member", "swf_feature_added", "member is NULL");
    expect_reason("added_bad_mode", "swf_feature_added", "mode is neither SWF_NOWAIT nor SWF_WAIT");
    expect_reason("feature_missing", "swf_feature_create",
                  "cfg->sweep.init, cfg->sweep.guard.enter, cfg->sweep.guard.leave and "
                  "cfg->synchronize are NULL");
    expect_reason("feature_all_missing", "swf_feature_create",
                  "cfg->sweep.list.ops, cfg->sweep.list.list, cfg->sweep.cache, cfg->sweep.init, "
                  "cfg->sweep.guard.enter, cfg->sweep.guard.leave and cfg->synchronize are NULL");
    expect_reason("feature_synchronize_missing", "swf_feature_create", "cfg->synchronize is NULL");
    expect_reason("feature_reserve_0", "swf_feature_create", "cfg->sweep.reserve is 0");
    expect_reason("feature_null_list", "swf_feature_create", "cfg->sweep.list.list is NULL");
    expect_reason("sweep_null_list", "swf_sweep", "cfg->list.list is NULL");
    expect_reason("define_null_list", "my_sweep", "cfg->list.list is NULL");
    expect_reason("sweep_missing", "swf_sweep", "cfg->cache and cfg->init are NULL");
    expect_reason("define_missing", "my_sweep", "cfg->cache is NULL");
    expect_reason("define_offset", "my_sweep",
                  "cfg->list.slot_offset is not the adapter's (its NAME_list() sets it)");

    /* swf_error_reason() is a constant string: a reason built from pieces stays as it was
     * after later failures, and the same one built again is the same string. */
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    struct swf_feature *f;
    swf_feature_create(&fc, &f);
    const char *first = swf_error_reason();
    char copy[512];
    snprintf(copy, sizeof(copy), "%s", first);
    struct swf_sweep_config sc;
    swf_sweep_config_init(&sc);
    swf_sweep(&sc, NULL);
    const char *second = swf_error_reason();
    swf_feature_create(&fc, &f);
    ok(strcmp(first, copy) == 0 && strcmp(first, second) != 0 && swf_error_reason() == first,
       "built reasons are constant: \"%s\" unchanged after \"%s\", and the same string again",
       first, second);

    struct outcome fb = run("feature_fallback");
    ok(WIFEXITED(fb.status) && WEXITSTATUS(fb.status) == 0 &&
           (!printing ||
            strncmp(fb.err, "sweepfill: swf_feature_create: the list cannot pin", 50) == 0) &&
           strstr(fb.all, "swf_sweep:") == NULL,
       "a feature on a list that cannot pin: create says so, activate names no swf_sweep "
       "(stderr \"%s\")",
       fb.all);

    expect_abort("pin_retire_uninit", "swf_pin_retire", "is not initialised");
    expect_abort("pin_retire_uninit", "swf_pin_retire", "swf_pin_init");
    expect_abort("pin_get_uninit", "swf_pin_get", "is not initialised");
    struct outcome o = run("pin_reused");
    ok(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && strstr(o.out, "swf_pin_init") != NULL,
       "a pin retired again after free_fn, without swf_pin_init: EALREADY, saying to call it "
       "(\"%s\")",
       o.out);

#define TABLE "n is beyond what the magazine table can still hold"
    o = run("grow_table");
    uint64_t most = 0, mags = 0, per = 0, all = 0;
    const char *at = strstr(o.out, ": at most ");
    int got =
        at ? sscanf(at,
                    ": at most %" SCNu64
                    " objects can be ready in this cache now (a cache's table has room for %" SCNu64
                    " magazines of %" SCNu64 " free objects: %" SCNu64 " in all)",
                    &most, &mags, &per, &all)
           : 0;
    ok(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 &&
           strncmp(o.out, TABLE, strlen(TABLE)) == 0 && got == 4 && per == SWF_CACHE_MAGAZINE &&
           all == mags * per && most > 0 && most <= all &&
           strstr(o.out, "grow by less, or spread the objects over more caches"),
       "swf_cache_grow beyond the magazine table states its limit and what to do (\"%s\")", o.out);
    return tap_done();
}
