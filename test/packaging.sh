#!/usr/bin/env bash
# Packaging tests, as TAP: install the build to a scratch prefix and build a consumer with plain
# `cc $(pkg-config --cflags --libs sweepfill)`; then build a parent Meson project that uses the
# source tree as a subproject. Arguments: source root, build root.
set -u
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >"$tmp/install.log" 2>&1
ok $? "meson install into a scratch destdir"
pc=$(find "$tmp/root" -name sweepfill.pc | head -n 1)
[ -n "$pc" ]; ok $? "sweepfill.pc is installed (${pc#$tmp/root})"
hdrs=$(find "$tmp/root" -path '*/include/sweepfill/cache.h' | head -n 1)
[ -n "$hdrs" ]; ok $? "headers are installed under include/sweepfill/"
pcdir=$(dirname "${pc:-/nonexistent}")
# The .pc names the configured prefix; point it at the scratch copy.
prefix=$(sed -n 's/^prefix=//p' "${pc:-/dev/null}")
pkgconf() { PKG_CONFIG_PATH=$pcdir pkg-config --define-variable=prefix="$tmp/root$prefix" "$@"; }
flags=$(pkgconf --cflags --libs sweepfill 2>"$tmp/pc.err")
ok $? "pkg-config --cflags --libs sweepfill: $flags"
libdir=$(pkgconf --variable=libdir sweepfill)
# shellcheck disable=SC2086
cc -std=c11 -o "$tmp/consumer" "$src/test/consumer/consumer.c" $flags >"$tmp/cc.log" 2>&1
ok $? "cc consumer.c \$(pkg-config --cflags --libs sweepfill)"
out=$(LD_LIBRARY_PATH=$libdir "$tmp/consumer" 2>&1)
ok $? "the consumer runs against the installed shared library ($out)"
# Besides the swf_ symbols, the version script's node SWEEPFILL_0 is defined (an absolute symbol).
symbols=$(nm -D --defined-only "$libdir/libsweepfill.so" | awk '{print $3}' | grep -vx 'SWEEPFILL_0')
exported=$(echo "$symbols" | grep -v '^swf_' || true)
[ -n "$symbols" ] && [ -z "$exported" ]
ok $? "the shared library exports only swf_ symbols ($(echo "$symbols" | wc -l) of them)${exported:+; also: $exported}"
unversioned=$(echo "$symbols" | grep -v '@@SWEEPFILL_0$' || true)
[ -n "$symbols" ] && [ -z "$unversioned" ]
ok $? "every exported symbol has the version SWEEPFILL_0 (lib/sweepfill.map)${unversioned:+; not: $unversioned}"

mkdir -p "$tmp/parent/subprojects"
cp "$src/test/subproject/meson.build" "$src/test/subproject/parent.c" "$tmp/parent/"
ln -s "$(cd "$src" && pwd)" "$tmp/parent/subprojects/sweepfill"
(cd "$tmp/parent" && meson setup build >"$tmp/sub-setup.log" 2>&1 && ninja -C build >"$tmp/sub-build.log" 2>&1)
r=$?; ok $r "a parent Meson project builds with sweepfill as a subproject"
[ $r = 0 ] || tail -n 20 "$tmp/sub-setup.log" "$tmp/sub-build.log" | sed 's/^/# /'
out=$("$tmp/parent/build/parent" 2>&1)
ok $? "the parent program runs ($out)"
echo "1..$n"
exit $failed
