// test/packaging/cxx_inline/a.cc - the first translation unit's copies (pool.hh).
#include "pool.hh"

pool_ops ops_a()
{
    return POOL_OPS;
}
