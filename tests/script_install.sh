#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds the quick start
# against it twice, through find_package(rmadht) and through pkg-config, and
# a program written for POET's DHT.h twice, through rmadht::poet and through
# pkg-config rmadht-poet, and POET's C++ use of it where a C++ compiler is
# found, and runs them all on 2 ranks.  Checks that
# librmadht_poet exports POET's names and nothing else.
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
# Nothing but the programs' and libraries' own run paths finds the
# libraries of a prefix outside the system's: a program built with
# pkg-config names its run path as a user would.
unset LD_LIBRARY_PATH
"$mpicc" -o "$tmp/pc_quickstart" "$src/examples/quickstart.c" \
  $(pkg-config --cflags rmadht) $(pkg-config --libs rmadht) -Wl,-rpath,"$libdir"
"$mpiexec" -n 2 "$tmp/cmake/quickstart"
"$mpiexec" -n 2 "$tmp/pc_quickstart"

# A POET-style program: it includes "DHT.h" and knows nothing of rmadht.
mkdir -p "$tmp/poet"
cat > "$tmp/poet/poet_user.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "DHT.h"
static uint64_t hash(int n, const void *key) {
  uint64_t h = 14695981039346656037u;
  for (int i = 0; i < n; i++) h = (h ^ ((const unsigned char *)key)[i]) * 1099511628211u;
  return h;
}
static int add(int in_size, void *in, int out_size, void *out) {
  (void)in_size; (void)out_size;
  *(int *)out += *(int *)in;
  return 0;
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n, fail = 0, one = 1, ret, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  DHT *d = DHT_create(MPI_COMM_WORLD, 1000, sizeof(int), 8, hash);
  if (!d) MPI_Abort(MPI_COMM_WORLD, 1);
  char key[8] = "counter";
  uint32_t proc, index;
  DHT_set_accumulate_callback(d, add);
  fail |= DHT_write_accumulate(d, key, sizeof one, &one, &proc, &index,
                               &ret) != DHT_SUCCESS || ret != 0;
  MPI_Barrier(MPI_COMM_WORLD);
  fail |= DHT_read_location(d, proc, index, &sum) != DHT_SUCCESS || sum != n;
  fail |= DHT_free(d, NULL, NULL) != DHT_SUCCESS;
  if (fail) printf("poet_user: rank %d failed\n", rank);
  MPI_Finalize();
  return fail;
}
C
# POET is C++ and includes the header inside extern "C"; with POET_PHT_ADD
# it saves and restores the callback member itself, and its proximity table
# sizes buffers from key_size and data_size.
cat > "$tmp/poet/poet_pht.cpp" <<'CXX'
extern "C" {
#include "DHT.h"
}
static int one(int, void *, int, void *out) { ++*static_cast<int *>(out); return 0; }
static int two(int, void *, int, void *out) { *static_cast<int *>(out) += 2; return 0; }
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  DHT *d = DHT_create(MPI_COMM_WORLD, 100, sizeof(int), 4,
                      [](int, const void *k) { return (uint64_t)*(const int *)k; });
  bool sizes = d->key_size / sizeof(int) == 1 && d->data_size == sizeof(int);
  DHT_set_accumulate_callback(d, one);
  auto *saved = d->accumulate_callback;
  DHT_set_accumulate_callback(d, two);
  int key = 5, ret = -1, got = 0;
  DHT_write_accumulate(d, &key, 0, nullptr, nullptr, nullptr, &ret);
  DHT_set_accumulate_callback(d, saved);
  DHT_write_accumulate(d, &key, 0, nullptr, nullptr, nullptr, &ret);
  int rank, n, fail;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Barrier(MPI_COMM_WORLD);
  fail = DHT_read(d, &key, &got) != DHT_SUCCESS || got != 3 * n || !sizes;
  DHT_free(d, nullptr, nullptr);
  MPI_Finalize();
  return fail;
}
CXX
cat > "$tmp/poet/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(poet_user C)
find_package(rmadht REQUIRED)
add_executable(poet_user poet_user.c)
target_link_libraries(poet_user PRIVATE rmadht::poet)
add_executable(poet_user_static poet_user.c)
target_link_libraries(poet_user_static PRIVATE rmadht::poet_static)
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  add_executable(poet_pht poet_pht.cpp)
  target_compile_definitions(poet_pht PRIVATE OMPI_SKIP_MPICXX)
  target_link_libraries(poet_pht PRIVATE rmadht::poet)
endif()
CM
cmake -S "$tmp/poet" -B "$tmp/poet/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DMPI_C_COMPILER="$mpicc" > /dev/null
cmake --build "$tmp/poet/b" > /dev/null
"$mpicc" -o "$tmp/pc_poet_user" "$tmp/poet/poet_user.c" \
  $(pkg-config --cflags rmadht-poet) $(pkg-config --libs rmadht-poet) \
  -Wl,--as-needed -Wl,-rpath,"$libdir"
# --as-needed records librmadht_poet alone: its own run path finds
# librmadht beside it.
if readelf -d "$tmp/pc_poet_user" | grep -q 'librmadht\.so'; then
  echo "pc_poet_user records librmadht: --as-needed not in effect" >&2
  exit 1
fi
"$mpiexec" -n 2 "$tmp/poet/b/poet_user"
"$mpiexec" -n 2 "$tmp/poet/b/poet_user_static"
if [ -x "$tmp/poet/b/poet_pht" ]; then "$mpiexec" -n 2 "$tmp/poet/b/poet_pht"
else echo "poet_pht: skipped, no C++ compiler"; fi
"$mpiexec" -n 2 "$tmp/pc_poet_user"

# The archives through pkg-config --static, beside a program that defines
# functions named as the libraries' internals: the archives keep those
# local (cmake/localize.cmake), so the program links and the library still
# calls its own.
cat > "$tmp/clash.c" <<'C'
int slot_fill(void) { return 1; }
int search_key(void) { return 2; }
int interp_linear(void) { return 3; }
int rmadht_place(void) { return 4; }
int poet_table_create(void) { return 5; }
C
static_libs() { pkg-config --static --libs "$1" | sed 's/-l\(rmadht[a-z_]*\)/-l:lib\1.a/g'; }
"$mpicc" -o "$tmp/pc_quickstart_static" "$src/examples/quickstart.c" "$tmp/clash.c" \
  $(pkg-config --cflags rmadht) $(static_libs rmadht)
"$mpicc" -o "$tmp/pc_poet_user_static" "$tmp/poet/poet_user.c" "$tmp/clash.c" \
  $(pkg-config --cflags rmadht-poet) $(static_libs rmadht-poet)
"$mpiexec" -n 2 "$tmp/pc_quickstart_static"
"$mpiexec" -n 2 "$tmp/pc_poet_user_static"

# The two dialects exclude each other.
printf '#include "DHT.h"\n#include <rmadht_poet.h>\n' > "$tmp/poet/both.c"
if "$mpicc" -fsyntax-only $(pkg-config --cflags rmadht-poet) \
     "$tmp/poet/both.c" 2> /dev/null; then
  echo "both POET headers compiled together" >&2
  exit 1
fi

# Exactly the names of rmadht/poet/DHT.h and the renamed 2021 calls.
want="DHT_create DHT_flush DHT_free DHT_from_file DHT_get_used_idx_factor
DHT_print_statistics DHT_read DHT_read_location DHT_set_accumulate_callback
DHT_to_file DHT_write DHT_write_accumulate rmadht_poet2021_create
rmadht_poet2021_free rmadht_poet2021_from_file rmadht_poet2021_read
rmadht_poet2021_to_file rmadht_poet2021_write"
got=$(nm -D --defined-only "$libdir/librmadht_poet.so" |
      awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')
if [ "$got" != "$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')" ]; then
  echo "librmadht_poet exports: $got" >&2
  exit 1
fi
echo "install: find_package and pkg-config builds ran, POET's included"
