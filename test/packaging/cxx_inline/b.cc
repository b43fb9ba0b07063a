// test/packaging/cxx_inline/b.cc - the second translation unit's copies (pool.hh).
#include "pool.hh"

pool_ops ops_b()
{
    return POOL_OPS;
}
