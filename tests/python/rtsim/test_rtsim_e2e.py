# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end runs of dol2d_small under mpiexec, with and without the cache.

The launcher is RTSIM_MPIEXEC (default mpiexec); the Open MPI variables
needed to run as root on an oversubscribed machine are passed along.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rtsim.output import list_snapshots, load_snapshot

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
SMALL = SCENARIOS / "dol2d_small.toml"
PNG = b"\x89PNG\r\n\x1a\n"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none")
SUMMARY_KEYS = {"scenario", "ranks", "workers", "cells", "iterations", "work_package_size",
                "runtime_s", "chemistry_s", "transport_s", "dht"}


def rtsim(ranks, *args, env=ENV, timeout=180):
    """Runs rtsim under the MPI launcher; returns the CompletedProcess."""
    command = shlex.split(os.environ.get("RTSIM_MPIEXEC", "mpiexec"))
    command += ["-n", str(ranks), sys.executable, "-m", "rtsim", *map(str, args)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


def run_ok(ranks, *args):
    done = rtsim(ranks, *args)
    assert done.returncode == 0, done.stderr
    return done


def rmadht_missing():
    try:
        import rmadht  # noqa: F401
    except ImportError as exc:
        return f"the rmadht bindings cannot be imported ({exc})"
    return None


def interpolation_missing():
    missing = rmadht_missing()
    if missing:
        return missing
    import rmadht

    if not hasattr(rmadht, "Interpolation"):
        return "these rmadht bindings have no Interpolation"
    return None


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Reference runs of dol2d_small on 2 and on 3 ranks."""
    base = tmp_path_factory.mktemp("ref")
    runs = {}
    for ranks in (2, 3):
        out = base / f"n{ranks}"
        run_ok(ranks, "run", SMALL, out, "--work-package-size", 16)
        runs[ranks] = out
    return runs


def check_outputs(out, ranks, dht):
    summary = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= set(summary)
    assert (summary["ranks"], summary["workers"], summary["cells"]) == (ranks, ranks - 1, 144)
    assert summary["iterations"] == 20 and summary["work_package_size"] == 16
    assert summary["chemistry_s"] > 0 and summary["runtime_s"] >= summary["chemistry_s"]
    # The workers' wall clock: computing, waiting and answering, within
    # the run's on each of them (give or take a second at the start: the
    # workers begin to wait just before the master's clock starts).
    spent = [summary[f"worker_{k}_s"] for k in ("compute", "receive", "send")]
    assert spent[0] > 0 and all(t >= 0 for t in spent)
    assert sum(spent) <= summary["workers"] * (summary["wall_s"] + 1)
    snapshots = list_snapshots(out)
    assert sorted(snapshots) == list(range(21))
    names, maps = load_snapshot(snapshots[20])
    assert names[:3] == ["H", "O", "charge"] and "pH" in names
    assert maps.shape == (len(names), 12, 12) and np.all(np.isfinite(maps))
    for png in ("maps.png", "timeline.png"):
        assert (out / png).read_bytes()[:8] == PNG
    assert (summary["dht"] is not None) == dht
    return summary, names, maps


@pytest.mark.parametrize("ranks", [2, 3])
def test_reference_run_writes_every_output(reference, ranks):
    summary, names, maps = check_outputs(reference[ranks], ranks, dht=False)
    assert summary["phreeqc_cells"] == 144 * 20
    # The front has crossed the grid: calcite is gone at the inlet, and the
    # outlet sees the injected chloride.
    assert maps[names.index("Calcite")][0, 0] < 1e-10
    assert maps[names.index("Cl")][11, 11] > 1e-3
    assert maps[names.index("Calcite")].max() <= 2.07e-4


def test_rank_count_does_not_change_the_reference(reference):
    _, a = load_snapshot(list_snapshots(reference[2])[20])
    _, b = load_snapshot(list_snapshots(reference[3])[20])
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-18)


@pytest.mark.parametrize("ranks", [2, 3])
def test_cached_run_matches_the_reference(reference, tmp_path, ranks):
    missing = rmadht_missing()
    if missing:
        pytest.skip(missing)
    out = tmp_path / "dht"
    run_ok(ranks, "run", SMALL, out, "--work-package-size", 16, "--dht", "--dht-size", 8,
           "--dht-snaps", 1)
    summary, _, _ = check_outputs(out, ranks, dht=True)
    dht = summary["dht"]
    assert dht["reads"] == 144 * 20 and 0 < dht["hits"] < dht["reads"]
    assert dht["hit_rate"] == pytest.approx(dht["hits"] / dht["reads"])
    assert summary["phreeqc_cells"] == dht["reads"] - dht["hits"]
    assert (out / "dht.snap").is_file()
    done = subprocess.run([sys.executable, "-m", "rtsim", "compare", reference[ranks], out],
                          env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "max eq. 2 error" in done.stdout
    result = json.loads((out / "compare.json").read_text())
    assert result["max_error"] <= 1e-5
    assert (out / "compare.png").read_bytes()[:8] == PNG
    # The replay counts every key seen before as a hit and skips nothing,
    # so the run cannot beat it (beyond the slack of its slightly different
    # states).
    done = subprocess.run([sys.executable, "-m", "rtsim", "reuse", reference[ranks]],
                          env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    best = float(re.search(r"best possible hit rate ([0-9.]+)%", done.stdout).group(1)) / 100
    assert dht["hit_rate"] - 0.01 <= best < 1


def test_reuse_rejects_runs_it_cannot_replay(reference, tmp_path):
    gappy = tmp_path / "gappy"
    shutil.copytree(reference[2], gappy)
    (gappy / "fields_00007.npz").unlink()
    cases = [(gappy, [], "needs a snapshot of every iteration from 0 on"),
             (reference[2], ["--scenario", SCENARIOS / "dol2d.toml"],
              "on a 12x12 grid, not the state variables of scenario dol2d on 50x50"),
             (tmp_path / "nothing", [], "summary.json not found")]
    for ref_dir, extra, message in cases:
        done = subprocess.run([sys.executable, "-m", "rtsim", "reuse", ref_dir, *extra],
                              env=ENV, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert message in done.stderr
    assert sorted(list_snapshots(reference[2])) == list(range(21))  # nothing touched


def test_bad_scenario_fails_cleanly_on_every_rank(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.read_text().replace("porosity = 0.25", "porosity = 1.5"))
    done = rtsim(3, "run", bad, tmp_path / "out", timeout=60)
    assert done.returncode != 0
    assert done.stderr.count("rtsim: error:") == 1
    assert "'porosity' must be <= 1.0" in done.stderr
    assert not (tmp_path / "out").exists()


def test_phreeqc_failure_during_the_run_stops_every_rank(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.read_text().replace('name = "Dolomite"', 'name = "Dolomitt"'))
    done = rtsim(3, "run", bad, tmp_path / "out", timeout=90)
    assert done.returncode != 0
    assert "Dolomitt" in done.stderr and "rtsim: error:" in done.stderr
    assert not (tmp_path / "out" / "summary.json").exists()


def test_missing_bindings_give_a_clear_error(tmp_path):
    fake = tmp_path / "shadow"
    fake.mkdir()
    (fake / "rmadht.py").write_text("raise ImportError('no _core extension')\n")
    env = dict(ENV, PYTHONPATH=os.pathsep.join([str(fake)] + sys.path))
    done = rtsim(2, "run", SMALL, tmp_path / "out", "--dht", env=env, timeout=60)
    assert done.returncode != 0
    assert "--dht needs the rmadht Python bindings" in done.stderr


def test_sweep_writes_a_table_and_every_run(tmp_path):
    missing = rmadht_missing()
    if missing:
        pytest.skip(missing)
    done = subprocess.run([sys.executable, "-m", "rtsim", "sweep", tmp_path, "--scenario", SMALL,
                           "--np", "2", "--aqueous", "5", "--mineral", "2", "--modes", "log,raw",
                           "--iterations", "4"],
                          env=ENV, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "sweep.json").read_text())["results"]
    assert [(r["mode"], r["aqueous"], r["mineral"]) for r in results] == [("log", 5, 2),
                                                                       ("raw", 5, 2)]
    for r in results:
        assert 0 < r["hit_rate"] < 1 and r["max_error"] < 1e-5
        assert set(r["max_variable_error"]) == {"C", "Ca", "Mg", "pH", "Calcite", "Dolomite"}
    table = (tmp_path / "sweep.md").read_text()
    assert "| Class 1 (aqueous) | Class 2 (minerals) | Log error |" in table
    assert re.search(r"\| 5 \| 2 \| [0-9.e+-]+ \| [0-9.]+% \| [0-9.e+-]+ \| [0-9.]+% \|", table)
    assert (tmp_path / "sweep.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize("coarse", [(), ("--interp-coarse", "1:0", "--interp-coarse-scale", "0.1")])
def test_interpolating_run_serves_more_than_exact_hits(reference, tmp_path, coarse):
    missing = interpolation_missing()
    if missing:
        pytest.skip(missing)
    out = tmp_path / "interp"
    run_ok(3, "run", SMALL, out, "--work-package-size", 16, "--dht", "--dht-size", 8,
           "--interpolate", *coarse)
    summary, _, _ = check_outputs(out, 3, dht=True)
    dht = summary["dht"]
    reads = 144 * 20
    assert dht["reads"] == reads and dht["interpolated"] > 0
    assert dht["hits"] + dht["interpolated"] + summary["phreeqc_cells"] == reads
    assert dht["hit_rate"] == pytest.approx(dht["hits"] / reads)
    assert dht["served_rate"] == pytest.approx((dht["hits"] + dht["interpolated"]) / reads)
    assert dht["served_rate"] > dht["hit_rate"]
    # Only PHREEQC's rows are stored (less the phase changes), never the
    # interpolated ones.
    assert dht["stored"] + dht["rejected_phase_changes"] == summary["phreeqc_cells"]
    interp = dht["interpolation"]
    assert interp["interpolated"] == dht["interpolated"]
    assert interp["method"] in ("linear", "idw") and interp["digits"]
    counters = interp["cache_counters"]
    if coarse:
        assert interp["coarse_digits"] == [1] * 6 + [0, 0]
        assert interp["coarse_tolerance_scale"] == 0.1
        # A level this coarse serves some of the rows the first refused.
        assert 0 < counters["interpolated_coarse"] <= counters["interpolated"]
    else:
        assert interp["coarse_digits"] is None and counters["interpolated_coarse"] == 0
    timeline = summary["timeline"]
    assert sum(t["interpolated"] for t in timeline) == dht["interpolated"]
    done = subprocess.run([sys.executable, "-m", "rtsim", "compare", reference[3], out],
                          env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "interpolated" in done.stdout and "served" in done.stdout
    result = json.loads((out / "compare.json").read_text())
    assert result["served_rate"] == pytest.approx(dht["served_rate"])
    assert result["hit_rate"] == pytest.approx(dht["hit_rate"])
    assert result["interpolation"]["interpolated"] == dht["interpolated"]
    assert np.isfinite(result["chemistry_speedup"]) and result["chemistry_speedup"] > 0
    assert np.isfinite(result["max_error"]) and result["max_error"] <= 1e-4
    worst = result["max_variable_error"]
    assert set(worst) == {"C", "Ca", "Mg", "pH", "Calcite", "Dolomite"}
    assert all(np.isfinite(v) and v <= 1e-3 for v in worst.values())


def test_interpolate_needs_the_cache(tmp_path):
    done = rtsim(2, "run", SMALL, tmp_path / "out", "--interpolate", timeout=60)
    assert done.returncode == 2 and "--interpolate needs --dht" in done.stderr
    done = rtsim(2, "run", SMALL, tmp_path / "out", "--dht", "--interpolate",
                 "--interp-digits", "6:1", timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("rtsim: error:") == 1 and "must not be finer" in done.stderr


def test_sweep_with_interpolation_draws_the_front(tmp_path):
    missing = interpolation_missing()
    if missing:
        pytest.skip(missing)
    done = subprocess.run([sys.executable, "-m", "rtsim", "sweep", tmp_path, "--scenario", SMALL,
                           "--np", "3", "--modes", "none", "--interp-digits", "3:1",
                           "--interp-tolerances", "1e-8", "--iterations", "6"],
                          env=ENV, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "sweep.json").read_text())["results"]
    assert [r["kind"] for r in results] == ["exact", "interpolating"]
    baseline, interp = results
    assert (interp["method"], interp["interp_aqueous"], interp["interp_mineral"],
            interp["tolerance"]) == ("linear", 3, 1, 1e-8)
    assert interp["served_rate"] >= interp["hit_rate"] > 0
    assert baseline["served_rate"] == baseline["hit_rate"]
    for r in results:
        assert np.isfinite(r["max_error"]) and r["chemistry_speedup"] > 0
    table = (tmp_path / "sweep.md").read_text()
    assert "| linear | 3:1 | 1e-08 |" in table and "| exact only |" in table
    assert (tmp_path / "sweep.png").read_bytes()[:8] == PNG
