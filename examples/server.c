/*
 * examples/server.c - sweepfill in a server (docs/server.md): an epoll echo server on 127.0.0.1
 * whose live connections get a per-connection object, a struct counters that the workers' hot
 * path updates, switched on and off while the server runs.
 *
 * Threads: one accepts, N workers each serve the connections of their own epoll set, and a
 * control thread switches the feature on and off every period and, while it is on, catches up
 * the connections whose object could not be had at accept. The connections are members of a
 * CK_LIST: added by the accept thread and removed by the workers under one writer mutex, read by
 * the control thread's sweeps in ck_epoch sections, and each connection's counters are read by
 * its worker inside ck_epoch sections, so that switching off frees them after a grace period
 * without a lock on the hot path. A table from descriptor to connection serves lookups by fd.
 *
 *   server [--workers N] [--period-ms MS] [--prepare N] [--control-cpu CPU] SECONDS
 *       serve for SECONDS (0: until SIGINT or SIGTERM), print the port, then exit cleanly;
 *       objects for N connections (default 256) are made ready at start-up, and the control
 *       thread runs on CPU if given
 *   server --self-test SECONDS [--workers N] [--clients N] [--mute N] [--period-ms MS] ...
 *       also run client threads that open, use and close connections (some closed as soon as
 *       they are open), and N clients (default 1) that send and never read; check after every
 *       activation, catch-up and deactivation; print TAP
 *
 * Nothing blocks inside an epoch section: a worker sends without waiting, and what its client
 * has not taken yet waits in the connection's own output buffer, flushed when epoll says the
 * socket is writable; meanwhile the worker stops reading that connection, so a client that never
 * reads costs the server one buffer and holds up no one (a blocking send there had held the
 * worker's section open, and with it every other connection of that worker and every grace
 * period, deactivate's included).
 *
 * Checks (both modes; the self-test reports them as TAP and exits non-zero on a failure): after
 * activate and after catch_up return 0, every live connection has its object but for those
 * owed since the call began; after deactivate, none has one; every object a worker finds is its
 * connection's; at exit every connection was freed and the cache has no object alive. The
 * self-test runs at least SECONDS, and on until the feature was switched on and off 3 times,
 * the clients opened 200 connections, (with SWF_FAILSLAB set) a catch-up ran and (with --mute)
 * the clients that never read were refused by a full socket, after which the feature switched
 * off twice more and the others had 50 more answers: it counts, it does not time, but gives up
 * with a failure after SELF_TEST_LIMIT_S seconds rather than hang. Build it against an installed
 * sweepfill (docs/server.md has the line for a private prefix):
 *   cc -O2 -pthread -o server examples/server.c $(pkg-config --cflags --libs sweepfill)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* accept4, SOCK_NONBLOCK, pthread_setaffinity_np */
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <ck_queue.h>
#include <sweepfill/feature.h>

enum { MAX_WORKERS = 16, MAX_CLIENTS = 16, MAX_MUTE = 4, BATCH = 64, MSG = 32, CHUNK = 4096 };
enum { SELF_TEST_LIMIT_S = 150 }; /* far beyond a run's few seconds, even beside a CPU hog */

static void die(const char *what)
{
    fprintf(stderr, "server: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct worker {
    pthread_t thread;
    int ep;                /* its epoll set */
    ck_epoch_record_t rec; /* its epoch record: its sections, and its connections' frees */
    uint64_t served, mismatched, closed;
};

static ck_epoch_t epoch;
static ck_epoch_record_t control_rec; /* the control thread's: the feature's guard */
static struct worker workers[MAX_WORKERS];
static int nworkers = 2;
static volatile sig_atomic_t stopping;

/* [README] */
/* The per-connection object: made by the sweep or at accept, found through the slot. */
struct counters {
    struct conn *conn; /* the connection it was made for */
    uint64_t requests, bytes;
};

struct conn {
    CK_LIST_ENTRY(conn) link;
    void *counters;     /* the slot: a struct counters while the feature is on */
    struct swf_pin pin; /* the sweep resumes on it; the free waits for its unpin */
    int fd;             /* -1 once closed; written under the writer mutex */
    uint64_t owed_at;   /* the ticket of an EAGAIN at accept (0: none); writer mutex */
    struct worker *owner;
    struct outbuf *out; /* the echo its client has not taken yet (the owner's; NULL: none) */
};
CK_LIST_HEAD(conn_list, conn);
SWF_LIST_CK_LIST_AUTO(conns, conn_list, conn, link, counters, pin)

static struct conn_list all = CK_LIST_HEAD_INITIALIZER(all);
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER; /* adds, removes, by_fd */
static struct conn **by_fd;                                /* fd -> its live connection */
static size_t fd_max;
static uint64_t owed_tickets; /* writer mutex */
static int owed_pending;      /* set by the accept thread, taken by the control thread */
static struct swf_cache *cache;
static struct swf_feature *counting; /* one struct counters per live connection while on */
static uint64_t conns_freed, stale_fds;

static void init_counters(void *obj, void *member, void *arg)
{
    (void)arg;
    struct counters *k = obj;
    k->conn = member;
    k->requests = k->bytes = 0;
}

static int make_feature(void)
{
    struct swf_feature_config cfg;
    swf_feature_config_init(&cfg);
    cfg.sweep.list = conns_list(&all);
    cfg.sweep.cache = cache;
    cfg.sweep.init = init_counters;
    swf_guard_epoch(&cfg.sweep.guard, &control_rec); /* only the control thread switches */
    cfg.sweep.section_bound = 256;
    cfg.synchronize = swf_synchronize_epoch; /* sleeps while it waits */
    cfg.synchronize_arg = &control_rec;
    cfg.prepare = SWF_FEATURE_PREPARE_COUNT; /* sized when activate runs, not at start-up */
    return swf_feature_create(&cfg, &counting);
}

/* The accept thread: a new member for every accept (a retired one never comes back). */
static void open_conn(int fd, struct worker *w)
{
    struct conn *c = calloc(1, sizeof(*c));
    if (c == NULL)
        die("calloc");
    c->fd = fd;
    c->owner = w;
    pthread_mutex_lock(&writer);
    CK_LIST_INSERT_HEAD(&all, c, link);
    stale_fds += by_fd[fd] != NULL; /* 0: each close cleared its entry first */
    by_fd[fd] = c;
    if (swf_feature_added(counting, c, SWF_NOWAIT) == EAGAIN) { /* off: one load */
        c->owed_at = ++owed_tickets; /* owed: the control thread catches it up, */
        __atomic_store_n(&owed_pending, 1, __ATOMIC_RELEASE); /* never a WAIT retry here */
    }
    pthread_mutex_unlock(&writer);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        die("epoll_ctl");
}

/* After the grace period of the closing worker's record, and any sweep's unpin. */
static void free_conn(struct swf_pin *pin)
{
    struct conn *c = (struct conn *)((char *)pin - offsetof(struct conn, pin));
    swf_feature_release(counting, c); /* its counters, if any, back to the cache */
    free(c->out);
    free(c);
    __atomic_fetch_add(&conns_freed, 1, __ATOMIC_RELAXED);
}

/* The owning worker, inside its epoch section. */
static void close_conn(struct worker *w, struct conn *c)
{
    int fd = c->fd;
    struct swf_grace grace;
    swf_grace_epoch(&grace, &w->rec); /* the free runs in this worker's ck_epoch_poll */
    epoll_ctl(w->ep, EPOLL_CTL_DEL, fd, NULL);
    pthread_mutex_lock(&writer);
    by_fd[fd] = NULL; /* before close(): accept may return this fd at once */
    c->fd = -1;       /* events still in this worker's batch skip it */
    CK_LIST_REMOVE(c, link);
    swf_pin_retire(&c->pin, &grace, free_conn);
    pthread_mutex_unlock(&writer);
    close(fd);
    w->closed++;
}
/* [README] */

/* ---- the workers ---- */

/* What a connection's client has not taken yet: at most one read's echo, since the worker stops
 * reading a connection while anything waits here (the client's own socket buffers then fill,
 * and its sends block, not ours). */
struct outbuf {
    size_t off, len;
    char data[CHUNK];
};

/* Which events the owning worker waits for on c: input, or output while its buffer holds some. */
static bool want(struct worker *w, struct conn *c, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    return epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0;
}

/* Send what c's buffer holds, never waiting: false when the connection failed. */
static bool flush(struct conn *c)
{
    struct outbuf *o = c->out;
    while (o->len > 0) {
        ssize_t k = send(c->fd, o->data + o->off, o->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0)
            o->off += (size_t)k, o->len -= (size_t)k;
        else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return true; /* the socket is full: the rest waits for EPOLLOUT */
        else
            return false;
    }
    return true;
}

/* Echo n bytes to c without waiting: what the socket does not take now goes into c's buffer, and
 * the worker waits for output, not input, until the buffer is empty. False: c failed. */
static bool echo(struct worker *w, struct conn *c, const char *p, size_t n)
{
    ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return false;
    size_t sent = k > 0 ? (size_t)k : 0;
    if (sent == n)
        return true;
    if (c->out == NULL && (c->out = malloc(sizeof(*c->out))) == NULL)
        return false;
    c->out->off = 0;
    c->out->len = n - sent;
    memcpy(c->out->data, p + sent, n - sent);
    return want(w, c, EPOLLOUT);
}

/* One ready connection: flush what its client owes us room for, or echo what came, counting it
 * in the connection's object if on. Inside the worker's epoch section: no call here waits. */
static void serve(struct worker *w, struct conn *c)
{
    if (c->fd < 0)
        return; /* closed earlier in this batch; its memory lives until our next poll */
    if (c->out != NULL && c->out->len > 0) { /* waiting to send: EPOLLOUT, or an error */
        if (!flush(c) || (c->out->len == 0 && !want(w, c, EPOLLIN)))
            close_conn(w, c);
        return;
    }
    char buf[CHUNK];
    ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0 || !echo(w, c, buf, (size_t)n)) {
        close_conn(w, c);
        return;
    }
    w->served++;
    struct counters *k = swf_slot_load(&c->counters); /* NULL while the feature is off */
    if (k != NULL) {
        w->mismatched += k->conn != c;
        k->requests++;
        k->bytes += (uint64_t)n;
    }
}

static struct conn *first_of(struct worker *w)
{
    struct conn *c, *found = NULL;
    pthread_mutex_lock(&writer);
    CK_LIST_FOREACH(c, &all, link)
    {
        if (c->owner == w) {
            found = c;
            break;
        }
    }
    pthread_mutex_unlock(&writer);
    return found;
}

static int stop_workers;

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct epoll_event ev[BATCH];
    while (!__atomic_load_n(&stop_workers, __ATOMIC_ACQUIRE)) {
        int n = epoll_wait(w->ep, ev, BATCH, 50);
        ck_epoch_begin(&w->rec, NULL); /* counters found here stay valid until the end */
        for (int i = 0; i < n; i++)
            serve(w, ev[i].data.ptr);
        ck_epoch_end(&w->rec, NULL);
        ck_epoch_poll(&w->rec); /* frees of connections closed here, their grace period over */
    }
    /* Exit: close what is left, then run every free queued on this record. */
    struct conn *c;
    while ((c = first_of(w)) != NULL) {
        ck_epoch_begin(&w->rec, NULL);
        close_conn(w, c);
        ck_epoch_end(&w->rec, NULL);
    }
    /* ck_epoch_barrier's two halves, its wait the library's: it sleeps until sections end. */
    swf_synchronize_epoch(&w->rec);
    ck_epoch_reclaim(&w->rec); /* every free queued here: their grace period is over */
    return NULL;
}

/* ---- the accept thread ---- */

static int listen_fd, stop_accept;
static uint64_t accepted, refused;

static void *accept_main(void *arg)
{
    (void)arg;
    unsigned int next = 0;
    while (!__atomic_load_n(&stop_accept, __ATOMIC_ACQUIRE)) {
        struct pollfd pf = {.fd = listen_fd, .events = POLLIN};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                sleep_us(1000); /* out of descriptors or memory: let closes catch up */
            continue;
        }
        if ((size_t)fd >= fd_max) { /* beyond the table */
            close(fd);
            refused++;
            continue;
        }
        open_conn(fd, &workers[next++ % (unsigned int)nworkers]);
        __atomic_fetch_add(&accepted, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* ---- the control thread ---- */

struct census {
    size_t live, with, owed, missing, stray;
};

/* Under the writer mutex every adder has returned and no connection comes or goes. A live
 * connection without an object is owed if its EAGAIN came after ticket `since`, else missing. */
static struct census take_census(uint64_t since)
{
    struct census s = {0, 0, 0, 0, 0};
    size_t in_table = 0;
    pthread_mutex_lock(&writer);
    for (size_t fd = 0; fd < fd_max; fd++) {
        if (by_fd[fd] != NULL) {
            in_table++;
            s.stray += by_fd[fd]->fd != (int)fd;
        }
    }
    struct conn *c;
    CK_LIST_FOREACH(c, &all, link)
    {
        s.live++;
        if (swf_slot_load(&c->counters) != NULL)
            s.with++;
        else if (c->owed_at > since)
            s.owed++;
        else
            s.missing++;
        s.stray += c->fd < 0 || by_fd[c->fd] != c;
    }
    s.stray += in_table != s.live;
    pthread_mutex_unlock(&writer);
    return s;
}

static uint64_t ticket_now(void)
{
    pthread_mutex_lock(&writer);
    uint64_t t = owed_tickets;
    pthread_mutex_unlock(&writer);
    return t;
}

static int period_ms = 200, stop_control;
static struct {
    uint64_t on, off, catch_ups, failed, exact_checks, missing, stray, held_after_off;
    uint64_t largest, nowait_failures, maintain_failed;
} ctl;

static void check_on(uint64_t since)
{
    struct census s = take_census(since);
    ctl.exact_checks++;
    ctl.missing += s.missing;
    ctl.stray += s.stray;
    ctl.largest = s.live > ctl.largest ? s.live : ctl.largest;
}

/* While on: catch up the owed connections, on this thread (it owns the guard's record), and
 * check now and then that every live connection has its object, but for those owed since the
 * last sweep began (`covered`: the owed ticket before it). */
static void stay_on(double seconds, bool complete, uint64_t covered)
{
    double until = now_s() + seconds;
    for (int i = 1; now_s() < until && !__atomic_load_n(&stop_control, __ATOMIC_ACQUIRE); i++) {
        /* Every turn: the add reserve and the headroom refilled, so that the accepts' NOWAIT
         * calls find objects; a few loads when no accept came since the last refill. */
        if (swf_feature_maintain(counting) != 0)
            ctl.maintain_failed++; /* ENOMEM: the accepts leave connections owed meanwhile */
        if (__atomic_exchange_n(&owed_pending, 0, __ATOMIC_ACQUIRE)) {
            uint64_t since = ticket_now();
            int err = swf_feature_catch_up(counting, NULL);
            if (err == 0) {
                ctl.catch_ups++;
                covered = since;
                if (complete)
                    check_on(covered);
            } else {
                __atomic_store_n(&owed_pending, 1, __ATOMIC_RELAXED); /* ENOMEM: still owed */
            }
        } else if (i % 10 == 0 && complete) {
            check_on(covered);
        }
        sleep_us(1000);
    }
}

static int control_parked, workers_gone, control_cpu = -1;

/* Move the calling thread to cpu: the preparation and the sweeps of activate then run there, not
 * on the CPUs the process was started on (taskset -c, systemd's CPUAffinity=), which it would
 * otherwise inherit. */
static int run_on_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *control_main(void *arg)
{
    (void)arg;
    int moved = control_cpu >= 0 ? run_on_cpu(control_cpu) : 0;
    if (moved != 0)
        fprintf(stderr, "server: --control-cpu %d: %s (it runs where it was)\n", control_cpu,
                strerror(moved));
    for (;;) {
        uint64_t since = ticket_now();
        struct swf_sweep_stats st;
        int err = swf_feature_activate(counting, &st);
        if (err == 0) {
            __atomic_fetch_add(&ctl.on, 1, __ATOMIC_RELAXED);
            ctl.nowait_failures += st.nowait_failures;
            check_on(since);
        } else {
            ctl.failed++; /* ENOMEM: on, incomplete; the next activate sweeps again */
        }
        stay_on(period_ms / 2000.0, err == 0, since);
        if (__atomic_load_n(&stop_control, __ATOMIC_ACQUIRE))
            break; /* the server exits with the feature on */
        if (swf_feature_deactivate(counting) == 0) {
            __atomic_fetch_add(&ctl.off, 1, __ATOMIC_RELAXED);
            struct census s = take_census(UINT64_MAX);
            ctl.held_after_off += s.with;
            ctl.stray += s.stray;
        }
        double until = now_s() + period_ms / 2000.0;
        while (now_s() < until && !__atomic_load_n(&stop_control, __ATOMIC_ACQUIRE))
            sleep_us(1000);
    }
    /* Switch off last: after the workers closed their connections and ran their frees. */
    __atomic_store_n(&control_parked, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&workers_gone, __ATOMIC_ACQUIRE))
        sleep_us(1000);
    if (swf_feature_deactivate(counting) == 0)
        __atomic_fetch_add(&ctl.off, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* ---- the self-test's clients ---- */

static struct sockaddr_in server_addr;
static int stop_clients, nclients = 4;
static int client_fds[MAX_CLIENTS][16], client_nfds[MAX_CLIENTS]; /* left open at the end */
static uint64_t client_opens, client_round_trips, client_errors;

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {30, 0}; /* a server that stopped answering fails the test, no hang */
    struct linger lg = {1, 0};   /* close sends a reset: no TIME_WAIT piles up on the ports */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    if (connect(fd, (struct sockaddr *)&server_addr, sizeof(server_addr)) != 0) {
        close(fd);
        return -1;
    }
    __atomic_fetch_add(&client_opens, 1, __ATOMIC_RELAXED);
    return fd;
}

static bool round_trip(int fd, uint64_t *rng)
{
    char out[MSG], in[MSG];
    for (int i = 0; i < MSG; i++)
        out[i] = (char)next_random(rng);
    if (send(fd, out, MSG, MSG_NOSIGNAL) != MSG)
        return false;
    for (size_t got = 0; got < MSG;) {
        ssize_t n = recv(fd, in + got, MSG - got, 0);
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return memcmp(in, out, MSG) == 0;
}

static void *client_main(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (me + 1);
    int *open_fds = client_fds[me], n = 0;
    while (!__atomic_load_n(&stop_clients, __ATOMIC_ACQUIRE)) {
        uint64_t r = next_random(&rng) % 16;
        if (r < 4 && n < 16) { /* open, and use once */
            int fd = dial();
            if (fd >= 0 && round_trip(fd, &rng))
                open_fds[n++] = fd;
            else if (fd >= 0)
                __atomic_fetch_add(&client_errors, 1, __ATOMIC_RELAXED), close(fd);
        } else if (r < 6) { /* open and close at once: the newest connection goes first */
            int fd = dial();
            if (fd >= 0)
                close(fd);
        } else if (r < 14 && n > 0) { /* a request on one of ours */
            if (round_trip(open_fds[r % (uint64_t)n], &rng))
                __atomic_fetch_add(&client_round_trips, 1, __ATOMIC_RELAXED);
            else
                __atomic_fetch_add(&client_errors, 1, __ATOMIC_RELAXED);
        } else if (n > 0) { /* close one */
            int i = (int)(next_random(&rng) % (uint64_t)n);
            close(open_fds[i]);
            open_fds[i] = open_fds[--n];
        }
    }
    client_nfds[me] = n; /* left open: the server closes them as it exits */
    return NULL;
}

/* Clients that send and never read: the server must stop reading them, not stop serving. */
static int nmute = 1, mute_fds[MAX_MUTE];
static pthread_mutex_t mute_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int refused;         /* mute clients whose send found their socket full */
    uint64_t bytes;      /* what they had sent by then */
    uint64_t off, trips; /* switch-offs and the others' round trips when the last was refused */
} mute;

static void *mute_main(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    static const char chunk[65536]; /* what it sends does not matter: nobody reads the echo */
    int fd = dial();
    if (fd < 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        __atomic_fetch_add(&client_errors, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    mute_fds[me] = fd; /* closed by main, after the server stopped */
    uint64_t sent = 0;
    for (bool full = false; !__atomic_load_n(&stop_clients, __ATOMIC_ACQUIRE);) {
        ssize_t k = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL);
        if (k > 0) {
            sent += (uint64_t)k;
            continue;
        }
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            __atomic_fetch_add(&client_errors, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        if (!full) { /* the server's echo filled our socket, and it stopped reading ours */
            full = true;
            pthread_mutex_lock(&mute_lock);
            mute.refused++;
            mute.bytes += sent;
            mute.off = __atomic_load_n(&ctl.off, __ATOMIC_RELAXED);
            mute.trips = __atomic_load_n(&client_round_trips, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&mute_lock);
        }
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        poll(&pf, 1, 10);
    }
    return NULL;
}

/* Whether the mute clients were all refused, and since then the feature switched off twice and
 * the other clients had 50 answers: what a worker held in a blocking send would prevent. */
static bool mute_outlived(void)
{
    pthread_mutex_lock(&mute_lock);
    bool done = mute.refused == nmute &&
                __atomic_load_n(&ctl.off, __ATOMIC_RELAXED) >= mute.off + 2 &&
                __atomic_load_n(&client_round_trips, __ATOMIC_RELAXED) >= mute.trips + 50;
    pthread_mutex_unlock(&mute_lock);
    return done;
}

/* ---- start, run, stop ---- */

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3))) static void point(bool good, const char *fmt, ...)
{
    va_list ap;
    printf("%sok %d - ", good ? "" : "not ", ++tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    tap_failed += !good;
}

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: server [--self-test] [--workers N] [--clients N] [--mute N] "
                    "[--period-ms MS] [--prepare N] [--control-cpu CPU] SECONDS\n");
    exit(2);
}

int main(int argc, char **argv)
{
    bool self_test = false;
    double seconds = -1;
    long prepare = 256;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--self-test") == 0)
            self_test = true;
        else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            nworkers = atoi(argv[++i]);
        else if (strcmp(argv[i], "--clients") == 0 && i + 1 < argc)
            nclients = atoi(argv[++i]);
        else if (strcmp(argv[i], "--mute") == 0 && i + 1 < argc)
            nmute = atoi(argv[++i]);
        else if (strcmp(argv[i], "--period-ms") == 0 && i + 1 < argc)
            period_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--prepare") == 0 && i + 1 < argc)
            prepare = atol(argv[++i]);
        else if (strcmp(argv[i], "--control-cpu") == 0 && i + 1 < argc)
            control_cpu = atoi(argv[++i]);
        else if (argv[i][0] != '-' && seconds < 0)
            seconds = atof(argv[i]);
        else
            usage();
    }
    if (seconds < 0 || nworkers < 1 || nworkers > MAX_WORKERS || nclients < 1 ||
        nclients > MAX_CLIENTS || nmute < 0 || nmute > MAX_MUTE || period_ms < 2 || prepare < 0 ||
        control_cpu >= CPU_SETSIZE)
        usage();

    struct rlimit rl;
    fd_max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? rl.rlim_cur : 65536;
    by_fd = calloc(fd_max, sizeof(*by_fd));
    struct swf_cache_config cc = {.object_size = sizeof(struct counters), .name = "server"};
    if (by_fd == NULL || swf_cache_create(&cc, &cache) != 0)
        die("start-up");
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &control_rec, NULL);
    if (make_feature() != 0)
        die("swf_feature_create");
    /* The objects for the connections expected, made ready now, before anything is served:
     * activate's own preparation then finds them there (docs/server.md). */
    if (swf_feature_prepare(counting, (size_t)prepare) != 0)
        die("swf_feature_prepare");

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    server_addr.sin_family = AF_INET;
    server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(server_addr);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&server_addr, len) != 0 ||
        listen(listen_fd, 1024) != 0 ||
        getsockname(listen_fd, (struct sockaddr *)&server_addr, &len) != 0)
        die("listen on 127.0.0.1");
    printf("# serving on 127.0.0.1:%d with %d workers, switching every %d ms\n",
           ntohs(server_addr.sin_port), nworkers, period_ms);
    fflush(stdout);

    for (int i = 0; i < nworkers; i++) {
        workers[i].ep = epoll_create1(EPOLL_CLOEXEC);
        if (workers[i].ep < 0)
            die("epoll_create1");
        ck_epoch_register(&epoch, &workers[i].rec, NULL);
        pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
    }
    pthread_t acceptor, control, clients[MAX_CLIENTS], mutes[MAX_MUTE];
    pthread_create(&acceptor, NULL, accept_main, NULL);
    pthread_create(&control, NULL, control_main, NULL);
    if (!self_test)
        nmute = 0;
    for (int i = 0; i < nmute; i++)
        pthread_create(&mutes[i], NULL, mute_main, (void *)(uintptr_t)i);
    if (self_test)
        for (int i = 0; i < nclients; i++)
            pthread_create(&clients[i], NULL, client_main, (void *)(uintptr_t)i);

    /* Run: SECONDS, and (self-test) on until enough happened to check; never by time alone. */
    bool want_catch_up = getenv("SWF_FAILSLAB") != NULL;
    double start = now_s(), end = start + seconds;
    for (;;) {
        sleep_us(10000);
        if (stopping)
            break;
        if (self_test && now_s() - start > SELF_TEST_LIMIT_S) { /* a worker stalled: no hang */
            point(false, "the self-test reached its checks within %d s (switched off %llu times)",
                  SELF_TEST_LIMIT_S,
                  (unsigned long long)__atomic_load_n(&ctl.off, __ATOMIC_RELAXED));
            printf("1..%d\n", tap_n);
            fflush(stdout);
            _exit(1);
        }
        if ((seconds == 0 && !self_test) || now_s() < end)
            continue;
        if (!self_test)
            break;
        struct swf_feature_stats fs;
        swf_feature_stats(counting, &fs);
        if (__atomic_load_n(&ctl.off, __ATOMIC_RELAXED) >= 3 &&
            __atomic_load_n(&client_opens, __ATOMIC_RELAXED) >= 200 &&
            (!want_catch_up || fs.catch_ups >= 1) && (nmute == 0 || mute_outlived()))
            break;
    }

    /* Stop in order: the clients (their open connections stay open), the accepts, the
     * switching (it stops with the feature on), the workers (each closes its connections and
     * runs their frees), then the switch-off. */
    __atomic_store_n(&stop_clients, 1, __ATOMIC_RELEASE);
    if (self_test)
        for (int i = 0; i < nclients; i++)
            pthread_join(clients[i], NULL);
    for (int i = 0; i < nmute; i++)
        pthread_join(mutes[i], NULL);
    __atomic_store_n(&stop_accept, 1, __ATOMIC_RELEASE);
    pthread_join(acceptor, NULL);
    __atomic_store_n(&stop_control, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&control_parked, __ATOMIC_ACQUIRE))
        sleep_us(1000);
    struct swf_feature_stats fs;
    swf_feature_stats(counting, &fs);
    bool on_at_exit = fs.active;
    size_t live_at_exit = take_census(0).live;
    __atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
    uint64_t served = 0, mismatched = 0, closed = 0;
    for (int i = 0; i < nworkers; i++) {
        pthread_join(workers[i].thread, NULL);
        close(workers[i].ep);
        served += workers[i].served, mismatched += workers[i].mismatched;
        closed += workers[i].closed;
    }
    __atomic_store_n(&workers_gone, 1, __ATOMIC_RELEASE);
    pthread_join(control, NULL);
    if (self_test)
        for (int i = 0; i < nclients; i++)
            for (int j = 0; j < client_nfds[i]; j++)
                close(client_fds[i][j]);
    for (int i = 0; i < nmute; i++)
        if (mute_fds[i] > 0)
            close(mute_fds[i]);
    close(listen_fd);

    struct census left = take_census(0);
    struct swf_cache_stats cs;
    swf_cache_stats(cache, &cs);
    swf_feature_stats(counting, &fs);
    if (self_test)
        point(client_opens >= 200 && client_errors == 0,
              "clients: %llu connections opened, %llu requests echoed, %llu errors",
              (unsigned long long)client_opens, (unsigned long long)client_round_trips,
              (unsigned long long)client_errors);
    if (nmute > 0)
        point(mute.refused == nmute,
              "%d client(s) that never read: their sockets filled after %llu bytes, and since "
              "then the feature switched off %llu more times and the others had %llu more answers",
              nmute, (unsigned long long)mute.bytes, (unsigned long long)(ctl.off - mute.off),
              (unsigned long long)(client_round_trips - mute.trips));
    point(ctl.on >= (self_test ? 3 : 0) && ctl.failed == 0 && ctl.off >= ctl.on &&
              ctl.maintain_failed == 0,
          "switched on %llu times and off %llu times (%llu activations failed); NOWAIT "
          "failures in the activation sweeps: %llu; maintains that refilled: %llu (%llu failed), "
          "objects taken from the add reserve: %llu",
          (unsigned long long)ctl.on, (unsigned long long)ctl.off, (unsigned long long)ctl.failed,
          (unsigned long long)ctl.nowait_failures, (unsigned long long)fs.maintains,
          (unsigned long long)ctl.maintain_failed, (unsigned long long)fs.add_reserve_uses);
    point(ctl.missing == 0,
          "exact: at %llu checks while on (after each activation and catch-up, and every 10 "
          "ms), every live connection had its object but those owed since the last sweep began "
          "(%llu catch-ups; %llu missing; up to %llu connections live)",
          (unsigned long long)ctl.exact_checks, (unsigned long long)ctl.catch_ups,
          (unsigned long long)ctl.missing, (unsigned long long)ctl.largest);
    point(ctl.held_after_off == 0, "after every deactivation no connection held an object (%llu)",
          (unsigned long long)ctl.held_after_off);
    point(mismatched == 0,
          "workers: %llu requests served, every object found was its connection's (%llu not)",
          (unsigned long long)served, (unsigned long long)mismatched);
    point(ctl.stray == 0 && stale_fds == 0 && left.live == 0 && left.stray == 0,
          "the fd table matched the live connections at every check and at every accept (%llu "
          "stale), and both are empty at exit",
          (unsigned long long)stale_fds);
    point(conns_freed == accepted && closed == accepted,
          "every connection accepted was closed and freed (%llu accepted, %llu closed, %llu "
          "freed, %llu refused)",
          (unsigned long long)accepted, (unsigned long long)closed, (unsigned long long)conns_freed,
          (unsigned long long)refused);
    point(cs.alive == 0,
          "no object alive after the workers' epoch barriers (%llu alive; the feature was %s "
          "with %zu connections live when the workers stopped; %llu left owed at accept)",
          (unsigned long long)cs.alive, on_at_exit ? "on" : "off", live_at_exit,
          (unsigned long long)fs.left_owed);
    point(swf_feature_destroy(counting) == 0 && swf_cache_destroy(cache) == 0,
          "the feature and the cache are destroyed");
    free(by_fd);
    printf("1..%d\n", tap_n);
    return tap_failed != 0;
}
