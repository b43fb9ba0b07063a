/*
 * sweepfill/list_urcu.h - sweeps over liburcu's RCU lists (cds_list_head from <urcu/rculist.h>,
 * cds_hlist_head from <urcu/rcuhlist.h>), guards for every urcu flavour, and call_rcu as the
 * grace period of swf_pin_retire. Header-only: sweepfill itself does not link liburcu; your
 * program links its flavour's library (pkg-config liburcu, liburcu-qsbr, liburcu-bp, liburcu-mb,
 * liburcu-signal, liburcu-memb).
 *
 * Choosing the flavour: include your flavour's header first, then this one; pass that flavour's
 * struct rcu_flavor_struct to the guard and grace functions:
 *
 *   #include <urcu/urcu-memb.h>            // or <urcu/urcu-qsbr.h>, <urcu/urcu-bp.h>,
 *   #include <sweepfill/list_urcu.h>       //    <urcu/urcu-mb.h>, <urcu/urcu-signal.h>, <urcu.h>
 *
 *   swf_guard_urcu(&cfg.guard, &urcu_memb_flavor);         // qsbr: swf_guard_urcu_qsbr
 *   swf_grace_urcu(&grace, &urcu_memb_flavor);             // for the deleters' swf_pin_retire
 *   fc.synchronize = swf_synchronize_urcu;                 // a feature's (feature.h); qsbr:
 *   fc.synchronize_arg = (void *)&urcu_memb_flavor;        //    swf_synchronize_urcu_qsbr
 *
 * (with the short-name API of <urcu.h>, <urcu-qsbr.h> or <urcu-bp.h>, `&rcu_flavor` names the
 * flavour included). Included with no flavour before it, this header stops the compilation with
 * one diagnostic, its #error. liburcu 0.13's headers declare call_rcu and the flavour struct only
 * for the first flavour a translation unit includes, so a program using two flavours includes
 * each, with this header, in a translation unit of its own.
 *
 * Lists: SWF_LIST_CDS_LIST(_AUTO) for struct cds_list_head, SWF_LIST_CDS_HLIST(_AUTO) for struct
 * cds_hlist_head (below; each defines NAME_ops and NAME_list(head), as list.h's do). The walk
 * loads links as rcu_dereference does (a consume load). With _AUTO the member embeds a struct
 * swf_pin and deleters do, under their update-side lock:
 *     cds_list_del_rcu(&m->link);  swf_pin_retire(&m->pin, &grace, free_m);
 * free_m runs on the flavour's call_rcu thread, or in the sweep's put if the sweep held m.
 *
 * Synchronisation: readers (rcu_read_lock, cds_list_for_each_entry_rcu), the sweep and writers
 * run concurrently, as liburcu's lists allow; writers exclude one another with their own lock.
 *                   sweep   reader   writer (add_rcu, del_rcu + retire)
 *   sweep (STORE)     X        -        -
 *   sweep (CAS)       -        -        -
 * (X: two STORE sweeps of the same slots; see sweep.h.)
 *
 * Memory ordering: the walk's consume loads pair with rcu_assign_pointer's release in
 * cds_list_add_rcu (or the release stores of the swf_cds_* mutators below), so the sweep sees a
 * member's fields as they were when it was linked. Slots as in list.h. call_rcu orders the
 * readers' sections before the callback, which calls swf_pin_grace_over (pin.h has the rest).
 *
 * Progress: the walk is wait-free per step; guards as the flavour's read side (wait-free for
 * memb, mb and signal, and for bp once the thread has registered itself on its first read lock;
 * qsbr's online/offline are wait-free too). The guard and grace functions do nothing on NULL
 * arguments.
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

/*
 * Your own read sections and grace periods under ThreadSanitizer. liburcu 0.13 is not
 * instrumented, so TSan sees neither its grace periods nor the hand-over of a call_rcu callback;
 * the guards and swf_grace_urcu below state them with release/acquire annotations on the flavour
 * struct (and on the callback's rcu_head). Say the same in your own code with these macros
 * (statements; nothing without TSan):
 *   SWF_URCU_TSAN_READ_UNLOCK(flavor)       just before each rcu_read_unlock (qsbr: before each
 *                                           rcu_quiescent_state and rcu_thread_offline)
 *   SWF_URCU_TSAN_GRACE_OVER(flavor)        just after each synchronize_rcu
 *   SWF_URCU_TSAN_CALL_RCU(head)            just before each call_rcu(head, fn)
 *   SWF_URCU_TSAN_CALLBACK(flavor, head)    first thing in fn(head)
 *   SWF_URCU_TSAN_CALLBACK_END(flavor)      last thing in fn, if a thread that waits in
 *                                           rcu_barrier reads what fn did
 *   SWF_URCU_TSAN_BARRIER(flavor, call)     in place of a call of rcu_barrier: makes the call
 *                                           with this thread's accesses hidden from TSan (the
 *                                           barrier callocs what the call_rcu thread frees, out of
 *                                           TSan's sight), then orders every callback's end
 *                                           before what follows
 * Two more things make a liburcu program's own code visible to TSan: define
 * URCU_INLINE_SMALL_FUNCTIONS (or _LGPL_SOURCE) before including liburcu, so that rcu_dereference
 * and cds_list_for_each_entry_rcu load with C11 atomics (otherwise the pointer is read with a
 * plain load and passed to liburcu), and change the lists with the swf_cds_* mutators below
 * instead of liburcu's, whose volatile stores TSan takes for plain writes racing the readers
 * (publish your own pointers with __atomic_store_n(&p, v, __ATOMIC_RELEASE) or
 * __atomic_exchange_n rather than rcu_assign_pointer or rcu_xchg_pointer, for the same reason).
 */
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

/* rcu_read_lock/unlock of flavor (memb, mb, signal, bp). The sweeping thread must be registered
 * (rcu_register_thread; bp registers itself). Sets SWF_GUARD_BLOCKING_OK: blocking inside a
 * section delays grace periods, nothing more (the sweep never calls synchronize_rcu inside). */
static inline void swf_guard_urcu(struct swf_guard *g, const struct rcu_flavor_struct *flavor)
{
    if (g == NULL || flavor == NULL)
        return;
    g->enter = swf_urcu_enter_;
    g->leave = swf_urcu_leave_;
    g->arg = (void *)flavor;
    g->flags = SWF_GUARD_BLOCKING_OK;
}

/* QSBR: a section is an online period, rcu_thread_online on enter and rcu_thread_offline on
 * leave. Call swf_sweep from a registered thread that is OFFLINE (rcu_thread_offline() first, as
 * before any blocking call: swf_sweep blocks to refill); it returns offline. Flags 0: an online
 * QSBR thread that blocks holds up every grace period. */
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

/* call_rcu of flavor, for swf_pin_retire, which must then be called from a thread registered
 * with the flavour (online for qsbr), as call_rcu requires. Callbacks run on the call_rcu thread;
 * rcu_barrier() waits for them (e.g. before exit). */
static inline void swf_grace_urcu(struct swf_grace *g, const struct rcu_flavor_struct *flavor)
{
    if (g == NULL || flavor == NULL)
        return;
    g->defer = swf_urcu_defer_;
    g->arg = (void *)flavor;
}

/* ---- list mutators that ThreadSanitizer can see ---------------------------------------------
 *
 * The same changes as liburcu's cds_list_add_rcu, cds_list_add_tail_rcu, cds_list_del_rcu,
 * cds_hlist_add_head_rcu and cds_hlist_del_rcu, on the same structures, under your update-side
 * lock as theirs; the links that readers load are stored with C11 release stores (liburcu 0.13:
 * a barrier and a volatile store), which order the same way and which TSan sees. */
#define SWF_URCU_STORE_(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

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

/* ---- lists -------------------------------------------------------------------------------- */

/* rcu_dereference, as liburcu's C11 build of it. */
#define SWF_URCU_LOAD_(p)     __atomic_load_n(&(p), __ATOMIC_CONSUME)

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
