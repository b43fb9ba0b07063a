/*
 * test/concurrent/feature_move.c - a move (unlink and link again without a retire: an LRU's
 * move-to-front) that overlaps swf_feature_deactivate, under the full checks (SWF_DEBUG=checks,
 * which meson sets for this test).
 *
 * A TAILQ under a rwlock, with the library's pin; deactivate walks it in sections of 8 members.
 * A mover thread moves the last member (one the walk has not reached) to the head (which it has
 * passed) while the walk is outside its section: the guard's leave hands the turn to the mover
 * and waits for it, by count, so the move happens inside the walk every time. The walk then
 * misses that member, which keeps its object: feature.h forbids such a move, and with the full
 * checks deactivate's verification walk must abort with one line naming swf_feature_deactivate
 * and the move. Each case runs in a child process whose stderr comes back through a pipe:
 *   - a move inside the walk: the child aborts with that line;
 *   - the same list and walk with no move: deactivate returns 0, no slot holds an object;
 *   - a member deleted (unlinked, retired) inside the walk: no abort (its object is
 *     swf_feature_release's), every slot empty once it is released.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sweepfill/feature.h>
#include <sweepfill/list_sysqueue.h>

#include "../common/tap.h"

enum { N = 64, BOUND = 8 };
enum { NO_MOVE, MOVE, DELETE };

struct conn {
    TAILQ_ENTRY(conn) link;
    void *slot;
    struct swf_pin pin;
};
TAILQ_HEAD(conn_q, conn);
SWF_LIST_SYS_TAILQ_AUTO(conns, conn_q, conn, link, slot, pin)

static struct conn_q q = TAILQ_HEAD_INITIALIZER(q);
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct swf_cache *cache;
static struct swf_feature *feature;
static int what;
static uint32_t armed, turn, moved; /* the leave hook hands the turn to the mover */
static struct conn *touched;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void readers_gone(void *arg)
{
    (void)arg;
    pthread_rwlock_wrlock(&lock);
    pthread_rwlock_unlock(&lock);
}

static void enter(void *arg)
{
    (void)arg;
    pthread_rwlock_rdlock(&lock);
}

/* Leaving the walk's first section: the mover's turn, waited for by count. */
static void leave(void *arg)
{
    (void)arg;
    pthread_rwlock_unlock(&lock);
    if (__atomic_exchange_n(&armed, 0, __ATOMIC_ACQ_REL)) {
        __atomic_store_n(&turn, 1, __ATOMIC_RELEASE);
        for (long i = 0; i < 100000000L && !__atomic_load_n(&moved, __ATOMIC_ACQUIRE); i++)
            sched_yield();
    }
}

static void free_conn(struct swf_pin *pin)
{
    struct conn *c = (struct conn *)((char *)pin - offsetof(struct conn, pin));
    swf_feature_release(feature, c);
    free(c);
}

static void *mover(void *arg)
{
    (void)arg;
    for (long i = 0; i < 100000000L && !__atomic_load_n(&turn, __ATOMIC_ACQUIRE); i++)
        sched_yield();
    pthread_rwlock_wrlock(&lock);
    struct conn *c = TAILQ_LAST(&q, conn_q); /* not reached yet by the walk */
    touched = c;
    TAILQ_REMOVE(&q, c, link);
    if (what == MOVE) {
        TAILQ_INSERT_HEAD(&q, c, link); /* where the walk has been: a move-to-front */
    } else {
        struct swf_grace g;
        swf_grace_lock(&g);
        swf_pin_retire(&c->pin, &g, free_conn);
    }
    pthread_rwlock_unlock(&lock);
    __atomic_store_n(&moved, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The child: returns 0 when deactivate returned 0 and no slot holds an object. */
static int child(int kind)
{
    what = kind;
    struct swf_cache_config cc = {.object_size = 64, .name = "move"};
    if (swf_cache_create(&cc, &cache) != 0)
        return 10;
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = conns_list(&q);
    fc.sweep.cache = cache;
    fc.sweep.init = init_obj;
    fc.sweep.guard.enter = enter;
    fc.sweep.guard.leave = leave;
    fc.sweep.section_bound = BOUND;
    fc.synchronize = readers_gone;
    if (swf_feature_create(&fc, &feature) != 0)
        return 11;
    for (int i = 0; i < N; i++) {
        struct conn *c = calloc(1, sizeof(*c));
        swf_pin_init(&c->pin);
        TAILQ_INSERT_TAIL(&q, c, link);
    }
    if (swf_feature_activate(feature, NULL) != 0)
        return 12;
    pthread_t t;
    if (kind != NO_MOVE) {
        pthread_create(&t, NULL, mover, NULL);
        __atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
    }
    int err = swf_feature_deactivate(feature);
    if (kind != NO_MOVE)
        pthread_join(t, NULL);
    size_t left = 0;
    struct conn *c;
    TAILQ_FOREACH(c, &q, link)
    {
        left += c->slot != NULL;
    }
    if (kind == MOVE)
        fprintf(stderr, "deactivate returned %d; the moved member %s its object\n", err,
                touched->slot != NULL ? "kept" : "lost");
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    return err != 0 || left != 0 || st.alive != 0 ? 1 : 0;
}

/* Run child(kind) in a child process; its stderr into buf. Returns the wait status. */
static int run(int kind, char *buf, size_t len)
{
    int fd[2];
    tap_require(pipe(fd) == 0, "pipe");
    fflush(stdout);
    pid_t pid = fork();
    tap_require(pid >= 0, "fork");
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        _exit(child(kind));
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(fd[0], buf + n, len - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    close(fd[0]);
    int status;
    tap_require(waitpid(pid, &status, 0) == pid, "waitpid");
    return status;
}

static void show(const char *buf)
{
    for (const char *p = buf; *p != '\0';) {
        const char *e = strchr(p, '\n');
        int len = e != NULL ? (int)(e - p) : (int)strlen(p);
        diag("child: %.*s", len, p);
        p += len + (e != NULL);
    }
}

int main(void)
{
    if (!swf_debug_checks()) {
        skip("the full checks are off (run with SWF_DEBUG=checks)");
        return tap_done();
    }
    char buf[4096];
    int st = run(MOVE, buf, sizeof(buf));
    show(buf);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
       "a member moved to the front while deactivate walked: the full checks abort");
    const char *line = strstr(buf, "sweepfill: swf_feature_deactivate: ");
    ok(line != NULL && strstr(line, "moved") != NULL && strchr(line, '\n') != NULL &&
           strstr(strchr(line, '\n'), "sweepfill:") == NULL,
       "with one line naming swf_feature_deactivate and the move");
    st = run(NO_MOVE, buf, sizeof(buf));
    show(buf);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
       "no move: deactivate returns 0 under the full checks, no slot left, cache balanced");
    st = run(DELETE, buf, sizeof(buf));
    show(buf);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
       "a member deleted while deactivate walked: no abort, no slot left, cache balanced");
    return tap_done();
}
