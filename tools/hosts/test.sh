#!/usr/bin/env bash
# test.sh BUILD MPI CONFIG PPN...: every multi-rank C test of BUILD/MPI/tests
# on two emulated hosts, PPN ranks per host, each bounded in time.  CONFIG
# names the one-sided component for Open MPI (pt2pt or ucx) and is "-" for
# MPICH.  Prints a line per run and "N passed, N failed" at the end; exits 1
# if any failed.  Skips, saying why, where this machine cannot make
# emulated hosts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 mpi=$2 config=$3; shift 3
hosts=$here/hosts.sh
if ! why=$("$hosts" can); then
  echo "SKIP cross-host tests: $why"
  exit 0
fi
case $mpi:$config in
  openmpi:pt2pt) export RMADHT_HOSTS_OMPI_ARGS="--mca osc pt2pt" ;;
  openmpi:ucx) export RMADHT_HOSTS_OMPI_ARGS="--mca pml ucx --mca osc ucx
    --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_NET_DEVICES=mh0" ;;
  mpich:-) ;;
  *) echo "test.sh: no configuration $config for $mpi" >&2; exit 2 ;;
esac
"$hosts" up 2 || exit 1
trap '"$hosts" down' EXIT
limit=${RMADHT_HOSTS_TIMEOUT:-240}
passed=0 failed=0
# Runs one test; sets verdict.  MPICH 4.0.2 over UCX 1.13's TCP transport
# can hang inside MPI_Finalize after a test has passed everywhere: one rank
# waits in UCX for a peer that has already left UCX for the process
# manager's barrier (README "Across hosts").  The tests print their
# summary only after every rank passed its checks, so a run whose summary
# says 0 failures and that then hangs is a pass, and is said to be one.
run_one() {
  local log=$1; shift
  "$hosts" run "$mpi" "$ppn" "$limit" "$@" > "$log" 2>&1 &
  local pid=$! waited=0 summary_at=""
  while kill -0 "$pid" 2> /dev/null; do
    sleep 1; waited=$((waited + 1))
    if [ -z "$summary_at" ] && grep -q " 0 failures over all ranks" "$log"; then
      summary_at=$waited
    fi
    if [ -n "$summary_at" ] && [ $((waited - summary_at)) -ge 20 ]; then
      kill -- "$pid" 2> /dev/null; pkill -f "$1" 2> /dev/null
      wait "$pid" 2> /dev/null
      verdict="passed (MPI_Finalize hung, killed)"
      return
    fi
  done
  wait "$pid"; local rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict="HUNG (killed)"
  elif [ $rc -ne 0 ]; then verdict="FAILED (exit $rc)"
  elif ! grep -q " 0 failures over all ranks" "$log"; then verdict="FAILED (no summary)"
  else verdict=passed; fi
}
log=$(mktemp)
for ppn in "$@"; do
  for t in "$build/$mpi/tests"/mpi_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    start=$SECONDS
    run_one "$log" "$t"
    printf '%-7s %-5s %d/host  %-20s %-36s %4ds\n' "$mpi" "$config" "$ppn" \
      "$name" "$verdict" $((SECONDS - start))
    if [[ $verdict == passed* ]]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      tail -20 "$log" | sed 's/^/    /'
    fi
  done
done
rm -f "$log"
echo "cross-host $mpi $config: $passed passed, $failed failed"
[ $failed -eq 0 ]
