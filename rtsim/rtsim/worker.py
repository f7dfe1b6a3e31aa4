# SPDX-License-Identifier: BSD-3-Clause
"""Worker ranks: chemistry of work packages, through the cache if enabled."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from rtsim.cache import HIT, INTERPOLATED, MISS, CellCache
from rtsim.chemistry import ChemistryEngine
from rtsim.errors import RtsimError
from rtsim.protocol import (MASTER, TAG_CONTROL, TAG_FAILURE, TAG_RESULT, TAG_STATS, TAG_WORK,
                            Channel)


@dataclass
class PackageResult:
    """A worker's answer for one work package."""

    package: int
    results: np.ndarray  # (cells, fields): new state, pH, pe, mu
    lookups: int
    hits: int  # exact
    interpolated: int
    phreeqc_cells: int
    phreeqc_s: float


@dataclass
class WorkerStats:
    """What a worker reports when the run ends."""

    packages: int = 0
    phreeqc_cells: int = 0
    phreeqc_s: float = 0.0
    cache_s: float = 0.0  # lookup_s + store_s
    lookup_s: float = 0.0
    store_s: float = 0.0
    # CPU seconds of this process: on a loaded machine they hold still
    # where the wall-clock ones above grow with the load.
    phreeqc_cpu_s: float = 0.0
    cache_cpu_s: float = 0.0
    hits: int = 0  # exact
    interpolated: int = 0
    # Wall-clock seconds of the serve loop: computing packages (cache and
    # PHREEQC, compute_package), waiting for the master's next message
    # (between iterations too, while the master transports), and handing
    # the answers to MPI (in the background: see rtsim.protocol).
    compute_s: float = 0.0
    receive_s: float = 0.0
    send_s: float = 0.0
    stored: int = 0
    rejected_phase_changes: int = 0
    rejected_interpolations: int = 0
    rejected_hits: int = 0
    warning_count: int = 0
    warnings: list[str] = field(default_factory=list)
    cache: dict[str, int] | None = None


def compute_package(engine: ChemistryEngine, cache: CellCache | None, package: int,
                    states: np.ndarray, dt: float,
                    stats: WorkerStats) -> PackageResult:
    """Runs one package: cache lookups, PHREEQC for the misses, stores.

    Exact hits and interpolated rows are served alike; only the rows
    PHREEQC computed are stored (see rtsim.cache on why interpolated rows
    are not).
    """
    c0, t0 = time.process_time(), time.perf_counter()
    if cache is not None:
        results, status = cache.lookup(states)
    else:
        results = np.empty((states.shape[0], len(engine.field_columns)))
        status = np.full(states.shape[0], MISS, dtype=np.uint8)
    c1, t1 = time.process_time(), time.perf_counter()
    miss = status == MISS
    if miss.any():
        results[miss] = engine.react(states[miss], dt)
    c2, t2 = time.process_time(), time.perf_counter()
    if cache is not None and miss.any():
        stats.stored += cache.store(states[miss], results[miss])
    c3, t3 = time.process_time(), time.perf_counter()
    n_miss = int(np.count_nonzero(miss))
    hits = int(np.count_nonzero(status == HIT))
    interpolated = int(np.count_nonzero(status == INTERPOLATED))
    stats.packages += 1
    stats.phreeqc_cells += n_miss
    stats.phreeqc_s += t2 - t1
    stats.lookup_s += t1 - t0
    stats.store_s += t3 - t2
    stats.cache_s += (t1 - t0) + (t3 - t2)
    stats.phreeqc_cpu_s += c2 - c1
    stats.cache_cpu_s += (c1 - c0) + (c3 - c2)
    stats.hits += hits
    stats.interpolated += interpolated
    return PackageResult(package=package, results=results,
                         lookups=states.shape[0] if cache is not None else 0,
                         hits=hits, interpolated=interpolated, phreeqc_cells=n_miss,
                         phreeqc_s=t2 - t1)


def serve(channel: Channel, engine: ChemistryEngine, cache: CellCache | None,
          dt: float) -> tuple[WorkerStats, bool]:
    """Answers the master until it says stop.

    Returns this worker's totals and whether the master aborted the run.

    A failure in one package is reported to the master, which then stops
    everybody; the worker keeps listening so that shutdown stays collective.
    """
    stats = WorkerStats()
    while True:
        t0 = time.perf_counter()
        _, tag, payload = channel.receive(MASTER)
        stats.receive_s += time.perf_counter() - t0
        if tag == TAG_WORK:
            package, states = payload
            try:
                t1 = time.perf_counter()
                result = compute_package(engine, cache, package, states, dt, stats)
                t2 = time.perf_counter()
                channel.send(MASTER, TAG_RESULT, result)
                stats.compute_s += t2 - t1
                stats.send_s += time.perf_counter() - t2
            except Exception as exc:  # noqa: BLE001 - any failure must reach the master
                message = str(exc) if isinstance(exc, RtsimError) else f"{type(exc).__name__}: {exc}"
                channel.send(MASTER, TAG_FAILURE, (package, message))
        elif tag == TAG_CONTROL:
            command, argument = payload
            if command == "stop":
                aborted = bool(argument)
                break
            if command == "snapshot" and cache is not None:
                cache.dump(argument)
    stats.warning_count = engine.warning_count
    stats.warnings = engine.warnings[:3]
    if cache is not None:
        stats.rejected_phase_changes = cache.rejected_phase_changes
        stats.rejected_interpolations = cache.rejected_interpolations
        stats.rejected_hits = cache.rejected_hits
        stats.cache = cache.stats()
    channel.send(MASTER, TAG_STATS, asdict(stats))
    return stats, aborted
