# SPDX-License-Identifier: BSD-3-Clause
"""``rtsim sweep``: the rounding study of 002 sect. 4.1 (Table 1).

Runs a small scenario once without the cache, then with the cache for every
pair of aqueous ("class 1") and mineral ("class 2") digits, rounding the
log10 of the key values and the raw values, and tabulates the maximum
eq. 2 error of each run.  Every run is a separate ``mpiexec`` launch; the
launcher comes from the RTSIM_MPIEXEC environment variable (default
``mpiexec``) so that any MPI can be chosen.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from rtsim import output
from rtsim.compare import compare_runs
from rtsim.errors import RtsimError

#: Above the 1e-5 threshold of 002 sect. 3.4, an error is set in bold.
THRESHOLD = 1e-5


def launcher() -> list[str]:
    """The MPI launcher command, split like a shell would."""
    return shlex.split(os.environ.get("RTSIM_MPIEXEC", "mpiexec"))


def default_scenario() -> Path:
    """scenarios/dol2d_small.toml of the source tree this module lives in."""
    return Path(__file__).resolve().parents[2] / "scenarios" / "dol2d_small.toml"


def _digits(text: str, what: str) -> list[int]:
    """A comma-separated digit list."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise RtsimError(f"--{what} must be a comma-separated list of digits, got {text!r}") from None
    if not values or not all(1 <= v <= 15 for v in values):
        raise RtsimError(f"--{what} digits must lie between 1 and 15, got {text!r}")
    return values


def run_once(ranks: int, scenario: Path, outdir: Path, extra: list[str]) -> None:
    """One ``rtsim run`` under the launcher; raises with its stderr on failure."""
    command = launcher() + ["-n", str(ranks), sys.executable, "-m", "rtsim", "run",
                            str(scenario), str(outdir)] + extra
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RtsimError(f"{shlex.join(command)} failed with exit code {done.returncode}:\n"
                         f"{done.stderr.strip()}")


def markdown(results: list[dict[str, Any]], modes: list[str]) -> str:
    """The maximum errors shaped like 002 Table 1, one column per mode."""
    pairs = sorted({(r["aqueous"], r["mineral"]) for r in results})
    by_key = {(r["aqueous"], r["mineral"], r["mode"]): r for r in results}
    header = "| Class 1 (aqueous) | Class 2 (minerals) | " + " | ".join(
        f"{m.capitalize()} error | {m.capitalize()} hit rate" for m in modes) + " |"
    lines = [header, "|" + "---|" * (2 + 2 * len(modes))]
    for aqueous, mineral in pairs:
        cells = []
        for mode in modes:
            r = by_key.get((aqueous, mineral, mode))
            if r is None:
                cells += ["", ""]
                continue
            text = f"{r['max_error']:.2e}"
            cells += [f"**{text}**" if r["max_error"] > THRESHOLD else text,
                      f"{100 * r['hit_rate']:.1f}%"]
        lines.append(f"| {aqueous} | {mineral} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Maximum 002 eq. 2 error over all snapshots; bold: above {THRESHOLD:.0e}.")
    return "\n".join(lines) + "\n"


def sweep_command(args: argparse.Namespace) -> int:
    """Runs the sweep and writes sweep.md and sweep.json into args.outdir."""
    scenario = args.scenario or default_scenario()
    if not scenario.is_file():
        raise RtsimError(f"scenario {scenario} not found; pass one with --scenario")
    aqueous = _digits(args.aqueous, "aqueous")
    mineral = _digits(args.mineral, "mineral")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in ("log", "raw") for m in modes):
        raise RtsimError(f"--modes must list log and/or raw, got {args.modes!r}")
    extra = ["--iterations", str(args.iterations)] if args.iterations else []
    outdir: Path = args.outdir
    outdir.mkdir(parents=True, exist_ok=True)
    reference = outdir / "ref"
    print(f"reference run -> {reference}", flush=True)
    run_once(args.ranks, scenario, reference, extra)
    results = []
    for mode in modes:
        for a in aqueous:
            for m in mineral:
                run_dir = outdir / f"{mode}_{a}_{m}"
                flags = ["--dht", "--dht-digits", f"{a}:{m}"] + (["--dht-raw"] if mode == "raw" else [])
                run_once(args.ranks, scenario, run_dir, extra + flags)
                cmp_ = compare_runs(reference, run_dir)
                results.append({"mode": mode, "aqueous": a, "mineral": m,
                                "max_error": cmp_["max_error"], "hit_rate": cmp_["hit_rate"],
                                "chemistry_speedup": cmp_["chemistry_speedup"],
                                "max_variable_error": cmp_["max_variable_error"]})
                print(f"{mode} {a}:{m}  max error {cmp_['max_error']:.2e}  "
                      f"hit rate {100 * cmp_['hit_rate']:.1f}%", flush=True)
    table = markdown(results, modes)
    (outdir / "sweep.md").write_text(table)
    output.write_json(outdir / "sweep.json", {"scenario": str(scenario), "ranks": args.ranks,
                                              "results": results})
    print(table, end="")
    print(f"wrote {outdir / 'sweep.md'}, {outdir / 'sweep.json'}")
    return 0
