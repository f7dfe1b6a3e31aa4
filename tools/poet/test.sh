#!/usr/bin/env bash
# test.sh BUILD MPI [POET]: POET 0.4 on rmadht, built as docs/howto/poet.md
# says (tools/poet/build.sh) against BUILD/MPI installed into a scratch
# prefix, on POET's barite benchmark shrunk to 30 x 30 cells and 10 steps:
# - one worker (mpiexec -n 2, where POET is deterministic): the same fields
#   bit for bit and the same DHT hits per step as POET's own DHT, with
#   --dht and with --dht --interp;
# - two workers: hits, and no error;
# - Open MPI only: two workers under --mca osc pt2pt (no shared window on
#   one node: rmadht takes the RMA path), and on two emulated hosts
#   (tools/hosts), 2 ranks a host, where the machine can make them.
# Skips, saying why, without POET's sources.  Every run is bounded in time.
set -euo pipefail
build=$1 mpi=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Beside the repository: ../shared/poet, or ../../shared/poet from a git
# worktree one level further down.
poet=${3:-${RMADHT_POET_SRC:-}}
if [ -z "$poet" ]; then
  for d in "$root/.." "$root/../.."; do
    poet=$d/shared/poet/poet-0.4-src.tar.gz
    [ -e "$poet" ] && break
  done
fi
if [ ! -e "$poet" ]; then
  echo "SKIP POET test: no POET 0.4 sources at $poet (RMADHT_POET_SRC=...)"
  exit 0
fi
bash "$root/tools/install-deps.sh" poet hosts
build=$(cd "$build" && pwd)
work=$build/poet-$mpi
prefix=$work/prefix
rm -rf "$prefix"
cmake --install "$build/$mpi" --prefix "$prefix" > /dev/null
"$here/build.sh" "$prefix" "$work" "$mpi" "$poet"

# The benchmark: barite_200.R at 30 x 30 with the DHT species named as the
# fields (POET 0.4's file names Barite and Celestite, which POET leaves out
# of the key and --interp then crashes on), the steps below.
case=$work/barite
rm -rf "$case" && mkdir -p "$case"
cp "$work/src/POET/bench/barite/"{barite.pqi,db_barite.dat,barite_200.R} "$case/"
sed -e 's/^cols <- 200$/cols <- 30/' -e 's/^rows <- 200$/rows <- 30/' \
    -e 's/^  "Barite" *= 5,$/  "Barite_kin" = 5,/' \
    -e 's/^  "Celestite" *= 5$/  "Celestite_kin" = 5/' \
    -e '/ai_surrogate_input_script/d' -e 's/dht_species = dht_species,/dht_species = dht_species/' \
    "$case/barite_200.R" > "$case/barite_30.R"
grep -q '"Celestite_kin" = 5' "$case/barite_30.R" && grep -q 'cols <- 30' "$case/barite_30.R" ||
  { echo "test.sh: barite_200.R changed; cannot shrink it" >&2; exit 1; }
# 10 steps on one node; 5 between hosts, where every DHT round trip waits
# for a computing target (docs/benchmarks/poet.md) and 20 take minutes;
# tools/poet/bench.sh measures 20 (barite_30_rt.R).
for steps in 20 10 5; do
  printf 'iterations <- %d\ndt <- 100\nlist(timesteps = rep(dt, iterations), store_result = TRUE)\n' \
    "$steps" > "$case/barite_30_rt$([ "$steps" = 20 ] || echo "_$steps").R"
done
(cd "$case" && "$work/bin/poet_init" -r -s -n barite_30 barite_30.R > init.log 2>&1)
[ -f "$case/barite_30.rds" ] || { cat "$case/init.log"; exit 1; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
failed=0
# run NAME BINARY RANKS MPIEXEC-ARGS -- POET-ARGS: one POET run into
# $case/out/NAME; its output in $case/out/NAME.log.
run() {
  local name=$1 bin=$2 np=$3; shift 3
  local margs=()
  while [ "$1" != -- ]; do margs+=("$1"); shift; done; shift
  rm -rf "$case/out/$name"; mkdir -p "$case/out"
  local rc=0
  (cd "$case" && timeout -k 5 600 "mpiexec.$mpi" -n "$np" "${margs[@]}" \
     "$work/bin/$bin" --rds "$@" barite_30_rt_10.R barite_30.rds "out/$name" \
     > "out/$name.log" 2>&1) || rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAILED: $name (exit $rc), last lines of out/$name.log:"
    tail -n 5 "$case/out/$name.log"
    failed=1
    return 1
  fi
}
# POET's own DHT.c fails under Debian's Open MPI defaults (MPI_Win_create:
# MPI_ERR_WIN); it runs with osc sm,pt2pt.
own=()
[ "$mpi" = openmpi ] && own=(--mca osc sm,pt2pt)
same() { # NAME-A NAME-B: fields and hits per step identical
  local line
  if line=$(Rscript "$here/compare.R" "$case/out/$1" "$case/out/$2" 2>&1); then
    echo "passed: $2 = $1: $line"
  else echo "FAILED: $2 vs $1: $line"; failed=1; fi
}
hits() { # NAME: hits and nothing on stderr that speaks of an error
  local line
  line=$(Rscript "$here/timings.R" "$case/out/$1" 2>&1) || true
  if [[ $line =~ ^hits\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] &&
     ! grep -qiE 'rmadht:|error' "$case/out/$1.log"; then
    echo "passed: $1: $line"
  else echo "FAILED: $1: ${line:-no timings}"; grep -iE 'rmadht:|error' "$case/out/$1.log" | head -3; failed=1; fi
}

for mode in "--dht" "--dht --interp"; do
  tag=${mode//[- ]/}
  run "own-1w-$tag" poet-own 2 "${own[@]}" -- $mode &&
    run "rmadht-1w-$tag" poet-rmadht 2 -- $mode &&
    same "own-1w-$tag" "rmadht-1w-$tag"
done
run rmadht-2w-dhtinterp poet-rmadht 3 -- --dht --interp && hits rmadht-2w-dhtinterp
if [ "$mpi" = openmpi ]; then
  run rmadht-2w-pt2pt poet-rmadht 3 --mca osc pt2pt -- --dht --interp &&
    hits rmadht-2w-pt2pt
  # Between two emulated hosts, Open MPI with osc/pt2pt (tools/hosts).
  hosts=$root/tools/hosts/hosts.sh
  export RMADHT_HOSTS_SET=${RMADHT_HOSTS_SET:-poet}
  if why=$("$hosts" can); then
    "$hosts" up 2 > /dev/null
    trap '"$hosts" down > /dev/null' EXIT
    rm -rf "$case/out/rmadht-hosts"
    rc=0
    (cd "$case" && RMADHT_HOSTS_OMPI_ARGS="--mca osc sm,pt2pt" \
       "$hosts" run openmpi 2 600 "$work/bin/poet-rmadht" --rds --dht --interp \
       "$case/barite_30_rt_5.R" "$case/barite_30.rds" "$case/out/rmadht-hosts" \
       > "$case/out/rmadht-hosts.log" 2>&1) || rc=$?
    if [ $rc -eq 0 ]; then
      hits rmadht-hosts
    else
      echo "FAILED: rmadht-hosts (exit $rc)"; tail -n 5 "$case/out/rmadht-hosts.log"; failed=1
    fi
  else
    echo "SKIP POET between hosts: $why"
  fi
fi
[ $failed -eq 0 ] && echo "POET on rmadht: all passed" || { echo "POET on rmadht: FAILED"; exit 1; }
