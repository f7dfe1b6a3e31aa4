#!/usr/bin/env bash
# build.sh PREFIX WORK MPI POET: builds POET 0.4 twice in WORK, once with
# its own DHT.c and once against the rmadht installed in PREFIX, exactly as
# docs/howto/poet.md tells a POET user (remove DHT.c and DHT.h,
# find_package(rmadht), link rmadht::poet), with MPI (openmpi or mpich).
# POET is the tarball poet-0.4-src.tar.gz or an unpacked tree holding
# POET/ and CLI11/.  One build
# tree serves both: PHREEQC and tug are built once, and the second build
# recompiles only what includes DHT.h.  Leaves WORK/bin/poet-own,
# WORK/bin/poet-rmadht and WORK/bin/poet_init.  POET is GPL-2.0-or-later:
# it is built here, never copied into rmadht.
set -euo pipefail
prefix=$1 work=$2 mpi=$3
if [ -x "$work/bin/poet-own" ] && [ -x "$work/bin/poet-rmadht" ] &&
   [ -z "$(find "$prefix" -type f -newer "$work/bin/poet-rmadht" | head -n 1)" ]; then
  echo "poet: both builds are up to date"
  exit 0
fi
poet=$4
mkdir -p "$work/bin"
src=$work/src
if [ ! -d "$src/POET" ]; then
  rm -rf "$src.tmp" && mkdir -p "$src.tmp"
  if [ -d "$poet" ]; then cp -a "$poet/POET" "$poet/CLI11" "$src.tmp/"
  else tar xzf "$poet" -C "$src.tmp"; fi
  mv "$src.tmp" "$src"
fi
surr=$src/POET/src/Chemistry/SurrogateModels
configure() { # the options POET's offline build needs (snapshot README)
  cmake -S "$src/POET" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DPOET_PREPROCESS_BENCHS=OFF \
    -DFETCHCONTENT_SOURCE_DIR_CLI11="$src/CLI11" \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DMPI_C_COMPILER="mpicc.$mpi" -DMPI_CXX_COMPILER="mpicxx.$mpi" \
    -DCMAKE_PREFIX_PATH="$prefix" "$@" > "$work/configure.log"
}
jobs=${JOBS:-2}
if [ ! -x "$work/bin/poet-own" ]; then
  [ -f "$surr/DHT.c" ] || { echo "build.sh: $src is patched already; remove $work" >&2; exit 1; }
  echo "poet: building POET with its own DHT (PHREEQC included: minutes)"
  configure
  cmake --build "$work/build" -j "$jobs" --target poet poet_init > "$work/build-own.log"
  cp "$work/build/src/poet" "$work/bin/poet-own"
  cp "$work/build/src/poet_init" "$work/bin/poet_init"
fi
# The build change of docs/howto/poet.md, applied to POET's sources.
if [ -f "$surr/DHT.c" ]; then
  rm "$surr/DHT.c" "$surr/DHT.h"
  sed -i -e '/^  Chemistry\/SurrogateModels\/DHT\.c *$/d' \
    -e 's/^add_library(POETLib$/find_package(rmadht 0.1 REQUIRED)\n&/' \
    -e 's/^  PUBLIC MPI::MPI_C$/&\n  PUBLIC rmadht::poet/' \
    "$src/POET/src/CMakeLists.txt"
  grep -q 'PUBLIC rmadht::poet' "$src/POET/src/CMakeLists.txt" &&
    grep -q '^find_package(rmadht' "$src/POET/src/CMakeLists.txt" || {
      echo "build.sh: POET's src/CMakeLists.txt did not take the change" >&2
      exit 1; }
fi
echo "poet: building POET against rmadht in $prefix"
configure
cmake --build "$work/build" -j "$jobs" --target poet > "$work/build-rmadht.log"
cp "$work/build/src/poet" "$work/bin/poet-rmadht"
