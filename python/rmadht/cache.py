"""rmadht.SurrogateCache: approximated lookup of a function's results."""

from __future__ import annotations

import os
from typing import Any, Dict, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._arrays import as_matrix, check_sizes, mode_number
from ._lifetime import CollectiveHandle
from ._mpi import MPI, agreed, comm_handle

__all__ = ["SurrogateCache"]

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


class SurrogateCache(CollectiveHandle):
    """A cache of a function's outputs, keyed by its rounded inputs.

    Each input is rounded to ``digits`` significant digits (of
    ``log10|x|`` where ``log10`` is set) before it becomes part of the key,
    so inputs that round alike share one entry: the approximated lookup of
    POET (De Lucia et al., sect. 2.4.3).  ``|x| < zero_below`` counts as 0.
    Rows with a NaN or infinite input never hit and are never stored.

    Creation and :meth:`close` are collective; the configuration must be the
    same on every rank, and a bad argument on any rank raises on every rank.
    The options after ``n_outputs`` are keyword-only.  Use it as a context manager::

        with rmadht.SurrogateCache(MPI.COMM_WORLD, n_inputs=9, n_outputs=9,
                                   digits=[5] * 9, log10=[True] * 9) as c:
            outputs, hit = c.lookup(inputs)
            c.store(inputs[~hit], f(inputs[~hit]))

    Args:
        comm: the communicator; every rank must take part.
        n_inputs, n_outputs: doubles per row.
        digits: significant digits, 1..15, per input or one for all.
        log10: round log10|x| instead of x, per input or one for all.
        zero_below: |x| below this counts as exactly 0 (>= 0; 0 disables).
        bytes_per_rank: table memory each rank contributes.
        mode: "lockfree", "fine" or "coarse".
    """

    def __init__(self, comm: MPI.Intracomm, n_inputs: int, n_outputs: int,
                 *, digits: Union[int, Sequence[int]] = 7,
                 log10: Union[bool, Sequence[bool]] = True,
                 zero_below: float = 1e-13, bytes_per_rank: int = 64 << 20,
                 mode: str = "lockfree") -> None:
        handle = comm_handle(comm)

        def check() -> Tuple[np.ndarray, np.ndarray, float, int]:
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
            return d, lg, zb, mode_number(mode)

        d, lg, zb, mode_no = agreed(comm, check)
        self._comm = comm
        self.n_inputs = int(n_inputs)
        self.n_outputs = int(n_outputs)
        self.digits = d.tolist()
        self.log10 = [bool(x) for x in lg]
        self.zero_below = zb
        self._h = _core.Cache(handle, self.n_inputs, self.n_outputs, d, lg,
                              zb, int(bytes_per_rank), mode_no)

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
            outputs, float64 (n, n_outputs), NaN on misses; hit, bool (n,);
            with return_inputs, cached_inputs, float64 (n, n_inputs), NaN
            on misses.
        """
        x = as_matrix(inputs, np.float64, self.n_inputs, "inputs")
        n = x.shape[0]
        out = np.empty((n, self.n_outputs))
        hit = np.empty(n, dtype=np.bool_)
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
        invalidations, round_trips) and the cache's ``rmadht_cache_stats``
        fields (lookups, lookup_hits, stores, dropped, nonfinite)."""
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
