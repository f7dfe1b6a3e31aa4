#!/usr/bin/env bash
# make demo: SimDol2D on 3 ranks (a master and two workers) without and with
# the rmadht cache, then the comparison table and the pictures.
set -euo pipefail
venv=$1
cd "$(dirname "$0")/.."
export PATH="$PWD/$venv/bin:$PATH"
mpiexec=${RTSIM_MPIEXEC:-mpiexec.openmpi}
scenario=scenarios/dol2d.toml
rm -rf out/ref out/dht
echo "== reference run (PHREEQC for every cell), 3 ranks"
"$mpiexec" -n 3 rtsim run "$scenario" out/ref --progress
echo "== run with the rmadht surrogate cache, 3 ranks"
"$mpiexec" -n 3 rtsim run "$scenario" out/dht --dht --progress
echo "== comparison"
rtsim compare out/ref out/dht
rtsim reuse out/ref
echo "== pictures"
find out -name '*.png' | sort
