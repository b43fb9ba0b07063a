// test/packaging/cxx_inline/main.cc - allocate and free through the copies of both units
// (pool.hh), of which the link kept one of each.
#include <cstdio>
#include <cstring>

#include "pool.hh"

int main()
{
    struct swf_cache_config cfg;
    std::memset(&cfg, 0, sizeof(cfg));
    cfg.name = "cxx_inline";
    cfg.object_size = sizeof(long);
    cfg.prefill = 2000; // slack: a thread that moves CPUs leaves a magazine behind
    struct swf_cache *c;
    if (swf_cache_create(&cfg, &c) != 0)
        return 1;
    pool<long> p{c};
    long *objs[800];
    int got = 0, bad = 0;
    const pool_ops units[2] = {ops_a(), ops_b()};
    for (const pool_ops &ops : units) {
        for (int i = 0; i < 800; i++) {
            objs[i] = ops.get ? (p.*ops.get)() : static_cast<long *>(ops.get_raw(c));
            got += objs[i] != nullptr;
            if (objs[i] != nullptr)
                *objs[i] = i;
        }
        for (int i = 0; i < 800; i++) {
            bad += objs[i] != nullptr && *objs[i] != i;
            bad += (ops.put ? (p.*ops.put)(objs[i]) : ops.put_raw(c, objs[i])) != 0;
        }
    }
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    int destroyed = swf_cache_destroy(c);
    std::printf("%d objects through both units' copies, %d bad, %llu alive, destroy %d\n", got, bad,
                static_cast<unsigned long long>(s.alive), destroyed);
    return got == 1600 && bad == 0 && s.alive == 0 && destroyed == 0 ? 0 : 1;
}
