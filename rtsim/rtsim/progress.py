# SPDX-License-Identifier: BSD-3-Clause
"""A one-line live progress bar on stderr for the master."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Redraws "iteration, cells/s, hit rate" in place after every iteration."""

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None,
                 width: int = 24) -> None:
        self.total = total
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.start = time.perf_counter()

    def line(self, iteration: int, cells_per_s: float, hit_rate: float | None,
             served_rate: float | None = None) -> str:
        """The text of the bar, without the carriage return.

        served_rate (exact hits and interpolated rows) shows when interpolating.
        """
        filled = self.width * iteration // self.total
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.perf_counter() - self.start
        eta = elapsed / iteration * (self.total - iteration) if iteration else 0.0
        hits = f"  hit {100 * hit_rate:5.1f}%" if hit_rate is not None else ""
        if served_rate is not None:
            hits += f"  served {100 * served_rate:5.1f}%"
        return (f"[{bar}] it {iteration}/{self.total}  {cells_per_s:8.0f} cells/s{hits}"
                f"  {elapsed:6.1f}s elapsed, {eta:5.1f}s left")

    def update(self, iteration: int, cells_per_s: float, hit_rate: float | None,
               served_rate: float | None = None) -> None:
        """Redraws the bar (cells/s is the chemistry throughput of the iteration)."""
        if self.enabled:
            self.stream.write("\r" + self.line(iteration, cells_per_s, hit_rate, served_rate))
            self.stream.flush()

    def finish(self) -> None:
        """Ends the line so later output starts on a fresh one."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
