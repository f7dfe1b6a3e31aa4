"""The exception raised for errors reported by the rmadht C library."""

from __future__ import annotations

from typing import Optional

__all__ = ["Error"]


class Error(Exception):
    """An rmadht C call failed.

    Attributes:
        code: the negative ``enum rmadht_code`` value, also available by
            name as a module constant (``rmadht.ERR_MISMATCH == -3``).
        name: the code's name without the ``RMADHT_`` prefix
            (``"ERR_MISMATCH"``), as ``rmadht_errname`` gives it.
        message: the text of ``rmadht_strerror(code)``.
        detail: what only the failing call knew (``rmadht_error_detail``):
            which MPI call failed, MPI's own words and the remedy; ``""``
            when there is none.
    """

    def __init__(self, code: int, message: str,
                 name: Optional[str] = None, detail: str = "") -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.detail = detail
        if name is None:
            from . import _core  # not at import: _core imports this module
            name = _core.errname(code)
        self.name = name[len("RMADHT_"):] if name.startswith("RMADHT_") else name

    def __str__(self) -> str:
        text = f"{self.message} ({self.name}, rmadht error {self.code})"
        return f"{text}: {self.detail}" if self.detail else text
