/*
 * test/concurrent/synchronize_ready.c - the ready-made synchronize functions (sweep.h,
 * list_urcu.h): swf_synchronize_epoch, swf_synchronize_rwlock, swf_synchronize_mutex and (built
 * with liburcu) swf_synchronize_urcu with the memb flavour.
 *
 *   - each waits for a reader inside a section: a reader thread enters, the main thread calls
 *     the function, the reader leaves a while later, marking that it left just before; the
 *     function must not return before the mark (rounds of it, with the reader's stay varied);
 *   - the epoch one sleeps while it waits: the calling thread's CPU time over a 200 ms wait is
 *     under a tenth of the wait (a quarter under valgrind, qemu or a sanitizer), where
 *     ck_epoch_synchronize spins through all of it. Load only lowers a sleeping waiter's CPU
 *     time, so the bound cannot fail one;
 *   - each works as a feature's synchronize with its guard, with readers in sections all along:
 *     activations and deactivations, every slot taken back, a reader never sees an object of
 *     another member (an object freed under it and handed out again), and the cache balanced.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ck_epoch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef SWF_TEST_URCU
#include <urcu/urcu-memb.h>
#include <sweepfill/list_urcu.h>
#endif
#include <sweepfill/feature.h>

#include "../common/tap.h"

/* Under ThreadSanitizer the test's own epoch sections say what sweepfill's do (lib/base/tsan.h):
 * a section's end releases on the epoch, and swf_synchronize_epoch acquires it. */
#ifdef TEST_TSAN
void __tsan_release(void *addr);
#define EPOCH_SECTION_ENDS() __tsan_release(&epoch)
#else
#define EPOCH_SECTION_ENDS() ((void)0)
#endif

enum { N = 2000, ROUNDS = 8, TOGGLES = 30 };

enum kind { EPOCH, RWLOCK, MUTEX, URCU, KINDS };
static const char *const kind_name[KINDS] = {"epoch", "rwlock", "mutex", "urcu (memb)"};

static ck_epoch_t epoch;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

struct item {
    void *slot;
    int id;
};

static struct item items[N];
static struct swf_array arr = {items, N, sizeof(struct item)};
static struct swf_cache *cache;

#ifdef OLD_LIBRARY /* the library before them: what its users wrote (ck_epoch_synchronize spins) \
                    */
static void swf_synchronize_epoch(void *rec)
{
    ck_epoch_synchronize(rec);
}
static void swf_synchronize_rwlock(void *lock)
{
    pthread_rwlock_wrlock(lock);
    pthread_rwlock_unlock(lock);
}
static void swf_synchronize_mutex(void *lock)
{
    pthread_mutex_lock(lock);
    pthread_mutex_unlock(lock);
}
#endif

/* ---- a reader's section, per kind ------------------------------------------------------------ */

struct reader {
    enum kind kind;
    ck_epoch_record_t *rec; /* the epoch keeps its records linked: never on a stack */
};

static void reader_start(struct reader *r)
{
    if (r->kind == EPOCH) {
        r->rec = ck_epoch_recycle(&epoch, NULL);
        if (r->rec == NULL) {
            r->rec = aligned_alloc(64, sizeof(ck_epoch_record_t));
            tap_require(r->rec != NULL, "a record");
            ck_epoch_register(&epoch, r->rec, NULL);
        }
    }
#ifdef SWF_TEST_URCU
    if (r->kind == URCU)
        urcu_memb_register_thread();
#endif
}

static void reader_stop(struct reader *r)
{
    if (r->kind == EPOCH)
        ck_epoch_unregister(r->rec);
#ifdef SWF_TEST_URCU
    if (r->kind == URCU)
        urcu_memb_unregister_thread();
#endif
}

static void enter(struct reader *r)
{
    switch (r->kind) {
    case EPOCH:
        ck_epoch_begin(r->rec, NULL);
        break;
    case RWLOCK:
        pthread_rwlock_rdlock(&rwlock);
        break;
    case MUTEX:
        pthread_mutex_lock(&mutex);
        break;
    default:
#ifdef SWF_TEST_URCU
        urcu_memb_read_lock();
#endif
        break;
    }
}

static void leave(struct reader *r)
{
    switch (r->kind) {
    case EPOCH:
        EPOCH_SECTION_ENDS();
        ck_epoch_end(r->rec, NULL);
        break;
    case RWLOCK:
        pthread_rwlock_unlock(&rwlock);
        break;
    case MUTEX:
        pthread_mutex_unlock(&mutex);
        break;
    default:
#ifdef SWF_TEST_URCU
        SWF_URCU_TSAN_READ_UNLOCK(&urcu_memb_flavor);
        urcu_memb_read_unlock();
#endif
        break;
    }
}

/* The synchronize function of kind and its argument (the calling thread's epoch record). */
static void (*sync_fn(enum kind k))(void *)
{
    switch (k) {
    case EPOCH:
        return swf_synchronize_epoch;
    case RWLOCK:
        return swf_synchronize_rwlock;
    case MUTEX:
        return swf_synchronize_mutex;
    default:
#ifdef SWF_TEST_URCU
        return swf_synchronize_urcu;
#else
        return NULL;
#endif
    }
}

static ck_epoch_record_t main_rec; /* the main thread's: its sections and its synchronize */

static void *sync_arg(enum kind k)
{
    switch (k) {
    case EPOCH:
        return &main_rec;
    case RWLOCK:
        return &rwlock;
    case MUTEX:
        return &mutex;
    default:
#ifdef SWF_TEST_URCU
        return (void *)&urcu_memb_flavor;
#else
        return NULL;
#endif
    }
}

/* ---- the wait for one reader ----------------------------------------------------------------- */

static int x_inside, x_started, x_left;
static unsigned int stay_us;

static void wait_flag(int *flag)
{
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
        usleep(200);
}

static void *one_reader(void *arg)
{
    struct reader r = {.kind = *(enum kind *)arg};
    reader_start(&r);
    enter(&r);
    __atomic_store_n(&x_inside, 1, __ATOMIC_RELEASE);
    wait_flag(&x_started);
    usleep(stay_us); /* the synchronize is (very likely) waiting by now; correct either way */
    __atomic_store_n(&x_left, 1, __ATOMIC_RELEASE);
    leave(&r);
    reader_stop(&r);
    return NULL;
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One round: returns whether the synchronize returned after the reader's mark; cpu and wall of
 * the call in ms. */
static bool waits_for_reader(enum kind k, unsigned int us, double *cpu, double *wall)
{
    __atomic_store_n(&x_inside, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&x_started, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&x_left, 0, __ATOMIC_RELAXED);
    stay_us = us;
    pthread_t t;
    pthread_create(&t, NULL, one_reader, &k);
    wait_flag(&x_inside);
    __atomic_store_n(&x_started, 1, __ATOMIC_RELEASE);
    double c0 = thread_cpu_ms(), w0 = wall_ms();
    sync_fn(k)(sync_arg(k));
    *cpu = thread_cpu_ms() - c0;
    *wall = wall_ms() - w0;
    bool after = __atomic_load_n(&x_left, __ATOMIC_ACQUIRE) != 0;
    pthread_join(t, NULL);
    return after;
}

/* ---- as a feature's synchronize -------------------------------------------------------------- */

static int x_stop;
static uint64_t x_wrong;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void *reading(void *arg)
{
    struct reader r = {.kind = *(enum kind *)arg};
    reader_start(&r);
    unsigned int i = 0;
    while (!__atomic_load_n(&x_stop, __ATOMIC_ACQUIRE)) {
        enter(&r);
        for (int j = 0; j < 64; j++, i = (i * 7 + 13) % N) {
            void **obj = swf_slot_load(&items[i].slot);
            if (obj != NULL && __atomic_load_n(obj, __ATOMIC_RELAXED) != &items[i])
                __atomic_fetch_add(&x_wrong, 1, __ATOMIC_RELAXED);
        }
        leave(&r);
        usleep(20); /* a gap: glibc's default rwlock lets overlapping readers starve a writer */
    }
    reader_stop(&r);
    return NULL;
}

static void as_feature(enum kind k)
{
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
    fc.sweep.cache = cache;
    fc.sweep.init = init_obj;
    fc.sweep.section_bound = 256;
    switch (k) {
    case EPOCH:
        swf_guard_epoch(&fc.sweep.guard, &main_rec);
        break;
    case RWLOCK:
        swf_guard_rwlock(&fc.sweep.guard, &rwlock);
        break;
    case MUTEX:
        swf_guard_mutex(&fc.sweep.guard, &mutex);
        break;
    default:
#ifdef SWF_TEST_URCU
        swf_guard_urcu(&fc.sweep.guard, &urcu_memb_flavor);
#endif
        break;
    }
    fc.synchronize = sync_fn(k);
    fc.synchronize_arg = sync_arg(k);
    fc.prepare = N + 64;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "feature");
    __atomic_store_n(&x_stop, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&x_wrong, 0, __ATOMIC_RELAXED);
    pthread_t readers[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&readers[i], NULL, reading, &k);
    int bad = 0;
    size_t left = 0;
    for (int t = 0; t < TOGGLES; t++) {
        bad += swf_feature_activate(f, NULL) != 0;
        bad += swf_feature_deactivate(f) != 0;
        for (int i = 0; i < N; i++)
            left += swf_slot_load(&items[i].slot) != NULL;
    }
    __atomic_store_n(&x_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(readers[i], NULL);
    struct swf_feature_stats fs;
    swf_feature_stats(f, &fs);
    struct swf_cache_stats cs;
    swf_cache_stats(cache, &cs);
    ok(bad == 0 && left == 0 && fs.unpublished == (uint64_t)TOGGLES * N && cs.alive == 0,
       "%s: as a feature's synchronize: %d activations and deactivations, every slot taken back "
       "(%zu left, %llu taken), the cache balanced (%llu alive)",
       kind_name[k], TOGGLES, left, (unsigned long long)fs.unpublished,
       (unsigned long long)cs.alive);
    ok(__atomic_load_n(&x_wrong, __ATOMIC_RELAXED) == 0,
       "%s: readers in sections all along never saw another member's object (%llu seen)",
       kind_name[k], (unsigned long long)__atomic_load_n(&x_wrong, __ATOMIC_RELAXED));
    tap_require(swf_feature_destroy(f) == 0, "destroy");
}

int main(void)
{
    struct swf_cache_config cc = {.object_size = 64, .name = "synchronize-ready"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "cache");
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &main_rec, NULL);
#ifdef SWF_TEST_URCU
    urcu_memb_register_thread();
#endif
    bool slow = tap_under_valgrind() || tap_under_qemu();
    for (int k = 0; k < KINDS; k++) {
#ifndef SWF_TEST_URCU
        if (k == URCU) {
            skip("urcu: built without liburcu");
            continue;
        }
#endif
        int late = 0;
        double cpu, wall;
        for (int r = 0; r < ROUNDS; r++)
            late += !waits_for_reader((enum kind)k, (unsigned int)(r % 4) * 5000u, &cpu, &wall);
        ok(late == 0, "%s: returned after the reader left, in each of %d rounds (%d early)",
           kind_name[k], ROUNDS, late);
        if (k == EPOCH) {
            bool after = waits_for_reader(EPOCH, slow ? 1000000u : 200000u, &cpu, &wall);
            /* A sleeping waiter scans once per wake-up (every 1 ms at most): about 2 % of the
             * wait here, more under valgrind, qemu or a sanitizer; a spinner takes what the
             * scheduler gives it (the whole wait, or a loaded machine's share of it). */
            double share = slow || TAP_SANITIZED ? 0.25 : 0.1;
            ok(after && cpu < wall * share,
               "epoch: slept while it waited: %.1f ms of CPU over a %.1f ms wait", cpu, wall);
        }
        as_feature((enum kind)k);
    }
#ifdef SWF_TEST_URCU
    urcu_memb_unregister_thread();
#endif
    return tap_done();
}
