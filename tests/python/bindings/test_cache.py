"""rmadht.SurrogateCache on every rank of the run (1 or more)."""

from __future__ import annotations

import numpy as np
import pytest

import rmadht
from mpi4py import MPI

NIN, NOUT = 4, 3
REQUIRED_STATS = {"reads", "hits", "misses", "writes", "evictions",
                  "checksum_retries", "invalidations", "lookups",
                  "lookup_hits", "stores", "dropped", "nonfinite",
                  "interpolated", "refused_neighbours", "refused_phase",
                  "refused_error", "index_dropped"}


def cache(comm: MPI.Intracomm, **kw) -> rmadht.SurrogateCache:
    args = dict(n_inputs=NIN, n_outputs=NOUT, digits=[5] * NIN,
                log10=[True, True, False, False], bytes_per_rank=4 << 20)
    args.update(kw)
    return rmadht.SurrogateCache(comm, **args)


def f(x: np.ndarray) -> np.ndarray:
    """A cheap stand-in for the expensive function."""
    return np.stack([x.sum(axis=1), x[:, 0] * x[:, 1], np.sin(x[:, 2])],
                    axis=1)


def rows(rank: int, n: int) -> np.ndarray:
    """n rows distinct from every other rank's, spread over decades, all
    exactly on the 5-digit grid so that small noise stays inside."""
    i = np.arange(n, dtype=np.float64)
    return np.stack([(1000 + rank * n + i) * 1e-7,
                     2 * 10.0 ** (i % 7 - 3),  # never 1: see docs
                     -(1 + i) / 8,
                     np.where(i % 3 == 0, 0.0, 1.25)], axis=1)


def test_store_then_hit_on_every_rank(comm):
    n = 200
    mine = rows(comm.rank, n)
    with cache(comm) as c:
        out0, hit0 = c.lookup(mine)
        c.store(mine, f(mine))
        c.flush()
        comm.Barrier()
        everyone = np.concatenate(comm.allgather(mine))
        noisy = everyone * (1 + 1e-11)
        out, hit, cached = c.lookup(noisy, return_inputs=True)
        st = c.stats()
    assert not hit0.any() and np.isnan(out0).all()
    assert out.shape == (n * comm.size, NOUT) and out.dtype == np.float64
    assert hit.shape == (n * comm.size,) and hit.dtype == np.uint8
    assert (hit == rmadht.HIT).all()
    assert np.array_equal(out, f(everyone))
    # The exact inputs stored, not the noisy query.
    assert np.array_equal(cached, everyone)
    assert st["lookups"] == n + n * comm.size
    assert st["lookup_hits"] == n * comm.size
    assert st["stores"] == n and st["nonfinite"] == 0


def test_rounding_decides_hits(comm):
    base = np.array([[1e-10, 3.0, 0.5, -2.0]])
    with cache(comm) as c:
        if comm.rank == 0:  # one writer: no read meets a write in flight
            c.store(base, f(base))
        c.flush()
        comm.Barrier()
        probes = np.repeat(base, 5, axis=0)
        probes[1, 0] = 1.000001e-10  # 7th digit, log input: same key
        probes[2, 0] = 1.001e-10     # 4th digit: another key
        probes[3, 2] = 0.500001      # 6th digit of a raw input: same key
        probes[4, 3] = 2.0           # sign of a raw input: another key
        _, hit = c.lookup(probes)
    assert hit.tolist() == [True, True, False, True, False]


def test_nonfinite_rows_miss_and_are_counted(comm):
    x = rows(comm.rank, 4)
    x[1, 0] = np.nan
    x[3, 2] = -np.inf
    with cache(comm) as c:
        c.store(x, f(np.nan_to_num(x)))
        out, hit = c.lookup(x)
        st = c.stats()
        total = c.stats_global()
    assert hit.tolist() == [True, False, True, False]
    assert np.isnan(out[[1, 3]]).all() and not np.isnan(out[[0, 2]]).any()
    assert st["nonfinite"] == 4 and st["stores"] == 2
    assert st["writes"] == 2 and st["reads"] == 2
    assert total["nonfinite"] == 4 * comm.size


def test_stats_keys(comm):
    with cache(comm) as c:
        st = c.stats()
        total = c.stats_global()
    assert REQUIRED_STATS <= set(st) and set(st) == set(total)
    assert all(isinstance(v, int) and v == 0 for v in st.values())


def test_bad_arguments_raise(comm):
    with cache(comm) as c:
        good = rows(comm.rank, 3)
        with pytest.raises(TypeError, match=rf"\(n, {NIN}\)"):
            c.lookup(good.astype(np.float32))
        with pytest.raises(ValueError, match=rf"\(n, {NIN}\)"):
            c.lookup(good[:, :2])
        with pytest.raises(ValueError, match=rf"\(n, {NIN}\)"):
            c.lookup(good[0])
        with pytest.raises(ValueError, match=rf"\(3, {NOUT}\)"):
            c.store(good, np.zeros((2, NOUT)))
        with pytest.raises(TypeError, match="float64"):
            c.store(good, np.zeros((3, NOUT), dtype=np.int64))
        st = c.stats()
    assert st["lookups"] == 0 and st["stores"] == 0
    with pytest.raises(ValueError, match="digits"):
        cache(comm, digits=[5, 5, 16, 5])
    with pytest.raises(ValueError, match="digits"):
        cache(comm, digits=[5, 5])
    with pytest.raises(ValueError, match="zero_below"):
        cache(comm, zero_below=-1.0)
    with pytest.raises(ValueError, match="n_inputs"):
        cache(comm, n_inputs=0)
    with pytest.raises(ValueError, match="mode"):
        cache(comm, mode="lock-free")


def test_closed_cache_raises(comm):
    c = cache(comm)
    c.close()
    c.close()
    assert c.closed
    for call in (lambda: c.lookup(rows(0, 1)),
                 lambda: c.store(rows(0, 1), np.zeros((1, NOUT))),
                 c.stats, c.flush, c.info):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_config_must_agree_across_ranks(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    with pytest.raises(rmadht.Error) as err:
        cache(comm, digits=[5, 5, 5, 5 + (comm.rank == 0)])
    assert err.value.code == -3 and "differ" in err.value.message


def test_scalar_defaults_and_modes(comm):
    x = rows(comm.rank, 50)
    with rmadht.SurrogateCache(comm, NIN, NOUT, bytes_per_rank=2 << 20,
                               mode="coarse") as c:
        c.store(x, f(x))
        out, hit = c.lookup(x)
        info = c.info()
    assert hit.all() and np.array_equal(out, f(x))
    assert info["mode"] == "coarse" and info["key_size"] == 10 * NIN
    assert info["value_size"] == 8 * (NIN + NOUT)


def test_dump_restore(comm, shared_path):
    x = rows(comm.rank, 40)
    with cache(comm) as c:
        c.store(x, f(x))
        c.flush()
        comm.Barrier()
        c.dump(shared_path)
    with cache(comm, bytes_per_rank=8 << 20) as c2:
        c2.restore(shared_path)
        comm.Barrier()
        everyone = np.concatenate(comm.allgather(x))
        out, hit = c2.lookup(everyone)
    assert hit.all() and np.array_equal(out, f(everyone))
