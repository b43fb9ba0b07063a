/*
 * sweepfill/list_hash.h - sweeps over hash tables: a bucket array of lists, and Concurrency
 * Kit's ck_hs (through its SPMC iterator), with resumable cursors.
 *
 * The walk state lives in a struct the caller provides for each sweep (struct swf_bucket_walk,
 * struct swf_hs_walk), which NAME_list() initialises and the sweep hands to every op. When the
 * sweep re-enters a section with its cursor pinned, `linked` checks that the member was not
 * retired AND that the table was not resized meanwhile; if either changed, the walk starts
 * again from the first bucket (or map slot) of the current table.
 * Guarantee: every member present in the table for the whole sweep is visited at least once (a
 * resize while the sweep is outside its section costs one more pass, whose visits to members
 * already filled only check their slot; stats.restarts counts it). Members added or removed
 * during the sweep may or may not be visited. Within a section, the walk is as good as the
 * table's own readers. Deleters unlink and swf_pin_retire the member's struct swf_pin (pin.h);
 * free_fn of a retired member may run inside the sweep's section (its put).
 *
 * Bucket arrays: SWF_LIST_BUCKETS_AUTO and SWF_LIST_BUCKETS_CK_LIST_AUTO, below. A resize
 * (members moved to other buckets, or a new bucket array) must happen under the write side of a
 * lock guard (swf_guard_rwlock or swf_guard_mutex) and bump gen_field with swf_buckets_resized()
 * before the write side is released. With an epoch or RCU guard, a member moved between buckets
 * while readers walk them can be hidden from a walk even within a section, as from any reader:
 * resize such a table only under a lock, or never (gen_field stays 0).
 *
 * ck_hs: SWF_LIST_CK_HS_AUTO, below, for a ck_hs_t (CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT) whose
 * writer frees replaced maps through its ck_malloc with defer = true (after a grace period), so
 * that the epoch section keeps the walk's map alive. Call swf_ck_hs_changed() from your
 * ck_malloc's malloc (ck_hs allocates maps only through it): the count is process-wide, so a map
 * allocated for any ck_hs makes every ck_hs sweep that is outside its section restart once. The
 * guarantee above holds while the writer uses put, put_unique, remove, grow, rebuild and reset.
 * set, fas, apply and gc may move a live entry to an earlier slot of the same map, which an
 * iteration (ck_hs_next's own, too) can miss: call swf_ck_hs_changed() before them if a sweep may
 * be running, which makes a sweep outside its section restart (one inside it may still miss the
 * moved entry, as ck_hs_next would). Why the count and not the map's address: docs/design.md,
 * 'Lists and containers that are not lists'.
 *
 * Synchronisation: as the table's own readers. Bucket arrays: per the guard and the bucket lists
 * (CK_LIST: one writer at a time, epoch readers; under a lock guard, writers exclusive). ck_hs:
 * one writer (SPMC), any number of readers and sweeps in epoch sections.
 *                   sweep   reader   writer (insert, remove + retire, resize)
 *   sweep (STORE)     X        -        -
 *   sweep (CAS)       -        -        -
 *
 * Memory ordering: swf_buckets_resized bumps the bucket table's generation under the write side,
 * whose unlock releases it with the new layout; swf_ck_hs_changed bumps the ck_hs count before
 * ck_hs fences and stores the new map pointer (or moves an entry), which publishes the count.
 * linked loads the map pointer (acquire) and then the generation, so a section that sees a new
 * layout or map sees its new count. The walk's loads are the bucket list's (CK_LIST: fenced loads)
 * or ck_hs's.
 *
 * Progress: a step of the walk is wait-free, plus empty buckets skipped (bounded by the bucket
 * count) or ck_hs_next_spmc's scan over empty slots (bounded by the map's capacity). NAME_list
 * does not check its arguments (it only stores them); swf_sweep checks the ops and the config.
 */
#ifndef SWEEPFILL_LIST_HASH_H
#define SWEEPFILL_LIST_HASH_H

#include <stddef.h>
#include <stdint.h>

#include <ck_hs.h>
#include <ck_queue.h>

#include "api.h"
#include "list.h"
#include "pin.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bucket arrays ------------------------------------------------------------------------ */

/* One sweep's walk over a bucket array: what NAME_list() sets up and every op receives. */
struct swf_bucket_walk {
    void *table;
    size_t bucket; /* the cursor's bucket */
    uint64_t gen;  /* the table's generation when the walk last started from the first bucket */
};

/* After moving members between buckets (a resize), before releasing the write side (whose
 * release orders it before any section that sees the new layout). Wait-free. */
static inline void swf_buckets_resized(uint64_t *gen)
{
    __atomic_fetch_add(gen, 1, __ATOMIC_SEQ_CST);
}

#define SWF_LIST_BUCKETS_WALK_(name, table_type, buckets_field, nbuckets_field, gen_field,       \
                               member_type, link_field, FIRST, NEXT)                             \
    SWF_LIST_FN_ void *name##_from_bucket(struct swf_bucket_walk *w, size_t b)                   \
    {                                                                                            \
        struct table_type *t = (struct table_type *)w->table;                                    \
        for (; b < t->nbuckets_field; b++) {                                                     \
            struct member_type *m = FIRST(&t->buckets_field[b]);                                 \
            if (m != NULL) {                                                                     \
                w->bucket = b;                                                                   \
                return m;                                                                        \
            }                                                                                    \
        }                                                                                        \
        return NULL;                                                                             \
    }                                                                                            \
    SWF_LIST_FN_ void *name##_first(void *list)                                                  \
    {                                                                                            \
        struct swf_bucket_walk *w = (struct swf_bucket_walk *)list;                              \
        w->gen = __atomic_load_n(&((struct table_type *)w->table)->gen_field, __ATOMIC_ACQUIRE); \
        return name##_from_bucket(w, 0);                                                         \
    }                                                                                            \
    SWF_LIST_FN_ void *name##_next(void *list, void *m)                                          \
    {                                                                                            \
        struct member_type *n = NEXT((struct member_type *)m, link_field);                       \
        if (n != NULL)                                                                           \
            return n;                                                                            \
        struct swf_bucket_walk *w = (struct swf_bucket_walk *)list;                              \
        return name##_from_bucket(w, w->bucket + 1);                                             \
    }

/*
 * For a `struct table_type` holding `struct head_type *buckets_field` (or an array of them),
 * `size_t nbuckets_field` and `uint64_t gen_field`, each bucket a list walked by FIRST(struct
 * head_type *) and NEXT(struct member_type *, link_field) (CK_LIST_FIRST/NEXT for the _CK_LIST
 * form; sys/queue.h's LIST_FIRST/NEXT work too); the member embeds a struct swf_pin at
 * pin_field. Defines NAME_ops and NAME_list(struct swf_bucket_walk *w, struct table_type *t).
 */
#define SWF_LIST_BUCKETS_AUTO(name, table_type, buckets_field, nbuckets_field, gen_field,        \
                              head_type, member_type, link_field, slot_field, pin_field, FIRST,  \
                              NEXT)                                                              \
    SWF_LIST_BUCKETS_WALK_(name, table_type, buckets_field, nbuckets_field, gen_field,           \
                           member_type, link_field, FIRST, NEXT)                                 \
    SWF_LIST_PIN_GET_PUT_FNS_(name, member_type, pin_field)                                      \
    SWF_LIST_FN_ bool name##_linked(void *list, void *m)                                         \
    {                                                                                            \
        struct swf_bucket_walk *w = (struct swf_bucket_walk *)list;                              \
        return swf_pin_linked(&((struct member_type *)m)->pin_field) &&                          \
               __atomic_load_n(&((struct table_type *)w->table)->gen_field, __ATOMIC_ACQUIRE) == \
                   w->gen;                                                                       \
    }                                                                                            \
    SWF_LIST_OPS_DEFINE_(name, name##_pin, name##_unpin, name##_linked);                         \
    SWF_LIST_SLOT_OFFSET_(name, member_type, slot_field);                                        \
    __attribute__((unused)) static inline struct swf_list name##_list(struct swf_bucket_walk *w, \
                                                                      struct table_type *t)      \
    {                                                                                            \
        w->table = t;                                                                            \
        w->bucket = 0;                                                                           \
        w->gen = 0;                                                                              \
        struct swf_list l = {&name##_ops, w, offsetof(struct member_type, slot_field)};          \
        return l;                                                                                \
    }

#define SWF_LIST_BUCKETS_CK_LIST_AUTO(name, table_type, buckets_field, nbuckets_field, gen_field, \
                                      head_type, member_type, link_field, slot_field, pin_field)  \
    SWF_LIST_BUCKETS_AUTO(name, table_type, buckets_field, nbuckets_field, gen_field, head_type,  \
                          member_type, link_field, slot_field, pin_field, CK_LIST_FIRST,          \
                          CK_LIST_NEXT)

/* ---- ck_hs -------------------------------------------------------------------------------- */

/* One sweep's walk over a ck_hs. */
struct swf_hs_walk {
    ck_hs_t *hs;
    ck_hs_iterator_t it;
    uint64_t gen; /* swf_ck_hs_generation() when the walk last started */
};

/* A ck_hs map may have been allocated, or an entry moved: call from your ck_malloc's malloc, and
 * before set/fas/apply/gc while a sweep may run. Lock-free (one atomic add); any thread.
 */
SWF_API void swf_ck_hs_changed(void);

/* The count swf_ck_hs_changed() bumps (acquire load). Wait-free; any thread. */
SWF_API uint64_t swf_ck_hs_generation(void);

/*
 * For a ck_hs_t (CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT) whose keys are pointers to member_type,
 * which embeds a struct swf_pin at pin_field. Defines NAME_ops and NAME_list(struct swf_hs_walk
 * *w, ck_hs_t *hs). The walk is ck_hs_next_spmc: within a section it iterates the map it started
 * on; across sections, `linked` also requires that hs still uses that map and that no map was
 * allocated since the walk started (swf_ck_hs_generation() unchanged).
 */
#define SWF_LIST_CK_HS_AUTO(name, member_type, slot_field, pin_field)                         \
    SWF_LIST_FN_ void *name##_first(void *list)                                               \
    {                                                                                         \
        struct swf_hs_walk *w = (struct swf_hs_walk *)list;                                   \
        void *key;                                                                            \
        w->gen = swf_ck_hs_generation(); /* before the iterator loads the map */              \
        ck_hs_iterator_init(&w->it);                                                          \
        return ck_hs_next_spmc(w->hs, &w->it, &key) ? key : NULL;                             \
    }                                                                                         \
    SWF_LIST_FN_ void *name##_next(void *list, void *m)                                       \
    {                                                                                         \
        struct swf_hs_walk *w = (struct swf_hs_walk *)list;                                   \
        void *key;                                                                            \
        (void)m;                                                                              \
        return ck_hs_next_spmc(w->hs, &w->it, &key) ? key : NULL;                             \
    }                                                                                         \
    SWF_LIST_PIN_GET_PUT_FNS_(name, member_type, pin_field)                                   \
    SWF_LIST_FN_ bool name##_linked(void *list, void *m)                                      \
    {                                                                                         \
        struct swf_hs_walk *w = (struct swf_hs_walk *)list;                                   \
        if (!swf_pin_linked(&((struct member_type *)m)->pin_field))                           \
            return false;                                                                     \
        /* The map first (acquire), then the generation: a new map is seen with its count. */ \
        struct ck_hs_map *map = __atomic_load_n(&w->hs->map, __ATOMIC_ACQUIRE);               \
        return map == w->it.map && swf_ck_hs_generation() == w->gen;                          \
    }                                                                                         \
    SWF_LIST_OPS_DEFINE_(name, name##_pin, name##_unpin, name##_linked);                      \
    SWF_LIST_SLOT_OFFSET_(name, member_type, slot_field);                                     \
    __attribute__((unused)) static inline struct swf_list name##_list(struct swf_hs_walk *w,  \
                                                                      ck_hs_t *hs)            \
    {                                                                                         \
        w->hs = hs;                                                                           \
        ck_hs_iterator_init(&w->it);                                                          \
        w->gen = 0;                                                                           \
        struct swf_list l = {&name##_ops, w, offsetof(struct member_type, slot_field)};       \
        return l;                                                                             \
    }

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_LIST_HASH_H */
