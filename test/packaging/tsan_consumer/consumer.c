/*
 * test/packaging/tsan_consumer/consumer.c - a program that uses an installed sweepfill the way an
 * application does, built with -fsanitize=thread: ThreadSanitizer must report nothing, with no
 * suppression file.
 *
 * Readers walk the registry in read sections and check every object they find (its canary and
 * its owner, written by init before publication) and every member's own fields (written before
 * add); writers add fresh members and delete them again, freeing each in its release callback;
 * the main thread switches the feature on and off. Every access that crosses threads goes
 * through sweepfill's API: the list links, the slots, the grace periods before a member or an
 * object is freed. At the end: every member released, no object alive, counts consistent.
 * Exit status 0 when all holds (TSan's own exit status, 66, when it reported anything).
 *
 *   consumer [--ms MS] [--readers R] [--writers W]
 * MS counts 100 activate/deactivate rounds per second of sleeping between them (default 1000).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* usleep under -std=c11 */
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sweepfill/sweepfill.h>

#define CANARY 0x5eedf111c0ffee00ull

struct object {
    uint64_t canary;
    uint64_t owner; /* the member's id */
};

struct member {
    uint64_t id; /* written before add, read by readers */
    uint64_t payload[4];
    struct swf_node node;
};

static struct swf_registry *reg;
static struct swf_cache *objects;
static int stop;
static uint64_t released, bad;

static void init_object(void *obj, void *node, void *arg)
{
    (void)arg;
    struct object *o = obj;
    o->canary = CANARY;
    o->owner = SWF_CONTAINER_OF(node, struct member, node)->id;
}

static void release(struct swf_node *n)
{
    free(SWF_CONTAINER_OF(n, struct member, node));
    __atomic_fetch_add(&released, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        struct swf_reader *rd = swf_registry_read_lock(reg);
        struct swf_node *n;
        SWF_REGISTRY_FOREACH(reg, n)
        {
            struct member *m = SWF_CONTAINER_OF(n, struct member, node);
            struct object *o = swf_node_object(n);
            if (m->payload[0] != m->id || (o != NULL && (o->canary != CANARY || o->owner != m->id)))
                __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
        }
        swf_registry_read_unlock(rd);
    }
    return NULL;
}

static uint64_t next_id(void)
{
    static uint64_t id;
    return __atomic_add_fetch(&id, 1, __ATOMIC_RELAXED);
}

static void *writer(void *arg)
{
    (void)arg;
    struct member *mine[32] = {0};
    unsigned k = 0;
    uint64_t added = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        unsigned i = k++ % 32;
        if (mine[i] != NULL) {
            if (swf_registry_del(reg, &mine[i]->node, release) != 0)
                __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
            mine[i] = NULL;
        }
        struct member *m = calloc(1, sizeof(*m));
        if (m == NULL)
            continue;
        m->id = next_id();
        for (int j = 0; j < 4; j++)
            m->payload[j] = m->id;
        if (swf_registry_add(reg, &m->node) == 0) {
            mine[i] = m;
            added++;
        } else {
            free(m);
        }
    }
    for (unsigned i = 0; i < 32; i++)
        if (mine[i] != NULL)
            swf_registry_del(reg, &mine[i]->node, release);
    return (void *)(uintptr_t)added;
}

int main(int argc, char **argv)
{
    int ms = 1000, nreaders = 2, nwriters = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ms") == 0)
            ms = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--readers") == 0)
            nreaders = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--writers") == 0)
            nwriters = atoi(argv[i + 1]);
    }
    if (nreaders < 1 || nreaders > 64 || nwriters < 1 || nwriters > 64 || ms < 1)
        return 2;

    struct swf_cache_config ccfg = {.object_size = sizeof(struct object), .name = "tsan"};
    struct swf_registry_config rcfg;
    swf_registry_config_init(&rcfg);
    rcfg.section_bound = 16; /* many sections: pinned cursors meet concurrent dels */
    if (swf_cache_create(&ccfg, &objects) != 0)
        return 1;
    rcfg.cache = objects;
    rcfg.init = init_object;
    if (swf_registry_create(&rcfg, &reg) != 0)
        return 1;

    pthread_t r[64], w[64];
    for (int i = 0; i < nreaders; i++)
        pthread_create(&r[i], NULL, reader, NULL);
    for (int i = 0; i < nwriters; i++)
        pthread_create(&w[i], NULL, writer, NULL);
    unsigned cycles = 0;
    int errs = 0;
    for (int t = 0; t < ms; t += 10, cycles++) {
        errs += swf_registry_activate(reg, NULL) != 0;
        usleep(5000);
        errs += swf_registry_deactivate(reg) != 0;
        usleep(5000);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    uint64_t added = 0;
    for (int i = 0; i < nreaders; i++)
        pthread_join(r[i], NULL);
    for (int i = 0; i < nwriters; i++) {
        void *a;
        pthread_join(w[i], &a);
        added += (uint64_t)(uintptr_t)a;
    }
    swf_registry_synchronize(reg);
    struct swf_registry_stats rs;
    struct swf_cache_stats cs;
    swf_registry_stats(reg, &rs);
    swf_cache_stats(objects, &cs);
    int good = errs == 0 && bad == 0 && released == added && rs.members == 0 && cs.alive == 0;
    printf("tsan consumer: %u activations, %llu members added, %llu released, %llu objects by add "
           "and %llu by sweeps, %llu bad, %llu alive: %s\n",
           cycles, (unsigned long long)added, (unsigned long long)released,
           (unsigned long long)rs.assigned_by_add, (unsigned long long)rs.assigned_by_sweep,
           (unsigned long long)bad, (unsigned long long)cs.alive, good ? "OK" : "FAILED");
    good = swf_registry_destroy(reg) == 0 && good;
    good = swf_cache_destroy(objects) == 0 && good;
    return good ? 0 : 1;
}
