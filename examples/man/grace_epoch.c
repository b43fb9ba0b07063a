/* examples/man/grace_epoch.c - swf_grace_epoch(3)'s example: a grace mechanism of your own, whose
 * queue lives in the pins' grace storage, and swf_grace_lock, which frees at once. */
#include <stdlib.h>

#include <sweepfill/pin.h>

struct member {
    int key;
    struct swf_pin pin;
};

static int freed; /* how many members free_member freed */

static void free_member(struct swf_pin *pin)
{
    free(SWF_CONTAINER_OF(pin, struct member, pin));
    freed++;
}

/* [man] */
/* A queue of retired pins, linked through their grace storage, that the program drains once
 * its own grace period is over (after every reader that may see them has left). */
struct my_entry {
    struct my_entry *next;
};
struct my_queue {
    struct my_entry *head;
};

static void my_defer(void *arg, struct swf_pin *pin)
{
    struct my_queue *q = arg;
    struct my_entry *e = swf_pin_grace_storage(pin);
    e->next = q->head;
    q->head = e;
}

static void my_grace_period_over(struct my_queue *q)
{
    struct my_entry *e = q->head;
    q->head = NULL;
    while (e != NULL) {
        struct my_entry *next = e->next; /* before grace_over frees the member */
        swf_pin_grace_over(swf_pin_from_grace_storage(e));
        e = next;
    }
}
/* [man] */

int main(void)
{
    struct my_queue queue = {NULL};
    struct swf_grace mine = {my_defer, &queue};
    struct swf_grace lock;
    swf_grace_lock(&lock);
    struct member *a = calloc(1, sizeof(*a));
    struct member *b = calloc(1, sizeof(*b));
    if (a == NULL || b == NULL)
        return 1;
    /* unlinked from the program's list (not shown), then: */
    if (swf_pin_retire(&a->pin, &mine, free_member) != 0 || freed != 0)
        return 1; /* deferred: not freed yet */
    if (swf_pin_retire(&b->pin, &lock, free_member) != 0 || freed != 1)
        return 1; /* a lock's grace period is over at once */
    my_grace_period_over(&queue);
    return freed == 2 && queue.head == NULL ? 0 : 1;
}
