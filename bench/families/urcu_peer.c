/*
 * bench/families/urcu_peer.c - the `urcu_peer` family (bench_urcu_peer): what a userspace
 * programmer without sweepfill would write, against sweepfill, for the same job: give each of N
 * members on a live list its own freshly allocated, initialised object.
 *
 *   urcu_peer/urcu_malloc/size:S/n:N       the members on a liburcu RCU list (struct cds_list_head,
 *                                          the memb flavour); in ONE read-side section
 *                                          (rcu_read_lock), walk it with
 *                                          cds_list_for_each_entry_rcu and for each member malloc
 *                                          an object, initialise it and rcu_assign_pointer it to
 *                                          the member's slot. malloc is tcmalloc where the binary
 *                                          was linked with it (context "peer_malloc"), else glibc's
 *   urcu_peer/swf_resume/size:S/n:N        sweepfill: swf_cache_grow(c, N + 32), then swf_sweep
 *                                          (RESUME, one unbounded section) over the same members on
 *                                          a CK_LIST (the pinned adapter with no-op pins, as
 *                                          lists.h: nothing unlinks a member here), ck_epoch guard
 *   urcu_peer/swf_resume_b1024/size:S/n:N  the same with section_bound 1024
 *   urcu_peer/registry/size:S/n:N          swf_registry_activate on a registry holding the members
 *                                          (added beforehand, untimed; its default bound of 1024)
 *
 * N = 100k, 400k, 1M; S = 64 and 4096 (--quick: N = 10k, S = 64). One member struct carries the
 * links of all three lists (128 bytes, the walked fields in its first cache line), linked in the
 * same shuffled order for each, so every variant walks the same memory in the same order.
 *
 * Every measurement runs in a child process forked for it: a first activation, in a process
 * whose heap has never held such objects - otherwise the urcu variant's second activation would
 * get the memory its first one freed, already faulted in, from malloc's caches, which no first
 * switch-on of a feature gets. The child touches its copy of the members (clearing the slots, or
 * adding them to the registry) before the clock starts, so that copy-on-write faults on the
 * members fall outside the measurement, then:
 *   - starts a synchronizer thread that loops a grace-period wait - synchronize_rcu() for the
 *     urcu variant (which sleeps on a futex while it waits), swf_cache_quiesce() on a record of
 *     the sweep's epoch for the swf_sweep variants (a grace period waited for as sweepfill waits:
 *     lib/base/epoch_wait.c), and
 *     swf_registry_synchronize() for the registry - sleeping 100 us between waits (as
 *     bench_section_bounds' does), and records the longest single wait and its own CPU time;
 *   - runs the activation (manual time; for the swf_sweep variants grow + sweep, for the
 *     registry activate, which grows first too);
 *   - counts the minor page faults the activating thread takes (getrusage RUSAGE_THREAD): over
 *     the whole activation, and inside read-side sections only - around rcu_read_lock/unlock for
 *     urcu, around every enter/leave of a guard wrapper for swf_sweep. The registry's sections
 *     are internal to it, so only its total is known (reported as -1 inside sections).
 * The child reports through shared memory and exits without cleaning up.
 *
 * With --syncer=0 no synchronizer runs: the activation alone (label and context say so).
 *
 * Counters (per measurement; report.py takes medians over repetitions): seconds, grow_s,
 * sweep_s, ns_per_member, max_gp_wait_s (the synchronizer's longest wait), grace_periods (waits
 * completed while the activation ran), faults_total, faults_in_sections, faults_grow (during
 * the grow), sections, longest_section_s (the longest section in time; -1 for the registry),
 * longest_section (visits), preemptions (involuntary context switches of the activating thread),
 * cpu_s (the activating thread's CPU time), syncer_cpu_s (the synchronizer's CPU time while the
 * activation ran: a wait that spins or yields takes a core from the activation on 2 cores),
 * longest_section_cpu_s and longest_section_preemptions (the activating thread's CPU time and
 * involuntary context switches during its longest section: fault_guard says how to read them;
 * -1 for the registry), steal_s (the host's
 * steal time over the activation, every virtual CPU added up, in clock ticks; -1 where
 * /proc/stat has none).
 *
 * liburcu's read side is used inline (_LGPL_SOURCE), as a program that cares about its speed
 * would; that only makes the peer faster.
 *
 * The host's memory is prepared before every measurement, untimed, in the parent
 * (--host-memory=warm|cold|as-found, default warm; --cold-sleep=S; host.h): warm with the page
 * size each variant maps with (base pages for malloc, huge pages for the cache), or cold.
 *
 * Own flags: --n=, --sizes=, --quick, --syncer=0|1 (default 1), --host-memory=, --cold-sleep=.
 */
#define _LGPL_SOURCE 1

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <urcu.h>
#include <urcu/rculist.h>

#include <ck_epoch.h>
#include <ck_queue.h>

#include <sweepfill/cache.h>
#include <sweepfill/registry.h>
#include <sweepfill/sweep.h>

#include "lists.h"
#include "shim/swfb.h"

#if defined(PEER_TCMALLOC)
void *tc_malloc(size_t size);
#define PEER_MALLOC "tcmalloc"
#define PEER_ANCHOR tc_malloc
#define PEER_LIB    "/libtcmalloc_minimal.so"
#else
#include <gnu/libc-version.h>
#define PEER_MALLOC "glibc"
#define PEER_ANCHOR gnu_get_libc_version
#define PEER_LIB    "/libc.so"
#endif

enum { MAX_ARGS = 8, RESERVE = SWF_SWEEP_RESERVE_DEFAULT };

/* ---- the members ----------------------------------------------------------------------------- */

struct pmember {
    struct cds_list_head rcu_link;  /* the urcu list */
    CK_LIST_ENTRY(pmember) ck_link; /* the sweep's list */
    void *slot;                     /* urcu and swf_sweep variants */
    struct swf_node node;           /* the registry variant: its own link and slot */
    uint64_t id;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct pmember) == 128, "a member is 128 bytes");

CK_LIST_HEAD(pmember_list, pmember);

/* No-op pins: nothing unlinks a member while a sweep runs here (see lists.h). */
static inline void pmember_pin(struct pmember *m)
{
    (void)m;
}
static inline void pmember_unpin(struct pmember *m)
{
    (void)m;
}
static inline bool pmember_linked(struct pmember *m)
{
    (void)m;
    return true;
}
SWF_LIST_CK_LIST_PINNED(plp, pmember_list, pmember, ck_link, slot, pmember_pin, pmember_unpin,
                        pmember_linked)

struct plist {
    struct pmember *m;
    size_t *order; /* the shuffled order: list position -> member index */
    size_t n;
    struct cds_list_head rcu_head;
    struct pmember_list ck_head;
};

static struct plist plists[MAX_ARGS];
static size_t nplists;

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The members for N, linked on both lists in one shuffled order; built once, in the parent. */
static struct plist *plist_get(size_t n)
{
    for (size_t i = 0; i < nplists; i++)
        if (plists[i].n == n)
            return &plists[i];
    if (nplists == MAX_ARGS)
        return NULL;
    struct plist *l = &plists[nplists];
    l->m = aligned_alloc(64, (n ? n : 1) * sizeof(struct pmember));
    l->order = malloc((n ? n : 1) * sizeof(size_t));
    if (l->m == NULL || l->order == NULL) {
        free(l->m);
        free(l->order);
        return NULL;
    }
    memset(l->m, 0, (n ? n : 1) * sizeof(struct pmember));
    for (size_t i = 0; i < n; i++) {
        l->m[i].id = i;
        l->order[i] = i;
    }
    uint64_t seed = 0x50454552ull ^ n;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(mix(&seed) % i), t = l->order[i - 1];
        l->order[i - 1] = l->order[j];
        l->order[j] = t;
    }
    CDS_INIT_LIST_HEAD(&l->rcu_head);
    CK_LIST_INIT(&l->ck_head);
    for (size_t i = 0; i < n; i++)
        cds_list_add_tail_rcu(&l->m[l->order[i]].rcu_link, &l->rcu_head);
    for (size_t i = n; i-- > 0;)
        CK_LIST_INSERT_HEAD(&l->ck_head, &l->m[l->order[i]], ck_link);
    l->n = n;
    nplists++;
    return l;
}

/* ---- what a child reports -------------------------------------------------------------------- */

struct presult {
    int done;
    char msg[160];
    double seconds, grow_s, sweep_s, max_gp_s, longest_section_s, cpu_s, syncer_cpu_s;
    double faults_total, faults_sections, faults_grow, preemptions;
    double grace_periods, sections, longest_section;
    double longest_section_cpu_s, longest_section_preemptions, steal_s;
};

static struct presult *shared;  /* MAP_SHARED: written by the child, read by the parent */
static bool with_syncer = true; /* --syncer */

static void thread_usage(long *minflt, long *nivcsw)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        memset(&ru, 0, sizeof(ru));
    *minflt = ru.ru_minflt;
    if (nivcsw != NULL)
        *nivcsw = ru.ru_nivcsw;
}

static long thread_minflt(void)
{
    long f;
    thread_usage(&f, NULL);
    return f;
}

/* ---- the synchronizer ------------------------------------------------------------------------ */

enum variant { V_URCU, V_RESUME, V_RESUME_BOUNDED, V_REGISTRY };

struct syncer {
    enum variant v;
    struct swf_registry *r;
    struct swf_cache *c; /* the swf_sweep variants: swf_cache_quiesce's wait */
    int stop, started, measuring;
    uint64_t max_ns, calls, cpu_start, cpu_ns;
    pthread_t thread;
};

static void *syncer_main(void *arg)
{
    struct syncer *s = arg;
    ck_epoch_record_t *rec =
        s->v == V_RESUME || s->v == V_RESUME_BOUNDED ? bench_epoch_record() : NULL;
    const struct timespec pause = {0, 100000};
    s->cpu_start = bench_thread_cpu_ns();
    __atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = bench_now_ns();
        if (s->v == V_URCU)
            synchronize_rcu();
        else if (rec != NULL)
            swf_cache_quiesce(s->c, rec); /* a grace period on the sweep's epoch, waited for
                                             as sweepfill waits (lib/base/epoch_wait.c) */
        else
            swf_registry_synchronize(s->r);
        uint64_t t = bench_now_ns() - t0;
        if (t > s->max_ns)
            s->max_ns = t;
        s->calls++;
        nanosleep(&pause, NULL);
    }
    s->cpu_ns = bench_thread_cpu_ns() - s->cpu_start;
    return NULL;
}

/* ---- the swf_sweep guard that counts faults inside sections ---------------------------------- */

/* Besides the faults, the longest section's CPU time and preemptions. A section whose CPU time
 * is well below its wall time with no preemption lost the rest to the host's scheduler (the
 * thread's CPU clock leaves out steal time); one whose CPU time is its wall time, with no fault
 * and no preemption, was executing, or stalled on a memory access the host was serving
 * (bench/RESULTS.md, "Sections the host stalls"). */
struct fault_guard {
    struct swf_guard inner;
    long flt_before, ivcsw_before;
    uint64_t entered_ns, cpu_before;
    double faults;
    uint64_t longest_ns, longest_cpu_ns, sections;
    long longest_preemptions;
};

static void fg_enter(void *arg)
{
    struct fault_guard *g = arg;
    thread_usage(&g->flt_before, &g->ivcsw_before); /* read outside the section: it stays as
                                                       short as it was */
    g->cpu_before = bench_thread_cpu_ns();
    g->inner.enter(g->inner.arg);
    g->entered_ns = bench_now_ns();
}

static void fg_leave(void *arg)
{
    struct fault_guard *g = arg;
    uint64_t t = bench_now_ns() - g->entered_ns;
    g->inner.leave(g->inner.arg);
    uint64_t cpu = bench_thread_cpu_ns() - g->cpu_before;
    long flt, ivcsw;
    thread_usage(&flt, &ivcsw);
    g->faults += (double)(flt - g->flt_before);
    if (t > g->longest_ns) {
        g->longest_ns = t;
        g->longest_cpu_ns = cpu;
        g->longest_preemptions = ivcsw - g->ivcsw_before;
    }
    g->sections++;
}

/* ---- the variants, run in the child ---------------------------------------------------------- */

static void object_init(void *obj, void *member, void *arg)
{
    bobj_init(obj, member, arg);
}

/* Returns NULL or what went wrong; fills r. */
static const char *child_run(enum variant v, struct plist *l, size_t size, struct presult *r)
{
    size_t n = l->n;
    struct swf_cache *c = NULL;
    struct swf_registry *reg = NULL;
    struct syncer sy;
    memset(&sy, 0, sizeof(sy));
    sy.v = v;

    /* Untimed: touch our copy of the members, make what the variant needs. */
    for (size_t i = 0; i < n; i++)
        l->m[i].slot = NULL;
    if (v == V_URCU) {
        rcu_register_thread();
    } else {
        struct swf_cache_config cc = {.object_size = size, .name = "peer"};
        if (swf_cache_create(&cc, &c) != 0)
            return "swf_cache_create failed";
        sy.c = c;
        (void)bench_epoch_record();
    }
    if (v == V_REGISTRY) {
        struct swf_registry_config rc;
        swf_registry_config_init(&rc);
        rc.cache = c;
        rc.init = object_init;
        if (swf_registry_create(&rc, &reg) != 0)
            return "swf_registry_create failed";
        for (size_t i = n; i-- > 0;) { /* adds link at the head: the list runs in order[] */
            struct pmember *m = &l->m[l->order[i]];
            swf_node_init(&m->node);
            if (swf_registry_add(reg, &m->node) != 0)
                return "swf_registry_add failed";
        }
        sy.r = reg;
    }

    if (with_syncer) {
        if (pthread_create(&sy.thread, NULL, syncer_main, &sy) != 0)
            return "pthread_create failed";
        while (!__atomic_load_n(&sy.started, __ATOMIC_ACQUIRE))
            sched_yield();
    }

    const char *msg = NULL;
    long f0, p0, f1, p1, fg0 = 0, fg1 = 0;
    double steal0 = bench_steal_s();
    thread_usage(&f0, &p0);
    uint64_t c0 = bench_thread_cpu_ns(), t0 = bench_now_ns(), tg = t0;
    if (v == V_URCU) {
        struct pmember *m;
        uint64_t sc0 = bench_thread_cpu_ns();
        rcu_read_lock();
        uint64_t s0 = bench_now_ns();
        cds_list_for_each_entry_rcu(m, &l->rcu_head, rcu_link)
        {
            if (CMM_LOAD_SHARED(m->slot) != NULL)
                continue;
            void *obj = malloc(size);
            if (obj == NULL) {
                msg = "malloc failed";
                break;
            }
            object_init(obj, m, NULL);
            rcu_assign_pointer(m->slot, obj);
        }
        uint64_t s1 = bench_now_ns();
        rcu_read_unlock();
        long fs, ps;
        thread_usage(&fs, &ps);
        r->longest_section_cpu_s = (double)(bench_thread_cpu_ns() - sc0) * 1e-9;
        r->longest_section_preemptions = (double)(ps - p0);
        r->faults_sections = (double)(fs - f0);
        r->longest_section_s = (double)(s1 - s0) * 1e-9;
        r->sections = 1;
        r->longest_section = (double)n;
    } else if (v == V_RESUME || v == V_RESUME_BOUNDED) {
        fg0 = thread_minflt();
        int err = swf_cache_grow(c, n + RESERVE);
        fg1 = thread_minflt();
        tg = bench_now_ns();
        struct swf_sweep_config cfg;
        struct fault_guard g;
        struct swf_sweep_stats ss;
        memset(&g, 0, sizeof(g));
        swf_sweep_config_init(&cfg);
        cfg.list = plp_list(&l->ck_head);
        cfg.cache = c;
        cfg.init = object_init;
        cfg.section_bound = v == V_RESUME_BOUNDED ? 1024 : 0;
        swf_guard_epoch(&g.inner, bench_epoch_record());
        cfg.guard.enter = fg_enter;
        cfg.guard.leave = fg_leave;
        cfg.guard.arg = &g;
        if (err != 0)
            msg = "swf_cache_grow failed";
        else if (swf_sweep(&cfg, &ss) != 0)
            msg = "swf_sweep failed";
        r->faults_sections = g.faults;
        r->longest_section_s = (double)g.longest_ns * 1e-9;
        r->longest_section_cpu_s = (double)g.longest_cpu_ns * 1e-9;
        r->longest_section_preemptions = (double)g.longest_preemptions;
        r->sections = (double)g.sections;
        r->longest_section = (double)ss.longest_section;
    } else {
        struct swf_sweep_stats ss;
        if (swf_registry_activate(reg, &ss) != 0)
            msg = "swf_registry_activate failed";
        r->faults_sections = -1;
        r->longest_section_s = -1;
        r->longest_section_cpu_s = -1;
        r->longest_section_preemptions = -1;
        r->sections = (double)ss.sections;
        r->longest_section = (double)ss.longest_section;
    }
    uint64_t t1 = bench_now_ns(), c1 = bench_thread_cpu_ns();
    thread_usage(&f1, &p1);
    double steal1 = bench_steal_s();
    r->steal_s = steal0 < 0 || steal1 < 0 ? -1 : steal1 - steal0;
    if (with_syncer) {
        __atomic_store_n(&sy.stop, 1, __ATOMIC_RELEASE);
        pthread_join(sy.thread, NULL);
    }
    r->cpu_s = (double)(c1 - c0) * 1e-9;
    r->syncer_cpu_s = (double)sy.cpu_ns * 1e-9; /* up to its last wait, just after t1 */
    r->seconds = (double)(t1 - t0) * 1e-9;
    r->grow_s = (double)(tg - t0) * 1e-9;
    r->sweep_s = (double)(t1 - tg) * 1e-9;
    r->faults_total = (double)(f1 - f0);
    r->faults_grow = (double)(fg1 - fg0);
    r->preemptions = (double)(p1 - p0);
    r->max_gp_s = (double)sy.max_ns * 1e-9;
    r->grace_periods = (double)sy.calls;
    if (msg != NULL)
        return msg;
    /* Untimed: every member has an object. */
    for (size_t i = 0; i < n; i++) {
        void *obj = v == V_REGISTRY ? swf_node_object(&l->m[i].node) : l->m[i].slot;
        if (obj == NULL || ((struct bobj *)obj)->owner == NULL)
            return "a member was left without an object";
    }
    return NULL;
}

/* ---- the benchmark body (parent) ------------------------------------------------------------- */

static void bm_peer(swfb_state *st)
{
    enum variant v = (enum variant)(intptr_t)swfb_data(st);
    size_t size = (size_t)swfb_range(st, 0), n = (size_t)swfb_range(st, 1);
    struct plist *l = plist_get(n);
    if (l == NULL) {
        swfb_skip_with_error(st, "cannot build the list (out of memory)");
        return;
    }
    struct presult sum;
    memset(&sum, 0, sizeof(sum));
    double worst_gp = 0;
    int64_t iters = 0;
    const char *msg = NULL;
    while (swfb_keep_running(st)) {
        /* Untimed, in the parent (a cold state's ballast outlives the child): the host's memory
         * prepared with the page size this variant maps with (host.h). */
        bench_host_prepare_objects(n, size, v == V_URCU ? BENCH_PAGES_BASE : BENCH_PAGES_HUGE);
        memset(shared, 0, sizeof(*shared));
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            msg = "fork failed";
            break;
        }
        if (pid == 0) {
            const char *m = child_run(v, l, size, shared);
            if (m != NULL)
                snprintf(shared->msg, sizeof(shared->msg), "%s", m);
            __atomic_store_n(&shared->done, 1, __ATOMIC_RELEASE);
            _exit(m != NULL);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!__atomic_load_n(&shared->done, __ATOMIC_ACQUIRE)) {
            msg = "the measuring child died";
            break;
        }
        if (shared->msg[0] != '\0' || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            static char buf[200];
            snprintf(buf, sizeof(buf), "child: %s", shared->msg[0] ? shared->msg : "failed");
            msg = buf;
            break;
        }
        const struct presult *r = shared;
        swfb_set_iteration_time(st, r->seconds);
        sum.seconds += r->seconds;
        sum.grow_s += r->grow_s;
        sum.sweep_s += r->sweep_s;
        sum.max_gp_s += r->max_gp_s;
        worst_gp = r->max_gp_s > worst_gp ? r->max_gp_s : worst_gp;
        sum.longest_section_s += r->longest_section_s;
        sum.cpu_s += r->cpu_s;
        sum.syncer_cpu_s += r->syncer_cpu_s;
        sum.faults_total += r->faults_total;
        sum.faults_sections += r->faults_sections;
        sum.faults_grow += r->faults_grow;
        sum.preemptions += r->preemptions;
        sum.grace_periods += r->grace_periods;
        sum.sections += r->sections;
        sum.longest_section += r->longest_section;
        sum.longest_section_cpu_s += r->longest_section_cpu_s;
        sum.longest_section_preemptions += r->longest_section_preemptions;
        sum.steal_s += r->steal_s;
        iters++;
    }
    if (msg != NULL) {
        swfb_skip_with_error(st, msg);
        return;
    }
    if (iters == 0)
        return;
    double k = (double)iters;
    static const struct {
        const char *name;
        size_t off;
    } fields[] = {
        {"seconds", offsetof(struct presult, seconds)},
        {"grow_s", offsetof(struct presult, grow_s)},
        {"sweep_s", offsetof(struct presult, sweep_s)},
        {"max_gp_wait_s", offsetof(struct presult, max_gp_s)},
        {"longest_section_s", offsetof(struct presult, longest_section_s)},
        {"faults_total", offsetof(struct presult, faults_total)},
        {"faults_in_sections", offsetof(struct presult, faults_sections)},
        {"faults_grow", offsetof(struct presult, faults_grow)},
        {"preemptions", offsetof(struct presult, preemptions)},
        {"grace_periods", offsetof(struct presult, grace_periods)},
        {"sections", offsetof(struct presult, sections)},
        {"longest_section", offsetof(struct presult, longest_section)},
        {"cpu_s", offsetof(struct presult, cpu_s)},
        {"syncer_cpu_s", offsetof(struct presult, syncer_cpu_s)},
        {"longest_section_cpu_s", offsetof(struct presult, longest_section_cpu_s)},
        {"longest_section_preemptions", offsetof(struct presult, longest_section_preemptions)},
        {"steal_s", offsetof(struct presult, steal_s)},
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        swfb_counter_set(st, fields[i].name,
                         *(const double *)((const char *)&sum + fields[i].off) / k,
                         SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "worst_gp_wait_s", worst_gp, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "syncer", with_syncer ? 1 : 0, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "ns_per_member", n ? sum.seconds / k * 1e9 / (double)n : 0,
                     SWFB_COUNTER_PLAIN);
    char label[64];
    snprintf(label, sizeof(label), "%s%s", v == V_URCU ? PEER_MALLOC : "sweepfill",
             with_syncer ? "" : ", no synchronizer");
    swfb_set_label(st, label);
}

/* ---- main ------------------------------------------------------------------------------------ */

/* Does malloc resolve into the allocator this binary was linked with? */
static int check_malloc(char *lib, size_t len)
{
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info mi, ai;
    if (m == NULL || dladdr(m, &mi) == 0 || mi.dli_fname == NULL ||
        dladdr((void *)(uintptr_t)&PEER_ANCHOR, &ai) == 0 || ai.dli_fname == NULL) {
        fprintf(stderr, "bench_urcu_peer: cannot tell which library provides malloc\n");
        return -1;
    }
    snprintf(lib, len, "%s", mi.dli_fname);
    if (strcmp(mi.dli_fname, ai.dli_fname) != 0 || strstr(mi.dli_fname, PEER_LIB) == NULL) {
        fprintf(stderr,
                "bench_urcu_peer: malloc resolves to %s, not to %s (%s*): check LD_PRELOAD\n",
                mi.dli_fname, PEER_MALLOC, PEER_LIB + 1);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int64_t ns[MAX_ARGS] = {100000, 400000, 1000000}, sizes[MAX_ARGS] = {64, 4096};
    int nn = 3, nsizes = 2;
    if (bench_take_flag(&argc, argv, "quick") != NULL) {
        ns[0] = 10000, nn = 1;
        nsizes = 1;
    }
    const char *prog = "bench_urcu_peer";
    if (bench_take_list_flag(&argc, argv, prog, "n", ns, MAX_ARGS, &nn) != 0 ||
        bench_take_list_flag(&argc, argv, prog, "sizes", sizes, MAX_ARGS, &nsizes) != 0)
        return 1;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] < (int64_t)sizeof(struct bobj)) {
            fprintf(stderr, "bench_urcu_peer: object size %lld is below %zu bytes\n",
                    (long long)sizes[i], sizeof(struct bobj));
            return 1;
        }
    const char *sv = bench_take_flag(&argc, argv, "syncer");
    if (sv != NULL) {
        if (strcmp(sv, "0") != 0 && strcmp(sv, "1") != 0) {
            fprintf(stderr, "bench_urcu_peer: --syncer=%s: expected 0 or 1\n", sv);
            return 1;
        }
        with_syncer = sv[0] == '1';
    }
    bench_host_state = BENCH_HOST_WARM;
    if (bench_host_take_flags(&argc, argv, prog) != 0)
        return 1;
    char lib[4096];
    if (check_malloc(lib, sizeof(lib)) != 0)
        return 1;
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        fprintf(stderr, "bench_urcu_peer: mmap failed\n");
        return 1;
    }
    swfb_add_context("peer_malloc", PEER_MALLOC);
    swfb_add_context("peer_malloc_library", lib);
    swfb_add_context("urcu_flavour", "memb (liburcu, <urcu.h>), read side inline");
    swfb_add_context("members", "128-byte structs, one shuffled order on every list");
    swfb_add_context("synchronizer", with_syncer
                                         ? "one thread: a grace-period wait, then 100 us of sleep"
                                         : "none (--syncer=0)");
    swfb_add_context("measurement", "each in a freshly forked child: a first activation");
    swfb_add_context("host_memory", bench_host_state_name(bench_host_state));

    static const struct {
        const char *name;
        enum variant v;
    } variants[] = {
        {"urcu_peer/urcu_malloc", V_URCU},
        {"urcu_peer/swf_resume", V_RESUME},
        {"urcu_peer/swf_resume_b1024", V_RESUME_BOUNDED},
        {"urcu_peer/registry", V_REGISTRY},
    };
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        swfb_bench *b =
            swfb_register_data(variants[i].name, bm_peer, (void *)(intptr_t)variants[i].v);
        bench_args_size_n(b, sizes, nsizes, ns, nn);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_MS);
        swfb_bench_iterations(b, 1); /* a first activation per measurement: repeat with
                                        --benchmark_repetitions */
    }
    int rc = swfb_main(argc, argv);
    munmap(shared, sizeof(*shared));
    return rc;
}
