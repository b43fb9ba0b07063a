#!/usr/bin/env bash
# test/stages/deb.sh SRCROOT - the Debian packages, as TAP.
#
# Copies the tree into a temporary directory (the worktree stays clean) and builds
# libsweepfill0 and libsweepfill-dev there with `dpkg-buildpackage -us -uc -b` (debian/rules
# builds without tests, examples or benchmarks, and runs no test suite). Then:
#   - git sees nothing new in the copy afterwards (debian/.gitignore names what debhelper leaves);
#   - lintian reports no error or warning (overrides in debian/*.lintian-overrides say why);
#   - each package holds what it should, and debian/libsweepfill0.symbols lists exactly the
#     symbols the library exports (a function added later fails here until the file is
#     regenerated: see abi/update.sh);
#   - as root, and only if no sweepfill package is installed already: installs both packages,
#     builds test/packaging/consumer/consumer.c with `cc $(pkg-config --cflags --libs sweepfill)`
#     against them, runs it, finds `man swf_cache_free`; builds test/packaging/tsan_consumer/
#     consumer.c (and consumer_urcu.c when liburcu-memb is installed) with
#     `cc -fsanitize=thread $(pkg-config --cflags --libs sweepfill-tsan)` against the packaged
#     ThreadSanitizer build and runs it with no suppression file: TSan reports nothing; and
#     removes the packages again, checking that the machine is left as it was found.
# Skips itself when dpkg-buildpackage or debhelper is missing, and the lintian or man check when
# that tool is missing; each fails instead under CI=true.
set -u -o pipefail
src=$(cd "${1:?usage: deb.sh SRCROOT}" && pwd)
# shellcheck source=lib/tap.bash
. "$(dirname "$0")/lib/tap.bash"
show() { tail -n "${2:-25}" "$1" | sed 's/^/# /'; }
require_tools "dpkg-dev, debhelper, meson, ninja-build, pkg-config, build-essential" \
  dpkg-buildpackage dh dh_auto_configure meson ninja pkg-config cc
tmp=$(mktemp -d)
installed_here=0
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  if [ "$installed_here" = 1 ]; then
    apt-get purge -y -qq -o DPkg::Lock::Timeout=300 libsweepfill-dev libsweepfill0 >/dev/null 2>&1
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

version=$(cd "$src" && dpkg-parsechangelog -SVersion)
upstream=${version%-*}
tree=$tmp/sweepfill-$upstream
mkdir -p "$tree"
tar -C "$src" --exclude=./build --exclude=./.git --exclude=./subprojects --exclude=./bench/out \
  -cf - . | tar -C "$tree" -xf -
ok $? "the tree is copied to a temporary directory (sweepfill-$upstream)"
# A git repository of the copy, to see what the build leaves behind.
git -C "$tree" init -q && git -C "$tree" add -A &&
  git -C "$tree" -c user.name=test -c user.email=test@localhost commit -qm copy

# parallel=2: at most two compile jobs; noautodbgsym: the -dbgsym package is not needed here.
(cd "$tree" && DEB_BUILD_OPTIONS="parallel=2 noautodbgsym" dpkg-buildpackage -us -uc -b) \
  >"$tmp/build.log" 2>&1
r=$?
ok $r "dpkg-buildpackage -us -uc -b builds sweepfill $version"
[ $r = 0 ] || { show "$tmp/build.log" 40; finish; }
left=$(git -C "$tree" status --porcelain 2>&1)
[ -z "$left" ]
ok $? "what the build leaves in the tree is ignored by git (debian/.gitignore)${left:+: ${left//$'\n'/ }}"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib_deb=$tmp/libsweepfill0_${version}_$arch.deb
dev_deb=$tmp/libsweepfill-dev_${version}_$arch.deb
[ -f "$lib_deb" ] && [ -f "$dev_deb" ]
ok $? "it produces $(basename "$lib_deb") and $(basename "$dev_deb")"
if [ ! -f "$lib_deb" ] || [ ! -f "$dev_deb" ]; then finish; fi
grep -q -- "-Dtests=false -Dexamples=false -Dbench=disabled" "$tmp/build.log" &&
  ! grep -q 'meson test' "$tmp/build.log"
ok $? "the package is configured without tests, examples or benchmarks and runs no test suite"

if command -v lintian >/dev/null; then
  lintian --fail-on error,warning "$tmp"/sweepfill_"${version}"_"$arch".changes >"$tmp/lintian.log" 2>&1
  r=$?
  grep -v 'running with root privileges' "$tmp/lintian.log" | sed 's/^/# /'
  ok $r "lintian reports no errors or warnings"
else
  missing "lintian is not installed (Debian: lintian)"
fi

lib_files=$(dpkg-deb -c "$lib_deb" | awk '{print $6}')
dev_files=$(dpkg-deb -c "$dev_deb" | awk '{print $6}')
libdir=./usr/lib/$multiarch
grep -qx "$libdir/libsweepfill.so.$upstream" <<<"$lib_files" &&
  grep -qx "$libdir/libsweepfill.so.0" <<<"$lib_files" &&
  ! grep -q -e '/include/' -e 'libsweepfill\.so$' -e '\.a$' <<<"$lib_files"
ok $? "libsweepfill0 holds libsweepfill.so.0 in the multiarch libdir and no development files"
missing=""
for f in ./usr/include/sweepfill/sweepfill.h ./usr/include/sweepfill/version.h \
  "$libdir/libsweepfill.so" "$libdir/libsweepfill.a" "$libdir/pkgconfig/sweepfill.pc" \
  "$libdir/libsweepfill-tsan.a" "$libdir/pkgconfig/sweepfill-tsan.pc" \
  "$libdir/cmake/sweepfill/sweepfillConfig.cmake" "$libdir/cmake/sweepfill/sweepfillConfigVersion.cmake" \
  ./usr/share/man/man3/swf_cache_alloc.3.gz ./usr/share/man/man3/swf_cache_free.3.gz \
  ./usr/share/man/man7/sweepfill.7.gz ./usr/share/doc/libsweepfill-dev/design.md.gz \
  ./usr/share/doc/libsweepfill-dev/examples/shadow_stack.c; do
  grep -qx -- "$f" <<<"$dev_files" || missing="$missing $f"
done
[ -z "$missing" ]
ok $? "libsweepfill-dev holds headers, .so, .a, .pc, the TSan .a and .pc, CMake files, man pages, design notes and examples${missing:+ (missing:$missing)}"
depends=$(dpkg-deb -f "$dev_deb" Depends)
[[ "$depends" == *"libck-dev"* ]] && [[ "$depends" == *"libsweepfill0 (= $version)"* ]]
ok $? "libsweepfill-dev depends on libck-dev and libsweepfill0 (= $version) ($depends)"
[ "$(dpkg-deb -f "$lib_deb" Multi-Arch)" = same ] && [ "$(dpkg-deb -f "$dev_deb" Multi-Arch)" = same ]
ok $? "both packages are Multi-Arch: same"

# The symbols file against what the library exports.
dpkg-deb --ctrl-tarfile "$lib_deb" | tar -xO ./symbols >"$tmp/symbols.built" 2>/dev/null
want=$(grep '^ ' "$src/debian/libsweepfill0.symbols" | awk '{print $1}' | sort)
have=$(grep '^ ' "$tmp/symbols.built" | awk '{print $1}' | sort)
[ -n "$have" ] && [ "$want" = "$have" ]
r=$?
ok $r "debian/libsweepfill0.symbols lists exactly the exported symbols ($(echo "$have" | wc -l))"
if [ $r != 0 ]; then
  diff <(echo "$want") <(echo "$have") | sed 's/^/# symbols file vs library: /'
  echo "# regenerate it with abi/update.sh (after bumping the version in meson.build)"
fi

# Install, use, remove.
if [ "$(id -u)" != 0 ]; then
  skip "installing the packages needs root"
  finish
fi
present=$(dpkg-query -W -f='${Package} ${Status}\n' libsweepfill0 libsweepfill-dev 2>/dev/null |
  grep -v 'not-installed' | grep ' installed' || true)
if [ -n "$present" ]; then
  skip "a sweepfill package is installed on this machine already; leaving it alone ($present)"
  finish
fi
# One installer at a time across concurrent test runs on this machine.
exec 9>/tmp/sweepfill-deb-stage.lock
flock -w 600 9
installed_here=1
apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "$lib_deb" "$dev_deb" \
  >"$tmp/install.log" 2>&1
r=$?
ok $r "apt-get install ./libsweepfill0_*.deb ./libsweepfill-dev_*.deb"
[ $r = 0 ] || show "$tmp/install.log"
pcdir=$(pkg-config --variable=pcfiledir sweepfill 2>/dev/null)
[ "$pcdir" = "/usr/lib/$multiarch/pkgconfig" ]
ok $? "pkg-config finds sweepfill.pc in the multiarch libdir ($pcdir)"
flags=$(pkg-config --cflags --libs sweepfill 2>&1)
# shellcheck disable=SC2086
cc -std=c11 -o "$tmp/consumer" "$src/test/packaging/consumer/consumer.c" $flags >"$tmp/cc.log" 2>&1
r=$?
ok $r "cc consumer.c \$(pkg-config --cflags --libs sweepfill) against the installed package ($flags)"
[ $r = 0 ] || show "$tmp/cc.log"
out=$("$tmp/consumer" 2>&1)
ok $? "the consumer runs ($out)"
resolved=$(ldd "$tmp/consumer" 2>/dev/null | awk '$1 == "libsweepfill.so.0" {print $3}')
[ -n "$resolved" ] && [ "$(readlink -f "$resolved")" = "/usr/lib/$multiarch/libsweepfill.so.$upstream" ]
ok $? "it runs with the packaged /usr/lib/$multiarch/libsweepfill.so.0 ($resolved)"
if grep -qs 'path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
  skip "dpkg excludes /usr/share/man on this machine"
elif command -v man >/dev/null; then
  page=$(man -w swf_cache_free 2>/dev/null)
  [ -n "$page" ] && [ -e "$page" ] && grep -q '^\.Nm swf_cache_free' <<<"$(zcat -f "$page")"
  ok $? "man swf_cache_free finds the installed page ($page)"
else
  missing "man is not installed (Debian: man-db)"
fi

# The packaged ThreadSanitizer build: what a TSan user links instead of building sweepfill.
tsan_a=/usr/lib/$multiarch/libsweepfill-tsan.a
# (Captured first: with pipefail, `nm | grep -q` fails when grep stops reading early.)
tsan_syms=$(nm "$tsan_a" 2>&1)
grep -q ' U __tsan_func_entry$' <<<"$tsan_syms" && grep -q ' T swf_sweep$' <<<"$tsan_syms"
ok $? "the packaged $tsan_a is instrumented for TSan (calls __tsan_func_entry) and defines swf_sweep"
if ! printf 'int main(void){return 0;}\n' | cc -fsanitize=thread -x c - -o "$tmp/probe" 2>/dev/null; then
  missing "cc -fsanitize=thread does not link (Debian: libtsan2)"
else
  # tsan_run NAME SOURCE SUMMARY-PREFIX [EXTRA-PKG]: build SOURCE against sweepfill-tsan, run it
  # with no suppression file (test/run's TSAN_OPTIONS name one: replaced), count reports.
  tsan_run() {
    local name=$1 source=$2 prefix=$3 extra=${4:-} flags libs r status reports summary
    # shellcheck disable=SC2086 # $extra: no package or one
    flags=$(pkg-config --cflags --libs sweepfill-tsan $extra 2>&1)
    r=$?
    if [ $r != 0 ]; then
      ok $r "pkg-config --cflags --libs sweepfill-tsan${extra:+ $extra} (${flags%%$'\n'*})"
      return
    fi
    # shellcheck disable=SC2086
    cc -std=c11 -O1 -g -Wall -Wextra -Werror -o "$tmp/$name" "$source" $flags >"$tmp/cc.log" 2>&1
    r=$?
    ok $r "cc $(basename "$source") \$(pkg-config --cflags --libs sweepfill-tsan${extra:+ $extra}) ($flags)"
    [ $r = 0 ] || { show "$tmp/cc.log"; return; }
    libs=$(ldd "$tmp/$name" 2>&1)
    [ -n "$libs" ] && ! grep -q libsweepfill <<<"$libs"
    ok $? "$name links the static TSan library, not libsweepfill.so.0"
    TSAN_OPTIONS="halt_on_error=0 exitcode=66" "$tmp/$name" --ms 500 --readers 2 --writers 2 \
      >"$tmp/$name.log" 2>&1
    status=$?
    reports=$(grep -c '^WARNING: ThreadSanitizer' "$tmp/$name.log")
    summary=$(grep "^$prefix" "$tmp/$name.log")
    [ "$reports" = 0 ] && [ $status = 0 ] && [[ $summary == *": OK" ]]
    ok $? "$name runs under TSan with no suppression file: no report, its own checks hold ($reports reports, exit $status: $summary)"
    [ "$reports" = 0 ] || grep -A 8 '^WARNING: ThreadSanitizer' "$tmp/$name.log" | head -n 40 | sed 's/^/# /'
  }
  tsan_run tsan_consumer "$src/test/packaging/tsan_consumer/consumer.c" 'tsan consumer:'
  if pkg-config --exists liburcu-memb 2>/dev/null; then
    tsan_run tsan_consumer_urcu "$src/test/packaging/tsan_consumer/consumer_urcu.c" \
      'tsan consumer (urcu):' liburcu-memb
  else
    skip "the liburcu TSan consumer: liburcu-memb is not installed"
  fi
fi

apt-get purge -y -qq -o DPkg::Lock::Timeout=300 libsweepfill-dev libsweepfill0 >"$tmp/purge.log" 2>&1
r=$?
left=$(dpkg-query -W -f='${Package} ${Status}\n' libsweepfill0 libsweepfill-dev 2>/dev/null |
  grep ' installed' || true)
[ $r = 0 ] && [ -z "$left" ] && [ ! -e /usr/include/sweepfill ] &&
  [ ! -e "/usr/lib/$multiarch/libsweepfill.so.0" ]
r=$?
ok $r "the packages are removed again; the machine is as it was"
[ $r = 0 ] && installed_here=0
finish
