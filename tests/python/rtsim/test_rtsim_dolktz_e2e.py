# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end runs of dolktz_small (heterogeneous field, edge injection)
under mpiexec, with and without the cache."""

import json
import subprocess
import sys

import numpy as np
import pytest
from test_rtsim_e2e import ENV, PNG, SCENARIOS, rmadht_missing, run_ok

from rtsim.output import list_snapshots, load_snapshot

SMALL = SCENARIOS / "dolktz_small.toml"


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """Reference runs on 2 and on 3 ranks."""
    base = tmp_path_factory.mktemp("ktz")
    for ranks in (2, 3):
        run_ok(ranks, "run", SMALL, base / f"n{ranks}", "--work-package-size", 16)
    return {ranks: base / f"n{ranks}" for ranks in (2, 3)}


@pytest.fixture(scope="module")
def reference(references):
    return references[3]


def _check(out, dht):
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["cells"], summary["iterations"]) == (128, 20)
    assert (summary["dht"] is not None) == dht
    for png in ("maps.png", "timeline.png", "flow.png"):
        assert (out / png).read_bytes()[:8] == PNG
    names, maps = load_snapshot(list_snapshots(out)[20])
    assert maps.shape == (len(names), 8, 16) and np.all(np.isfinite(maps))
    return summary, names, maps


def test_reference_run_sweeps_the_grid_from_the_left_edge(reference):
    summary, names, maps = _check(reference, dht=False)
    assert summary["phreeqc_cells"] == 128 * 20
    # The whole left edge takes the injected water: calcite is gone along
    # it, and no cell holds more calcite than it started with.
    assert np.all(maps[names.index("Calcite")][:, 0] < 1e-10)
    assert maps[names.index("Calcite")].max() <= 2.07e-4
    # The front fingers: the injected chloride has crossed the grid along
    # the permeable rows, while others at the outflow edge have hardly seen it.
    chloride = maps[names.index("Cl")][:, -1]
    assert chloride.max() > 1e-3 > 1e-4 > chloride.min()
    _, early = load_snapshot(list_snapshots(reference)[4])
    reached = (early[names.index("Mg")] > 5e-4).sum(axis=1)
    assert reached.max() >= reached.min() + 3


def test_rank_count_does_not_change_the_reference(references):
    _, a = load_snapshot(list_snapshots(references[2])[20])
    _, b = load_snapshot(list_snapshots(references[3])[20])
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-18)


def test_cached_run_matches_the_reference(reference, tmp_path):
    missing = rmadht_missing()
    if missing:
        pytest.skip(missing)
    out = tmp_path / "dht"
    run_ok(3, "run", SMALL, out, "--work-package-size", 16, "--dht", "--dht-size", 8)
    summary, _, _ = _check(out, dht=True)
    dht = summary["dht"]
    assert dht["reads"] == 128 * 20 and 0 < dht["hits"] < dht["reads"]
    assert summary["phreeqc_cells"] == dht["reads"] - dht["hits"]
    done = subprocess.run([sys.executable, "-m", "rtsim", "compare", reference, out],
                          env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "compare.json").read_text())["max_error"] <= 1e-5
