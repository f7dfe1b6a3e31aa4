"""rmadht.SurrogateCache: approximated lookup of a function's results."""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._arrays import as_matrix, check_sizes, mode_number
from ._lifetime import CollectiveHandle
from ._mpi import MPI, agreed, comm_handle

__all__ = ["SurrogateCache", "Interpolation", "MISS", "HIT", "INTERPOLATED"]

MISS: int = _core.MISS
"""lookup status: not found and not interpolated; outputs NaN."""
HIT: int = _core.HIT
"""lookup status: the exact (rounded) key was found."""
INTERPOLATED: int = _core.INTERPOLATED
"""lookup status: interpolated from neighbouring cached rows."""

_METHODS = {"idw": _core.INTERP_IDW, "linear": _core.INTERP_LINEAR}

PathLike = Union[str, bytes, "os.PathLike[str]"]


def _per_input(value: Any, n: int, dtype: type, name: str) -> np.ndarray:
    """A scalar repeated, or a sequence of exactly n items, as dtype."""
    if np.ndim(value) == 0:
        return np.full(n, value, dtype=dtype)
    arr = np.asarray(value)
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), "
                         f"got {arr.shape}")
    return np.ascontiguousarray(arr, dtype=dtype)


class Interpolation:
    """How a :class:`SurrogateCache` may serve a miss from neighbouring
    cached rows, with error control (docs/explanation/interpolation.md).

    Neighbours are the cached rows whose inputs round alike at ``digits``
    (coarser than the cache's own digits); up to ``max_neighbours`` of them
    are listed per such coarse key.  A missed row is served only when at
    least ``min_neighbours`` lie within ``radius``, every ``phase``-flagged
    input's presence (``|x| > zero_below``) agrees, and predicting each
    neighbour from the others (leave-one-out) misses its outputs by at most
    ``tolerance`` for every output.

    Args:
        digits: neighbour-key digits, per input or one for all; each
            0..the cache's digits for that input (0 leaves the input out of
            the neighbour key), at least one strictly fewer.
        tolerance: absolute tolerance per output or one for all, > 0.
        method: "linear" (local linear least squares; inverse distance
            where the neighbours are too few for a fit) or "idw"
            (inverse-distance weighting).
        min_neighbours, max_neighbours: 2 <= min <= max <= 64.
        radius: > 0, in units of the neighbour key's cell width per input
            (Euclidean): 1.0 admits neighbours up to one cell away.
        phase: per-input flags, or None for none.
        coarse_digits: a second, coarser neighbour key (per input or one
            for all; each 0..``digits`` of that input, at least one
            strictly fewer), or None.  Rows the first level refuses for
            too few neighbours are tried again among the entries that
            round alike at these digits, with every tolerance multiplied
            by ``coarse_tolerance_scale``, in (0, 1]
            (docs/explanation/interpolation.md, "The coarse level").

    The settings are checked when a cache is created with them, inside the
    check all ranks agree on, so that a bad setting on one rank raises on
    every rank.
    """

    def __init__(self, *, digits: Union[int, Sequence[int]],
                 tolerance: Union[float, Sequence[float]],
                 method: str = "linear", min_neighbours: int = 5,
                 max_neighbours: int = 20, radius: float = 1.0,
                 phase: Optional[Sequence[bool]] = None,
                 coarse_digits: Union[None, int, Sequence[int]] = None,
                 coarse_tolerance_scale: float = 1.0) -> None:
        self.digits = digits
        self.tolerance = tolerance
        self.method = method
        self.min_neighbours = min_neighbours
        self.max_neighbours = max_neighbours
        self.radius = radius
        self.phase = phase
        self.coarse_digits = coarse_digits
        self.coarse_tolerance_scale = coarse_tolerance_scale

    def _arguments(self, n_inputs: int, n_outputs: int, exact: np.ndarray
                   ) -> Dict[str, Any]:
        """The settings as keyword arguments of the C layer, checked
        against a cache's sizes and exact digits."""
        if self.method not in _METHODS:
            raise ValueError(f"method must be 'idw' or 'linear', "
                             f"got {self.method!r}")
        kmin, kmax = int(self.min_neighbours), int(self.max_neighbours)
        if not 2 <= kmin <= kmax <= 64:
            raise ValueError(
                "need 2 <= min_neighbours <= max_neighbours <= 64, got "
                f"{self.min_neighbours} and {self.max_neighbours}")
        r = float(self.radius)
        if not (math.isfinite(r) and r > 0):
            raise ValueError(f"radius must be finite and > 0, got {r}")
        d = _per_input(self.digits, n_inputs, np.intc, "interpolation digits")
        if np.any((d < 0) | (d > exact)):
            raise ValueError("interpolation digits must be within 0..the "
                             f"cache's digits {exact.tolist()}, got "
                             f"{d.tolist()}")
        if not np.any(d < exact):
            raise ValueError("interpolation digits must be coarser than the "
                             "cache's digits for at least one input, got "
                             f"{d.tolist()}")
        t = _per_input(self.tolerance, n_outputs, np.float64, "tolerance")
        if not np.all(t > 0):  # NaN fails too
            raise ValueError(f"tolerance must be > 0, got {t.tolist()}")
        p = None
        if self.phase is not None:
            p = _per_input(self.phase, n_inputs, np.uint8, "phase")
            if np.ndim(self.phase) == 0:
                raise ValueError("phase must be a sequence of per-input "
                                 "flags or None")
        c, scale = None, 0.0
        if self.coarse_digits is not None:
            c = _per_input(self.coarse_digits, n_inputs, np.intc,
                           "coarse digits")
            if np.any((c < 0) | (c > d)) or not np.any(c < d):
                raise ValueError(
                    "coarse digits must be within 0..the interpolation "
                    f"digits {d.tolist()}, at least one strictly fewer, got "
                    f"{c.tolist()}")
            scale = float(self.coarse_tolerance_scale)
            if not 0 < scale <= 1:  # NaN fails too
                raise ValueError("coarse_tolerance_scale must be in (0, 1], "
                                 f"got {scale}")
        return dict(interp_method=_METHODS[self.method], interp_digits=d,
                    tolerance=t, phase=p, min_neighbours=kmin,
                    max_neighbours=kmax, radius=r, coarse_digits=c,
                    coarse_tolerance_scale=scale)

    def __repr__(self) -> str:
        return (f"rmadht.Interpolation(digits={self.digits!r}, "
                f"tolerance={self.tolerance!r}, method={self.method!r}, "
                f"min_neighbours={self.min_neighbours}, "
                f"max_neighbours={self.max_neighbours}, "
                f"radius={self.radius}, phase={self.phase!r}, "
                f"coarse_digits={self.coarse_digits!r}, "
                f"coarse_tolerance_scale={self.coarse_tolerance_scale})")


class SurrogateCache(CollectiveHandle):
    """A cache of a function's outputs, keyed by its rounded inputs.

    Each input is rounded to ``digits`` significant digits (of
    ``log10|x|`` where ``log10`` is set) before it becomes part of the key,
    so inputs that round alike share one entry: the approximated lookup of
    POET (De Lucia et al. 2021, sect. 2.4.3).  ``|x| < zero_below`` counts as 0.
    Rows with a NaN or infinite input never hit and are never stored.

    With ``interpolation`` (an :class:`Interpolation`), a row whose key is
    missing may be served from neighbouring cached rows when the error
    estimate allows; ``lookup`` tells which rows were.

    Creation and :meth:`close` are collective; the configuration must be the
    same on every rank, and a bad argument on any rank raises on every rank.
    The options after ``n_outputs`` are keyword-only.  Use it as a context manager::

        with rmadht.SurrogateCache(MPI.COMM_WORLD, n_inputs=9, n_outputs=9,
                                   digits=[5] * 9, log10=[True] * 9) as c:
            outputs, status = c.lookup(inputs)
            miss = status == rmadht.MISS
            c.store(inputs[miss], f(inputs[miss]))

    Args:
        comm: the communicator; every rank must take part.
        n_inputs, n_outputs: doubles per row.
        digits: significant digits, 1..15, per input or one for all.
        log10: round log10|x| instead of x, per input or one for all.
        zero_below: |x| below this counts as exactly 0 (>= 0; 0 disables).
        bytes_per_rank: table memory each rank contributes.
        mode: "lockfree", "fine" or "coarse".
        interpolation: an :class:`Interpolation`, or None for exact keys
            only.  Its neighbour index takes a quarter of bytes_per_rank
            more memory per rank (and as much again with coarse_digits).
    """

    def __init__(self, comm: MPI.Intracomm, n_inputs: int, n_outputs: int,
                 *, digits: Union[int, Sequence[int]] = 7,
                 log10: Union[bool, Sequence[bool]] = True,
                 zero_below: float = 1e-13, bytes_per_rank: int = 64 << 20,
                 mode: str = "lockfree",
                 interpolation: Optional[Interpolation] = None) -> None:
        handle = comm_handle(comm)

        def check() -> Tuple[np.ndarray, np.ndarray, float, int,
                             Dict[str, Any]]:
            check_sizes(n_inputs=n_inputs, n_outputs=n_outputs,
                        bytes_per_rank=bytes_per_rank)
            d = _per_input(digits, int(n_inputs), np.intc, "digits")
            if np.any((d < 1) | (d > 15)):
                raise ValueError(
                    f"digits must be within 1..15, got {d.tolist()}")
            lg = _per_input(log10, int(n_inputs), np.uint8, "log10")
            zb = float(zero_below)
            if not (np.isfinite(zb) and zb >= 0):
                raise ValueError(
                    f"zero_below must be finite and >= 0, got {zb}")
            interp: Dict[str, Any] = {}
            if interpolation is not None:
                if not isinstance(interpolation, Interpolation):
                    raise TypeError("interpolation must be an "
                                    "rmadht.Interpolation or None")
                interp = interpolation._arguments(int(n_inputs),
                                                  int(n_outputs), d)
            return d, lg, zb, mode_number(mode), interp

        d, lg, zb, mode_no, interp = agreed(comm, check)
        self._comm = comm
        self.n_inputs = int(n_inputs)
        self.n_outputs = int(n_outputs)
        self.digits = d.tolist()
        self.log10 = [bool(x) for x in lg]
        self.zero_below = zb
        self.interpolation = interpolation
        self._h = _core.Cache(handle, self.n_inputs, self.n_outputs, d, lg,
                              zb, int(bytes_per_rank), mode_no, **interp)

    # -- lookups and stores -----------------------------------------------

    def lookup(self, inputs: np.ndarray, *, return_inputs: bool = False
               ) -> Union[Tuple[np.ndarray, np.ndarray],
                          Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Looks up n rows in one batch.

        Args:
            inputs: float64 array of shape (n, n_inputs).
            return_inputs: also return the exact inputs each hit was
                computed from, to see how far it lies from the query.

        Returns:
            outputs, float64 (n, n_outputs), NaN on misses; status, uint8
            (n,): :data:`MISS` (0), :data:`HIT` (1) or
            :data:`INTERPOLATED` (2), nonzero where served; with
            return_inputs, cached_inputs, float64 (n, n_inputs), NaN on
            misses and interpolated rows.
        """
        x = as_matrix(inputs, np.float64, self.n_inputs, "inputs")
        n = x.shape[0]
        out = np.empty((n, self.n_outputs))
        hit = np.empty(n, dtype=np.uint8)
        if return_inputs:
            cached = np.empty((n, self.n_inputs))
            self._h.lookup(n, x, out, hit, cached)
            return out, hit, cached
        self._h.lookup(n, x, out, hit, None)
        return out, hit

    def store(self, inputs: np.ndarray, outputs: np.ndarray) -> None:
        """Stores n rows of outputs computed for n rows of inputs, in one
        batch; rows with a NaN or infinite input are skipped.

        Visible to this rank at once, to other ranks after :meth:`flush`.

        Args:
            inputs: float64 array of shape (n, n_inputs).
            outputs: float64 array of shape (n, n_outputs).
        """
        x = as_matrix(inputs, np.float64, self.n_inputs, "inputs")
        y = as_matrix(outputs, np.float64, self.n_outputs, "outputs",
                      rows=x.shape[0])
        self._h.store(x.shape[0], x, y)

    def flush(self) -> None:
        """Completes this rank's stores: afterwards every rank sees them."""
        self._h.flush()

    # -- reports and snapshots -------------------------------------------

    def stats(self) -> Dict[str, int]:
        """This rank's counters: the table's ``rmadht_stats`` fields
        (reads, hits, misses, writes, evictions, removes, checksum_retries,
        invalidations, round_trips, updates, write_probes) and the cache's
        ``rmadht_cache_stats`` fields (lookups, lookup_hits, stores,
        dropped, nonfinite, interpolated, interpolated_coarse,
        refused_neighbours, refused_outside, refused_phase, refused_error,
        index_dropped); with interpolation, lookups =
        lookup_hits + interpolated + the refusals + the non-finite rows
        looked up."""
        return self._h.stats()

    def stats_global(self) -> Dict[str, int]:
        """Collective: :meth:`stats` summed over all ranks."""
        return self._h.stats_global()

    def info(self) -> Dict[str, Any]:
        """The geometry of the table underneath (``rmadht_info``)."""
        return self._h.info()

    def dump(self, path: PathLike) -> None:
        """Collective and quiescent: writes every cached row to one file.
        The path must be the same on every rank (else ``ERR_MISMATCH``)."""
        self._h.dump(agreed(self._comm, lambda: os.fspath(path)))

    def restore(self, path: PathLike) -> None:
        """Collective and quiescent: inserts every row of a dump file made
        by a cache with the same configuration."""
        self._h.restore(agreed(self._comm, lambda: os.fspath(path)))

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return (f"<rmadht.SurrogateCache n_inputs={self.n_inputs} "
                f"n_outputs={self.n_outputs} {state}>")
