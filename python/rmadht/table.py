"""rmadht.Table: the distributed hash table of fixed-size byte keys and
values."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from . import _core
from ._arrays import (as_bytes, as_matrix, check_range, check_sizes,
                      gather_number, mode_number)
from ._lifetime import CollectiveHandle
from ._mpi import MPI, agreed, comm_handle

__all__ = ["Table"]

PathLike = Union[str, bytes, "os.PathLike[str]"]


class Table(CollectiveHandle):
    """A hash table spread over the ranks of a communicator.

    Every rank contributes ``bytes_per_rank`` bytes of its own memory; keys
    and values have fixed sizes.  Creation and :meth:`close` are collective
    (every rank, same order); the other calls are independent, except
    :meth:`stats_global`, :meth:`dump` and :meth:`restore`.

    In lock-free mode a table whose ranks share one node reaches every
    slot with loads and stores (``node_local``, the default); one spanning
    nodes reads the ranks on this rank's node with loads and writes them
    with RMA.  Pass ``node_local=False`` to keep RMA throughout.

    ``progress_us=N`` (1..1000000) starts a thread that enters MPI every N
    microseconds, so reads of this rank's keys complete while it computes
    without calling MPI (between hosts without RDMA).  It needs MPI
    initialised with ``MPI_THREAD_MULTIPLE``, mpi4py's default; see
    docs/howto/progress-thread.md.

    ``gather`` says how the RMA path sends the gets and puts it has
    gathered for one target: ``"target"`` as one message of a derived
    datatype, ``"block"`` as one message per contiguous block, ``"auto"``
    (the default) the first to ranks on other nodes and the second on this
    node, where a plain get is cheap and a derived datatype is not.  It
    changes only this rank's messages, so it may differ between ranks.

    ``write_queue=N`` (0..4096) lets :meth:`write` queue up to N writes on
    the RMA path and send them as one batch when the queue is full, at
    :meth:`flush` and before any other call that reads, writes or empties
    the table but :meth:`read` (which finds this rank's queued writes):
    between hosts a single write then waits for no round trip.  A queued write returns False (no eviction is reported
    for it).  It may differ between ranks.

    Use it as a context manager so that it is closed on every rank::

        with rmadht.Table(MPI.COMM_WORLD, key_size=80, value_size=104) as t:
            t.write(b"k" * 80, b"v" * 104)

    The options after ``value_size`` are keyword-only.

    Raises:
        rmadht.Error: the C library failed (e.g. parameters differ across
            ranks: ``code`` ``rmadht.ERR_MISMATCH``); every rank raises.
        TypeError, ValueError: bad arguments, detected before the table is
            created; when they are bad on one rank only, every rank raises
            (the checks are agreed on in one collective call).
    """

    def __init__(self, comm: MPI.Intracomm, key_size: int, value_size: int,
                 *, bytes_per_rank: int = 64 << 20,
                 mode: str = "lockfree", node_local: bool = True,
                 progress_us: int = 0, gather: str = "auto",
                 write_queue: int = 0) -> None:
        handle = comm_handle(comm)

        def check() -> int:
            if not isinstance(node_local, bool):
                raise TypeError(
                    f"node_local must be a bool, got {node_local!r}")
            check_range("progress_us", progress_us, 0, 1000000)
            check_range("write_queue", write_queue, 0, 4096)
            check_sizes(key_size=key_size, value_size=value_size,
                        bytes_per_rank=bytes_per_rank)
            return mode_number(mode), gather_number(gather)

        mode_no, gather_no = agreed(comm, check)
        self._comm = comm
        self.key_size = int(key_size)
        self.value_size = int(value_size)
        self._h = _core.Table(handle, self.key_size, self.value_size,
                              int(bytes_per_rank), mode_no, int(node_local),
                              int(progress_us), gather_no, int(write_queue))

    # -- single items -----------------------------------------------------

    def write(self, key: bytes, value: bytes) -> bool:
        """Stores value under key; True if another entry was evicted.

        Visible to this rank at once, to others after :meth:`flush`.
        """
        return self._h.write(as_bytes(key, self.key_size, "key"),
                             as_bytes(value, self.value_size, "value"))

    def read(self, key: bytes) -> Optional[bytes]:
        """The value stored under key, or None."""
        out = bytearray(self.value_size)
        if self._h.read(as_bytes(key, self.key_size, "key"), out):
            return bytes(out)
        return None

    def remove(self, key: bytes) -> bool:
        """Removes key; True if it was there."""
        return self._h.remove(as_bytes(key, self.key_size, "key"))

    # -- batches ----------------------------------------------------------

    def read_batch(self, keys: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Reads n keys in one batch.

        Args:
            keys: uint8 array of shape (n, key_size).

        Returns:
            values, uint8 (n, value_size), zero where not found, and found,
            bool (n,).
        """
        k = as_matrix(keys, np.uint8, self.key_size, "keys")
        n = k.shape[0]
        values = np.zeros((n, self.value_size), dtype=np.uint8)
        found = np.empty(n, dtype=np.bool_)
        self._h.read_batch(n, k, values, found)
        return values, found

    def write_batch(self, keys: np.ndarray, values: np.ndarray) -> int:
        """Writes n keys and values in one batch; later rows win over
        earlier ones with the same key.

        Args:
            keys: uint8 array of shape (n, key_size).
            values: uint8 array of shape (n, value_size).

        Returns:
            How many other entries were evicted.

        Raises:
            rmadht.Error: a row could not be written (e.g. contention,
                ``code`` -7); the other rows are.
        """
        k = as_matrix(keys, np.uint8, self.key_size, "keys")
        v = as_matrix(values, np.uint8, self.value_size, "values",
                      rows=k.shape[0])
        return self._h.write_batch(k.shape[0], k, v)

    def flush(self) -> None:
        """Completes this rank's writes: afterwards every rank sees them."""
        self._h.flush()

    # -- reports and snapshots -------------------------------------------

    def stats(self) -> Dict[str, int]:
        """This rank's counters, keyed by the ``rmadht_stats`` field names
        (reads, hits, misses, writes, evictions, removes, checksum_retries,
        invalidations, round_trips, updates, write_probes)."""
        return self._h.stats()

    def stats_global(self) -> Dict[str, int]:
        """Collective: :meth:`stats` summed over all ranks."""
        return self._h.stats_global()

    def info(self) -> Dict[str, Any]:
        """The table's geometry (``rmadht_info``): sizes, slots, ranks,
        rank, mode name and whether it takes the node-local path."""
        return self._h.info()

    def dump(self, path: PathLike) -> None:
        """Collective and quiescent: writes every entry to one file.  The
        path must be the same on every rank (else ``ERR_MISMATCH``)."""
        self._h.dump(agreed(self._comm, lambda: os.fspath(path)))

    def restore(self, path: PathLike) -> None:
        """Collective and quiescent: inserts every entry of a dump file."""
        self._h.restore(agreed(self._comm, lambda: os.fspath(path)))

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return (f"<rmadht.Table key_size={self.key_size} "
                f"value_size={self.value_size} {state}>")
