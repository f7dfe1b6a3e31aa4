#!/usr/bin/env bash
# test.sh BUILD MPI CONFIG PPN...: the multi-rank C tests of BUILD/MPI/tests
# (and, with RMADHT_HOSTS_PYTHON=path/to/python, the Python MPI tests) on
# RMADHT_HOSTS_N (default two) emulated hosts, PPN ranks per host, each
# bounded in time; RMADHT_HOSTS_TESTS, an extended regular expression,
# keeps only the C tests whose names match it.  CONFIG is
# the Open MPI one-sided component to use (pt2pt or ucx; "default" checks
# only that rmadht_create fails with its remedy under Debian's defaults) and
# "-" for MPICH.  Prints a line per run and "N passed, N failed" at the end;
# exits 1 if any failed.  Skips, saying why, where this machine cannot make
# emulated hosts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$1 mpi=$2 config=$3; shift 3
hosts=$here/hosts.sh
if ! why=$("$hosts" can); then
  echo "SKIP cross-host tests: $why"
  exit 0
fi
case $mpi:$config in
  # sm makes the windows of ranks that share a host (rmadht's node-local
  # path, or a communicator of one host).
  openmpi:pt2pt) ompi_args="--mca osc sm,pt2pt" ;;
  openmpi:ucx) ompi_args="--mca pml ucx --mca osc sm,ucx --mca pml_ucx_tls any
    --mca pml_ucx_devices any -x UCX_NET_DEVICES=mh0" ;;
  openmpi:default) ompi_args="" ;;
  mpich:-) ;;
  *) echo "test.sh: no configuration $config for $mpi" >&2; exit 2 ;;
esac
# Hold the set of hosts for the whole run (hosts.sh guard).
exec 9> "/run/${RMADHT_HOSTS_SET:-rmadht}-hosts.lock"
flock -n 9 || { echo "test.sh: another test run uses these hosts" >&2; exit 1; }
export RMADHT_HOSTS_HOLDER=1
nhosts=${RMADHT_HOSTS_N:-2}
"$hosts" up "$nhosts" || exit 1
trap '"$hosts" down' EXIT
limit=${RMADHT_HOSTS_TIMEOUT:-300}
passed=0 failed=0 log=$(mktemp)

# How many reports in the log say that every check passed: the C tests'
# summary, printed by rank 0 after all ranks agreed on their failures, or
# one pytest summary per rank (the ranks' lines may run into each other),
# none if any pytest reported a failure or an error.
successes() {
  if [ "$kind" = c ]; then grep -c " 0 failures over all ranks" "$log"
  elif grep -qE "[0-9]+ (failed|errors?)\b" "$log"; then echo 0
  else grep -oE "[0-9]+ passed" "$log" | wc -l; fi
}

# shellcheck source=tools/hosts/run_bounded.sh
. "$here/run_bounded.sh"
run_bounded_merge=1
# Runs one test program; sets verdict.  A run whose every rank reported
# success and that then hangs (MPICH 4.0.2 over UCX 1.13's TCP transport
# can, inside MPI_Finalize: run_bounded.sh) is a pass, and is said to be
# one; any other hang or failure is not.
run_one() {
  run_bounded '[ "$(successes)" -ge "$need" ]' 5 "$limit" "$mpi" "$ppn" "$@"
  local rc=$?
  if [ "$run_bounded_hung" = 1 ]; then verdict="passed (MPI_Finalize hung, killed)"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then verdict="HUNG (killed)"
  elif [ $rc -ne 0 ]; then verdict="FAILED (exit $rc)"
  elif [ "$(successes)" -lt "$need" ]; then verdict="FAILED (no success reported)"
  else verdict=passed; fi
}

report() {
  printf '%-7s %-7s %d/host  %-22s %-36s %4ds\n' "$mpi" "$config" "$ppn" \
    "$1" "$verdict" $((SECONDS - start))
  if [[ $verdict == passed* ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    tail -20 "$log" | sed 's/^/    /'
  fi
}

# With more ranks than this machine has cores, busy-polling ranks would
# starve each other: Open MPI's are told to yield when idle, and MPICH's
# preload the module that makes them (tests/ucp_yield.c), as ctest does.
yield_module=$build/$mpi/tests/libucp_yield.so
[ -f "$yield_module" ] &&
  export RMADHT_HOSTS_MPICH_ARGS="${RMADHT_HOSTS_MPICH_ARGS:-} -genv LD_PRELOAD $yield_module"
for ppn in "$@"; do
  export RMADHT_HOSTS_OMPI_ARGS="${ompi_args:-} "
  [ "$ppn" -gt 1 ] && RMADHT_HOSTS_OMPI_ARGS+=" --mca mpi_yield_when_idle 1"
  if [ "$config" = default ]; then
    # Debian's Open MPI cannot make a window between hosts over TCP: the
    # create must fail on every rank and say which call failed and the fix.
    kind=c need=1 start=$SECONDS
    run_one "$build/$mpi/tests/mpi_window"
    if [[ $verdict == passed* ]] &&
       ! grep -q "window failed: MPI_Win_allocate failed: .*--mca osc sm,pt2pt" "$log"; then
      verdict="FAILED (no remedy)"
    fi
    report mpi_window
    continue
  fi
  for t in "$build/$mpi/tests"/mpi_*; do
    [ -x "$t" ] || continue
    # A test may name the rank counts it is for, as ctest reads them.
    src=$root/tests/$(basename "$t").c
    if [ -f "$src" ] && counts=$(head -1 "$src" | grep -o "ranks:[ 0-9]*") &&
       ! grep -qw "$((nhosts * ppn))" <<< "${counts#ranks:}"; then
      continue
    fi
    if [ -n "${RMADHT_HOSTS_TESTS:-}" ] &&
       ! grep -qE "^(${RMADHT_HOSTS_TESTS})\$" <<< "$(basename "$t")"; then
      continue
    fi
    kind=c need=1 start=$SECONDS
    run_one "$t"
    report "$(basename "$t")"
  done
  if [ -n "${RMADHT_HOSTS_PYTHON:-}" ]; then
    # mpi4py asks for MPI_THREAD_MULTIPLE, under which osc/pt2pt refuses
    # windows (docs/howto/across-hosts.md).
    [ "$config" = pt2pt ] &&
      RMADHT_HOSTS_OMPI_ARGS+=" -x MPI4PY_RC_THREAD_LEVEL=funneled"
    kind=py need=$((nhosts * ppn)) start=$SECONDS
    run_one "$RMADHT_HOSTS_PYTHON" -m pytest -q --color=no -p no:cacheprovider \
      "$root/tests/python/bindings"
    report "python tests/python/bindings"
  fi
done
rm -f "$log"
echo "cross-host $mpi $config: $passed passed, $failed failed"
[ $failed -eq 0 ]
