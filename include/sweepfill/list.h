/*
 * sweepfill/list.h - how a sweep walks a list it does not own, and how anyone reads a slot.
 *
 * A member is any struct with a `void *` field, its *slot*, at a fixed offset; a sweep sees the
 * program's container through a struct swf_list: operations (struct swf_list_ops), the pointer
 * they get and the slot's offset. Below: the operations' contract, the slot accessors
 * (swf_slot_load(3)), arrays and the helpers around them (swf_list_array(3)), and the adapter
 * generators for ck_queue lists and lists like them (SWF_LIST_CK_LIST(3)); list_sysqueue.h,
 * list_urcu.h and list_hash.h add adapters for other containers.
 *
 * Slots: a reader loads a slot with swf_slot_load() (an acquire load): it returns NULL or an
 * object whose initialisation, done before a sweep published it with a release store or release
 * compare-and-swap, the reader sees. Writers other than the sweep use swf_slot_publish() or
 * swf_slot_publish_cas() so the same ordering holds for their objects. Objects are at least
 * 2-byte aligned, so a slot's lowest bit is free: a feature (feature.h) marks a member it owes an
 * object with an odd value, which swf_slot_load() reads as NULL and a sweep as filled.
 */
#ifndef SWEEPFILL_LIST_H
#define SWEEPFILL_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* What a sweep walks a container with. Every operation is called inside the caller's read-side
 * section (sweep.h's guards); pin, unpin and linked are set all three or none. */
struct swf_list_ops {
    /* The first member, or NULL. A walk from first() along next() to NULL reaches, in finitely
     * many steps, every member present in the container for the whole walk, whatever concurrent
     * writers do; members added or removed meanwhile may or may not be reached. first() is called
     * again only to restart, so the operations may keep walk state in the object list points
     * to, set up afresh for each sweep. */
    void *(*first)(void *list);
    /* The member after member, or NULL. Called only on the member first() or next() returned
     * last (the cursor), and only if it was reached in the same section or is pinned and
     * linked() returned true in this section. */
    void *(*next)(void *list, void *member);
    /* Optional. Called in a section in which member was reached: until unpin(), member's memory
     * stays valid (its deleter must not free it; struct swf_pin does this for you), and while
     * member stays linked, its place in the list too. */
    void (*pin)(void *list, void *member);
    /* Optional. Called in a later section; releases the pin, and may free member (swf_pin_put()
     * after member's grace period). */
    void (*unpin)(void *list, void *member);
    /* Optional. Called in a later section with member pinned: true only if member is still in
     * the container (not retired), next() may be called on it in this section, and the walk
     * from there still reaches every member present throughout (no resize moved members behind
     * the cursor). False makes the sweep unpin member and walk again from first(). */
    bool (*linked)(void *list, void *member);
};

/* The bit that tells an owed mark (feature.h) from an object in a slot. */
#define SWF_SLOT_OWED_BIT 1u

struct swf_list {
    const struct swf_list_ops *ops;
    void *list;         /* handed to every op; never NULL (a sweep refuses it with EINVAL):
                           ops that need no pointer get any, such as the container's address */
    size_t slot_offset; /* offsetof(member type, slot); a multiple of sizeof(void *) */
};

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
 * Returns: NULL, or an object whose initialisation the caller sees. A slot that holds an owed
 * mark (an odd value: feature.h's owed table) reads as NULL.
 * Errors: None: it cannot fail, leaves errno alone and does not check its arguments.
 */
static inline void *swf_slot_load(void *const *slot)
{
#ifdef SWF_SLOT_BUILTINS
    void *obj = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
#else
    void *obj = ck_pr_load_ptr(slot);
    ck_pr_fence_acquire(); /* pairs with swf_slot_publish's release */
#endif
    return SWF_REINTERPRET_CAST_(uintptr_t, obj) & SWF_SLOT_OWED_BIT ? SWF_NULL_ : obj;
}

/*
 * Load a slot with no ordering: whether it is set (a sweep's emptiness check).
 *
 * Concurrency: Any thread, at any time the member's memory is valid, racing freely with every
 * other call on the slot.
 * Progress: Wait-free.
 * Ordering: None (a relaxed load): what it returns must not be dereferenced without further
 * ordering.
 * Returns: The slot's content, an owed mark (an odd value) included: non-NULL means no sweep
 * should fill it.
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

/*
 * swf_list_can_pin() says whether ops can pin (pin, unpin and linked all set); swf_list_array()
 * returns the list of a's members, with their slots at slot_offset, walked with swf_array_ops.
 *
 * Concurrency: swf_list_can_pin() and swf_list_array() are pure, for any thread;
 * swf_array_ops is constant. The array a must stay valid while the list is in use. Operations a
 * program writes obey its container's rules for readers: a sweep calls them while the container's
 * writers run (say, CK_LIST's single writer, with readers in epoch sections). A member's deleter
 * frees it only after a grace period and, on a list that pins, after its unpin.
 * Progress: swf_list_can_pin() and swf_list_array() are wait-free. Operations a program writes
 * must not block: they run inside read-side sections.
 * Ordering: None of these orders anything. A list's first and next operations read links with
 * the ordering its writers publish them with (ck_queue's macros do), so that a member reached
 * through the list is seen as its inserter initialised it. Slots are read and written with
 * swf_slot_load(3) and its companions.
 * Returns: swf_list_can_pin() returns true if ops has pin, unpin and linked, false otherwise;
 * swf_list_array() returns the list by value.
 * Errors: None; they cannot fail. A sweep checks the list (swf_sweep_validate(3)).
 */
static inline bool swf_list_can_pin(const struct swf_list_ops *ops)
{
    return ops->pin != SWF_NULL_ && ops->unpin != SWF_NULL_ && ops->linked != SWF_NULL_;
}
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
 * Generate the list operations, the table name_ops, the constant name_slot_offset and
 * name_list(head), which returns the struct swf_list for a sweep: for CK_LIST, CK_SLIST and
 * CK_STAILQ lists (without pins, with the member's struct swf_pin (_AUTO) or with your pin
 * functions (_PINNED)), for any list walked by FIRST and NEXT macros (SWF_LIST_FIRST_NEXT), and
 * for a CK_LIST of CK_LISTs (SWF_LIST_NESTED_CK_LIST, without pins).
 *
 * Concurrency: The generated functions walk the list with the ck_queue macros (or FIRST and
 * NEXT), safe against one concurrent writer using ck_queue's insertion and removal macros while
 * the walk runs inside a read-side section that keeps removed members' memory valid (an epoch
 * section, with writers that free members after a grace period). With _AUTO, a deleter retires
 * the member right after unlinking it, in the same writer critical section (swf_pin_retire(3));
 * with _PINNED, your pin functions decide what may happen to a pinned member.
 * Progress: Each generated function is wait-free (an _AUTO pin or unpin is one atomic operation,
 * plus the free function when the last pin goes); a walk takes one step per member.
 * Ordering: The ck_queue macros load links with ck_pr_load_ptr() and insert behind a store fence,
 * so a member reached through the list is seen as its inserter initialised it, on the
 * architectures ck supports. FIRST and NEXT must load as the list's own readers do (ck_queue's
 * fenced loads for an epoch-protected list, plain loads under a lock). Pins of the _AUTO forms
 * order as swf_pin_retire(3) says; slots are read and written with swf_slot_load(3) and its
 * companions.
 * Returns: name_list() returns the struct swf_list by value.
 * Errors: None at run time; the generated functions cannot fail. A field the structures lack
 * does not compile; the slot field's type is not checked, and must be void *. A list without
 * pins (no _AUTO or _PINNED, and SWF_LIST_NESTED_CK_LIST) cannot pin, so swf_sweep() refuses
 * with EINVAL a section_bound other than 0 and SWF_SWEEP_SECTION_BOUND_AUTO.
 */
#define SWF_LIST_FIRST_NEXT(name, head_type, member_type, link_field, slot_field, FIRST, NEXT) \
    SWF_LIST_CK_ADAPTER_(name, head_type, member_type, link_field, slot_field, FIRST, NEXT)
#define SWF_LIST_FIRST_NEXT_AUTO(name, head_type, member_type, link_field, slot_field, FIRST,    \
                                 NEXT, pin_field)                                                \
    SWF_LIST_CK_ADAPTER_AUTO_(name, head_type, member_type, link_field, slot_field, FIRST, NEXT, \
                              pin_field)
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
