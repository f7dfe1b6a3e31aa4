# SPDX-License-Identifier: BSD-3-Clause
"""Glue between the workers' chemistry and an rmadht surrogate cache.

Key: the cache key variables of the cell's state (the transported totals
and the mineral amounts, see [dht] keys), rounded by rmadht per variable.
The time step is constant in a scenario, so it is not part of the key.

Value: the reaction increment of every state variable, then pH, pe and
ionic strength after the step.  A hit adds the increment of a neighbouring
input to the cell's own state.  Storing absolute results instead would put
the neighbour's total H and O into the cell: those differ between inputs
that round alike by far more than the cell's acidity, and pH would drift.
Increments keep the element balance of every reaction exact.

By default a result in which a mineral appears or vanishes is not stored,
as in POET: a neighbouring input may not cross the same threshold.

With [dht.interpolation] enabled, a lookup whose exact key is absent may be
served from the entries around it (rmadht.Interpolation): the increments
of the neighbours, interpolated to the cell's key inputs.  Such a row is
never stored back: an exact entry made of an interpolation would serve
later exact hits and anchor later interpolations with an error the
tolerance never saw, so errors would compound from iteration to iteration
instead of staying within one interpolation's.

A served row, exact or interpolated, in which a mineral appears or vanishes
goes to PHREEQC instead, for the reason such results are not stored: the
phase change is PHREEQC's to decide.  (The increment of a neighbouring
input can remove more of a mineral than the cell holds; clipped at zero,
the mineral's elements would not be removed alike.)
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from rtsim.errors import RtsimError
from rtsim.scenario import AUX_NAMES, BASE_COMPONENTS, Scenario

#: Counters summary.json always reports (summed over the workers), even
#: if a cache does not keep them.
STAT_NAMES = ("reads", "hits", "misses", "evictions", "checksum_retries",
              "invalidations", "writes")

#: The cache's own counters of interpolation: rows served (and of them by
#: the coarse level), rows refused
#: for each reason, and neighbour-index entries lost (0 where a version of
#: the bindings does not keep one).
INTERPOLATION_STAT_NAMES = ("interpolated", "interpolated_coarse", "refused_neighbours",
                            "refused_phase", "refused_error", "refused_outside",
                            "index_dropped")

#: Lookup status codes of rmadht.SurrogateCache.lookup.
MISS, HIT, INTERPOLATED = 0, 1, 2


def load_rmadht() -> Any:
    """Imports the bindings, with an actionable message when they are missing."""
    try:
        return importlib.import_module("rmadht")
    except ImportError as exc:
        raise RtsimError(
            f"--dht needs the rmadht Python bindings, which cannot be imported ({exc}); "
            "install them with 'pip install .' at the top of the rmadht repository") from None


class CellCache:
    """Looks up and stores chemistry results of whole work packages."""

    def __init__(self, scenario: Scenario, comm: Any, size_mb: int, rmadht: Any) -> None:
        names = scenario.state_names
        self.n_state = len(names)
        self.key_columns = np.array([names.index(k) for k in scenario.dht.keys])
        self.mineral_columns = np.arange(len(scenario.components), self.n_state)
        # Element totals and minerals cannot go below zero; H, O and charge
        # are large or signed and are left alone.
        self.nonnegative = slice(len(BASE_COMPONENTS), self.n_state)
        self.zero_below = scenario.dht.zero_below
        self.store_phase_changes = scenario.dht.store_phase_changes
        self.rejected_phase_changes = 0
        self.rejected_interpolations = 0
        self.rejected_hits = 0
        self.interpolating = scenario.dht.interpolation.enabled
        try:
            options = {}
            if self.interpolating:
                options["interpolation"] = interpolation(scenario, rmadht)
            self.cache = rmadht.SurrogateCache(
                comm, n_inputs=len(self.key_columns), n_outputs=self.n_state + len(AUX_NAMES),
                digits=scenario.key_digits(), log10=scenario.key_log10(),
                zero_below=self.zero_below, bytes_per_rank=size_mb << 20, mode="lockfree",
                **options)
        except Exception as exc:  # noqa: BLE001 - the bindings raise their own Error type
            raise RtsimError(f"cannot create the rmadht cache: {exc}") from None

    def keys(self, states: np.ndarray) -> np.ndarray:
        """The key inputs of every row, as a contiguous float64 array."""
        return np.ascontiguousarray(states[:, self.key_columns], dtype=np.float64)

    def lookup(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns (results, status): result rows are valid where status is
        HIT or INTERPOLATED, MISS elsewhere.

        A result row holds the new state then pH, pe and mu, as from PHREEQC.
        A served row in which a mineral would appear or vanish is turned into
        a miss (counted in rejected_hits and rejected_interpolations): the
        entries hold no phase changes, so such a row has an increment made
        for a cell that kept its minerals, and clipping the vanished amount
        at zero would leave the other elements of the reaction unbalanced.
        """
        values, status = self.cache.lookup(self.keys(states))
        # A cache without interpolation may answer with booleans: True is HIT.
        status = np.asarray(status).astype(np.uint8)
        values = np.asarray(values, dtype=np.float64)
        results = np.empty_like(values)
        results[:, :self.n_state] = states + values[:, :self.n_state]
        results[:, self.n_state:] = values[:, self.n_state:]
        np.maximum(results[:, self.nonnegative], 0.0, out=results[:, self.nonnegative])
        if self.mineral_columns.size:
            rows = np.flatnonzero(status != MISS)
            before = states[rows][:, self.mineral_columns] > self.zero_below
            after = results[rows][:, self.mineral_columns] > self.zero_below
            changed = rows[~np.all(before == after, axis=1)]
            self.rejected_interpolations += int(np.count_nonzero(status[changed] == INTERPOLATED))
            self.rejected_hits += int(np.count_nonzero(status[changed] == HIT))
            status[changed] = MISS
        return results, status

    def store(self, states: np.ndarray, results: np.ndarray) -> int:
        """Stores computed results; returns how many rows were stored."""
        keep = np.ones(states.shape[0], dtype=bool)
        if not self.store_phase_changes and self.mineral_columns.size:
            before = states[:, self.mineral_columns] > self.zero_below
            after = results[:, self.mineral_columns] > self.zero_below
            keep = np.all(before == after, axis=1)
            self.rejected_phase_changes += int(np.count_nonzero(~keep))
        if not keep.any():
            return 0
        values = results[keep].copy()
        values[:, :self.n_state] -= states[keep]
        self.cache.store(self.keys(states[keep]), np.ascontiguousarray(values))
        # Stores reach the other workers only once flushed; the next package
        # on any worker should already find them.
        self.cache.flush()
        return int(np.count_nonzero(keep))

    def stats(self) -> dict[str, int]:
        """The cache's integer counters for this rank; STAT_NAMES default to 0."""
        raw = self.cache.stats()
        counters = {name: 0 for name in STAT_NAMES}
        counters.update({k: int(v) for k, v in raw.items() if isinstance(v, (int, np.integer))})
        return counters

    def dump(self, path: str) -> None:
        """Collective: writes a snapshot of the whole table."""
        self.cache.dump(path)

    def restore(self, path: str) -> None:
        """Collective: fills the table from a snapshot."""
        self.cache.restore(path)

    def close(self) -> None:
        """Collective: frees the table."""
        self.cache.close()


def interpolation(scenario: Scenario, rmadht: Any) -> Any:
    """The rmadht.Interpolation of the scenario's [dht.interpolation]."""
    spec = scenario.dht.interpolation
    return rmadht.Interpolation(
        digits=scenario.interpolation_digits(), tolerance=scenario.interpolation_tolerances(),
        method=spec.method, min_neighbours=spec.min_neighbours,
        max_neighbours=spec.max_neighbours, radius=spec.radius,
        phase=scenario.interpolation_phase(),
        coarse_digits=scenario.interpolation_coarse_digits(),
        coarse_tolerance_scale=spec.coarse_tolerance_scale)
