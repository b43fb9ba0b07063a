/*
 * test/unit/env_values.c - the environment variables validate their values (sweepfill(7),
 * ENVIRONMENT), and swf_cache_percpu_reason says why the process has its mode.
 *
 * Each case runs this program again as a child with one variable set, its stderr captured: a
 * value not understood prints exactly one line naming the variable (with its value) and the
 * accepted values, and the default applies; a value understood prints nothing naming it. The
 * child reports what it got on stdout: the mode and its reason, whether the full checks are on,
 * whether a feature uses membarrier, and what swf_cache_create returned.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sweepfill/sweepfill.h>

#include "../common/child.h"

struct item {
    void *slot;
};

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void grace(void *arg)
{
    (void)arg;
}

/* The child: one line "mode=M checks=C membarrier=B create=E reason=...". */
static int child(void)
{
    struct swf_cache *c = NULL;
    struct swf_cache_config cfg = {.object_size = 64, .name = "env"};
    int create = swf_cache_create(&cfg, &c);
    int membarrier = -1;
    if (create == 0) {
        static struct item items[4];
        static struct swf_array arr = {items, 4, sizeof(struct item)};
        struct swf_feature_config fc;
        swf_feature_config_init(&fc);
        fc.sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
        fc.sweep.cache = c;
        fc.sweep.init = init_obj;
        swf_guard_none(&fc.sweep.guard);
        fc.synchronize = grace;
        struct swf_feature *f;
        if (swf_feature_create(&fc, &f) == 0) {
            struct swf_feature_stats st;
            swf_feature_stats(f, &st);
            membarrier = (int)st.membarrier;
            swf_feature_destroy(f);
        }
        swf_cache_destroy(c);
    }
    printf("mode=%d checks=%d membarrier=%d create=%d reason=%s\n", swf_cache_percpu(),
           swf_debug_checks(), membarrier, create, swf_cache_percpu_reason());
    return 0;
}

struct result {
    int mode, checks, membarrier, create;
    char reason[520];
    int lines_naming; /* stderr lines naming the variable with a value: NAME=" or NAME=x */
    char line[520];   /* the first of them */
};

static const char *tunables; /* GLIBC_TUNABLES for the children, when not NULL */

struct env_setting {
    const char *name, *value;
};

/* In the child: the library's variables unset but for name=value (value NULL: unset too). */
static void set_env(void *arg)
{
    const struct env_setting *e = arg;
    unsetenv("SWF_PERCPU");
    unsetenv("SWF_DEBUG");
    unsetenv("SWF_FAILSLAB");
    unsetenv("SWF_NO_MEMBARRIER");
    if (e->value != NULL)
        setenv(e->name, e->value, 1);
    if (tunables != NULL)
        setenv("GLIBC_TUNABLES", tunables, 1);
}

/* Run the child with name=value (value NULL: unset) and every other variable of the test's. */
static struct result run(const char *self, const char *name, const char *value)
{
    struct result r = {.mode = -9};
    static struct tap_child c;
    struct env_setting e = {name, value};
    char *argv[] = {(char *)self, "child", NULL};
    tap_run_child(&c, argv, set_env, &e, NULL);
    const char *reason = strstr(c.out, "reason=");
    sscanf(c.out, "mode=%d checks=%d membarrier=%d create=%d", &r.mode, &r.checks, &r.membarrier,
           &r.create);
    if (reason != NULL) {
        snprintf(r.reason, sizeof(r.reason), "%s", reason + 7);
        r.reason[strcspn(r.reason, "\n")] = '\0';
    }
    char key[64];
    snprintf(key, sizeof(key), "%s=", name);
    for (char *line = strtok(c.err, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (strstr(line, key) != NULL && r.lines_naming++ == 0)
            snprintf(r.line, sizeof(r.line), "%s", line);
    }
    return r;
}

static bool has(const char *s, const char *word)
{
    return strstr(s, word) != NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    if (tap_under_qemu()) {
        skip("qemu-user cannot exec this program again (no binfmt_misc); a native build runs the "
             "environment's cases");
        return tap_done();
    }
    const char *self = "/proc/self/exe";
    char path[4096];
    ssize_t n = readlink(self, path, sizeof(path) - 1);
    tap_require(n > 0, "readlink /proc/self/exe");
    path[n] = '\0';

    /* The default, for comparison: no variable set. */
    struct result def = run(path, "SWF_PERCPU", NULL);
    ok(def.mode >= 0 && def.lines_naming == 0 && has(def.reason, "default"),
       "unset: mode %d, no line, the reason names the default (\"%s\")", def.mode, def.reason);
    ok(def.create == 0 && def.membarrier >= 0, "unset: a cache and a feature are made");

    /* SWF_PERCPU. */
    const char *off[] = {"0", "off", "no", "false", "OFF"};
    for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
        struct result r = run(path, "SWF_PERCPU", off[i]);
        char want[64];
        snprintf(want, sizeof(want), "SWF_PERCPU=%s", off[i]);
        ok(r.mode == 0 && r.lines_naming == 0 && has(r.reason, want) && has(r.reason, "per-thread"),
           "SWF_PERCPU=%s: the per-thread mode, no line, the reason says so (\"%s\")", off[i],
           r.reason);
    }
    const char *on[] = {"1", "on", "yes", "true"};
    for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
        struct result r = run(path, "SWF_PERCPU", on[i]);
        /* Where the default is per-thread (no rseq here), asking for per-CPU says so once. */
        int lines = def.mode == 0 ? 1 : 0;
        ok(r.mode == def.mode && r.lines_naming == lines,
           "SWF_PERCPU=%s: the default's mode (%d), %d line(s) (%d: %s)", on[i], r.mode, lines,
           r.lines_naming, r.line);
    }
    const char *bad[] = {"chekcs", "2", "percpu", "cpuid"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct result r = run(path, "SWF_PERCPU", bad[i]);
        ok(r.mode == def.mode && r.lines_naming == 1 && has(r.line, bad[i]) &&
               has(r.line, "cpu_id") && has(r.line, "off") && has(r.line, "default"),
           "SWF_PERCPU=%s: one line naming it and the accepted values, the default applies "
           "(mode %d): %s",
           bad[i], r.mode, r.line);
        ok(has(r.reason, "not understood") && has(r.reason, bad[i]),
           "SWF_PERCPU=%s: the reason says the value was not understood (\"%s\")", bad[i],
           r.reason);
    }
    if (def.mode == 0) {
        struct result r = run(path, "SWF_PERCPU", "cpu_id");
        ok(r.mode == 0 && r.lines_naming == 1 && has(r.line, "asked for per-CPU"),
           "SWF_PERCPU=cpu_id without the per-CPU mode: one line says so (%s)", r.line);
    } else {
        struct result r = run(path, "SWF_PERCPU", "cpu_id");
        ok(r.mode == 1 && r.lines_naming == 0 && has(r.reason, "CPU's number"),
           "SWF_PERCPU=cpu_id: indexed by the CPU's number, no line (\"%s\")", r.reason);
    }

    /* Without rseq (glibc told not to register it): the default says why; asking for per-CPU
     * magazines prints one line. */
    tunables = "glibc.pthread.rseq=0";
    struct result r = run(path, "SWF_PERCPU", NULL);
    ok(r.mode == 0 && r.lines_naming == 0 && has(r.reason, "default, but") &&
           has(r.reason, "rseq") && has(r.reason, "per-thread"),
       "no rseq, unset: the per-thread mode, no line, the reason says why (\"%s\")", r.reason);
    const char *ask[] = {"1", "cpu_id"};
    for (size_t i = 0; i < sizeof(ask) / sizeof(ask[0]); i++) {
        r = run(path, "SWF_PERCPU", ask[i]);
        ok(r.mode == 0 && r.lines_naming == 1 && has(r.line, "asked for per-CPU") &&
               has(r.line, "rseq") && has(r.reason, "per-thread"),
           "no rseq, SWF_PERCPU=%s: the per-thread mode and one line saying so: %s", ask[i],
           r.line);
    }
    tunables = NULL;

    /* SWF_DEBUG. */
    r = run(path, "SWF_DEBUG", "checks");
    ok(r.checks == 1 && r.lines_naming == 0, "SWF_DEBUG=checks: the checks on, no line");
    r = run(path, "SWF_DEBUG", "chekcs");
    ok(r.checks == def.checks && r.lines_naming == 1 && has(r.line, "chekcs") &&
           has(r.line, "checks"),
       "SWF_DEBUG=chekcs: one line naming it and the accepted word, the default applies "
       "(checks %d): %s",
       r.checks, r.line);
    r = run(path, "SWF_DEBUG", "checks,verbose");
    ok(r.checks == 1 && r.lines_naming == 1 && has(r.line, "verbose"),
       "SWF_DEBUG=checks,verbose: the checks on, one line naming the unknown word: %s", r.line);

    /* SWF_NO_MEMBARRIER (the feature's fence path). */
    if (def.membarrier == 1) {
        r = run(path, "SWF_NO_MEMBARRIER", "1");
        ok(r.membarrier == 0 && r.lines_naming == 0, "SWF_NO_MEMBARRIER=1: the fence path");
        r = run(path, "SWF_NO_MEMBARRIER", "off");
        ok(r.membarrier == 1 && r.lines_naming == 0, "SWF_NO_MEMBARRIER=off: membarrier");
        r = run(path, "SWF_NO_MEMBARRIER", "maybe");
        ok(r.membarrier == 1 && r.lines_naming == 1 && has(r.line, "maybe") &&
               has(r.line, "true") && has(r.line, "default"),
           "SWF_NO_MEMBARRIER=maybe: one line naming it and the accepted values, the default "
           "applies (membarrier %d): %s",
           r.membarrier, r.line);
    } else {
        skip("no membarrier here (%d): SWF_NO_MEMBARRIER changes nothing", def.membarrier);
    }

    /* SWF_FAILSLAB: malformed is never ignored (cache.h): create fails, with one line. */
    r = run(path, "SWF_FAILSLAB", "probabilty=5");
    ok(r.create == EINVAL && r.lines_naming == 1 && has(r.line, "probabilty=5") &&
           has(r.line, "probability=P[,interval=I][,times=T][,seed=S][,cache=NAME]"),
       "SWF_FAILSLAB=probabilty=5: create fails with EINVAL (%d) and one line naming it and the "
       "accepted syntax: %s",
       r.create, r.line);
    r = run(path, "SWF_FAILSLAB", "probability=0");
    ok(r.create == 0 && r.lines_naming == 0, "SWF_FAILSLAB=probability=0: accepted, no line");
    return tap_done();
}
