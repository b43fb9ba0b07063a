/* examples/man/slot_load.c - swf_slot_load(3)'s example: a writer thread publishes an initialised
 * object in a member's slot; a reader that loads it sees the initialisation. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include <sweepfill/list.h>

struct shadow_stack {
    unsigned long depth;
    unsigned long ret[15];
};

struct task {
    void *shadow; /* the slot */
};

static struct task the_task;
static struct shadow_stack stacks[2];

static void push(struct shadow_stack *s, unsigned long ret)
{
    s->ret[s->depth++] = ret;
}

static void *writer(void *arg)
{
    struct shadow_stack *s = arg;
    s->depth = 1; /* the initialisation, before the publication */
    s->ret[0] = 42;
    /* several writers may race: only the first compare-and-swap publishes */
    if (!swf_slot_publish_cas(&the_task.shadow, s))
        return s; /* still ours */
    return NULL;
}

int main(void)
{
    pthread_t th[2];
    void *lost[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, writer, &stacks[i]) != 0)
            return 1;
    struct task *t = &the_task;
    unsigned long seen = 0;
    /* until the reader sees an object; the last round runs after both writers ended */
    int joined = 0;
    for (int round = 0; round <= 1000000; round++) {
        if (round == 1000000) {
            for (int i = 0; i < 2; i++)
                pthread_join(th[i], &lost[i]);
            joined = 1;
        }
        /* [man] */
        /* the hot path, in a reader */
        struct shadow_stack *s = swf_slot_load(&t->shadow);
        if (s != NULL)
            push(s, 7); /* s->depth and s->ret[0] were set before the publication */
        /* [man] */
        if (s != NULL) {
            seen = s->ret[0] == 42 && s->depth == 2 && s->ret[1] == 7;
            break;
        }
        sched_yield();
    }
    for (int i = 0; i < 2 && !joined; i++)
        pthread_join(th[i], &lost[i]);
    /* exactly one writer lost the race and kept its object */
    int one_lost = (lost[0] != NULL) + (lost[1] != NULL) == 1;
    printf("slot_load: initialisation seen %lu, one writer lost %d\n", seen, one_lost);
    return seen && one_lost ? 0 : 1;
}
