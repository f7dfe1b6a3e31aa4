# SPDX-License-Identifier: BSD-3-Clause
"""Entry point for ``python -m rtsim``."""

import sys

from rtsim.cli import main

sys.exit(main())
