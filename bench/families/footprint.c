/*
 * bench/families/footprint.c - what caches keep resident: the `footprint` figures of
 * bench/RESULTS.md.
 *
 * Prints, in bytes of resident memory (/proc/self/statm, so whole pages, which is why each figure
 * is an average over many caches; each line group measured in a child process of its own):
 *   empty          one cache just created, with nothing prepared (no prefill)
 *   first_object   one cache after one WAIT allocation (and its free) by one thread
 *   used_by_8      1,000 caches, each used once (a WAIT allocation and its free) by each of 8
 *                  threads, measured while the threads are alive (their magazines held): the
 *                  total and the figure per cache
 * Plain C, no Google Benchmark: bench/run --all runs it, and it runs alone:
 *   build/bench/bench/bench_footprint [--caches=N] [--threads=T]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sweepfill/cache.h>

static size_t ncaches = 1000;
static size_t nthreads = 8;
static struct swf_cache **caches;
static pthread_barrier_t used, measured;

static long resident_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL || fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = -1;
    if (f != NULL)
        fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static void create_all(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "footprint"};
    for (size_t i = 0; i < ncaches; i++)
        if (swf_cache_create(&cfg, &caches[i]) != 0) {
            fprintf(stderr, "bench_footprint: create %zu: %s\n", i, swf_error_reason());
            exit(1);
        }
}

static void destroy_all(void)
{
    for (size_t i = 0; i < ncaches; i++)
        swf_cache_destroy(caches[i]);
}

static void use_each(void)
{
    for (size_t i = 0; i < ncaches; i++) {
        void *o = swf_cache_alloc(caches[i], SWF_WAIT);
        if (o == NULL) {
            fprintf(stderr, "bench_footprint: WAIT: %s\n", swf_error_reason());
            exit(1);
        }
        swf_cache_free(caches[i], o);
    }
}

static void *user(void *arg)
{
    (void)arg;
    use_each();
    pthread_barrier_wait(&used);
    pthread_barrier_wait(&measured); /* keep the magazines until the main thread has looked */
    return NULL;
}

static size_t flag(int argc, char **argv, const char *name, size_t dflt)
{
    size_t len = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
            return (size_t)strtoull(argv[i] + len + 1, NULL, 10);
    return dflt;
}

/* Empty caches, then the same caches after one WAIT allocation each. */
static void alone(void)
{
    long base = resident_bytes();
    create_all();
    long empty = resident_bytes() - base;
    use_each();
    long first = resident_bytes() - base;
    destroy_all();
    printf("empty         %10.0f per cache\n", (double)empty / (double)ncaches);
    printf("first_object  %10.0f per cache\n", (double)first / (double)ncaches);
}

/* Caches used once by each of nthreads threads, measured while the threads hold their magazines. */
static void shared(void)
{
    long base = resident_bytes();
    create_all();
    pthread_barrier_init(&used, NULL, (unsigned)nthreads + 1);
    pthread_barrier_init(&measured, NULL, (unsigned)nthreads + 1);
    pthread_t *t = calloc(nthreads, sizeof(*t));
    for (size_t i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, user, NULL);
    pthread_barrier_wait(&used);
    long by_threads = resident_bytes() - base;
    pthread_barrier_wait(&measured);
    for (size_t i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    destroy_all();
    free(t);
    printf("used_by_%-5zu %10.0f per cache, %ld in all (with the %zu threads' own)\n", nthreads,
           (double)by_threads / (double)ncaches, by_threads, nthreads);
}

/* Each measurement in a child process of its own, so that none reuses memory another freed. */
static void in_child(void (*measure)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        measure();
        fflush(stdout);
        _exit(0);
    }
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) {
        fprintf(stderr, "bench_footprint: a measurement failed\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    ncaches = flag(argc, argv, "--caches", ncaches);
    nthreads = flag(argc, argv, "--threads", nthreads);
    if (ncaches == 0 || nthreads == 0) {
        fprintf(stderr, "usage: bench_footprint [--caches=N] [--threads=T]\n");
        return 2;
    }
    caches = calloc(ncaches, sizeof(*caches));
    printf("footprint (resident bytes, averages over %zu caches of 64 B objects)\n", ncaches);
    in_child(alone);
    in_child(shared);
    free(caches);
    return 0;
}
