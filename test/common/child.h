/*
 * test/common/child.h - run one case of a test in a child process and keep what it printed: for
 * misuse that aborts, environment variables read once at load, and messages on stderr.
 *
 * tap_run_child(c, argv, setup, arg, in_process) forks; the child calls setup(arg) (environment
 * variables, say), points its stdout and stderr at pipes, and executes argv[0] with argv, so the
 * case starts from a fresh process image (the library's constructors read the environment
 * again). Under qemu-user, which cannot execute a foreign binary without binfmt_misc, the child
 * calls in_process(argv) instead and exits with its value. The parent reads both pipes together
 * (a child that writes much never blocks on a full pipe), then waits: c->status is the wait
 * status, c->out and c->err what the child wrote, cut to their size and NUL-terminated.
 */
#ifndef SWF_TEST_CHILD_H
#define SWF_TEST_CHILD_H

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

struct tap_child {
    int status;
    char out[4096];
    char err[4096];
};

/* Append what fd has to buf (its length *len, room size); false at end of file. */
static inline bool tap_child_read(int fd, char *buf, size_t *len, size_t size)
{
    char scratch[512];
    bool room = *len < size - 1;
    ssize_t r = read(fd, room ? buf + *len : scratch, room ? size - 1 - *len : sizeof(scratch));
    if (r < 0 && errno == EINTR)
        return true;
    if (r <= 0)
        return false;
    if (room)
        *len += (size_t)r;
    return true;
}

static inline void tap_run_child(struct tap_child *c, char *const argv[], void (*setup)(void *),
                                 void *arg, int (*in_process)(char *const argv[]))
{
    int out[2], err[2];
    tap_require(pipe(out) == 0 && pipe(err) == 0, "pipes");
    pid_t pid = fork();
    tap_require(pid >= 0, "fork");
    if (pid == 0) {
        if (setup != NULL)
            setup(arg);
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        if (tap_under_qemu() && in_process != NULL)
            _exit(in_process(argv));
        execv(argv[0], argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    size_t len[2] = {0, 0};
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            char *buf = i == 0 ? c->out : c->err;
            size_t size = i == 0 ? sizeof(c->out) : sizeof(c->err);
            if (!tap_child_read(fds[i].fd, buf, &len[i], size)) {
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    c->out[len[0]] = '\0';
    c->err[len[1]] = '\0';
    while (waitpid(pid, &c->status, 0) < 0 && errno == EINTR)
        ;
    close(out[0]);
    close(err[0]);
}

/* s cut at its first newline: its first line. Returns s. */
static inline char *tap_first_line(char *s)
{
    s[strcspn(s, "\n")] = '\0';
    return s;
}

#endif /* SWF_TEST_CHILD_H */
