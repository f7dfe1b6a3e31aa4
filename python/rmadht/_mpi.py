"""MPI through mpi4py: imported before the compiled module, and checked.

mpi4py is imported first so that it loads and initialises MPI (the
compiled module never calls MPI_Init).  The compiled module must then have
been built against the same MPI library as the one mpi4py loaded: a handle
of one implementation means nothing to another, so a mismatch is refused
at import instead of crashing on the first call.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from mpi4py import MPI

from . import _core

__all__ = ["MPI", "comm_handle", "agreed"]

T = TypeVar("T")

if MPI._sizeof(MPI.Comm) != _core.sizeof_comm():
    raise ImportError(
        "rmadht was built against another MPI than the one mpi4py loaded "
        f"({MPI.Get_library_version().splitlines()[0].strip()}); rebuild "
        "one of them so both use the same MPI (see docs/reference/python-api.md)"
    )


def comm_handle(comm: MPI.Comm) -> int:
    """The Fortran handle of an open intracommunicator, for the C layer.

    Raises:
        TypeError: comm is not an mpi4py intracommunicator.
        ValueError: comm is MPI.COMM_NULL.
        RuntimeError: MPI is not initialised or already finalised.
    """
    if isinstance(comm, MPI.Comm) and comm == MPI.COMM_NULL:
        raise ValueError("comm is MPI.COMM_NULL")
    if not isinstance(comm, MPI.Intracomm):
        raise TypeError(
            f"comm must be an mpi4py MPI.Intracomm, got {type(comm).__name__}"
        )
    if not MPI.Is_initialized() or MPI.Is_finalized():
        raise RuntimeError("MPI is not initialised, or already finalised")
    return comm.py2f()


def agreed(comm: MPI.Intracomm, check: Callable[[], T]) -> T:
    """Collective: runs the argument checks of a collective call on every
    rank, then raises on every rank if they failed on any.

    A ``TypeError`` or ``ValueError`` raised on one rank alone would leave
    the others waiting in the collective C call; instead every rank raises
    the first failing rank's exception, of the same type, its message
    prefixed with that rank when there are several.

    Returns:
        What ``check`` returned on this rank.
    """
    problem = None
    try:
        result = check()
    except (TypeError, ValueError) as exc:
        problem = (isinstance(exc, TypeError), str(exc))
    problems = comm.allgather(problem)
    for rank, found in enumerate(problems):
        if found is not None:
            is_type, message = found
            if comm.Get_size() > 1:
                message = f"rank {rank}: {message}"
            raise (TypeError if is_type else ValueError)(message)
    return result
