# SPDX-License-Identifier: BSD-3-Clause
"""Scenario files: the shipped ones load, broken ones say what is wrong."""

from pathlib import Path

import pytest

from rtsim.errors import ScenarioError
from rtsim.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


@pytest.mark.parametrize("name", ["dol2d.toml", "dol2d_small.toml"])
def test_shipped_scenarios_load(name):
    sc = load_scenario(SCENARIOS / name)
    assert sc.components == ("H", "O", "charge", "C", "Ca", "Cl", "Mg")
    assert sc.mineral_names == ("Calcite", "Dolomite")
    assert "charge" not in sc.dht.keys and "Calcite" in sc.dht.keys
    assert len(sc.key_digits()) == len(sc.dht.keys) == len(sc.key_log10())


def test_dol2d_is_simdol2d():
    sc = load_scenario(SCENARIOS / "dol2d.toml")
    assert (sc.grid.nx, sc.grid.ny, sc.grid.lx, sc.grid.porosity) == (50, 50, 50.0, 0.25)
    assert sc.flow.injection_cell == (0, 0) and sc.flow.outflow_cell == (49, 49)
    assert sc.flow.injection_pressure == 15e5 and sc.flow.outflow_pressure == 10e5
    assert sc.minerals[0].initial == 2.07e-4
    assert sc.injection.totals == {"Mg": 0.001, "Cl": 0.002}
    assert (sc.iterations, sc.dt) == (300, 10 * 86400.0)  # POET's 300 steps of 10 days


def _write(tmp_path, text):
    base = (SCENARIOS / "dol2d_small.toml").read_text()
    path = tmp_path / "bad.toml"
    path.write_text(text(base))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("nx = 12", "nx = 0"), r"\[grid\] 'nx' must be >= 1"),
    (lambda s: s.replace("porosity = 0.25", "porositee = 0.25"), r"missing key 'porosity' \('porositee' is not a known key"),
    (lambda s: s.replace("porosity = 0.25", "porosity = 0.25\nporositee = 0.3"),
     r"unknown key\(s\) 'porositee'"),
    (lambda s: s.replace("dt = 172800.0", 'dt = "two days"'), r"'dt' must be a number"),
    (lambda s: s.replace('database = "phreeqc.dat"', 'database = "nope.dat"'),
     r"database 'nope.dat' not found"),
    (lambda s: s + "\n[dht.variables.Fe]\ndigits = 4\n", r"'Fe' is not a cache key variable"),
    (lambda s: s.replace('compare = ["C",', 'compare = ["Zz", "C",'), r"unknown variable 'Zz'"),
    (lambda s: s.replace("totals = { Mg = 0.001", "totals = { Na = 0.001"),
     r"element 'Na' is not listed"),
    (lambda s: s.replace("outflow_cell = [11, 11]", "outflow_cell = [12, 11]"), r"outside the"),
    (lambda s: s.replace("[grid]", "[grid"), r"not valid TOML"),
])
def test_bad_scenarios_name_the_problem(tmp_path, edit, message):
    with pytest.raises(ScenarioError, match=message):
        load_scenario(_write(tmp_path, edit))


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match="scenario file not found"):
        load_scenario(tmp_path / "absent.toml")
