/* examples/man/container_of.c - SWF_CONTAINER_OF(3)'s example: from a member's pin, as a retire
 * callback receives it, back to the member. */
#include <stdlib.h>

#include <sweepfill/pin.h>

static int freed_fd = -1; /* the fd of the connection free_conn freed */

/* [man] */
struct conn {
    int fd;
    struct swf_pin pin;
};

static void free_conn(struct swf_pin *pin)
{
    struct conn *c = SWF_CONTAINER_OF(pin, struct conn, pin);
    freed_fd = c->fd;
    free(c);
}
/* [man] */

int main(void)
{
    struct conn *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return 1;
    c->fd = 7;
    struct swf_grace lock;
    swf_grace_lock(&lock); /* nothing to wait for: free_conn runs inside the retire */
    if (swf_pin_retire(&c->pin, &lock, free_conn) != 0)
        return 1;
    return freed_fd == 7 ? 0 : 1;
}
