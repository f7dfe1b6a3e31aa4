# SPDX-License-Identifier: BSD-3-Clause
"""``rtsim sweep``: the rounding study of De Lucia et al. (2021), sect. 4.1
(Table 1), and the interpolation study beside it.

Runs a small scenario once without the cache, then with the cache for every
pair of aqueous ("class 1") and mineral ("class 2") digits, rounding the
log10 of the key values and the raw values, and tabulates the maximum
eq. 2 error of each run.  Given interpolation settings, it also runs the
scenario's own exact rounding once without interpolation (the baseline)
and then with interpolation for every combination of method, neighbour
digits, tolerance, neighbour counts and radius.  sweep.png draws every
run's maximum error against its chemistry speedup.  Every run is a
separate ``mpiexec`` launch; the launcher comes from the RTSIM_MPIEXEC
environment variable (default ``mpiexec``) so that any MPI can be chosen.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from rtsim import output
from rtsim.compare import compare_runs, read_summary
from rtsim.errors import RtsimError
from rtsim.scenario import load_scenario

#: Above the 1e-5 threshold of De Lucia et al. (2021), sect. 3.4, an error
#: is set in bold.
THRESHOLD = 1e-5


def launcher() -> list[str]:
    """The MPI launcher command, split like a shell would."""
    return shlex.split(os.environ.get("RTSIM_MPIEXEC", "mpiexec"))


def default_scenario() -> Path:
    """scenarios/dol2d_small.toml of the source tree this module lives in."""
    return Path(__file__).resolve().parents[2] / "scenarios" / "dol2d_small.toml"


def _digits(text: str, what: str) -> list[int]:
    """A comma-separated digit list."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise RtsimError(f"--{what} must be a comma-separated list of digits, got {text!r}") from None
    if not values or not all(1 <= v <= 15 for v in values):
        raise RtsimError(f"--{what} digits must lie between 1 and 15, got {text!r}")
    return values


def _pairs(text: str, what: str, low: int, high: int) -> list[tuple[int, int]]:
    """A comma-separated list of A:B integer pairs within [low, high]."""
    try:
        pairs = [tuple(int(v) for v in item.split(":")) for item in text.split(",")
                 if item.strip()]
    except ValueError:
        raise RtsimError(f"--{what} must be a comma-separated list of A:B, got {text!r}") from None
    if not pairs or any(len(p) != 2 or not all(low <= v <= high for v in p) for p in pairs):
        raise RtsimError(f"--{what} must list A:B pairs of {low} to {high}, got {text!r}")
    return pairs  # type: ignore[return-value]


def _floats(text: str, what: str) -> list[float]:
    """A comma-separated list of positive finite numbers."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise RtsimError(f"--{what} must be a comma-separated list of numbers, "
                         f"got {text!r}") from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise RtsimError(f"--{what} must list numbers > 0, got {text!r}")
    return values


def run_once(ranks: int, scenario: Path, outdir: Path, extra: list[str]) -> None:
    """One ``rtsim run`` under the launcher; raises with its stderr on failure."""
    command = launcher() + ["-n", str(ranks), sys.executable, "-m", "rtsim", "run",
                            str(scenario), str(outdir)] + extra
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RtsimError(f"{shlex.join(command)} failed with exit code {done.returncode}:\n"
                         f"{done.stderr.strip()}")


def markdown(results: list[dict[str, Any]], modes: list[str]) -> str:
    """The maximum errors shaped like Table 1 of De Lucia et al. (2021), one
    column per mode."""
    pairs = sorted({(r["aqueous"], r["mineral"]) for r in results})
    by_key = {(r["aqueous"], r["mineral"], r["mode"]): r for r in results}
    header = "| Class 1 (aqueous) | Class 2 (minerals) | " + " | ".join(
        f"{m.capitalize()} error | {m.capitalize()} hit rate" for m in modes) + " |"
    lines = [header, "|" + "---|" * (2 + 2 * len(modes))]
    for aqueous, mineral in pairs:
        cells = []
        for mode in modes:
            r = by_key.get((aqueous, mineral, mode))
            if r is None:
                cells += ["", ""]
                continue
            text = f"{r['max_error']:.2e}"
            cells += [f"**{text}**" if r["max_error"] > THRESHOLD else text,
                      f"{100 * r['hit_rate']:.1f}%"]
        lines.append(f"| {aqueous} | {mineral} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Maximum error of eq. 2 (De Lucia et al. 2021) over all snapshots; "
                 f"bold: above {THRESHOLD:.0e}.")
    return "\n".join(lines) + "\n"


def interpolation_markdown(baseline: dict[str, Any], results: list[dict[str, Any]]) -> str:
    """One row per interpolating run, after the exact-only baseline."""
    lines = ["| Method | Neighbour digits | Tolerance | Neighbours | Radius | Max error | "
             "Worst variable | Exact hits | Served | Chemistry speedup | Worker CPU speedup | "
             "Added cache CPU / PHREEQC CPU saved |", "|" + "---|" * 12]
    rows = [baseline] + results
    for r in rows:
        error = f"{r['max_error']:.2e}"
        worst = max(r["max_variable_error"].values(), default=0.0)
        cost = r.get("interp_cost_ratio")
        if r["kind"] == "exact":
            settings = ["exact only", "-", "-", "-", "-"]
        else:
            settings = [r["method"], f"{r['interp_aqueous']}:{r['interp_mineral']}",
                        f"{r['tolerance']:.0e}", f"{r['min_neighbours']}:{r['max_neighbours']}",
                        f"{r['radius']:g}"]
        cells = settings + [f"**{error}**" if r["max_error"] > THRESHOLD else error,
                            f"{worst:.1e}", f"{100 * r['hit_rate']:.1f}%",
                            f"{100 * r['served_rate']:.1f}%", f"{r['chemistry_speedup']:.2f}x",
                            f"{r['worker_cpu_speedup']:.2f}x",
                            "-" if cost is None else f"{cost:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Exact key {baseline['aqueous']}:{baseline['mineral']} on log10 in every row; "
                 f"bold: above {THRESHOLD:.0e}.  Speedups against the reference run; the "
                 "worker CPU speedup compares the workers' CPU seconds in PHREEQC and the "
                 "cache, which a loaded machine stretches less than wall-clock ones.  The "
                 "last column is the cache CPU time interpolation added over the baseline's "
                 "(lookups and the neighbour index), against the PHREEQC CPU time it saved.")
    return "\n".join(lines) + "\n"


def plot_front(path: Path, results: list[dict[str, Any]], title: str) -> Path:
    """Max eq. 2 error against chemistry speedup (wall clock, and worker
    CPU), exact-only and interpolating runs."""
    plt = output._pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    styles = {"exact": ("tab:blue", "o", "exact keys only"),
              "interpolating": ("tab:green", "^", "interpolating")}
    for ax, key, xlabel in ((axes[0], "chemistry_speedup", "chemistry speedup (wall clock)"),
                            (axes[1], "worker_cpu_speedup", "worker CPU speedup")):
        for kind, (color, marker, label) in styles.items():
            points = [r for r in results if r["kind"] == kind and r["max_error"] > 0
                      and r.get(key)]
            if not points:
                continue
            ax.scatter([r[key] for r in points], [r["max_error"] for r in points],
                       color=color, marker=marker, label=label)
            for r in points:
                ax.annotate(r["label"], (r[key], r["max_error"]), fontsize=6,
                            xytext=(3, 2), textcoords="offset points")
        ax.set_yscale("log")
        ax.axhline(THRESHOLD, color="tab:red", ls="--", lw=1, label=f"{THRESHOLD:.0e}")
        ax.set_xlabel(xlabel + " over the reference")
    axes[0].set_ylabel("max eq. 2 error")
    axes[0].legend(loc="upper left", fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _measure(reference: Path, run_dir: Path) -> dict[str, Any]:
    """The figures of one cached run against the reference."""
    cmp_ = compare_runs(reference, run_dir)
    summary = read_summary(run_dir)
    dht = summary["dht"]
    return {"max_error": cmp_["max_error"], "hit_rate": cmp_["hit_rate"],
            "served_rate": cmp_["served_rate"],
            "chemistry_speedup": cmp_["chemistry_speedup"],
            "worker_cpu_speedup": cmp_["worker_cpu_speedup"],
            "max_variable_error": cmp_["max_variable_error"],
            "lookup_s": dht["lookup_s"], "phreeqc_s": cmp_["phreeqc_s"]["dht"],
            "cache_cpu_s": dht["lookup_store_cpu_s"],
            "phreeqc_cpu_s": summary["phreeqc_cpu_s"],
            "phreeqc_cells": cmp_["phreeqc_cells"]["dht"]}


def sweep_command(args: argparse.Namespace) -> int:
    """Runs the sweep; writes sweep.md, sweep.json and sweep.png into args.outdir."""
    scenario = args.scenario or default_scenario()
    if not scenario.is_file():
        raise RtsimError(f"scenario {scenario} not found; pass one with --scenario")
    aqueous = _digits(args.aqueous, "aqueous")
    mineral = _digits(args.mineral, "mineral")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if modes == ["none"]:
        modes = []
    if any(m not in ("log", "raw") for m in modes):
        raise RtsimError(f"--modes must list log and/or raw, or be none, got {args.modes!r}")
    interp = None
    if args.interp_digits:
        methods = [m.strip() for m in args.interp_methods.split(",") if m.strip()]
        bad = [m for m in methods if m not in ("linear", "idw")]
        if not methods or bad:
            raise RtsimError(f"--interp-methods must list linear and/or idw, "
                             f"got {args.interp_methods!r}")
        # None: the scenario's own setting.
        interp = list(itertools.product(
            methods, _pairs(args.interp_digits, "interp-digits", 0, 15),
            _floats(args.interp_tolerances, "interp-tolerances")
            if args.interp_tolerances else [None],
            _pairs(args.interp_neighbours, "interp-neighbours", 2, 64)
            if args.interp_neighbours else [None],
            _floats(args.interp_radius, "interp-radius") if args.interp_radius else [None]))
    if not modes and not interp:
        raise RtsimError("nothing to run: give --modes log/raw or --interp-digits")
    extra = ["--iterations", str(args.iterations)] if args.iterations else []
    outdir: Path = args.outdir
    outdir.mkdir(parents=True, exist_ok=True)
    reference = outdir / "ref"
    print(f"reference run -> {reference}", flush=True)
    run_once(args.ranks, scenario, reference, extra)
    results = []
    for mode in modes:
        for a in aqueous:
            for m in mineral:
                run_dir = outdir / f"{mode}_{a}_{m}"
                flags = ["--dht", "--dht-digits", f"{a}:{m}", "--no-interpolate"]
                flags += ["--dht-raw"] if mode == "raw" else []
                run_once(args.ranks, scenario, run_dir, extra + flags)
                r = {"kind": "exact", "mode": mode, "aqueous": a, "mineral": m,
                     "label": f"{mode} {a}:{m}", **_measure(reference, run_dir)}
                results.append(r)
                print(f"{mode} {a}:{m}  max error {r['max_error']:.2e}  "
                      f"hit rate {100 * r['hit_rate']:.1f}%  "
                      f"chemistry speedup {r['chemistry_speedup']:.2f}x", flush=True)
    tables = [markdown([r for r in results if r["kind"] == "exact"], modes)] if modes else []
    if interp:
        baseline_dir = outdir / "exact"
        run_once(args.ranks, scenario, baseline_dir, extra + ["--dht", "--no-interpolate"])
        dht = load_scenario(scenario).dht
        baseline = {"kind": "exact", "mode": "log", "label": "scenario's exact key",
                    "aqueous": dht.aqueous_digits, "mineral": dht.mineral_digits,
                    **_measure(reference, baseline_dir)}
        results.append(baseline)
        print(f"exact baseline  max error {baseline['max_error']:.2e}  hit rate "
              f"{100 * baseline['hit_rate']:.1f}%  chemistry speedup "
              f"{baseline['chemistry_speedup']:.2f}x", flush=True)
        interpolating = []
        for number, (method, (ia, im), tol, counts, radius) in enumerate(interp, start=1):
            run_dir = outdir / f"interp_{number:03d}"
            flags = ["--dht", "--interpolate", "--interp-method", method,
                     "--interp-digits", f"{ia}:{im}"]
            flags += ["--interp-tolerance", repr(tol)] if tol else []
            flags += ["--interp-neighbours", f"{counts[0]}:{counts[1]}"] if counts else []
            flags += ["--interp-radius", repr(radius)] if radius else []
            run_once(args.ranks, scenario, run_dir, extra + flags)
            used = read_summary(run_dir)["dht"]["interpolation"]
            tol = used["state_tolerance"]
            r = {"kind": "interpolating", "run": run_dir.name, "method": method,
                 "interp_aqueous": ia, "interp_mineral": im, "tolerance": tol,
                 "min_neighbours": used["min_neighbours"],
                 "max_neighbours": used["max_neighbours"], "radius": used["radius"],
                 "label": f"{method} {ia}:{im} {tol:.0e} "
                          f"r{used['radius']:g} n{used['min_neighbours']}",
                 **_measure(reference, run_dir)}
            # What interpolating added to the cache's CPU time (lookups
            # and the neighbour index kept at stores) against the PHREEQC
            # CPU time it saved, both over the baseline's.
            saved = baseline["phreeqc_cpu_s"] - r["phreeqc_cpu_s"]
            r["interp_cost_ratio"] = ((r["cache_cpu_s"] - baseline["cache_cpu_s"]) / saved
                                      if saved > 0 else None)
            interpolating.append(r)
            results.append(r)
            print(f"{r['label']}  max error {r['max_error']:.2e}  served "
                  f"{100 * r['served_rate']:.1f}% (exact {100 * r['hit_rate']:.1f}%)  "
                  f"chemistry speedup {r['chemistry_speedup']:.2f}x", flush=True)
        tables.append(interpolation_markdown(baseline, interpolating))
    table = "\n".join(tables)
    (outdir / "sweep.md").write_text(table)
    output.write_json(outdir / "sweep.json", {"scenario": str(scenario), "ranks": args.ranks,
                                              "results": results})
    plot_front(outdir / "sweep.png", results, f"{scenario.stem}: error against speedup")
    print(table, end="")
    print(f"wrote {outdir / 'sweep.md'}, {outdir / 'sweep.json'}, {outdir / 'sweep.png'}")
    return 0
