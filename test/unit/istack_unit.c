/*
 * test/unit/istack_unit.c - the index stack's tag: 40 bits beside a 24-bit index
 * (lib/base/istack.h).
 *
 * Pushes and pops keep LIFO order and bump the tag on every change, the tag carries into its own
 * bits only (never into the index), and it wraps at 2^40 back to 0 with the index intact.
 */
#include <stdlib.h>

#include "base/istack.h"

#include "../common/tap.h"

struct node {
    uint32_t x_next;
    uint32_t value;
};

static uint64_t tag_of(const struct swf_istack *s)
{
    return swfi_load_relaxed_64(&s->x_head) >> SWF_ISTACK_INDEX_BITS;
}

int main(void)
{
    struct swf_itable t;
    tap_require(swfi_itable_init(&t, sizeof(struct node), 4, 8) == 0, "table");
    uint32_t first = swfi_itable_grow(&t);
    tap_require(first == 0 && swfi_itable_grow(&t) == 16, "two blocks of 16");
    struct swf_istack s = {0};
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
    swfi_itable_fini(&t);
    return tap_done();
}
