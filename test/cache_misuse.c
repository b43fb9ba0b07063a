/*
 * test/cache_misuse.c - debug builds catch a double free and a pointer the cache never handed
 * out, and say which function caught it. Each case runs in a child process that must abort with
 * the expected message on stderr.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <sweepfill/cache.h>

#include "tap.h"

typedef void (*misuse_fn)(struct swf_cache *c, ck_epoch_record_t *rec);

static void double_free(struct swf_cache *c, ck_epoch_record_t *rec)
{
    (void)rec;
    void *o = swf_cache_alloc(c, SWF_WAIT);
    swf_cache_free(c, o);
    swf_cache_free(c, o);
}

static void foreign_pointer(struct swf_cache *c, ck_epoch_record_t *rec)
{
    (void)rec;
    swf_cache_free(c, malloc(64));
}

static void interior_pointer(struct swf_cache *c, ck_epoch_record_t *rec)
{
    (void)rec;
    char *o = swf_cache_alloc(c, SWF_WAIT);
    swf_cache_free(c, o + 8);
}

static void other_cache(struct swf_cache *c, ck_epoch_record_t *rec)
{
    (void)rec;
    struct swf_cache_config cfg = {.object_size = 64, .name = "other"};
    struct swf_cache *d;
    swf_cache_create(&cfg, &d);
    swf_cache_free(c, swf_cache_alloc(d, SWF_WAIT));
}

static void free_while_deferred(struct swf_cache *c, ck_epoch_record_t *rec)
{
    void *o = swf_cache_alloc(c, SWF_WAIT);
    swf_cache_free_deferred(c, rec, &o, 1);
    swf_cache_free(c, o);
}

static void defer_twice(struct swf_cache *c, ck_epoch_record_t *rec)
{
    void *o = swf_cache_alloc(c, SWF_WAIT);
    swf_cache_free_deferred(c, rec, &o, 1);
    swf_cache_free_deferred(c, rec, &o, 1);
}

static void expect_abort(const char *what, misuse_fn fn, const char *message)
{
    int pipefd[2];
    tap_require(pipe(pipefd) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        static ck_epoch_t epoch;
        static ck_epoch_record_t rec;
        ck_epoch_init(&epoch);
        ck_epoch_register(&epoch, &rec, NULL);
        struct swf_cache_config cfg = {.object_size = 64, .name = "misuse"};
        struct swf_cache *c;
        swf_cache_create(&cfg, &c);
        fn(c, &rec);
        _exit(0); /* not caught: the test fails */
    }
    close(pipefd[1]);
    char buf[512] = {0};
    size_t len = 0;
    ssize_t r;
    while (len < sizeof(buf) - 1 && (r = read(pipefd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)r;
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, message) != NULL,
       "%s aborts with \"%s\" (got \"%s\")", what, message, buf);
}

int main(void)
{
    if (!swf_debug_checks()) {
        skip("built without debug checks: misuse is undefined behaviour, not caught");
        return tap_done();
    }
    expect_abort("a double free", double_free, "sweepfill: swf_cache_free: double free of");
    expect_abort("a malloc'd pointer", foreign_pointer, "swf_cache_free: 0x");
    expect_abort("a malloc'd pointer", foreign_pointer, "was not allocated from cache 'misuse'");
    expect_abort("a pointer into an object", interior_pointer,
                 "was not allocated from cache 'misuse'");
    expect_abort("another cache's object", other_cache, "was not allocated from cache 'misuse'");
    expect_abort("a free of an object queued for a deferred free", free_while_deferred,
                 "swf_cache_free: 0x");
    expect_abort("queueing the same object twice", defer_twice, "swf_cache_free_deferred: 0x");
    return tap_done();
}
