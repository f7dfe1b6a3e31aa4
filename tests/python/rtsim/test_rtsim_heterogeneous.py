# SPDX-License-Identifier: BSD-3-Clause
"""Heterogeneous permeability and injection along an edge (the dolktz scenario)."""

import math
from pathlib import Path

import numpy as np
import pytest

from rtsim.errors import ScenarioError
from rtsim.flow import harmonic_mean, solve_flow
from rtsim.grid import Grid
from rtsim.permeability import lognormal_field, read_field
from rtsim.scenario import MILLIDARCY_M2, FlowSpec, GridSpec, PermeabilityFieldSpec, load_scenario
from rtsim.transport import UpwindTransport

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
MU = 1e-3


def _field(seed=3, shape=(160, 240), std=0.5, lengths=(4.0, 12.0)):
    return lognormal_field(shape, (1.0, 1.0), geometric_mean=100.0, log10_std=std,
                           correlation_length=lengths, seed=seed)


def _correlation(z, lag, axis):
    """Sample correlation of z with itself shifted by lag cells along axis."""
    n = z.shape[axis]
    a = np.take(z, range(n - lag), axis=axis).ravel()
    b = np.take(z, range(lag, n), axis=axis).ravel()
    return float(np.corrcoef(a, b)[0, 1])


def test_field_is_reproducible_from_its_seed():
    assert np.array_equal(_field(seed=3), _field(seed=3))
    assert not np.allclose(_field(seed=3), _field(seed=4))


def test_field_has_the_requested_statistics():
    k = _field()
    log_k = np.log10(k)
    assert k.shape == (160, 240) and np.all(k > 0)
    assert 10 ** log_k.mean() == pytest.approx(100.0, rel=1e-12)  # geometric mean
    assert log_k.std() == pytest.approx(0.5, rel=1e-12)
    # Gaussian covariance: the correlation is 1/e at one correlation length,
    # here 4 cells down the rows and 12 cells along them.
    z = (log_k - log_k.mean()) / log_k.std()
    assert _correlation(z, 4, axis=0) == pytest.approx(math.exp(-1), abs=0.08)
    assert _correlation(z, 12, axis=1) == pytest.approx(math.exp(-1), abs=0.12)
    assert _correlation(z, 1, axis=1) == pytest.approx(math.exp(-1 / 144), abs=0.03)
    assert abs(_correlation(z, 24, axis=0)) < 0.1  # six lengths apart: uncorrelated
    # No variance: a uniform field equal to the mean.
    assert np.array_equal(_field(std=0.0), np.full((160, 240), 100.0))


def test_field_file(tmp_path):
    values = np.arange(1.0, 7.0).reshape(2, 3)
    np.save(tmp_path / "k.npy", values)
    np.savetxt(tmp_path / "k.txt", values)
    assert np.array_equal(read_field(tmp_path / "k.npy", (2, 3)), values)
    assert np.array_equal(read_field(tmp_path / "k.txt", (2, 3)), values)
    with pytest.raises(ScenarioError, match=r"has shape \(2, 3\), the grid needs"):
        read_field(tmp_path / "k.npy", (3, 2))
    np.save(tmp_path / "bad.npy", -values)
    with pytest.raises(ScenarioError, match="finite and > 0"):
        read_field(tmp_path / "bad.npy", (2, 3))
    with pytest.raises(ScenarioError, match="not found"):
        read_field(tmp_path / "absent.npy", (2, 3))


def _grid(nx, ny, field=None, file=None):
    spec = None
    if field is not None:
        spec = PermeabilityFieldSpec(log10_std=field, correlation_length=(5.0, 3.0), seed=11)
    if file is not None:
        spec = PermeabilityFieldSpec(file=str(file))
    return Grid(GridSpec(nx=nx, ny=ny, lx=float(nx), ly=float(ny), depth=1.0, porosity=0.25,
                         permeability=100 * MILLIDARCY_M2, viscosity=MU,
                         permeability_field=spec))


def _edges(injection="left", outflow="right", rate=None):
    return FlowSpec(injection_cell=None, injection_pressure=None if rate else 15e5,
                    outflow_cell=None, outflow_pressure=10e5, injection_boundary=injection,
                    outflow_boundary=outflow, injection_rate=rate)


def _divergence(flow):
    net = np.zeros(flow.pressure.shape)
    net[:, :-1] += flow.flux_x
    net[:, 1:] -= flow.flux_x
    net[:-1, :] += flow.flux_y
    net[1:, :] -= flow.flux_y
    return net


def test_uniform_edges_give_the_analytic_darcy_flux():
    grid = _grid(20, 8)
    flow = solve_flow(grid, _edges())
    # Each row is a tube of length lx between the two fixed-pressure faces.
    per_row = 100 * MILLIDARCY_M2 * 1.0 * 1.0 * 5e5 / (MU * 20.0)
    np.testing.assert_allclose(flow.flux_x, per_row, rtol=1e-9)
    assert np.max(np.abs(flow.flux_y)) < 1e-12 * per_row
    np.testing.assert_allclose(flow.inflow[:, 0], per_row, rtol=1e-9)
    np.testing.assert_allclose(flow.outflow[:, -1], per_row, rtol=1e-9)
    assert flow.injection_rate == pytest.approx(8 * per_row, rel=1e-9)
    # The pressure falls linearly from face to face.
    x = np.arange(20) + 0.5
    np.testing.assert_allclose(flow.pressure, np.tile(15e5 - 5e5 * x / 20, (8, 1)), rtol=1e-9)


def test_layers_in_series_take_the_harmonic_mean(tmp_path):
    k_mD = np.tile([10.0, 1000.0, 100.0, 50.0, 400.0], (3, 1))
    np.save(tmp_path / "k.npy", k_mD)
    flow = solve_flow(_grid(5, 3, file=tmp_path / "k.npy"), _edges())
    resistance = np.sum(1.0 / (k_mD[0] * MILLIDARCY_M2))  # dx / (k dy depth), dx = dy = 1
    np.testing.assert_allclose(flow.flux_x, 5e5 / (MU * resistance), rtol=1e-9)


def test_heterogeneous_edge_flow_conserves_mass():
    for spec in (_edges(), _edges(rate=2e-6), _edges("top", "bottom"), _edges("right", "left")):
        grid = _grid(30, 20, field=0.8)
        flow = solve_flow(grid, spec)
        net = _divergence(flow) - flow.inflow + flow.outflow
        assert np.max(np.abs(net)) < 1e-9 * flow.injection_rate
        assert flow.outflow_rate == pytest.approx(flow.injection_rate, rel=1e-9)
        assert flow.inflow.min() >= 0 and flow.outflow.min() >= 0
        assert np.count_nonzero(flow.inflow) == (20 if spec.injection_boundary in ("left", "right")
                                                 else 30)
        # Darcy: water runs down the pressure gradient across every face.
        assert np.all(flow.flux_x * (flow.pressure[:, :-1] - flow.pressure[:, 1:]) >= 0)
        assert np.all(flow.flux_y * (flow.pressure[:-1, :] - flow.pressure[1:, :]) >= 0)


def test_fixed_rate_is_shared_by_permeability():
    grid = _grid(30, 20, field=0.8)
    flow = solve_flow(grid, _edges(rate=2e-6))
    assert flow.injection_rate == pytest.approx(2e-6, rel=1e-12)
    k = grid.permeability[:, 0]
    np.testing.assert_allclose(flow.inflow[:, 0], 2e-6 * k / k.sum(), rtol=1e-12)


def test_top_to_bottom_is_left_to_right_transposed(tmp_path):
    k = _grid(12, 7, field=0.6).permeability / MILLIDARCY_M2
    np.save(tmp_path / "k.npy", k)
    np.save(tmp_path / "kt.npy", k.T.copy())
    across = solve_flow(_grid(12, 7, file=tmp_path / "k.npy"), _edges())
    down = solve_flow(_grid(7, 12, file=tmp_path / "kt.npy"), _edges("top", "bottom"))
    np.testing.assert_allclose(down.pressure, across.pressure.T, rtol=1e-12)
    np.testing.assert_allclose(down.flux_y, across.flux_x.T, rtol=1e-9, atol=1e-20)


def test_edge_injection_transport_conserves_mass():
    grid = _grid(30, 20, field=0.8)
    flow = solve_flow(grid, _edges())
    tr = UpwindTransport(grid, flow)
    rng = np.random.default_rng(5)
    conc = rng.uniform(0.0, 1.0, size=(grid.cells, 2))
    injected = np.array([3.0, 0.5])
    initial = conc.sum(axis=0) * grid.pore_volume
    entered = np.zeros(2)
    left = np.zeros(2)
    h = tr.max_dt
    out = flow.outflow.ravel()
    for _ in range(300):
        left += h * out @ conc
        assert tr.advance(conc, h, injected) == 1
        entered += h * flow.injection_rate * injected
    final = conc.sum(axis=0) * grid.pore_volume
    np.testing.assert_allclose(final, initial + entered - left, rtol=1e-12)
    assert conc.min() >= 0.0
    # Long after the injected water filled the grid, every cell holds it.
    for _ in range(20000):
        tr.advance(conc, 5 * h, injected)
    np.testing.assert_allclose(conc, np.tile(injected, (grid.cells, 1)), rtol=1e-9)


@pytest.mark.parametrize("name", ["dolktz.toml", "dolktz_small.toml"])
def test_dolktz_scenarios_load(name):
    sc = load_scenario(SCENARIOS / name)
    assert sc.flow.injection_boundary == "left" and sc.flow.outflow_boundary == "right"
    assert sc.flow.injection_rate > 0 and sc.flow.injection_cell is None
    assert sc.grid.permeability_field is not None and sc.grid.permeability_field.log10_std > 0
    k = Grid(sc.grid).permeability
    assert k.shape == (sc.grid.ny, sc.grid.nx)
    assert np.exp(np.log(k).mean()) == pytest.approx(sc.grid.permeability, rel=1e-12)


FIELD = 'log10_std = 0.5\ncorrelation_length_m = [4.0, 2.0]\nseed = 7\n'


def _from_file(text, keep_mean=False):
    """dolktz_small with its permeability read from k.npy."""
    assert FIELD in text
    text = text.replace(FIELD, 'file = "k.npy"\n')
    return text if keep_mean else text.replace("permeability_mD = ", "# ")


def _write(tmp_path, edit):
    path = tmp_path / "bad.toml"
    path.write_text(edit((SCENARIOS / "dolktz_small.toml").read_text()))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace('injection_boundary = "left"', 'injection_boundary = "west"'),
     r"'injection_boundary' must be one of 'left', 'right', 'top', 'bottom', got 'west'"),
    (lambda s: s.replace('injection_boundary = "left"', 'injection_boundary = "right"'),
     r"'injection_boundary' and 'outflow_boundary' must differ"),
    (lambda s: s.replace('injection_boundary = "left"',
                         'injection_boundary = "left"\ninjection_cell = [0, 0]'),
     r"give either 'injection_cell' or 'injection_boundary'"),
    (lambda s: s.replace('outflow_boundary = "right"', ''),
     r"give either 'outflow_cell' or 'outflow_boundary'"),
    (lambda s: s.replace('outflow_boundary = "right"', 'outflow_cell = [3, 0]'),
     r"'outflow_cell' lies on the injection boundary"),
    (lambda s: s.replace('injection_rate_m3_per_day', 'injection_pressure_bar = 15.0\n'
                         'injection_rate_m3_per_day'),
     r"give either 'injection_pressure_bar' or 'injection_rate_m3_per_day'"),
    (lambda s: s.replace('injection_rate_m3_per_day', '# '),
     r"give either 'injection_pressure_bar' or 'injection_rate_m3_per_day'"),
    (lambda s: s.replace('injection_rate_m3_per_day = 1.6', 'injection_pressure_bar = 9.0'),
     r"'injection_pressure_bar' must exceed 'outflow_pressure_bar'"),
    (lambda s: s.replace('injection_boundary = "left"', 'injection_cell = [0, 0]'),
     r"'injection_rate_m3_per_day' needs 'injection_boundary'"),
    (lambda s: s.replace('injection_rate_m3_per_day = ', 'injection_rate_m3_per_day = -'),
     r"'injection_rate_m3_per_day' must be > 0"),
    (lambda s: s.replace("correlation_length_m = [", "correlation_length_m = [0.0, "),
     r"'correlation_length_m' must be a number > 0 or \[along x, along y\]"),
    (lambda s: s.replace("log10_std = ", "log10_std = -"), r"'log10_std' must be >= 0"),
    (lambda s: s.replace("seed = ", "seed = 1.5 #"), r"'seed' must be an integer"),
    (lambda s: s.replace("seed = ", "seeed = "), r"missing key 'seed' \('seeed'"),
    (lambda s: _from_file(s, keep_mean=True),
     r"give either 'permeability_mD' or \[grid.permeability_field\] 'file'"),
    (lambda s: _from_file(s), r"k.npy: permeability field has shape \(2, 2\), the grid needs"),
    (lambda s: _from_file(s).replace('file = "k.npy"', 'file = "k.npy"\nseed = 1'),
     r"unknown key\(s\) 'seed'"),
])
def test_bad_dolktz_settings_name_the_problem(tmp_path, edit, message):
    np.save(tmp_path / "k.npy", np.ones((2, 2)))
    with pytest.raises(ScenarioError, match=message):
        load_scenario(_write(tmp_path, edit))


def test_permeability_file_relative_to_the_scenario(tmp_path):
    sc = load_scenario(SCENARIOS / "dolktz_small.toml")
    k = Grid(sc.grid).permeability / MILLIDARCY_M2
    np.save(tmp_path / "k.npy", k)
    path = _write(tmp_path, _from_file)
    from_file = load_scenario(path)
    np.testing.assert_allclose(Grid(from_file.grid).permeability, Grid(sc.grid).permeability,
                               rtol=1e-15)
    assert from_file.grid.permeability == pytest.approx(sc.grid.permeability, rel=1e-12)


def test_a_uniform_field_changes_nothing():
    # The harmonic mean of equal permeabilities is that permeability, bit
    # for bit, so a field without variance flows exactly as none (dol2d).
    cells = FlowSpec((0, 0), 15e5, (9, 11), 10e5)
    plain = solve_flow(_grid(12, 10), cells)
    flat = solve_flow(_grid(12, 10, field=0.0), cells)
    for name in ("pressure", "flux_x", "flux_y", "inflow", "outflow"):
        assert np.array_equal(getattr(plain, name), getattr(flat, name))
    assert plain.injection_rate == flat.injection_rate > 0
    assert np.count_nonzero(plain.inflow) == np.count_nonzero(plain.outflow) == 1
    k = np.random.default_rng(2).lognormal(-30.0, 2.0, 1000)
    assert np.array_equal(harmonic_mean(k, k), k)  # 2 k k / (k + k) is not always k
    assert harmonic_mean(np.array([1.0]), np.array([3.0]))[0] == pytest.approx(1.5)
