# SPDX-License-Identifier: BSD-3-Clause
"""``rtsim compare``: a run with the cache against its reference.

The error of De Lucia et al. 2021 (eq. 2) at iteration t combines the
variables by the geometric mean of their relative root mean squared errors
over the grid:

    Error_t = exp( 1/m sum_i log( RMSE_i(t) / max_t(ref_i) ) )

The norm max_t(ref_i) is read as De Lucia et al. (2021) word it, "the
maximum value of each variable": the largest |ref_i| over all cells and
all compared iterations.
Taken at iteration t alone, it would blow up the error of a mineral once
it has nearly vanished everywhere: a residue of 1e-11 mol would become
its own scale.  A variable that is zero throughout the reference has no
scale and is left out.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from rtsim import output
from rtsim.errors import RtsimError


def relative_rmse(ref: np.ndarray, test: np.ndarray,
                  scales: Sequence[float] | None = None) -> list[float | None]:
    """Each variable's RMSE over the grid divided by its norm (None: no norm).

    ref and test are (variables, cells...) arrays; scales holds each
    variable's norm, by default its largest |ref| here.
    """
    if scales is None:
        scales = [float(np.max(np.abs(r))) for r in ref]
    return [None if scale == 0.0 else float(np.sqrt(np.mean((r - d) ** 2))) / scale
            for r, d, scale in zip(ref, test, scales)]


def eq2_error(ref: np.ndarray, test: np.ndarray, scales: Sequence[float] | None = None) -> float:
    """Error of eq. 2 between two (variables, cells...) arrays.

    The geometric mean is 0 as soon as one variable matches exactly, as
    eq. 2 is written; compare_runs reports every variable's error beside it
    for that reason.
    """
    errors = [e for e in relative_rmse(ref, test, scales) if e is not None]
    if not errors or min(errors) == 0.0:
        return 0.0
    return math.exp(sum(math.log(e) for e in errors) / len(errors))


def read_summary(run_dir: Path) -> dict[str, Any]:
    """The summary.json of a run directory."""
    path = run_dir / "summary.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise RtsimError(f"{path} not found: is {run_dir} the output directory of a run?") from None
    except json.JSONDecodeError as exc:
        raise RtsimError(f"{path} is not valid JSON: {exc}") from None


def compare_runs(ref_dir: Path, dht_dir: Path,
                 variables: Sequence[str] | None = None) -> dict[str, Any]:
    """Computes the comparison (and writes nothing)."""
    ref_sum, dht_sum = read_summary(ref_dir), read_summary(dht_dir)
    if variables is None:
        variables = ref_sum.get("compare_variables")
    ref_snaps, dht_snaps = output.list_snapshots(ref_dir), output.list_snapshots(dht_dir)
    common = sorted(set(ref_snaps) & set(dht_snaps))
    if not common:
        raise RtsimError(f"{ref_dir} and {dht_dir} have no snapshot iteration in common")
    pairs = []
    for iteration in common:
        ref_names, ref_maps = output.load_snapshot(ref_snaps[iteration])
        dht_names, dht_maps = output.load_snapshot(dht_snaps[iteration])
        chosen = list(variables) if variables else ref_names
        missing = [v for v in chosen if v not in ref_names or v not in dht_names]
        if missing:
            raise RtsimError(f"variable(s) {', '.join(missing)} missing from the snapshots of "
                             f"iteration {iteration}")
        pairs.append((iteration, np.array([ref_maps[ref_names.index(v)] for v in chosen]),
                      np.array([dht_maps[dht_names.index(v)] for v in chosen])))
    scales = np.max([np.abs(ref).reshape(len(ref), -1).max(axis=1) for _, ref, _ in pairs], axis=0)
    errors = [{"iteration": it, "error": eq2_error(ref, dht, scales),
               "variables": dict(zip(chosen, relative_rmse(ref, dht, scales)))}
              for it, ref, dht in pairs]
    worst = {name: max(e["variables"][name] for e in errors)
             for name in chosen if errors[0]["variables"][name] is not None}
    dht_info = dht_sum.get("dht") or {}
    interpolation = dht_info.get("interpolation")
    # What the cache cost the workers against the PHREEQC time it saved
    # them (both summed over the workers).
    saved = ref_sum.get("phreeqc_s", 0.0) - dht_sum.get("phreeqc_s", 0.0)
    cache_s = dht_info.get("lookup_store_s")
    # The same in CPU seconds of the workers, which a loaded machine
    # stretches far less than wall-clock ones: PHREEQC's CPU time in the
    # reference against PHREEQC's and the cache's in the cached run.
    cpu_ref = ref_sum.get("phreeqc_cpu_s")
    cpu_dht = (dht_sum.get("phreeqc_cpu_s", 0.0) + dht_info.get("lookup_store_cpu_s", 0.0)
               if "phreeqc_cpu_s" in dht_sum else None)
    return {
        "reference": str(ref_dir), "dht": str(dht_dir),
        "variables": list(variables) if variables else None,
        "error_per_iteration": errors,
        "max_error": max(e["error"] for e in errors),
        "max_variable_error": worst,
        "runtime_s": {"reference": ref_sum["runtime_s"], "dht": dht_sum["runtime_s"]},
        "chemistry_s": {"reference": ref_sum["chemistry_s"], "dht": dht_sum["chemistry_s"]},
        "speedup": ref_sum["runtime_s"] / dht_sum["runtime_s"],
        "chemistry_speedup": ref_sum["chemistry_s"] / dht_sum["chemistry_s"],
        "worker_cpu_s": {"reference": cpu_ref, "dht": cpu_dht},
        "worker_cpu_speedup": cpu_ref / cpu_dht if cpu_ref and cpu_dht else None,
        "hit_rate": dht_info.get("hit_rate"),
        "served_rate": dht_info.get("served_rate", dht_info.get("hit_rate")),
        "interpolated_rate": dht_info.get("interpolated_rate", 0.0 if dht_info else None),
        "interpolation": interpolation,
        "phreeqc_s": {"reference": ref_sum.get("phreeqc_s"), "dht": dht_sum.get("phreeqc_s")},
        "phreeqc_cells": {"reference": ref_sum.get("phreeqc_cells"),
                          "dht": dht_sum.get("phreeqc_cells")},
        "cache_s": cache_s,
        "cache_cost_ratio": cache_s / saved if cache_s is not None and saved > 0 else None,
        "evictions": dht_info.get("evictions"),
        "checksum_retries": dht_info.get("checksum_retries"),
    }


def table(result: dict[str, Any]) -> str:
    """A short plain-text table of a comparison."""
    hit = result["hit_rate"]
    served = result.get("served_rate")
    interpolating = bool(result.get("interpolation"))
    rows = [
        ("", "reference", "with cache"),
        ("runtime (s)", f"{result['runtime_s']['reference']:.1f}",
         f"{result['runtime_s']['dht']:.1f}"),
        ("chemistry (s)", f"{result['chemistry_s']['reference']:.1f}",
         f"{result['chemistry_s']['dht']:.1f}"),
        ("speedup (runtime)", "", f"{result['speedup']:.2f}x"),
        ("chemistry speedup", "", f"{result['chemistry_speedup']:.2f}x"),
    ]
    cpu = result.get("worker_cpu_speedup")
    if cpu is not None:
        rows.append(("worker CPU speedup", "", f"{cpu:.2f}x"))
    rows.append(("hit rate", "", "-" if hit is None else f"{100 * hit:.1f}%"))
    if interpolating:
        rows += [("interpolated", "", f"{100 * (served - hit):.1f}%"),
                 ("served", "", f"{100 * served:.1f}%")]
    cells = result.get("phreeqc_cells") or {}
    if cells.get("reference") is not None and cells.get("dht") is not None:
        rows.append(("PHREEQC cells", f"{cells['reference']:,}", f"{cells['dht']:,}"))
    ratio = result.get("cache_cost_ratio")
    if ratio is not None:
        rows.append(("cache s / saved s", "", f"{ratio:.3f}"))
    rows.append(("max eq. 2 error", "", f"{result['max_error']:.2e}"))
    worst = result["max_variable_error"]
    if worst:
        name = max(worst, key=worst.get)
        rows.append(("worst variable", name, f"{worst[name]:.2e}"))
    return "\n".join(f"{a:<20}{b:>12}{c:>14}" for a, b, c in rows)


def plot_errors(path: Path, result: dict[str, Any]) -> Path:
    """The error of eq. 2 and of each variable against the iteration, log axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = result["error_per_iteration"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    # Each variable's own error, thin: eq. 2 drops to 0 (off a log axis)
    # once any one variable matches exactly, e.g. a mineral gone everywhere.
    for name in result["max_variable_error"]:
        points = [(e["iteration"], e["variables"][name]) for e in history
                  if e["variables"][name]]
        if points:
            ax.semilogy(*zip(*points), lw=0.7, alpha=0.7, label=name)
    points = [(e["iteration"], e["error"]) for e in history if e["error"] > 0]
    if points:
        ax.semilogy(*zip(*points), color="black", marker=".", lw=1.4, label="eq. 2")
    ax.axhline(1e-5, color="tab:red", ls="--", lw=1, label="1e-5")
    ax.set_xlabel("iteration")
    ax.set_ylabel("relative RMSE; eq. 2")
    ax.set_title(f"max error {result['max_error']:.2e}")
    ax.legend(loc="lower right", fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def compare_command(ref_dir: Path, dht_dir: Path, outdir: Path | None,
                    variables: Sequence[str] | None) -> tuple[dict[str, Any], list[Path]]:
    """Runs a comparison and writes compare.json and compare.png to outdir."""
    result = compare_runs(ref_dir, dht_dir, variables)
    outdir = outdir or dht_dir
    outdir.mkdir(parents=True, exist_ok=True)
    output.write_json(outdir / "compare.json", result)
    return result, [outdir / "compare.json", plot_errors(outdir / "compare.png", result)]
