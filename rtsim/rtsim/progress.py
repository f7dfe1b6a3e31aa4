# SPDX-License-Identifier: BSD-3-Clause
"""The master's progress report on stderr: a live bar, or plain lines for logs."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def is_terminal(stream: TextIO) -> bool:
    """Whether the stream is a terminal (False for closed or file-less streams)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """Reports "iteration, cells/s, hit rate" after iterations.

    live: one bar redrawn in place after every iteration, with carriage
    returns, which only a terminal shows well.  Otherwise a plain line at
    every tenth of the run (steps) and at its end, so that a file or a CI log
    gets a few readable lines, not one line of thousands of redraws.  None
    chooses live exactly when the stream is a terminal.
    """

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None,
                 width: int = 24, live: bool | None = None, steps: int = 10) -> None:
        self.total = total
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.live = is_terminal(self.stream) if live is None else live
        self.steps = steps
        self.shown = 0  # the steps reported so far, in plain lines
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
        """Reports after an iteration (cells/s is the chemistry throughput of the iteration)."""
        if not self.enabled:
            return
        if self.live:
            self.stream.write("\r" + self.line(iteration, cells_per_s, hit_rate, served_rate))
        else:
            step = self.steps * iteration // self.total
            if step <= self.shown:
                return
            self.shown = step
            self.stream.write(self.line(iteration, cells_per_s, hit_rate, served_rate) + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """Ends the live bar's line so later output starts on a fresh one."""
        if self.enabled and self.live:
            self.stream.write("\n")
            self.stream.flush()
