/*
 * lib/sweep/unsweep.c - the deactivation walk (unsweep.h): the sweep's walk in reverse, taking
 * every slot instead of filling it.
 *
 * Sections are left to bound them (section_bound members) and to hand a full batch over, since a
 * grace period cannot be waited for inside one. Across the gap the cursor is pinned where the list
 * can pin, and the walk resumes after it while it is linked, from the head when it was unlinked
 * meanwhile or when the list cannot pin: slots taken stay empty, so a restart still makes
 * progress.
 */
#include "sweep/unsweep.h"

#include <stdlib.h>
#include <string.h>

/* The objects taken and not yet handed over: in the caller's buffer, or in a bigger one. */
struct batch {
    void **v;
    size_t n, cap;
};

/* Room for one more object in the batch, or false (the walk must hand the batch over first). */
static bool room(const struct swfi_unsweep *u, struct batch *b)
{
    if (b->n < b->cap)
        return true;
    if (!u->grow)
        return false;
    void **bigger = malloc(2 * b->cap * sizeof(void *));
    if (bigger == NULL)
        return false;
    memcpy(bigger, b->v, b->n * sizeof(void *));
    if (b->v != u->batch)
        free(b->v);
    b->v = bigger;
    b->cap *= 2;
    return true;
}

static void hand_over(const struct swfi_unsweep *u, struct batch *b)
{
    if (b->n == 0)
        return;
    u->hand_over(u->arg, b->v, b->n);
    b->n = 0;
}

void swfi_unsweep(const struct swfi_unsweep *u)
{
    const struct swf_list *l = u->list;
    const struct swf_guard *g = u->guard;
    bool can_pin = swf_list_can_pin(l->ops);
    size_t bound = u->section_bound, section = 0;
    struct batch b = {u->batch, 0, u->batch_cap};
    swf_guard_enter_(g); /* watched if written by hand (sweep.h) */
    void *m = l->ops->first(l->list);
    while (m != NULL) {
        bool full = !room(u, &b);
        if (!full) {
            void *obj = swf_slot_take(swf_slot_of(m, l->slot_offset));
            if (obj != NULL)
                b.v[b.n++] = obj;
            section++;
            if (bound == 0 || section < bound) {
                m = l->ops->next(l->list, m);
                continue;
            }
        }
        /* Leave the section: to bound it, or to hand over what we hold (m not yet taken). */
        if (can_pin)
            l->ops->pin(l->list, m);
        g->leave(g->arg);
        if (full)
            hand_over(u, &b);
        swf_guard_enter_(g);
        section = 0;
        void *next = NULL;
        if (can_pin) {
            bool on = l->ops->linked(l->list, m);
            next = on ? (full ? m : l->ops->next(l->list, m)) : l->ops->first(l->list);
            l->ops->unpin(l->list, m);
        } else {
            next = l->ops->first(l->list);
        }
        m = next;
    }
    g->leave(g->arg);
    hand_over(u, &b);
    if (b.v != u->batch)
        free(b.v);
}
