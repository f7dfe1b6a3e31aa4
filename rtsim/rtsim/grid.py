# SPDX-License-Identifier: BSD-3-Clause
"""Geometry of the 2D Cartesian grid: cell sizes, volumes and indexing."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from rtsim.scenario import MILLIDARCY_M2, GridSpec


@dataclass(frozen=True)
class Grid:
    """Cells are numbered row by row, row 0 at the top, as in the maps."""

    spec: GridSpec

    @property
    def nx(self) -> int:
        """Columns."""
        return self.spec.nx

    @property
    def ny(self) -> int:
        """Rows."""
        return self.spec.ny

    @property
    def cells(self) -> int:
        """Number of cells."""
        return self.spec.cells

    @property
    def dx(self) -> float:
        """Cell width, m."""
        return self.spec.lx / self.spec.nx

    @property
    def dy(self) -> float:
        """Cell height, m."""
        return self.spec.ly / self.spec.ny

    @property
    def cell_volume(self) -> float:
        """Bulk volume of one cell, m3."""
        return self.dx * self.dy * self.spec.depth

    @property
    def pore_volume(self) -> float:
        """Water-filled volume of one cell, m3."""
        return self.cell_volume * self.spec.porosity

    @cached_property
    def permeability(self) -> np.ndarray:
        """(ny, nx) permeability of every cell, m2: uniform, generated or read."""
        g = self.spec
        f = g.permeability_field
        if f is None:
            return np.full((g.ny, g.nx), g.permeability)
        # scipy is loaded only by the runs that need it.
        from rtsim.permeability import lognormal_field, read_field

        if f.file is not None:
            return read_field(Path(f.file), (g.ny, g.nx)) * MILLIDARCY_M2
        return lognormal_field((g.ny, g.nx), (self.dy, self.dx), geometric_mean=g.permeability,
                               log10_std=f.log10_std,
                               correlation_length=(f.correlation_length[1],
                                                   f.correlation_length[0]),
                               seed=f.seed)

    def index(self, row: int, col: int) -> int:
        """Linear index of a (row, column) cell."""
        return row * self.nx + col
