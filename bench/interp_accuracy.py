# SPDX-License-Identifier: BSD-3-Clause
"""What error control buys: served fraction and error of interpolated rows
on a function with a sharp front, with and without the leave-one-out check.

Every rank stores its share of random points of [1, 2)^3, then looks up
fresh points, which miss their exact key (4 digits) and may be interpolated
from neighbours at 2 digits (cells of 0.1).  "no control" sets every
tolerance to infinity: the row is served whenever min_neighbours lie within
the radius, as POET serves it (POET's own weights differ: power 1 on
min-max scaled inputs).  Prints rank 0's rows:

    mpiexec -n 1 python bench/interp_accuracy.py [--stored N] [--queries N]
"""

from __future__ import annotations

import argparse

import numpy as np

import rmadht
from mpi4py import MPI

NIN, NOUT = 3, 2


def f(x: np.ndarray) -> np.ndarray:
    """Smooth except for a front at x0 = 1.5, a hundredth wide."""
    return np.stack([np.tanh((x[:, 0] - 1.5) / 0.01) + x[:, 1] * x[:, 2],
                     np.sin(2 * x[:, 1]) + x[:, 2] ** 2], axis=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stored", type=int, default=40000)
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--tolerance", type=float, default=1e-3)
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(1 + comm.rank)
    stored = 1 + rng.random((args.stored // comm.size, NIN))
    queries = 1 + rng.random((args.queries, NIN))
    truth = f(queries)
    near_front = np.abs(queries[:, 0] - 1.5) < 0.05
    cases = [("linear", args.tolerance), ("idw", args.tolerance),
             ("linear", np.inf), ("idw", np.inf)]
    if comm.rank == 0:
        print(f"{comm.size} ranks, {args.stored} stored rows, "
              f"{args.queries} queries per rank, tolerance "
              f"{args.tolerance:g}; errors of served rows, max over "
              "outputs")
        print(f"{'method':7} {'control':8} {'served':>7} {'median':>9} "
              f"{'p99':>9} {'max':>9} {'served near front':>18} "
              f"{'max there':>10}")
    for method, tol in cases:
        interp = rmadht.Interpolation(digits=2, tolerance=tol, method=method,
                                      radius=1.0)
        with rmadht.SurrogateCache(comm, NIN, NOUT, digits=4, log10=False,
                                   bytes_per_rank=32 << 20,
                                   interpolation=interp) as c:
            c.store(stored, f(stored))
            c.flush()
            comm.Barrier()
            out, status = c.lookup(queries)
            comm.Barrier()
        served = status == rmadht.INTERPOLATED
        err = np.abs(out[served] - truth[served]).max(axis=1)
        front = served & near_front
        err_front = np.abs(out[front] - truth[front]).max(axis=1)
        if comm.rank == 0:
            pct = lambda a, q: np.percentile(a, q) if a.size else np.nan
            print(f"{method:7} {'yes' if np.isfinite(tol) else 'no':8} "
                  f"{served.mean():7.1%} {pct(err, 50):9.2e} "
                  f"{pct(err, 99):9.2e} {pct(err, 100):9.2e} "
                  f"{front.sum() / max(near_front.sum(), 1):18.1%} "
                  f"{pct(err_front, 100):10.2e}")


if __name__ == "__main__":
    main()
