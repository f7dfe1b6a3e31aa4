"""rmadht: a distributed hash table over MPI one-sided communication.

Importing rmadht imports mpi4py first, which initialises MPI.

- :class:`Table`: fixed-size byte keys and values, single and batch calls.
- :class:`SurrogateCache`: caches a function's outputs under its inputs
  rounded to significant digits (approximated lookup), optionally
  interpolating misses from neighbouring rows (:class:`Interpolation`);
  ``MISS``, ``HIT``, ``INTERPOLATED``: its per-row lookup status.
- :class:`Error`: raised when the C library reports an error; its ``code``
  is one of the constants below and its ``name`` that constant's name.
- ``OK``, ``NOT_FOUND``, ``EVICTED`` and the errors ``ERR_ARG``,
  ``ERR_SIZE``, ``ERR_MISMATCH``, ``ERR_NOMEM``, ``ERR_MPI``, ``ERR_REMOTE``,
  ``ERR_CONTENDED``, ``ERR_FILE``, ``ERR_FORMAT``, ``ERR_IO``,
  ``ERR_LOCATION``: the C
  library's ``enum rmadht_code`` without the ``RMADHT_`` prefix.
- ``__version__``: the version of the C library loaded (``rmadht_version``).
"""

from __future__ import annotations

from ._mpi import MPI  # first: mpi4py loads and initialises MPI
from . import _core
from ._core import (EVICTED, NOT_FOUND, OK, ERR_ARG, ERR_CONTENDED, ERR_FILE,
                    ERR_FORMAT, ERR_IO, ERR_LOCATION, ERR_MISMATCH, ERR_MPI,
                    ERR_NOMEM, ERR_REMOTE, ERR_SIZE)
from .cache import HIT, INTERPOLATED, MISS, Interpolation, SurrogateCache
from .errors import Error
from .table import Table

__all__ = ["Table", "SurrogateCache", "Interpolation", "MISS", "HIT",
           "INTERPOLATED", "Error", "__version__", "OK",
           "NOT_FOUND", "EVICTED", "ERR_ARG", "ERR_SIZE", "ERR_MISMATCH",
           "ERR_NOMEM", "ERR_MPI", "ERR_REMOTE", "ERR_CONTENDED", "ERR_FILE",
           "ERR_FORMAT", "ERR_IO", "ERR_LOCATION"]

__version__: str = _core.version()
