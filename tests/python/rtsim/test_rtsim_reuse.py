# SPDX-License-Identifier: BSD-3-Clause
"""rtsim reuse's batched count against a cache visited one row at a time."""

import numpy as np
import pytest

from rtsim.errors import RtsimError
from rtsim.reuse import count_repeats

rmadht = pytest.importorskip("rmadht")
MPI = pytest.importorskip("mpi4py.MPI")


def new_cache():
    return rmadht.SurrogateCache(MPI.COMM_SELF, n_inputs=3, n_outputs=1, digits=[4, 4, 2],
                                 log10=[True, True, False], zero_below=1e-10,
                                 bytes_per_rank=8 << 20)


def one_at_a_time(cache, keys):
    hits = 0
    for row in keys:
        _, hit = cache.lookup(row[None, :])
        if hit[0]:
            hits += 1
        else:
            cache.store(row[None, :], np.zeros((1, 1)))
    return hits


def test_batched_count_equals_a_lookup_per_row():
    rng = np.random.default_rng(7)
    distinct = rng.uniform(1e-6, 1e-3, size=(300, 3))
    batched, reference = new_cache(), new_cache()
    try:
        totals = []
        for _ in range(4):
            # Exact repeats, values a rounding step apart (same key or a
            # neighbour), zeros below zero_below, and keys of earlier calls.
            rows = distinct[rng.integers(0, len(distinct), size=500)]
            rows = rows * (1 + rng.choice([0.0, 1e-6, 1e-3], size=rows.shape))
            rows[rng.random(500) < 0.1, 0] = 1e-12
            expected = one_at_a_time(reference, rows)
            assert count_repeats(batched, rows) == expected
            totals.append(expected)
        # The draw repeats itself within and across calls, but not always.
        assert 0 < totals[0] < 500 and totals[-1] > totals[0]
    finally:
        for cache in (batched, reference):
            cache.close()


def test_states_that_cannot_be_stored_are_reported():
    cache = new_cache()
    try:
        rows = np.array([[1e-3, 1e-3, 1.0], [np.nan, 1e-3, 1.0]])
        with pytest.raises(RtsimError, match="1 of the replayed states cannot be stored"):
            count_repeats(cache, rows)
    finally:
        cache.close()
