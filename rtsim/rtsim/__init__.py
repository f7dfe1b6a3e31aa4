# SPDX-License-Identifier: BSD-3-Clause
"""rtsim: a parallel reactive transport simulator.

Flow and advective transport run on the master rank; geochemistry runs in
PHREEQC on worker ranks, optionally cached in an rmadht surrogate cache
(De Lucia et al. 2021, POET v0.1).
"""

__version__ = "0.1.0"
