# SPDX-License-Identifier: BSD-3-Clause
"""Steady single-phase Darcy flow between two fixed-pressure cells.

A two-point flux finite-volume scheme on the Cartesian grid; the boundary
of the domain is closed, so all water enters through the injection cell and
leaves through the outflow cell.
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
    injection_rate: float  # m3/s entering the domain at the injection cell
    outflow_rate: float  # m3/s leaving it at the outflow cell


def solve_flow(grid: Grid, spec: FlowSpec) -> FlowField:
    """Solves for the pressure field once; flow is stationary during the run."""
    g = grid.spec
    tx = g.permeability * grid.dy * g.depth / (g.viscosity * grid.dx)
    ty = g.permeability * grid.dx * g.depth / (g.viscosity * grid.dy)
    ids = np.arange(grid.cells).reshape(grid.ny, grid.nx)
    pairs = [(ids[:, :-1].ravel(), ids[:, 1:].ravel(), tx),
             (ids[:-1, :].ravel(), ids[1:, :].ravel(), ty)]
    rows, cols, vals = [], [], []
    diag = np.zeros(grid.cells)
    for a, b, t in pairs:
        rows += [a, b]
        cols += [b, a]
        vals += [np.full(a.size, -t), np.full(a.size, -t)]
        np.add.at(diag, a, t)
        np.add.at(diag, b, t)
    matrix = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(grid.cells, grid.cells)) + sparse.diags(diag)
    rhs = np.zeros(grid.cells)
    fixed = {grid.index(*spec.injection_cell): spec.injection_pressure,
             grid.index(*spec.outflow_cell): spec.outflow_pressure}
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
    return FlowField(pressure=pressure, flux_x=flux_x, flux_y=flux_y,
                     injection_rate=_net_outflow(flux_x, flux_y, spec.injection_cell),
                     outflow_rate=-_net_outflow(flux_x, flux_y, spec.outflow_cell))


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
