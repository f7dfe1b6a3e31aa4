# SPDX-License-Identifier: BSD-3-Clause
"""Flow and upwind transport: conservation, CFL sub-stepping, 1D front."""

import math

import numpy as np
import pytest
from scipy.special import erfc

from rtsim.flow import solve_flow
from rtsim.grid import Grid
from rtsim.scenario import MILLIDARCY_M2, FlowSpec, GridSpec
from rtsim.transport import UpwindTransport


def _setup(nx, ny, lx, ly, inj, out):
    grid = Grid(GridSpec(nx=nx, ny=ny, lx=lx, ly=ly, depth=1.0, porosity=0.25,
                         permeability=100 * MILLIDARCY_M2, viscosity=1e-3))
    flow = solve_flow(grid, FlowSpec(inj, 15e5, out, 10e5))
    return grid, flow, UpwindTransport(grid, flow)


def test_flow_is_divergence_free_between_the_fixed_cells():
    grid, flow, _ = _setup(20, 15, 20.0, 15.0, (0, 0), (14, 19))
    net = np.zeros((grid.ny, grid.nx))
    net[:, :-1] += flow.flux_x
    net[:, 1:] -= flow.flux_x
    net[:-1, :] += flow.flux_y
    net[1:, :] -= flow.flux_y
    assert flow.injection_rate > 0
    assert net[0, 0] == pytest.approx(flow.injection_rate)
    assert net[14, 19] == pytest.approx(-flow.outflow_rate)
    assert flow.outflow_rate == pytest.approx(flow.injection_rate, rel=1e-9)
    net[0, 0] = net[14, 19] = 0.0
    assert np.max(np.abs(net)) < 1e-9 * flow.injection_rate


def test_mass_is_conserved_to_round_off():
    grid, flow, tr = _setup(20, 15, 20.0, 15.0, (0, 0), (14, 19))
    rng = np.random.default_rng(7)
    conc = rng.uniform(0.0, 1.0, size=(grid.cells, 3))
    injected = np.array([2.0, 0.0, 1.0])
    initial = conc.sum(axis=0) * grid.pore_volume
    entered = np.zeros(3)
    left = np.zeros(3)
    h = tr.max_dt
    for _ in range(200):
        left += h * flow.outflow_rate * conc[grid.index(14, 19)]
        assert tr.advance(conc, h, injected) == 1
        entered += h * flow.injection_rate * injected
    final = conc.sum(axis=0) * grid.pore_volume
    np.testing.assert_allclose(final, initial + entered - left, rtol=1e-12, atol=1e-12)
    assert conc.min() >= 0.0  # upwind within the CFL limit cannot undershoot


def test_cfl_substeps():
    _, _, tr = _setup(30, 1, 30.0, 1.0, (0, 0), (0, 29))
    assert tr.substeps(tr.max_dt) == 1
    assert tr.substeps(3 * tr.max_dt) == 3
    assert tr.substeps(3.2 * tr.max_dt) == 4
    assert tr.substeps(2 * tr.max_dt, courant=0.5) == 4


def test_front_matches_analytic_advection_with_numerical_dispersion():
    # 1D column: uniform flux, so the exact solution of the scheme's
    # modified equation is c = 1/2 erfc((x - v t) / (2 sqrt(D t))) with
    # D = v dx (1 - Cr) / 2.
    n = 200
    grid, flow, tr = _setup(n, 1, float(n), 1.0, (0, 0), (0, n - 1))
    v = flow.injection_rate / (grid.dy * grid.spec.depth * grid.spec.porosity)
    dt = 2.5 * tr.max_dt
    steps = tr.substeps(dt)
    assert steps == 3
    courant = v * (dt / steps) / grid.dx
    conc = np.zeros((grid.cells, 1))
    iterations = 50
    for _ in range(iterations):
        tr.advance(conc, dt, np.array([1.0]))
    t = iterations * dt
    x = (np.arange(n) + 0.5) * grid.dx
    dispersion = v * grid.dx * (1 - courant) / 2
    exact = 0.5 * erfc((x - v * t) / (2 * math.sqrt(dispersion * t)))
    assert np.max(np.abs(conc[:, 0] - exact)) < 0.03
    front = x[np.argmin(np.abs(conc[:, 0] - 0.5))]
    assert abs(front - v * t) <= 1.5 * grid.dx
    assert 60 < v * t < 150  # the front is inside the column


def test_courant_one_translates_a_step_exactly():
    n = 50
    grid, flow, tr = _setup(n, 1, float(n), 1.0, (0, 0), (0, n - 1))
    conc = np.zeros((grid.cells, 1))
    tr.advance(conc, 10 * tr.max_dt, np.array([1.0]))
    np.testing.assert_allclose(conc[:10, 0], 1.0, rtol=1e-12)
    np.testing.assert_allclose(conc[10:, 0], 0.0, atol=1e-12)
