#!/usr/bin/env bash
# single.sh BUILD REFERENCE-SRC [RUNS [PPN]]: single lock-free operations
# between two emulated hosts (hosts.sh), rmadht against the reference
# (MPI-DHT nolock, a checkout of sobc/MPI-DHT at REFERENCE-SRC, built by
# bench/reference/build.sh), PPN ranks per host (default 1), under Open MPI
# (osc/pt2pt) and MPICH: RUNS (default 3) runs of each back to back,
# alternating, then the median Mops/s, round trips and bytes got per
# operation of the write, read and cache phases (rmadht-bench --mode
# lockfree --batch 1 --scale 0.2, without and with a write queue of 64,
# and the reference's driver on the same keys; with 2 ranks per host
# scaled as oversubscribed.sh says).  rmadht takes its default path, as a
# user's table does: with 2 ranks per host it reads the other rank on its
# host by loads.  JSON lines in bench-results/single/.
# docs/benchmarks/single-operations.md.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$1 src=$2 runs=${3:-3} ppn=${4:-1}
hosts=$here/hosts.sh
# shellcheck source=tools/hosts/oversubscribed.sh
. "$here/oversubscribed.sh"
why=$("$hosts" can) || { echo "SKIP single operations between hosts: $why"; exit 0; }
export RMADHT_HOSTS_SET=${RMADHT_HOSTS_SET:-rmadht-single}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$hosts" up 2 > /dev/null || exit 1
trap '"$hosts" down > /dev/null' EXIT
out=$root/bench-results/single
mkdir -p "$out"
uptime
log=$(mktemp)
# shellcheck source=tools/hosts/run_bounded.sh
. "$here/run_bounded.sh"
# Runs PROGRAM on the hosts until it has printed NEED JSON lines and prints
# them; a hang in MPI_Finalize after them is stopped 5 s later.
run() {
  local need=$1 secs=$2; shift 2
  run_phases "$need" 5 "$secs" "$mpi" "$ppn" "$@"
  grep '^{' "$log"
}
for mpi in openmpi mpich; do
  drivers=$root/$build/$mpi/reference
  bash "$root/bench/reference/build.sh" "$src" "$mpi" "$drivers" || exit 1
  scale=0.2
  [ "$mpi" = openmpi ] && export RMADHT_HOSTS_OMPI_ARGS="--mca osc sm,pt2pt"
  if [ "$ppn" -gt 1 ]; then
    scale=$(oversubscribed_scale "$mpi")
    [ "$mpi" = openmpi ] && RMADHT_HOSTS_OMPI_ARGS+=" $oversubscribed_ompi_args"
  fi
  file=$out/$mpi-$ppn-per-host.jsonl
  : > "$file"
  for r in $(seq "$runs"); do
    run 3 120 "$drivers/rmadht-reference-driver-nolock" lockfree \
      "$(reference_ops "$scale")" >> "$file"
    for q in 0 64; do
      run 6 240 "$root/$build/$mpi/bench/rmadht-bench" --mode lockfree --dist uniform \
        --batch 1 --scale "$scale" --write-queue $q |
        sed 's/^{/{"implementation": "rmadht", /' >> "$file"
    done
  done
done
rm -f "$log" "$log.err"
uptime
python3 - "$out" "$ppn" <<'EOF'
import json, statistics, sys
print(f"{sys.argv[2]} rank(s) per host, medians\n")
print("| MPI | phase | reference Mops/s | rmadht Mops/s | rmadht, write queue 64 "
      "| round trips/op (ref, rmadht, queue) | bytes got/op (ref, rmadht) |")
print("|---|---|---|---|---|---|---|")
for mpi in ("openmpi", "mpich"):
    rows = [json.loads(l) for l in open(f"{sys.argv[1]}/{mpi}-{sys.argv[2]}-per-host.jsonl")]
    for phase in ("write", "read", "cache"):
        got = {}
        for impl, queue in (("reference", 0), ("rmadht", 0), ("rmadht", 64)):
            rs = [r for r in rows if r["implementation"] == impl and r["phase"] == phase
                  and r.get("write_queue", 0) == queue]
            got[impl, queue] = (statistics.median(r["ops"] / r["seconds"] / 1e6 for r in rs),
                                statistics.median(r["round_trips_per_op"] for r in rs),
                                statistics.median(r["bytes_got_per_op"] for r in rs))
        ref, own, q = got["reference", 0], got["rmadht", 0], got["rmadht", 64]
        print(f"| {mpi} | {phase} | {ref[0]:.3g} | {own[0]:.3g} ({own[0] / ref[0]:.2f}x) "
              f"| {q[0]:.3g} ({q[0] / ref[0]:.2f}x) | {ref[1]:.2f}, {own[1]:.2f}, {q[1]:.2f} "
              f"| {ref[2]:.0f}, {own[2]:.0f} |")
EOF
