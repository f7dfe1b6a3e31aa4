# SPDX-License-Identifier: BSD-3-Clause
"""Explicit first-order upwind advection of the conservative totals.

The update is written as one sparse operator, dc/dt = A c + b c_in, where A
holds the upwind face fluxes plus the outflow sinks and b the injection
sources (one cell, or every cell of an injection edge).  Its columns sum
to zero except where water leaves the domain, so the scheme conserves
mass exactly up to round-off.  The operator is applied
in equal inner sub-steps short enough for the Courant-Friedrichs-Lewy
condition (De Lucia et al. 2021, eq. 1): dt_adv = min_i(phi V_i / F_out,i).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sparse

from rtsim.flow import FlowField, solve_flow
from rtsim.grid import Grid
from rtsim.scenario import FlowSpec


class UpwindTransport:
    """Advects a (cells, components) array of concentrations in place."""

    def __init__(self, grid: Grid, flow: FlowField) -> None:
        n = grid.cells
        ids = np.arange(n).reshape(grid.ny, grid.nx)
        src, dst, rate = [], [], []
        for flux, left, right in ((flow.flux_x, ids[:, :-1], ids[:, 1:]),
                                  (flow.flux_y, ids[:-1, :], ids[1:, :])):
            forward = flux > 0
            src += [left[forward], right[~forward]]
            dst += [right[forward], left[~forward]]
            rate += [flux[forward], -flux[~forward]]
        src_a = np.concatenate(src)
        dst_a = np.concatenate(dst)
        rate_a = np.concatenate(rate) / grid.pore_volume
        outflow = np.zeros(n)
        np.add.at(outflow, src_a, rate_a)
        outflow += flow.outflow.ravel() / grid.pore_volume
        self.operator = (sparse.csr_matrix((rate_a, (dst_a, src_a)), shape=(n, n))
                         - sparse.diags(outflow)).tocsr()
        self.source_cells = np.flatnonzero(flow.inflow.ravel())
        self.source_rates = flow.inflow.ravel()[self.source_cells] / grid.pore_volume
        self.max_dt = float(1.0 / outflow.max())

    @classmethod
    def steady(cls, grid: Grid, spec: FlowSpec) -> UpwindTransport:
        """Solves the steady flow of spec once and sets up its advection."""
        return cls(grid, solve_flow(grid, spec))

    def substeps(self, dt: float, courant: float = 1.0) -> int:
        """Number of equal inner steps that keep every Courant number <= courant."""
        # The tolerance keeps an exact multiple of the limit from costing a step.
        return max(1, math.ceil(dt / (courant * self.max_dt) * (1.0 - 1e-12)))

    def advance(self, conc: np.ndarray, dt: float, injected: np.ndarray,
                courant: float = 1.0) -> int:
        """Advances conc over dt with CFL sub-stepping; returns the sub-step count.

        injected holds the concentrations of the water entering at the
        injection cell or edge.  Returns how many inner steps were taken.
        """
        steps = self.substeps(dt, courant)
        h = dt / steps
        source = (h * self.source_rates)[:, None] * np.asarray(injected, dtype=float)
        for _ in range(steps):
            update = self.operator @ conc
            update *= h
            conc += update
            conc[self.source_cells] += source
        return steps
