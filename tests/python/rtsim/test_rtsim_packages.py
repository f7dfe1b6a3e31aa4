# SPDX-License-Identifier: BSD-3-Clause
"""Work-package construction and first-come first-served dispatch."""

from collections import deque

import numpy as np
import pytest

from rtsim.master import WorkerFailure, dispatch, stop_workers
from rtsim.packages import make_packages
from rtsim.protocol import TAG_CONTROL, TAG_FAILURE, TAG_RESULT, TAG_STATS, TAG_WORK
from rtsim.worker import PackageResult


@pytest.mark.parametrize("cells, size", [(2500, 64), (144, 16), (10, 3), (7, 100)])
def test_round_robin_packages_cover_every_cell_once(cells, size):
    packages = make_packages(cells, size)
    joined = np.sort(np.concatenate(packages))
    np.testing.assert_array_equal(joined, np.arange(cells))
    assert max(len(p) for p in packages) <= size
    assert len(packages) == -(-cells // size)
    # Round robin: neighbours in a package are one package count apart.
    for p in packages:
        assert np.all(np.diff(p) == len(packages))


def test_round_robin_spreads_a_contiguous_front():
    packages = make_packages(2500, 50)
    front = set(range(1000, 1050))  # 50 neighbouring cells
    counts = [len(front.intersection(p.tolist())) for p in packages]
    assert max(counts) == 1


class FakeChannel:
    """Workers that answer in a scripted order; the result doubles the input."""

    def __init__(self, order="lifo", fail_package=None):
        self.sent = []
        self.pending = deque()
        self.order = order
        self.fail_package = fail_package

    def send(self, dest, tag, payload):
        self.sent.append((dest, tag, payload))
        if tag == TAG_WORK:
            self.pending.append((dest, payload))
        elif tag == TAG_CONTROL:
            self.pending.append((dest, ("stats", dest)))

    def close(self):
        self.closed = True

    def receive(self, source=None):
        dest, payload = self.pending.pop() if self.order == "lifo" else self.pending.popleft()
        if payload[0] == "stats":
            return dest, TAG_STATS, {"worker": dest}
        package, states = payload
        if package == self.fail_package:
            return dest, TAG_FAILURE, (package, "PHREEQC failed reacting a package")
        results = np.hstack([2 * states, -np.ones((len(states), 3))])
        return dest, TAG_RESULT, PackageResult(package=package, results=results,
                                               lookups=len(states), hits=1, interpolated=0,
                                               phreeqc_cells=len(states) - 1, phreeqc_s=0.0)


@pytest.mark.parametrize("order", ["lifo", "fifo"])
def test_dispatch_assembles_every_package_in_place(order):
    cells, n_state = 103, 4
    states = np.arange(cells * n_state, dtype=float).reshape(cells, n_state)
    packages = make_packages(cells, 10)
    results = np.full((cells, n_state + 3), np.nan)
    channel = FakeChannel(order)
    tally = dispatch(channel, [1, 2, 3], packages, states, results)
    np.testing.assert_array_equal(results[:, :n_state], 2 * states)
    np.testing.assert_array_equal(results[:, n_state:], -1.0)
    work = [(d, p[0]) for d, t, p in channel.sent if t == TAG_WORK]
    assert sorted(p for _, p in work) == list(range(len(packages)))
    assert {d for d, _ in work} == {1, 2, 3}
    assert tally.lookups == cells and tally.hits == len(packages)
    assert tally.phreeqc_cells == cells - len(packages)


def test_a_worker_holds_two_packages_at_most_and_one_near_the_end():
    channel = FakeChannel("fifo")
    packages = make_packages(40, 4)
    workers = [1, 2]
    held_at_send = []
    original = channel.send

    def watch(dest, tag, payload):
        held = sum(1 for d, _ in channel.pending if d == dest)
        unsent = len(packages) - sum(1 for _, t, _ in channel.sent if t == TAG_WORK)
        assert held < 2, "a third package"
        assert held == 0 or unsent >= 2 * len(workers), "a second package near the end"
        held_at_send.append(held)
        original(dest, tag, payload)

    channel.send = watch
    dispatch(channel, workers, packages, np.zeros((40, 2)), np.zeros((40, 5)))
    assert len(held_at_send) == len(packages)
    # The next package waits at the worker while it computes: most sends
    # are second packages.
    assert held_at_send.count(1) >= len(packages) // 2


@pytest.mark.parametrize("order", ["lifo", "fifo"])
def test_a_failure_stops_dispatch_and_is_raised(order):
    channel = FakeChannel(order, fail_package=1)
    packages = make_packages(100, 10)
    with pytest.raises(WorkerFailure, match="worker rank 2: PHREEQC failed"):
        dispatch(channel, [1, 2], packages, np.zeros((100, 2)), np.zeros((100, 5)))
    sent = [p[0] for _, t, p in channel.sent if t == TAG_WORK]
    assert len(sent) < len(packages)  # no new work after the failure
    assert not channel.pending  # outstanding packages were collected


def test_stop_workers_collects_every_worker():
    channel = FakeChannel("fifo")
    stats = stop_workers(channel, [1, 2, 3], abort=False)
    assert stats == [{"worker": 1}, {"worker": 2}, {"worker": 3}]
    assert [p for _, t, p in channel.sent] == [("stop", False)] * 3
    assert channel.closed
