/*
 * test/common/members.h - a member type for the sweep tests, on every kind of list the adapters
 * serve, and the object the tests' init writes.
 *
 * A member sits on a CK_LIST, a CK_SLIST, a CK_STAILQ, (as a thread of a group) a nested list,
 * the four <sys/queue.h> lists, a bucket of a hash table (a bucket array of CK_LISTs), a ck_hs,
 * and, when liburcu is there (SWF_TEST_URCU), a cds_list and a cds_hlist, all at once, so one
 * population can be swept through each adapter: `adapters[]` below lists them. Hand-written pins
 * are a counter and `linked` a flag, both atomic: what a real program with reference-counted
 * members has; the _AUTO adapters use the library's struct swf_pin instead.
 */
#ifndef SWF_TEST_MEMBERS_H
#define SWF_TEST_MEMBERS_H

#include <ck_hs.h>
#include <ck_queue.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef SWF_TEST_URCU /* the flavour: SWF_TEST_URCU_QSBR, _BP, _MB, _SIGNAL, else memb */
#if defined(SWF_TEST_URCU_QSBR)
#include <urcu/urcu-qsbr.h>
#elif defined(SWF_TEST_URCU_BP)
#include <urcu/urcu-bp.h>
#elif defined(SWF_TEST_URCU_MB)
#include <urcu/urcu-mb.h>
#elif defined(SWF_TEST_URCU_SIGNAL)
#include <urcu/urcu-signal.h>
#else
#include <urcu/urcu-memb.h>
#endif
#include <sweepfill/list_urcu.h>
#endif
#include <sweepfill/list_hash.h>
#include <sweepfill/list_sysqueue.h>
#include <sweepfill/sweep.h>

#define PAYLOAD_CANARY 0x5357464c4c4f4b21ull /* "SWFLLOK!" */

struct group;

struct member {
    CK_LIST_ENTRY(member) link;
    CK_SLIST_ENTRY(member) slink;
    CK_STAILQ_ENTRY(member) qlink;
    CK_LIST_ENTRY(member) glink; /* in its group's thread list */
    CK_LIST_ENTRY(member) blink; /* in its hash bucket */
    LIST_ENTRY(member) sys_link;
    SLIST_ENTRY(member) sys_slink;
    STAILQ_ENTRY(member) sys_qlink;
    TAILQ_ENTRY(member) sys_tlink;
#ifdef SWF_TEST_URCU
    struct cds_list_head cds;
    struct cds_hlist_node cdsh;
#endif
    struct group *parent;
    void *slot;
    uint64_t id;
    uint32_t pins;
    uint32_t linked;
    struct swf_pin pin; /* the library's, for the _AUTO adapters */
};

CK_LIST_HEAD(member_list, member);
CK_SLIST_HEAD(member_slist, member);
CK_STAILQ_HEAD(member_stailq, member);
LIST_HEAD(member_sys_list, member);
SLIST_HEAD(member_sys_slist, member);
STAILQ_HEAD(member_sys_stailq, member);
TAILQ_HEAD(member_sys_tailq, member);

/* A hash table as a bucket array of CK_LISTs: members hash by id; gen counts resizes. */
struct member_table {
    struct member_list *buckets;
    size_t nbuckets;
    uint64_t gen;
};

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
SWF_LIST_CK_LIST_AUTO(mla, member_list, member, link, slot, pin)
SWF_LIST_CK_SLIST_AUTO(msla, member_slist, member, slink, slot, pin)
SWF_LIST_CK_STAILQ_AUTO(mqa, member_stailq, member, qlink, slot, pin)
SWF_LIST_SYS_LIST(sysl, member_sys_list, member, sys_link, slot)
SWF_LIST_SYS_LIST_AUTO(sysla, member_sys_list, member, sys_link, slot, pin)
SWF_LIST_SYS_SLIST_AUTO(syssa, member_sys_slist, member, sys_slink, slot, pin)
SWF_LIST_SYS_STAILQ_AUTO(sysqa, member_sys_stailq, member, sys_qlink, slot, pin)
SWF_LIST_SYS_TAILQ(syst, member_sys_tailq, member, sys_tlink, slot)
SWF_LIST_SYS_TAILQ_AUTO(systa, member_sys_tailq, member, sys_tlink, slot, pin)
SWF_LIST_BUCKETS_CK_LIST_AUTO(mbk, member_table, buckets, nbuckets, gen, member_list, member, blink,
                              slot, pin)
SWF_LIST_CK_HS_AUTO(mhs, member, slot, pin)
#ifdef SWF_TEST_URCU
SWF_LIST_CDS_LIST(cdsl, member, cds, slot)
SWF_LIST_CDS_LIST_AUTO(cdsla, member, cds, slot, pin)
SWF_LIST_CDS_HLIST_AUTO(cdsha, member, cdsh, slot, pin)
#endif

/* ck_hs keys are the members themselves, hashed by id. */
static inline unsigned long member_hs_hash(const void *key, unsigned long seed)
{
    uint64_t x = ((const struct member *)key)->id ^ seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return (unsigned long)(x ^ (x >> 33));
}

static inline bool member_hs_compare(const void *a, const void *b)
{
    return a == b;
}

static inline void *member_hs_malloc(size_t n)
{
    swf_ck_hs_changed(); /* every map is allocated here: list_hash.h's resize detection */
    return malloc(n);
}

static inline void member_hs_free(void *p, size_t n, bool defer)
{
    (void)n, (void)defer; /* single-threaded users: no reader can hold the map */
    free(p);
}

static struct ck_malloc member_hs_alloc = {member_hs_malloc, NULL, member_hs_free};

static inline size_t member_bucket(const struct member_table *t, const struct member *m)
{
    return (size_t)(member_hs_hash(m, 0) % t->nbuckets);
}

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
    struct member_sys_list sys_list;
    struct member_sys_slist sys_slist;
    struct member_sys_stailq sys_stailq;
    struct member_sys_tailq sys_tailq;
    struct member_table table;
    struct swf_bucket_walk table_walk; /* a sweep's walk state for the bucket array */
    ck_hs_t hs;
    struct swf_hs_walk hs_walk; /* and for the ck_hs */
#ifdef SWF_TEST_URCU
    struct cds_list_head cds;
    struct cds_hlist_head cdsh;
#endif
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
    /* The same order on the <sys/queue.h> lists and the RCU lists. */
    LIST_INIT(&p->sys_list);
    SLIST_INIT(&p->sys_slist);
    STAILQ_INIT(&p->sys_stailq);
    TAILQ_INIT(&p->sys_tailq);
#ifdef SWF_TEST_URCU
    CDS_INIT_LIST_HEAD(&p->cds);
    CDS_INIT_HLIST_HEAD(&p->cdsh);
#endif
    for (size_t i = n; i-- > 0;) {
        LIST_INSERT_HEAD(&p->sys_list, &p->m[i], sys_link);
        SLIST_INSERT_HEAD(&p->sys_slist, &p->m[i], sys_slink);
        STAILQ_INSERT_HEAD(&p->sys_stailq, &p->m[i], sys_qlink);
        TAILQ_INSERT_HEAD(&p->sys_tailq, &p->m[i], sys_tlink);
#ifdef SWF_TEST_URCU
        cds_list_add(&p->m[i].cds, &p->cds);
        cds_hlist_add_head(&p->m[i].cdsh, &p->cdsh);
#endif
    }
    /* A bucket array of about 4 members per bucket, and a ck_hs. */
    p->table.nbuckets = n / 4 + 1;
    p->table.buckets = (struct member_list *)calloc(p->table.nbuckets, sizeof(struct member_list));
    for (size_t b = 0; b < p->table.nbuckets; b++)
        CK_LIST_INIT(&p->table.buckets[b]);
    for (size_t i = 0; i < n; i++)
        CK_LIST_INSERT_HEAD(&p->table.buckets[member_bucket(&p->table, &p->m[i])], &p->m[i], blink);
    ck_hs_init(&p->hs, CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT, member_hs_hash, member_hs_compare,
               &member_hs_alloc, n ? n : 1, 42);
    for (size_t i = 0; i < n; i++)
        ck_hs_put(&p->hs, CK_HS_HASH(&p->hs, member_hs_hash, &p->m[i]), &p->m[i]);
    p->array.base = p->m;
    p->array.count = n;
    p->array.stride = sizeof(struct member);
}

static inline void population_fini(struct population *p)
{
    ck_hs_destroy(&p->hs);
    free(p->table.buckets);
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

/*
 * Every adapter over a population, for the tests that run the same body over each: its name,
 * whether it can pin, the list to hand a sweep, and (typed) a sweep generated for it with
 * SWF_SWEEP_DEFINE, or NULL for swf_sweep on its ops table.
 */
typedef int adapter_sweep_fn(const struct swf_sweep_config *cfg, struct swf_sweep_stats *stats);

struct adapter {
    const char *name;
    bool pins;
    struct swf_list (*list)(struct population *p);
    adapter_sweep_fn *typed;
};

#define ADAPTER_LIST_FN_(fn, expr)                         \
    static inline struct swf_list fn(struct population *p) \
    {                                                      \
        return expr;                                       \
    }
ADAPTER_LIST_FN_(ad_array, swf_list_array(&p->array, offsetof(struct member, slot)))
ADAPTER_LIST_FN_(ad_ml, ml_list(&p->list))
ADAPTER_LIST_FN_(ad_mlp, mlp_list(&p->list))
ADAPTER_LIST_FN_(ad_mla, mla_list(&p->list))
ADAPTER_LIST_FN_(ad_msl, msl_list(&p->slist))
ADAPTER_LIST_FN_(ad_mslp, mslp_list(&p->slist))
ADAPTER_LIST_FN_(ad_msla, msla_list(&p->slist))
ADAPTER_LIST_FN_(ad_mq, mq_list(&p->stailq))
ADAPTER_LIST_FN_(ad_mqp, mqp_list(&p->stailq))
ADAPTER_LIST_FN_(ad_mqa, mqa_list(&p->stailq))
ADAPTER_LIST_FN_(ad_mn, mn_list(&p->groups))
ADAPTER_LIST_FN_(ad_sysl, sysl_list(&p->sys_list))
ADAPTER_LIST_FN_(ad_sysla, sysla_list(&p->sys_list))
ADAPTER_LIST_FN_(ad_syssa, syssa_list(&p->sys_slist))
ADAPTER_LIST_FN_(ad_sysqa, sysqa_list(&p->sys_stailq))
ADAPTER_LIST_FN_(ad_syst, syst_list(&p->sys_tailq))
ADAPTER_LIST_FN_(ad_systa, systa_list(&p->sys_tailq))
ADAPTER_LIST_FN_(ad_mbk, mbk_list(&p->table_walk, &p->table))
ADAPTER_LIST_FN_(ad_mhs, mhs_list(&p->hs_walk, &p->hs))
#ifdef SWF_TEST_URCU
ADAPTER_LIST_FN_(ad_cdsl, cdsl_list(&p->cds))
ADAPTER_LIST_FN_(ad_cdsla, cdsla_list(&p->cds))
ADAPTER_LIST_FN_(ad_cdsha, cdsha_list(&p->cdsh))
#endif

SWF_SWEEP_DEFINE(typed_mlp, mlp, payload_init)
SWF_SWEEP_DEFINE(typed_mn, mn, payload_init)
SWF_SWEEP_DEFINE(typed_mla, mla, payload_init)
SWF_SWEEP_DEFINE(typed_systa, systa, payload_init)
SWF_SWEEP_DEFINE(typed_mbk, mbk, payload_init)
SWF_SWEEP_DEFINE(typed_mhs, mhs, payload_init)
#ifdef SWF_TEST_URCU
SWF_SWEEP_DEFINE(typed_cdsla, cdsla, payload_init)
SWF_SWEEP_DEFINE(typed_cdsha, cdsha, payload_init)
#endif

__attribute__((unused)) static const struct adapter adapters[] = {
    {"array", true, ad_array, NULL},
    {"CK_LIST", false, ad_ml, NULL},
    {"CK_LIST pinned", true, ad_mlp, NULL},
    {"CK_LIST_AUTO", true, ad_mla, NULL},
    {"CK_SLIST", false, ad_msl, NULL},
    {"CK_SLIST pinned", true, ad_mslp, NULL},
    {"CK_SLIST_AUTO", true, ad_msla, NULL},
    {"CK_STAILQ", false, ad_mq, NULL},
    {"CK_STAILQ pinned", true, ad_mqp, NULL},
    {"CK_STAILQ_AUTO", true, ad_mqa, NULL},
    {"nested", false, ad_mn, NULL},
    {"sys LIST", false, ad_sysl, NULL},
    {"sys LIST_AUTO", true, ad_sysla, NULL},
    {"sys SLIST_AUTO", true, ad_syssa, NULL},
    {"sys STAILQ_AUTO", true, ad_sysqa, NULL},
    {"sys TAILQ", false, ad_syst, NULL},
    {"sys TAILQ_AUTO", true, ad_systa, NULL},
    {"buckets CK_LIST_AUTO", true, ad_mbk, NULL},
    {"ck_hs AUTO", true, ad_mhs, NULL},
    {"typed CK_LIST pinned", true, ad_mlp, typed_mlp},
    {"typed nested", false, ad_mn, typed_mn},
    {"typed CK_LIST_AUTO", true, ad_mla, typed_mla},
    {"typed sys TAILQ_AUTO", true, ad_systa, typed_systa},
    {"typed buckets", true, ad_mbk, typed_mbk},
    {"typed ck_hs", true, ad_mhs, typed_mhs},
#ifdef SWF_TEST_URCU
    {"cds_list", false, ad_cdsl, NULL},
    {"cds_list_AUTO", true, ad_cdsla, NULL},
    {"cds_hlist_AUTO", true, ad_cdsha, NULL},
    {"typed cds_list_AUTO", true, ad_cdsla, typed_cdsla},
    {"typed cds_hlist_AUTO", true, ad_cdsha, typed_cdsha},
#endif
};
#define ADAPTER_COUNT (sizeof(adapters) / sizeof(adapters[0]))

/* Run a sweep through an adapter: its generated sweep if it has one, else swf_sweep. */
static inline int adapter_sweep(const struct adapter *a, const struct swf_sweep_config *cfg,
                                struct swf_sweep_stats *st)
{
    return a->typed ? a->typed(cfg, st) : swf_sweep(cfg, st);
}

#endif /* SWF_TEST_MEMBERS_H */
