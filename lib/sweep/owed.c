/*
 * lib/sweep/owed.c - a feature's owed table (owed.h states the entries' states and the invariant
 * between an entry and its member's slot).
 *
 * Who changes what: an adder takes a free entry (NULL -> RESERVED), marks the slot (NULL ->
 * mark) and records its member (RESERVED -> member, release); a filler, under the feature's
 * mutex, claims (member -> member | 1), settles the slot (mark -> object, or NULL) and frees the
 * entry (release); a release exchanges the slot, and finding the mark frees the entry
 * (member -> NULL) or, finding it claimed, waits for the filler to free it. An adder never meets
 * a filler or a release on the same member: a filler skips RESERVED entries, and a release never
 * overlaps the add of its member.
 */
#include "sweep/owed.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "base/atomic.h"
#include "base/util.h"

#define RESERVED ((void *)SWF_SLOT_OWED_BIT)
#define CLAIM    SWF_SLOT_OWED_BIT

static void *mark_of(size_t i)
{
    return (void *)(((uintptr_t)i << 1) | SWF_SLOT_OWED_BIT);
}

static bool is_member(const void *e)
{
    return e != NULL && !swfi_owed_is_mark(e);
}

int swfi_owed_init(struct swfi_owed *o, size_t n)
{
    o->n = n;
    o->x_tabled = 0;
    o->x_entry = NULL;
    if (n != 0 && (o->x_entry = calloc(n, sizeof(*o->x_entry))) == NULL)
        return ENOMEM;
    return 0;
}

void swfi_owed_fini(struct swfi_owed *o)
{
    free(o->x_entry);
    o->x_entry = NULL;
}

int swfi_owed_mark(struct swfi_owed *o, void **slot, void *member, size_t start)
{
    if (swfi_load_relaxed_64(&o->x_tabled) >= o->n)
        return 0; /* full: no scan (a hint; a scan that finds nothing says the same) */
    for (size_t k = 0; k < o->n; k++) {
        size_t i = (start + k) % o->n;
        void *free_entry = NULL;
        if (swfi_load_relaxed_ptr(&o->x_entry[i]) != NULL ||
            !swfi_cas_acq_rel_ptr(&o->x_entry[i], &free_entry, RESERVED))
            continue;
        void *empty = NULL;
        if (!swfi_cas_release_ptr(slot, &empty, mark_of(i))) {
            swfi_store_release_ptr(&o->x_entry[i], NULL); /* a sweep filled it first */
            return -1;
        }
        (void)swfi_fetch_add_release_64(&o->x_tabled, 1);
        swfi_store_release_ptr(&o->x_entry[i], member); /* pairs with swfi_owed_claim's acquire */
        return 1;
    }
    return 0;
}

/* Move entry i from member to to, waiting out a filler's claim on member; false when the entry
 * no longer holds member (a filler settled it). */
static bool take_entry(struct swfi_owed *o, size_t i, void *member, void *to)
{
    for (;;) {
        void *e = swfi_load_acquire_ptr(&o->x_entry[i]); /* pairs with the settle's release */
        if (e == member) {
            if (swfi_cas_acq_rel_ptr(&o->x_entry[i], &e, to))
                return true;
        } else if ((uintptr_t)e == ((uintptr_t)member | CLAIM)) {
            sched_yield(); /* a filler inside init for this member: a few steps */
        } else {
            return false; /* the filler settled it: it no longer touches member */
        }
    }
}

static size_t entry_of(const struct swfi_owed *o, const void *member, const void *mark,
                       const char *function)
{
    size_t i = (uintptr_t)mark >> 1;
    if (i >= o->n)
        swfi_die(function,
                 "member %p's slot holds %p, an owed mark of no entry: was the slot "
                 "written by something other than this feature?",
                 member, mark);
    return i;
}

void swfi_owed_forget(struct swfi_owed *o, void *member, const void *mark)
{
    if (take_entry(o, entry_of(o, member, mark, "swf_feature_release"), member, NULL))
        (void)swfi_fetch_sub_relaxed_64(&o->x_tabled, 1);
}

bool swfi_owed_reclaim(struct swfi_owed *o, void *member, const void *mark, size_t *i)
{
    *i = entry_of(o, member, mark, "swf_feature_added");
    return take_entry(o, *i, member, (void *)((uintptr_t)member | CLAIM));
}

void *swfi_owed_claim(struct swfi_owed *o, size_t *i)
{
    while (*i < o->n) {
        void *e = swfi_load_acquire_ptr(&o->x_entry[*i]); /* pairs with the mark's release */
        if (is_member(e) &&
            swfi_cas_acq_rel_ptr(&o->x_entry[*i], &e, (void *)((uintptr_t)e | CLAIM)))
            return e;
        if (e != NULL && e != RESERVED && !is_member(e)) {
            /* Claimed by the member's own adder, retrying (fillers hold the mutex): its fill
             * ends in a few steps; wait, so that a catch-up returns after it. */
            sched_yield();
            continue;
        }
        (*i)++;
    }
    return NULL;
}

bool swfi_owed_settle(struct swfi_owed *o, size_t i, void **slot, void *obj)
{
    void *mark = mark_of(i);
    bool put = swfi_cas_release_ptr(slot, &mark, obj); /* releases obj's init to readers */
    (void)swfi_fetch_sub_relaxed_64(&o->x_tabled, 1);
    swfi_store_release_ptr(&o->x_entry[i], NULL); /* the last touch of the member: forget waits */
    return put;
}

uint64_t swfi_owed_count(const struct swfi_owed *o)
{
    return swfi_load_acquire_64(&o->x_tabled);
}
