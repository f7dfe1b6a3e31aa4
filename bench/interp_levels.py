# SPDX-License-Identifier: BSD-3-Clause
"""What a coarse neighbour level would serve on a reference run, and how
far off the rows it serves are.

Replays a reference run of rtsim (one snapshot per iteration, as `make
demo` writes to out/ref) on this process: each iteration's chemistry
inputs are the previous snapshot advected again, its true results the
next snapshot.  The rows go through one interpolating rmadht cache with the
scenario's [dht.interpolation] settings, in rtsim's work packages and
order; a row it serves in which a mineral appears or vanishes counts as a
miss, as in rtsim.  With --coarse AQ:MIN the cache gets a coarse level of
those digits, its tolerances times --scale.  The misses are stored with
their true results, phase changes left out, as rtsim stores PHREEQC's.

It prints the rows served exactly, by each level and missed, and per
level the true error of the served rows over the (unscaled) tolerance of
each output, the worst output of each row: median, 99th percentile,
largest, and how many exceed 1.  A single process and the reference's
trajectory: a run on several workers differs in the order of stores.

With --phreeqc-every K, the interpolated rows of every K-th package that
has any go through PHREEQC (rtsim's ChemistryEngine, one call per
package, as a worker would have reacted them): the CPU milliseconds per
row are what interpolation saves PHREEQC, to set against the cache CPU
an interpolating run spends beyond an exact-key one (`summary.json`,
`dht.lookup_store_cpu_s`).

    python bench/interp_levels.py out/ref [--scenario scenarios/dol2d.toml]
        [--coarse 2:1 --scale 0.1] [--package-size 64] [--phreeqc-every 10]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import rmadht
from mpi4py import MPI
from rtsim.cache import HIT, INTERPOLATED, MISS, interpolation
from rtsim.chemistry import ChemistryEngine
from rtsim.grid import Grid
from rtsim.packages import make_packages
from rtsim.reuse import replay
from rtsim.scenario import AUX_NAMES, load_scenario

COARSE = 3  # the status given here to rows the coarse level served


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path)
    parser.add_argument("--scenario", type=Path, default=Path("scenarios/dol2d.toml"))
    parser.add_argument("--coarse", metavar="AQ:MIN", default="none")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--package-size", type=int, default=64)
    parser.add_argument("--phreeqc-every", type=int, default=0, metavar="K")
    args = parser.parse_args()
    if args.phreeqc_every < 0:
        parser.error(f"--phreeqc-every must be 0 (off) or positive, got {args.phreeqc_every}")

    sc = load_scenario(args.scenario)
    coarse = (None, None) if args.coarse == "none" else tuple(
        int(v) for v in args.coarse.split(":"))
    sc = sc.with_interpolation(enabled=True, coarse_aqueous_digits=coarse[0],
                               coarse_mineral_digits=coarse[1],
                               coarse_tolerance_scale=args.scale)
    names = sc.state_names
    n_state, n_comp = len(names), len(sc.components)
    n_out = n_state + len(AUX_NAMES)
    grid = Grid(sc.grid)
    keys = np.array([names.index(k) for k in sc.dht.keys])
    minerals = np.arange(n_comp, n_state)
    tol = np.array(sc.interpolation_tolerances())
    zero = sc.dht.zero_below

    def phase_kept(before: np.ndarray, after: np.ndarray) -> np.ndarray:
        return np.all((before[:, minerals] > zero) == (after[:, minerals] > zero), axis=1)

    counts = {"exact": 0, "first": 0, "coarse": 0, "missed": 0}
    engine = ChemistryEngine(sc) if args.phreeqc_every > 0 else None
    reacted = {"packages_seen": 0, "rows": 0, "cpu_s": 0.0}
    errors: dict[str, list[np.ndarray]] = {"first": [], "coarse": []}
    with rmadht.SurrogateCache(MPI.COMM_SELF, len(keys), n_out, digits=sc.key_digits(),
                               log10=sc.key_log10(), zero_below=zero,
                               bytes_per_rank=64 << 20,
                               interpolation=interpolation(sc, rmadht)) as cache:
        for states, result in replay(args.reference, sc):
            truth = result[:, :n_out].copy()
            truth[:, :n_state] -= states
            for rows in make_packages(grid.cells, args.package_size):
                x = np.ascontiguousarray(states[rows][:, keys])
                before = cache.stats()["interpolated_coarse"]
                values, status = cache.lookup(x)
                status = np.asarray(status).astype(np.uint8)
                served = status != MISS
                after = np.maximum(states[rows] + values[:, :n_state], 0.0)
                status[served & ~phase_kept(states[rows], after)] = MISS
                err = (np.abs(values - truth[rows]) / tol).max(axis=1)
                # Which rows the coarse level served: its counter says how
                # many; looking each interpolated row up alone says which
                # (a lookup changes nothing but the counters).
                if cache.stats()["interpolated_coarse"] > before:
                    for r in np.flatnonzero(status == INTERPOLATED):
                        n = cache.stats()["interpolated_coarse"]
                        cache.lookup(x[r:r + 1])
                        if cache.stats()["interpolated_coarse"] > n:
                            status[r] = COARSE
                counts["exact"] += int(np.count_nonzero(status == HIT))
                for name, code in (("first", INTERPOLATED), ("coarse", COARSE)):
                    counts[name] += int(np.count_nonzero(status == code))
                    errors[name].append(err[status == code])
                served_rows = rows[(status == INTERPOLATED) | (status == COARSE)]
                if engine is not None and len(served_rows):
                    if reacted["packages_seen"] % args.phreeqc_every == 0:
                        c0 = time.process_time()
                        engine.react(states[served_rows], sc.dt)
                        reacted["cpu_s"] += time.process_time() - c0
                        reacted["rows"] += len(served_rows)
                    reacted["packages_seen"] += 1
                miss = np.flatnonzero(status == MISS)
                counts["missed"] += len(miss)
                keep = miss[phase_kept(states[rows][miss], truth[rows][miss, :n_state]
                                       + states[rows][miss])]
                if len(keep):
                    cache.store(np.ascontiguousarray(x[keep]),
                                np.ascontiguousarray(truth[rows][keep]))
    report = {"reference": str(args.reference), "coarse": args.coarse, "scale": args.scale,
              "rows": counts}
    for name, parts in errors.items():
        e = np.concatenate(parts) if parts else np.zeros(0)
        report[f"{name}_error_over_tolerance"] = (
            {"median": float(np.median(e)), "p99": float(np.quantile(e, 0.99)),
             "max": float(e.max()), "above_1": int(np.count_nonzero(e > 1))}
            if e.size else None)
    if engine is not None and reacted["rows"]:
        report["phreeqc_interpolated"] = {
            "rows_reacted": reacted["rows"],
            "cpu_ms_per_row": 1e3 * reacted["cpu_s"] / reacted["rows"]}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
