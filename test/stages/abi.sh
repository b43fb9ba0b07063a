#!/usr/bin/env bash
# test/stages/abi.sh SRCROOT - versions and ABI, as TAP.
#
# Builds the library as abi/abi.bash says (release with debug information, build/stage-abi) and
#   - checks its soname (libsweepfill.so.0) and that it exports only versioned swf_ symbols;
#   - compares it with the recorded baseline abi/libsweepfill.so.0.abi using abidiff with the
#     public headers: any ABI change or incompatible change fails (added functions do not);
#   - shows that the comparison catches what it must, on a throwaway copy of the tree in a
#     temporary directory: a copy with one more exported function passes; a copy with a field
#     added to struct swf_sweep_stats fails with an ABI change; a copy whose version script hides
#     swf_debug_checks fails with an incompatible change (a removed function);
#   - shows that meson refuses to configure when include/sweepfill/version.h disagrees with the
#     project version.
# Skips itself when abigail-tools (abidw, abidiff) or meson is missing; fails instead under
# CI=true.
set -u -o pipefail
src=$(cd "${1:?usage: abi.sh SRCROOT}" && pwd)
build=$src/build/stage-abi
# shellcheck source=lib/tap.bash
. "$(dirname "$0")/lib/tap.bash"
show() { tail -n "${2:-25}" "$1" | sed 's/^/# /'; }
require_tools "abigail-tools, meson, ninja-build, binutils" abidw abidiff meson ninja readelf nm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=abi/abi.bash
. "$src/abi/abi.bash"
hdrs=$src/include/sweepfill
baseline=$src/$swf_abi_baseline

swf_abi_build "$src" "$build" "$tmp/build.log"
r=$?
ok $r "the library builds as the baseline was built (${swf_abi_meson_options[*]})"
[ $r = 0 ] || { show "$tmp/build.log"; finish; }
so=$build/lib/libsweepfill.so
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libsweepfill.so.0 ]
ok $? "the soname is libsweepfill.so.0 ($soname)"
bad=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v -e '^swf_[a-z0-9_]*@@SWEEPFILL_0$' -e '^SWEEPFILL_0$' || true)
[ -z "$bad" ]
ok $? "it exports only swf_ symbols, each versioned SWEEPFILL_0${bad:+ (also: $bad)}"

[ -f "$baseline" ] && grep -q "soname='libsweepfill.so.0'" "$baseline"
ok $? "the baseline $swf_abi_baseline exists and describes libsweepfill.so.0"
swf_abi_check "$src" "$baseline" "$hdrs" "$so" "$hdrs" >"$tmp/check.txt" 2>&1
r=$?
ok $r "no ABI change or incompatible change against the baseline (abidiff status $r)"
if [ $r != 0 ]; then
  show "$tmp/check.txt" 60
  echo "# if the change is deliberate and compatible, abi/update.sh records it"
fi
added=$(abidiff --headers-dir1 "$hdrs" --headers-dir2 "$hdrs" "$baseline" "$so" 2>/dev/null |
  sed -n "s/^  \[A\] '\(.*\)'.*/\1/p")
# shellcheck disable=SC2001
[ -z "$added" ] || sed 's|^|# added since the baseline (compatible; record with abi/update.sh): |' <<<"$added"

# A throwaway copy of the tree, changed three ways; the real tree is not touched.
copy=$tmp/copy
mkdir -p "$copy"
tar -C "$src" --exclude=./build --exclude=./.git --exclude=./subprojects --exclude=./bench/out \
  -cf - . | tar -C "$copy" -xf -
for f in lib/base/version.c lib/sweepfill.map include/sweepfill/sweep.h include/sweepfill/version.h; do
  cp "$copy/$f" "$copy/$f.orig"
done
restore() { for f in "$@"; do cp "$copy/$f.orig" "$copy/$f"; done; }
# judge WHAT: build the copy and compare it with the baseline; sets $status and $tmp/judge.txt.
judge() {
  if ! swf_abi_build "$copy" "$copy/build" "$tmp/copy-build.log"; then
    show "$tmp/copy-build.log"
    status=255
    return
  fi
  swf_abi_check "$src" "$baseline" "$hdrs" "$copy/build/lib/libsweepfill.so" \
    "$copy/include/sweepfill" >"$tmp/judge.txt" 2>&1
  status=$?
}

# 1. One more exported function: compatible.
printf '\nSWF_API int swf_abi_probe_added(void);\n\nint swf_abi_probe_added(void)\n{\n    return 1;\n}\n' \
  >>"$copy/lib/base/version.c"
judge
[ $status = 0 ]
ok $? "a copy that adds an exported function passes the check (abidiff status $status)"
[ $status = 0 ] || show "$tmp/judge.txt"
abidiff --headers-dir1 "$hdrs" --headers-dir2 "$copy/include/sweepfill" "$baseline" \
  "$copy/build/lib/libsweepfill.so" >"$tmp/added.txt" 2>&1
grep -q "\[A\] 'function int swf_abi_probe_added()'" "$tmp/added.txt"
ok $? "abidiff still reports the added function to the reader"

# 2. A field appended to a public struct the caller passes by pointer: an ABI change.
restore lib/base/version.c
awk '/^struct swf_sweep_stats \{/ { inside = 1 }
     inside && /^\};/ { print "    uint64_t abi_probe_field;"; inside = 0 }
     { print }' "$copy/include/sweepfill/sweep.h.orig" >"$copy/include/sweepfill/sweep.h"
grep -q 'abi_probe_field' "$copy/include/sweepfill/sweep.h"
ok $? "the copy's struct swf_sweep_stats gets one more field"
judge
[ $status != 255 ] && [ $((status & 4)) != 0 ] &&
  grep -q "struct swf_sweep_stats" "$tmp/judge.txt" && grep -q "type size changed" "$tmp/judge.txt"
ok $? "abidiff reports the struct's size change as an ABI change and the check fails (status $status)"
grep -E "type size changed|data member insertion|abi_probe_field" "$tmp/judge.txt" | head -n 3 | sed 's/^ */# /'

# 3. A function removed from the exports: an incompatible change.
restore include/sweepfill/sweep.h
sed 's/^local:$/local:\n    swf_debug_checks;/' "$copy/lib/sweepfill.map.orig" >"$copy/lib/sweepfill.map"
judge
[ $status != 255 ] && [ $((status & 8)) != 0 ] &&
  grep -q "Removed function" "$tmp/judge.txt" && grep -q "swf_debug_checks" "$tmp/judge.txt"
ok $? "abidiff reports a removed function as an incompatible change and the check fails (status $status)"

# The version numbers come from meson's project version.
restore lib/sweepfill.map
sed 's/^#define SWF_VERSION_PATCH .*/#define SWF_VERSION_PATCH 99/' \
  "$copy/include/sweepfill/version.h.orig" >"$copy/include/sweepfill/version.h"
meson setup "$copy/build-version" "$copy" "${swf_abi_meson_options[@]}" >"$tmp/version.log" 2>&1
r=$?
[ $r != 0 ] && grep -q "version.h has SWF_VERSION_PATCH 99 but the project version is" "$tmp/version.log"
ok $? "meson setup refuses a version.h that disagrees with the project version"
restore include/sweepfill/version.h

finish
