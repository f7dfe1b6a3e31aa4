#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds the quick start
# against it twice, through find_package(rmadht) and through pkg-config,
# and runs both on 2 ranks.
set -euo pipefail
src=$1 build=$2 mpicc=$3 mpiexec=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
cmake -S "$src/examples" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DMPI_C_COMPILER="$mpicc" > /dev/null
cmake --build "$tmp/cmake" > /dev/null
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -n 1)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
"$mpicc" -o "$tmp/pc_quickstart" "$src/examples/quickstart.c" \
  $(pkg-config --cflags rmadht) $(pkg-config --libs rmadht)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$mpiexec" -n 2 "$tmp/cmake/quickstart"
"$mpiexec" -n 2 "$tmp/pc_quickstart"
echo "install: find_package and pkg-config builds ran"
