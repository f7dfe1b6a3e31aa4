#!/usr/bin/env bash
# MPI-DHT's own test program (test/testReadWriteMPI.c of Lübke et al.'s
# MPI-DHT), built unchanged against the installed librmadht_mpidht, only
# its include path and link line changed: through pkg-config rmadht-mpidht
# and through find_package(rmadht) with rmadht::mpidht and
# rmadht::mpidht_static.  Every rank must print OK, at 1, 2 and 4 ranks.
# Also a C++ program that includes the header inside extern "C", as POET
# would, where CMake finds a C++ compiler.
# MPI-DHT is GPL and never part of this repository: the checkout comes from
# $MPIDHT, else from ../shared/mpi-dht* beside the source tree; without one
# the test is skipped (exit 77) and says why.  No LD_LIBRARY_PATH: the
# program's run path finds librmadht_mpidht, whose own finds librmadht.
set -euo pipefail
src=$1 build=$2 mpicc=$3 mpiexec=$4

checkout=${MPIDHT:-}
if [ -z "$checkout" ]; then
  for d in "$(dirname "$src")"/shared/mpi-dht* "$(dirname "$src")"/shared/MPI-DHT*; do
    if [ -d "$d" ]; then checkout=$d; break; fi
  done
fi
prog=${checkout:+$checkout/test/testReadWriteMPI.c}
if [ -z "$checkout" ] || [ ! -f "$prog" ]; then
  echo "skipped: no MPI-DHT checkout (set MPIDHT to one, e.g. a clone of" \
       "https://github.com/sobc/MPI-DHT, or put it at ../shared/mpi-dht)"
  exit 77
fi
if ! pkg-config --exists libxxhash; then
  echo "skipped: MPI-DHT's test needs xxhash (libxxhash-dev), not found"
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -n 1)
libdir=${libdir%/}
export PKG_CONFIG_PATH="$libdir/pkgconfig"
dyn=$(readelf -d "$libdir/librmadht_mpidht.so")
if ! grep -q 'R[UN]*PATH.*\$ORIGIN' <<< "$dyn"; then
  echo "installed librmadht_mpidht.so has no \$ORIGIN run path" >&2
  exit 1
fi

"$mpicc" -o "$tmp/pc_test" "$prog" $(pkg-config --cflags rmadht-mpidht) \
  $(pkg-config --cflags --libs libxxhash) $(pkg-config --libs rmadht-mpidht) \
  -Wl,-rpath,"$libdir"

mkdir -p "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(mpidht_test C)
find_package(rmadht REQUIRED COMPONENTS mpidht)
add_executable(cm_test "$prog")
target_link_libraries(cm_test PRIVATE rmadht::mpidht PkgConfig::XXHASH)
add_executable(cm_test_static "$prog")
target_link_libraries(cm_test_static PRIVATE rmadht::mpidht_static
  PkgConfig::XXHASH)
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  add_executable(cm_cxx cxx_user.cpp)
  target_compile_definitions(cm_cxx PRIVATE OMPI_SKIP_MPICXX)
  target_link_libraries(cm_cxx PRIVATE rmadht::mpidht)
endif()
CM
# POET, MPI-DHT's other user, is C++ and includes the header inside
# extern "C".
cat > "$tmp/cm/cxx_user.cpp" <<'CXX'
extern "C" {
#include <LUCX/MPI/DHT.h>
}
static int add(int, void *in, int, void *out) {
  *static_cast<int *>(out) += *static_cast<int *>(in);
  return 0;
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  DHT_init_t init = {sizeof(int), sizeof(int), 100,
                     [](int, const void *k) { return (uint64_t)*(const int *)k; },
                     MPI_COMM_WORLD};
  DHT *d = DHT_create(&init);
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  DHT_set_accumulate_callback(d, add);
  int key = 3, one = 1, got = 0, n;
  DHT_write_accumulate(d, &key, sizeof one, &one, nullptr, nullptr, nullptr);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Barrier(MPI_COMM_WORLD);
  bool ok = DHT_read(d, &key, &got) == DHT_SUCCESS && got == n;
  ok = DHT_free(d, nullptr) == DHT_SUCCESS && ok;
  MPI_Finalize();
  return ok ? 0 : 1;
}
CXX
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DMPI_C_COMPILER="$mpicc" > /dev/null
cmake --build "$tmp/cm/b" > /dev/null

run() { # program, ranks: every rank prints "Rank r: OK!", none FAILURE
  local exe=$1 n=$2 out
  out=$("$mpiexec" -n "$n" "$exe")
  grep -E 'Rank|Evicted|Read:|Checksum' <<< "$out" | sort
  for ((r = 0; r < n; r++)); do
    if ! grep -qx "Rank $r: OK!" <<< "$out"; then
      echo "$(basename "$exe") on $n ranks: rank $r did not print OK" >&2
      exit 1
    fi
  done
  if grep -q FAILURE <<< "$out"; then
    echo "$(basename "$exe") on $n ranks: FAILURE" >&2
    exit 1
  fi
}
for n in 1 2 4; do run "$tmp/pc_test" "$n"; done
run "$tmp/cm/b/cm_test" 2
run "$tmp/cm/b/cm_test_static" 4
if [ -x "$tmp/cm/b/cm_cxx" ]; then "$mpiexec" -n 2 "$tmp/cm/b/cm_cxx"
else echo "cm_cxx: skipped, no C++ compiler"; fi
echo "MPI-DHT's testReadWriteMPI.c ($checkout) built unchanged against" \
     "rmadht-mpidht and rmadht::mpidht(_static): OK on every rank"
