#!/usr/bin/env bash
# Regenerates the seed corpus in fuzz/corpus/ from a fuzz build
# (make test-fuzz, or cmake -DRMADHT_FUZZ=ON ... into build/fuzz).
set -euo pipefail
build=${1:-build/fuzz}
here=$(cd "$(dirname "$0")" && pwd)
for t in snap_header snap_entry restore round_key; do
  mkdir -p "$here/corpus/$t"
done
"$build/fuzz/fuzz_make_seeds" "$here/corpus"
