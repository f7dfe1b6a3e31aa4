# SPDX-License-Identifier: BSD-3-Clause
"""The master rank: flow, transport, dispatch of work packages, outputs.

Each coupling iteration is sequential non-iterative (De Lucia et al. 2021,
Fig. 4): advect the conservative totals, then hand the work packages to
idle workers first come, first served, until every package is back.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rtsim import output
from rtsim.errors import RtsimError
from rtsim.grid import Grid
from rtsim.packages import make_packages
from rtsim.progress import Progress
from rtsim.protocol import TAG_CONTROL, TAG_FAILURE, TAG_RESULT, TAG_STATS, TAG_WORK, Channel
from rtsim.scenario import Scenario
from rtsim.transport import UpwindTransport


class WorkerFailure(RtsimError):
    """A worker could not compute a package; the run is abandoned."""


@dataclass(frozen=True)
class RunOptions:
    """Command-line settings of a run that are not part of the scenario."""

    outdir: Path
    package_size: int = 64
    dht: bool = False
    dht_size_mb: int = 64
    dht_snaps: int = 0
    dht_file: str | None = None
    progress: bool = False
    progress_style: str = "auto"  # "bar", "lines", or "auto": bar on a terminal


@dataclass
class ChemistryTally:
    """What one iteration's chemistry cost and how the cache did."""

    seconds: float = 0.0
    lookups: int = 0
    hits: int = 0  # exact
    interpolated: int = 0
    phreeqc_cells: int = 0
    phreeqc_s: float = 0.0


#: Packages a worker may hold while enough remain.  With two, its next
#: package is already on its way when it answers, so it does not sit idle
#: for the master's poll and turnaround (both ranks sleep between probes).
PREFETCH = 2


def dispatch(channel: Channel, workers: list[int], packages: list[np.ndarray],
             states: np.ndarray, results: np.ndarray) -> ChemistryTally:
    """Runs every package on the workers; fills results row by row.

    Every worker first gets one package, then a second while PREFETCH
    packages per worker remain in the queue; each answer frees room for the
    next one, first come, first served.  Once fewer remain, nobody gets a
    second one: the last packages go to whichever worker is free, and a
    package queued earlier waits behind at most one other.  After a
    failure no new package is sent, the outstanding ones are collected, and
    WorkerFailure is raised.
    """
    tally = ChemistryTally()
    start = time.perf_counter()
    queue = deque(range(len(packages)))
    held: dict[int, deque[int]] = {worker: deque() for worker in workers}
    failure: str | None = None
    while True:
        for depth in range(1, PREFETCH + 1):
            for worker in workers:
                if (failure is None and queue and len(held[worker]) < depth
                        and (depth == 1 or len(queue) >= PREFETCH * len(workers))):
                    package = queue.popleft()
                    channel.send(worker, TAG_WORK, (package, states[packages[package]]))
                    held[worker].append(package)
        if not any(held.values()):
            break
        source, tag, payload = channel.receive()
        if not held.get(source):
            raise RtsimError(f"unexpected message (tag {tag}) from rank {source}")
        if tag == TAG_FAILURE and payload[0] in held[source]:
            held[source].remove(payload[0])
            failure = failure or f"worker rank {source}: {payload[1]}"
            queue.clear()
        elif tag == TAG_RESULT and payload.package in held[source]:
            held[source].remove(payload.package)
            results[packages[payload.package]] = payload.results
            tally.lookups += payload.lookups
            tally.hits += payload.hits
            tally.interpolated += payload.interpolated
            tally.phreeqc_cells += payload.phreeqc_cells
            tally.phreeqc_s += payload.phreeqc_s
        else:
            raise RtsimError(f"unexpected message (tag {tag}) from rank {source}")
    if failure is not None:
        raise WorkerFailure(failure)
    tally.seconds = time.perf_counter() - start
    return tally


def stop_workers(channel: Channel, workers: list[int], abort: bool) -> list[dict[str, Any]]:
    """Tells every worker to stop and collects their final statistics.

    With abort set the workers exit with an error code too.
    """
    for worker in workers:
        channel.send(worker, TAG_CONTROL, ("stop", abort))
    stats = {}
    while len(stats) < len(workers):
        source, tag, payload = channel.receive()
        if tag == TAG_STATS:
            stats[source] = payload
        # A package result or failure still in flight after an abort is moot.
    # Each worker took every message before it answered the stop.
    channel.close()
    return [stats[w] for w in workers]


class Master:
    """Owns the fields and drives the coupling loop."""

    def __init__(self, scenario: Scenario, options: RunOptions, initial: np.ndarray,
                 injected: np.ndarray, channel: Channel, workers: list[int]) -> None:
        self.scenario = scenario
        self.options = options
        self.channel = channel
        self.workers = workers
        self.grid = Grid(scenario.grid)
        self.transport = UpwindTransport.steady(self.grid, scenario.flow)
        self.n_comp = len(scenario.components)
        self.n_state = len(scenario.state_names)
        self.fields = np.tile(initial, (self.grid.cells, 1))
        self.injected = injected[:self.n_comp].copy()
        self.packages = make_packages(self.grid.cells, options.package_size)
        self.timeline: list[dict[str, float]] = []

    def run(self) -> dict[str, Any]:
        """Runs all iterations; returns the timing figures for summary.json."""
        sc = self.scenario
        outdir = self.options.outdir
        start = time.perf_counter()
        transport_s = chemistry_s = output_s = phreeqc_s = 0.0
        output.write_snapshot(outdir, 0, 0.0, self.fields, sc.field_names, self.grid)
        progress = Progress(sc.iterations, enabled=self.options.progress,
                            live={"bar": True, "lines": False}.get(self.options.progress_style))
        results = np.empty_like(self.fields)
        for iteration in range(1, sc.iterations + 1):
            t0 = time.perf_counter()
            mobile = self.fields[:, :self.n_comp]
            substeps = self.transport.advance(mobile, sc.dt, self.injected, sc.courant)
            t1 = time.perf_counter()
            tally = dispatch(self.channel, self.workers, self.packages,
                             self.fields[:, :self.n_state], results)
            self.fields, results = results, self.fields
            t2 = time.perf_counter()
            if self.options.dht and self.options.dht_snaps == 2:
                self._snapshot_cache(outdir / "dht.snap")
            if iteration % sc.output_interval == 0 or iteration == sc.iterations:
                output.write_snapshot(outdir, iteration, iteration * sc.dt, self.fields,
                                      sc.field_names, self.grid)
            t3 = time.perf_counter()
            transport_s += t1 - t0
            chemistry_s += tally.seconds
            phreeqc_s += tally.phreeqc_s
            output_s += t3 - t2
            self.timeline.append({
                "iteration": iteration, "transport_s": t1 - t0, "chemistry_s": tally.seconds,
                "substeps": substeps, "lookups": tally.lookups, "hits": tally.hits,
                "interpolated": tally.interpolated, "phreeqc_cells": tally.phreeqc_cells})
            served = tally.hits + tally.interpolated
            progress.update(iteration, self.grid.cells / max(tally.seconds, 1e-9),
                            tally.hits / tally.lookups if tally.lookups else None,
                            served / tally.lookups
                            if tally.lookups and self.scenario.dht.interpolation.enabled
                            else None)
        progress.finish()
        if self.options.dht and self.options.dht_snaps == 1:
            self._snapshot_cache(outdir / "dht.snap")
        return {"runtime_s": time.perf_counter() - start, "chemistry_s": chemistry_s,
                "transport_s": transport_s, "output_s": output_s, "phreeqc_s": phreeqc_s}

    def _snapshot_cache(self, path: Path) -> None:
        """Asks every worker to join the collective cache dump."""
        for worker in self.workers:
            self.channel.send(worker, TAG_CONTROL, ("snapshot", str(path)))
