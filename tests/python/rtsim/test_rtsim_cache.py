# SPDX-License-Identifier: BSD-3-Clause
"""The cache glue, against a fake with the rmadht SurrogateCache interface."""

import types
from pathlib import Path

import numpy as np
import pytest

from rtsim.cache import CellCache
from rtsim.scenario import load_scenario
from rtsim.worker import WorkerStats, compute_package

SMALL = Path(__file__).resolve().parents[3] / "scenarios" / "dol2d_small.toml"


class FakeSurrogateCache:
    """Exact dictionary on keys rounded like rmadht: significant digits of x or log10|x|."""

    instances = []

    def __init__(self, comm, n_inputs, n_outputs, digits, log10, zero_below, bytes_per_rank,
                 mode, interpolation=None):
        assert mode == "lockfree" and bytes_per_rank == 8 << 20
        self.interpolation = interpolation
        self.n_inputs, self.n_outputs = n_inputs, n_outputs
        self.digits, self.log10, self.zero_below = list(digits), list(log10), zero_below
        self.table = {}
        self.counts = {"reads": 0, "hits": 0, "writes": 0, "flushes": 0}
        FakeSurrogateCache.instances.append(self)

    def _key(self, row):
        key = []
        for x, d, lg in zip(row, self.digits, self.log10):
            if abs(x) < self.zero_below:
                key.append("0")
            elif lg:
                key.append(("-" if x < 0 else "+") + f"{np.log10(abs(x)):.{d - 1}e}")
            else:
                key.append(f"{x:.{d - 1}e}")
        return tuple(key)

    def lookup(self, inputs):
        assert inputs.dtype == np.float64 and inputs.shape[1] == self.n_inputs
        out = np.full((len(inputs), self.n_outputs), np.nan)
        status = np.zeros(len(inputs), dtype=np.uint8)
        for i, row in enumerate(inputs):
            value = self.table.get(self._key(row))
            if value is not None:
                out[i], status[i] = value, 1
            elif self.interpolation is not None and self.table:
                # Stands in for an interpolation: the mean of every entry.
                out[i], status[i] = np.mean(list(self.table.values()), axis=0), 2
        self.counts["reads"] += len(inputs)
        self.counts["hits"] += int(np.count_nonzero(status == 1))
        self.counts["interpolated"] = self.counts.get("interpolated", 0) + int(
            np.count_nonzero(status == 2))
        return out, status

    def store(self, inputs, outputs):
        assert outputs.shape == (len(inputs), self.n_outputs)
        for row, value in zip(inputs, outputs):
            self.table[self._key(row)] = value.copy()
        self.counts["writes"] += len(inputs)

    def flush(self):
        self.counts["flushes"] += 1

    def stats(self):
        return dict(self.counts)

    def dump(self, path):
        Path(path).write_text(repr(sorted(self.table)))

    def restore(self, path):
        assert Path(path).is_file()

    def close(self):
        self.table = None


class FakeInterpolation:
    """Keeps the settings rtsim passes."""

    def __init__(self, **settings):
        self.settings = settings


FAKE_RMADHT = types.SimpleNamespace(SurrogateCache=FakeSurrogateCache,
                                    Interpolation=FakeInterpolation)


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(SMALL)


def test_hit_applies_the_stored_increment_to_the_cells_own_state(scenario):
    cache = CellCache(scenario, None, 8, FAKE_RMADHT)
    n = len(scenario.state_names)
    state = np.array([111.0, 55.5, 0.0, 1e-4, 1e-4, 2e-3, 1e-3, 2e-4, 1e-5])
    result = state.copy()
    result[7] -= 1e-5  # calcite dissolves ...
    result[4] += 1e-5  # ... into Ca
    aux = np.array([9.8, 10.0, 4e-3])
    assert cache.store(state[None, :], np.concatenate([result, aux])[None, :]) == 1
    near = state * (1 + 1e-9)  # rounds to the same key
    far = state.copy()
    far[3] *= 1.01
    got, hit = cache.lookup(np.array([near, far]))
    assert hit.tolist() == [True, False]
    np.testing.assert_allclose(got[0, :n], near + (result - state), rtol=1e-12)
    np.testing.assert_allclose(got[0, n:], aux)


def test_results_where_a_mineral_appears_or_vanishes_are_not_stored(scenario):
    cache = CellCache(scenario, None, 8, FAKE_RMADHT)
    state = np.array([111.0, 55.5, 0.0, 1e-4, 1e-4, 2e-3, 1e-3, 2e-4, 0.0])
    appears = np.concatenate([state, [9.8, 10.0, 4e-3]])
    appears[8] = 1e-6
    vanishes = np.concatenate([state, [9.8, 10.0, 4e-3]])
    vanishes[7] = 0.0
    steady = np.concatenate([state, [9.8, 10.0, 4e-3]])
    stored = cache.store(np.array([state, state * 1.1, state * 1.2]),
                         np.array([appears, vanishes, steady]))
    assert stored == 1
    assert cache.rejected_phase_changes == 2
    assert cache.cache.counts["flushes"] == 1


def test_clipping_keeps_amounts_nonnegative(scenario):
    cache = CellCache(scenario, None, 8, FAKE_RMADHT)
    state = np.array([111.0, 55.5, 0.0, 1e-4, 1.0000e-4, 2e-3, 1e-3, 2e-4, 1e-5])
    result = state.copy()
    result[4] = 1e-12  # nearly all Ca taken up
    cache.store(state[None, :], np.concatenate([result, [9.8, 10.0, 4e-3]])[None, :])
    smaller = state.copy()
    smaller[4] = 0.99999e-4  # same 5-digit key, slightly less Ca
    got, status = cache.lookup(smaller[None, :])
    assert status.tolist() == [1]
    assert got[0, 4] == 0.0


def test_hits_where_a_mineral_would_vanish_go_to_phreeqc(scenario):
    cache = CellCache(scenario, None, 8, FAKE_RMADHT)
    state = np.array([111.0, 55.5, 0.0, 1e-4, 1e-4, 2e-3, 1e-3, 2.0000e-4, 1e-5])
    result = state.copy()
    result[7] = 1e-9  # nearly all calcite gone, still present
    result[3] += 2e-4 - 1e-9  # its carbon in solution
    cache.store(state[None, :], np.concatenate([result, [9.8, 10.0, 4e-3]])[None, :])
    smaller = state.copy()
    smaller[7] = 1.99999e-4  # same key; the increment would remove all calcite
    _, status = cache.lookup(np.array([state, smaller]))
    # Clipped at zero, calcite would lose 1.99999e-4 while C gained 2e-4.
    assert status.tolist() == [1, 0]
    assert cache.rejected_hits == 1 and cache.rejected_interpolations == 0


def test_compute_package_only_runs_the_misses(scenario):
    class CountingEngine:
        field_columns = scenario.field_names
        calls = []

        def react(self, states, dt):
            self.calls.append(len(states))
            out = np.hstack([states, np.tile([9.8, 10.0, 4e-3], (len(states), 1))])
            out[:, 7] *= 0.5  # calcite dissolves, stays present
            return out

    engine = CountingEngine()
    cache = CellCache(scenario, None, 8, FAKE_RMADHT)
    stats = WorkerStats()
    base = np.array([111.0, 55.5, 0.0, 1e-4, 1e-4, 2e-3, 1e-3, 2e-4, 1e-5])
    states = np.array([base, base, base * 1.5])
    first = compute_package(engine, cache, 0, states, 1.0, stats)
    assert (first.lookups, first.hits, first.phreeqc_cells) == (3, 0, 3)
    second = compute_package(engine, cache, 1, states, 1.0, stats)
    assert (second.lookups, second.hits, second.phreeqc_cells) == (3, 3, 0)
    np.testing.assert_allclose(second.results, first.results, rtol=1e-12)
    assert engine.calls == [3]
    assert stats.packages == 2 and stats.stored == 3


class CountingEngine:
    """Calcite halves, stays present; records how many rows it computed."""

    def __init__(self, scenario):
        self.field_columns = scenario.field_names
        self.calls = []

    def react(self, states, dt):
        self.calls.append(len(states))
        out = np.hstack([states, np.tile([9.8, 10.0, 4e-3], (len(states), 1))])
        out[:, 7] *= 0.5
        return out


def test_interpolation_settings_reach_the_cache(scenario):
    sc = scenario.with_interpolation(enabled=True, method="idw", tolerance=1e-9)
    cache = CellCache(sc, None, 8, FAKE_RMADHT)
    settings = cache.cache.interpolation.settings
    assert settings["method"] == "idw" and settings["digits"] == sc.interpolation_digits()
    assert len(settings["tolerance"]) == cache.cache.n_outputs
    assert settings["tolerance"][3] == 1e-9
    assert settings["phase"] == [False] * 6 + [True, True]
    assert settings["coarse_digits"] is None
    coarse = sc.with_interpolation(coarse_aqueous_digits=2, coarse_mineral_digits=0,
                                   coarse_tolerance_scale=0.1)
    settings = CellCache(coarse, None, 8, FAKE_RMADHT).cache.interpolation.settings
    assert settings["coarse_digits"] == coarse.interpolation_coarse_digits() == [2] * 6 + [0, 0]
    assert settings["coarse_tolerance_scale"] == 0.1
    assert CellCache(scenario, None, 8, FAKE_RMADHT).cache.interpolation is None


def test_interpolated_rows_are_served_but_never_stored(scenario):
    sc = scenario.with_interpolation(enabled=True)
    engine = CountingEngine(sc)
    cache = CellCache(sc, None, 8, FAKE_RMADHT)
    stats = WorkerStats()
    base = np.array([111.0, 55.5, 0.0, 1e-4, 1e-4, 2e-3, 1e-3, 2e-4, 1e-5])
    first = compute_package(engine, cache, 0, base[None, :], 1.0, stats)
    assert (first.hits, first.interpolated, first.phreeqc_cells) == (0, 0, 1)
    near = base * [1, 1, 1, 1.01, 1.01, 1, 1, 1.01, 1]  # another exact key
    second = compute_package(engine, cache, 1, np.array([base, near]), 1.0, stats)
    assert (second.lookups, second.hits, second.interpolated, second.phreeqc_cells) == (2, 1, 1, 0)
    # The neighbour's increment lands on the cell's own state.
    increment = first.results[0, :9] - base
    np.testing.assert_allclose(second.results[1, :9], near + increment, rtol=1e-12)
    assert engine.calls == [1]
    assert len(cache.cache.table) == 1 and stats.stored == 1
    assert (stats.hits, stats.interpolated, stats.phreeqc_cells) == (1, 1, 1)
    assert stats.lookup_s > 0 and stats.cache_s == pytest.approx(stats.lookup_s + stats.store_s)


def test_interpolated_phase_changes_go_to_phreeqc(scenario):
    sc = scenario.with_interpolation(enabled=True)
    engine = CountingEngine(sc)
    cache = CellCache(sc, None, 8, FAKE_RMADHT)
    stats = WorkerStats()
    base = np.array([111.0, 55.5, 0.0, 1e-4, 1e-4, 2e-3, 1e-3, 2e-4, 1e-5])
    compute_package(engine, cache, 0, base[None, :], 1.0, stats)
    # Calcite halves at the entry (-1e-4); a cell with less calcite would
    # lose all of it by that increment: PHREEQC decides.
    little = base.copy()
    little[7] = 5e-5
    result = compute_package(engine, cache, 1, little[None, :], 1.0, stats)
    assert (result.interpolated, result.phreeqc_cells) == (0, 1)
    assert result.results[0, 7] == pytest.approx(2.5e-5)
    assert cache.rejected_interpolations == 1 and engine.calls == [1, 1]
