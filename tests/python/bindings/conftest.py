"""Runs the same tests on every rank of mpiexec (or alone under plain
pytest) and makes the run fail on every rank if any rank failed.

Tests here are collective-safe: every rank runs the same tests in the same
order and makes the same collective calls before its assertions.  Should a
rank still be left waiting in a collective call (another rank failed
earlier in the test), the watchdog ends that process instead of hanging
the run.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import tempfile
from typing import Iterator

import pytest

import rmadht  # noqa: F401  (imports mpi4py and initialises MPI)
from mpi4py import MPI

WATCHDOG_SECONDS = float(os.environ.get("RMADHT_TEST_TIMEOUT", "120"))


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True,
                                      file=sys.stderr)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def comm() -> MPI.Intracomm:
    return MPI.COMM_WORLD


@pytest.fixture
def shared_path(comm: MPI.Intracomm) -> Iterator[str]:
    """A file path, the same on every rank, removed afterwards."""
    path = None
    if comm.rank == 0:
        fd, path = tempfile.mkstemp(prefix="rmadht-test-", suffix=".dht")
        os.close(fd)
        os.unlink(path)
    path = comm.bcast(path, root=0)
    yield path
    comm.Barrier()
    if comm.rank == 0 and os.path.exists(path):
        os.unlink(path)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Every rank exits non-zero when any rank had a failure."""
    failed = exitstatus not in (pytest.ExitCode.OK,
                                pytest.ExitCode.NO_TESTS_COLLECTED)
    if MPI.Is_initialized() and not MPI.Is_finalized():
        failed = MPI.COMM_WORLD.allreduce(failed, op=MPI.LOR)
    if failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
