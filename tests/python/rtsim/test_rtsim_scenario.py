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


INTERPOLATION = """
[dht.interpolation]
enabled = true
method = "idw"
aqueous_digits = 3
mineral_digits = 1
tolerance = 1e-9
min_neighbours = 4
max_neighbours = 12
radius = 1.5
[dht.interpolation.variables.O]
tolerance = 6e-9
[dht.interpolation.variables.pH]
tolerance = 1e-3
[dht.interpolation.variables.Ca]
digits = 2
[dht.interpolation.variables.Dolomite]
phase = false
"""


def test_interpolation_settings_are_read(tmp_path):
    sc = load_scenario(_write(tmp_path, lambda s: s + INTERPOLATION))
    spec = sc.dht.interpolation
    assert spec.enabled and spec.method == "idw"
    assert (spec.min_neighbours, spec.max_neighbours, spec.radius) == (4, 12, 1.5)
    # keys: H O C Ca Cl Mg Calcite Dolomite; Ca has its own digits.
    assert sc.dht.keys == ("H", "O", "C", "Ca", "Cl", "Mg", "Calcite", "Dolomite")
    assert sc.interpolation_digits() == [3, 3, 3, 2, 3, 3, 1, 1]
    assert sc.interpolation_phase() == [False] * 6 + [True, False]
    # 0 leaves a variable out of the neighbour key.
    out = sc.with_interpolation(mineral_digits=0)
    assert out.interpolation_digits() == [3, 3, 3, 2, 3, 3, 0, 0]
    tolerances = dict(zip(sc.field_names, sc.interpolation_tolerances()))
    assert tolerances["O"] == 6e-9 and tolerances["Ca"] == tolerances["Calcite"] == 1e-9
    assert tolerances["pH"] == 1e-3 and tolerances["pe"] > 0 and tolerances["mu"] > 0
    assert len(sc.interpolation_tolerances()) == len(sc.field_names)


def test_interpolation_is_off_by_default():
    sc = load_scenario(SCENARIOS / "dol2d_small.toml")
    assert not sc.dht.interpolation.enabled
    # The defaults are coarser than the scenario's exact key once switched on.
    on = sc.with_interpolation(enabled=True)
    assert all(c < e for c, e in zip(on.interpolation_digits(), on.key_digits()))


@pytest.mark.parametrize("table, message", [
    ("tolerance = 0.0", r"\[dht.interpolation\] 'tolerance' must be > 0"),
    ("tolerance = -1e-9", r"'tolerance' must be > 0"),
    ('method = "cubic"', r"'method' must be one of linear, idw, got 'cubic'"),
    ("aqueous_digits = 6", r"neighbour key of 'H' has 6 digits, the exact key 5: "
                           r"it must not be finer"),
    ("mineral_digits = 6", r"neighbour key of 'Calcite' has 6 digits, the exact key 4"),
    ("aqueous_digits = 5\nmineral_digits = 4",
     r"the neighbour key has the exact key's digits \(H 5, O 5, .*\): it must be coarser"),
    ("aqueous_digits = -1", r"'aqueous_digits' must be >= 0"),
    ("min_neighbours = 1", r"'min_neighbours' must be >= 2"),
    ("max_neighbours = 65", r"'max_neighbours' must be >= 2 and <= 64"),
    ("min_neighbours = 8\nmax_neighbours = 6", r"'max_neighbours' \(6\) is below"),
    ("radius = 0", r"'radius' must be > 0"),
    ("tolerence = 1e-9", r"unknown key\(s\) 'tolerence'"),
    ("[dht.interpolation.variables.Fe]\ntolerance = 1e-9",
     r"'Fe' is neither a cache key variable nor a cache output"),
    ("[dht.interpolation.variables.pH]\ndigits = 2",
     r"'digits' applies to cache key variables only; 'pH' is not one"),
    ("[dht.interpolation.variables.Ca]\ntolerance = 0", r"'tolerance' must be > 0"),
    ("[dht.interpolation.variables.Ca]\ndigits = 6",
     r"neighbour key of 'Ca' has 6 digits, the exact key 5"),
    ("coarse_aqueous_digits = 2", r"'coarse_aqueous_digits' and 'coarse_mineral_digits' go "
                                  r"together"),
    ("coarse_aqueous_digits = 3\ncoarse_mineral_digits = 1",
     r"the coarse neighbour key \(H 3, .*\) must be coarser than the first"),
    ("coarse_aqueous_digits = 2\ncoarse_mineral_digits = 2",
     r"the coarse neighbour key .* must be coarser than the first"),
    ("coarse_aqueous_digits = 2\ncoarse_mineral_digits = 1\ncoarse_tolerance_scale = 2",
     r"'coarse_tolerance_scale' must be <= 1.0, got 2.0"),
])
def test_bad_interpolation_settings_name_the_problem(tmp_path, table, message):
    text = "\n[dht.interpolation]\nenabled = true\n" + table + "\n"
    with pytest.raises(ScenarioError, match=message):
        load_scenario(_write(tmp_path, lambda s: s + text))


def test_command_line_overrides_are_checked(tmp_path):
    from rtsim.cli import apply_overrides, build_parser

    path = SCENARIOS / "dol2d_small.toml"

    def parse(*extra):
        args = build_parser().parse_args(["run", str(path), str(tmp_path), "--dht", *extra])
        return apply_overrides(load_scenario(path), args)

    sc = parse("--interpolate", "--interp-method", "idw", "--interp-digits", "4:2",
               "--interp-tolerance", "1e-10", "--interp-neighbours", "3:9",
               "--interp-radius", "2")
    spec = sc.dht.interpolation
    assert spec.enabled and spec.method == "idw" and spec.tolerance == 1e-10
    assert (spec.min_neighbours, spec.max_neighbours, spec.radius) == (3, 9, 2.0)
    assert sc.interpolation_digits() == [4] * 6 + [2, 2]
    # Every tolerance is scaled with the state increments' one.
    default = dict(zip(sc.field_names, load_scenario(path).interpolation_tolerances()))
    scaled = dict(zip(sc.field_names, sc.interpolation_tolerances()))
    assert scaled["pH"] == pytest.approx(default["pH"] * 1e-10 / default["Ca"])
    assert not parse().dht.interpolation.enabled
    # Exact digits lowered below the neighbour digits on the command line.
    with pytest.raises(ScenarioError, match="it must not be finer"):
        parse("--interpolate", "--dht-digits", "2:4")
    with pytest.raises(SystemExit):
        parse("--interp-tolerance", "0")
    # The coarse level: set, scaled, and switched off again.
    sc = parse("--interpolate", "--interp-coarse", "2:0", "--interp-coarse-scale", "0.25")
    assert sc.interpolation_coarse_digits() == [2] * 6 + [0, 0]
    assert sc.dht.interpolation.coarse_tolerance_scale == 0.25
    assert parse("--interpolate", "--interp-coarse", "none").interpolation_coarse_digits() \
        is None
    with pytest.raises(ScenarioError, match="must be coarser than the first"):
        parse("--interpolate", "--interp-coarse", "3:1")
    with pytest.raises(SystemExit):
        parse("--interp-coarse-scale", "0")
