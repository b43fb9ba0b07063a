/*
 * examples/shadow_stack.c - a small userspace function-graph tracer: the use case sweepfill was
 * made for, for real.
 *
 * T threads each register in a registry and run instrumented recursive work. Every instrumented
 * function, on entry, loads its thread's slot (an acquire load: NULL means "not traced") and
 * pushes its return address on that 4 KiB shadow stack; on exit it pops and checks the address.
 * Turning tracing on activates the registry: one sweep gives every thread its shadow stack, even
 * threads still registering. Turning it off deactivates it: every stack is taken back and freed
 * after a grace period, while threads keep running. A thread runs each unit of work inside a
 * read-side section, so a stack it is using cannot be freed under it.
 *
 * Phases: start (threads start and register), untraced, trace on (activate), traced, trace off
 * (deactivate), untraced again, stop (threads unregister). (Activation while members register
 * concurrently is what test/concurrent/registry_churn.c exercises.) Each prints its time, the
 * activation's passes and visits, and the calls traced. At the end every shadow stack must have
 * been balanced after every unit of work, no call may have been traced after tracing was switched
 * off, and every stack must be back in the cache. Exit status 0 when all holds.
 *
 *   shadow_stack [--threads N] [--ms MS] [--depth D] [--pause-us US] [--bound K] [--failslab]
 * Defaults: 64 threads, 300 ms per phase, depth 12, a pause of 1000 us, section bound 1024 (about
 * a second on 2 cores). Build it against an installed sweepfill with nothing else:
 *   cc -O2 -o shadow_stack examples/shadow_stack.c $(pkg-config --cflags --libs sweepfill)
 * Each thread pauses US microseconds (default 1000) between units of work, as a thread that works
 * and then waits would; --pause-us 0 keeps every thread busy, which on a machine with far fewer
 * cores than threads makes each grace period wait for every preempted reader to be scheduled.
 * Thousands of threads waking every millisecond saturate a small machine by themselves: on 2
 * cores, 1,000 threads want --pause-us 20000 and 10,000 threads --pause-us 200000.
 * --failslab runs with every NOWAIT allocation failing (SWF_FAILSLAB, unless already set), so the
 * activation sweep takes each stack from its reserve and refills it again and again.
 */
/* usleep, setenv and CLOCK_THREAD_CPUTIME_ID under any -std= (they are POSIX and BSD, not C). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sweepfill/sweepfill.h>

#define STACK_BYTES 4096
#define STACK_SLOTS ((STACK_BYTES - 4 * sizeof(uint64_t)) / sizeof(uintptr_t))

/* One thread's shadow stack: exactly the 4 KiB the cache hands out. */
struct shadow_stack {
    uint64_t depth;
    uint64_t owner;    /* the thread it was made for */
    uint64_t overruns; /* deeper than the stack holds: counted, not stored */
    uint64_t reserved;
    uintptr_t ret[STACK_SLOTS];
};

struct tracee {
    struct swf_node node; /* the registry's member: SWF_CONTAINER_OF finds the tracee */
    uint64_t id;
    pthread_t thread;
    uint64_t calls;      /* instrumented calls run */
    uint64_t traced;     /* of those, traced */
    uint64_t traced_off; /* traced after tracing was switched off */
    uint64_t unbalanced; /* units of work that left a stack's depth changed */
    uint64_t mismatched; /* pops that did not find their own return address */
    int released;
};

static struct swf_registry *registry;
static struct swf_cache *stacks;
static int opt_depth = 12;
static int opt_pause_us = 1000;
static int phase; /* 0 running untraced, 1 tracing on, 2 tracing off, 3 stop */
static int registered;

static void init_stack(void *obj, void *node, void *arg)
{
    (void)arg;
    struct shadow_stack *s = obj;
    s->depth = 0;
    s->overruns = 0;
    s->owner = SWF_CONTAINER_OF(node, struct tracee, node)->id;
}

/* A counter only its thread writes; the main thread reads it while the thread runs. */
static void bump(uint64_t *c)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static struct shadow_stack *my_stack(struct tracee *t)
{
    return swf_node_object(&t->node);
}

/* The instrumented function: a recursion of the given depth, with the tracer's entry and exit
 * hooks around its body. */
static __attribute__((noinline)) uint64_t work(struct tracee *t, int depth)
{
    struct shadow_stack *s = my_stack(t); /* entry hook: traced iff the slot is set now */
    uintptr_t ret = (uintptr_t)__builtin_return_address(0);
    if (s != NULL) {
        if (s->depth < STACK_SLOTS)
            s->ret[s->depth] = ret;
        else
            s->overruns++;
        s->depth++;
        bump(&t->traced);
        if (__atomic_load_n(&phase, __ATOMIC_RELAXED) >= 2)
            bump(&t->traced_off);
    }
    bump(&t->calls);
    uint64_t sum = depth <= 0 ? 1 : work(t, depth - 1) + work(t, depth - 2);
    if (s != NULL) { /* exit hook: pop from the stack the entry pushed on */
        s->depth--;
        if (s->depth < STACK_SLOTS && s->ret[s->depth] != ret)
            t->mismatched++;
    }
    return sum;
}

static void *tracee_main(void *arg)
{
    struct tracee *t = arg;
    if (swf_registry_add(registry, &t->node) != 0)
        abort();
    __atomic_add_fetch(&registered, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) < 3) {
        /* One unit of work in one read section: the stack it uses stays valid throughout. */
        struct swf_reader *rd = swf_registry_read_lock(registry);
        struct shadow_stack *s = my_stack(t);
        uint64_t before = s ? s->depth : 0;
        work(t, opt_depth);
        if (s != NULL && s->depth != before)
            t->unbalanced++;
        swf_registry_read_unlock(rd);
        if (opt_pause_us > 0)
            usleep((useconds_t)opt_pause_us); /* a thread that works, then waits for more */
    }
    return NULL;
}

static void on_release(struct swf_node *n)
{
    __atomic_store_n(&SWF_CONTAINER_OF(n, struct tracee, node)->released, 1, __ATOMIC_RELEASE);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the calling thread: with far more threads than cores, the wall-clock time of a
 * phase is mostly waiting for a CPU; this says what the work itself cost. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t sum_traced(struct tracee *t, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += __atomic_load_n(&t[i].traced, __ATOMIC_RELAXED);
    return s;
}

static uint64_t sum_calls(struct tracee *t, int n)
{
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += __atomic_load_n(&t[i].calls, __ATOMIC_RELAXED);
    return s;
}

static void run_for(int ms)
{
    usleep((useconds_t)ms * 1000);
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--threads N] [--ms MS] [--depth D] [--pause-us US] [--bound K] "
            "[--failslab]\n",
            argv0);
    exit(2);
}

static long number(const char *s, const char *argv0, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > max)
        usage(argv0);
    return v;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows even when piped */
    int threads = 64, ms = 300;
    size_t bound = 1024;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = (int)number(argv[++i], argv[0], 100000);
        else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
            ms = (int)number(argv[++i], argv[0], 600000);
        else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc)
            opt_depth = (int)number(argv[++i], argv[0], 24);
        else if (strcmp(argv[i], "--pause-us") == 0 && i + 1 < argc)
            opt_pause_us = (int)number(argv[++i], argv[0], 1000000);
        else if (strcmp(argv[i], "--bound") == 0 && i + 1 < argc)
            bound = (size_t)number(argv[++i], argv[0], LONG_MAX);
        else if (strcmp(argv[i], "--failslab") == 0)
            setenv(SWF_FAILSLAB_ENV, "probability=100,interval=1,times=-1,seed=1", 0);
        else
            usage(argv[0]);
    }
    if (threads < 1)
        usage(argv[0]);

    struct swf_cache_config ccfg = {
        .object_size = sizeof(struct shadow_stack), .align = 4096, .name = "shadow-stacks"};
    int err = swf_cache_create(&ccfg, &stacks);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s\n", strerror(err));
        return 1;
    }
    struct swf_registry_config rcfg;
    swf_registry_config_init(&rcfg);
    rcfg.cache = stacks;
    rcfg.init = init_stack;
    rcfg.section_bound = bound;
    if ((err = swf_registry_create(&rcfg, &registry)) != 0) {
        fprintf(stderr, "swf_registry_create: %s\n", strerror(err));
        return 1;
    }

    struct tracee *t = calloc((size_t)threads, sizeof(*t));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    printf("shadow_stack: %d threads, %d ms per phase, recursion depth %d, pause %d us, section "
           "bound %zu%s\n",
           threads, ms, opt_depth, opt_pause_us, bound,
           getenv(SWF_FAILSLAB_ENV) ? ", failslab" : "");

    double t0 = now();
    int started = 0;
    for (int i = 0; i < threads; i++) {
        t[i].id = (uint64_t)i + 1;
        if (pthread_create(&t[i].thread, &attr, tracee_main, &t[i]) != 0)
            break;
        started++;
    }
    if (started < threads) {
        fprintf(stderr, "shadow_stack: only %d threads could be started\n", started);
        threads = started;
    }
    while (__atomic_load_n(&registered, __ATOMIC_ACQUIRE) < threads)
        usleep(1000);
    double t1 = now();
    printf("%-10s %8.3f ms  %d threads started and registered\n", "start", (t1 - t0) * 1e3,
           threads);
    uint64_t calls_u0 = sum_calls(t, threads);
    run_for(ms);
    printf("%-10s %8d ms  %llu calls, none traced\n", "untraced", ms,
           (unsigned long long)(sum_calls(t, threads) - calls_u0));

    t1 = now();
    double c1 = cpu_now();
    struct swf_sweep_stats st;
    err = swf_registry_activate(registry, &st);
    double t2 = now(), c2 = cpu_now();
    printf("%-10s %8.3f ms  (%.3f ms CPU) activate: %s, %llu pass(es), %llu visits, %llu sections "
           "(longest %llu), %llu refills, %llu stacks from the reserve\n",
           "trace on", (t2 - t1) * 1e3, (c2 - c1) * 1e3, err ? strerror(err) : "ok",
           (unsigned long long)st.passes, (unsigned long long)st.visits,
           (unsigned long long)st.sections, (unsigned long long)st.longest_section,
           (unsigned long long)st.refills, (unsigned long long)st.reserve_uses);
    __atomic_store_n(&phase, 1, __ATOMIC_RELEASE);
    uint64_t traced0 = sum_traced(t, threads), calls0 = sum_calls(t, threads);
    run_for(ms);
    uint64_t traced1 = sum_traced(t, threads), calls1 = sum_calls(t, threads);
    printf("%-10s %8d ms  %llu calls, %llu traced\n", "traced", ms,
           (unsigned long long)(calls1 - calls0), (unsigned long long)(traced1 - traced0));

    double t3 = now(), c3 = cpu_now();
    int derr = swf_registry_deactivate(registry);
    double t4 = now(), c4 = cpu_now();
    __atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
    struct swf_cache_stats cs;
    swf_cache_stats(stacks, &cs);
    printf("%-10s %8.3f ms  (%.3f ms CPU) deactivate: %s, %llu stacks still alive\n", "trace off",
           (t4 - t3) * 1e3, (c4 - c3) * 1e3, derr ? strerror(derr) : "ok",
           (unsigned long long)cs.alive);
    uint64_t traced2 = sum_traced(t, threads), calls2 = sum_calls(t, threads);
    run_for(ms);
    uint64_t traced3 = sum_traced(t, threads), calls3 = sum_calls(t, threads);
    printf("%-10s %8d ms  %llu calls, %llu traced\n", "untraced", ms,
           (unsigned long long)(calls3 - calls2), (unsigned long long)(traced3 - traced2));

    __atomic_store_n(&phase, 3, __ATOMIC_RELEASE);
    uint64_t unbalanced = 0, mismatched = 0, traced_off = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i].thread, NULL);
        unbalanced += t[i].unbalanced;
        mismatched += t[i].mismatched;
        traced_off += t[i].traced_off;
        swf_registry_del(registry, &t[i].node, on_release);
    }
    double t5 = now();
    swf_registry_synchronize(registry);
    int released = 0;
    for (int i = 0; i < threads; i++)
        released += __atomic_load_n(&t[i].released, __ATOMIC_ACQUIRE);
    swf_cache_stats(stacks, &cs);
    printf("%-10s %8.3f ms  %d threads unregistered and released\n", "stop", (now() - t5) * 1e3,
           released);

    bool good = err == 0 && derr == 0 && traced1 > traced0 && unbalanced == 0 && mismatched == 0 &&
                traced_off == 0 && released == threads && cs.alive == 0;
    printf("check: every shadow stack balanced (%llu unbalanced units, %llu mismatched returns), "
           "%llu calls traced after trace off, %llu stacks alive at the end: %s\n",
           (unsigned long long)unbalanced, (unsigned long long)mismatched,
           (unsigned long long)traced_off, (unsigned long long)cs.alive, good ? "OK" : "FAILED");
    swf_registry_destroy(registry);
    swf_cache_destroy(stacks);
    free(t);
    pthread_attr_destroy(&attr);
    return good ? 0 : 1;
}
