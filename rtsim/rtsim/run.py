# SPDX-License-Identifier: BSD-3-Clause
"""``rtsim run``: sets up every rank and gives it its role.

Everything that can fail before the loop is checked on every rank and the
outcome agreed on collectively, so a bad scenario, a missing database or a
PHREEQC error ends every rank with the same message and a non-zero exit
instead of leaving some ranks waiting for the others.
"""

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np

from rtsim import output
from rtsim.cache import INTERPOLATION_STAT_NAMES, CellCache, load_rmadht
from rtsim.chemistry import ChemistryEngine
from rtsim.errors import RtsimError
from rtsim.flow import solve_flow
from rtsim.master import Master, RunOptions, stop_workers
from rtsim.protocol import MASTER, MpiChannel
from rtsim.scenario import AUX_NAMES, Scenario
from rtsim.worker import serve

T = TypeVar("T")

EXIT_ERROR = 2
EXIT_CRASH = 1


class AgreedError(RtsimError):
    """An error every rank knows about; only the master prints it."""


def agree(comm: Any, action: Callable[[], T], ranks: set[int] | None = None) -> T | None:
    """Runs action on the given ranks (default all) and shares its outcome.

    If any rank failed, every rank raises AgreedError with the first message.
    """
    result: T | None = None
    error = None
    if ranks is None or comm.Get_rank() in ranks:
        try:
            result = action()
        except RtsimError as exc:
            error = str(exc)
    failures = [e for e in comm.allgather(error) if e]
    if failures:
        raise AgreedError(failures[0])
    return result


def _make_outdir(path: Path) -> None:
    """Creates the output directory and removes snapshots of an older run."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RtsimError(f"cannot create output directory {path}: {exc.strerror}") from None
    for stale in output.list_snapshots(path).values():
        stale.unlink()


def _initial_fields(scenario: Scenario, engine: ChemistryEngine) -> tuple[np.ndarray, np.ndarray]:
    """The pore water with its minerals, and the injected water."""
    pore = engine.water(scenario.pore_water, "pore water")
    injected = engine.water(scenario.injection, "injected water")
    first_mineral = len(scenario.components)
    pore[first_mineral:len(scenario.state_names)] = [m.initial for m in scenario.minerals]
    return pore, injected


def run(comm: Any, scenario: Scenario, options: RunOptions) -> int:
    """Runs the simulation on every rank of comm; returns the exit code."""
    rank, size = comm.Get_rank(), comm.Get_size()
    try:
        if size < 2:
            raise AgreedError("rtsim run needs a master and at least one worker: "
                              "start it with mpiexec -n 2 or more")
        rmadht = agree(comm, load_rmadht) if options.dht else None
        engine = agree(comm, lambda: ChemistryEngine(scenario))
        assert engine is not None
        fields = agree(comm, lambda: _initial_fields(scenario, engine))
        assert fields is not None
        agree(comm, lambda: _make_outdir(options.outdir), {MASTER})
        if options.dht_file is not None and not Path(options.dht_file).is_file():
            raise AgreedError(f"--dht-file {options.dht_file}: no such file")
    except AgreedError as exc:
        if rank == MASTER:
            print(f"rtsim: error: {exc}", file=sys.stderr)
        return EXIT_ERROR

    worker_comm = comm.Split(1 if rank != MASTER else _undefined(), rank)
    if rank == MASTER:
        return _run_master(comm, scenario, options, fields)
    return _run_worker(comm, worker_comm, scenario, options, engine, rmadht)


def _undefined() -> int:
    """MPI.UNDEFINED: the master's colour, outside the workers' communicator."""
    from mpi4py import MPI

    return MPI.UNDEFINED


def _run_worker(comm: Any, worker_comm: Any, scenario: Scenario, options: RunOptions,
                engine: ChemistryEngine, rmadht: Any) -> int:
    """A worker rank: create the cache, serve packages, close."""
    cache = None

    def create() -> None:
        """Collective over the workers."""
        nonlocal cache
        if rmadht is not None:
            cache = CellCache(scenario, worker_comm, options.dht_size_mb, rmadht)
            if options.dht_file is not None:
                cache.restore(options.dht_file)

    try:
        agree(comm, create)
    except AgreedError:
        return EXIT_ERROR
    channel = MpiChannel(comm, background_sends=True)
    try:
        _, aborted = serve(channel, engine, cache, scenario.dt)
        channel.close()
    finally:
        if cache is not None:
            cache.close()
        worker_comm.Free()
    return EXIT_ERROR if aborted else 0


def _run_master(comm: Any, scenario: Scenario, options: RunOptions,
                fields: tuple[np.ndarray, np.ndarray]) -> int:
    """The master rank: run the loop, stop the workers, write the outputs."""
    try:
        agree(comm, lambda: None)  # the workers' cache creation
    except AgreedError as exc:
        print(f"rtsim: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    channel = MpiChannel(comm, background_sends=True)
    workers = list(range(1, comm.Get_size()))
    initial, injected = fields
    started = time.perf_counter()
    try:
        master = Master(scenario, options, initial, injected, channel, workers)
        timing = master.run()
    except RtsimError as exc:
        stop_workers(channel, workers, abort=True)
        print(f"\nrtsim: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception:  # noqa: BLE001 - the workers must be released before we go
        traceback.print_exc()
        stop_workers(channel, workers, abort=True)
        return EXIT_CRASH
    worker_stats = stop_workers(channel, workers, abort=False)
    summary = build_summary(scenario, options, comm, master, timing, worker_stats)
    summary["wall_s"] = time.perf_counter() - started
    write_outputs(options.outdir, scenario, master, summary)
    dht = summary["dht"]
    hits = f", hit rate {100 * dht['hit_rate']:.1f}%" if dht else ""
    if dht and dht["interpolation"]:
        hits += f", served {100 * dht['served_rate']:.1f}%"
    print(f"rtsim: {scenario.name}: {scenario.iterations} iterations on {summary['ranks']} ranks "
          f"in {summary['runtime_s']:.1f} s (chemistry {summary['chemistry_s']:.1f} s{hits}); "
          f"outputs in {options.outdir}", flush=True)
    return 0


def build_summary(scenario: Scenario, options: RunOptions, comm: Any, master: Master,
                  timing: dict[str, float], worker_stats: list[dict[str, Any]]) -> dict[str, Any]:
    """The contents of summary.json."""
    from mpi4py import MPI
    from phreeqc import Phreeqc

    timeline = master.timeline
    warnings = [w for s in worker_stats for w in s["warnings"]]
    summary: dict[str, Any] = {
        "scenario": scenario.name,
        "scenario_file": scenario.path,
        "ranks": comm.Get_size(),
        "workers": comm.Get_size() - 1,
        "cells": master.grid.cells,
        "iterations": scenario.iterations,
        "dt_s": scenario.dt,
        "simulated_time_s": scenario.iterations * scenario.dt,
        "work_package_size": options.package_size,
        "work_packages": len(master.packages),
        **timing,
        "phreeqc_cells": sum(s["phreeqc_cells"] for s in worker_stats),
        "phreeqc_cpu_s": sum(s["phreeqc_cpu_s"] for s in worker_stats),
        # Where the workers' wall clock went (WorkerStats), summed.
        "worker_compute_s": sum(s["compute_s"] for s in worker_stats),
        "worker_receive_s": sum(s["receive_s"] for s in worker_stats),
        "worker_send_s": sum(s["send_s"] for s in worker_stats),
        "transport_substeps_per_iteration": master.transport.substeps(scenario.dt,
                                                                      scenario.courant),
        "phreeqc_warnings": {"count": sum(s["warning_count"] for s in worker_stats),
                             "first": warnings[:3]},
        "mpi": MPI.Get_library_version().splitlines()[0].strip(),
        "phreeqc": Phreeqc.GetVersionString(),
        "compare_variables": list(scenario.compare),
        "dht": None,
        "timeline": timeline,
    }
    if options.dht:
        summary["dht"] = dht_summary(scenario, options, timeline, worker_stats)
    return summary


def dht_summary(scenario: Scenario, options: RunOptions, timeline: list[dict[str, Any]],
                worker_stats: list[dict[str, Any]]) -> dict[str, Any]:
    """summary.json's "dht": hits, interpolations, cache counters, settings.

    hit_rate counts exact hits only, as without interpolation; served_rate
    adds the interpolated rows.  The seconds are summed over the workers.
    """
    reads = sum(t["lookups"] for t in timeline)
    hits = sum(t["hits"] for t in timeline)
    interpolated = sum(t["interpolated"] for t in timeline)
    totals = {name: sum(s["cache"].get(name, 0) for s in worker_stats)
              for name in worker_stats[0]["cache"]}
    phreeqc_cells = sum(s["phreeqc_cells"] for s in worker_stats)
    phreeqc_s = sum(s["phreeqc_s"] for s in worker_stats)
    lookup_s = sum(s["lookup_s"] for s in worker_stats)
    dht: dict[str, Any] = {
        "reads": reads, "hits": hits, "interpolated": interpolated,
        "hit_rate": hits / reads if reads else 0.0,
        "served_rate": (hits + interpolated) / reads if reads else 0.0,
        "interpolated_rate": interpolated / reads if reads else 0.0,
        "evictions": totals["evictions"], "checksum_retries": totals["checksum_retries"],
        "invalidations": totals["invalidations"], "writes": totals["writes"],
        "stored": sum(s["stored"] for s in worker_stats),
        "lookup_store_s": sum(s["cache_s"] for s in worker_stats),
        "lookup_store_cpu_s": sum(s["cache_cpu_s"] for s in worker_stats),
        "lookup_s": lookup_s,
        "store_s": sum(s["store_s"] for s in worker_stats),
        "lookup_ms_per_row": 1e3 * lookup_s / reads if reads else None,
        "phreeqc_ms_per_cell": 1e3 * phreeqc_s / phreeqc_cells if phreeqc_cells else None,
        "rejected_phase_changes": sum(s["rejected_phase_changes"] for s in worker_stats),
        "rejected_hits": sum(s["rejected_hits"] for s in worker_stats),
        "cache_stats": totals,
        "size_mb_per_worker": options.dht_size_mb,
        "keys": list(scenario.dht.keys),
        "digits": scenario.key_digits(),
        "log10": scenario.key_log10(),
        "zero_below": scenario.dht.zero_below,
        "snapshot_file": options.dht_file,
        "interpolation": None,
    }
    spec = scenario.dht.interpolation
    if spec.enabled:
        # The cache's own counters of interpolation: served rows and the
        # reasons it refused to interpolate.
        own = {k: totals.get(k, 0) for k in INTERPOLATION_STAT_NAMES}
        dht["interpolation"] = {
            "method": spec.method, "digits": scenario.interpolation_digits(),
            "phase": scenario.interpolation_phase(),
            "state_tolerance": spec.tolerance,
            "tolerance": dict(zip(scenario.state_names + AUX_NAMES,
                                  scenario.interpolation_tolerances())),
            "min_neighbours": spec.min_neighbours, "max_neighbours": spec.max_neighbours,
            "radius": spec.radius,
            "coarse_digits": scenario.interpolation_coarse_digits(),
            "coarse_tolerance_scale": spec.coarse_tolerance_scale,
            "interpolated": interpolated,
            "rejected_phase_changes": sum(s["rejected_interpolations"] for s in worker_stats),
            "cache_counters": own,
        }
    return dht


def write_outputs(outdir: Path, scenario: Scenario, master: Master,
                  summary: dict[str, Any]) -> None:
    """summary.json and the two figures."""
    output.write_json(outdir / "summary.json", summary)
    maps = master.fields.T.reshape(len(scenario.field_names), master.grid.ny, master.grid.nx)
    dht = summary["dht"]
    label = ("reference" if not dht else
             "interpolating cache" if dht["interpolation"] else "with cache")
    output.plot_maps(outdir / "maps.png", maps, scenario.field_names,
                     f"{scenario.name}, iteration {scenario.iterations} ({label})")
    output.plot_timeline(outdir / "timeline.png", master.timeline,
                         f"{scenario.name} ({label}): chemistry per iteration")
    flow = solve_flow(master.grid, scenario.flow)
    output.plot_flow(outdir / "flow.png", master.grid, flow.pressure, flow.flux_x, flow.flux_y,
                     f"{scenario.name}: steady flow")
