"""rmadht.SurrogateCache with rmadht.Interpolation on every rank of the run:
smooth functions are served within the tolerance, a step, too few
neighbours and a phase disagreement are refused, concurrent appends lose
no neighbour, bad settings raise on every rank, the counters add up; a
coarse level serves what the first refuses for too few neighbours, within
its scaled tolerance."""

from __future__ import annotations

import numpy as np
import pytest

import rmadht
from mpi4py import MPI

NIN, NOUT = 3, 2
NPTS, NQ = 20, 40


def points(seed: int, n: int, lo: float = 1.0, w: float = 0.04
           ) -> np.ndarray:
    """n points of the box [lo, lo + w)^3, by default [1.00, 1.04)^3: one
    neighbour key at 2 digits (1.0 covers [0.995, 1.05)), the same on
    every rank for one seed."""
    return lo + w * np.random.default_rng(seed).random((n, NIN))


def queries(seed: int, n: int) -> np.ndarray:
    """Points in the middle of that box, inside the stored rows' cloud."""
    return points(seed, n, 1.015, 0.01)


def linear(x: np.ndarray) -> np.ndarray:
    return np.stack([1 + 2 * x[:, 0] - 3 * x[:, 1] + 0.5 * x[:, 2],
                     -x[:, 0] + 4 * x[:, 2]], axis=1)


def quadratic(x: np.ndarray) -> np.ndarray:
    return np.stack([x[:, 0] ** 2 + x[:, 1] * x[:, 2],
                     2 * x[:, 1] ** 2 - x[:, 0]], axis=1)


def step(x: np.ndarray) -> np.ndarray:
    return np.stack([np.where(x[:, 0] < 1.02, 0.0, 1.0), x[:, 1]], axis=1)


def cache(comm: MPI.Intracomm, **kw) -> rmadht.SurrogateCache:
    interp = dict(digits=2, tolerance=0.02, radius=2.0)
    interp.update(kw.pop("interp", {}))
    return rmadht.SurrogateCache(
        comm, NIN, NOUT, digits=6, log10=False, bytes_per_rank=2 << 20,
        interpolation=rmadht.Interpolation(**interp), **kw)


def store_shared(comm: MPI.Intracomm, c: rmadht.SurrogateCache,
                 x: np.ndarray, fn) -> None:
    """Every rank stores its share of x, one row per call, then all
    ranks see all rows."""
    for i in range(comm.rank, len(x), comm.size):
        c.store(x[i:i + 1], fn(x[i:i + 1]))
    c.flush()
    comm.Barrier()


def sums_agree(st: dict) -> bool:
    return st["lookups"] == (st["lookup_hits"] + st["interpolated"]
                             + st["refused_neighbours"]
                             + st["refused_outside"] + st["refused_phase"]
                             + st["refused_error"] + st["nonfinite"])


@pytest.mark.parametrize("fn,tol", [(linear, 1e-9), (quadratic, 2e-2)])
def test_smooth_functions_within_tolerance(comm, fn, tol):
    q = queries(2, NQ)
    with cache(comm, interp=dict(tolerance=tol)) as c:
        store_shared(comm, c, points(1, NPTS), fn)
        out, status = c.lookup(q)
        exact, st_hit = c.lookup(points(1, NPTS)[:3])
        st = c.stats()
        comm.Barrier()
    assert status.dtype == np.uint8 and status.shape == (NQ,)
    assert (status == rmadht.INTERPOLATED).all()
    assert np.abs(out - fn(q)).max() <= tol
    assert (st_hit == rmadht.HIT).all()
    assert np.array_equal(exact, fn(points(1, NPTS)[:3]))
    assert st["interpolated"] == NQ and sums_agree(st)


@pytest.mark.parametrize("method", ["idw", "linear"])
def test_step_is_refused_by_the_error_estimate(comm, method):
    with cache(comm, interp=dict(tolerance=0.1, method=method)) as c:
        store_shared(comm, c, points(1, NPTS), step)
        out, status = c.lookup(queries(2, NQ))
        st = c.stats()
        comm.Barrier()
    assert (status == rmadht.MISS).all() and np.isnan(out).all()
    assert st["refused_error"] == NQ and st["interpolated"] == 0
    assert sums_agree(st)


def test_too_few_neighbours_and_nan_inputs(comm):
    q = queries(2, NQ)
    q[0, 1] = np.nan
    with cache(comm) as c:
        store_shared(comm, c, points(1, 4), linear)
        _, status = c.lookup(q)
        _, far = c.lookup(np.full((1, NIN), 5.0))
        st = c.stats()
        comm.Barrier()
    assert (status == rmadht.MISS).all() and far[0] == rmadht.MISS
    assert st["refused_neighbours"] == NQ and st["nonfinite"] == 1
    assert sums_agree(st)


@pytest.mark.parametrize("method,tol", [("idw", 0.1), ("linear", 1e-3)])
def test_extrapolation_is_refused(comm, method, tol):
    """Rows of a quadratic in the lower half of the cell, a query in its
    upper corner, within the radius but outside the rows' cloud.  The
    tolerance lies between the leave-one-out error (which serves a query
    inside the cloud) and that error scaled by the corner's extrapolation
    factor; found by trying tolerances, with a factor 3 or more of margin
    on either side."""
    corner = np.full((1, NIN), 1.04)
    with cache(comm, interp=dict(method=method, tolerance=tol)) as c:
        store_shared(comm, c, points(1, NPTS, 1.0, 0.02), quadratic)
        _, outside = c.lookup(corner)
        out, inside = c.lookup(np.full((1, NIN), 1.01))
        st = c.stats()
        comm.Barrier()
    assert outside[0] == rmadht.MISS and inside[0] == rmadht.INTERPOLATED
    assert st["refused_outside"] == 1 and sums_agree(st)
    assert np.abs(out - quadratic(np.full((1, NIN), 1.01))).max() <= tol


def test_phase_disagreement_is_refused(comm):
    def fp(x: np.ndarray) -> np.ndarray:
        return np.stack([x[:, 0] + x[:, 1], (x[:, 2] > 0) * 1.0], axis=1)

    present = points(1, NPTS)
    present[:, 2] = 1.0 + 0.05 * np.arange(NPTS)
    absent = points(3, NPTS)
    absent[:, 2] = 0.0
    q = queries(2, 1)
    q[0, 2] = 1.5
    with cache(comm, interp=dict(digits=[2, 2, 0], tolerance=0.1,
                                 radius=3.0, phase=[False, False, True])) as c:
        store_shared(comm, c, present, fp)
        out1, st1 = c.lookup(q)
        comm.Barrier()
        store_shared(comm, c, absent, fp)  # replaces every present row
        _, st2 = c.lookup(q)
        st = c.stats()
        comm.Barrier()
    assert st1[0] == rmadht.INTERPOLATED
    assert np.abs(out1 - fp(q)).max() <= 0.1
    assert st2[0] == rmadht.MISS and st["refused_phase"] == 1


def test_concurrent_appends_lose_no_neighbour(comm):
    """All ranks append to one bucket; a lookup needing every one of its
    max_neighbours locations is served only if none was lost."""
    with cache(comm, interp=dict(method="idw", tolerance=1e9,
                                 min_neighbours=NPTS, max_neighbours=NPTS,
                                 radius=10.0)) as c:
        for seed in (1, 3):
            store_shared(comm, c, points(seed, NPTS), linear)
            _, status = c.lookup(queries(2, NQ))
            comm.Barrier()
            assert (status == rmadht.INTERPOLATED).all()
        total = c.stats_global()
    assert total["index_dropped"] == 0 and total["stores"] == 2 * NPTS


@pytest.mark.parametrize("kw,match", [
    (dict(tolerance=0.0), "tolerance"),
    (dict(tolerance=[0.1, np.nan]), "tolerance"),
    (dict(tolerance=[0.1]), "tolerance"),
    (dict(digits=6), "coarser"),
    (dict(digits=[2, 7, 2]), "digits"),
    (dict(digits=[2, 2]), "digits"),
    (dict(phase=True), "phase"),
    (dict(method="rbf"), "method"),
    (dict(min_neighbours=21), "min_neighbours"),
    (dict(min_neighbours=1), "min_neighbours"),
    (dict(max_neighbours=65), "max_neighbours"),
    (dict(radius=0.0), "radius"),
    (dict(radius=float("nan")), "radius"),
    (dict(coarse_digits=2), "coarse digits"),
    (dict(coarse_digits=[1, 3, 1]), "coarse digits"),
    (dict(coarse_digits=-1), "coarse digits"),
    (dict(coarse_digits=1, coarse_tolerance_scale=0.0), "coarse_tolerance_scale"),
    (dict(coarse_digits=1, coarse_tolerance_scale=1.5), "coarse_tolerance_scale"),
    (dict(coarse_digits=1, coarse_tolerance_scale=float("nan")),
     "coarse_tolerance_scale"),
])
def test_bad_settings_raise_on_every_rank(comm, kw, match):
    with pytest.raises(ValueError, match=match):
        cache(comm, interp=kw)


def test_interpolation_must_be_the_settings_type(comm):
    with pytest.raises(TypeError, match="Interpolation"):
        rmadht.SurrogateCache(comm, NIN, NOUT, interpolation=dict(digits=2))


@pytest.mark.parametrize("key,bad,good", [
    ("tolerance", 0.0, 0.1), ("method", "rbf", "linear"),
    ("radius", -1.0, 1.0), ("digits", 6, 2), ("coarse_digits", 2, 1)])
def test_bad_setting_on_one_rank_raises_everywhere(comm, key, bad, good):
    value = bad if comm.rank == comm.size - 1 else good
    with pytest.raises(ValueError):
        cache(comm, interp={key: value})


def test_settings_must_agree_across_ranks(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    with pytest.raises(rmadht.Error) as err:
        cache(comm, interp=dict(radius=1.0 + comm.rank))
    assert err.value.code == rmadht.ERR_MISMATCH
    # A coarse level on one rank only.
    with pytest.raises(rmadht.Error) as err:
        cache(comm, interp=dict(digits=3, coarse_digits=2 if comm.rank == 0 else None))
    assert err.value.code == rmadht.ERR_MISMATCH


def test_coarse_level_serves_what_the_first_lacks_neighbours_for(comm):
    """At 3 digits (cells of 0.01) the 20 rows spread over [1.00, 1.04)^3
    leave every bucket short of 5 neighbours; at 2 digits one bucket holds
    them all.  The coarse level serves every query within its tolerance
    (a tenth of the first's), counted once and apart."""
    x, q = points(1, NPTS), queries(2, NQ)
    found = {}
    for coarse in (None, 2):
        interp = dict(digits=3, tolerance=1e-8, coarse_digits=coarse,
                      coarse_tolerance_scale=0.1)
        with cache(comm, interp=interp) as c:
            store_shared(comm, c, x, linear)
            out, status = c.lookup(q)
            found[coarse] = (out, status, c.stats())
            comm.Barrier()
    _, status, st = found[None]
    assert (status == rmadht.MISS).all() and st["refused_neighbours"] == NQ
    assert st["interpolated_coarse"] == 0
    out, status, st = found[2]
    assert (status == rmadht.INTERPOLATED).all()
    assert np.abs(out - linear(q)).max() <= 1e-9
    assert st["interpolated"] == st["interpolated_coarse"] == NQ
    assert st["refused_neighbours"] == 0 and sums_agree(st)


def test_exact_cache_reports_status(comm):
    # Each row stored by one rank: a read that meets another rank's write
    # of the same key in flight may miss (a cache recomputes then).
    x = points(1, 5)
    with rmadht.SurrogateCache(comm, NIN, NOUT, bytes_per_rank=2 << 20) as c:
        store_shared(comm, c, x, linear)
        _, status = c.lookup(np.concatenate([x, queries(2, 1)]))
        st = c.stats()
    assert status.dtype == np.uint8
    assert status.tolist() == [rmadht.HIT] * 5 + [rmadht.MISS]
    assert st["interpolated"] == 0 and st["refused_neighbours"] == 0


def test_dump_restore_leaves_the_index_to_be_refilled(comm, shared_path):
    x, q = points(1, NPTS), queries(2, NQ)
    with cache(comm) as a, cache(comm) as b:
        store_shared(comm, a, x, linear)
        a.dump(shared_path)
        b.restore(shared_path)
        comm.Barrier()
        _, exact = b.lookup(x)
        _, before = b.lookup(q)
        comm.Barrier()
        store_shared(comm, b, x, linear)
        out, after = b.lookup(q)
        comm.Barrier()
    assert (exact == rmadht.HIT).all()
    assert (before == rmadht.MISS).all()
    assert (after == rmadht.INTERPOLATED).all()
    assert np.abs(out - linear(q)).max() <= 0.02


@pytest.mark.parametrize("mode", ["fine", "coarse"])
def test_locked_modes_interpolate_too(comm, mode):
    """The neighbour index takes the cache's mode; appends and lookups
    work there as in the lock-free default."""
    q = queries(2, NQ)
    with cache(comm, mode=mode, interp=dict(tolerance=1e-9)) as c:
        store_shared(comm, c, points(1, NPTS), linear)
        out, status = c.lookup(q)
        comm.Barrier()
    assert (status == rmadht.INTERPOLATED).all()
    assert np.abs(out - linear(q)).max() <= 1e-9
