#!/usr/bin/env bash
# build.sh SOURCE MPI OUTDIR: builds the reference table (the MPI-DHT of
# Lübke et al. 2024, a checkout of sobc/MPI-DHT at SOURCE) with its own
# CMake against MPI (openmpi or mpich), as rmadht is built (RelWithDebInfo),
# then driver.c once per variant of it: OUTDIR/rmadht-reference-driver-V
# for V in nolock, coarse, fine, accumulate.  The reference is read and
# linked, never copied into rmadht.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$(cd "$here/.." && pwd)
src=$1 mpi=$2 out=$3
[ -f "$src/include/LUCX/MPI/DHT.h" ] ||
  { echo "build.sh: $src is not a checkout of sobc/MPI-DHT (no include/LUCX/MPI/DHT.h)" >&2; exit 1; }
mkdir -p "$out"
log=$out/reference-build.log
variants=(nolock coarse fine accumulate)
if ! { cmake -S "$src" -B "$out/reference-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DMPI_C_COMPILER="mpicc.$mpi" &&
       cmake --build "$out/reference-build" -j 2 --target "${variants[@]}"; } > "$log" 2>&1; then
  tail -20 "$log" >&2
  echo "build.sh: the reference did not build against $mpi (log: $log)" >&2
  exit 1
fi
for v in "${variants[@]}"; do
  lib=$(find "$out/reference-build" -name "lib$v.a" | head -1)
  [ -n "$lib" ] || { echo "build.sh: no lib$v.a in $out/reference-build" >&2; exit 1; }
  "mpicc.$mpi" -O2 -std=c11 -o "$out/rmadht-reference-driver-$v" "$here/driver.c" \
    "$bench/workload.c" "$bench/rma_count.c" -I"$src/include" -I"$bench" "$lib" -lxxhash -lm
done
