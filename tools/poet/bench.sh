#!/usr/bin/env bash
# bench.sh WORK [RUNS]: POET's own DHT counters with its own DHT and with
# rmadht, from the builds and the barite case tools/poet/test.sh left in
# WORK (BUILD/poet-openmpi): on one node with 1 and 2 workers; on three
# emulated hosts (tools/hosts) with a rank each, POET's master alone on the
# first and one worker on each other (hosts-1w); on two hosts with 2 and 3
# ranks a host (rank 0 is POET's master: 3 and 5 workers); the hosts-1w
# configuration also with --interp (hosts-1w-interp).  RUNS runs each
# (default 3) back to back.  One line per run: hits, dht_get_time and
# dht_fill_time summed over workers, chemistry and simulation time (POET's
# timings.rds), then the medians.
# Open MPI: POET's own DHT with osc sm,pt2pt (it fails under Debian's
# defaults), rmadht with the defaults on one node and osc sm,pt2pt between
# hosts.
set -euo pipefail
work=$(cd "$1" && pwd) runs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case=$work/barite
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
hosts=$root/tools/hosts/hosts.sh
export RMADHT_HOSTS_SET=${RMADHT_HOSTS_SET:-poet}
out=$case/bench
mkdir -p "$out"
uptime
one() { # LABEL WHERE N BINARY OSC FLAGS...: one run, one line
  local label=$1 where=$2 n=$3 bin=$4 osc=$5 dir=$out/$1
  shift 5
  rm -rf "$dir"
  if [ "$where" = node ]; then
    (cd "$case" && timeout -k 5 900 mpiexec.openmpi -n "$n" $osc "$work/bin/$bin" \
       --rds "$@" barite_30_rt.R barite_30.rds "$dir" > "$dir.log" 2>&1)
  else
    (cd "$case" && RMADHT_HOSTS_OMPI_ARGS="$osc" "$hosts" run openmpi "$n" 900 \
       "$work/bin/$bin" --rds "$@" "$case/barite_30_rt.R" "$case/barite_30.rds" \
       "$dir" > "$dir.log" 2>&1)
  fi
  echo "$label $(Rscript "$here/timings.R" "$dir")"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
summary() { # LABEL: medians of the runs' fields
  local f line=$1
  for f in hits get fill chemistry simtime; do
    line+=" $f $(grep "^$1-[0-9]* " "$out/runs.txt" |
                 sed -E "s/.* $f ([0-9.]+).*/\1/" | median)"
  done
  echo "median $line"
}
: > "$out/runs.txt"
# NAME WHERE N HOSTS FLAGS: N ranks on one node, or N ranks on each of
# HOSTS emulated hosts.
configs=("node-1w node 2 - --dht" "node-2w node 3 - --dht")
if "$hosts" can > /dev/null; then
  trap '"$hosts" down > /dev/null' EXIT
  configs+=("hosts-1w hosts 1 3 --dht" "hosts-2ppn hosts 2 2 --dht"
            "hosts-3ppn hosts 3 2 --dht" "hosts-1w-interp hosts 1 3 --dht --interp")
fi
up=0
for c in "${configs[@]}"; do
  read -r name where n nhosts flags <<< "$c"
  # POET_BENCH_CONFIGS="node-1w hosts-2ppn" takes some of them only.
  [[ " ${POET_BENCH_CONFIGS:-$name} " == *" $name "* ]] || continue
  if [ "$where" = hosts ] && [ "$up" != "$nhosts" ]; then
    "$hosts" down > /dev/null
    "$hosts" up "$nhosts" > /dev/null
    up=$nhosts
  fi
  for impl in own rmadht; do
    osc="--mca osc sm,pt2pt"
    [ $impl = rmadht ] && [ "$where" = node ] && osc=""
    for r in $(seq "$runs"); do
      # shellcheck disable=SC2086 # flags are words
      one "$name-$impl-$r" "$where" "$n" "poet-$impl" "$osc" $flags | tee -a "$out/runs.txt"
    done
    summary "$name-$impl"
  done
done
uptime
