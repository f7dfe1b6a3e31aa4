#!/usr/bin/env bash
# test.sh BUILD MPI PPN...: every multi-rank C test of BUILD/MPI/tests on two
# emulated hosts, PPN ranks per host, each bounded in time.  Prints one line
# per run and "N passed, N failed" at the end; exits 1 if any failed.  Skips,
# saying why, where this machine cannot make emulated hosts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 mpi=$2; shift 2
hosts=$here/hosts.sh
if ! why=$("$hosts" can); then
  echo "SKIP cross-host tests: $why"
  exit 0
fi
# Open MPI's default one-sided component cannot make a window over TCP;
# README "Across hosts".
export RMADHT_HOSTS_OMPI_ARGS=${RMADHT_HOSTS_OMPI_ARGS:---mca osc pt2pt}
"$hosts" up 2 || exit 1
trap '"$hosts" down' EXIT
passed=0 failed=0
for ppn in "$@"; do
  for t in "$build/$mpi/tests"/mpi_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    start=$SECONDS
    out=$("$hosts" run "$mpi" "$ppn" "${RMADHT_HOSTS_TIMEOUT:-180}" "$t" 2>&1)
    rc=$?
    verdict=passed
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict="HUNG (killed)"
    elif [ $rc -ne 0 ]; then verdict="FAILED (exit $rc)"; fi
    printf '%-8s %d/host  %-22s %-14s %4ds\n' "$mpi" "$ppn" "$name" "$verdict" $((SECONDS - start))
    if [ "$verdict" = passed ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "$out" | tail -20 | sed 's/^/    /'
    fi
  done
done
echo "cross-host $mpi: $passed passed, $failed failed"
[ $failed -eq 0 ]
