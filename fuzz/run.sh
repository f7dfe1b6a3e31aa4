#!/usr/bin/env bash
# Runs every fuzz target of a fuzz build for a bounded time, starting from
# the seed corpus in fuzz/corpus/<target>/.  New inputs go to a scratch
# corpus in the build tree, never into the repository; a crash, a timeout,
# a leak or a sanitizer report is saved as <build>/fuzz/artifacts/<target>-*
# and fails the run.  Prints libFuzzer's final statistics per target.
#   usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
set -uo pipefail
build=$1 secs=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(snap_header snap_entry restore round_key)
here=$(cd "$(dirname "$0")" && pwd)
# The restore target starts MPI as a singleton: Open MPI's root and
# oversubscription settings as in the tests, MPI's own leaks suppressed by
# the same list as the sanitizer builds (cmake/lsan-mpi.supp).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_btl_vader_single_copy_mechanism=none \
  OMPI_MCA_mpi_yield_when_idle=1
export ASAN_OPTIONS=fast_unwind_on_malloc=0:malloc_context_size=40
export LSAN_OPTIONS=suppressions=$here/../cmake/lsan-mpi.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for t in "${targets[@]}"; do
  scratch=$build/fuzz/corpus/$t
  mkdir -p "$scratch" "$build/fuzz/artifacts"
  log=$build/fuzz/$t.log
  echo "== fuzz_$t for $secs s"
  start=$(date +%s)
  "$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/artifacts/$t-" \
    "$scratch" "$here/corpus/$t" > "$log" 2>&1
  rc=$?
  end=$(date +%s)
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log"
  grep -E '^Done [0-9]+ runs' "$log" | tail -n 1
  echo "fuzz_$t: exit $rc after $((end - start)) s"
  if [ $rc -ne 0 ]; then
    tail -n 60 "$log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets failed: ${failed[*]} (inputs in $build/fuzz/artifacts/)" >&2
  exit 1
fi
