# SPDX-License-Identifier: BSD-3-Clause
"""Messages between the master (rank 0) and the workers.

Both sides wait by probing and sleeping instead of blocking in a receive:
Open MPI busy-polls inside a blocking receive, and on a machine with fewer
cores than ranks an idle rank would then steal a core from the chemistry.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

MASTER = 0

TAG_WORK = 1  # master -> worker: (package id, states)
TAG_RESULT = 2  # worker -> master: PackageResult
TAG_CONTROL = 3  # master -> worker: ("snapshot", path) or ("stop", None)
TAG_FAILURE = 4  # worker -> master: error message
TAG_STATS = 5  # worker -> master at shutdown: WorkerStats as a dict

POLL_SLEEP_S = 2e-4


class Channel(Protocol):
    """What the dispatcher needs from MPI; tests substitute a fake."""

    def send(self, dest: int, tag: int, payload: Any) -> None:
        """Sends a message (returns once the payload may be reused)."""

    def receive(self, source: int | None = None) -> tuple[int, int, Any]:
        """Waits for the next message; returns (source, tag, payload)."""


class MpiChannel:
    """A Channel over an mpi4py communicator that waits without spinning."""

    def __init__(self, comm: Any, sleep_s: float = POLL_SLEEP_S) -> None:
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm
        self.sleep_s = sleep_s

    def send(self, dest: int, tag: int, payload: Any) -> None:
        """Sends a pickled payload."""
        self.comm.send(payload, dest=dest, tag=tag)

    def receive(self, source: int | None = None) -> tuple[int, int, Any]:
        """Probes and sleeps until a message arrives, then receives it."""
        status = self._mpi.Status()
        src = self._mpi.ANY_SOURCE if source is None else source
        while not self.comm.Iprobe(source=src, tag=self._mpi.ANY_TAG, status=status):
            time.sleep(self.sleep_s)
        payload = self.comm.recv(source=status.Get_source(), tag=status.Get_tag())
        return status.Get_source(), status.Get_tag(), payload
