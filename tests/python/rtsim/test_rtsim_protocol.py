# SPDX-License-Identifier: BSD-3-Clause
"""The MPI settings rtsim chooses for its own messages."""

import os

from rtsim.protocol import EAGER_LIMIT_BYTES, prefer_eager_messages

VARIABLE = "OMPI_MCA_btl_vader_eager_limit"


def test_the_eager_limit_fits_a_package_and_its_answer(monkeypatch):
    monkeypatch.setenv(VARIABLE, "unset")  # restored after the test
    monkeypatch.delenv(VARIABLE)
    prefer_eager_messages()
    limit = int(os.environ[VARIABLE])
    assert limit == EAGER_LIMIT_BYTES
    # 64 cells of 11 doubles (dol2d's answer) and the pickle around them.
    assert limit >= 64 * 11 * 8 + 1024


def test_a_limit_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv(VARIABLE, "8192")
    prefer_eager_messages()
    assert os.environ[VARIABLE] == "8192"
