# test/stages/lib/arm64.bash - Debian's arm64 packages for the stages that build for 64-bit Arm
# (aarch64.sh, aarch64_kernel.sh), fetched with `apt-get download` and unpacked by the caller,
# never installed: bookworm's libck0 is not Multi-Arch: same, so libck0:arm64 cannot be
# installed beside the host's libck0. Source it. Each function returns non-zero with the
# reason in $arm64_why.
#   arm64_ready            dpkg knows the arm64 architecture (added once, as root, with an
#                          apt-get update so that apt has the arm64 lists)
#   arm64_download DIR PKG...   the packages' .deb files into DIR (log: DIR/download.log); when
#                          that fails, as root, once more after an apt-get update (the arm64
#                          lists may be missing or stale)
#   arm64_kernel_package   prints the package that linux-image-arm64:arm64 depends on (the
#                          current kernel, e.g. linux-image-6.1.0-57-arm64:arm64)
# shellcheck disable=SC2034 # read by the stage scripts that source this
arm64_why=
arm64_ready() {
  dpkg --print-foreign-architectures | grep -qx arm64 && return 0
  if [ "$(id -u)" -ne 0 ]; then
    arm64_why="dpkg has no arm64 architecture (as root: dpkg --add-architecture arm64; apt-get update)"
    return 1
  fi
  echo "# adding the arm64 architecture to dpkg"
  dpkg --add-architecture arm64 || { arm64_why="dpkg --add-architecture arm64 failed"; return 1; }
  apt-get update -qq >/dev/null 2>&1 || apt-get update || { arm64_why="apt-get update failed"; return 1; }
}
arm64_download() {
  local dir=$1
  shift
  mkdir -p "$dir"
  (cd "$dir" && apt-get download "$@" >download.log 2>&1) && return 0
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq >/dev/null 2>&1
    (cd "$dir" && apt-get download "$@" >download.log 2>&1) && return 0
  fi
  arm64_why="apt-get download $* failed: $(tail -1 "$dir/download.log")"
  return 1
}
arm64_kernel_package() {
  local pkg
  pkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[^ ]*\)$/\1/p' | head -1)
  if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq >/dev/null 2>&1
    pkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
      sed -n 's/^ *Depends: \(linux-image-[^ ]*\)$/\1/p' | head -1)
  fi
  if [ -z "$pkg" ]; then
    arm64_why="apt-cache finds no kernel that linux-image-arm64:arm64 depends on"
    return 1
  fi
  case $pkg in *:arm64) ;; *) pkg=$pkg:arm64 ;; esac
  echo "$pkg"
}
