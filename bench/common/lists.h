/*
 * bench/common/lists.h - what the seed, floor, fault and generic benchmark families share: the
 * 128-byte member on a CK_LIST, the lists themselves (built once per size and order, so that every
 * family in a process measures the same lists), the object init every family uses, a clock, a
 * read-side guard that times its own sections, and the parsing of the benchmarks' own flags.
 *
 * Members: an array of struct bmember (128 bytes, 64-byte aligned, so each one is two cache lines
 * and the link and the slot share the first), linked on a CK_LIST in a shuffled order (a fixed
 * Fisher-Yates permutation per N: consecutive members are far apart in memory, as tasks are) or,
 * as an option, in array order. Every slot starts empty.
 *
 * The adapters: `blp` is SWF_LIST_CK_LIST_PINNED with pins that do nothing and `linked` always
 * true. That is correct here and only here: a benchmark is single-threaded and never unlinks a
 * member, so a member's memory and place stay valid while the sweep is outside its section,
 * which is all a pin must guarantee (list.h). A program with concurrent deletes needs real pins
 * (a reference count and a linked flag, as test/common/members.h has). `bl` is the plain
 * SWF_LIST_CK_LIST adapter (no pins). Both are generated inline, so SWF_SWEEP_DEFINE can use them
 * directly.
 */
#ifndef SWF_BENCH_LISTS_H
#define SWF_BENCH_LISTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include <ck_epoch.h>
#include <ck_queue.h>

#include <sweepfill/sweep.h>

#include "host.h"

#define BMEMBER_SIZE 128

struct bmember {
    CK_LIST_ENTRY(bmember) link;
    void *slot;
    uint64_t id;
    char pad[BMEMBER_SIZE - 2 * sizeof(void *) - sizeof(void *) - sizeof(uint64_t)];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct bmember) == BMEMBER_SIZE, "a member is 128 bytes");

CK_LIST_HEAD(bmember_list, bmember);

struct blist {
    struct bmember *m; /* the members, in memory order */
    size_t n;
    bool shuffled;
    struct bmember_list head;
};

/* Pins for a single-threaded benchmark that never unlinks: nothing to do (see above). */
static inline void bmember_pin(struct bmember *m)
{
    (void)m;
}
static inline void bmember_unpin(struct bmember *m)
{
    (void)m;
}
static inline bool bmember_linked(struct bmember *m)
{
    (void)m;
    return true;
}

SWF_LIST_CK_LIST_PINNED(blp, bmember_list, bmember, link, slot, bmember_pin, bmember_unpin,
                        bmember_linked)
SWF_LIST_CK_LIST(bl, bmember_list, bmember, link, slot)

/*
 * The object every family initialises before publishing it: what the kernel does to a fresh
 * shadow stack (an owner and a depth), two stores into the object's first cache line.
 */
struct bobj {
    void *owner;
    int64_t depth;
};

static inline void bobj_init(void *obj, void *member, void *arg)
{
    (void)arg;
    struct bobj *o = (struct bobj *)obj;
    o->owner = member;
    o->depth = -1;
}

/* The order in which every list of n members is linked: 0, 1, ..., n-1, or (shuffled) a fixed
 * Fisher-Yates permutation per n, the same in every family and process. */
void bench_order(size_t *order, size_t n, bool shuffled);

/* The list of n members in the given order, built on first use and kept for the process. NULL
 * if memory ran out. Not thread-safe: call from the benchmark thread. */
struct blist *blist_get(size_t n, bool shuffled);

/* Set every slot to NULL, in memory order (outside any timed region: it is also what leaves the
 * list in the same cache state before every measurement). */
void blist_clear(struct blist *l);

/* Free every slot's object to c, except `sentinel` (may be NULL), and clear the slots. Returns
 * how many objects were freed. */
size_t blist_release(struct blist *l, struct swf_cache *c, const void *sentinel);

/* The same, walking the list and freeing in the reverse of list order: a sweep allocates in
 * list order from the calling thread's magazines (last in, first out), so this hands the next
 * sweep the same objects in the same order. Freeing in memory order instead would, after a
 * shuffled list, leave the objects in a scrambled order for the next sweep. Returns how many were
 * freed, or (size_t)-1 if the scratch array could not be allocated (nothing freed). */
size_t blist_release_reverse(struct blist *l, struct swf_cache *c, const void *sentinel);

/* Members whose slot is NULL. */
size_t blist_empty(const struct blist *l);

/* Monotonic clock, nanoseconds. */
static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread, and of the whole process (every thread), nanoseconds. */
static inline uint64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t bench_process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Involuntary context switches of the calling thread so far: its preemptions. */
static inline long bench_thread_preemptions(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

/* A benchmark's arguments: every (size, n) of sizes x ns, named "size" and "n". */
struct swfb_bench;
void bench_args_size_n(struct swfb_bench *b, const int64_t *sizes, int nsizes, const int64_t *ns,
                       int nn);

/* The process's ck_epoch and the calling thread's record in it (registered on first call). */
ck_epoch_record_t *bench_epoch_record(void);

/*
 * A guard that wraps the ck_epoch guard (swf_guard_epoch on bench_epoch_record()) and adds up the
 * time spent between enter and leave: the time inside read-side sections. Two clock reads per
 * section.
 */
struct timed_guard {
    struct swf_guard inner;
    uint64_t entered_ns;
    uint64_t inside_ns;
};
void timed_guard_init(struct timed_guard *tg, struct swf_guard *out);

/*
 * The benchmarks' own flags, taken out of argv before swfb_main sees it: removes every
 * "--name=value" and "--name" and returns the last value ("" for the bare form), or NULL when
 * absent.
 */
const char *bench_take_flag(int *argc, char **argv, const char *name);

/* A comma-separated list of positive integers, each optionally suffixed with k (1,000) or
 * M (1,000,000). Returns how many were stored, or -1 on a malformed list or more than max. */
int bench_parse_list(const char *s, int64_t *out, int max);

/* bench_take_flag for a list flag (--name=1,2,3): stores it in out (at most max) and its length
 * in *count when present. Returns 0, or -1 after telling `program`'s user what was wrong. */
int bench_take_list_flag(int *argc, char **argv, const char *program, const char *name,
                         int64_t *out, int max, int *count);

/* floor.c: register the floor family for these object sizes and list lengths (bench_seed's
 * main calls it, so that the floors run in the same process and on the same lists as the seed). */
void floor_register(const int64_t *sizes, int nsizes, const int64_t *ns, int nn, bool shuffled);

#endif /* SWF_BENCH_LISTS_H */
