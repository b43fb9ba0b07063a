#!/usr/bin/env bash
# abi/update.sh [--accept-break] - record the library's ABI as it is now, deliberately.
#
# Run it after a compatible API addition (new functions, see include/sweepfill/version.h), once
# the version in meson.build has been bumped: it builds the library as test/stages/abi.sh does
# (build/abi-update), rewrites the baseline abi/libsweepfill.so.0.abi, and regenerates
# debian/libsweepfill0.symbols with dpkg-gensymbols, so that the new symbols carry the new
# version. It prints what changed. It refuses to record an incompatible change (a removed
# function, a public struct changed) unless given --accept-break: only before a release, or
# together with a new soname.
set -u -o pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit 1
# shellcheck source=abi/abi.bash
. abi/abi.bash
accept_break=0
case ${1:-} in
--accept-break) accept_break=1 ;;
"") ;;
*) echo "usage: abi/update.sh [--accept-break]" >&2; exit 2 ;;
esac
for tool in abidw abidiff meson ninja; do
  command -v "$tool" >/dev/null || { echo "abi/update.sh: $tool is missing (Debian: abigail-tools, meson, ninja-build)" >&2; exit 1; }
done

build=build/abi-update
mkdir -p build
swf_abi_build "$src" "$build" "$build.log" || { tail -n 30 "$build.log" >&2; exit 1; }
version=$(meson introspect --projectinfo "$build" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
new=$(mktemp)
trap 'rm -f "$new"' EXIT
swf_abi_dump "$build/lib/libsweepfill.so" include/sweepfill "$new" || exit 1

if [ -f "$swf_abi_baseline" ]; then
  echo "== changes against the recorded baseline"
  report=$(abidiff --headers-dir1 include/sweepfill --headers-dir2 include/sweepfill \
    "$swf_abi_baseline" "$new")
  echo "${report:-none}"
  swf_abi_check "$src" "$swf_abi_baseline" include/sweepfill "$new" include/sweepfill >/dev/null
  status=$?
  if [ $status != 0 ] && [ $accept_break = 0 ]; then
    echo "abi/update.sh: that is not a compatible change (abidiff status $status); the baseline" >&2
    echo "is unchanged. If the break is deliberate (before a release, or with a new soname)," >&2
    echo "run abi/update.sh --accept-break." >&2
    exit 1
  fi
fi
cat "$new" >"$swf_abi_baseline"
echo "== wrote $swf_abi_baseline ($version)"

if command -v dpkg-gensymbols >/dev/null; then
  echo "== debian/libsweepfill0.symbols (new symbols get version $version)"
  dpkg-gensymbols -plibsweepfill0 -v"$version" -e"$build/lib/libsweepfill.so.$version" \
    -Idebian/libsweepfill0.symbols -Odebian/libsweepfill0.symbols
else
  echo "abi/update.sh: dpkg-gensymbols is missing (Debian: dpkg-dev); symbols file not updated" >&2
  exit 1
fi
git --no-pager diff --stat -- "$swf_abi_baseline" debian/libsweepfill0.symbols 2>/dev/null || true
