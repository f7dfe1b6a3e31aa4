# Sourced by bench.sh and single.sh, which set $log (a temporary file).
#
# run_phases NEED GRACE SECONDS MPI PPN PROGRAM ARGS...: PROGRAM on PPN
# ranks per emulated host (hosts.sh run), stdout to $log and stderr to
# $log.err, killed after SECONDS.  MPICH 4.0.2 over UCX's TCP transport can
# hang in MPI_Finalize after all work (docs/howto/across-hosts.md): once
# $log holds NEED JSON lines (one per phase) the program has GRACE seconds
# to end, then is stopped and run_phases_hung set to 1.  While it runs its
# pid is in run_phases_pid, for the caller's trap.
run_phases_pid=""
run_phases() {
  local need=$1 grace=$2 secs=$3 mpi=$4 ppn=$5; shift 5
  "$(dirname "${BASH_SOURCE[0]}")/hosts.sh" run "$mpi" "$ppn" "$secs" "$@" \
    > "$log" 2> "$log.err" &
  run_phases_pid=$!
  run_phases_hung=0
  local waited=0 done_at=""
  while kill -0 "$run_phases_pid" 2> /dev/null; do
    sleep 1; waited=$((waited + 1))
    if [ -z "$done_at" ] && [ "$(grep -c '^{' "$log")" -ge "$need" ]; then
      done_at=$waited
    fi
    if [ -n "$done_at" ] && [ $((waited - done_at)) -ge "$grace" ]; then
      kill -- "$run_phases_pid" 2> /dev/null
      run_phases_hung=1
      break
    fi
  done
  wait "$run_phases_pid" 2> /dev/null
  run_phases_pid=""
}
