# SPDX-License-Identifier: BSD-3-Clause
"""Files a run leaves in its output directory.

fields_NNNNN.npz   one snapshot per output interval (and iteration 0):
                   ``fields`` (variables, ny, nx), ``names``, ``iteration``,
                   ``time_s``
summary.json       figures of the run (see docs/reference/rtsim-cli.md)
maps.png           every variable at the last iteration
timeline.png       chemistry time and cache hit rate per iteration
flow.png           permeability, pressure and Darcy speed of the steady flow
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from rtsim.grid import Grid
from rtsim.scenario import BAR_PA, MILLIDARCY_M2

_SNAPSHOT = re.compile(r"fields_(\d+)\.npz$")


def snapshot_path(outdir: Path, iteration: int) -> Path:
    """Where the snapshot of an iteration goes."""
    return outdir / f"fields_{iteration:05d}.npz"


def write_snapshot(outdir: Path, iteration: int, time_s: float, fields: np.ndarray,
                   names: Sequence[str], grid: Grid) -> Path:
    """Writes the (cells, variables) fields as maps of the grid."""
    path = snapshot_path(outdir, iteration)
    maps = fields.T.reshape(len(names), grid.ny, grid.nx)
    np.savez(path, fields=maps, names=np.array(names), iteration=iteration, time_s=time_s)
    return path


def list_snapshots(outdir: Path) -> dict[int, Path]:
    """Snapshots in a directory, by iteration."""
    found = {}
    for path in outdir.glob("fields_*.npz"):
        match = _SNAPSHOT.search(path.name)
        if match:
            found[int(match.group(1))] = path
    return dict(sorted(found.items()))


def load_snapshot(path: Path) -> tuple[list[str], np.ndarray]:
    """Returns (names, maps) of a snapshot; maps is (variables, ny, nx)."""
    with np.load(path) as data:
        return [str(n) for n in data["names"]], np.array(data["fields"])


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Writes indented JSON, ending with a newline."""
    path.write_text(json.dumps(data, indent=2) + "\n")


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_maps(path: Path, maps: np.ndarray, names: Sequence[str], title: str) -> Path:
    """One panel per variable, row 0 of the grid at the top."""
    plt = _pyplot()
    cols = 4
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.9 * rows), squeeze=False)
    for ax, name, values in zip(axes.flat, names, maps):
        image = ax.imshow(values, origin="upper", cmap="viridis")
        ax.set_title(name, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_timeline(path: Path, timeline: list[dict[str, float]], title: str) -> Path:
    """Chemistry seconds per iteration, and the hit rate when there was a
    cache (and the served rate, exact hits plus interpolated rows, when it
    interpolated)."""
    plt = _pyplot()
    iterations = [t["iteration"] for t in timeline]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(iterations, [t["chemistry_s"] for t in timeline], color="tab:blue", lw=1.2)
    ax.set_xlabel("iteration")
    ax.set_ylabel("chemistry time per iteration (s)", color="tab:blue")
    ax.set_ylim(bottom=0)
    if any(t["lookups"] for t in timeline):
        rate = [100.0 * t["hits"] / t["lookups"] if t["lookups"] else np.nan for t in timeline]
        twin = ax.twinx()
        twin.plot(iterations, rate, color="tab:orange", lw=1.2, label="exact hits")
        if any(t.get("interpolated") for t in timeline):
            served = [100.0 * (t["hits"] + t["interpolated"]) / t["lookups"]
                      if t["lookups"] else np.nan for t in timeline]
            twin.plot(iterations, served, color="tab:green", lw=1.2,
                      label="exact + interpolated")
            twin.legend(loc="lower right", fontsize="small")
        twin.set_ylabel("cache hit rate (%)", color="tab:orange")
        twin.set_ylim(0, 100)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def darcy_speed(grid: Grid, flux_x: np.ndarray, flux_y: np.ndarray) -> np.ndarray:
    """(ny, nx) Darcy speed at the cell centres, m/s, from the face fluxes.

    Each component is the mean of the cell's two faces (a closed or
    boundary face counts as the other one), divided by the face area.
    """
    g = grid.spec
    qx = np.zeros((grid.ny, grid.nx + 1))
    qy = np.zeros((grid.ny + 1, grid.nx))
    qx[:, 1:-1] = flux_x
    qy[1:-1, :] = flux_y
    qx[:, 0], qx[:, -1] = qx[:, 1], qx[:, -2]
    qy[0, :], qy[-1, :] = qy[1, :], qy[-2, :]
    ux = 0.5 * (qx[:, :-1] + qx[:, 1:]) / (grid.dy * g.depth)
    uy = 0.5 * (qy[:-1, :] + qy[1:, :]) / (grid.dx * g.depth)
    return np.hypot(ux, uy)


def plot_flow(path: Path, grid: Grid, pressure: np.ndarray, flux_x: np.ndarray,
              flux_y: np.ndarray, title: str) -> Path:
    """log10 permeability, pressure and Darcy speed, row 0 at the top."""
    plt = _pyplot()
    panels = [("log10 permeability (mD)", np.log10(grid.permeability / MILLIDARCY_M2)),
              ("pressure (bar)", pressure / BAR_PA),
              ("Darcy speed (m/day)", darcy_speed(grid, flux_x, flux_y) * 86400.0)]
    # Side by side for a square grid, stacked for a long one.
    aspect = grid.spec.ly / grid.spec.lx
    if aspect >= 0.5:
        fig, axes = plt.subplots(1, 3, figsize=(11, 1.0 + 3.0 * min(aspect, 1.5)),
                                 squeeze=False)
    else:
        fig, axes = plt.subplots(3, 1, figsize=(8, 1.0 + 3 * (0.6 + 6.0 * aspect)),
                                 squeeze=False)
    for ax, (name, values) in zip(axes.flat, panels):
        image = ax.imshow(values, origin="upper", cmap="viridis",
                          extent=(0, grid.spec.lx, grid.spec.ly, 0))
        ax.set_title(name, fontsize=10)
        ax.tick_params(labelsize=7)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
