/*
 * test/members.h - a member type for the sweep tests, on every kind of list the adapters serve,
 * and the object the tests' init writes.
 *
 * A member sits on a CK_LIST, a CK_SLIST, a CK_STAILQ and (as a thread of a group) a nested
 * list, all at once, so one population can be swept through each adapter. Pins are a counter
 * and `linked` a flag, both atomic: what a real program with reference-counted members has.
 */
#ifndef SWF_TEST_MEMBERS_H
#define SWF_TEST_MEMBERS_H

#include <ck_queue.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/sweep.h>

#define PAYLOAD_CANARY 0x5357464c4c4f4b21ull /* "SWFLLOK!" */

struct group;

struct member {
    CK_LIST_ENTRY(member) link;
    CK_SLIST_ENTRY(member) slink;
    CK_STAILQ_ENTRY(member) qlink;
    CK_LIST_ENTRY(member) glink; /* in its group's thread list */
    struct group *parent;
    void *slot;
    uint64_t id;
    uint32_t pins;
    uint32_t linked;
};

CK_LIST_HEAD(member_list, member);
CK_SLIST_HEAD(member_slist, member);
CK_STAILQ_HEAD(member_stailq, member);

struct group {
    CK_LIST_ENTRY(group) link;
    struct member_list threads;
};
CK_LIST_HEAD(group_list, group);

/* What init writes: the canary proves initialisation, owner proves it went to this member. */
struct payload {
    uint64_t canary;
    struct member *owner;
    uint64_t inits;
    char rest[40];
};

static inline void member_pin(struct member *m)
{
    __atomic_fetch_add(&m->pins, 1, __ATOMIC_ACQ_REL);
}
static inline void member_unpin(struct member *m)
{
    __atomic_fetch_sub(&m->pins, 1, __ATOMIC_ACQ_REL);
}
static inline bool member_linked(struct member *m)
{
    return __atomic_load_n(&m->linked, __ATOMIC_ACQUIRE) != 0;
}

SWF_LIST_CK_LIST(ml, member_list, member, link, slot)
SWF_LIST_CK_LIST_PINNED(mlp, member_list, member, link, slot, member_pin, member_unpin,
                        member_linked)
SWF_LIST_CK_SLIST(msl, member_slist, member, slink, slot)
SWF_LIST_CK_SLIST_PINNED(mslp, member_slist, member, slink, slot, member_pin, member_unpin,
                         member_linked)
SWF_LIST_CK_STAILQ(mq, member_stailq, member, qlink, slot)
SWF_LIST_CK_STAILQ_PINNED(mqp, member_stailq, member, qlink, slot, member_pin, member_unpin,
                          member_linked)
SWF_LIST_NESTED_CK_LIST(mn, group_list, group, link, threads, member, glink, parent, slot)

static uint64_t test_inits;

static inline void payload_init(void *obj, void *member, void *arg)
{
    (void)arg;
    struct payload *p = (struct payload *)obj;
    p->canary = PAYLOAD_CANARY ^ (uint64_t)(uintptr_t)member;
    p->owner = (struct member *)member;
    p->inits = __atomic_add_fetch(&test_inits, 1, __ATOMIC_RELAXED);
}

static inline bool payload_ok(const struct payload *p, const struct member *m)
{
    return p->canary == (PAYLOAD_CANARY ^ (uint64_t)(uintptr_t)m) && p->owner == m;
}

/* A population of n members on every list, in the same order; groups of `per_group` members
 * (at least 1) form the nested list. */
struct population {
    struct member *m;
    size_t n;
    struct group *g;
    size_t ngroups;
    struct member_list list;
    struct member_slist slist;
    struct member_stailq stailq;
    struct group_list groups;
    struct swf_array array;
};

static inline void population_init(struct population *p, size_t n, size_t per_group)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    p->m = (struct member *)calloc(n ? n : 1, sizeof(struct member));
    p->ngroups = per_group ? (n + per_group - 1) / per_group : 0;
    p->g = (struct group *)calloc(p->ngroups ? p->ngroups : 1, sizeof(struct group));
    CK_LIST_INIT(&p->list);
    CK_SLIST_INIT(&p->slist);
    CK_STAILQ_INIT(&p->stailq);
    CK_LIST_INIT(&p->groups);
    for (size_t i = p->ngroups; i-- > 0;) {
        CK_LIST_INIT(&p->g[i].threads);
        CK_LIST_INSERT_HEAD(&p->groups, &p->g[i], link);
    }
    for (size_t i = n; i-- > 0;) {
        struct member *m = &p->m[i];
        m->id = i;
        m->linked = 1;
        CK_LIST_INSERT_HEAD(&p->list, m, link);
        CK_SLIST_INSERT_HEAD(&p->slist, m, slink);
        if (per_group) {
            m->parent = &p->g[i / per_group];
            CK_LIST_INSERT_HEAD(&m->parent->threads, m, glink);
        }
    }
    for (size_t i = 0; i < n; i++)
        CK_STAILQ_INSERT_TAIL(&p->stailq, &p->m[i], qlink);
    p->array.base = p->m;
    p->array.count = n;
    p->array.stride = sizeof(struct member);
}

static inline void population_fini(struct population *p)
{
    free(p->m);
    free(p->g);
}

/* Members whose slot is still NULL. */
static inline size_t population_empty(const struct population *p)
{
    size_t empty = 0;
    for (size_t i = 0; i < p->n; i++)
        empty += p->m[i].slot == NULL;
    return empty;
}

/* Give every slot's object back to the cache and clear it (objects the sweep assigned only:
 * pre-set sentinels are told apart by `sentinel`). */
static inline void population_release(struct population *p, struct swf_cache *c, void *sentinel)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->m[i].slot != NULL && p->m[i].slot != sentinel)
            swf_cache_free(c, p->m[i].slot);
        p->m[i].slot = NULL;
    }
}

static inline uint64_t cache_alive(struct swf_cache *c)
{
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    return s.alive;
}

#endif /* SWF_TEST_MEMBERS_H */
