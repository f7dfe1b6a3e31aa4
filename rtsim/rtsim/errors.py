# SPDX-License-Identifier: BSD-3-Clause
"""Exceptions that end a run with a message instead of a traceback."""


class RtsimError(Exception):
    """A user-facing failure: the message is printed, the exit code is 2."""


class ScenarioError(RtsimError):
    """The scenario file is missing, malformed or inconsistent."""


class ChemistryError(RtsimError):
    """PHREEQC reported an error (or a warning) for some input."""
