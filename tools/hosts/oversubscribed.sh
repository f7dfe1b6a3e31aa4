# Sourced by bench.sh and single.sh: how a run with 2 ranks per host on
# this 2-core machine is scaled.  4 busy-polling ranks on 2 cores crawl,
# MPICH's most (a get waits about 8 ms for the target's process to be
# scheduled: 1-5 k operations a second), so they run fewer operations, and
# Open MPI's ranks are told to yield when idle.

# oversubscribed_scale MPI: the rmadht-bench --scale of such a run, a
# tenth of the usual 0.2 under Open MPI, a hundredth under MPICH, unless
# RMADHT_BENCH_OVERSUBSCRIBED_SCALE says otherwise.
oversubscribed_scale() {
  local scale=0.002
  [ "$1" = openmpi ] && scale=0.02
  echo "${RMADHT_BENCH_OVERSUBSCRIBED_SCALE:-$scale}"
}

# Open MPI's launch arguments for such a run, beside the usual ones.
oversubscribed_ompi_args="--mca mpi_yield_when_idle 1"

# reference_ops SCALE: the writes and reads per rank the reference's driver
# runs to match rmadht-bench --scale SCALE (500,000 x SCALE).
reference_ops() {
  awk -v s="$1" 'BEGIN { printf "%d", 500000 * s }'
}
