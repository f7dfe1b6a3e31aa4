"""Caching a slow function with rmadht.SurrogateCache.

Run alone or on several ranks:

    python examples/cache_example.py
    mpiexec -n 2 python examples/cache_example.py

A toy "simulation" asks, step after step, for the outputs of a slow
function at the states of its cells.  The states revisit the same points up
to tiny noise, as the cells of a reactive transport grid do, so most rows
are found in the cache instead of being computed again.  The cache rounds
each input to 5 significant digits of its logarithm; the report shows the
hit rate, the time saved and the error the approximation brought.
"""

from __future__ import annotations

import math
import time

import numpy as np

import rmadht
from mpi4py import MPI

N_IN, N_OUT = 3, 2
CELLS, STEPS = 64, 20


def slow_function(x: np.ndarray) -> np.ndarray:
    """Two outputs per row from a 400-term series: about 0.3 ms a row."""
    out = np.empty((len(x), N_OUT))
    for r, (a, b, c) in enumerate(x):
        s1 = s2 = 0.0
        for k in range(1, 401):
            s1 += math.sin(k * a) / (k * k + b)
            s2 += math.exp(-k * c) * math.cos(k * b)
        out[r] = (s1, s2)
    return out


def main() -> None:
    comm = MPI.COMM_WORLD
    # The points the cells keep coming back to, over several decades, the
    # same on every rank: one rank's results serve the others.
    shared = np.random.default_rng(0)
    points = np.column_stack([shared.uniform(0.1, 3.0, 40),
                              10.0 ** shared.uniform(-3, 1, 40),
                              10.0 ** shared.uniform(-2, 0, 40)])
    rng = np.random.default_rng(1 + comm.rank)

    computed = 0
    compute_time = check_time = 0.0
    worst = 0.0
    with rmadht.SurrogateCache(comm, n_inputs=N_IN, n_outputs=N_OUT,
                               digits=5, log10=True,
                               bytes_per_rank=16 << 20) as cache:
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(STEPS):
            states = points[rng.integers(0, len(points), CELLS)]
            states *= 1 + 1e-9 * rng.standard_normal(states.shape)
            outputs, status = cache.lookup(states)
            hit = status != rmadht.MISS  # a mask: status is uint8, not bool
            if not hit.all():
                t0 = time.perf_counter()
                fresh = slow_function(states[~hit])
                compute_time += time.perf_counter() - t0
                computed += len(fresh)
                outputs[~hit] = fresh
                cache.store(states[~hit], fresh)
            if hit.any():
                # What the approximation cost: cached against exact outputs,
                # computed here only for the report and not timed.
                t0 = time.perf_counter()
                exact = slow_function(states[hit][:4])
                worst = max(worst, float(np.max(
                    np.abs(outputs[hit][:4] - exact)
                    / np.maximum(np.abs(exact), 1e-300))))
                check_time += time.perf_counter() - t0
            cache.flush()  # share this step's results with the other ranks
        elapsed = time.perf_counter() - start - check_time
        total = cache.stats_global()
        times = comm.gather((elapsed, computed, compute_time), root=0)
        worst = comm.reduce(worst, op=MPI.MAX, root=0)

    if comm.rank == 0:
        rows = total["lookups"]
        per_row = sum(t[2] for t in times) / max(1, sum(t[1] for t in times))
        without = rows * per_row
        with_cache = sum(t[0] for t in times)
        print(f"ranks {comm.size}, rows looked up {rows}, "
              f"hits {total['lookup_hits']}, "
              f"hit rate {total['lookup_hits'] / rows:.1%}")
        print(f"computing one row takes {per_row * 1e3:.2f} ms: "
              f"{without:.2f} s of work without the cache, "
              f"{with_cache:.2f} s with it (all ranks), "
              f"saved {without - with_cache:.2f} s")
        print(f"largest relative error of a cached output: {worst:.1e}")


if __name__ == "__main__":
    main()
