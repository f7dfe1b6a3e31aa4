# SPDX-License-Identifier: BSD-3-Clause
"""``rtsim reuse``: the best hit rate any cache could reach on a run.

De Lucia et al. (2021) advise checking the rounding on preliminary runs
before an expensive one.  This answers the question that comes first:
could a cache pay here at all?  It replays a reference run's chemistry
inputs, every cell's state after transport at every iteration (recomputed
from the previous snapshot), through an rmadht surrogate cache with the scenario's rounding
on this process alone, and counts every key seen before, in any cell and
any earlier iteration or earlier in the same one, as a hit.  Nothing is
left out for a phase change and no two workers miss the same key at once,
so ``rtsim run --dht`` can only fall short of it: if this figure is low,
no rounding within the error budget will make the cache pay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np

from rtsim import output
from rtsim.cache import load_rmadht
from rtsim.chemistry import ChemistryEngine
from rtsim.errors import RtsimError
from rtsim.grid import Grid
from rtsim.scenario import Scenario
from rtsim.transport import UpwindTransport


def _snapshots(ref_dir: Path, scenario: Scenario) -> list[np.ndarray]:
    """The snapshots of iterations 0..N as (cells, fields) arrays, the
    state variables first."""
    snaps = output.list_snapshots(ref_dir)
    last = max(snaps, default=0)
    gaps = [i for i in range(last + 1) if i not in snaps]
    if last == 0 or gaps:
        raise RtsimError(f"{ref_dir} needs a snapshot of every iteration from 0 on "
                         f"(output_interval = 1); missing: {gaps[:5] or 'all but 0'}")
    shape = (scenario.grid.ny, scenario.grid.nx)
    states = []
    for iteration in range(last + 1):
        names, maps = output.load_snapshot(snaps[iteration])
        if names[:len(scenario.state_names)] != list(scenario.state_names) or \
                maps.shape[1:] != shape:
            raise RtsimError(f"{snaps[iteration]} holds {', '.join(names)} on a "
                             f"{maps.shape[1]}x{maps.shape[2]} grid, not the state variables "
                             f"of scenario {scenario.name} on {shape[0]}x{shape[1]}")
        states.append(maps.reshape(len(maps), -1).T)
    return states


def replay(ref_dir: Path, scenario: Scenario) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per iteration of a reference run with a snapshot of every iteration:
    the chemistry inputs (the previous snapshot's state variables advected
    again, one row per cell) and the snapshot that followed, all its
    fields.  The snapshots are read and checked before it returns, so a
    run that lacks one fails here, not halfway through a replay."""
    snapshots = _snapshots(ref_dir, scenario)
    transport = UpwindTransport.steady(Grid(scenario.grid), scenario.flow)
    n_comp = len(scenario.components)
    injected = ChemistryEngine(scenario).water(scenario.injection, "injected water")[:n_comp]

    def advected() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for previous, result in zip(snapshots[:-1], snapshots[1:]):
            inputs = previous[:, :len(scenario.state_names)].copy()
            transport.advance(inputs[:, :n_comp], scenario.dt, injected, scenario.courant)
            yield inputs, result

    return advected()


def count_repeats(cache: Any, keys: np.ndarray) -> int:
    """How many rows of keys a cache visiting them in order would hit.

    A row hits if its rounded key was stored before, in an earlier call or
    in an earlier row of this one; every row that misses is stored.  Three
    batches instead of a lookup per row: stored keys hit at once; then each
    missing row stores its own index, so that a key repeated among the
    misses keeps one of its rows' indices, and looking the misses up again
    counts their distinct keys as the distinct indices returned.  Only the
    first row of each distinct key misses.
    """
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    # The cache does not interpolate: its status is a miss (0) or an exact
    # hit, whether it comes as a bool or as a status code.
    hit = np.asarray(cache.lookup(keys)[1]) != 0
    missed = keys[~hit]
    cache.store(missed, np.arange(len(missed), dtype=np.float64)[:, None])
    owner, found = cache.lookup(missed)
    lost = np.count_nonzero(np.asarray(found) == 0)
    if lost:
        raise RtsimError(f"{lost} of the replayed states cannot be "
                         "stored: they are not finite, or the table is too small")
    return len(keys) - len(np.unique(owner))


def best_hit_rates(ref_dir: Path, scenario: Scenario) -> dict[str, Any]:
    """Per iteration and overall: the hits a perfect cache would have had."""
    from mpi4py import MPI

    grid = Grid(scenario.grid)
    replayed = replay(ref_dir, scenario)
    iterations = len(output.list_snapshots(ref_dir)) - 1
    key_columns = [scenario.state_names.index(k) for k in scenario.dht.keys]
    rmadht = load_rmadht()
    # Room for a distinct key per cell and iteration at a quarter of the
    # slots (an entry takes under 256 bytes for up to 12 keys), so that no
    # eviction can turn a repeat into a miss.
    entries = grid.cells * iterations
    per_iteration = []
    with rmadht.SurrogateCache(MPI.COMM_SELF, n_inputs=len(key_columns), n_outputs=1,
                               digits=scenario.key_digits(), log10=scenario.key_log10(),
                               zero_below=scenario.dht.zero_below,
                               bytes_per_rank=max(16 << 20, 4 * entries * 256)) as cache:
        for inputs, _ in replayed:
            per_iteration.append(count_repeats(cache, inputs[:, key_columns]))
    cells = grid.cells
    return {"reference": str(ref_dir), "cells": cells,
            "digits": scenario.key_digits(), "log10": scenario.key_log10(),
            "zero_below": scenario.dht.zero_below,
            "best_hit_rate": sum(per_iteration) / (cells * len(per_iteration)),
            "per_iteration": [h / cells for h in per_iteration]}


def table(result: dict[str, Any]) -> str:
    """Overall figure, then the first, lowest and last iteration."""
    rates = result["per_iteration"]
    return (f"best possible hit rate {100 * result['best_hit_rate']:.1f}% over "
            f"{len(rates)} iterations of {result['cells']} cells\n"
            f"per iteration: first {100 * rates[0]:.1f}%, lowest {100 * min(rates):.1f}%, "
            f"last {100 * rates[-1]:.1f}%")
