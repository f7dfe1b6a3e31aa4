# Sourced by bench.sh, single.sh and test.sh, which set $log (a temporary
# file).
#
# run_bounded FINISHED GRACE SECONDS MPI PPN PROGRAM ARGS...: PROGRAM on PPN
# ranks per emulated host (hosts.sh run), stdout to $log and stderr to
# $log.err (to $log as well with run_bounded_merge=1), killed after SECONDS;
# returns its exit status (124 or 137 when killed).  MPICH 4.0.2 over
# UCX's TCP transport can hang in MPI_Finalize after all work
# (docs/howto/across-hosts.md): once the shell command FINISHED succeeds (the
# program has reported all its work) it has GRACE seconds to end, then is
# stopped, run_bounded_hung set to 1 and 0 returned.  While it runs its pid
# is in run_bounded_pid, for the caller's trap.
run_bounded_pid=""
run_bounded() {
  local finished=$1 grace=$2 secs=$3 mpi=$4 ppn=$5; shift 5
  local run=("$(dirname "${BASH_SOURCE[0]}")/hosts.sh" run "$mpi" "$ppn" "$secs" "$@")
  if [ "${run_bounded_merge:-0}" = 1 ]; then
    "${run[@]}" > "$log" 2>&1 &
  else
    "${run[@]}" > "$log" 2> "$log.err" &
  fi
  run_bounded_pid=$!
  run_bounded_hung=0
  local waited=0 done_at="" rc
  while kill -0 "$run_bounded_pid" 2> /dev/null; do
    sleep 1; waited=$((waited + 1))
    if [ -z "$done_at" ] && eval "$finished"; then done_at=$waited; fi
    if [ -n "$done_at" ] && [ $((waited - done_at)) -ge "$grace" ]; then
      kill -- "$run_bounded_pid" 2> /dev/null; pkill -f -- "$1" 2> /dev/null
      wait "$run_bounded_pid" 2> /dev/null
      run_bounded_pid="" run_bounded_hung=1
      return 0
    fi
  done
  wait "$run_bounded_pid" 2> /dev/null; rc=$?
  run_bounded_pid=""
  return $rc
}

# run_phases NEED GRACE SECONDS MPI PPN PROGRAM ARGS...: run_bounded, done
# once $log holds NEED JSON lines (one per phase).
run_phases() {
  local need=$1; shift
  run_bounded "[ \"\$(grep -c '^{' \"\$log\")\" -ge $need ]" "$@"
}
