/*
 * sweepfill/list_sysqueue.h - sweeps over the BSD <sys/queue.h> lists (glibc's header): LIST,
 * SLIST, STAILQ and TAILQ, guarded by a lock.
 *
 * These lists have no lock-free readers: readers and writers share a lock, and the lock is the
 * read-side section. The sweep takes the read side (swf_guard_rwlock, or swf_guard_mutex when
 * readers take the same mutex as writers) for each section and drops it between sections, so a
 * section bound (sweep.h) is what lets a writer in during a sweep of a million members (how
 * much, per lock: sweep.h's guards). Deleters unlink and retire under the write side with
 * swf_grace_lock (pin.h): the unlink under the write lock is the grace period.
 *
 *   struct task { TAILQ_ENTRY(task) link; void *shadow; struct swf_pin pin; };
 *   TAILQ_HEAD(task_q, task);
 *   SWF_LIST_SYS_TAILQ_AUTO(tasks, task_q, task, link, shadow, pin)
 *
 *   cfg.list = tasks_list(&q);  swf_guard_rwlock(&cfg.guard, &lock);  cfg.section_bound = 1024;
 *   swf_sweep(&cfg, &st);                                 // RESUME, resumable: no code of yours
 *
 *   pthread_rwlock_wrlock(&lock);                         // a deleter
 *   TAILQ_REMOVE(&q, t, link);
 *   swf_pin_retire(&t->pin, &lock_grace, free_task);      // swf_grace_lock(&lock_grace)
 *   pthread_rwlock_unlock(&lock);
 *
 * Each macro (name, head_type, member_type, link_field, slot_field[, pin_field]) is
 * SWF_LIST_FIRST_NEXT[_AUTO] (list.h) with that kind's FIRST and NEXT, and defines NAME_ops and
 * NAME_list(struct head_type *). Without _AUTO the list cannot pin: RESUME runs as RESTART, the
 * default section bound (SWF_SWEEP_SECTION_BOUND_AUTO) runs one section per pass, and any other
 * non-zero bound is refused (EINVAL).
 *
 * Synchronisation (the lock's, "X": excluded by the lock; "-": concurrent):
 *                       sweep section  reader  writer (insert, remove + retire)
 *   sweep section             -           -        X
 *   reader                    -           -        X
 *   writer                    X           X        X
 * With swf_guard_mutex every pair is X. Outside its sections the sweep holds only its pin, so
 * writers may remove and retire the member it stands on: its put then frees it, under the read
 * side (free_fn must not take the write side).
 *
 * Memory ordering: the lock orders the list links; slots are published with a release store (or
 * CAS) and read with swf_slot_load, so readers holding the read side concurrently with the sweep
 * see initialised objects.
 *
 * Progress: blocking (the lock). Errors, NULL handling: those of swf_sweep and the guards.
 * swf_guard_rwlock needs POSIX.1-2001 read-write locks under strict -std=c11 (sweep.h says how);
 * the lists and swf_guard_mutex need nothing more.
 */
#ifndef SWEEPFILL_LIST_SYSQUEUE_H
#define SWEEPFILL_LIST_SYSQUEUE_H

#include <sys/queue.h>

#include "list.h"
#include "pin.h"
#include "sweep.h"

#define SWF_LIST_SYS_LIST(name, head_type, member_type, link_field, slot_field) \
    SWF_LIST_FIRST_NEXT(name, head_type, member_type, link_field, slot_field, LIST_FIRST, LIST_NEXT)
#define SWF_LIST_SYS_LIST_AUTO(name, head_type, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_FIRST_NEXT_AUTO(name, head_type, member_type, link_field, slot_field, LIST_FIRST,  \
                             LIST_NEXT, pin_field)

#define SWF_LIST_SYS_SLIST(name, head_type, member_type, link_field, slot_field)           \
    SWF_LIST_FIRST_NEXT(name, head_type, member_type, link_field, slot_field, SLIST_FIRST, \
                        SLIST_NEXT)
#define SWF_LIST_SYS_SLIST_AUTO(name, head_type, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_FIRST_NEXT_AUTO(name, head_type, member_type, link_field, slot_field, SLIST_FIRST,  \
                             SLIST_NEXT, pin_field)

#define SWF_LIST_SYS_STAILQ(name, head_type, member_type, link_field, slot_field)           \
    SWF_LIST_FIRST_NEXT(name, head_type, member_type, link_field, slot_field, STAILQ_FIRST, \
                        STAILQ_NEXT)
#define SWF_LIST_SYS_STAILQ_AUTO(name, head_type, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_FIRST_NEXT_AUTO(name, head_type, member_type, link_field, slot_field, STAILQ_FIRST,  \
                             STAILQ_NEXT, pin_field)

#define SWF_LIST_SYS_TAILQ(name, head_type, member_type, link_field, slot_field)           \
    SWF_LIST_FIRST_NEXT(name, head_type, member_type, link_field, slot_field, TAILQ_FIRST, \
                        TAILQ_NEXT)
#define SWF_LIST_SYS_TAILQ_AUTO(name, head_type, member_type, link_field, slot_field, pin_field) \
    SWF_LIST_FIRST_NEXT_AUTO(name, head_type, member_type, link_field, slot_field, TAILQ_FIRST,  \
                             TAILQ_NEXT, pin_field)

#endif /* SWEEPFILL_LIST_SYSQUEUE_H */
