#!/usr/bin/env bash
# Packaging tests, as TAP. An installed copy: install the build to a scratch prefix, build a
# consumer and examples/shadow_stack.c with plain `cc ... $(pkg-config --cflags --libs sweepfill)`,
# and link the consumer statically with README's recipe. A Meson subproject: build a parent
# project (test/packaging/subproject/) that uses the source tree as a subproject, with
# default_library=shared, with default_library=static and with dependency(..., static: true),
# and check what each links (readelf -d) and that none of them gets sweepfill's tests, examples,
# benchmarks or a C++ compiler. Arguments: source root, build root.
set -u
src=$(cd "$1" && pwd) build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
show() { tail -n 20 "$@" | sed 's/^/# /'; }
# The shared libraries a program needs, from its dynamic section: "libc.so.6 libck.so.0 ...".
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' '; }

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >"$tmp/install.log" 2>&1
ok $? "meson install into a scratch destdir"
pc=$(find "$tmp/root" -name sweepfill.pc | head -n 1)
[ -n "$pc" ]; ok $? "sweepfill.pc is installed (${pc#"$tmp/root"})"
hdrs=$(find "$tmp/root" -path '*/include/sweepfill/cache.h' | head -n 1)
[ -n "$hdrs" ]; ok $? "headers are installed under include/sweepfill/"
pcdir=$(dirname "${pc:-/nonexistent}")
# The .pc names the configured prefix; point it at the scratch copy.
prefix=$(sed -n 's/^prefix=//p' "${pc:-/dev/null}")
pkgconf() { PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} pkg-config --define-variable=prefix="$tmp/root$prefix" "$@"; }
flags=$(pkgconf --cflags --libs sweepfill 2>"$tmp/pc.err")
ok $? "pkg-config --cflags --libs sweepfill: $flags"
libdir=$(pkgconf --variable=libdir sweepfill)
[ -f "$libdir/libsweepfill.so" ] && [ -f "$libdir/libsweepfill.a" ]
ok $? "both libsweepfill.so and libsweepfill.a are installed (${libdir#"$tmp/root"})"
# shellcheck disable=SC2086
cc -std=c11 -o "$tmp/consumer" "$src/test/packaging/consumer/consumer.c" $flags >"$tmp/cc.log" 2>&1
ok $? "cc consumer.c \$(pkg-config --cflags --libs sweepfill)"
out=$(LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/consumer" 2>&1)
ok $? "the consumer runs against the installed shared library ($out)"
# Besides the swf_ symbols, the version script's node SWEEPFILL_0 is defined (an absolute symbol).
symbols=$(nm -D --defined-only "$libdir/libsweepfill.so" | awk '{print $3}' | grep -vx 'SWEEPFILL_0')
exported=$(echo "$symbols" | grep -v '^swf_' || true)
[ -n "$symbols" ] && [ -z "$exported" ]
ok $? "the shared library exports only swf_ symbols ($(echo "$symbols" | wc -l) of them)${exported:+; also: $exported}"
unversioned=$(echo "$symbols" | grep -v '@@SWEEPFILL_0$' || true)
[ -n "$symbols" ] && [ -z "$unversioned" ]
ok $? "every exported symbol has the version SWEEPFILL_0 (lib/sweepfill.map)${unversioned:+; not: $unversioned}"

# README's custom-prefix recipe: an rpath, so that no LD_LIBRARY_PATH is needed.
# shellcheck disable=SC2086
cc -std=c11 -o "$tmp/consumer-rpath" "$src/test/packaging/consumer/consumer.c" $flags \
  -Wl,-rpath,"$libdir" >"$tmp/cc-rpath.log" 2>&1
found=$(ldd "$tmp/consumer-rpath" 2>/dev/null | sed -n 's/^[[:space:]]*libsweepfill\.so\.0 => \([^ ]*\).*/\1/p')
[ "$found" = "$libdir/libsweepfill.so.0" ] && "$tmp/consumer-rpath" >/dev/null 2>&1
ok $? "linked with -Wl,-rpath,\$(pkg-config --variable=libdir sweepfill), it finds the library without LD_LIBRARY_PATH (${found#"$tmp/root"})"

# README's static recipe: -Bstatic around pkg-config's libraries (pkg-config --static alone
# still lets the linker take libsweepfill.so).
# shellcheck disable=SC2046
cc -std=c11 -o "$tmp/consumer-static" "$src/test/packaging/consumer/consumer.c" $(pkgconf --cflags sweepfill) \
  -Wl,-Bstatic $(pkgconf --libs --static sweepfill) -Wl,-Bdynamic >"$tmp/cc-static.log" 2>&1
r=$?
ok $r "cc consumer.c -Wl,-Bstatic \$(pkg-config --libs --static sweepfill) -Wl,-Bdynamic"
[ $r = 0 ] || show "$tmp/cc-static.log"
libs=$(needed "$tmp/consumer-static")
[ $r = 0 ] && [[ $libs != *libsweepfill* ]] && "$tmp/consumer-static" >/dev/null 2>&1
ok $? "the statically linked consumer needs no libsweepfill.so and runs (NEEDED: $libs)"

# examples/shadow_stack.c as README shows it: plain cc, nothing but pkg-config.
# shellcheck disable=SC2086
cc -o "$tmp/shadow_stack" "$src/examples/shadow_stack.c" $flags >"$tmp/cc-shadow.log" 2>&1
r=$?
ok $r "cc examples/shadow_stack.c \$(pkg-config --cflags --libs sweepfill)"
[ $r = 0 ] || show "$tmp/cc-shadow.log"
LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$tmp/shadow_stack" --threads 16 --ms 50 >"$tmp/shadow.log" 2>&1
r=$?
ok $r "the plain-cc shadow_stack runs against the installed library ($(tail -n 1 "$tmp/shadow.log" | sed 's/.*: //'))"
[ $r = 0 ] || show "$tmp/shadow.log"

# A parent Meson project, three ways: with subprojects/sweepfill a link to this tree (shared,
# static), and with examples/sweepfill.wrap pointing at a git snapshot of this tree
# (dependency-static): only its url is changed, so its revision must exist in a fresh clone.
# --force-fallback-for=sweepfill: a sweepfill installed on this machine (the Debian package, a
# `meson install`) would otherwise satisfy dependency('sweepfill') and no subproject be tested.
mkdir -p "$tmp/parent/subprojects" "$tmp/parent-wrap/subprojects" "$tmp/snapshot"
for d in parent parent-wrap; do
  cp "$src/test/packaging/subproject/meson.build" \
    "$src/test/packaging/subproject/meson_options.txt" \
    "$src/test/packaging/subproject/parent.c" "$tmp/$d/"
done
ln -s "$src" "$tmp/parent/subprojects/sweepfill"
(cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf - 2>/dev/null) |
  tar -C "$tmp/snapshot" -xf - &&
  git -C "$tmp/snapshot" init -q && git -C "$tmp/snapshot" add -A &&
  git -C "$tmp/snapshot" -c user.name=test -c user.email=test@localhost commit -qm snapshot &&
  sed "s|^url = .*|url = file://$tmp/snapshot|" \
    "$src/examples/sweepfill.wrap" >"$tmp/parent-wrap/subprojects/sweepfill.wrap"
ok $? "examples/sweepfill.wrap, pointed at a git snapshot of this tree (its revision as shipped)"
for how in shared static dependency-static; do
  parent=$tmp/parent
  case $how in
  shared) opts=(-Ddefault_library=shared) ;;
  static) opts=(-Ddefault_library=static) ;;
  dependency-static) opts=(-Dswf_static=true) parent=$tmp/parent-wrap ;;
  esac
  dir=$parent/build-$how
  (cd "$parent" && meson setup "$dir" --force-fallback-for=sweepfill "${opts[@]}" \
    >"$tmp/sub-$how-setup.log" 2>&1 &&
    ninja -C "$dir" >"$tmp/sub-$how-build.log" 2>&1)
  r=$?
  ok $r "a parent Meson project builds with sweepfill as a subproject (${opts[*]}$([ "$parent" = "$tmp/parent-wrap" ] && echo ', from the wrap'))"
  [ $r = 0 ] || { show "$tmp/sub-$how-setup.log" "$tmp/sub-$how-build.log"; continue; }
  out=$("$dir/parent" 2>&1)
  ok $? "the parent program runs ($how: $out)"
  libs=$(needed "$dir/parent")
  if [ "$how" = shared ]; then
    [[ $libs == *libsweepfill.so* ]]
    ok $? "with default_library=shared the parent links libsweepfill.so (NEEDED: $libs)"
    # What a subproject brings: only the library. No test, no example or benchmark target, no
    # C++ compiler.
    list=$(cd "$dir" && meson test --list 2>&1)
    r=$?
    tests=$(grep -c sweepfill <<<"$list")
    # (meson test --list exits 1 when it says "No tests defined.")
    { [ $r = 0 ] || grep -q '^No tests defined' <<<"$list"; } && [ "$tests" = 0 ]
    ok $? "meson test in the parent lists no sweepfill test ($tests)"
    targets=$(meson introspect --targets "$dir" | python3 -c \
      'import json, sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin))))')
    [ "$targets" = "parent sweepfill" ]
    ok $? "the parent's build has no target of sweepfill's but the library (targets: $targets)"
    ! grep -q 'C++ compiler' "$tmp/sub-$how-setup.log"
    ok $? "no C++ compiler is looked for"
  else
    [[ $libs != *libsweepfill* ]]
    ok $? "with $how the parent links sweepfill statically (NEEDED: $libs)"
  fi
done
echo "1..$n"
exit $failed
