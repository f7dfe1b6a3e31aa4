#!/usr/bin/env bash
# The figures of docs/benchmarks/one-node.md: rmadht-bench on 2 ranks
# under both MPIs, all modes with single calls, lock-free with batches of
# 128, lock-free again on RMA (--rma, the path of a table spanning nodes), the in-process
# baseline, and what one MPI_Get costs (rmadht-rma-cost).  Extra arguments
# go to every rmadht-bench run (for example --scale 0.2 for a quick look).
# JSON lines land in bench-results/.
set -euo pipefail
build=${1:-build}
shift || true
out=bench-results
mkdir -p "$out"
for mpi in openmpi mpich; do
  bench=$build/$mpi/bench/rmadht-bench
  run="mpiexec.$mpi -n 2 $bench $*"
  {
    $run --local
    $run
    $run --mode lockfree --batch 128
    $run --mode lockfree --rma
    $run --mode lockfree --rma --batch 128
  } > "$out/$mpi.jsonl"
  mpiexec.$mpi -n 2 $build/$mpi/bench/rmadht-rma-cost > "$out/$mpi-rma-cost.jsonl"
done
python3 tools/bench_table.py "$out"/openmpi.jsonl "$out"/mpich.jsonl \
  "$out"/openmpi-rma-cost.jsonl "$out"/mpich-rma-cost.jsonl
