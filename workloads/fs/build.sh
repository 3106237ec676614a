#!/usr/bin/env bash
# The full-system image: Debian's linux-source-6.1 cross-compiled for riscv64 from linux.config (a fragment over
# allnoconfig) and an initramfs holding a static /init. Everything lands in workloads/fs/build/:
#   Image, System.map, vmlinux   the kernel (flat image the boot loader jumps to; symbols for profiles)
#   initramfs.cpio               the root file system (newc cpio, uncompressed)
# Nothing is rebuilt when the inputs have not changed: a stamp holds a hash of this script, the configuration,
# /init's sources (with the memcached-class server's) and the installed linux-source package's version.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${FS_OUT:-$HERE/build}
CROSS=${CROSS:-riscv64-linux-gnu-}
JOBS=${JOBS:-2}
TARBALL=/usr/src/linux-source-6.1.tar.xz
mkdir -p "$OUT"
# A reproducible image: the same inputs give byte-identical Image and initramfs.cpio on any host, in any folder, at
# any time (FS statistics are exact for one image, so a rebuilt image must not move them). Kbuild otherwise stamps
# the build's time, user, host and a build counter into the kernel's version string (printed at boot, so the boot's
# instruction count depended on them), and gen_init_cpio stamps the build time and /init's mtime into the archive.
# The fixed time is arbitrary (2023-01-01 00:00:00 UTC); it is the time the guest's `uname -v` reports.
BUILD_EPOCH=1672531200
export KBUILD_BUILD_TIMESTAMP="$(LC_ALL=C date -u -d "@$BUILD_EPOCH")" KBUILD_BUILD_USER=kvsim KBUILD_BUILD_HOST=kvsim KBUILD_BUILD_VERSION=1
export SOURCE_DATE_EPOCH=$BUILD_EPOCH

[ -f "$TARBALL" ] || { echo "fs-image: $TARBALL is missing: apt-get install linux-source-6.1" >&2; exit 1; }
command -v "${CROSS}gcc" >/dev/null || { echo "fs-image: ${CROSS}gcc is missing: apt-get install gcc-riscv64-linux-gnu" >&2; exit 1; }
for tool in flex bison bc cpio; do
  command -v $tool >/dev/null || { echo "fs-image: $tool is missing (apt-get install flex bison bc cpio)" >&2; exit 1; }
done

version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
MCD=$HERE/../mcd
MCD_SRC=("$MCD/mcd_server.c" "$MCD/mcd_store.c" "$MCD/mcd_proto.c" "$MCD/mcd_net.c" "$MCD/mcd_tcp.c")
inputs=$(cat "$HERE/build.sh" "$HERE/linux.config" "$HERE/init.c" "$HERE/initramfs.list" "${MCD_SRC[@]}" "$MCD"/*.h \
  | sha256sum | cut -c1-16)
stamp="$version $inputs"
if [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$stamp" ] && [ -f "$OUT/Image" ] && [ -f "$OUT/initramfs.cpio" ]; then
  echo "fs-image: up to date (linux-source $version, inputs $inputs)"
  exit 0
fi
start=$(date +%s)

SRC=$OUT/linux-source-6.1
if [ ! -f "$SRC/.extracted-$version" ]; then
  rm -rf "$SRC"
  tar -C "$OUT" -xf "$TARBALL"
  touch "$SRC/.extracted-$version"
fi

KMAKE=(make -C "$SRC" O="$OUT/obj" ARCH=riscv CROSS_COMPILE="$CROSS" -j"$JOBS")
"${KMAKE[@]}" -s KCONFIG_ALLCONFIG="$HERE/linux.config" allnoconfig
# Every option the fragment sets must have survived Kconfig's dependency resolution: a silently dropped option
# would give a kernel without (say) its console.
bad=0
while read -r line; do
  case "$line" in ''|'#'*) continue;; esac
  opt=${line%%=*}; want=${line#*=}
  if [ "$want" = n ]; then
    grep -qx "$opt=y" "$OUT/obj/.config" && { echo "fs-image: $opt is set although linux.config turns it off" >&2; bad=1; }
  else
    grep -qx "$opt=$want" "$OUT/obj/.config" || { echo "fs-image: $opt=$want did not survive Kconfig (unmet dependency?)" >&2; bad=1; }
  fi
done < "$HERE/linux.config"
[ $bad = 0 ] || exit 1

"${KMAKE[@]}" -s Image
cp "$OUT/obj/arch/riscv/boot/Image" "$OUT/obj/System.map" "$OUT/obj/vmlinux" "$OUT/"

# /init: an ordinary static glibc program, built as a user would build it, with the memcached-class server's
# protocol and store (workloads/mcd) on the C library (MCD_HOSTED) and the kernel's sockets.
"${CROSS}gcc" -static -O2 -Wall -Wextra -Werror -DMCD_HOSTED -I"$MCD" -o "$OUT/init" "$HERE/init.c" "${MCD_SRC[@]}" \
  -lpthread
cc -O2 -o "$OUT/gen_init_cpio" "$SRC/usr/gen_init_cpio.c"
touch -d "@$BUILD_EPOCH" "$OUT/init"
sed "s|@INIT@|$OUT/init|" "$HERE/initramfs.list" > "$OUT/initramfs.list"
"$OUT/gen_init_cpio" -t "$BUILD_EPOCH" "$OUT/initramfs.list" > "$OUT/initramfs.cpio"

echo "$stamp" > "$OUT/.stamp"
echo "fs-image: built in $(( $(date +%s) - start )) s (linux-source $version, inputs $inputs)"
