"""rmadht: a distributed hash table over MPI one-sided communication.

Importing rmadht imports mpi4py first, which initialises MPI.

- :class:`Table`: fixed-size byte keys and values, single and batch calls.
- :class:`SurrogateCache`: caches a function's outputs under its inputs
  rounded to significant digits (approximated lookup).
- :class:`Error`: raised when the C library reports an error.
"""

from __future__ import annotations

from ._mpi import MPI  # first: mpi4py loads and initialises MPI
from .cache import SurrogateCache
from .errors import Error
from .table import Table

__all__ = ["Table", "SurrogateCache", "Error", "__version__"]

__version__ = "0.1.0"
