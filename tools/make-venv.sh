#!/usr/bin/env bash
# Makes .venv/<mpi> (openmpi or mpich): mpi4py built from source against
# that MPI, the Python dependencies, and the two distributions of this tree:
# the bindings rmadht (the root, built with the same MPI) and the simulator
# rtsim (rtsim/).  Reruns only the steps whose inputs changed.
set -euo pipefail
mpi=$1
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.venv/$mpi
py=$venv/bin/python
if [ ! -x "$py" ]; then
  echo "== creating $venv"
  python3 -m venv "$venv"
  "$py" -m pip install -q --upgrade pip
fi
# mpi4py's binary wheel finds Open MPI's libmpi.so.40, but not Debian's
# libmpich.so.12, so for MPICH it is built from source, at -O1 to keep the
# build short (mpi4py's speed does not matter here).  No cache: a wheel
# built against one MPI must never serve the other.
if [ ! -f "$venv/.mpi4py-$mpi" ]; then
  if [ "$mpi" = openmpi ]; then
    "$py" -m pip install -q "mpi4py>=4.0"
  else
    echo "== building mpi4py against $mpi (a few minutes)"
    MPICC=mpicc.$mpi CFLAGS=-O1 "$py" -m pip install -q --no-cache-dir \
      --no-binary mpi4py "mpi4py>=4.0"
  fi
  touch "$venv/.mpi4py-$mpi"
fi
reqs="numpy scipy matplotlib phreeqc pytest scikit-build-core setuptools>=77"
if [ ! -f "$venv/.deps" ] || [ "$(cat "$venv/.deps")" != "$reqs" ]; then
  echo "== installing $reqs"
  "$py" -m pip install -q $reqs
  echo "$reqs" > "$venv/.deps"
fi
echo "== installing rmadht and rtsim from $root against $mpi"
"$py" -m pip install -q --no-build-isolation --no-deps \
  -C cmake.define.MPI_C_COMPILER=mpicc.$mpi \
  -C build-dir="$root/build/py-$mpi" "$root"
"$py" -m pip install -q --no-build-isolation --no-deps "$root/rtsim"
