/*
 * lib/sweep/owed.h - a feature's owed table: the members an add left without an object, found
 * again without walking the list (lib/sweep/owed.c; the protocol is feature.h's, the argument
 * docs/design.md's, the model docs/model/feature.pml's OWED part).
 *
 * An entry is NULL (free), RESERVED (an adder is marking its member's slot), a member (owed:
 * its slot holds this entry's mark, an odd value readers see as empty), or a member with its low
 * bit set (claimed: a filler is touching that member, whose release waits for the claim to end).
 * Invariant, outside the short steps that change both: entry i holds member m exactly when m's
 * slot holds mark(i). Whoever takes the mark out of the slot (a filler's compare-and-swap, a
 * release's exchange) frees the entry, so a member's memory is never touched by a filler after
 * its release returns.
 */
#ifndef SWF_LIB_SWEEP_OWED_H
#define SWF_LIB_SWEEP_OWED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweepfill/list.h"

struct swfi_owed {
    void **x_entry;    /* n entries */
    size_t n;          /* 0: no table */
    uint64_t x_tabled; /* entries holding a member, claimed or not */
};

/* Whether v, read from a slot, is an owed mark rather than an object. */
static inline bool swfi_owed_is_mark(const void *v)
{
    return ((uintptr_t)v & SWF_SLOT_OWED_BIT) != 0;
}

/* A table of n entries (0: none). Returns 0 or ENOMEM. */
int swfi_owed_init(struct swfi_owed *o, size_t n);
void swfi_owed_fini(struct swfi_owed *o);

/* The adder's step, counted in with the flag up, after NOWAIT and the reserve failed: find a free
 * entry (scanning once from start), mark member's empty slot with it and record member there
 * (release). Returns 1: member is owed and tabled; 0: every entry was taken (the caller counts
 * member owed the old way); -1: the slot was filled meanwhile (member has an object). Lock-free. */
int swfi_owed_mark(struct swfi_owed *o, void **slot, void *member, size_t start);

/* Release's step, after its exchange took mark out of member's slot: free the entry, waiting for
 * a filler that claimed it to settle (so that the caller may then free member). */
void swfi_owed_forget(struct swfi_owed *o, void *member, const void *mark);

/* The adder's retry on a member it left owed, whose slot holds mark: claim its entry, waiting out
 * a filler's claim. Returns true with entry *i claimed (settle it); false when a filler settled
 * it meanwhile (the slot holds an object). */
bool swfi_owed_reclaim(struct swfi_owed *o, void *member, const void *mark, size_t *i);

/* The filler's steps, under the feature's mutex: claim the next tabled member at or after *i
 * (acquire; *i is left at its entry), or return NULL at the table's end. An entry that the
 * member's own adder has claimed (a retry) is waited for, not skipped, so that the retry's fill
 * is done when the filler has passed it. */
void *swfi_owed_claim(struct swfi_owed *o, size_t *i);

/* End the claim of entry i on member: move member's slot from the entry's mark to obj (release;
 * obj may be NULL to clear it), then free the entry (release: the filler's last touch of member).
 * Returns whether the slot still held the mark, so that obj is now published. */
bool swfi_owed_settle(struct swfi_owed *o, size_t i, void **slot, void *obj);

/* Members tabled now (acquire: an adder's increment precedes its EAGAIN). */
uint64_t swfi_owed_count(const struct swfi_owed *o);

#endif /* SWF_LIB_SWEEP_OWED_H */
