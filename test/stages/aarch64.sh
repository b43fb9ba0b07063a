#!/usr/bin/env bash
# test/stages/aarch64.sh SOURCE_ROOT - build sweepfill for 64-bit Arm and run its unit and
# concurrent suites under qemu-user; print TAP.
#
# test/run runs this as the stage `aarch64`. It cross-compiles with Debian's
# gcc-aarch64-linux-gnu (test/stages/cross/aarch64-linux-gnu.ini) and runs each test program through
# qemu-aarch64 with -Datomics=c11 (<stdatomic.h>, ck_pr through compiler builtins); the
# aarch64_kernel stage builds with -Datomics=ck (ck_pr's aarch64 port), so that every atomic path
# compiles and runs on a second architecture (SWF_AARCH64_ATOMICS="ck c11" runs both here).
# qemu on x86 executes the guest's loads and stores in the host's order, so this shows that the
# code builds and behaves on aarch64, not that its fences are sufficient on a weakly ordered
# machine (docs/model/ and the TSan build argue that).
# qemu-user (7.2) registers no rseq area, so the caches run their per-thread mode here
# (swf_cache_percpu() is 0): the aarch64 restartable sequences are compiled and their
# descriptors and signatures checked (rseq_static), and rseq_abort skips itself. They run in the
# aarch64_kernel stage, under Debian's arm64 kernel in qemu-system-aarch64.
#
# The target's Concurrency Kit and C library come from Debian's arm64 packages, downloaded with
# `apt-get download` (test/stages/lib/arm64.bash: the arm64 architecture is added to dpkg once, as
# root) and unpacked into build/aarch64/sysroot without installing them. qemu's -L points at that
# sysroot.
# Each test case of each test program becomes one TAP point here ("aarch64/c11 cache_unit: ...");
# a program that dies without a failing point becomes one failing point. SWF_UNDER_QEMU=1 tells the
# tests (test/common/tap.h: tap_under_qemu) to skip what qemu-user cannot do (seccomp strict mode,
# RLIMIT_AS) and to shrink the heaviest cases. The stage skips itself, with its reason, when a
# tool or the arm64 packages are missing; under CI=true it fails instead (test/run installs the
# tools: gcc-aarch64-linux-gnu, its C library libc6-dev-arm64-cross, which comes only as a
# Recommends, and qemu-user).
set -u -o pipefail
root=${1:?usage: test/stages/aarch64.sh SOURCE_ROOT}
cd "$root" || exit 1
# shellcheck source=test/stages/lib/arm64.bash
. test/stages/lib/arm64.bash
work=$root/build/aarch64
sysroot=$work/sysroot
debs=$work/debs
atomics=${SWF_AARCH64_ATOMICS:-c11}
jobs=$(nproc 2>/dev/null || echo 2)

skip_all() {
  if [ "${CI:-}" = true ]; then
    echo "not ok 1 - aarch64: $* (CI=true: what is missing fails)"
    echo "1..1"
    exit 1
  fi
  echo "1..0 # SKIP $*"
  exit 0
}

for tool in aarch64-linux-gnu-gcc qemu-aarch64 meson ninja pkg-config python3 dpkg-deb apt-get; do
  command -v "$tool" >/dev/null || skip_all "$tool is not installed (gcc-aarch64-linux-gnu, qemu-user)"
done
# gcc-aarch64-linux-gnu only recommends the target's C library; without it every link fails
# ("cannot find Scrt1.o").
[ -e /usr/aarch64-linux-gnu/lib/Scrt1.o ] ||
  skip_all "the target's C library is not installed (libc6-dev-arm64-cross)"

# The target's runtime and ck, unpacked (not installed) into the sysroot; kept between runs.
arm64_ready || skip_all "$arm64_why"
pkgs=(libc6:arm64 libgcc-s1:arm64 libck0:arm64 libck-dev:arm64)
if [ ! -e "$sysroot/.complete" ]; then
  rm -rf "$sysroot" "$debs"
  mkdir -p "$sysroot"
  arm64_download "$debs" "${pkgs[@]}" || skip_all "$arm64_why"
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$sysroot" || skip_all "dpkg-deb -x $deb failed"
  done
  pc=$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig/ck.pc
  [ -f "$pc" ] || skip_all "libck-dev:arm64 has no ck.pc"
  # ck.pc names /usr: point it at the sysroot (headers and libck.so for the target). The
  # ${prefix} in single quotes is pkg-config's variable, written as it is.
  # shellcheck disable=SC2016
  sed -i -e "s|^prefix=.*|prefix=$sysroot/usr|" -e 's|^includedir=.*|includedir=${prefix}/include|' \
    -e 's|^libdir=.*|libdir=${prefix}/lib/aarch64-linux-gnu|' "$pc"
  touch "$sysroot/.complete"
fi

# A second machine file on top of test/stages/cross/aarch64-linux-gnu.ini: this sysroot for qemu and
# pkg-config.
overlay=$work/sysroot.ini
cat >"$overlay" <<EOF
[binaries]
exe_wrapper = ['qemu-aarch64', '-L', '$sysroot']

[properties]
pkg_config_libdir = ['$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig']
EOF

n=0
point() { # 0|1 text
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

# Each build: configure, compile, run the suites, then one TAP point per test case. The points
# are numbered on from $n; the converter prints the new count last, as "# points N".
for a in $atomics; do
  dir=$work/build-$a
  opts=(--cross-file test/stages/cross/aarch64-linux-gnu.ini --cross-file "$overlay"
    -Dbuildtype=debugoptimized -Ddebug_checks=true -Datomics="$a" -Dbench=disabled -Dexamples=false)
  [ -e "$dir/meson-private/coredata.dat" ] || rm -rf "$dir" # a half-made build directory
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" "${opts[@]}" >"$work/setup-$a.log" 2>&1
  else
    meson setup "$dir" "${opts[@]}" >"$work/setup-$a.log" 2>&1
  fi
  setup_rc=$?
  if [ "$setup_rc" -ne 0 ]; then
    point 1 "aarch64/$a: meson setup (see $work/setup-$a.log)"
    sed 's/^/# /' "$work/setup-$a.log" | tail -20
    continue
  fi
  if ! ninja -C "$dir" -j "$jobs" >"$work/build-$a.log" 2>&1; then
    point 1 "aarch64/$a: build (see $work/build-$a.log)"
    grep -E 'error|FAILED' "$work/build-$a.log" | head -20 | sed 's/^/# /'
    continue
  fi
  # The library really is for the target: an AArch64 ELF (readelf comes with the cross gcc).
  machine=$(aarch64-linux-gnu-readelf -h "$dir/lib/libsweepfill.so" 2>/dev/null | sed -n 's/^ *Machine: *//p')
  if [ "$machine" != AArch64 ]; then
    point 1 "aarch64/$a: lib/libsweepfill.so is for '${machine:-?}', not AArch64"
    continue
  fi
  point 0 "aarch64/$a: cross build, libsweepfill.so is an $machine ELF"
  rm -f "$dir"/meson-logs/testlog*.json
  t0=$SECONDS
  SWF_UNDER_QEMU=1 meson test -C "$dir" --suite unit --suite concurrent --num-processes "$jobs" \
    >"$work/test-$a.log" 2>&1
  echo "# aarch64/$a: unit and concurrent suites under qemu-aarch64 in $((SECONDS - t0)) s"
  out=$(python3 - "$dir/meson-logs/testlog.json" "aarch64/$a" "$n" <<'PY'
import json, re, sys
log, label, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
point = re.compile(r"^(not ok|ok)\b\s*\d*\s*(?:-\s*)?(.*)$")
plan_skip = re.compile(r"^1\.\.0\s*#\s*SKIP\s*(.*)$", re.I)
try:
    tests = [json.loads(line) for line in open(log)]
except OSError as e:
    tests = []
    n += 1
    print(f"not ok {n} - {label}: no test log ({e})")
for t in tests:
    name = t["name"].split(" / ")[-1]
    passed_ok = t["result"] in ("OK", "SKIP", "EXPECTEDFAIL")
    bad = 0
    for line in (t.get("stdout") or "").splitlines():
        m = point.match(line)
        if m:
            n += 1
            status, rest = m.groups()
            if "# SKIP" in rest or "# skip" in rest:
                what, why = re.split(r"#\s*skip", rest, maxsplit=1, flags=re.I)
                what = f": {what.strip()}" if what.strip() else ""
                print(f"ok {n} - {label} {name}{what} # SKIP {why.strip()}")
            else:
                bad += status == "not ok"
                print(f"{status} {n} - {label} {name}: {rest.strip()}")
            continue
        m = plan_skip.match(line)
        if m:
            n += 1
            print(f"ok {n} - {label} {name}: the whole program # SKIP {m.group(1).strip()}")
        elif line.startswith("Bail out!"):
            n += 1
            bad += 1
            print(f"not ok {n} - {label} {name}: {line}")
    if not passed_ok and bad == 0:
        n += 1
        print(f"not ok {n} - {label} {name}: {t['result']} without a failing point "
              f"(exit status {t.get('returncode')}, {t.get('duration', 0):.0f} s)")
print(f"# points {n}")
PY
  )
  printf '%s\n' "$out" | grep -v '^# points '
  last=$(printf '%s\n' "$out" | sed -n 's/^# points //p')
  if [ -z "$last" ]; then
    point 1 "aarch64/$a: the test log could not be read"
  else
    n=$last
  fi
  if grep -q '^not ok' <<<"$out"; then
    echo "# aarch64/$a: failures; the meson log is $dir/meson-logs/testlog.txt"
  fi
done

echo "1..$n"
