#!/usr/bin/env bash
# smoke.sh BUILD: the simulated benchmark on 64 ranks of an InfiniBand-like
# fat tree, a few seconds: lock-free, uniform, few operations, as single
# calls, single calls with a write queue of 8, and batches of 16; and the
# coarse mode's single calls, whose exact totals need the exclusive-lock
# fix of smpi_fixes.c.  The
# simulation is deterministic (no computation is benchmarked), and
# rmadht-bench fails on any lost update or give-up, so this checks exact
# totals under SMPI.  Part of `make test` (test-smpi).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/fat_tree.py" ib 64 0.4838 "$tmp/p.xml"
# The settings of run.sh, which says why.
sg=(--cfg=smpi/simulate-computation:no --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1
    --cfg=smpi/iprobe:0 --cfg=smpi/wtime:1e-7 --cfg=smpi/coll-selector:mpich
    --log=root.thres:warning --log=smpi_mpi.thres:error)
for run in "lockfree 1 0" "lockfree 1 8" "lockfree 16 0" "coarse 1 0"; do
  read -r mode batch queue <<< "$run"
  timeout 300 smpirun -np 64 -platform "$tmp/p.xml" -hostfile "$tmp/p.xml.hosts" "${sg[@]}" \
    "$build/rmadht-bench" --rma --mode "$mode" --dist uniform --batch "$batch" \
    --write-queue "$queue" --write-ops 32 --mixed-ops 32 --contended-ops 4 --keys 4096 --mb-per-rank 1 \
    > "$tmp/out" 2> "$tmp/err" || { grep -v '^\[' "$tmp/err" | tail -5; exit 1; }
  phases=$(grep -c '"ok": true' "$tmp/out" || true)
  [ "$phases" -eq 2 ] || { echo "smoke.sh: $mode, batch $batch, queue $queue: $phases of 2 update phases exact" >&2; exit 1; }
  # Every phase's operations but the cache phase's, whose writes are what
  # its reads missed; that phase must have run.
  ops=$(python3 -c 'import json,sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert sum(r["phase"] == "cache" for r in rows) == 1
print(sum(r["ops"] for r in rows if r["phase"] != "cache"))' "$tmp/out") ||
    { echo "smoke.sh: no cache phase" >&2; exit 1; }
  [ "$ops" -eq $((64 * (32 + 32 + 32 + 32 + 4))) ] || { echo "smoke.sh: $ops operations" >&2; exit 1; }
  echo "test-smpi: 64 simulated ranks, $mode, batch $batch, write queue $queue: 6 phases, $ops operations, no update lost"
done
