/*
 * test/concurrent/rseq_abort.c - the per-CPU sequences aborted on purpose, and nothing lost or
 * duplicated.
 *
 * Built with SWF_RSEQ_DELAY: every sequence spins inside its critical section, so preemption,
 * migration and signals land there. More workers than CPUs pop objects from and push them on
 * per-CPU magazines, and swap whole magazines with a spare pool; one thread keeps moving the
 * workers between CPUs, a 10 kHz interval timer sends the process SIGALRM, and a locker keeps
 * locking every slot (compare-and-swap plus membarrier's rseq fence) to look inside. At the end
 * the aborts counted must be above 0, every object must be in exactly one place, and the
 * magazines' words must have counted every object moved exactly once (rseq_abi.h: the count
 * above n's bits moves in the store that commits, so an aborted sequence counts nothing).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cache/front/seq.h"
#include "../common/tap.h"

#ifdef SWF_RSEQ
#define CAP      8
#define SPARES   64
#define MAXHELD  4
#define NOBJ_MAX 65536

struct mag { /* cache_abi.h's struct swf_magazine_, with room for CAP objects */
    uint32_t link, unused;
    uint64_t n; /* the word: n in its low bits, the objects moved from SWF_RSEQ_MOVED_SHIFT_ */
    void *obj[CAP];
};

static uint32_t held_by(const struct mag *m)
{
    return (uint32_t)(m->n & SWF_RSEQ_N_MASK_);
}

/* The thread record the sequences read their inputs from (binding.h; the library's owner.c
 * defines it, which this test does not link). */
__thread struct swf_thread_ swf_thread_self_ __attribute__((tls_model("initial-exec")));

static uint32_t nslots;
static uintptr_t *slots;
static struct mag *mags;
static char objs[NOBJ_MAX];
static size_t nobj;
static struct mag *pool[1024];
static size_t npool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool stop;
static atomic_uint_fast64_t aborts, pops, pushes, swaps, lock_rounds, bad_seen;

struct worker {
    pthread_t th;
    atomic_int tid;
    void *held[MAXHELD];
    int nheld;
};

static struct mag *pool_get(void)
{
    pthread_mutex_lock(&pool_lock);
    struct mag *m = npool ? pool[--npool] : NULL;
    pthread_mutex_unlock(&pool_lock);
    return m;
}

static void pool_put(struct mag *m)
{
    pthread_mutex_lock(&pool_lock);
    pool[npool++] = m;
    pthread_mutex_unlock(&pool_lock);
}

/* Swap this CPU's magazine for a spare one: the refill and drain of the cache, in small. */
static void swap_one(void)
{
    uintptr_t w = swfi_rseq_peek(slots, nslots);
    if (w & SWFI_RSEQ_LOCKED || w == 0)
        return;
    struct mag *spare = pool_get();
    if (spare == NULL)
        return;
    if (swfi_rseq_swap(slots, nslots, w, (uintptr_t)spare)) {
        pool_put((struct mag *)w);
        atomic_fetch_add(&swaps, 1);
    } else {
        pool_put(spare);
    }
}

static void *work(void *arg)
{
    struct worker *w = arg;
    atomic_store(&w->tid, (int)syscall(SYS_gettid));
    uint64_t x = (uintptr_t)arg | 1, npop = 0, npush = 0;
    if (!swfi_rseq_armed()) /* the sequences' inputs (seq.h); the mode is on: never false here */
        atomic_fetch_add(&bad_seen, 1);
    while (swf_thread_self_.rseq != NULL && !atomic_load_explicit(&stop, memory_order_relaxed)) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        void *o;
        bool many = (x & 6) == 6; /* one move in four: several objects in one sequence */
        if ((x & 1) && w->nheld < MAXHELD) {
            uint32_t got = many ? swfi_rseq_pop_many(slots, nslots, &w->held[w->nheld],
                                                     (uint32_t)(MAXHELD - w->nheld))
                           : swf_cache_pop_(slots, &nslots, &o, &swfi_rseq_aborts_)
                               ? (w->held[w->nheld] = o, 1)
                               : 0;
            w->nheld += (int)got;
            npop += got;
            if (got == 0)
                swap_one();
        } else if (w->nheld > 0) {
            uint32_t k = many ? (uint32_t)w->nheld : 1;
            void **top = &w->held[w->nheld - (int)k];
            uint32_t put = many ? swfi_rseq_push_many(slots, nslots, top, k, CAP)
                           : swf_cache_push_(slots, &nslots, *top, CAP, &swfi_rseq_aborts_) ? 1
                                                                                            : 0;
            memmove(top, top + put, (k - put) * sizeof(void *)); /* what stayed, down */
            w->nheld -= (int)put;
            npush += put;
            if (put == 0)
                swap_one();
        }
    }
    atomic_fetch_add(&aborts, swfi_rseq_aborts());
    atomic_fetch_add(&pops, npop);
    atomic_fetch_add(&pushes, npush);
    return NULL;
}

static void *locker(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (!swfi_rseq_lock_slots(slots, nslots)) { /* the fence was refused: unlocked again */
            atomic_fetch_add(&bad_seen, 1);
            break;
        }
        for (uint32_t i = 0; i < nslots; i++) {
            uintptr_t word = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
            struct mag *m = (struct mag *)(word & ~SWFI_RSEQ_LOCKED);
            if (m == NULL || held_by(m) > CAP)
                atomic_fetch_add(&bad_seen, 1);
            __atomic_store_n(&slots[i], word & ~SWFI_RSEQ_LOCKED, __ATOMIC_RELEASE);
        }
        atomic_fetch_add(&lock_rounds, 1);
        nanosleep(&(struct timespec){.tv_nsec = 2 * 1000 * 1000}, NULL);
    }
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
}

int main(void)
{
    if (swfi_rseq_mode() == SWFI_RSEQ_OFF) {
        skip("the per-CPU mode is off in this process (rseq not registered, or SWF_PERCPU=0)");
        return tap_done();
    }
    swfi_rseq_delay_ = 3000;
    nslots = swfi_rseq_slots();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nworkers = (int)(ncpu > 0 ? ncpu : 1) * 3 + 2;
    slots = calloc(nslots, sizeof(*slots));
    mags = calloc(nslots + SPARES, sizeof(*mags));
    tap_require(slots && mags, "memory");
    /* Every slot a half-full magazine, the spares a quarter full. */
    for (uint32_t i = 0; i < nslots + SPARES; i++) {
        struct mag *m = &mags[i];
        for (uint32_t k = 0; k < (i < nslots ? CAP / 2 : CAP / 4) && nobj < NOBJ_MAX; k++)
            m->obj[m->n++] = &objs[nobj++];
        if (i < nslots)
            slots[i] = (uintptr_t)m;
        else
            pool[npool++] = m;
    }

    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct worker *ws = calloc((size_t)nworkers, sizeof(*ws));
    for (int i = 0; i < nworkers; i++)
        pthread_create(&ws[i].th, NULL, work, &ws[i]);
    pthread_t lk;
    pthread_create(&lk, NULL, locker, NULL);
    struct itimerval it = {{0, 100}, {0, 100}}; /* 10 kHz */
    setitimer(ITIMER_REAL, &it, NULL);

    /* This thread moves the workers between CPUs, each to one CPU at random, for 2 seconds. */
    uint64_t x = 88172645463325252ull;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned moves = 0;
    do {
        for (int i = 0; i < nworkers; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET((int)(x % (uint64_t)(ncpu > 0 ? ncpu : 1)), &set);
            int tid = atomic_load(&ws[i].tid);
            if (tid != 0 && sched_setaffinity(tid, sizeof(set), &set) == 0)
                moves++;
        }
        nanosleep(&(struct timespec){.tv_nsec = 200 * 1000}, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - t0.tv_sec < 2 ||
             (now.tv_sec - t0.tv_sec == 2 && now.tv_nsec < t0.tv_nsec));

    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    atomic_store(&stop, true);
    for (int i = 0; i < nworkers; i++)
        pthread_join(ws[i].th, NULL);
    pthread_join(lk, NULL);

    /* Where every object is: slots, the pool, the workers' hands. */
    static unsigned char seen[NOBJ_MAX];
    size_t dup = 0, in_mags = 0, held = 0;
#define SEE(o)                                  \
    do {                                        \
        size_t k_ = (size_t)((char *)(o)-objs); \
        if (k_ >= nobj || seen[k_]++)           \
            dup++;                              \
    } while (0)
    for (uint32_t i = 0; i < nslots; i++) {
        struct mag *m = (struct mag *)slots[i];
        for (uint32_t k = 0; k < held_by(m); k++, in_mags++)
            SEE(m->obj[k]);
    }
    for (size_t i = 0; i < npool; i++)
        for (uint32_t k = 0; k < held_by(pool[i]); k++, in_mags++)
            SEE(pool[i]->obj[k]);
    for (int i = 0; i < nworkers; i++)
        for (int k = 0; k < ws[i].nheld; k++, held++)
            SEE(ws[i].held[k]);
    size_t missing = 0;
    for (size_t k = 0; k < nobj; k++)
        missing += seen[k] == 0;
    uint64_t moved = 0; /* every magazine began with no count */
    for (uint32_t i = 0; i < nslots + SPARES; i++)
        moved += mags[i].n >> SWF_RSEQ_MOVED_SHIFT_;

    diag("%d workers on %ld CPUs, %u slots (%s): %llu pops, %llu pushes, %llu swaps, %llu lock "
         "rounds, %u moves, %llu aborts",
         nworkers, ncpu, nslots, swfi_rseq_mode() == SWFI_RSEQ_MM_CID ? "mm_cid" : "cpu_id",
         (unsigned long long)pops, (unsigned long long)pushes, (unsigned long long)swaps,
         (unsigned long long)lock_rounds, moves, (unsigned long long)aborts);
    ok(pops > 0 && pushes > 0 && swaps > 0 && lock_rounds > 0,
       "the workers popped, pushed and swapped, and the locker locked");
    ok(aborts > 0, "sequences were aborted and started again (%llu)", (unsigned long long)aborts);
    ok(dup == 0 && missing == 0 && in_mags + held == nobj,
       "every object is in exactly one place (%zu duplicated, %zu missing of %zu)", dup, missing,
       nobj);
    ok(bad_seen == 0, "the locker always locked (the fence worked) and found a magazine within its "
                      "capacity");
    ok(pops - pushes == held, "pops - pushes = objects held by the workers");
    ok(moved == pops + pushes,
       "the magazines' words counted every object moved once (%llu, pops + pushes %llu)",
       (unsigned long long)moved, (unsigned long long)(pops + pushes));
    free(ws);
    return tap_done();
}
#else
int main(void)
{
    skip("no per-CPU sequences in this build (architecture, TSan or no <sys/rseq.h>)");
    return tap_done();
}
#endif
