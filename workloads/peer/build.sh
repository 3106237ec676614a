#!/usr/bin/env bash
# The peer suite's build: well-known open-source programs, their sources fetched from Debian's source packages
# (`apt-get source`, with a private apt state so the machine's configuration is left alone), built statically for
# riscv64 exactly as a user would build them: plain `riscv64-linux-gnu-gcc -static -O2`, no simulator-specific
# flags. Nothing but these rules is committed.
#
#   build.sh [PROGRAM...]     build the named programs (default: all) into workloads/peer/build/bin/
#
# A program is rebuilt only when its build rules or its source package's version changed (a stamp per program
# holds both). The Debian mirror is the one the machine's apt sources already use (no host name is written here).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${PEER_OUT:-$HERE/build}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BIN=$OUT/bin
SRC=$OUT/src
APT=$OUT/apt
CC=${CROSS:-riscv64-linux-gnu-}gcc
CFLAGS="-static -O2"
JOBS=${JOBS:-2}
mkdir -p "$BIN" "$SRC" "$APT"

# Program → Debian source package. The cheap ones (a few seconds each) are what `make test` builds.
declare -A PACKAGE=(
  [lua]=lua5.4 [minigzip]=zlib [bzip2]=bzip2 [lz4]=lz4 [zstd]=libzstd [sqlite3]=sqlite3 [pcre2grep]=pcre2
  [jq]=jq [fftutil]=kissfft
)
ALL="lua minigzip bzip2 lz4 pcre2grep jq fftutil zstd sqlite3"

# The first Debian archive (a URI ending in /debian) of the machine's apt sources, deb822 or one-line format.
debian_mirror() {
  local uri
  uri=$( { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{for (i = 2; i <= NF; i++) print $i}';
           grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
             sed -E 's/\[[^]]*\]//' | awk '{print $2}'; } | grep -E '/debian/?$' | head -1)
  [ -n "$uri" ] || { echo "peer: no Debian archive in /etc/apt sources (needed for apt-get source)" >&2; exit 1; }
  echo "${uri%/}"
}

debian_suite() {
  local suite
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$suite" ] || { echo "peer: cannot tell the Debian release from /etc/os-release" >&2; exit 1; }
  echo "$suite"
}

APT_OPTS=(-q -o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=$APT/parts"
          -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o "Debug::NoLocking=1"
          -o "APT::Sandbox::User=$(id -un)")

apt_ready() {
  [ -f "$APT/lists/.updated" ] && return
  mkdir -p "$APT/parts" "$APT/lists/partial" "$APT/cache/archives/partial"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  echo "deb-src [signed-by=$keyring] $(debian_mirror) $(debian_suite) main" > "$APT/sources.list"
  apt-get "${APT_OPTS[@]}" update >/dev/null
  touch "$APT/lists/.updated"
}

source_version() {
  apt-cache "${APT_OPTS[@]}" showsrc "$1" | awk '/^Version:/ {print $2; exit}'
}

# Unpack package $1 (with Debian's patches) under $SRC; prints the source tree's path.
fetch() {
  local pkg=$1 version dir
  version=$(source_version "$pkg")
  [ -n "$version" ] || { echo "peer: no source package $pkg" >&2; exit 1; }
  dir=$SRC/$pkg-$version
  if [ ! -f "$dir/.unpacked" ]; then
    rm -rf "$dir" "$SRC/dl-$pkg" && mkdir -p "$SRC/dl-$pkg"
    (cd "$SRC/dl-$pkg" && apt-get "${APT_OPTS[@]}" source --download-only "$pkg" >/dev/null &&
       dpkg-source -q -x --no-check ./*.dsc "$dir" >/dev/null)
    rm -rf "$SRC/dl-$pkg"
    touch "$dir/.unpacked"
  fi
  echo "$dir"
}

# Compile the C files given (after the flags, separated by --) in parallel into $OBJ; link with link().
compile() {
  local flags=() f
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  mkdir -p "$OBJ"
  for f in "$@"; do echo "$f"; done |
    xargs -P "$JOBS" -I{} sh -c 'cc=$1 obj=$2; shift 2; "$cc" '"$CFLAGS"' "$@" -c "{}" -o "$obj/$(echo "{}" | tr / _).o"' \
      sh "$CC" "$OBJ" "${flags[@]}" -w || exit 1
}
link() {  # link NAME [LIBS...]
  local name=$1; shift
  $CC $CFLAGS -o "$BIN/$name" "$OBJ"/*.o "$@"
}

build_lua() {
  cd "$1/src"
  # Debian's module-path patch includes a header its rules generate.
  printf '#define DEB_HOST_MULTIARCH "riscv64-linux-gnu"\n' > lua5.4-deb-multiarch.h
  compile -DLUA_USE_LINUX -- $(ls l*.c | grep -v -e '^luac.c$')
  link lua -lm
}

build_minigzip() {
  cd "$1"
  compile -I. -- adler32.c compress.c crc32.c deflate.c gzclose.c gzlib.c gzread.c gzwrite.c infback.c \
    inffast.c inflate.c inftrees.c trees.c uncompr.c zutil.c test/minigzip.c
  link minigzip
}

build_bzip2() {
  cd "$1"
  compile -D_FILE_OFFSET_BITS=64 -- blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c \
    bzlib.c bzip2.c
  link bzip2
}

build_lz4() {
  cd "$1"
  compile -Ilib -- lib/lz4.c lib/lz4hc.c lib/lz4frame.c lib/xxhash.c programs/*.c
  link lz4
}

build_zstd() {  # with its worker threads (ZSTD_MULTITHREAD): the suite's threaded program
  cd "$1"
  compile -Ilib -Ilib/common -DZSTD_MULTITHREAD -DZSTD_DISABLE_ASM -DZSTD_LEGACY_SUPPORT=0 -DZSTD_NOBENCH -- \
    lib/common/*.c lib/compress/*.c lib/decompress/*.c lib/dictBuilder/*.c \
    programs/zstdcli.c programs/util.c programs/timefn.c programs/fileio.c programs/fileio_asyncio.c \
    programs/dibio.c programs/zstdcli_trace.c programs/benchfn.c programs/benchzstd.c programs/datagen.c
  link zstd -pthread
}

build_sqlite3() {  # the shell on the amalgamation, made by SQLite's own host-side tools (tclsh)
  command -v tclsh >/dev/null || { echo "peer: sqlite3's amalgamation needs tclsh (Debian package tcl)" >&2; return 1; }
  cd "$1"
  if [ ! -f bld/sqlite3.c ]; then
    mkdir -p bld && (cd bld && ../configure -q --disable-tcl >/dev/null && make -s sqlite3.c shell.c >/dev/null)
  fi
  compile -Ibld -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -- bld/sqlite3.c bld/shell.c
  link sqlite3 -lm
}

build_pcre2grep() {
  cd "$1/src"
  cp -f config.h.generic config.h && cp -f pcre2.h.generic pcre2.h && cp -f pcre2_chartables.c.dist pcre2_chartables.c
  compile -DHAVE_CONFIG_H -DPCRE2_CODE_UNIT_WIDTH=8 -DSUPPORT_UNICODE -DHAVE_STRERROR -DHAVE_MEMMOVE \
    -DHAVE_DIRENT_H -DHAVE_SYS_STAT_H -DHAVE_SYS_TYPES_H -DHAVE_UNISTD_H -I. -- \
    pcre2_auto_possess.c pcre2_chartables.c pcre2_compile.c pcre2_config.c pcre2_context.c pcre2_convert.c \
    pcre2_dfa_match.c pcre2_error.c pcre2_extuni.c pcre2_find_bracket.c pcre2_maketables.c pcre2_match.c \
    pcre2_match_data.c pcre2_newline.c pcre2_ord2utf.c pcre2_pattern_info.c pcre2_script_run.c \
    pcre2_serialize.c pcre2_string_utils.c pcre2_study.c pcre2_substitute.c pcre2_substring.c pcre2_tables.c \
    pcre2_ucd.c pcre2_valid_utf.c pcre2_xclass.c pcre2grep.c
  link pcre2grep
}

build_jq() {  # jq's own sources with its generated parser; no oniguruma (the regex builtins report so)
  cd "$1"
  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' src/builtin.jq > src/builtin.inc
  echo '#define JQ_VERSION "1.6"' > src/version.h
  local libm="-DHAVE_ACOS -DHAVE_ASIN -DHAVE_ATAN -DHAVE_ATAN2 -DHAVE_CBRT -DHAVE_COS -DHAVE_EXP -DHAVE_EXP2
    -DHAVE_EXP10 -DHAVE_FLOOR -DHAVE_FABS -DHAVE_FMOD -DHAVE_LOG -DHAVE_LOG10 -DHAVE_LOG2 -DHAVE_POW -DHAVE_SIN
    -DHAVE_SQRT -DHAVE_TAN -DHAVE_TRUNC -DHAVE_CEIL -DHAVE_ROUND -DHAVE_FREXP -DHAVE_MODF -DHAVE_LDEXP
    -DHAVE_GMTIME_R -DHAVE_GMTIME -DHAVE_LOCALTIME_R -DHAVE_TIMEGM -DHAVE_STRPTIME -DHAVE_STRFTIME -DHAVE_MKTIME"
  compile -I. -Isrc -D_GNU_SOURCE -DHAVE_MEMMEM -DIEEE_8087 $libm -- \
    $(for f in builtin bytecode compile execute jq_test jv jv_alloc jv_aux jv_dtoa jv_file jv_parse jv_print \
      jv_unicode lexer linker locfile main parser util; do echo src/$f.c; done)
  link jq -lm
}

build_fftutil() {
  cd "$1"
  compile -I. -Dkiss_fft_scalar=float -- kiss_fft.c kiss_fftr.c kiss_fftnd.c kiss_fftndr.c tools/fftutil.c
  link fftutil -lm
}

main() {
  local programs=("$@") p pkg dir version stamp start
  [ ${#programs[@]} -gt 0 ] || read -r -a programs <<< "$ALL"
  command -v "$CC" >/dev/null || { echo "peer: $CC is missing (Debian package gcc-riscv64-linux-gnu)" >&2; exit 1; }
  local rules_hash
  for p in "${programs[@]}"; do
    # The program's own rules and the shared ones: editing one program's rules rebuilds only that program.
    rules_hash=$( { declare -f compile link "build_$p"; echo "$CC $CFLAGS"; } | sha256sum | cut -c1-16)
    pkg=${PACKAGE[$p]:-}
    [ -n "$pkg" ] || { echo "peer: unknown program $p (known: $ALL)" >&2; exit 1; }
    stamp="$OUT/stamps/$p"
    if [ -x "$BIN/$p" ] && [ -f "$stamp" ] && [ -f "$APT/lists/.updated" ] &&
       [ "$(cat "$stamp")" = "$rules_hash $(source_version "$pkg")" ]; then
      continue
    fi
    apt_ready
    start=$SECONDS
    dir=$(fetch "$pkg")
    version=$(source_version "$pkg")
    OBJ=$OUT/obj/$p
    rm -rf "$OBJ" "$BIN/$p"
    if ! ( "build_$p" "$dir" ) || [ ! -x "$BIN/$p" ]; then echo "peer: building $p failed" >&2; exit 1; fi
    mkdir -p "$OUT/stamps" && echo "$rules_hash $version" > "$stamp"
    echo "peer: built $p ($pkg $version) in $((SECONDS - start)) s"
  done
}

main "$@"
