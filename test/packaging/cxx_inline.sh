#!/usr/bin/env bash
# cache.h's inline path in C++ code a user writes: inline functions, or a class template's
# members, wrapping swf_cache_alloc_fast and swf_cache_free_fast, emitted in two translation
# units (cxx_inline/: a.cc and b.cc each hand out pointers to their copies, main.cc calls them),
# compiled at -O2 with g++ and with clang++; the program must link (each restartable sequence's
# descriptor is in the COMDAT group of the copy it describes: the linker keeps or drops the two
# together) and run. TAP. Arguments: the source root, then the shared library to link. A
# compiler that is not installed is skipped, with its name; under CI=true it fails.
set -u
src=$1 lib=$(realpath "$2")
dir=$src/test/packaging/cxx_inline
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
skip() {
  if [ "${CI:-}" = true ]; then ok 1 "$1: $2 (CI=true)"; else n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; fi
}
ck_flags=$(pkg-config --cflags ck 2>/dev/null)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for cxx in g++ clang++; do
  if ! command -v "$cxx" >/dev/null; then
    skip "two C++ units inlining the fast path under $cxx" "$cxx is not installed"
    continue
  fi
  for kind in template functions; do
    what="inline functions wrapping swf_cache_alloc_fast/free_fast"
    def=-DSWF_TEST_FUNCTIONS
    if [ $kind = template ]; then
      what="a class template's members wrapping swf_cache_alloc_fast/free_fast"
      def=
    fi
    # shellcheck disable=SC2086
    "$cxx" -O2 -Wall -Wextra $def -I"$src/include" $ck_flags -o "$tmp/prog" "$dir/a.cc" \
      "$dir/b.cc" "$dir/main.cc" "$lib" -Wl,-rpath,"$(dirname "$lib")" >"$tmp/log" 2>&1
    r=$?
    ok $r "$cxx -O2: two units, each with its copies of $what, link into one program"
    [ $r = 0 ] || sed 's/^/# /' "$tmp/log" | head -n 20
    : >"$tmp/run"
    [ $r = 0 ] && "$tmp/prog" >"$tmp/run" 2>&1
    ok $? "$cxx -O2, $what: the program runs through both units' copies ($(tail -n 1 "$tmp/run"))"
  done
done
echo "1..$n"
exit $failed
