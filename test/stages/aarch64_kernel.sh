#!/usr/bin/env bash
# test/stages/aarch64_kernel.sh SOURCE_ROOT - boot Debian's arm64 Linux kernel under
# qemu-system-aarch64 and run the per-CPU mode's tests in it, on a kernel that registers rseq;
# print TAP.
#
# test/run runs this as the stage `aarch64_kernel`. qemu-user (the aarch64 stage) registers no
# rseq area, so there the caches run their per-thread mode; here the aarch64 restartable
# sequences run: the mode the process chose (rseq_mode, with a point that fails when the mode is
# per-thread), the sequences under injected delays, migrations and a 10 kHz timer (rseq_abort),
# cache.h's inline path (cache_inline_percpu) and its one body with the library's, counted in the
# magazines' words (cache_one_body), what each mode keeps (cache_percpu), and the cache's
# concurrent programs (cache_stress, cache_threads, cache_failslab_race, cache_destroy_race,
# cache_carve_race) in the default, per-CPU mode.
#
# The machine: qemu's virt board, 2 emulated CPUs (TCG: no KVM is needed), 1 GiB, no network, no
# disk; the kernel is the one Debian's linux-image-arm64:arm64 depends on (its Image, fetched with
# `apt-get download` and kept in build/aarch64-kernel/kernel); the initramfs holds a static /init
# (test/stages/arm64/init.c) and the test programs, built static for the target with the cross
# compiler (test/stages/cross/aarch64-linux-gnu.ini, -Ddefault_library=static, -static, ck's
# aarch64 atomics, debug checks off so that the fast paths are the ones a user gets), and /tests,
# the list /init runs, with SWF_UNDER_QEMU=1 (test/common/tap.h: tap_under_qemu) to shrink the
# heaviest cases. /init prints each program's output on the serial console, each line prefixed;
# this script turns it into TAP points ("aarch64-kernel/rseq_abort: ..."). A program that dies or
# runs past its time without a failing point is one failing point; a guest that does not power off
# within SWF_KERNEL_TIMEOUT seconds (240) is killed, and each program it did not finish is one.
#
# The stage skips itself, with its reason, when a tool or an arm64 package is missing; under
# CI=true it fails instead (test/run installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and
# qemu-system-arm; the arm64 packages come from the archive, test/stages/lib/arm64.bash).
set -u -o pipefail
root=${1:?usage: test/stages/aarch64_kernel.sh SOURCE_ROOT}
cd "$root" || exit 1
# shellcheck source=test/stages/lib/tap.bash
. test/stages/lib/tap.bash
# shellcheck source=test/stages/lib/arm64.bash
. test/stages/lib/arm64.bash
work=$root/build/aarch64-kernel
sysroot=$work/sysroot
dir=$work/build
guest_timeout=${SWF_KERNEL_TIMEOUT:-240}
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$work"

require_tools "gcc-aarch64-linux-gnu, qemu-system-arm" aarch64-linux-gnu-gcc qemu-system-aarch64 \
  meson ninja pkg-config python3 dpkg-deb apt-get apt-cache timeout
# The cross compiler only recommends the target's C library; its libc.a makes the static links.
if [ ! -e /usr/aarch64-linux-gnu/lib/libc.a ]; then
  missing "the target's C library is not installed (Debian: libc6-dev-arm64-cross)"
  finish
fi
arm64_ready || { missing "$arm64_why"; finish; }

# ck for the target (headers, libck.a, ck.pc), unpacked into a sysroot of this stage's own.
if [ ! -e "$sysroot/.complete" ]; then
  rm -rf "$sysroot" "$work/debs"
  arm64_download "$work/debs" libck-dev:arm64 || { missing "$arm64_why"; finish; }
  mkdir -p "$sysroot"
  dpkg-deb -x "$work"/debs/libck-dev_*.deb "$sysroot" || { ok 1 "dpkg-deb -x libck-dev:arm64"; finish; }
  pc=$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig/ck.pc
  [ -f "$pc" ] || { ok 1 "libck-dev:arm64 has ck.pc"; finish; }
  # shellcheck disable=SC2016 # ${prefix} is pkg-config's variable, written as it is
  sed -i -e "s|^prefix=.*|prefix=$sysroot/usr|" -e 's|^includedir=.*|includedir=${prefix}/include|' \
    -e 's|^libdir=.*|libdir=${prefix}/lib/aarch64-linux-gnu|' "$pc"
  touch "$sysroot/.complete"
fi

# The kernel: the Image of the package linux-image-arm64:arm64 depends on now, kept per package.
kpkg=$(arm64_kernel_package) || { missing "$arm64_why"; finish; }
kdir=$work/kernel/${kpkg%:arm64}
if [ ! -e "$kdir/Image" ]; then
  rm -rf "$work/kernel"
  arm64_download "$work/kernel/debs" "$kpkg" || { missing "$arm64_why"; finish; }
  mkdir -p "$kdir"
  # Only the Image and its config, which come first in the archive: tar stops there (and
  # dpkg-deb on a closed pipe) instead of unpacking the modules, which the virt board does not
  # need (its drivers are built in).
  kver=${kpkg%:arm64}
  kver=${kver#linux-image-}
  image=$kdir/boot/vmlinuz-$kver
  config=$kdir/boot/config-$kver
  dpkg-deb --fsys-tarfile "$work"/kernel/debs/linux-image-*.deb 2>/dev/null |
    tar -x -C "$kdir" --occurrence=1 "./boot/vmlinuz-$kver" "./boot/config-$kver"
  if [ ! -s "$image" ] || [ ! -s "$config" ]; then
    ok 1 "$kpkg has a /boot/vmlinuz-* and its config"
    finish
  fi
  # Debian's arm64 vmlinuz is the plain Image that qemu's -kernel boots; an EFI zboot or gzip
  # one would need unpacking first.
  if [ "$(head -c 2 "$image" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
    gzip -dc "$image" >"$kdir/Image"
  else
    cp "$image" "$kdir/Image"
  fi
  cp "$config" "$kdir/config"
  rm -rf "$work/kernel/debs" "${kdir:?}/boot"
fi
for opt in CONFIG_RSEQ CONFIG_MEMBARRIER CONFIG_BLK_DEV_INITRD CONFIG_RD_GZIP \
  CONFIG_SERIAL_AMBA_PL011_CONSOLE; do
  grep -qx "$opt=y" "$kdir/config" || { ok 1 "${kpkg%:arm64} has $opt=y"; finish; }
done
ok 0 "${kpkg%:arm64}: an arm64 Image with CONFIG_RSEQ and CONFIG_MEMBARRIER"

# The test programs, static, and the guest's /init.
overlay=$work/sysroot.ini
cat >"$overlay" <<EOF2
[properties]
pkg_config_libdir = ['$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig']
EOF2
opts=(--cross-file test/stages/cross/aarch64-linux-gnu.ini --cross-file "$overlay"
  -Dbuildtype=debugoptimized -Ddebug_checks=false -Datomics=ck -Dbench=disabled -Dexamples=false
  -Ddefault_library=static -Dc_link_args=-static)
[ -e "$dir/meson-private/coredata.dat" ] || rm -rf "$dir" # a half-made build directory
if [ -d "$dir" ]; then
  meson setup --reconfigure "$dir" "${opts[@]}" >"$work/setup.log" 2>&1
else
  meson setup "$dir" "${opts[@]}" >"$work/setup.log" 2>&1
fi || {
  ok 1 "aarch64-kernel: meson setup (see $work/setup.log)"
  sed 's/^/# /' "$work/setup.log" | tail -20
  finish
}
# NAME SECONDS [VAR=VALUE ...] PROGRAM [ARG ...]: /init's list (PROGRAM: a target below). SECONDS
# bounds one program, generously (the whole list took 78 s of the guest's time with the host
# loaded); SWF_KERNEL_TIMEOUT bounds the guest.
tests=(
  "rseq_mode 60 rseq_mode percpu"
  "rseq_mode_cpu_id 60 SWF_PERCPU=cpu_id rseq_mode cpu_id"
  "rseq_mode_env_off 60 SWF_PERCPU=0 rseq_mode off"
  "rseq_mode_tunable_off 60 GLIBC_TUNABLES=glibc.pthread.rseq=0 rseq_mode off"
  "rseq_static 60 rseq_static"
  "rseq_abort 120 SWF_PERCPU=1 rseq_abort"
  "cache_inline_percpu 120 SWF_PERCPU=1 cache_inline_percpu"
  "cache_one_body 60 SWF_PERCPU=1 SWF_TEST_ONE_CPU=1 cache_one_body"
  "cache_percpu 60 SWF_PERCPU=1 cache_percpu"
  "cache_percpu_cpu_id 60 SWF_PERCPU=cpu_id cache_percpu"
  "cache_threads 120 cache_threads"
  "cache_stress 120 cache_stress"
  "cache_failslab_race 120 cache_failslab_race"
  "cache_destroy_race 120 cache_destroy_race"
  "cache_carve_race_percpu 120 SWF_PERCPU=1 cache_carve_race"
)
declare -A target=(
  [rseq_mode]=test/unit/rseq_mode [rseq_static]=test/unit/rseq_static
  [rseq_abort]=test/concurrent/rseq_abort [cache_inline_percpu]=test/concurrent/cache_inline_percpu
  [cache_percpu]=test/concurrent/cache_percpu [cache_threads]=test/concurrent/cache_threads
  [cache_stress]=test/concurrent/cache_stress [cache_failslab_race]=test/concurrent/cache_failslab_race
  [cache_destroy_race]=test/concurrent/cache_destroy_race [cache_one_body]=test/unit/cache_one_body
  [cache_carve_race]=test/concurrent/cache_carve_race
)
t0=$SECONDS
if ! ninja -C "$dir" -j "$jobs" "${target[@]}" >"$work/build.log" 2>&1; then
  ok 1 "aarch64-kernel: build (see $work/build.log)"
  grep -E 'error|FAILED' "$work/build.log" | head -20 | sed 's/^/# /'
  finish
fi
if ! aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror -o "$work/init" \
  test/stages/arm64/init.c >"$work/init.log" 2>&1; then
  ok 1 "aarch64-kernel: the guest's /init (see $work/init.log)"
  finish
fi
echo "# aarch64-kernel: built in $((SECONDS - t0)) s"

files=("init=$work/init")
: >"$work/tests"
for line in "${tests[@]}"; do
  read -r -a w <<<"$line"
  args=("${w[0]}" "${w[1]}" SWF_UNDER_QEMU=1)
  for ((i = 2; i < ${#w[@]}; i++)); do
    if [[ ${w[i]} == *=* ]]; then
      args+=("${w[i]}")
    else
      prog=${w[i]}
      args+=("/bin/$prog" "${w[@]:i+1}")
      files+=("bin/$prog=$dir/${target[$prog]}")
      break
    fi
  done
  echo "${args[*]}" >>"$work/tests"
done
files+=("tests=$work/tests")
# A program twice in the list goes in once.
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u)
python3 test/stages/arm64/cpio.py "$work/initramfs.cpio.gz" "${files[@]}" ||
  { ok 1 "aarch64-kernel: the initramfs"; finish; }

# The guest: its console to a file, so that nothing is read from or written to this terminal.
# pauth-impdef: the cheaper pointer authentication for TCG (the kernel signs every return).
rm -f "$work/console.log"
t0=$SECONDS
timeout -k 10 "$guest_timeout" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 \
  -m 1024 -nodefaults -display none -no-reboot -serial "file:$work/console.log" \
  -kernel "$kdir/Image" -initrd "$work/initramfs.cpio.gz" \
  -append "console=ttyAMA0 panic=-1 quiet loglevel=1" >"$work/qemu.log" 2>&1
qemu_rc=$?
took=$((SECONDS - t0))
echo "# aarch64-kernel: the guest ran $took s (qemu's exit status $qemu_rc)"

# The converter numbers its points on from $n and prints "# points N FAILED" last.
out=$(python3 - "$work/console.log" "$work/tests" "$n" "$qemu_rc" "$took" <<'PY'
import re, sys
console, tests, n, qemu_rc, took = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
names = [l.split()[0] for l in open(tests) if l.strip() and not l.startswith("#")]
point = re.compile(r"^(not ok|ok)\b\s*\d*\s*(?:-\s*)?(.*)$")
plan_skip = re.compile(r"^1\.\.0\s*#\s*SKIP\s*(.*)$", re.I)
out = {name: [] for name in names}
end = {}
done = False
try:
    text = open(console, errors="replace").read()
except OSError:
    text = ""
for line in text.splitlines():
    line = line.rstrip("\r")
    m = re.match(r"^@@ (\S+) \| (.*)$", line)
    if m:
        out.setdefault(m.group(1), []).append(m.group(2))
        continue
    m = re.match(r"^@@ (\S+) end (.*)$", line)
    if m:
        end[m.group(1)] = m.group(2)
    elif line.startswith("@@ all done"):
        done = True
failed = 0
def emit(status, text):
    global n, failed
    n += 1
    failed += status == "not ok"
    print(f"{status} {n} - {text}")
for note in out.get("init", []):
    print(f"# aarch64-kernel: {note.lstrip('# ')}")
for name in names:
    label = f"aarch64-kernel/{name}"
    bad = 0
    for line in out[name]:
        m = point.match(line)
        if m:
            status, rest = m.groups()
            if re.search(r"#\s*skip", rest, re.I):
                what, why = re.split(r"#\s*skip", rest, maxsplit=1, flags=re.I)
                n += 1
                print(f"ok {n} - {label}: {what.strip()} # SKIP {why.strip()}")
            else:
                bad += status == "not ok"
                emit(status, f"{label}: {rest.strip()}")
            continue
        m = plan_skip.match(line)
        if m:
            n += 1
            print(f"ok {n} - {label}: the whole program # SKIP {m.group(1).strip()}")
        elif line.startswith("Bail out!"):
            bad += 1
            emit("not ok", f"{label}: {line}")
        elif line.startswith("#"):
            print(f"# {name}: {line.lstrip('# ')}")
    how = end.get(name)
    if how is None:
        emit("not ok", f"{label}: did not finish (the guest stopped or was killed after {took} s"
             f", qemu's exit status {qemu_rc})")
    elif not how.startswith("exit 0 ") and bad == 0:
        emit("not ok", f"{label}: ended with {how} without a failing point")
    else:
        print(f"# {label}: {how}")
if not done:
    emit("not ok", f"aarch64-kernel: the guest did not finish its list (killed after {took} s, "
         f"qemu's exit status {qemu_rc}); the last lines of its console:")
    for line in text.splitlines()[-15:]:
        print(f"#   {line}")
print(f"# points {n} {1 if failed else 0}")
PY
)
printf '%s\n' "$out" | grep -v '^# points '
read -r last bad < <(printf '%s\n' "$out" | sed -n 's/^# points //p')
if [ -z "${last:-}" ]; then
  ok 1 "aarch64-kernel: the guest's console ($work/console.log) could not be read"
else
  n=$last
  [ "$bad" = 0 ] || failed=1
fi
finish
