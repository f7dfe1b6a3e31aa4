# SPDX-License-Identifier: BSD-3-Clause
"""Messages between the master (rank 0) and the workers.

Both sides wait by probing and sleeping instead of blocking in a receive:
Open MPI busy-polls inside a blocking receive, and on a machine with fewer
cores than ranks an idle rank would then steal a core from the chemistry.
"""

from __future__ import annotations

import os
import time
from typing import Any, Protocol

MASTER = 0

TAG_WORK = 1  # master -> worker: (package id, states)
TAG_RESULT = 2  # worker -> master: PackageResult
TAG_CONTROL = 3  # master -> worker: ("snapshot", path) or ("stop", None)
TAG_FAILURE = 4  # worker -> master: (package id, error message)
TAG_STATS = 5  # worker -> master at shutdown: WorkerStats as a dict

POLL_SLEEP_S = 2e-4

#: Open MPI's eager limit on one node, for rtsim's own ranks (see
#: prefer_eager_messages).
EAGER_LIMIT_BYTES = 32768


def prefer_eager_messages() -> None:
    """Lets a package and its answer (5-6 KiB at 64 cells) travel eagerly.

    Open MPI's shared-memory transport sends a message above 4 KiB by
    rendezvous: the receiver can take the data only when the sender next
    enters MPI, unless the kernel lets the receiver copy it across
    processes (cross-memory attach, which containers often forbid and the
    Makefile switches off).  The master sleeps between probes, so each
    package then waited for it: a dol2d run took 33.8 s of chemistry
    without cross-memory attach and 28.9 s with this limit.  Must run
    before MPI starts (the first import of mpi4py.MPI); a limit the user
    set is kept, and other MPIs ignore the variable.
    """
    os.environ.setdefault("OMPI_MCA_btl_vader_eager_limit", str(EAGER_LIMIT_BYTES))


class Channel(Protocol):
    """What the dispatcher needs from MPI; tests substitute a fake."""

    def send(self, dest: int, tag: int, payload: Any) -> None:
        """Sends a message; the payload may be reused at once."""

    def receive(self, source: int | None = None) -> tuple[int, int, Any]:
        """Waits for the next message; returns (source, tag, payload)."""

    def close(self) -> None:
        """Waits until every message sent has been taken."""


class MpiChannel:
    """A Channel over an mpi4py communicator that waits without spinning.

    With background_sends, send returns at once and the message leaves
    while this rank goes on probing or computing; close waits for the rest.
    Both sides need it.  The master must hand a busy worker its next
    package: a message above the MPI's eager limit (a few KiB) waits for its
    receiver, and a worker takes it only once its current package is done.
    A worker's blocking send of its answer waited for the master's next
    probe, 0.3-0.6 ms a package under Open MPI, even below the eager limit
    (measured with rtsim's own dispatch); in the background the answer is
    taken while the worker runs its next package, which PREFETCH in
    rtsim.master has already sent.
    """

    def __init__(self, comm: Any, sleep_s: float = POLL_SLEEP_S,
                 background_sends: bool = False) -> None:
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm
        self.sleep_s = sleep_s
        self.background_sends = background_sends
        self._sending: list[Any] = []

    def send(self, dest: int, tag: int, payload: Any) -> None:
        """Sends a pickled payload (in the background if so configured)."""
        if not self.background_sends:
            self.comm.send(payload, dest=dest, tag=tag)
            return
        self._sending = [request for request in self._sending if not request.test()[0]]
        self._sending.append(self.comm.isend(payload, dest=dest, tag=tag))

    def close(self) -> None:
        """Waits until every message sent has been taken."""
        for request in self._sending:
            request.wait()
        self._sending.clear()

    def receive(self, source: int | None = None) -> tuple[int, int, Any]:
        """Probes and sleeps until a message arrives, then receives it."""
        status = self._mpi.Status()
        src = self._mpi.ANY_SOURCE if source is None else source
        while not self.comm.Iprobe(source=src, tag=self._mpi.ANY_TAG, status=status):
            time.sleep(self.sleep_s)
        payload = self.comm.recv(source=status.Get_source(), tag=status.Get_tag())
        return status.Get_source(), status.Get_tag(), payload
