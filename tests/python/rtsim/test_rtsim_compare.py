# SPDX-License-Identifier: BSD-3-Clause
"""The error measure of De Lucia et al. 2021 (eq. 2) and the comparison files."""

import json
import math
import re

import numpy as np
import pytest

from rtsim.compare import compare_command, eq2_error, table
from rtsim.errors import RtsimError
from rtsim.grid import Grid
from rtsim.output import write_snapshot
from rtsim.scenario import GridSpec


def test_eq2_is_the_geometric_mean_of_relative_rmse():
    ref = np.array([[1.0, 2.0, 4.0, 0.0], [10.0, 10.0, 10.0, 10.0]])
    test = ref.copy()
    test[0, 0] += 0.4  # rmse 0.2, max 4 -> 0.05
    test[1] += 1e-3  # rmse 1e-3, max 10 -> 1e-4
    assert eq2_error(ref, test) == pytest.approx(math.sqrt(0.05 * 1e-4))


def test_eq2_edge_cases():
    ref = np.array([[1.0, 2.0], [0.0, 0.0]])
    assert eq2_error(ref, ref) == 0.0
    shifted = ref + np.array([[0.1, 0.1], [5.0, 5.0]])
    # A variable that is zero everywhere in the reference has no scale.
    assert eq2_error(ref, shifted) == pytest.approx(0.1 / 2.0)


def _fake_run(path, runtime, chemistry, offset, dht, drifting=slice(None)):
    grid = Grid(GridSpec(nx=3, ny=2, lx=3.0, ly=2.0, depth=1.0, porosity=0.25,
                         permeability=1e-13, viscosity=1e-3))
    path.mkdir()
    names = ["Ca", "pH", "Calcite"]
    for it in (0, 5, 10):
        fields = np.ones((grid.cells, 3)) * [1e-4, 9.0, 2e-4]
        fields[0, drifting] *= 1 + offset * it  # in one cell, variables drift a little
        write_snapshot(path, it, it * 10.0, fields, names, grid)
    summary = {"runtime_s": runtime, "chemistry_s": chemistry, "compare_variables": names,
               "dht": {"hit_rate": 0.9, "evictions": 0, "checksum_retries": 0} if dht else None}
    (path / "summary.json").write_text(json.dumps(summary))


def test_compare_writes_json_and_png(tmp_path):
    _fake_run(tmp_path / "ref", 10.0, 8.0, 0.0, False)
    _fake_run(tmp_path / "dht", 4.0, 2.0, 1e-6, True)
    result, written = compare_command(tmp_path / "ref", tmp_path / "dht", None, None)
    assert [p.name for p in written] == ["compare.json", "compare.png"]
    assert written[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads(written[0].read_text())
    assert saved["speedup"] == pytest.approx(2.5) and saved["chemistry_speedup"] == 4.0
    errors = [e["error"] for e in saved["error_per_iteration"]]
    assert [e["iteration"] for e in saved["error_per_iteration"]] == [0, 5, 10]
    assert errors[0] == 0.0 and 0 < errors[1] < errors[2] == saved["max_error"]
    text = table(result)
    assert "hit rate" in text and "90.0%" in text and "2.50x" in text


def test_variable_errors_show_what_a_zero_eq2_hides(tmp_path):
    _fake_run(tmp_path / "ref", 10.0, 8.0, 0.0, False)
    _fake_run(tmp_path / "dht", 4.0, 2.0, 1e-6, True, drifting=[0])  # Ca only
    result, _ = compare_command(tmp_path / "ref", tmp_path / "dht", None, None)
    # pH and Calcite match exactly, so the geometric mean of eq. 2 is 0 ...
    assert result["max_error"] == 0.0
    # ... while Ca is off by 1e-5 in one of six cells at iteration 10.
    last = result["error_per_iteration"][-1]["variables"]
    assert last["Ca"] == pytest.approx(1e-5 / math.sqrt(6), rel=1e-3)
    assert last["pH"] == last["Calcite"] == 0.0
    assert result["max_variable_error"] == pytest.approx(
        {"Ca": last["Ca"], "pH": 0.0, "Calcite": 0.0})
    assert "worst variable" in table(result) and "Ca" in table(result)


def test_compare_rejects_a_directory_without_summary(tmp_path):
    _fake_run(tmp_path / "ref", 10.0, 8.0, 0.0, False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(RtsimError, match="summary.json not found"):
        compare_command(tmp_path / "ref", tmp_path / "empty", None, None)


def test_compare_reports_exact_and_interpolated_hits(tmp_path):
    _fake_run(tmp_path / "ref", 10.0, 8.0, 0.0, False)
    _fake_run(tmp_path / "dht", 4.0, 2.0, 1e-6, True)
    ref = json.loads((tmp_path / "ref" / "summary.json").read_text())
    ref.update(phreeqc_s=15.0, phreeqc_cells=1200000)
    (tmp_path / "ref" / "summary.json").write_text(json.dumps(ref))
    summary = json.loads((tmp_path / "dht" / "summary.json").read_text())
    summary.update(phreeqc_s=3.0, phreeqc_cells=180000)
    summary["dht"].update(hit_rate=0.6, served_rate=0.85, interpolated_rate=0.25,
                          lookup_store_s=0.6, interpolation={"method": "linear"})
    (tmp_path / "dht" / "summary.json").write_text(json.dumps(summary))
    result, _ = compare_command(tmp_path / "ref", tmp_path / "dht", None, None)
    assert (result["hit_rate"], result["served_rate"]) == (0.6, 0.85)
    assert result["interpolated_rate"] == 0.25
    assert result["cache_cost_ratio"] == pytest.approx(0.6 / 12.0)
    text = table(result)
    assert "60.0%" in text and "interpolated" in text and "25.0%" in text
    assert "served" in text and "85.0%" in text and "0.050" in text
    assert re.search(r"PHREEQC cells +1,200,000 +180,000", text)
