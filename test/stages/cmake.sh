#!/usr/bin/env bash
# test/stages/cmake.sh SRCROOT - the CMake package, as TAP.
#
# Builds sweepfill (build/stage-cmake) and installs it into a scratch destdir; then configures,
# builds and runs the CMake project test/packaging/cmake/ against it with find_package(sweepfill 0.1
# REQUIRED) and CMAKE_PREFIX_PATH pointing into the destdir (so the package must be
# relocatable): once with sweepfill::sweepfill (the program must need libsweepfill.so.0) and once
# with sweepfill::sweepfill-static (it must not). The program calls ck and pthreads itself, so it
# links only if the targets bring them in. Finally find_package(sweepfill 9.0) and (1.0) must
# fail: the version file accepts only the same major version, no newer than the installed one.
# Skips itself when cmake or meson is missing; fails instead under CI=true.
set -u -o pipefail
src=$(cd "${1:?usage: cmake.sh SRCROOT}" && pwd)
build=$src/build/stage-cmake
# shellcheck source=lib/tap.bash
. "$(dirname "$0")/lib/tap.bash"
require_tools "cmake, meson, ninja-build, binutils" cmake meson ninja readelf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
show() { tail -n 25 "$@" | sed 's/^/# /'; }

build_and_install "$build" "$src" "$tmp/root" "$tmp" -Dbuildtype=release -Dtests=false \
  -Dexamples=false -Dbench=disabled
r=$?
ok $r "sweepfill builds and installs into a scratch destdir"
[ $r = 0 ] || show "$tmp/setup.log" "$tmp/build.log" "$tmp/install.log"

config=$(find "$tmp/root" -name sweepfillConfig.cmake | head -n 1)
version_file=$(find "$tmp/root" -name sweepfillConfigVersion.cmake | head -n 1)
[ -n "$config" ] && [ -n "$version_file" ] && [ "$(dirname "$config")" = "$(dirname "$version_file")" ]
ok $? "sweepfillConfig.cmake and sweepfillConfigVersion.cmake are installed (${config#"$tmp/root"})"
case $config in
*/lib/*/cmake/sweepfill/sweepfillConfig.cmake | */lib/cmake/sweepfill/sweepfillConfig.cmake) r=0 ;;
*) r=1 ;;
esac
ok $r "they are in <libdir>/cmake/sweepfill/, where find_package looks"
prefix=$(sed -n 's/^prefix=//p' "$(find "$tmp/root" -name sweepfill.pc | head -n 1)")
root=$tmp/root$prefix

# consumer NAME EXTRA-CMAKE-ARGS...: configure, build and run test/packaging/cmake as NAME.
consumer() {
  local name=$1 dir=$tmp/$1
  shift
  cmake -S "$src/test/packaging/cmake" -B "$dir" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_BUILD_TYPE=Release \
    "$@" >"$tmp/$name.configure.log" 2>&1
  r=$?
  ok $r "$name: cmake finds sweepfill with find_package(sweepfill 0.1 REQUIRED)"
  [ $r = 0 ] || { show "$tmp/$name.configure.log"; return 1; }
  grep -q "Found sweepfill $(sed -n "s/^Version: //p" "$(find "$tmp/root" -name sweepfill.pc)")" \
    "$tmp/$name.configure.log"
  ok $? "$name: it reports the installed version ($(grep -o 'Found sweepfill [^:]*' "$tmp/$name.configure.log"))"
  cmake --build "$dir" >"$tmp/$name.build.log" 2>&1
  r=$?
  ok $r "$name: the consumer builds (it calls ck and pthreads through the target's link interface)"
  [ $r = 0 ] || { show "$tmp/$name.build.log"; return 1; }
  out=$("$dir/consumer" 2>&1)
  ok $? "$name: the consumer runs ($out)"
}

consumer shared
if [ -x "$tmp/shared/consumer" ]; then
  needed=$(readelf -d "$tmp/shared/consumer" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  [[ " $needed" == *" libsweepfill.so.0 "* ]]
  ok $? "shared: the consumer needs libsweepfill.so.0 (needs: $needed)"
else
  ok 1 "shared: the consumer needs libsweepfill.so.0 (it was not built)"
fi
consumer static -DSWEEPFILL_LINK_STATIC=ON
if [ -x "$tmp/static/consumer" ]; then
  needed=$(readelf -d "$tmp/static/consumer" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  [[ " $needed" != *libsweepfill* ]]
  ok $? "static: the consumer does not need libsweepfill (needs: $needed)"
else
  ok 1 "static: the consumer does not need libsweepfill (it was not built)"
fi

# The version file: same major version, not newer than installed.
probe() { # version expected(0 found, 1 refused)
  local r res
  cmake -S "$src/test/packaging/cmake" -B "$tmp/probe" -DCMAKE_PREFIX_PATH="$root" \
    -DSWEEPFILL_PROBE_VERSION="$1" >"$tmp/probe.log" 2>&1
  r=$?
  if [ "$2" = 0 ]; then
    res=$r
    ok $res "find_package(sweepfill $1 REQUIRED) succeeds"
  else
    [ $r != 0 ] && grep -q "compatible with requested version \"$1\"" "$tmp/probe.log"
    res=$?
    ok $res "find_package(sweepfill $1 REQUIRED) fails: no compatible version"
  fi
  [ $res = 0 ] || show "$tmp/probe.log"
}
probe 0.1.0 0
probe '0.1...<1.0' 0
probe 9.0 1
probe 1.0 1
probe 0.99 1

finish
