/*
 * test/unit/dlclose_exit.c - a thread that used a cache exits after the library was dlclosed.
 *
 * The library's thread-exit hook is a pthread key destructor in the library's code. A plugin host
 * loads libsweepfill.so with dlopen, a worker thread uses a cache (so it is bound and its exit
 * hook armed), the cache is destroyed, the library is dlclosed, and only then does the worker
 * exit: the hook must still find its code (the library is linked -z nodelete). Then the library
 * is opened again and used again. Runs in a child process, so that a crash is a failed point.
 * The library's path is the first argument.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

struct api {
    void *handle;
    __typeof__(swf_cache_create) *create;
    __typeof__(swf_cache_destroy) *destroy;
    __typeof__(swf_cache_grow) *grow;
    __typeof__(swf_cache_alloc) *alloc;
    __typeof__(swf_cache_free) *free;
};

static int open_api(struct api *a, const char *path)
{
    a->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (a->handle == NULL)
        return -1;
    a->create = (__typeof__(a->create))dlsym(a->handle, "swf_cache_create");
    a->destroy = (__typeof__(a->destroy))dlsym(a->handle, "swf_cache_destroy");
    a->grow = (__typeof__(a->grow))dlsym(a->handle, "swf_cache_grow");
    a->alloc = (__typeof__(a->alloc))dlsym(a->handle, "swf_cache_alloc");
    a->free = (__typeof__(a->free))dlsym(a->handle, "swf_cache_free");
    return a->create && a->destroy && a->grow && a->alloc && a->free ? 0 : -1;
}

static struct api api;
static struct swf_cache *cache;
static sem_t used, may_exit;

static void *worker(void *arg)
{
    (void)arg;
    api.grow(cache, 100); /* bound: magazines of its own, exit hook armed */
    void *o = api.alloc(cache, SWF_NOWAIT);
    api.free(cache, o);
    sem_post(&used);
    sem_wait(&may_exit);
    return NULL; /* the exit hook runs now, after dlclose */
}

/* Exit codes: 0 all good; 1.. the step that failed. A crash is a signal. */
static int scenario(const char *path)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "plugin"};
    if (open_api(&api, path) != 0 || api.create(&cfg, &cache) != 0)
        return 1;
    sem_init(&used, 0, 0);
    sem_init(&may_exit, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    sem_wait(&used);
    if (api.destroy(cache) != 0)
        return 2;
    if (dlclose(api.handle) != 0)
        return 3;
    sem_post(&may_exit);
    pthread_join(t, NULL);
    if (open_api(&api, path) != 0 || api.create(&cfg, &cache) != 0 || api.grow(cache, 10) != 0)
        return 4;
    void *o = api.alloc(cache, SWF_NOWAIT);
    if (o == NULL || api.free(cache, o) != 0 || api.destroy(cache) != 0)
        return 5;
    return dlclose(api.handle) == 0 ? 0 : 6;
}

int main(int argc, char **argv)
{
    tap_require(argc > 1, "usage: dlclose_exit PATH-OF-libsweepfill.so");
    pid_t pid = fork();
    if (pid == 0)
        _exit(scenario(argv[1]));
    int status;
    waitpid(pid, &status, 0);
    ok(!WIFSIGNALED(status),
       "a thread bound to a cache exits after destroy and dlclose without a crash (signal %d)",
       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "dlopen, use, destroy, dlclose, thread exit, dlopen again, use again (step %d failed)",
       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return tap_done();
}
