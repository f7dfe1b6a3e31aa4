"""Python overhead of rmadht.SurrogateCache.lookup per batch.

Times the same batch of lookups two ways on this rank: through the Python
API (argument checks, result arrays, the call), and as the bare C call
rmadht_cache_lookup timed inside the extension (rmadht._core.time_lookup).
The two alternate call by call and the median of the per-pair differences
is reported, which keeps the figure steady on a busy machine.  Every row
is a hit, as in a warm cache.

    python bench/py_overhead.py [--rows 128] [--reps 5000]
    mpiexec -n 2 python bench/py_overhead.py
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import rmadht
from rmadht import _core
from mpi4py import MPI


def paired_times(cache: rmadht.SurrogateCache, x: np.ndarray,
                 reps: int) -> tuple[list[float], list[float]]:
    """Seconds of each C call and of each Python call, alternating."""
    c, py = [], []
    for _ in range(reps):
        c.append(_core.time_lookup(cache._h, len(x), x, 1))
        t0 = time.perf_counter()
        cache.lookup(x)
        py.append(time.perf_counter() - t0)
    return c, py


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=128)
    parser.add_argument("--inputs", type=int, default=9)
    parser.add_argument("--reps", type=int, default=5000)
    args = parser.parse_args()

    comm = MPI.COMM_WORLD
    n_in = args.inputs
    rng = np.random.default_rng(comm.rank)
    x = 10.0 ** rng.uniform(-8, 2, size=(args.rows, n_in))
    with rmadht.SurrogateCache(comm, n_inputs=n_in, n_outputs=n_in,
                               digits=5, log10=True,
                               bytes_per_rank=32 << 20) as cache:
        cache.store(x, x)
        cache.flush()
        _, hit = cache.lookup(x)
        assert hit.all()
        c, py = paired_times(cache, x, args.reps)
        comm.Barrier()
    t_c, t_py = statistics.median(c), statistics.median(py)
    extra = statistics.median(p - q for p, q in zip(py, c))
    results = comm.gather((t_c, t_py, extra), root=0)
    if comm.rank == 0:
        print(f"batch of {args.rows} lookups, {n_in} inputs, all hits, "
              f"{comm.size} rank(s), medians of {args.reps} calls")
        for r, (q, p, d) in enumerate(results):
            print(f"rank {r}: C {q * 1e6:7.1f} us  Python {p * 1e6:7.1f} us"
                  f"  overhead {d * 1e6:5.1f} us per batch ({d / q:.1%})")


if __name__ == "__main__":
    main()
