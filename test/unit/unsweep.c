/*
 * test/unit/unsweep.c - the deactivation walk that swf_feature_deactivate and
 * swf_registry_deactivate share (lib/sweep/unsweep.c), driven on a list of its own: every slot
 * taken, every object handed over once and only outside a section, sections bounded, batches
 * of the caller's size unless it lets them grow, and a cursor unlinked while pinned restarting
 * from the head (the unlinked member keeps its object: its retire frees it).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sweep/unsweep.h"

#include "../common/tap.h"

enum { N = 1000 };

struct member {
    void *slot;
    bool linked;
    int pins;
    int next; /* index of the next member, or -1 */
};

static struct member members[N];
static int head;
static char objs[N];

static int depth, max_depth, in_section, max_in_section, pins_held;
static size_t handed, handovers, largest, handed_inside, unlink_at = SIZE_MAX;
static bool seen[N];

static void *first(void *list)
{
    (void)list;
    in_section++;
    return head < 0 ? NULL : &members[head];
}

static void *next(void *list, void *m)
{
    (void)list;
    in_section++;
    if (in_section > max_in_section)
        max_in_section = in_section;
    int i = ((struct member *)m)->next;
    return i < 0 ? NULL : &members[i];
}

static void pin(void *list, void *m)
{
    (void)list;
    ((struct member *)m)->pins++;
    pins_held++;
}

static void unpin(void *list, void *m)
{
    (void)list;
    ((struct member *)m)->pins--;
    pins_held--;
}

static bool linked(void *list, void *m)
{
    (void)list;
    return ((struct member *)m)->linked;
}

static void enter(void *arg)
{
    (void)arg;
    if (++depth > max_depth)
        max_depth = depth;
    in_section = 0;
}

static void leave(void *arg)
{
    (void)arg;
    depth--;
}

/* Unlink the first member still linked that some walk holds pinned (the cursor). */
static void unlink_pinned(void)
{
    int *link = &head;
    while (*link >= 0) {
        struct member *m = &members[*link];
        if (m->pins > 0) {
            m->linked = false;
            *link = m->next;
            return;
        }
        link = &m->next;
    }
}

static void hand_over(void *arg, void **v, size_t n)
{
    (void)arg;
    if (depth != 0)
        handed_inside++;
    for (size_t i = 0; i < n; i++) {
        size_t k = (size_t)((char *)v[i] - objs);
        seen[k] = true;
    }
    handed += n;
    handovers++;
    if (n > largest)
        largest = n;
    if (handovers == unlink_at)
        unlink_pinned();
}

static void fill(void)
{
    for (int i = 0; i < N; i++)
        members[i] = (struct member){i % 7 == 3 ? NULL : &objs[i], true, 0, i + 1 < N ? i + 1 : -1};
    head = 0;
    depth = max_depth = in_section = max_in_section = pins_held = 0;
    handed = handovers = largest = handed_inside = 0;
    unlink_at = SIZE_MAX;
    for (int i = 0; i < N; i++)
        seen[i] = false;
}

static size_t filled(void)
{
    size_t k = 0;
    for (int i = 0; i < N; i++)
        k += i % 7 != 3;
    return k;
}

static bool all_empty(void)
{
    for (int i = 0; i < N; i++)
        if (members[i].slot != NULL)
            return false;
    return true;
}

static bool all_seen(void)
{
    for (int i = 0; i < N; i++)
        if (i % 7 != 3 && !seen[i])
            return false;
    return true;
}

static const struct swf_list_ops pinning = {first, next, pin, unpin, linked};
static const struct swf_list_ops plain = {first, next, NULL, NULL, NULL};

static void run(const struct swf_list_ops *ops, size_t bound, size_t cap, bool grow)
{
    void *batch[64];
    struct swf_list list = {ops, NULL, offsetof(struct member, slot)};
    struct swf_guard guard = {enter, leave, NULL, 0};
    struct swfi_unsweep u = {&list, &guard, bound, batch, cap, grow, hand_over, NULL};
    swfi_unsweep(&u);
}

int main(void)
{
    fill();
    run(&pinning, 10, 64, false);
    ok(all_empty() && all_seen() && handed == filled(),
       "every slot taken, every object handed over "
       "(%zu of %zu)",
       handed, filled());
    ok(handed_inside == 0 && depth == 0 && max_depth == 1 && pins_held == 0,
       "hand-overs outside sections (%zu inside), sections balanced, no pin left", handed_inside);
    ok(largest <= 64 && handovers == (filled() + 63) / 64,
       "a fixed batch is handed over when full (%zu hand-overs, largest %zu)", handovers, largest);
    ok(max_in_section <= 11, "a section visits at most the bound's members (%d steps)",
       max_in_section);

    fill();
    run(&pinning, 0, 16, true);
    ok(all_empty() && handed == filled() && handovers == 1,
       "a growing batch hands everything over once (%zu hand-overs)", handovers);

    fill();
    unlink_at = 1; /* the cursor, pinned across the first hand-over, is unlinked there */
    run(&pinning, 0, 64, false);
    size_t unlinked = 0, kept = 0, linked_full = 0;
    for (int i = 0; i < N; i++) {
        unlinked += !members[i].linked;
        kept += !members[i].linked && members[i].slot != NULL;
        linked_full += members[i].linked && members[i].slot != NULL;
    }
    ok(unlinked == 1 && linked_full == 0 && handed + kept == filled() && pins_held == 0,
       "an unlinked cursor restarts the walk from the head: every linked slot taken, the unlinked "
       "member keeps what it held (%zu) for its retire",
       kept);

    fill();
    run(&plain, 0, 64, false);
    ok(all_empty() && handed == filled() && handovers == (filled() + 63) / 64,
       "a list that cannot pin restarts from the head after each hand-over and takes every slot");
    return tap_done();
}
