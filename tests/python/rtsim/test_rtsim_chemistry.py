# SPDX-License-Identifier: BSD-3-Clause
"""The PHREEQC wrapper on known states."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rtsim.chemistry import ChemistryEngine
from rtsim.errors import ChemistryError
from rtsim.scenario import load_scenario

SMALL = Path(__file__).resolve().parents[3] / "scenarios" / "dol2d_small.toml"


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(SMALL)


@pytest.fixture(scope="module")
def engine(scenario):
    return ChemistryEngine(scenario)


def _cell(scenario, engine, water, calcite):
    row = engine.water(water, "test water")
    n = len(scenario.components)
    state = np.concatenate([row[:n], [calcite, 0.0]])
    return state, row[-3:]


def _col(scenario, name):
    return scenario.field_names.index(name)


def test_pore_water_is_in_equilibrium_with_calcite(scenario, engine):
    state, guess = _cell(scenario, engine, scenario.pore_water, 2.07e-4)
    ph = guess[0]
    assert 9.5 < ph < 10.5  # calcite in pure water, closed to CO2
    assert state[_col(scenario, "Ca")] == pytest.approx(state[_col(scenario, "C")], rel=1e-9)
    out = engine.react(np.tile(state, (3, 1)), scenario.dt)
    assert out.shape == (3, len(engine.field_columns))
    for row in out:
        np.testing.assert_allclose(row[:len(state)], state, rtol=1e-9, atol=1e-15)
        assert row[_col(scenario, "pH")] == pytest.approx(ph, abs=1e-6)


def test_injected_water_dissolves_calcite_with_closed_mass_balance(scenario, engine):
    state, _ = _cell(scenario, engine, scenario.injection, 2.07e-4)
    out = engine.react(state[None, :], scenario.dt)[0]
    d = out[:len(state)] - state
    d_cal, d_dol = d[_col(scenario, "Calcite")], d[_col(scenario, "Dolomite")]
    assert d_cal < -1e-6  # calcite dissolves
    assert d_dol >= 0.0
    scale = 2.07e-4
    assert abs(d[_col(scenario, "Ca")] + d_cal + d_dol) < 1e-9 * scale
    assert abs(d[_col(scenario, "Mg")] + d_dol) < 1e-9 * scale
    assert abs(d[_col(scenario, "C")] + d_cal + 2 * d_dol) < 1e-9 * scale
    assert abs(d[_col(scenario, "Cl")]) < 1e-10 * state[_col(scenario, "Cl")]
    assert abs(d[_col(scenario, "H")]) < 1e-11
    assert abs(d[_col(scenario, "O")] + 3 * (d_cal + 2 * d_dol)) < 1e-10
    assert abs(d[_col(scenario, "charge")]) < 1e-10


def test_package_rows_are_independent(scenario, engine):
    pore, _ = _cell(scenario, engine, scenario.pore_water, 2.07e-4)
    inj, _ = _cell(scenario, engine, scenario.injection, 2.07e-4)
    states = np.array([pore, inj, pore])
    together = engine.react(states, scenario.dt)
    alone = engine.react(inj[None, :], scenario.dt)[0]
    np.testing.assert_allclose(together[1], alone, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(together[0], together[2], rtol=1e-12, atol=1e-18)


def test_a_result_depends_on_the_state_alone(scenario):
    """What a cache hit assumes: the same state gives the same result, bit
    for bit, whatever the engine reacted before."""
    inj, _ = _cell(scenario, ChemistryEngine(scenario), scenario.injection, 2.07e-4)
    fresh = ChemistryEngine(scenario).react(inj[None, :], scenario.dt)[0]
    used = ChemistryEngine(scenario)
    reacted = used.react(inj[None, :], scenario.dt)
    used.react(reacted[:, :len(inj)], scenario.dt)
    np.testing.assert_array_equal(used.react(inj[None, :], scenario.dt)[0], fresh)


def test_unknown_element_is_a_clear_phreeqc_error(scenario):
    bad = dataclasses.replace(scenario, elements=scenario.elements + ("Xx",),
                              injection=dataclasses.replace(scenario.injection,
                                                            totals={"Xx": 1e-3}))
    engine = ChemistryEngine(bad)
    with pytest.raises(ChemistryError, match="PHREEQC warned while defining the injected water"):
        engine.water(bad.injection, "injected water")
