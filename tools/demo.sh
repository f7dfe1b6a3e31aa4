#!/usr/bin/env bash
# make demo: SimDol2D on 3 ranks (a master and two workers) without the
# cache, with the rmadht cache on exact keys, and with the cache
# interpolating its misses from neighbouring entries; then the second
# scenario (scenarios/dolktz.toml, after SimDolKtz) without the cache and
# with the interpolating one.  A comparison table for each cached run, the
# best exact hit rate of dol2d, and the pictures.
set -euo pipefail
venv=$1
cd "$(dirname "$0")/.."
export PATH="$PWD/$venv/bin:$PATH"
mpiexec=${RTSIM_MPIEXEC:-mpiexec.openmpi}
start=$SECONDS
# The ranks' stderr is never a terminal under mpiexec, this script's is when
# someone watches: a live bar then, else (a log) a line per tenth of a run.
progress=(--progress --progress-style lines)
[ -t 2 ] && progress=(--progress --progress-style bar)
echo "== load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf out/ref out/dht out/interp out/ktz_ref out/ktz_interp
scenario=scenarios/dol2d.toml
echo "== dol2d: reference run (PHREEQC for every cell), 3 ranks"
"$mpiexec" -n 3 rtsim run "$scenario" out/ref "${progress[@]}"
echo "== dol2d: rmadht surrogate cache, exact keys only, 3 ranks"
"$mpiexec" -n 3 rtsim run "$scenario" out/dht --dht --no-interpolate "${progress[@]}"
echo "== dol2d: rmadht surrogate cache interpolating its misses, 3 ranks"
"$mpiexec" -n 3 rtsim run "$scenario" out/interp --dht --interpolate "${progress[@]}"
echo "== dol2d: exact keys against the reference"
rtsim compare out/ref out/dht
echo "== dol2d: interpolating against the reference"
rtsim compare out/ref out/interp
rtsim reuse out/ref
if [ -f scenarios/dolktz.toml ]; then
  echo "== dolktz: reference run, 3 ranks"
  "$mpiexec" -n 3 rtsim run scenarios/dolktz.toml out/ktz_ref "${progress[@]}"
  # dol2d's interpolation settings (scenarios/dol2d.toml), on dolktz's rounding.
  echo "== dolktz: rmadht surrogate cache interpolating its misses, 3 ranks"
  "$mpiexec" -n 3 rtsim run scenarios/dolktz.toml out/ktz_interp --dht --interpolate \
    --interp-tolerance 1e-8 --interp-neighbours 10:60 --interp-radius 1 "${progress[@]}"
  echo "== dolktz: interpolating against the reference"
  rtsim compare out/ktz_ref out/ktz_interp
fi
echo "== pictures"
find out -name '*.png' | sort
echo "== demo took $((SECONDS - start)) s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
