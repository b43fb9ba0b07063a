/*
 * sweepfill/list_urcu.h - sweeps over liburcu's RCU lists (SWF_LIST_CDS_LIST(3)), guards for
 * every urcu flavour and call_rcu as the grace period of swf_pin_retire (swf_guard_urcu(3)), and
 * what a liburcu program's own code tells ThreadSanitizer (SWF_URCU_TSAN_READ_UNLOCK(3)).
 *
 * Header-only: sweepfill itself does not link liburcu; the program links its flavour's library.
 * Include the flavour's header first, then this one, which serves whichever flavour is included
 * through its struct rcu_flavor_struct; included with no flavour before it, it stops the
 * compilation with one diagnostic, its #error.
 *
 * Synchronisation table for the lists ("-": may run concurrently; "X": two SWF_PUBLISH_STORE
 * sweeps of the same slots must not; writers exclude one another with their own lock):
 *                   sweep   reader   writer (add_rcu, del_rcu + retire)
 *   sweep (STORE)     X        -        -
 *   sweep (CAS)       -        -        -
 */
#ifndef SWEEPFILL_LIST_URCU_H
#define SWEEPFILL_LIST_URCU_H

#ifndef _URCU_FLAVOR_H
#error \
    "include your liburcu flavour (<urcu/urcu-memb.h>, <urcu/urcu-qsbr.h>, <urcu.h>, ...) before <sweepfill/list_urcu.h>"
#else /* the rest of the header: after the #error, nothing more to report */

#include <stdio.h>
#include <stdlib.h>
#include <urcu/rcuhlist.h>
#include <urcu/rculist.h>

#include "list.h"
#include "pin.h"
#include "sweep.h"

#if defined(__SANITIZE_THREAD__)
#define SWF_URCU_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWF_URCU_TSAN_ 1
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifdef SWF_URCU_TSAN_
/* A grace period orders the readers' sections before call_rcu's callback through liburcu's own
 * barriers, which ThreadSanitizer cannot see: the guards release on the flavour when a section
 * ends and the callback acquires on it (as sweepfill's epoch guards do, lib/base/tsan.h); the
 * hand-over of the pin through call_rcu's queue is stated the same way. */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define SWF_URCU_TSAN_RELEASE_(a) __tsan_release((void *)(a))
#define SWF_URCU_TSAN_ACQUIRE_(a) __tsan_acquire((void *)(a))
#else
#define SWF_URCU_TSAN_RELEASE_(a) ((void)(a))
#define SWF_URCU_TSAN_ACQUIRE_(a) ((void)(a))
#endif

#ifdef SWF_URCU_TSAN_
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define SWF_URCU_TSAN_HIDDEN_(call)   \
    do {                              \
        __tsan_ignore_thread_begin(); \
        call;                         \
        __tsan_ignore_thread_end();   \
    } while (0)
#else
#define SWF_URCU_TSAN_HIDDEN_(call) \
    do {                            \
        call;                       \
    } while (0)
#endif

/* The swf_cds_* mutators' stores of the links that readers load. */
#define SWF_URCU_STORE_(p, v)              __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

/* ---- what ThreadSanitizer sees of a program's own code ----------------------------------- */

/*
 * Annotations, each a statement that does nothing without ThreadSanitizer (but make the call
 * given to SWF_URCU_TSAN_BARRIER), that state a liburcu program's own read sections, grace
 * periods and call_rcu hand-overs to TSan as the guards and swf_grace_urcu() state theirs; and
 * list mutators that make liburcu's changes with stores TSan sees.
 *
 * Concurrency: The macros annotate the calling thread only. The functions change the list under
 * the program's update-side lock, as liburcu's cds_list_add_rcu(), cds_list_add_tail_rcu(),
 * cds_list_del_rcu(), cds_hlist_add_head_rcu() and cds_hlist_del_rcu() do, on the same
 * structures; readers and sweeps run concurrently with them.
 * Progress: Each macro is one annotation call under ThreadSanitizer and nothing otherwise, plus
 * the call given to SWF_URCU_TSAN_BARRIER. The functions are wait-free: a few stores.
 * Ordering: The functions store the links that readers load with C11 release stores (liburcu
 * 0.13: a barrier and a volatile store): a release store publishes a new member, or the
 * successor a removal links in, and a reader that loads the link (a consume load, as
 * rcu_dereference() and the sweep's walk do) sees everything written before. The macros add no
 * ordering of their own: they tell TSan about the ordering the grace period and call_rcu()
 * already give, with release and acquire annotations on the flavour struct and on the
 * callback's rcu_head.
 * Returns: Nothing.
 * Errors: None; nothing here fails.
 */
#define SWF_URCU_TSAN_READ_UNLOCK(flavor)  SWF_URCU_TSAN_RELEASE_(flavor)
#define SWF_URCU_TSAN_GRACE_OVER(flavor)   SWF_URCU_TSAN_ACQUIRE_(flavor)
#define SWF_URCU_TSAN_CALL_RCU(head)       SWF_URCU_TSAN_RELEASE_(head)
#define SWF_URCU_TSAN_CALLBACK_END(flavor) SWF_URCU_TSAN_RELEASE_(flavor)
#define SWF_URCU_TSAN_CALLBACK(flavor, head) \
    do {                                     \
        SWF_URCU_TSAN_ACQUIRE_(head);        \
        SWF_URCU_TSAN_ACQUIRE_(flavor);      \
    } while (0)
#define SWF_URCU_TSAN_BARRIER(flavor, call) \
    do {                                    \
        SWF_URCU_TSAN_HIDDEN_(call);        \
        SWF_URCU_TSAN_ACQUIRE_(flavor);     \
    } while (0)
static inline void swf_cds_list_add_rcu(struct cds_list_head *newp, struct cds_list_head *head)
{
    newp->next = head->next;
    newp->prev = head;
    head->next->prev = newp;
    SWF_URCU_STORE_(head->next, newp);
}
static inline void swf_cds_list_add_tail_rcu(struct cds_list_head *newp, struct cds_list_head *head)
{
    newp->next = head;
    newp->prev = head->prev;
    SWF_URCU_STORE_(head->prev->next, newp);
    head->prev = newp;
}
static inline void swf_cds_list_del_rcu(struct cds_list_head *elem)
{
    elem->next->prev = elem->prev;
    SWF_URCU_STORE_(elem->prev->next, elem->next);
}
static inline void swf_cds_hlist_add_head_rcu(struct cds_hlist_node *newp,
                                              struct cds_hlist_head *head)
{
    newp->next = head->next;
    newp->prev = (struct cds_hlist_node *)(void *)head;
    if (head->next != SWF_NULL_)
        head->next->prev = newp;
    SWF_URCU_STORE_(head->next, newp);
}
static inline void swf_cds_hlist_del_rcu(struct cds_hlist_node *elem)
{
    if (elem->next != SWF_NULL_)
        elem->next->prev = elem->prev;
    SWF_URCU_STORE_(elem->prev->next, elem->next);
}

/* ---- guards ------------------------------------------------------------------------------- */

/* Each counts its section on the thread (sweep.h: a blocking sweepfill call inside aborts). */
static inline void swf_urcu_enter_(void *flavor)
{
    ((const struct rcu_flavor_struct *)flavor)->read_lock();
    swf_section_entered_();
}

static inline void swf_urcu_leave_(void *flavor)
{
    swf_section_left_();
    SWF_URCU_TSAN_RELEASE_(flavor);
    ((const struct rcu_flavor_struct *)flavor)->read_unlock();
}

static inline void swf_urcu_online_(void *flavor)
{
    ((const struct rcu_flavor_struct *)flavor)->thread_online();
    swf_section_entered_();
}

static inline void swf_urcu_offline_(void *flavor)
{
    swf_section_left_();
    SWF_URCU_TSAN_RELEASE_(flavor);
    ((const struct rcu_flavor_struct *)flavor)->thread_offline();
}

/*
 * swf_guard_urcu() fills g with rcu_read_lock() and rcu_read_unlock() of flavor (memb, mb,
 * signal, bp) and sets its flags to SWF_GUARD_BLOCKING_OK; swf_guard_urcu_qsbr() fills g with
 * rcu_thread_online() on enter and rcu_thread_offline() on leave, flags 0. Each does nothing
 * when g or flavor is NULL.
 *
 * Concurrency: Filling in touches only g: any thread. The sweeping thread is registered with the
 * flavour (rcu_register_thread(); bp registers itself on its first read lock). With
 * swf_guard_urcu_qsbr() it calls swf_sweep(3) offline (rcu_thread_offline() first), and the
 * sweep returns offline. Both guards count their sections on the thread: a blocking sweepfill
 * call made inside one aborts at once with one line on standard error. Readers, the sweep and
 * writers run concurrently, as liburcu's lists allow (SWF_LIST_CDS_LIST(3)).
 * Progress: Filling in is wait-free. The sections are the flavour's read side: wait-free for
 * memb, mb and signal, and for bp once the thread has registered itself on its first read lock;
 * qsbr's online and offline are wait-free too.
 * Ordering: The sections order as the flavour's read-side critical sections do. Under
 * ThreadSanitizer each section's end also releases on the flavour struct.
 * Returns: Nothing.
 * Errors: None; a sweep rejects a guard without enter or leave (EINVAL, swf_sweep(3)).
 */
static inline void swf_guard_urcu(struct swf_guard *g, const struct rcu_flavor_struct *flavor)
{
    if (g == NULL || flavor == NULL)
        return;
    g->enter = swf_urcu_enter_;
    g->leave = swf_urcu_leave_;
    g->arg = (void *)flavor;
    g->flags = SWF_GUARD_BLOCKING_OK;
}
static inline void swf_guard_urcu_qsbr(struct swf_guard *g, const struct rcu_flavor_struct *flavor)
{
    if (g == NULL || flavor == NULL)
        return;
    g->enter = swf_urcu_online_;
    g->leave = swf_urcu_offline_;
    g->arg = (void *)flavor;
    g->flags = 0;
}

/* The two below: check the caller, then the flavour's synchronize_rcu as a blocking call. */
static inline void swf_urcu_synchronize_(void *flavor, const char *function, int check)
{
    const struct rcu_flavor_struct *fl = (const struct rcu_flavor_struct *)flavor;
    const char *why = fl == SWF_NULL_ ? "the flavour is NULL"
                      : check && fl->read_ongoing()
                          ? "called inside an RCU read-side section on this thread: "
                            "synchronize_rcu would wait for it for ever; leave the section first"
                          : SWF_NULL_;
    if (why != SWF_NULL_) {
        fprintf(stderr, "sweepfill: %s: %s\n", function, why);
        abort();
    }
    int outermost = swf_blocking_enter_(function);
    fl->update_synchronize_rcu();
    SWF_URCU_TSAN_ACQUIRE_(flavor); /* the sections that ended released on the flavour */
    swf_blocking_leave_(outermost);
}

/*
 * Wait for a grace period of flavor, a liburcu flavour's struct rcu_flavor_struct (memb, mb,
 * signal or bp; not qsbr): its synchronize_rcu. For struct swf_feature_config.synchronize
 * (feature.h) with swf_guard_urcu's flavour as synchronize_arg.
 *
 * Concurrency: Any thread registered with the flavour, but not inside a read section of the
 * flavour (rcu_read_lock(), the caller's or a guard's: liburcu would wait for it for ever) nor
 * inside any section of a sweepfill guard on the calling thread: it aborts in either.
 * Progress: Blocking: it waits for the sections that began before it, and sleeps while it waits.
 * Called as cfg.synchronize, the wait is watched (SWF_WATCHDOG_SECONDS); called directly, not.
 * Ordering: Everything a reader did inside a section that began before the call happens-before
 * the call returns (liburcu's grace period orders it).
 * Returns: Nothing.
 * Errors: None: it cannot fail. A NULL flavour aborts, with one line on stderr.
 */
static inline void swf_synchronize_urcu(void *flavor)
{
    swf_urcu_synchronize_(flavor, "swf_synchronize_urcu", 1);
}

/*
 * Wait for a grace period of flavor, the qsbr flavour's struct rcu_flavor_struct: its
 * synchronize_rcu, as swf_synchronize_urcu() does for the other flavours.
 *
 * Concurrency: Any thread registered with the flavour, online or offline (liburcu takes an online
 * caller offline for the wait), but not inside a read section of a non-qsbr flavour that shares
 * the thread, nor inside any section of a sweepfill guard on the calling thread (it aborts).
 * Progress: Blocking: it waits for the sections that began before it, and sleeps while it waits.
 * Called as cfg.synchronize, the wait is watched (SWF_WATCHDOG_SECONDS); called directly, not.
 * Ordering: Everything a reader did inside a section that began before the call happens-before
 * the call returns (liburcu's grace period orders it).
 * Returns: Nothing.
 * Errors: None: it cannot fail. A NULL flavour aborts, with one line on stderr.
 */
static inline void swf_synchronize_urcu_qsbr(void *flavor)
{
    swf_urcu_synchronize_(flavor, "swf_synchronize_urcu_qsbr", 0);
}

/* ---- grace: call_rcu ---------------------------------------------------------------------- */

/* call_rcu's struct rcu_head (in the flavour's <urcu/call-rcu.h>) lives in the pin's grace
 * storage. */
#ifdef __cplusplus
static_assert(sizeof(struct rcu_head) <= 2 * sizeof(void *), "rcu_head fits in swf_pin");
#else
_Static_assert(sizeof(struct rcu_head) <= 2 * sizeof(void *), "rcu_head fits in swf_pin");
#endif

static inline void swf_urcu_grace_over_(struct rcu_head *head)
{
    struct swf_pin *pin = swf_pin_from_grace_storage(head);
    SWF_URCU_TSAN_ACQUIRE_(pin); /* call_rcu's queue hands the pin over */
    void *flavor = pin->x_grace[2];
    SWF_URCU_TSAN_ACQUIRE_(flavor);
    swf_pin_grace_over(pin);        /* may free the member, pin and all */
    SWF_URCU_TSAN_RELEASE_(flavor); /* to a thread in SWF_URCU_TSAN_BARRIER */
}

static inline void swf_urcu_defer_(void *flavor, struct swf_pin *pin)
{
    pin->x_grace[2] = flavor;
    SWF_URCU_TSAN_RELEASE_(pin);
    ((const struct rcu_flavor_struct *)flavor)
        ->update_call_rcu((struct rcu_head *)swf_pin_grace_storage(pin), swf_urcu_grace_over_);
}

/*
 * Fill g so that swf_pin_retire(3) awaits the end of a grace period with call_rcu() of flavor;
 * nothing when g or flavor is NULL.
 *
 * Concurrency: Filling in touches only g: any thread. swf_pin_retire() with g is then called
 * from a thread registered with the flavour (online for qsbr), as call_rcu() requires. The
 * callbacks run on the flavour's call_rcu thread; rcu_barrier() waits for them (for instance
 * before exit).
 * Progress: Filling in is wait-free. A retire with g adds call_rcu(): a wait-free enqueue and
 * perhaps a futex wake.
 * Ordering: call_rcu() orders the readers' sections before the callback, which calls
 * swf_pin_grace_over(3): the member is freed only after every section that could have reached
 * it has ended. Under ThreadSanitizer the callback acquires on the flavour struct and on the
 * pin's hand-over through call_rcu's queue.
 * Returns: Nothing.
 * Errors: None; swf_pin_retire(3) rejects a NULL grace (EINVAL).
 */
static inline void swf_grace_urcu(struct swf_grace *g, const struct rcu_flavor_struct *flavor)
{
    if (g == NULL || flavor == NULL)
        return;
    g->defer = swf_urcu_defer_;
    g->arg = (void *)flavor;
}

/* ---- lists -------------------------------------------------------------------------------- */

/* rcu_dereference, as liburcu's C11 build of it. */
#define SWF_URCU_LOAD_(p) __atomic_load_n(&(p), __ATOMIC_CONSUME)

#define SWF_URCU_MEMBER_(member_type, link_field, node) \
    ((struct member_type *)(void *)((char *)(node)-offsetof(struct member_type, link_field)))

#define SWF_LIST_CDS_LIST_WALK_(name, member_type, link_field)                                \
    SWF_LIST_FN_ void *name##_first(void *list)                                               \
    {                                                                                         \
        struct cds_list_head *head = (struct cds_list_head *)list;                            \
        struct cds_list_head *n = SWF_URCU_LOAD_(head->next);                                 \
        return n == head ? NULL : (void *)SWF_URCU_MEMBER_(member_type, link_field, n);       \
    }                                                                                         \
    SWF_LIST_FN_ void *name##_next(void *list, void *m)                                       \
    {                                                                                         \
        struct cds_list_head *n = SWF_URCU_LOAD_(((struct member_type *)m)->link_field.next); \
        return n == (struct cds_list_head *)list                                              \
                   ? NULL                                                                     \
                   : (void *)SWF_URCU_MEMBER_(member_type, link_field, n);                    \
    }

#define SWF_LIST_CDS_HLIST_WALK_(name, member_type, link_field)                                \
    SWF_LIST_FN_ void *name##_first(void *list)                                                \
    {                                                                                          \
        struct cds_hlist_node *n = SWF_URCU_LOAD_(((struct cds_hlist_head *)list)->next);      \
        return n == NULL ? NULL : (void *)SWF_URCU_MEMBER_(member_type, link_field, n);        \
    }                                                                                          \
    SWF_LIST_FN_ void *name##_next(void *list, void *m)                                        \
    {                                                                                          \
        (void)list;                                                                            \
        struct cds_hlist_node *n = SWF_URCU_LOAD_(((struct member_type *)m)->link_field.next); \
        return n == NULL ? NULL : (void *)SWF_URCU_MEMBER_(member_type, link_field, n);        \
    }

/*
 * Generate the list operations, the table name_ops, the constant name_slot_offset and
 * name_list(head) for a struct cds_list_head list (SWF_LIST_CDS_LIST) or a struct
 * cds_hlist_head list (SWF_LIST_CDS_HLIST) of member_type linked through link_field; the _AUTO
 * forms pin with the member's struct swf_pin at pin_field.
 *
 * Concurrency: Readers (rcu_read_lock(), cds_list_for_each_entry_rcu()), the sweep and writers
 * run concurrently, as liburcu's lists allow; writers exclude one another with their own lock. A
 * sweep runs concurrently with readers, with writers (cds_list_add_rcu(), or cds_list_del_rcu()
 * and a retire) and with SWF_PUBLISH_CAS sweeps; two SWF_PUBLISH_STORE sweeps of the same slots
 * must not run at once (swf_sweep(3)). With _AUTO, deleters unlink the member and retire its pin
 * (swf_pin_retire(3), with a grace from swf_grace_urcu(3)) under their update-side lock; the free
 * function runs on the flavour's call_rcu thread, or in the sweep's put if the sweep held the
 * member pinned.
 * Progress: Each step of the walk is wait-free.
 * Ordering: The walk loads links as rcu_dereference() does (a consume load). Those loads pair with
 * rcu_assign_pointer()'s release in cds_list_add_rcu() (or the release stores of the swf_cds_*
 * mutators), so the sweep sees a member's fields as they were when it was linked. Slots as in
 * swf_slot_load(3). call_rcu() orders the readers' sections before the callback, which calls
 * swf_pin_grace_over(3).
 * Returns: name_list() returns the struct swf_list by value.
 * Errors: None; the generated functions cannot fail, and errors are those of swf_sweep(3).
 */
#define SWF_LIST_CDS_LIST(name, member_type, link_field, slot_field) \
    SWF_LIST_CDS_LIST_WALK_(name, member_type, link_field)           \
    SWF_LIST_OPS_DEFINE_(name, NULL, NULL, NULL);                    \
    SWF_LIST_HEAD_FN_(name, cds_list_head, member_type, slot_field)
#define SWF_LIST_CDS_LIST_AUTO(name, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_CDS_LIST_WALK_(name, member_type, link_field)                           \
    SWF_LIST_PIN_AUTO_FNS_(name, member_type, pin_field)                             \
    SWF_LIST_OPS_DEFINE_(name, name##_pin, name##_unpin, name##_linked);             \
    SWF_LIST_HEAD_FN_(name, cds_list_head, member_type, slot_field)
#define SWF_LIST_CDS_HLIST(name, member_type, link_field, slot_field) \
    SWF_LIST_CDS_HLIST_WALK_(name, member_type, link_field)           \
    SWF_LIST_OPS_DEFINE_(name, NULL, NULL, NULL);                     \
    SWF_LIST_HEAD_FN_(name, cds_hlist_head, member_type, slot_field)
#define SWF_LIST_CDS_HLIST_AUTO(name, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_CDS_HLIST_WALK_(name, member_type, link_field)                           \
    SWF_LIST_PIN_AUTO_FNS_(name, member_type, pin_field)                              \
    SWF_LIST_OPS_DEFINE_(name, name##_pin, name##_unpin, name##_linked);              \
    SWF_LIST_HEAD_FN_(name, cds_hlist_head, member_type, slot_field)

#ifdef __cplusplus
}
#endif

#endif /* _URCU_FLAVOR_H */

#endif /* SWEEPFILL_LIST_URCU_H */
