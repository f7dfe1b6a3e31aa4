"""The Python face of the public boundary: error names beside codes, the
run-time version, keyword-only options, the type stub, and bad arguments
on one rank only raising on every rank instead of hanging."""

from __future__ import annotations

import inspect
import os
import re

import numpy as np
import pytest

import rmadht
from rmadht import _core
from mpi4py import MPI

KS, VS = 16, 24
CODES = {"OK": 0, "NOT_FOUND": 1, "EVICTED": 2, "ERR_ARG": -1,
         "ERR_SIZE": -2, "ERR_MISMATCH": -3, "ERR_NOMEM": -4, "ERR_MPI": -5,
         "ERR_REMOTE": -6, "ERR_CONTENDED": -7, "ERR_FILE": -8,
         "ERR_FORMAT": -9, "ERR_IO": -10, "ERR_LOCATION": -11}


def test_codes_by_name():
    for name, code in CODES.items():
        assert getattr(rmadht, name) == code, name
        assert name in rmadht.__all__
        assert _core.errname(code) == "RMADHT_" + name
    assert _core.errname(12345) == "RMADHT_UNKNOWN"


def test_version_is_the_c_library_s():
    assert rmadht.__version__ == _core.version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", rmadht.__version__)


def test_error_carries_code_and_name(comm):
    with pytest.raises(rmadht.Error) as err:
        rmadht.Table(comm, KS, VS, bytes_per_rank=64)  # below one group
    assert err.value.code == rmadht.ERR_SIZE
    assert err.value.name == "ERR_SIZE"
    assert "ERR_SIZE" in str(err.value)
    # Not an MPI failure: no detail, and the message ends with the code.
    assert err.value.detail == ""
    assert str(err.value).endswith("rmadht error -2)")
    # Built from Python with the code alone, the name is looked up; a
    # detail, as rmadht_error_detail gives one, ends the message.
    assert rmadht.Error(rmadht.ERR_FILE, "m").name == "ERR_FILE"
    e = rmadht.Error(rmadht.ERR_MPI, "m", None, "MPI_Win_allocate failed: x")
    assert e.detail == "MPI_Win_allocate failed: x"
    assert str(e).endswith("rmadht error -5): MPI_Win_allocate failed: x")


@pytest.mark.parametrize("cls, required", [
    (rmadht.Table, ["comm", "key_size", "value_size"]),
    (rmadht.SurrogateCache, ["comm", "n_inputs", "n_outputs"]),
])
def test_options_are_keyword_only(cls, required):
    params = list(inspect.signature(cls).parameters.values())
    positional = [p.name for p in params
                  if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional == required
    assert all(p.kind is p.KEYWORD_ONLY for p in params[len(required):])


def test_options_refused_by_position(comm):
    with pytest.raises(TypeError):
        rmadht.Table(comm, KS, VS, 1 << 20)
    with pytest.raises(TypeError):
        rmadht.SurrogateCache(comm, 2, 1, 5)


def test_type_stub_is_installed():
    here = os.path.dirname(rmadht.__file__)
    assert os.path.isfile(os.path.join(here, "_core.pyi"))
    assert os.path.isfile(os.path.join(here, "py.typed"))


def _raised_everywhere(comm, make):
    """The exception type each rank raised, or None, gathered."""
    try:
        obj = make()
    except Exception as exc:  # noqa: BLE001 - gathered and compared below
        return comm.allgather(type(exc).__name__)
    obj.close()
    return comm.allgather(None)


def test_bad_argument_on_last_rank_raises_everywhere(comm):
    last = comm.rank == comm.size - 1
    seen = _raised_everywhere(comm, lambda: rmadht.Table(
        comm, KS, 0 if last else VS, bytes_per_rank=1 << 20))
    assert seen == ["ValueError"] * comm.size
    seen = _raised_everywhere(comm, lambda: rmadht.Table(
        comm, KS, VS, bytes_per_rank=1 << 20,
        mode="fast" if last else "lockfree"))
    assert seen == ["ValueError"] * comm.size
    seen = _raised_everywhere(comm, lambda: rmadht.SurrogateCache(
        comm, 2, 1, digits=[5, 99] if last else 5, bytes_per_rank=1 << 20))
    assert seen == ["ValueError"] * comm.size
    seen = _raised_everywhere(comm, lambda: rmadht.SurrogateCache(
        comm, 2, 1, log10=[True] if last else True, bytes_per_rank=1 << 20))
    assert seen == ["ValueError"] * comm.size


def test_bad_path_on_last_rank_raises_everywhere(comm, shared_path):
    last = comm.rank == comm.size - 1
    with rmadht.Table(comm, KS, VS, bytes_per_rank=1 << 20) as t:
        for call in (t.dump, t.restore):
            seen = _raised_everywhere(
                comm, lambda: call(None if last else shared_path))
            assert seen == ["TypeError"] * comm.size
            with pytest.raises(rmadht.Error) as err:
                call("" if last else shared_path)
            assert err.value.code == rmadht.ERR_ARG
        assert not os.path.exists(shared_path)
        t.dump(shared_path)
        t.restore(shared_path)
