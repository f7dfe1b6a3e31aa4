"""The README's Python example, run as printed on 2 ranks, so that the
example a newcomer copies keeps working.  The launcher is RTSIM_MPIEXEC
(default mpiexec), as for the rtsim end-to-end tests."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_cache_example_runs_and_hits(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    example = [b for b in blocks if "def slow" in b]
    assert len(example) == 1, "the README should hold one cache example"
    script = tmp_path / "cached.py"
    script.write_text(example[0])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    launcher = shlex.split(os.environ.get("RTSIM_MPIEXEC", "mpiexec"))
    done = subprocess.run(launcher + ["-n", "2", sys.executable, str(script)],
                          capture_output=True, text=True, env=env,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rates = [int(m) for m in re.findall(r"hit rate (\d+)%", done.stdout)]
    assert len(rates) == 2, done.stdout
    # 50 distinct points asked 1280 times per rank: most asks must hit.
    assert min(rates) >= 80, done.stdout
