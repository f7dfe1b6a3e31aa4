"""The exception raised for errors reported by the rmadht C library."""

from __future__ import annotations

__all__ = ["Error"]


class Error(Exception):
    """An rmadht C call failed.

    Attributes:
        code: the negative ``enum rmadht_code`` value (e.g. -3 for
            ``RMADHT_ERR_MISMATCH``).
        message: the text of ``rmadht_strerror(code)``.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} (rmadht error {self.code})"
