/*
 * test/concurrent/cache_percpu_seccomp.c - the per-CPU mode when the kernel refuses membarrier
 * after the mode was chosen (a server that sandboxes itself late): a drain whose fence is
 * refused moves nothing, and no object is handed to two threads.
 *
 * A cache with the full checks on, created at its limit (so that every grow asks for more than
 * the depot holds and drains every CPU's magazine, which needs membarrier's rseq fence). Workers
 * pinned to each CPU allocate and free through their CPU's magazine (the single calls and the
 * bulk calls) and tag each object with their id while they hold it: an allocation that finds
 * another worker's tag got an object that worker still holds. A drainer keeps calling
 * swf_cache_grow. After a first round of operations, the main thread installs a seccomp filter on
 * every thread of the process (SECCOMP_FILTER_FLAG_TSYNC) that makes membarrier fail with EPERM:
 * every command (argument "all") or only MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ ("rseq"), and the
 * same work goes on for a second round. Then: no object was held twice, the grows after the
 * filter failed naming the refused fence, and destroy recounts every object (the full checks'
 * walk of the CPUs' magazines, the depot and the loose list against the counters) and returns 0.
 *
 * Built twice: linked with the library (cache_percpu_seccomp), and from the library's sources with
 * a delay loop inside every restartable sequence (cache_percpu_seccomp_delay, SWF_RSEQ_DELAY), so
 * that the drains land while sequences on the other CPU are in flight. The rounds are counted in
 * operations, never timed. Skips where the per-CPU mode is off, or seccomp is not to be had.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SWF_RSEQ_DELAY
#include "base/rseq.h" /* first: its delay loop goes into every sequence, cache.h's too */
#endif
#include <sweepfill/cache.h>

#include "../common/tap.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

enum {
    LIMIT = 2048,      /* objects: the cache is created with all of them */
    WORKERS = 4,       /* spread over the CPUs */
    HOLD_MAX = 90,     /* objects a worker holds at most (more than a magazine) */
    ROUND_OPS = 40000, /* allocations per worker per round */
    DRAINS_MIN = 200,  /* grows per round at least (the drainer goes on until the workers end) */
};

struct obj {
    uint64_t first;       /* the cache's (free mark, links) */
    _Atomic uint64_t tag; /* the worker holding it, 0 when free */
    uint64_t pad[2];
};

static struct swf_cache *c;
static pthread_barrier_t round_start, round_end;
static atomic_int round_no; /* 1, 2; 3: the end */
static atomic_int workers_running;
static atomic_uint_fast64_t twice, alloc_ok, alloc_fail;
static atomic_uint_fast64_t grows_failed, grows_refused;
static int ncpu = 1;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* A free object's bytes past its first 8 are the cache's (unspecified when it is allocated; the
 * full checks fill them when it is freed): any value there but a worker's id is no holder. */
static void take(struct obj *o, uint64_t me)
{
    uint64_t seen = atomic_load(&o->tag);
    if (seen >= 1 && seen <= WORKERS) {
        if (atomic_fetch_add(&twice, 1) < 5)
            diag("worker %llu got %p, which worker %llu holds", (unsigned long long)me, (void *)o,
                 (unsigned long long)seen);
        return;
    }
    if (!atomic_compare_exchange_strong(&o->tag, &seen, me))
        atomic_fetch_add(&twice, 1); /* another worker took it meanwhile */
}

static void give(struct obj *o, uint64_t me)
{
    uint64_t mine = me;
    if (!atomic_compare_exchange_strong(&o->tag, &mine, 0))
        atomic_fetch_add(&twice, 1); /* another worker took it while this one held it */
}

/* One round: ROUND_OPS allocations, in batches of 1 to HOLD_MAX held and then freed; one batch in
 * eight through the bulk calls, one in sixteen WAIT. */
static void work(uint64_t me, uint64_t *rng)
{
    struct obj *held[HOLD_MAX];
    for (int done = 0; done < ROUND_OPS;) {
        int want = 1 + (int)(tap_rand(rng) % HOLD_MAX), n = 0;
        uint64_t how = tap_rand(rng) % 16;
        if (how < 2) {
            void *objs[HOLD_MAX] = {0};
            n = (int)swf_cache_alloc_bulk(c, how == 0 ? SWF_NOWAIT : SWF_WAIT, objs, (size_t)want);
            for (int i = 0, j = 0; i < want; i++)
                if (objs[i] != NULL)
                    held[j++] = objs[i];
        } else {
            for (; n < want; n++)
                if ((held[n] = swf_cache_alloc(c, how == 2 ? SWF_WAIT : SWF_NOWAIT)) == NULL)
                    break;
        }
        atomic_fetch_add(&alloc_ok, (uint64_t)n);
        atomic_fetch_add(&alloc_fail, (uint64_t)(n < want));
        for (int i = 0; i < n; i++)
            take(held[i], me);
        for (int i = 0; i < n; i++)
            give(held[i], me);
        if (tap_rand(rng) % 8 == 0) {
            swf_cache_free_bulk(c, (void *const *)held, (size_t)n);
        } else {
            for (int i = 0; i < n; i++)
                swf_cache_free(c, held[i]);
        }
        done += want;
    }
}

static void *worker(void *arg)
{
    uint64_t me = (uint64_t)(uintptr_t)arg, rng = 0x9e3779b97f4a7c15ull * me;
    pin((int)(me - 1) % ncpu);
    for (;;) {
        pthread_barrier_wait(&round_start);
        if (atomic_load(&round_no) > 2)
            return NULL;
        work(me, &rng);
        atomic_fetch_sub(&workers_running, 1);
        pthread_barrier_wait(&round_end);
    }
}

static void *drainer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_barrier_wait(&round_start);
        if (atomic_load(&round_no) > 2)
            return NULL;
        int round = atomic_load(&round_no);
        for (int i = 0; i < DRAINS_MIN || atomic_load(&workers_running) > 0; i++) {
            if (swf_cache_grow(c, LIMIT) == 0) /* the depot held every object */
                continue;
            atomic_fetch_add(&grows_failed, round == 2);
            if (strstr(swf_error_reason(), "membarrier") != NULL)
                atomic_fetch_add(&grows_refused, round == 2);
            sched_yield();
        }
        pthread_barrier_wait(&round_end);
    }
}

/* membarrier fails with EPERM on every thread of the process from now on: every command, or
 * (rseq_only) the rseq fence only. */
static int deny_membarrier(bool rseq_only)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* the command: the low half of the first argument */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, rseq_only ? SECCOMP_RET_ALLOW : SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    };
    struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

static void run_round(int round)
{
    atomic_store(&round_no, round);
    atomic_store(&workers_running, WORKERS);
    pthread_barrier_wait(&round_start);
    pthread_barrier_wait(&round_end);
}

int main(int argc, char **argv)
{
    bool rseq_only = argc > 1 && strcmp(argv[1], "rseq") == 0;
#ifndef ARCH
    skip("no per-CPU mode on this architecture");
    return tap_done();
#else
    if (swf_cache_percpu() == 0) {
        skip("the per-CPU mode is off in this process (no rseq or membarrier, or SWF_PERCPU=0)");
        return tap_done();
    }
    if (tap_under_valgrind() || tap_under_qemu()) {
        skip("seccomp filters are the emulator's, not the program's, there");
        return tap_done();
    }
#if defined(SWF_RSEQ_DELAY) && defined(SWF_RSEQ) /* the sequences are built (not under TSan) */
    swfi_rseq_delay_ = 2000; /* inside every sequence: the drains land while one is in flight */
#endif
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    ncpu = online > 1 ? (int)online : 1;
    struct swf_cache_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.name = "percpu_seccomp";
    cfg.object_size = sizeof(struct obj);
    cfg.limit = LIMIT;
    cfg.prefill = LIMIT;
    cfg.checks = 1;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    pthread_barrier_init(&round_start, NULL, WORKERS + 2);
    pthread_barrier_init(&round_end, NULL, WORKERS + 2);
    pthread_t th[WORKERS + 1];
    for (uintptr_t i = 0; i < WORKERS; i++)
        tap_require(pthread_create(&th[i], NULL, worker, (void *)(i + 1)) == 0, "worker");
    tap_require(pthread_create(&th[WORKERS], NULL, drainer, NULL) == 0, "drainer");

    run_round(1);
    ok(twice == 0, "round 1 (membarrier allowed): no object held by two workers at once (%llu)",
       (unsigned long long)twice);

    int denied = deny_membarrier(rseq_only);
    long fence = syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0);
    int fence_errno = errno;
    if (denied != 0 || fence == 0) {
        skip("no seccomp filter could be installed (%s)", strerror(denied != 0 ? errno : 0));
    } else {
        ok(fence == -1 && fence_errno == EPERM,
           "a filter on every thread now refuses membarrier%s with EPERM",
           rseq_only ? "'s rseq fence only" : "");
        run_round(2);
        ok(twice == 0,
           "round 2 (membarrier refused): no object held by two workers at once "
           "(%llu)",
           (unsigned long long)twice);
        ok(grows_refused > 0 && grows_refused == grows_failed,
           "the grows of round 2 that failed (ENOMEM) name the refused fence (%llu of %llu)",
           (unsigned long long)grows_refused, (unsigned long long)grows_failed);
    }
    atomic_store(&round_no, 3);
    pthread_barrier_wait(&round_start);
    for (int i = 0; i <= WORKERS; i++)
        pthread_join(th[i], NULL);
    diag("%llu objects allocated, %llu batches cut short", (unsigned long long)alloc_ok,
         (unsigned long long)alloc_fail);

    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    ok(s.alive == 0 && s.capacity == LIMIT && s.ready == LIMIT,
       "the counters balance: %llu alive, %llu ready of %llu", (unsigned long long)s.alive,
       (unsigned long long)s.ready, (unsigned long long)s.capacity);
    /* The full checks' recount: every CPU's magazine, the depot and the loose list against the
     * counters and the objects' states (it aborts with the difference otherwise). */
    ok(swf_cache_destroy(c) == 0, "destroy recounts every object and returns 0");
    return tap_done();
#endif
}
