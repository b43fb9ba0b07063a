/*
 * sweepfill/list_sysqueue.h - sweeps over the BSD <sys/queue.h> lists (glibc's header): LIST,
 * SLIST, STAILQ and TAILQ, guarded by a lock.
 *
 * One adapter macro per kind, without and with the library's pin (_AUTO); SWF_LIST_SYS_TAILQ(3)
 * documents them all.
 *
 * Synchronisation table (the lock's; "-": concurrent, "X": excluded by the lock; with
 * swf_guard_mutex every pair is X):
 *                   sweep section   reader   writer (insert, remove + retire)
 *   sweep section         -            -        X
 *   reader                -            -        X
 *   writer                X            X        X
 */
#ifndef SWEEPFILL_LIST_SYSQUEUE_H
#define SWEEPFILL_LIST_SYSQUEUE_H

#include <sys/queue.h>

#include "list.h"
#include "pin.h"
#include "sweep.h"

/*
 * Generate the list operations, the table name_ops, the constant name_slot_offset and
 * name_list(struct head_type *) for a <sys/queue.h> LIST, SLIST, STAILQ or TAILQ: each is
 * SWF_LIST_FIRST_NEXT(3), or with _AUTO SWF_LIST_FIRST_NEXT_AUTO, with that kind's FIRST and
 * NEXT macros.
 *
 * Concurrency: What the lock allows, the sweep holding its read side in each section:
 * - a sweep section runs concurrently with readers and with other sweep sections;
 * - a writer (an insert, or a remove and retire) excludes sweep sections, readers and writers.
 *
 * With swf_guard_mutex(3) every pair excludes each other. Outside its sections the sweep holds
 * only its pin, so writers may remove and retire the member it stands on: its put then frees
 * that member, under the read side, so the free function must not take the write side.
 * Progress: Blocking: the lock. The generated functions themselves are wait-free per call.
 * Ordering: The lock orders the list links. Slots are published with a release store (or
 * compare-and-swap) and read with swf_slot_load(3), so readers holding the read side
 * concurrently with the sweep see initialised objects.
 * Returns: name_list() returns the struct swf_list by value.
 * Errors: None from the generated functions; errors and NULL handling are those of swf_sweep(3)
 * and the guards. A list without _AUTO cannot pin, so swf_sweep() refuses with EINVAL a
 * section_bound other than 0 and SWF_SWEEP_SECTION_BOUND_AUTO.
 */
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
