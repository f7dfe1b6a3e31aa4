"""rmadht.Table on every rank of the run (1 or more)."""

from __future__ import annotations

import numpy as np
import pytest

import rmadht
from rmadht import _core
from mpi4py import MPI

KS, VS = 16, 24
STAT_FIELDS = {"reads", "hits", "misses", "writes", "evictions", "removes",
               "checksum_retries", "invalidations", "round_trips", "updates",
               "write_probes"}


def key(rank: int, i: int) -> bytes:
    return f"{rank:04d}:{i:010d}".encode().ljust(KS, b"k")


def value(rank: int, i: int) -> bytes:
    return f"v{rank}-{i}".encode().ljust(VS, b".")


def table(comm: MPI.Intracomm, mode: str = "lockfree",
          node_local: bool = True) -> rmadht.Table:
    return rmadht.Table(comm, key_size=KS, value_size=VS,
                        bytes_per_rank=1 << 20, mode=mode,
                        node_local=node_local)


@pytest.mark.parametrize("mode,node_local", [
    ("lockfree", True), ("lockfree", False), ("fine", True),
    ("coarse", True)])
def test_single_items_across_ranks(comm, mode, node_local):
    with table(comm, mode, node_local) as t:
        for i in range(20):
            assert t.write(key(comm.rank, i), value(comm.rank, i)) is False
        t.flush()
        comm.Barrier()
        got = {(r, i): t.read(key(r, i))
               for r in range(comm.size) for i in range(20)}
        comm.Barrier()
        removed = t.remove(key(comm.rank, 0))
        again = t.remove(key(comm.rank, 0))
        after = t.read(key(comm.rank, 0))
        info = t.info()
    assert t.closed
    assert all(got[r, i] == value(r, i) for (r, i) in got)
    assert removed is True and again is False and after is None
    assert info["key_size"] == KS and info["value_size"] == VS
    assert info["ranks"] == comm.size and info["rank"] == comm.rank
    assert info["mode"] == mode
    # Only lock-free mode has the path, and only when every rank shares
    # one node (the tests also run between emulated hosts); spanning
    # nodes, where some node holds two ranks, it reads its node by loads.
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    one_node = comm.allreduce(node.size == comm.size, op=MPI.LAND)
    several = comm.allreduce(node.size > 1, op=MPI.LOR)
    node.Free()
    lockfree = node_local and mode == "lockfree"
    assert info["node_local"] is (lockfree and one_node)
    assert info["node_loads"] is (lockfree and not one_node and several)


def test_batches(comm):
    n = 300
    rng = np.random.default_rng(1234 + comm.rank)
    keys = rng.integers(0, 256, size=(n, KS), dtype=np.uint8)
    keys[:, 0] = comm.rank  # distinct across ranks
    vals = rng.integers(0, 256, size=(n, VS), dtype=np.uint8)
    absent = keys.copy()
    absent[:, 1] ^= 0xFF
    with table(comm) as t:
        evicted = t.write_batch(keys, vals)
        t.flush()
        comm.Barrier()
        everyone = np.concatenate(comm.allgather(keys))
        want = np.concatenate(comm.allgather(vals))
        got, found = t.read_batch(everyone)
        got_absent, found_absent = t.read_batch(absent)
        empty_v, empty_f = t.read_batch(np.empty((0, KS), np.uint8))
        # A non-contiguous view is accepted.
        got_view, found_view = t.read_batch(everyone[::2])
        st = t.stats()
    assert evicted == 0
    assert found.dtype == np.bool_ and found.shape == (n * comm.size,)
    assert got.dtype == np.uint8 and got.shape == (n * comm.size, VS)
    assert found.all() and (got == want).all()
    assert not found_absent.any() and (got_absent == 0).all()
    assert empty_v.shape == (0, VS) and empty_f.shape == (0,)
    assert found_view.all() and (got_view == want[::2]).all()
    assert st["writes"] == n
    assert st["reads"] == n * comm.size + n + (n * comm.size + 1) // 2


@pytest.mark.parametrize("first", range(3))
def test_every_gathering_reads_what_was_written(comm, first):
    # On the RMA path, each rank with its own gathering (they may differ
    # between ranks): batches of single blocks and of merged ones.
    names = ["auto", "target", "block"]
    gather = names[(first + comm.rank) % 3]
    n = 200
    rng = np.random.default_rng(77 + comm.rank)
    keys = rng.integers(0, 256, size=(n, KS), dtype=np.uint8)
    keys[:, 0] = comm.rank
    vals = rng.integers(0, 256, size=(n, VS), dtype=np.uint8)
    with rmadht.Table(comm, key_size=KS, value_size=VS, bytes_per_rank=1 << 20,
                      node_local=False, gather=gather) as t:
        t.write_batch(keys, vals)
        t.flush()
        comm.Barrier()
        everyone = np.concatenate(comm.allgather(keys))
        want = np.concatenate(comm.allgather(vals))
        got, found = t.read_batch(everyone)
        one = [t.read(bytes(k)) for k in everyone[:: 17]]
    assert found.all() and (got == want).all()
    assert one == [bytes(v) for v in want[:: 17]]


def test_write_queue_sends_at_flush(comm):
    # Queued writes: read back at once by their rank, counted once sent,
    # and read by every rank after flush.
    with rmadht.Table(comm, key_size=KS, value_size=VS, bytes_per_rank=1 << 20,
                      node_local=False, write_queue=16) as t:
        for i in range(10):
            assert t.write(key(comm.rank, i), value(comm.rank, i)) is False
        assert t.read(key(comm.rank, 3)) == value(comm.rank, 3)
        assert t.stats()["writes"] == 0
        t.flush()
        assert t.stats()["writes"] == 10
        comm.Barrier()
        for r in range(comm.size):
            for i in range(10):
                assert t.read(key(r, i)) == value(r, i)


def test_numpy_integers_are_ints(comm):
    # Sizes and options taken from numpy arrays (np.int64, np.int32) are
    # accepted wherever a Python int is.
    with rmadht.Table(comm, np.int64(KS), np.int32(VS),
                      bytes_per_rank=np.int64(1 << 20),
                      progress_us=np.int32(0), write_queue=np.int64(4)) as t:
        t.write(key(comm.rank, 1), value(comm.rank, 1))
        assert t.read(key(comm.rank, 1)) == value(comm.rank, 1)
        assert type(t.key_size) is int and t.key_size == KS


def test_stats_are_the_c_fields(comm):
    with table(comm) as t:
        t.write(key(comm.rank, 1), value(comm.rank, 1))
        t.read(key(comm.rank, 1))
        t.read(key(comm.rank, 2))
        mine = t.stats()
        total = t.stats_global()
    assert set(mine) == STAT_FIELDS and set(total) == STAT_FIELDS
    assert mine["reads"] == 2 and mine["hits"] == 1 and mine["misses"] == 1
    assert total["reads"] == 2 * comm.size
    assert total["writes"] == comm.size


def test_bad_arguments_raise(comm):
    with table(comm) as t:
        with pytest.raises(ValueError, match=f"{KS} bytes"):
            t.write(b"short", value(0, 0))
        with pytest.raises(TypeError, match="bytes"):
            t.read("a str key")
        with pytest.raises(TypeError, match=rf"\(n, {KS}\)"):
            t.read_batch(np.zeros((3, KS), dtype=np.int32))
        with pytest.raises(ValueError, match=rf"\(n, {KS}\)"):
            t.read_batch(np.zeros((3, KS + 1), dtype=np.uint8))
        with pytest.raises(ValueError, match=rf"\(n, {KS}\)"):
            t.read_batch(np.zeros(KS, dtype=np.uint8))
        with pytest.raises(ValueError, match=rf"\(3, {VS}\)"):
            t.write_batch(np.zeros((3, KS), np.uint8),
                          np.zeros((2, VS), np.uint8))
        # Nothing was written by the failed calls.
        st = t.stats()
    assert st["writes"] == 0 and st["reads"] == 0
    with pytest.raises(ValueError, match="mode"):
        rmadht.Table(comm, KS, VS, mode="fast")
    with pytest.raises(ValueError, match="key_size"):
        rmadht.Table(comm, 0, VS)
    with pytest.raises(TypeError, match="value_size"):
        rmadht.Table(comm, KS, 2.5)
    with pytest.raises(TypeError, match="node_local"):
        rmadht.Table(comm, KS, VS, node_local=1)
    with pytest.raises(ValueError, match="gather must be one of"):
        rmadht.Table(comm, KS, VS, gather="one")
    with pytest.raises(TypeError, match="gather"):
        rmadht.Table(comm, KS, VS, gather=1)
    with pytest.raises(ValueError, match="write_queue must be 0..4096"):
        rmadht.Table(comm, KS, VS, write_queue=4097)
    with pytest.raises(TypeError, match="write_queue"):
        rmadht.Table(comm, KS, VS, write_queue=True)
    with pytest.raises(TypeError, match="Intracomm"):
        rmadht.Table("world", KS, VS)
    with pytest.raises(ValueError, match="COMM_NULL"):
        rmadht.Table(MPI.COMM_NULL, KS, VS)


def test_closed_table_raises(comm):
    t = table(comm)
    t.close()
    t.close()  # twice is fine
    assert t.closed
    for call in (lambda: t.write(key(0, 0), value(0, 0)),
                 lambda: t.read(key(0, 0)),
                 lambda: t.read_batch(np.zeros((1, KS), np.uint8)),
                 t.flush, t.stats, t.info):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_c_errors_carry_code_and_message(comm):
    # Too small for one slot group: every rank gets RMADHT_ERR_SIZE.
    with pytest.raises(rmadht.Error) as err:
        rmadht.Table(comm, KS, VS, bytes_per_rank=64)
    assert err.value.code == -2
    assert err.value.message == _core.strerror(-2)
    assert _core.strerror(-2) in str(err.value)
    if comm.size > 1:
        # Sizes that differ across ranks: every rank gets MISMATCH.
        with pytest.raises(rmadht.Error) as err:
            rmadht.Table(comm, KS + comm.rank, VS, bytes_per_rank=1 << 20)
        assert err.value.code == -3


def test_dump_restore(comm, shared_path):
    with table(comm) as t:
        for i in range(50):
            t.write(key(comm.rank, i), value(comm.rank, i))
        t.flush()
        comm.Barrier()
        t.dump(shared_path)
    # Into a table of another size and mode.
    with rmadht.Table(comm, KS, VS, bytes_per_rank=2 << 20,
                      mode="fine") as t2:
        t2.restore(shared_path)
        comm.Barrier()
        got = [t2.read(key(r, i)) for r in range(comm.size)
               for i in range(50)]
    assert got == [value(r, i) for r in range(comm.size) for i in range(50)]


def test_restore_missing_file_raises_everywhere(comm, shared_path):
    with table(comm) as t:
        with pytest.raises(rmadht.Error) as err:
            t.restore(shared_path + ".missing")
    assert err.value.code == -8
