/*
 * test/stages/arm64/init.c - the /init of the initramfs that test/stages/aarch64_kernel.sh boots
 * under qemu-system-aarch64: it mounts /proc and /sys (the library reads
 * /sys/devices/system/cpu/possible), runs the test programs that /tests lists, one after the
 * other, and powers the machine off.
 *
 * /tests has one program a line: NAME SECONDS [VAR=VALUE ...] PATH [ARG ...] ('#' starts a
 * comment line). Each program runs in a process group of its own with its standard output and
 * error on a pipe; every line it prints comes out on the console as "@@ NAME | LINE", then
 * "@@ NAME end exit N" (or "signal N", or "timeout" when it ran SECONDS and its group was
 * killed), with the guest's seconds. The stage turns those lines into TAP. Built static for the
 * target, like the tests: nothing else is in the initramfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 64

static void say(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (len < 0)
        return;
    if ((size_t)len >= sizeof(buf))
        len = sizeof(buf) - 1;
    for (int off = 0; off < len;) {
        ssize_t w = write(1, buf + off, (size_t)(len - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (int)w;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The program's output, a line at a time, each with the prefix (a last line without its newline
 * too). */
static void pass_on(const char *name, char *buf, size_t *len, int final)
{
    size_t start = 0;
    for (size_t i = 0; i < *len; i++) {
        if (buf[i] == '\n') {
            buf[i] = '\0';
            say("@@ %s | %s\n", name, buf + start);
            start = i + 1;
        }
    }
    if (final && start < *len) {
        buf[*len] = '\0';
        say("@@ %s | %s\n", name, buf + start);
        start = *len;
    }
    memmove(buf, buf + start, *len - start);
    *len -= start;
}

static void run(char *line)
{
    char *tok[MAX_ARGS + 1];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t\n", &save); t != NULL && n < MAX_ARGS;
         t = strtok_r(NULL, " \t\n", &save))
        tok[n++] = t;
    tok[n] = NULL;
    if (n == 0 || tok[0][0] == '#')
        return;
    if (n < 3) {
        say("@@ %s end bad line in /tests\n", tok[0]);
        return;
    }
    const char *name = tok[0];
    double limit = atof(tok[1]);
    int prog = 2;
    while (prog < n && strchr(tok[prog], '=') != NULL && tok[prog][0] != '/')
        prog++;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        say("@@ %s end pipe failed: %s\n", name, strerror(errno));
        return;
    }
    double t0 = now();
    say("@@ %s begin\n", name);
    pid_t pid = fork();
    if (pid < 0) {
        say("@@ %s end fork failed: %s\n", name, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        for (int i = 2; i < prog; i++)
            putenv(tok[i]);
        execv(tok[prog], tok + prog);
        fprintf(stderr, "exec %s: %s\n", tok[prog], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* both sides, so that the kill below reaches the group either way */
    close(fds[1]);
    char buf[8192];
    size_t len = 0;
    int timed_out = 0;
    for (;;) {
        double left = limit - (now() - t0);
        if (left <= 0) {
            timed_out = 1;
            kill(-pid, SIGKILL);
            break;
        }
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int r = poll(&p, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        if (len == sizeof(buf) - 1) /* a line longer than the buffer: pass it on in pieces */
            pass_on(name, buf, &len, 1);
        ssize_t got = read(fds[0], buf + len, sizeof(buf) - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break; /* end of file: the program and every child of it closed the pipe */
        len += (size_t)got;
        pass_on(name, buf, &len, 0);
    }
    pass_on(name, buf, &len, 1);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL); /* whatever the program left behind */
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    double took = now() - t0;
    if (timed_out)
        say("@@ %s end timeout %.1f s\n", name, took);
    else if (WIFSIGNALED(status))
        say("@@ %s end signal %d %.1f s\n", name, WTERMSIG(status), took);
    else
        say("@@ %s end exit %d %.1f s\n", name, WEXITSTATUS(status), took);
}

int main(void)
{
    /* The console: the kernel opens it for init where the initramfs has /dev/console. */
    if (fcntl(1, F_GETFD) < 0) {
        mkdir("/dev", 0755);
        mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
        int fd = open("/dev/console", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
        }
    }
    if (mount("proc", "/proc", "proc", 0, NULL) != 0)
        say("@@ init | # mount /proc: %s\n", strerror(errno));
    if (mount("sysfs", "/sys", "sysfs", 0, NULL) != 0)
        say("@@ init | # mount /sys: %s\n", strerror(errno));
    mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
    setenv("PATH", "/bin", 1);
    setenv("HOME", "/", 1);
    double up = 0;
    FILE *u = fopen("/proc/uptime", "r");
    if (u != NULL) {
        if (fscanf(u, "%lf", &up) != 1)
            up = 0;
        fclose(u);
    }
    say("@@ init | # %ld CPUs online; the kernel booted in %.1f s\n", sysconf(_SC_NPROCESSORS_ONLN),
        up);
    FILE *f = fopen("/tests", "r");
    if (f == NULL) {
        say("@@ init | # no /tests: %s\n", strerror(errno));
    } else {
        char line[4096];
        while (fgets(line, sizeof(line), f) != NULL)
            run(line);
        fclose(f);
    }
    say("@@ all done\n");
    sync();
    reboot(RB_POWER_OFF);
    return 0; /* not reached: init's exit would panic the kernel, which panic=-1 also ends */
}
