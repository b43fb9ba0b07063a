/*
 * test/unit/istack_unit.c - the index stack's tag: 40 bits beside a 24-bit index
 * (lib/base/istack.h).
 *
 * Pushes and pops keep LIFO order and bump the tag on every change, the tag carries into its own
 * bits only (never into the index), and it wraps at 2^40 back to 0 with the index intact. A
 * table reserves room for several blocks, adopts one its owner made (and leaves it to the owner
 * at fini), makes several in one allocation, and a chain of nodes is pushed in one step.
 */
#include <stdlib.h>
#include <string.h>

#include "base/istack.h"

#include "../common/tap.h"

struct node {
    uint32_t x_next;
    uint32_t value;
};

static uint64_t tag_of(const struct swfi_istack *s)
{
    return swfi_load_relaxed_64(&s->x_head) >> SWF_ISTACK_INDEX_BITS;
}

int main(void)
{
    struct swfi_itable t;
    tap_require(swfi_itable_init(&t, sizeof(struct node), 4, 8) == 0, "table");
    uint32_t first = swfi_itable_grow(&t, 1);
    tap_require(first == 0 && swfi_itable_grow(&t, 1) == 16, "two blocks of 16");
    struct swfi_istack s = {0};
    ok(swfi_istack_empty(&s) && swfi_istack_pop(&s, &t) == UINT32_MAX, "empty");
    for (uint32_t i = 0; i < 32; i++)
        swfi_istack_push(&s, &t, i);
    ok(tag_of(&s) == 32, "32 pushes, tag 32 (%llu)", (unsigned long long)tag_of(&s));
    int lifo = 1;
    for (uint32_t i = 32; i-- > 0;)
        lifo &= swfi_istack_pop(&s, &t) == i;
    ok(lifo && swfi_istack_empty(&s) && tag_of(&s) == 64, "popped in LIFO order, tag 64");

    /* Near the end of the tag's range: one below 2^40. */
    uint64_t top_tag = (UINT64_C(1) << 40) - 2;
    s.x_head = top_tag << SWF_ISTACK_INDEX_BITS;
    swfi_istack_push(&s, &t, 31);
    swfi_istack_push(&s, &t, 7);
    ok(tag_of(&s) == 0 && (swfi_load_relaxed_64(&s.x_head) & SWF_ISTACK_INDEX_MASK) == 8,
       "the tag wraps from 2^40 - 1 to 0 and leaves the index (node 7) alone");
    ok(swfi_istack_pop(&s, &t) == 7 && swfi_istack_pop(&s, &t) == 31 && swfi_istack_empty(&s),
       "and the stack still pops 7, then 31");
    ok(SWF_ISTACK_NODES_MAX == (UINT32_C(1) << 24) - 1, "24 index bits: %u nodes at most",
       SWF_ISTACK_NODES_MAX);

    /* Room for several blocks at once, a block the owner made, and a chain pushed whole. */
    ok(swfi_itable_reserve(&t, 7) != 0 && swfi_itable_reserve(&t, 6) == 0,
       "2 of 8 blocks made: room for 6 more, not 7");
    struct node *mine = aligned_alloc(64, 16 * sizeof(struct node));
    memset(mine, 0, 16 * sizeof(struct node));
    uint32_t at = swfi_itable_adopt(&t, mine);
    ok(at == 32 && swfi_itable_node(&t, 40) == &mine[8], "an adopted block takes nodes 32-47");
    for (uint32_t i = 32; i < 47; i++)
        mine[i - 32].x_next = i + 2; /* node i links to node i + 1 */
    swfi_istack_push(&s, &t, 5);
    uint64_t tag = tag_of(&s);
    swfi_istack_push_chain(&s, &t, 32, 47);
    int order = tag_of(&s) == tag + 1;
    for (uint32_t i = 32; i <= 47; i++)
        order &= swfi_istack_pop(&s, &t) == i;
    ok(order && swfi_istack_pop(&s, &t) == 5 && swfi_istack_empty(&s),
       "a chain of 16 pushed in one step (the tag moves once) pops in its order, then what was "
       "below it");

    /* Several blocks in one allocation: their nodes follow on in memory; no more than the table
     * holds (5 of its 8 blocks are left). */
    ok(swfi_itable_grow(&t, 6) == UINT32_MAX, "6 blocks where 5 are left: none made");
    at = swfi_itable_grow(&t, 5);
    struct node *run = swfi_itable_node(&t, 48);
    ok(at == 48 && swfi_itable_node(&t, 127) == run + 79 && run[79].x_next == 0,
       "5 blocks made at once take nodes 48-127, one run of zeroed memory");
    ok(swfi_itable_grow(&t, 1) == UINT32_MAX, "and the table is full");
    swfi_itable_fini(&t); /* frees the run once (a sanitizer or valgrind sees a double free) */
    free(mine); /* the owner's: fini left it alone (a sanitizer or valgrind sees a double free) */
    return tap_done();
}
