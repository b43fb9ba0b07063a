/*
 * sweepfill/list_hash.h - sweeps over hash tables: a bucket array of lists
 * (SWF_LIST_BUCKETS_AUTO(3)), and Concurrency Kit's ck_hs through its SPMC iterator
 * (SWF_LIST_CK_HS_AUTO(3)), with resumable cursors.
 *
 * Both adapters pin with the member's struct swf_pin (pin.h), and keep a sweep's walk state in a
 * struct the caller provides for each sweep (struct swf_bucket_walk, struct swf_hs_walk), which
 * name_list() initialises and the sweep hands to every op.
 *
 * Synchronisation table ("-": may run concurrently; "X": two SWF_PUBLISH_STORE sweeps of the same
 * slots must not; writers and readers as the table's own rules say):
 *                   sweep   reader   writer (insert, remove + retire, resize)
 *   sweep (STORE)     X        -        -
 *   sweep (CAS)       -        -        -
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

/* One sweep's walk over a bucket array: what name_list() sets up and every op receives. */
struct swf_bucket_walk {
    void *table;
    size_t bucket; /* the cursor's bucket */
    uint64_t gen;  /* the table's generation when the walk last started from the first bucket */
};

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
 * SWF_LIST_BUCKETS_AUTO and SWF_LIST_BUCKETS_CK_LIST_AUTO generate the list operations, the
 * table name_ops, the constant name_slot_offset and name_list(struct swf_bucket_walk *w,
 * struct table_type *t) for a table of bucket lists; swf_buckets_resized() bumps the table's
 * generation after a resize.
 *
 * Concurrency: As the table's own readers: per the guard and the bucket lists (CK_LIST: one
 * writer at a time, epoch readers; under a lock guard, writers exclusive). A sweep runs
 * concurrently with readers, with writers (inserts, removes and retires, resizes) and with
 * SWF_PUBLISH_CAS sweeps; two SWF_PUBLISH_STORE sweeps of the same slots must not run at once.
 *
 * A resize (members moved to other buckets, or a new bucket array) happens under the write side of
 * a lock guard (swf_guard_rwlock(3) or swf_guard_mutex(3)), and the resizing writer calls
 * swf_buckets_resized() on gen_field before it releases the write side. With an epoch or RCU
 * guard, a member moved between buckets while readers walk them can be hidden from a walk even
 * within a section, as from any reader: resize such a table only under a lock, or never
 * (gen_field stays 0).
 *
 * Every member present in the table for the whole sweep is visited at least once; a resize while
 * the sweep is outside its section costs one more pass, whose visits to members already filled only
 * check their slot (the sweep's restarts counts it). Members added or removed during the sweep may
 * or may not be visited; within a section the walk is as good as the bucket lists' own readers.
 * Deleters unlink the member and retire its pin (swf_pin_retire(3)); the free function of a retired
 * member may run inside the sweep's section, in its put.
 * Progress: A step of the walk is wait-free, plus the empty buckets it skips, bounded by the
 * bucket count. swf_buckets_resized() is wait-free: one atomic add.
 * Ordering: swf_buckets_resized() bumps the generation under the write side, whose release
 * orders it, with the new layout, before any section that sees that layout; linked loads the
 * generation with acquire, so a section that sees a new layout sees its new generation. The
 * walk's loads are the bucket lists' (CK_LIST: fenced loads).
 * Returns: name_list() returns the struct swf_list by value; swf_buckets_resized() returns
 * nothing.
 * Errors: None; nothing here fails. name_list() does not check its arguments, it only stores
 * them; swf_sweep(3) checks the operations and the configuration.
 */
static inline void swf_buckets_resized(uint64_t *gen)
{
    __atomic_fetch_add(gen, 1, __ATOMIC_SEQ_CST);
}
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

/*
 * SWF_LIST_CK_HS_AUTO generates the list operations, the table name_ops, the constant
 * name_slot_offset and name_list(struct swf_hs_walk *w, ck_hs_t *hs) for a ck_hs_t
 * (CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT) whose keys are pointers to member_type;
 * swf_ck_hs_changed() bumps the process-wide count of ck_hs map allocations and moves, and
 * swf_ck_hs_generation() reads it.
 *
 * Concurrency: One writer (SPMC), any number of readers and sweeps in epoch sections. A sweep
 * runs concurrently with readers, with the writer (inserts, removes and retires, resizes) and
 * with SWF_PUBLISH_CAS sweeps; two SWF_PUBLISH_STORE sweeps of the same slots must not run at
 * once. swf_ck_hs_changed() and swf_ck_hs_generation() may be called from any thread.
 *
 * The writer frees replaced maps through its ck_malloc with defer = true (after a grace period),
 * and that ck_malloc's malloc calls swf_ck_hs_changed().
 *
 * Every member present in the table for the whole sweep is visited at least once while the writer
 * uses put, put_unique, remove, grow, rebuild and reset; a change while the sweep is outside its
 * section costs one more pass (the sweep's restarts counts it). set, fas, apply and gc may move a
 * live entry to an earlier slot of the same map: call swf_ck_hs_changed() before them if a sweep
 * may be running, which makes a sweep outside its section restart; one inside it may still miss the
 * moved entry, as ck_hs_next() would. Members added or removed during the sweep may or may not be
 * visited; within a section the walk is as good as ck_hs's own readers. Deleters remove the member
 * and retire its pin (swf_pin_retire(3)); the free function of a retired member may run inside the
 * sweep's section, in its put.
 * Progress: A step of the walk is wait-free, plus ck_hs_next_spmc()'s scan over empty slots,
 * bounded by the map's capacity. swf_ck_hs_changed() is lock-free: one atomic add.
 * swf_ck_hs_generation() is wait-free.
 * Ordering: swf_ck_hs_changed() bumps the count before ck_hs fences and stores the new map
 * pointer (or moves an entry), which publishes the count. linked loads the map pointer with
 * acquire and then the count (swf_ck_hs_generation() is an acquire load), so a section that
 * sees a new map sees its new count. The walk's loads are ck_hs's.
 * Returns: name_list() returns the struct swf_list by value; swf_ck_hs_generation() returns the
 * count; swf_ck_hs_changed() returns nothing.
 * Errors: None; neither function fails. name_list() does not check its arguments, it only
 * stores them; swf_sweep(3) checks the operations and the configuration.
 */
SWF_API void swf_ck_hs_changed(void);
SWF_API uint64_t swf_ck_hs_generation(void);
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
