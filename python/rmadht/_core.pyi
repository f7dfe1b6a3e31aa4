"""Type stub of rmadht._core, the compiled layer (python/rmadht/_core.c).

Use the rmadht package rather than this module: it checks shapes, dtypes
and arguments with friendly messages, and takes mpi4py communicators.
Here a communicator is its Fortran handle (``comm.py2f()``), a mode its
``enum rmadht_mode`` number, and arrays are C-contiguous buffers of
exactly the sizes stated.
"""

from typing import Any, Dict, Optional, Union, final

from numpy.typing import NDArray

_Buffer = Union[bytes, bytearray, memoryview, NDArray[Any]]
_Path = Union[str, bytes]

# enum rmadht_code without the RMADHT_ prefix.
OK: int
NOT_FOUND: int
EVICTED: int
ERR_ARG: int
ERR_SIZE: int
ERR_MISMATCH: int
ERR_NOMEM: int
ERR_MPI: int
ERR_REMOTE: int
ERR_CONTENDED: int
ERR_FILE: int
ERR_FORMAT: int
ERR_IO: int
ERR_LOCATION: int
# enum rmadht_mode.
LOCK_FREE: int
FINE_LOCK: int
COARSE_LOCK: int
# enum rmadht_interp_method and enum rmadht_cache_status.
INTERP_NONE: int
INTERP_IDW: int
INTERP_LINEAR: int
MISS: int
HIT: int
INTERPOLATED: int

def strerror(code: int) -> str: ...
def errname(code: int) -> str: ...
def version() -> str: ...
def sizeof_comm() -> int: ...
def time_lookup(cache: Cache, n: int, inputs: _Buffer, reps: int) -> float: ...

# What both handle types offer; the two C types share no base at run time.
class _Handle:
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def flush(self) -> None: ...
    def stats(self) -> Dict[str, int]: ...
    def stats_global(self) -> Dict[str, int]: ...
    def info(self) -> Dict[str, Any]: ...
    def dump(self, path: _Path) -> None: ...
    def restore(self, path: _Path) -> None: ...

@final
class Table(_Handle):
    def __init__(self, comm: int, key_size: int, value_size: int,
                 bytes_per_rank: int, mode: int, node_local: int,
                 progress_us: int = ..., gather: int = ...,
                 write_queue: int = ...) -> None: ...
    def write(self, key: _Buffer, value: _Buffer) -> bool: ...
    def read(self, key: _Buffer, value: _Buffer) -> bool: ...
    def remove(self, key: _Buffer) -> bool: ...
    def read_batch(self, n: int, keys: _Buffer, values: _Buffer,
                   found: _Buffer) -> None: ...
    def write_batch(self, n: int, keys: _Buffer, values: _Buffer) -> int: ...

@final
class Cache(_Handle):
    def __init__(self, comm: int, n_inputs: int, n_outputs: int,
                 digits: _Buffer, log10: _Buffer, zero_below: float,
                 bytes_per_rank: int, mode: int, interp_method: int = ...,
                 interp_digits: Optional[_Buffer] = ...,
                 tolerance: Optional[_Buffer] = ...,
                 phase: Optional[_Buffer] = ..., min_neighbours: int = ...,
                 max_neighbours: int = ..., radius: float = ...,
                 coarse_digits: Optional[_Buffer] = ...,
                 coarse_tolerance_scale: float = ...) -> None: ...
    def lookup(self, n: int, inputs: _Buffer, outputs: _Buffer, hit: _Buffer,
               cached_inputs: Optional[_Buffer]) -> None: ...
    def store(self, n: int, inputs: _Buffer, outputs: _Buffer) -> None: ...
