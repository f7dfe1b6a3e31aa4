#!/usr/bin/env bash
# build.sh OUT: rmadht-bench, rmadht-rma-cost and the SMPI fault programs
# built with SimGrid's smpicc into OUT, for simulated runs (run.sh).  The
# library's sources are compiled as they are (SMPI_H is defined there, but
# nothing in src/ looks at it); the SMPI fixes (smpi_fixes.c) are linked
# into the benchmark only.  With MPIDHT=DIR (a checkout of sobc/MPI-DHT)
# also the reference's driver, one per variant, as bench/reference/build.sh
# does for real MPIs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$1
mkdir -p "$out/obj"
command -v smpicc > /dev/null || { echo "build.sh: no smpicc (apt-get install libsimgrid-dev)" >&2; exit 1; }
cflags=(-O2 -std=c11 -w -I"$root/include" -I"$root/src" -I"$root/bench" -I"$here")
objs=()
# An object is rebuilt when its source or any header is newer.
newest_h=$(ls -t "$root"/include/*.h "$root"/src/*.h "$root"/src/cache/*.h | head -1)
for f in "$root"/src/*.c "$root"/src/cache/*.c; do
  o=$out/obj/$(basename "$(dirname "$f")")-$(basename "$f" .c).o
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ "$newest_h" -nt "$o" ]; then
    smpicc "${cflags[@]}" -I"$root/src/cache" -c "$f" -o "$o"
  fi
  objs+=("$o")
done
b=$root/bench
smpicc "${cflags[@]}" -o "$out/rmadht-bench" "$b/rmadht_bench.c" "$b/workload.c" \
  "$b/local_table.c" "$b/rma_count.c" "$here/smpi_fixes.c" "${objs[@]}" -lxxhash -lm -lpthread
smpicc "${cflags[@]}" -o "$out/rmadht-rma-cost" "$b/rma_cost.c"
for f in "$here"/faults/*.c; do
  smpicc "${cflags[@]}" -o "$out/fault-$(basename "$f" .c)" "$f"
done
if [ -n "${MPIDHT:-}" ]; then
  [ -f "$MPIDHT/include/LUCX/MPI/DHT.h" ] ||
    { echo "build.sh: $MPIDHT is not a checkout of sobc/MPI-DHT" >&2; exit 1; }
  mkdir -p "$out/reference"
  # The reference's MPI variants as its src/CMakeLists.txt defines them:
  # the same sources, one definition each.
  declare -A def=([nolock]=LUCX_MPI_NO_LOCK [coarse]=LUCX_MPI_OLD
                  [fine]=LUCX_MPI_FINE_LOCK [accumulate]=LUCX_MPI_ACC)
  for v in nolock coarse fine accumulate; do
    smpicc "${cflags[@]}" -DLUCX_MPI_IMPL -D"${def[$v]}" -I"$MPIDHT/include" \
      -o "$out/reference/rmadht-reference-driver-$v" "$b/reference/driver.c" \
      "$b/workload.c" "$b/rma_count.c" "$here/smpi_fixes.c" "$MPIDHT"/src/mpi/*.c \
      -lxxhash -lm
  done
fi
