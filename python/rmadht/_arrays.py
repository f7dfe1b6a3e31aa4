"""Argument checks shared by Table and SurrogateCache.

Every batch argument is checked once, as a whole array: dtype, shape and
row length, with a message naming the shape expected.  Nothing here loops
over rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_matrix", "as_bytes", "check_sizes", "check_range", "MODES",
           "mode_number", "GATHERS", "gather_number"]

#: Table modes by name, as rmadht_mode_name() prints them.
MODES = {"lockfree": 0, "fine": 1, "coarse": 2}

#: How the RMA path sends a target's gathered gets and puts, by name
#: (enum rmadht_gather).
GATHERS = {"auto": 0, "target": 1, "block": 2}


def _check_int(name: str, v: Any) -> None:
    """v is a Python or numpy integer; bools, which are ints, refused."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {v!r}")


def check_sizes(**sizes: Any) -> None:
    """Each keyword argument is a positive int (bools refused)."""
    for name, v in sizes.items():
        _check_int(name, v)
        if v <= 0:
            raise ValueError(f"{name} must be positive, got {v}")


def check_range(name: str, v: Any, lo: int, hi: int) -> None:
    """v is an int (bools refused) in lo..hi."""
    _check_int(name, v)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be {lo}..{hi}, got {v}")


def _enum_number(what: str, names: dict[str, int], value: Any) -> int:
    """The C enum value of value, one of the names; what names the option."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be one of {sorted(names)}, got {value!r}")
    try:
        return names[value]
    except KeyError:
        raise ValueError(
            f"{what} must be one of {sorted(names)}, got {value!r}"
        ) from None


def mode_number(mode: str) -> int:
    """The C ``enum rmadht_mode`` value of a mode name."""
    return _enum_number("mode", MODES, mode)


def gather_number(gather: str) -> int:
    """The C ``enum rmadht_gather`` value of a gathering's name."""
    return _enum_number("gather", GATHERS, gather)


def as_matrix(a: Any, dtype: type, cols: int, name: str,
              rows: int | None = None) -> np.ndarray:
    """a as a C-contiguous (n, cols) array of dtype, without conversion.

    A numpy array of another dtype raises TypeError; anything else is
    converted with numpy.asarray first.  A wrong shape, or a row count
    other than rows when given, raises ValueError.
    """
    want = np.dtype(dtype)
    expect = f"({'n' if rows is None else rows}, {cols})"
    if not isinstance(a, np.ndarray):
        try:
            a = np.asarray(a, dtype=want)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{name} must be a {want} array of shape {expect}: {exc}"
            ) from None
    if a.dtype != want:
        raise TypeError(
            f"{name} must be a {want} array of shape {expect}, got dtype "
            f"{a.dtype}"
        )
    if a.ndim != 2 or a.shape[1] != cols or (rows is not None
                                             and a.shape[0] != rows):
        raise ValueError(
            f"{name} must have shape {expect}, got {a.shape}"
        )
    return np.ascontiguousarray(a)


def as_bytes(b: Any, size: int, name: str) -> bytes | bytearray | memoryview | np.ndarray:
    """One key or value: bytes-like of exactly size bytes."""
    if isinstance(b, np.ndarray):
        if b.dtype != np.uint8 or b.shape != (size,):
            raise ValueError(
                f"{name} must be {size} bytes or a uint8 array of shape "
                f"({size},), got {b.dtype} {b.shape}"
            )
        return np.ascontiguousarray(b)
    if not isinstance(b, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"{name} must be bytes of length {size}, got {type(b).__name__}"
        )
    if len(b) != size or (isinstance(b, memoryview) and b.nbytes != size):
        raise ValueError(
            f"{name} must be {size} bytes long, got {len(b)}"
        )
    return b
