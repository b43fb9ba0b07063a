// test/packaging/cxx_inline/pool.hh - what a C++ user writes around cache.h's inline path:
// inline functions calling swf_cache_alloc_fast and swf_cache_free_fast, and a class template
// whose members call them. a.cc and b.cc both include it, so each emits its own copies, each in a
// COMDAT group of which the linker keeps one; the per-CPU sequences inlined there (and their
// descriptors) must go with the copy kept.
#ifndef POOL_HH
#define POOL_HH

#include <sweepfill/cache.h>

inline void *get_raw(struct swf_cache *c)
{
    return swf_cache_alloc_fast(c);
}

inline int put_raw(struct swf_cache *c, void *obj)
{
    return swf_cache_free_fast(c, obj);
}

template <typename T> struct pool {
    struct swf_cache *c;
    T *get() { return static_cast<T *>(get_raw(c)); }
    int put(T *obj) { return put_raw(c, obj); }
};

// a.cc and b.cc hand out pointers to their copies, so that each compiler emits them out of line
// (rather than inlining them away) in both; main.cc calls them through these pointers only.
// Built twice: the template's members (the inline functions inlined into them), or, with
// SWF_TEST_FUNCTIONS, the inline functions themselves (g++ inlines the fast path into a copy
// only where that copy is its sole caller in the unit, so each build has one kind).
struct pool_ops {
    long *(pool<long>::*get)();
    int (pool<long>::*put)(long *);
    void *(*get_raw)(struct swf_cache *);
    int (*put_raw)(struct swf_cache *, void *);
};
#ifdef SWF_TEST_FUNCTIONS
#define POOL_OPS pool_ops{nullptr, nullptr, &get_raw, &put_raw}
#else
#define POOL_OPS pool_ops{&pool<long>::get, &pool<long>::put, nullptr, nullptr}
#endif
pool_ops ops_a();
pool_ops ops_b();

#endif
