#!/usr/bin/env bash
# bench.sh BUILD [ARGS...]: rmadht's speed between two emulated hosts
# (hosts.sh), under Open MPI (osc/pt2pt) and MPICH.  1 rank per host:
# rmadht-bench --rma for every mode, single calls and --batch 128, uniform
# keys, lock-free single calls also with a write queue of 64, then
# rmadht-rma-cost; 2 ranks per host (every mode, single and
# batch), oversubscribed: 4 busy-polling ranks on a 2-core machine, with
# --scale $RMADHT_BENCH_OVERSUBSCRIBED_SCALE (0.02 under Open MPI, 0.002
# under MPICH, whose round trips wait for the target to be scheduled).
# ARGS go to every rmadht-bench run (default --scale 0.2: 100,000 writes
# and reads per rank).  Each run on the hosts is repeated on one node (2
# ranks, RMA through shared memory) for tools/latency_model.py.  JSON lines land in
# bench-results/hosts/, each with the load average when its run started
# and the ranks per host; a summary table is printed.
# With RMADHT_REFERENCE_SRC set to a checkout of sobc/MPI-DHT (Lübke et
# al. 2024's table), each MPI's runs start with the reference's four
# variants on the same workload and hosts (bench/reference/), into
# reference-MPI.jsonl and reference-MPI-one-node.jsonl.
# Skips, saying why, where this machine cannot make emulated hosts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$1; shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--scale 0.2)
# shellcheck source=tools/hosts/oversubscribed.sh
. "$here/oversubscribed.sh"
# The reference runs as many writes and reads per rank as rmadht-bench's
# --scale gives it.
scale=0.2
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
  [ "${args[i]}" = --scale ] && scale=${args[i + 1]}
done
reference_ops=$(reference_ops "$scale")
hosts=$here/hosts.sh
if ! why=$("$hosts" can); then
  echo "SKIP benchmark between hosts: $why"
  exit 0
fi
# A set of hosts of its own, so that a test run (test.sh) can go on beside.
export RMADHT_HOSTS_SET=${RMADHT_HOSTS_SET:-rmadht-bench}
exec 9> "/run/$RMADHT_HOSTS_SET-hosts.lock"
flock -n 9 || { echo "bench.sh: another run uses these hosts" >&2; exit 1; }
export RMADHT_HOSTS_HOLDER=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$hosts" up 2 || exit 1
# shellcheck source=tools/hosts/run_bounded.sh
. "$here/run_bounded.sh"
# Stopped or done: end the run under way, then the hosts.
trap '[ -n "$run_bounded_pid" ] && kill -- "$run_bounded_pid" 2> /dev/null; "$hosts" down' EXIT
trap 'exit 1' INT TERM
out=$root/bench-results/hosts
mkdir -p "$out"
limit=${RMADHT_HOSTS_TIMEOUT:-180}
log=$(mktemp)
failed=0

# Runs PROGRAM on PPN ranks per host until it has printed NEED JSON lines
# (run_bounded.sh: a run that printed every line and then hangs in
# MPI_Finalize is stopped after 15 s and counted complete), and appends
# them to FILE, each with the load average at the start and the ranks per
# host.
run() {
  local file=$1 need=$2 ppn=$3; shift 3
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  run_phases "$need" 15 "$limit" "$mpi" "$ppn" "$@"
  [ "$run_bounded_hung" = 1 ] && echo "  (MPI_Finalize hung after the last phase; stopped)"
  local got; got=$(grep -c '^{' "$log")
  sed -n "s/^{/{\"load_average\": $load, \"ranks_per_host\": $ppn, /p" "$log" >> "$file"
  printf '%-7s %d/host %-44s %d/%d phases  %4ds  load %s\n' "$mpi" "$ppn" \
    "$(basename "$1") ${*:2}" "$got" "$need" $((SECONDS - start)) "$load"
  if [ "$got" -lt "$need" ]; then
    failed=$((failed + 1))
    { grep "failed" "$log.err" || tail -5 "$log.err"; } | head -5 | sed 's/^/    /'
  fi
}

# The same runs on one node, 2 ranks, RMA through shared memory: the
# software cost without a network (tools/latency_model.py).
one_node() {
  local file=$1; shift
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  local launch=(mpiexec.mpich)
  [ "$mpi" = openmpi ] && launch=(mpiexec.openmpi --bind-to none $ompi_args)
  timeout -k 5 "$limit" "${launch[@]}" -n 2 "$@" 2> /dev/null |
    sed -n "s/^{/{\"load_average\": $load, \"ranks_per_host\": 2, \"one_node\": true, /p" \
    >> "$file"
}

for mpi in openmpi mpich; do
  bench=$root/$build/$mpi/bench/rmadht-bench
  cost=$root/$build/$mpi/bench/rmadht-rma-cost
  [ -x "$bench" ] || { echo "bench.sh: no $bench (make build-$mpi)" >&2; exit 1; }
  # sm serves windows within a host, pt2pt those between hosts over TCP.
  ompi_args="--mca osc sm,pt2pt"
  [ "$mpi" = openmpi ] && export RMADHT_HOSTS_OMPI_ARGS=$ompi_args
  rm -f "$out/$mpi"{,-rma-cost,-oversubscribed,-one-node}.jsonl
  if [ -n "${RMADHT_REFERENCE_SRC:-}" ]; then
    drivers=$root/$build/$mpi/reference
    bash "$root/bench/reference/build.sh" "$RMADHT_REFERENCE_SRC" "$mpi" "$drivers" || exit 1
    rm -f "$out/reference-$mpi"{,-one-node}.jsonl
    for variant in nolock:lockfree coarse:coarse fine:fine accumulate:accumulate; do
      start=$SECONDS
      driver=$drivers/rmadht-reference-driver-${variant%%:*}
      run "$out/reference-$mpi.jsonl" 3 1 "$driver" "${variant##*:}" "$reference_ops"
      one_node "$out/reference-$mpi-one-node.jsonl" "$driver" "${variant##*:}" "$reference_ops"
    done
  fi
  for mode in lockfree fine coarse; do
    for batch in 1 128; do
      # Single lock-free writes also queued, as a cache that does not batch
      # would run them (design.md "Queued writes").
      queues=(0)
      [ "$mode/$batch" = lockfree/1 ] && queues=(0 64)
      for queue in "${queues[@]}"; do
        start=$SECONDS
        run "$out/$mpi.jsonl" 6 1 "$bench" --rma --mode "$mode" --dist uniform \
          --batch "$batch" --write-queue "$queue" "${args[@]}"
        one_node "$out/$mpi-one-node.jsonl" "$bench" --rma --mode "$mode" \
          --dist uniform --batch "$batch" --write-queue "$queue" "${args[@]}"
      done
    done
  done
  start=$SECONDS
  run "$out/$mpi-rma-cost.jsonl" 9 1 "$cost" --seconds 1
  [ "$mpi" = openmpi ] && RMADHT_HOSTS_OMPI_ARGS+=" $oversubscribed_ompi_args"
  for mode in lockfree fine coarse; do
    for batch in 1 128; do
      start=$SECONDS
      limit=240 run "$out/$mpi-oversubscribed.jsonl" 6 2 "$bench" --rma --mode "$mode" \
        --dist uniform --batch "$batch" "${args[@]}" --scale "$(oversubscribed_scale "$mpi")"
    done
  done
done
rm -f "$log" "$log.err"
cd "$root" && python3 tools/bench_table.py --summary bench-results/hosts/*.jsonl
[ $failed -eq 0 ] || { echo "bench.sh: $failed runs incomplete" >&2; exit 1; }
