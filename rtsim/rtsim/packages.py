# SPDX-License-Identifier: BSD-3-Clause
"""Round-robin work packages (De Lucia et al. 2021, sect. 2.2, Fig. 3).

Package k holds cells k, k + P, k + 2P, ... for P packages, so cells in one
package lie far apart and the expensive cells near a reactive front are
spread over all packages instead of landing in a few.
"""

from __future__ import annotations

import math

import numpy as np


def make_packages(cells: int, package_size: int) -> list[np.ndarray]:
    """Splits cells 0..cells-1 into packages of at most package_size cells."""
    if cells < 1 or package_size < 1:
        raise ValueError("cells and package_size must be positive")
    count = math.ceil(cells / package_size)
    return [np.arange(k, cells, count) for k in range(count)]
