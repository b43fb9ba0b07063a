/*
 * sweepfill/list.h - how a sweep walks a list it does not own, and how anyone reads a slot.
 *
 * A member is any struct with a `void *` field, its *slot*, at a fixed offset. A list is whatever
 * the program already has (a CK_LIST, an array, a process list of thread lists); sweepfill sees
 * it through struct swf_list_ops, whose functions are all called inside the caller's read-side
 * section (sweep.h's guards) and must guarantee:
 *
 *   first(list), next(list, m)   the first member and the one after m, or NULL. A walk from
 *                first() along next() to NULL reaches, in finitely many steps, every member
 *                present in the container for the whole walk, whatever concurrent writers do
 *                (the reader guarantee of an RCU list); members added or removed meanwhile may or
 *                may not be reached. next is called on a member reached in the same section, or
 *                on a pinned member whose linked() returned true in this section; only on the
 *                member first or next returned last (the cursor), and first again only to
 *                restart, so ops may keep walk state (a bucket index, an iterator, a stack of
 *                tree nodes) in the object `list` points to, set up afresh for each sweep.
 *   pin(list, m)      optional; inside a section in which m was reached: until unpin, m's memory
 *                     stays valid (the deleter must not free it; struct swf_pin does this for you),
 *                     and if m stays linked, its place in the list too.
 *   linked(list, m)   optional; inside a later section, with m pinned: true only if m is still in
 *                     the container (not retired), next(list, m) may be called in this section,
 *                     and the walk from there still reaches every member present throughout (no
 *                     resize moved members behind the cursor). False makes the sweep unpin m and
 *                     walk again from first() (docs/design.md, 'Linked means "still in the
 *                     container"').
 *   unpin(list, m)    optional; in a later section, releases the pin; it may free m
 *                     (swf_pin_put after m's grace period).
 *
 * pin, unpin and linked come as a set or not at all: with them a sweep's cursor survives leaving
 * its section (to refill its reserve, or to bound the section's length); without them RESUME runs
 * as RESTART (sweep.h). Adapters generated for a given struct and field by the macros below
 * (ck_queue.h lists, any FIRST/NEXT list, nested CK_LISTs, arrays; the _AUTO forms pin with
 * pin.h's struct swf_pin, with no code of yours) and in list_sysqueue.h, list_urcu.h and
 * list_hash.h each define `NAME_ops` and `NAME_list(head)`, returning the struct swf_list to pass
 * to a sweep; their functions are static inline, so a sweep generated with SWF_SWEEP_DEFINE
 * (sweep.h) calls them without an indirect call. examples/radix_sweep.c writes the ops for a
 * radix tree by hand.
 *
 * Slots: a reader loads a slot with swf_slot_load() (an acquire load): it returns NULL or an
 * object whose initialisation, done before a sweep published it with a release store or release
 * compare-and-swap, the reader sees. Writers other than the sweep use swf_slot_publish() or
 * swf_slot_publish_cas() so the same ordering holds for their objects.
 */
#ifndef SWEEPFILL_LIST_H
#define SWEEPFILL_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "api.h"
#include "pin.h"

#if defined(SWF_ATOMICS_C11) || defined(__SANITIZE_THREAD__)
#define SWF_SLOT_BUILTINS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWF_SLOT_BUILTINS 1
#endif
#endif
#ifndef SWF_SLOT_BUILTINS
#include <ck_pr.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct swf_list_ops {
    void *(*first)(void *list);
    void *(*next)(void *list, void *member);
    void (*pin)(void *list, void *member);
    void (*unpin)(void *list, void *member);
    bool (*linked)(void *list, void *member);
};

struct swf_list {
    const struct swf_list_ops *ops;
    void *list;         /* handed to every op */
    size_t slot_offset; /* offsetof(member type, slot); a multiple of sizeof(void *) */
};

/* Whether a list's cursor can survive leaving the read-side section (pin, unpin and linked all
 * set). Pure; any thread. */
static inline bool swf_list_can_pin(const struct swf_list_ops *ops)
{
    return ops->pin != SWF_NULL_ && ops->unpin != SWF_NULL_ && ops->linked != SWF_NULL_;
}

/*
 * The address of member's slot, slot_offset bytes into it.
 *
 * Concurrency: Any thread, at any time; it reads nothing.
 * Progress: Wait-free: pure arithmetic, no memory access.
 * Ordering: None.
 * Returns: The slot's address.
 * Errors: None: it cannot fail, leaves errno alone and does not check its arguments.
 */
static inline void **swf_slot_of(void *member, size_t slot_offset)
{
    return SWF_REINTERPRET_CAST_(void **, SWF_STATIC_CAST_(char *, member) + slot_offset);
}

/*
 * Load a slot with acquire ordering: what readers use.
 *
 * Concurrency: Any thread, at any time the member's memory is valid, racing freely with every
 * other call on the slot.
 * Progress: Wait-free.
 * Ordering: Acquire. Every write to an object made before the swf_slot_publish() or the
 * successful swf_slot_publish_cas() that put it in the slot happens-before everything the thread
 * does after this load returns that object.
 * Returns: The slot's content: NULL, or an object whose initialisation the caller sees.
 * Errors: None: it cannot fail, leaves errno alone and does not check its arguments.
 */
static inline void *swf_slot_load(void *const *slot)
{
#ifdef SWF_SLOT_BUILTINS
    return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
#else
    void *obj = ck_pr_load_ptr(slot);
    ck_pr_fence_acquire(); /* pairs with swf_slot_publish's release */
    return obj;
#endif
}

/*
 * Load a slot with no ordering: whether it is set (a sweep's emptiness check).
 *
 * Concurrency: Any thread, at any time the member's memory is valid, racing freely with every
 * other call on the slot.
 * Progress: Wait-free.
 * Ordering: None (a relaxed load): what it returns must not be dereferenced without further
 * ordering.
 * Returns: The slot's content.
 * Errors: None: it cannot fail, leaves errno alone and does not check its arguments.
 */
static inline void *swf_slot_peek(void *const *slot)
{
#ifdef SWF_SLOT_BUILTINS
    return __atomic_load_n(slot, __ATOMIC_RELAXED);
#else
    return ck_pr_load_ptr(slot);
#endif
}

/*
 * Store obj in a slot with release ordering, for slots with a single assigner at a time.
 *
 * Concurrency: Any thread, at any time the member's memory is valid, but one assigner of the
 * slot at a time: two concurrent stores to an empty slot would each think they filled it, and
 * one object would leak (where several assigners may race, use swf_slot_publish_cas()). Loads,
 * peeks and compare-and-swaps may race with it.
 * Progress: Wait-free.
 * Ordering: Release. Every write to obj made before this call happens-before everything a thread
 * does after its swf_slot_load() or swf_slot_take() of the slot returned obj.
 * Returns: Nothing.
 * Errors: None: it cannot fail, leaves errno alone and does not check its arguments.
 */
static inline void swf_slot_publish(void **slot, void *obj)
{
#ifdef SWF_SLOT_BUILTINS
    __atomic_store_n(slot, obj, __ATOMIC_RELEASE);
#else
    ck_pr_fence_release(); /* pairs with swf_slot_load's acquire */
    ck_pr_store_ptr(slot, obj);
#endif
}

/*
 * Store obj in a slot only if the slot is still NULL, with a release compare-and-swap: for slots
 * that several assigners may fill at once.
 *
 * Concurrency: Any thread, at any time the member's memory is valid, racing freely with every
 * other call on the slot.
 * Progress: Lock-free: one attempt, one compare-and-swap (which some architectures implement
 * with a retry loop), whose outcome it reports.
 * Ordering: Release, when it succeeds. Every write to obj made before this call happens-before
 * everything a thread does after its swf_slot_load() or swf_slot_take() of the slot returned obj.
 * A failed call orders nothing.
 * Returns: True if it published obj; false if another assigner got there first, in which case
 * obj was not published and is still the caller's.
 * Errors: None: it cannot fail, leaves errno alone and does not check its arguments.
 */
static inline bool swf_slot_publish_cas(void **slot, void *obj)
{
#ifdef SWF_SLOT_BUILTINS
    void *expected = SWF_NULL_;
    return __atomic_compare_exchange_n(slot, &expected, obj, false, __ATOMIC_RELEASE,
                                       __ATOMIC_RELAXED);
#else
    ck_pr_fence_release();
    return ck_pr_cas_ptr(slot, SWF_NULL_, obj);
#endif
}

/*
 * Clear a slot and return what it held: for taking objects back, e.g. when a feature switches
 * off. Free what it returns only after the readers that may have loaded it are done (a grace
 * period: swf_cache_free_deferred(3)).
 *
 * Concurrency: Any thread, at any time the member's memory is valid, racing freely with every
 * other call on the slot.
 * Progress: Lock-free: one exchange (which some architectures implement with a retry loop).
 * Ordering: Acquire and release. Every write to an object made before the swf_slot_publish() or
 * the successful swf_slot_publish_cas() that put it in the slot happens-before everything the
 * thread does after this call returns that object.
 * Returns: What the slot held, possibly NULL.
 * Errors: None: it cannot fail, leaves errno alone and does not check its arguments.
 */
static inline void *swf_slot_take(void **slot)
{
#ifdef SWF_SLOT_BUILTINS
    return __atomic_exchange_n(slot, SWF_NULL_, __ATOMIC_ACQ_REL);
#else
    ck_pr_fence_release();
    void *obj = ck_pr_fas_ptr(slot, SWF_NULL_);
    ck_pr_fence_acquire();
    return obj;
#endif
}

/* ---- arrays of members -------------------------------------------------------------------- */

/* count members of `stride` bytes from base. Members never leave an array, so pins are free and
 * every cursor is resumable. */
struct swf_array {
    void *base;
    size_t count;
    size_t stride;
};

SWF_API extern const struct swf_list_ops swf_array_ops;

static inline struct swf_list swf_list_array(struct swf_array *a, size_t slot_offset)
{
    struct swf_list l = {&swf_array_ops, a, slot_offset};
    return l;
}

/* ---- adapter generators ---------------------------------------------------------------------- */

/* Forced inline, so that a sweep generated with SWF_SWEEP_DEFINE folds the list walk into its
 * loop however large that loop is; taking the address (for a runtime ops table) still works. */
#define SWF_LIST_FN_ static inline __attribute__((always_inline))

#define SWF_LIST_OPS_DEFINE_(name, pin, unpin, linked)                      \
    __attribute__((unused)) static const struct swf_list_ops name##_ops = { \
        name##_first, name##_next, pin, unpin, linked}

/* The slot's offset as a constant, for SWF_SWEEP_DEFINE. */
#define SWF_LIST_SLOT_OFFSET_(name, member_type, slot_field) \
    enum { name##_slot_offset = offsetof(struct member_type, slot_field) }

#define SWF_LIST_HEAD_FN_(name, head_type, member_type, slot_field)                           \
    SWF_LIST_SLOT_OFFSET_(name, member_type, slot_field);                                     \
    __attribute__((unused)) static inline struct swf_list name##_list(struct head_type *head) \
    {                                                                                         \
        struct swf_list l = {&name##_ops, head, offsetof(struct member_type, slot_field)};    \
        return l;                                                                             \
    }

/* Typed wrappers for user pin functions: void pin(struct member_type *), likewise unpin, and
 * bool linked(struct member_type *). */
#define SWF_LIST_PIN_FNS_(name, member_type, pin_fn, unpin_fn, linked_fn) \
    SWF_LIST_FN_ void name##_pin(void *list, void *m)                     \
    {                                                                     \
        (void)list;                                                       \
        pin_fn(SWF_STATIC_CAST_(struct member_type *, m));                \
    }                                                                     \
    SWF_LIST_FN_ void name##_unpin(void *list, void *m)                   \
    {                                                                     \
        (void)list;                                                       \
        unpin_fn(SWF_STATIC_CAST_(struct member_type *, m));              \
    }                                                                     \
    SWF_LIST_FN_ bool name##_linked(void *list, void *m)                  \
    {                                                                     \
        (void)list;                                                       \
        return linked_fn(SWF_STATIC_CAST_(struct member_type *, m));      \
    }

/* Typed wrappers for the library's pins (pin.h): the member embeds `struct swf_pin pin_field`.
 * SWF_LIST_PIN_GET_PUT_FNS_ is pin and unpin alone, for adapters whose linked checks more. */
#define SWF_LIST_PIN_GET_PUT_FNS_(name, member_type, pin_field) \
    SWF_LIST_FN_ void name##_pin(void *list, void *m)           \
    {                                                           \
        (void)list;                                             \
        swf_pin_get(&((struct member_type *)m)->pin_field);     \
    }                                                           \
    SWF_LIST_FN_ void name##_unpin(void *list, void *m)         \
    {                                                           \
        (void)list;                                             \
        swf_pin_put(&((struct member_type *)m)->pin_field);     \
    }
#define SWF_LIST_PIN_AUTO_FNS_(name, member_type, pin_field)          \
    SWF_LIST_PIN_GET_PUT_FNS_(name, member_type, pin_field)           \
    SWF_LIST_FN_ bool name##_linked(void *list, void *m)              \
    {                                                                 \
        (void)list;                                                   \
        return swf_pin_linked(&((struct member_type *)m)->pin_field); \
    }

/* first/next for one ck_queue flavour: FIRST and NEXT are that flavour's macros. */
#define SWF_LIST_WALK_FNS_(name, head_type, member_type, link_field, FIRST, NEXT) \
    SWF_LIST_FN_ void *name##_first(void *list)                                   \
    {                                                                             \
        return FIRST(SWF_STATIC_CAST_(struct head_type *, list));                 \
    }                                                                             \
    SWF_LIST_FN_ void *name##_next(void *list, void *m)                           \
    {                                                                             \
        (void)list;                                                               \
        return NEXT(SWF_STATIC_CAST_(struct member_type *, m), link_field);       \
    }

/* An adapter for one ck_queue flavour, without and with pins. */
#define SWF_LIST_CK_ADAPTER_(name, head_type, member_type, link_field, slot_field, FIRST, NEXT) \
    SWF_LIST_WALK_FNS_(name, head_type, member_type, link_field, FIRST, NEXT)                   \
    SWF_LIST_OPS_DEFINE_(name, SWF_NULL_, SWF_NULL_, SWF_NULL_);                                \
    SWF_LIST_HEAD_FN_(name, head_type, member_type, slot_field)

#define SWF_LIST_CK_ADAPTER_PINNED_(name, head_type, member_type, link_field, slot_field, FIRST, \
                                    NEXT, pin_fn, unpin_fn, linked_fn)                           \
    SWF_LIST_WALK_FNS_(name, head_type, member_type, link_field, FIRST, NEXT)                    \
    SWF_LIST_PIN_FNS_(name, member_type, pin_fn, unpin_fn, linked_fn)                            \
    SWF_LIST_OPS_DEFINE_(name, name##_pin, name##_unpin, name##_linked);                         \
    SWF_LIST_HEAD_FN_(name, head_type, member_type, slot_field)

#define SWF_LIST_CK_ADAPTER_AUTO_(name, head_type, member_type, link_field, slot_field, FIRST, \
                                  NEXT, pin_field)                                             \
    SWF_LIST_WALK_FNS_(name, head_type, member_type, link_field, FIRST, NEXT)                  \
    SWF_LIST_PIN_AUTO_FNS_(name, member_type, pin_field)                                       \
    SWF_LIST_OPS_DEFINE_(name, name##_pin, name##_unpin, name##_linked);                       \
    SWF_LIST_HEAD_FN_(name, head_type, member_type, slot_field)

/*
 * SWF_LIST_FIRST_NEXT(name, head_type, member_type, link_field, slot_field, FIRST, NEXT)
 * SWF_LIST_FIRST_NEXT_AUTO(name, head_type, member_type, link_field, slot_field, FIRST, NEXT,
 *                          pin_field)
 * For any list whose first member is FIRST(struct head_type *) and whose next is
 * NEXT(struct member_type *, link_field), both NULL at the end (the BSD <sys/queue.h> and
 * ck_queue.h conventions). The _AUTO form pins with the member's `struct swf_pin pin_field`.
 * Loads through FIRST and NEXT must be what the list's readers use (e.g. ck_queue's fenced
 * loads for an epoch-protected list, plain loads under a lock).
 */
#define SWF_LIST_FIRST_NEXT(name, head_type, member_type, link_field, slot_field, FIRST, NEXT) \
    SWF_LIST_CK_ADAPTER_(name, head_type, member_type, link_field, slot_field, FIRST, NEXT)
#define SWF_LIST_FIRST_NEXT_AUTO(name, head_type, member_type, link_field, slot_field, FIRST,    \
                                 NEXT, pin_field)                                                \
    SWF_LIST_CK_ADAPTER_AUTO_(name, head_type, member_type, link_field, slot_field, FIRST, NEXT, \
                              pin_field)

/*
 * SWF_LIST_CK_LIST(name, head_type, member_type, link_field, slot_field)
 * For `CK_LIST_HEAD(head_type, member_type)` lists whose members link through
 * `CK_LIST_ENTRY(member_type) link_field` and hold `void *slot_field`. Cannot pin: a sweep over
 * it restarts from the head when it must leave its section (RESTART behaviour).
 * SWF_LIST_CK_LIST_AUTO(..., pin_field) pins with the library's pin: the member embeds
 * `struct swf_pin pin_field` and deleters call swf_pin_retire after CK_LIST_REMOVE (pin.h).
 * SWF_LIST_CK_LIST_PINNED(..., pin_fn, unpin_fn, linked_fn) adds your pin functions (see the top
 * comment for what they must guarantee). SWF_LIST_CK_SLIST* and SWF_LIST_CK_STAILQ* are the same
 * for CK_SLIST and CK_STAILQ.
 */
#define SWF_LIST_CK_LIST(name, head_type, member_type, link_field, slot_field)                \
    SWF_LIST_CK_ADAPTER_(name, head_type, member_type, link_field, slot_field, CK_LIST_FIRST, \
                         CK_LIST_NEXT)
#define SWF_LIST_CK_LIST_PINNED(name, head_type, member_type, link_field, slot_field, pin_fn, \
                                unpin_fn, linked_fn)                                          \
    SWF_LIST_CK_ADAPTER_PINNED_(name, head_type, member_type, link_field, slot_field,         \
                                CK_LIST_FIRST, CK_LIST_NEXT, pin_fn, unpin_fn, linked_fn)
#define SWF_LIST_CK_LIST_AUTO(name, head_type, member_type, link_field, slot_field, pin_field)     \
    SWF_LIST_CK_ADAPTER_AUTO_(name, head_type, member_type, link_field, slot_field, CK_LIST_FIRST, \
                              CK_LIST_NEXT, pin_field)
#define SWF_LIST_CK_SLIST(name, head_type, member_type, link_field, slot_field)                \
    SWF_LIST_CK_ADAPTER_(name, head_type, member_type, link_field, slot_field, CK_SLIST_FIRST, \
                         CK_SLIST_NEXT)
#define SWF_LIST_CK_SLIST_PINNED(name, head_type, member_type, link_field, slot_field, pin_fn, \
                                 unpin_fn, linked_fn)                                          \
    SWF_LIST_CK_ADAPTER_PINNED_(name, head_type, member_type, link_field, slot_field,          \
                                CK_SLIST_FIRST, CK_SLIST_NEXT, pin_fn, unpin_fn, linked_fn)
#define SWF_LIST_CK_SLIST_AUTO(name, head_type, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_CK_ADAPTER_AUTO_(name, head_type, member_type, link_field, slot_field,             \
                              CK_SLIST_FIRST, CK_SLIST_NEXT, pin_field)
#define SWF_LIST_CK_STAILQ(name, head_type, member_type, link_field, slot_field)                \
    SWF_LIST_CK_ADAPTER_(name, head_type, member_type, link_field, slot_field, CK_STAILQ_FIRST, \
                         CK_STAILQ_NEXT)
#define SWF_LIST_CK_STAILQ_PINNED(name, head_type, member_type, link_field, slot_field, pin_fn, \
                                  unpin_fn, linked_fn)                                          \
    SWF_LIST_CK_ADAPTER_PINNED_(name, head_type, member_type, link_field, slot_field,           \
                                CK_STAILQ_FIRST, CK_STAILQ_NEXT, pin_fn, unpin_fn, linked_fn)

#define SWF_LIST_CK_STAILQ_AUTO(name, head_type, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_CK_ADAPTER_AUTO_(name, head_type, member_type, link_field, slot_field,              \
                              CK_STAILQ_FIRST, CK_STAILQ_NEXT, pin_field)

/*
 * SWF_LIST_NESTED_CK_LIST(name, outer_head_type, outer_type, outer_link, inner_head_field,
 *                         inner_type, inner_link, parent_field, slot_field)
 * The process -> threads shape: an outer CK_LIST of outer_type, each holding a CK_LIST_HEAD
 * `inner_head_field` of inner_type members, each of which points back to its outer member
 * through `parent_field`. The walk visits the inner members (they hold the slots) in order,
 * skipping outer members with empty inner lists. Cannot pin; for a pinnable nested list, write
 * the ops by hand with pins that also keep the parent linked while a child is pinned.
 */
#define SWF_LIST_NESTED_CK_LIST(name, outer_head_type, outer_type, outer_link, inner_head_field, \
                                inner_type, inner_link, parent_field, slot_field)                \
    SWF_LIST_FN_ void *name##_from_outer(struct outer_type *o)                                   \
    {                                                                                            \
        for (; o != SWF_NULL_; o = CK_LIST_NEXT(o, outer_link)) {                                \
            struct inner_type *i = CK_LIST_FIRST(&o->inner_head_field);                          \
            if (i != SWF_NULL_)                                                                  \
                return i;                                                                        \
        }                                                                                        \
        return SWF_NULL_;                                                                        \
    }                                                                                            \
    SWF_LIST_FN_ void *name##_first(void *list)                                                  \
    {                                                                                            \
        struct outer_head_type *h = SWF_STATIC_CAST_(struct outer_head_type *, list);            \
        return name##_from_outer(CK_LIST_FIRST(h));                                              \
    }                                                                                            \
    SWF_LIST_FN_ void *name##_next(void *list, void *m)                                          \
    {                                                                                            \
        (void)list;                                                                              \
        struct inner_type *i = SWF_STATIC_CAST_(struct inner_type *, m);                         \
        struct inner_type *n = CK_LIST_NEXT(i, inner_link);                                      \
        if (n != SWF_NULL_)                                                                      \
            return n;                                                                            \
        return name##_from_outer(CK_LIST_NEXT(i->parent_field, outer_link));                     \
    }                                                                                            \
    SWF_LIST_OPS_DEFINE_(name, SWF_NULL_, SWF_NULL_, SWF_NULL_);                                 \
    SWF_LIST_SLOT_OFFSET_(name, inner_type, slot_field);                                         \
    __attribute__((unused)) static inline struct swf_list name##_list(                           \
        struct outer_head_type *head)                                                            \
    {                                                                                            \
        struct swf_list l = {&name##_ops, head, offsetof(struct inner_type, slot_field)};        \
        return l;                                                                                \
    }

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_LIST_H */
