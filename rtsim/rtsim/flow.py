# SPDX-License-Identifier: BSD-3-Clause
"""Steady single-phase Darcy flow on the Cartesian grid.

A two-point flux finite-volume scheme.  Water enters either through a
fixed-pressure cell (SimDol2D) or through a whole edge of the grid, held at
a fixed pressure on its outer faces or fed at a fixed total rate, and
leaves through a fixed-pressure cell or edge; the rest of the boundary is
closed.  Between two cells of different permeability the face takes their
harmonic mean, the permeability of the two half-cells in series.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sparse
import scipy.sparse.linalg as sparse_linalg

from rtsim.grid import Grid
from rtsim.scenario import FlowSpec


@dataclass(frozen=True)
class FlowField:
    """Pressures and volumetric fluxes (m3/s) across the cell faces."""

    pressure: np.ndarray  # (ny, nx), Pa
    flux_x: np.ndarray  # (ny, nx-1), positive from column c to c+1
    flux_y: np.ndarray  # (ny-1, nx), positive from row r to r+1
    inflow: np.ndarray  # (ny, nx), m3/s entering each cell from outside the domain
    outflow: np.ndarray  # (ny, nx), m3/s leaving each cell to outside the domain
    injection_rate: float  # m3/s entering the domain, the sum of inflow
    outflow_rate: float  # m3/s leaving it, the sum of outflow


def harmonic_mean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise harmonic mean; exactly a where a == b (a uniform field
    then gives the very transmissibilities of a scalar permeability)."""
    return np.where(a == b, a, 2.0 * a * b / (a + b))


def edge_cells(grid: Grid, edge: str) -> np.ndarray:
    """Linear indices of the cells along an edge, in order."""
    ids = np.arange(grid.cells).reshape(grid.ny, grid.nx)
    return {"left": ids[:, 0], "right": ids[:, -1], "top": ids[0, :], "bottom": ids[-1, :]}[edge]


def edge_transmissibility(grid: Grid, edge: str) -> np.ndarray:
    """m3/(Pa s) between each edge cell's centre and its outer face."""
    g = grid.spec
    k = grid.permeability.ravel()[edge_cells(grid, edge)]
    if edge in ("left", "right"):
        return k * grid.dy * g.depth / (g.viscosity * 0.5 * grid.dx)
    return k * grid.dx * g.depth / (g.viscosity * 0.5 * grid.dy)


def solve_flow(grid: Grid, spec: FlowSpec) -> FlowField:
    """Solves for the pressure field once; flow is stationary during the run."""
    g = grid.spec
    k = grid.permeability
    tx = harmonic_mean(k[:, :-1], k[:, 1:]) * grid.dy * g.depth / (g.viscosity * grid.dx)
    ty = harmonic_mean(k[:-1, :], k[1:, :]) * grid.dx * g.depth / (g.viscosity * grid.dy)
    ids = np.arange(grid.cells).reshape(grid.ny, grid.nx)
    pairs = [(ids[:, :-1].ravel(), ids[:, 1:].ravel(), tx.ravel()),
             (ids[:-1, :].ravel(), ids[1:, :].ravel(), ty.ravel())]
    rows, cols, vals = [], [], []
    diag = np.zeros(grid.cells)
    for a, b, t in pairs:
        rows += [a, b]
        cols += [b, a]
        vals += [-t, -t]
        np.add.at(diag, a, t)
        np.add.at(diag, b, t)
    # A fixed rate is a source in each edge cell; a fixed-pressure edge
    # couples each of its cells to the outside pressure through half a cell.
    rate_in = np.zeros(grid.cells)
    edges = []
    if spec.injection_boundary is not None:
        cells = edge_cells(grid, spec.injection_boundary)
        t_edge = edge_transmissibility(grid, spec.injection_boundary)
        if spec.injection_rate is not None:
            rate_in[cells] = spec.injection_rate * t_edge / t_edge.sum()
        else:
            edges.append((cells, t_edge, spec.injection_pressure))
    rhs = rate_in.copy()
    if spec.outflow_boundary is not None:
        edges.append((edge_cells(grid, spec.outflow_boundary),
                      edge_transmissibility(grid, spec.outflow_boundary), spec.outflow_pressure))
    for cells, t_edge, pressure in edges:
        diag[cells] += t_edge
        rhs[cells] += t_edge * pressure
    matrix = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(grid.cells, grid.cells)) + sparse.diags(diag)
    fixed = {}
    if spec.injection_cell is not None:
        fixed[grid.index(*spec.injection_cell)] = spec.injection_pressure
    if spec.outflow_cell is not None:
        fixed[grid.index(*spec.outflow_cell)] = spec.outflow_pressure
    if fixed:
        # Dirichlet rows become identities; the fixed values are moved to the
        # right-hand side of the other rows so the matrix stays symmetric.
        fixed_ids = np.array(list(fixed))
        fixed_vals = np.array(list(fixed.values()))
        lifted = matrix[:, fixed_ids] @ fixed_vals
        rhs -= lifted
        keep = np.ones(grid.cells, dtype=bool)
        keep[fixed_ids] = False
        mask = sparse.diags(keep.astype(float))
        matrix = mask @ matrix @ mask + sparse.diags((~keep).astype(float))
        rhs[fixed_ids] = fixed_vals
    pressure = sparse_linalg.spsolve(matrix.tocsc(), rhs).reshape(grid.ny, grid.nx)

    flux_x = tx * (pressure[:, :-1] - pressure[:, 1:])
    flux_y = ty * (pressure[:-1, :] - pressure[1:, :])
    inflow = rate_in
    outflow = np.zeros(grid.cells)
    p = pressure.ravel()
    if spec.injection_cell is not None:
        inflow[grid.index(*spec.injection_cell)] = _net_outflow(flux_x, flux_y,
                                                                spec.injection_cell)
    elif spec.injection_rate is None:
        cells_in = edge_cells(grid, spec.injection_boundary)
        t_in = edge_transmissibility(grid, spec.injection_boundary)
        inflow[cells_in] = t_in * (spec.injection_pressure - p[cells_in])
    if spec.outflow_cell is not None:
        outflow[grid.index(*spec.outflow_cell)] = -_net_outflow(flux_x, flux_y, spec.outflow_cell)
    else:
        cells_out = edge_cells(grid, spec.outflow_boundary)
        t_out = edge_transmissibility(grid, spec.outflow_boundary)
        outflow[cells_out] = t_out * (p[cells_out] - spec.outflow_pressure)
    inflow = inflow.reshape(grid.ny, grid.nx)
    outflow = outflow.reshape(grid.ny, grid.nx)
    return FlowField(pressure=pressure, flux_x=flux_x, flux_y=flux_y,
                     inflow=inflow, outflow=outflow,
                     injection_rate=float(inflow.sum()), outflow_rate=float(outflow.sum()))


def _net_outflow(flux_x: np.ndarray, flux_y: np.ndarray, cell: tuple[int, int]) -> float:
    """Water a cell sends to its neighbours minus what it receives from them."""
    r, c = cell
    net = 0.0
    if c + 1 <= flux_x.shape[1]:
        net += flux_x[r, c]
    if c >= 1:
        net -= flux_x[r, c - 1]
    if r + 1 <= flux_y.shape[0]:
        net += flux_y[r, c]
    if r >= 1:
        net -= flux_y[r - 1, c]
    return float(net)
