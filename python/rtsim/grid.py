# SPDX-License-Identifier: BSD-3-Clause
"""Geometry of the 2D Cartesian grid: cell sizes, volumes and indexing."""

from __future__ import annotations

from dataclasses import dataclass

from rtsim.scenario import GridSpec


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

    def index(self, row: int, col: int) -> int:
        """Linear index of a (row, column) cell."""
        return row * self.nx + col
