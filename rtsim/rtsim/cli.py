# SPDX-License-Identifier: BSD-3-Clause
"""Command line: ``rtsim run``, ``rtsim compare`` and ``rtsim sweep``."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path
from typing import Sequence

from rtsim import __version__
from rtsim.errors import RtsimError
from rtsim.scenario import (AUX_NAMES, INTERPOLATION_METHODS, MAX_NEIGHBOURS, Scenario,
                            load_scenario)


def _pair_of_digits(text: str, lowest: int, what: str) -> tuple[int, int]:
    """Parses AQUEOUS:MINERAL digits, each from lowest to 15."""
    try:
        aqueous, mineral = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected AQUEOUS:MINERAL digits, got {text!r}") from None
    if not (lowest <= aqueous <= 15 and lowest <= mineral <= 15):
        raise argparse.ArgumentTypeError(f"{what} must lie between {lowest} and 15")
    return aqueous, mineral


def _digits_pair(text: str) -> tuple[int, int]:
    """Parses AQUEOUS:MINERAL digits of the exact key."""
    return _pair_of_digits(text, 1, "digits")


def _positive(text: str) -> int:
    """Parses a positive integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _signif(text: str) -> int:
    """Parses a digit count of 1 to 15."""
    value = _positive(text)
    if value > 15:
        raise argparse.ArgumentTypeError("at most 15 significant digits")
    return value


def _add_rounding(parser: argparse.ArgumentParser) -> None:
    """The options that override the scenario's cache key rounding."""
    parser.add_argument("--dht-signif", type=_signif, metavar="N",
                        help="significant digits of every key variable (overrides the scenario)")
    parser.add_argument("--dht-digits", type=_digits_pair, metavar="AQ:MIN",
                        help="digits of aqueous and of mineral key variables")
    parser.add_argument("--dht-raw", action="store_true",
                        help="round the raw key values instead of their log10")


def _neighbour_digits(text: str) -> tuple[int, int]:
    """Parses AQUEOUS:MINERAL neighbour-key digits (0 leaves a class out)."""
    return _pair_of_digits(text, 0, "neighbour digits")


def _method(text: str) -> str:
    """Parses an interpolation method."""
    if text not in INTERPOLATION_METHODS:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(INTERPOLATION_METHODS)}, got {text!r}")
    return text


def _tolerance(text: str) -> float:
    """Parses a positive finite tolerance."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"a tolerance must be finite and > 0, got {text!r}")
    return value


def _radius(text: str) -> float:
    """Parses a positive finite radius."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"the radius must be finite and > 0, got {text!r}")
    return value


def _neighbours(text: str) -> tuple[int, int]:
    """Parses MIN:MAX neighbour counts."""
    try:
        low, high = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN:MAX neighbours, got {text!r}") from None
    if not 2 <= low <= high <= MAX_NEIGHBOURS:
        raise argparse.ArgumentTypeError(
            f"expected 2 <= MIN <= MAX <= {MAX_NEIGHBOURS}, got {text!r}")
    return low, high


def _coarse_digits(text: str) -> tuple[int, int] | tuple[None, None]:
    """Parses AQ:MIN coarse neighbour digits, or none (no coarse level)."""
    return (None, None) if text == "none" else _neighbour_digits(text)


def _coarse_scale(text: str) -> float:
    """Parses a tolerance factor in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a factor in (0, 1], got {text!r}")
    return value


def _add_interpolation(parser: argparse.ArgumentParser) -> None:
    """The options that switch on and override [dht.interpolation]."""
    parser.add_argument("--interpolate", action=argparse.BooleanOptionalAction, default=None,
                        help="serve misses by interpolating neighbouring entries (needs "
                             "--dht); --no-interpolate: exact hits only, whatever the "
                             "scenario says")
    parser.add_argument("--interp-method", type=_method, metavar="M",
                        help="linear or idw (overrides the scenario)")
    parser.add_argument("--interp-digits", type=_neighbour_digits, metavar="AQ:MIN",
                        help="neighbour-key digits of aqueous and of mineral key variables "
                             "(0 leaves the class out of the neighbour key)")
    parser.add_argument("--interp-tolerance", type=_tolerance, metavar="T",
                        help="tolerance of the state increments, mol/kgw; every other "
                             "tolerance is scaled by the same factor")
    parser.add_argument("--interp-neighbours", type=_neighbours, metavar="MIN:MAX",
                        help="fewest and most neighbours of an interpolation")
    parser.add_argument("--interp-radius", type=_radius, metavar="R",
                        help="neighbour search radius")
    parser.add_argument("--interp-coarse", type=_coarse_digits, metavar="AQ:MIN|none",
                        help="digits of a second, coarser neighbour key for the rows the "
                             "first refuses for too few neighbours; none: no second level")
    parser.add_argument("--interp-coarse-scale", type=_coarse_scale, metavar="F",
                        help="the coarse level's tolerances are the first's times F, "
                             "0 < F <= 1")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of all subcommands."""
    parser = argparse.ArgumentParser(
        prog="rtsim", description="Reactive transport with PHREEQC chemistry and the rmadht cache.")
    parser.add_argument("--version", action="version", version=f"rtsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a scenario (under mpiexec -n 2 or more)")
    run.add_argument("scenario", type=Path, help="scenario TOML file")
    run.add_argument("outdir", type=Path, help="output directory (created if missing)")
    run.add_argument("--dht", action="store_true", help="cache chemistry results in rmadht")
    run.add_argument("--dht-size", type=_positive, default=64, metavar="MB",
                     help="cache memory per worker in MiB (default 64)")
    _add_rounding(run)
    _add_interpolation(run)
    run.add_argument("--dht-snaps", type=int, choices=(0, 1, 2), default=0,
                     help="cache snapshots: 0 none, 1 at the end, 2 after every iteration")
    run.add_argument("--dht-file", metavar="F", help="start from this cache snapshot")
    run.add_argument("--work-package-size", type=_positive, default=64, metavar="N",
                     help="cells per work package (default 64)")
    run.add_argument("--iterations", type=_positive, metavar="N",
                     help="run N iterations instead of the scenario's")
    run.add_argument("--progress", action="store_true", help="report progress on stderr")
    # Under mpiexec the ranks never write to a terminal themselves: whoever
    # starts mpiexec knows whether its stderr is one (tools/demo.sh).
    run.add_argument("--progress-style", choices=("auto", "bar", "lines"), default="auto",
                     help="a live bar (bar), a line at every tenth of the run (lines), or "
                          "bar on a terminal and lines elsewhere (auto, the default; "
                          "under mpiexec always lines)")

    cmp_ = sub.add_parser("compare", help="compare a cached run with its reference (eq. 2)")
    cmp_.add_argument("ref_dir", type=Path)
    cmp_.add_argument("dht_dir", type=Path)
    cmp_.add_argument("--out", type=Path, help="where compare.json/.png go (default DHT_DIR)")
    cmp_.add_argument("--variables", help="comma-separated variables (default: the scenario's)")

    sweep = sub.add_parser(
        "sweep", help="rounding study shaped like Table 1 of De Lucia et al. 2021")
    sweep.add_argument("outdir", type=Path)
    sweep.add_argument("--scenario", type=Path, default=None,
                       help="scenario (default scenarios/dol2d_small.toml)")
    sweep.add_argument("--np", type=_positive, default=3, dest="ranks",
                       help="MPI ranks per run (default 3)")
    sweep.add_argument("--aqueous", default="5,6,7,8", help="aqueous digits (default 5,6,7,8)")
    sweep.add_argument("--mineral", default="4,5,6,7", help="mineral digits (default 4,5,6,7)")
    sweep.add_argument("--modes", default="log,raw",
                       help="log, raw, log,raw or none (default log,raw)")
    sweep.add_argument("--iterations", type=_positive, metavar="N")
    sweep.add_argument("--interp-digits", metavar="AQ:MIN,...",
                       help="neighbour-key digits of interpolating runs (none by default)")
    sweep.add_argument("--interp-tolerances", metavar="T,...",
                       help="state-increment tolerances, mol/kgw (default: the scenario's)")
    sweep.add_argument("--interp-methods", default="linear", metavar="M,...",
                       help="linear, idw or linear,idw (default linear)")
    sweep.add_argument("--interp-neighbours", metavar="MIN:MAX,...",
                       help="neighbour counts (default: the scenario's)")
    sweep.add_argument("--interp-radius", metavar="R,...",
                       help="neighbour radii (default: the scenario's)")

    reuse = sub.add_parser("reuse", help="best hit rate any cache could reach on a reference run")
    reuse.add_argument("ref_dir", type=Path, help="output directory of a run without --dht")
    reuse.add_argument("--scenario", type=Path,
                       help="scenario (default: the one named in REF_DIR/summary.json)")
    _add_rounding(reuse)
    reuse.set_defaults(iterations=None)
    return parser


def apply_overrides(scenario: Scenario, args: argparse.Namespace) -> Scenario:
    """The scenario with the command line's iteration and rounding overrides."""
    if args.iterations is not None:
        scenario = dataclasses.replace(
            scenario, iterations=args.iterations,
            output_interval=min(scenario.output_interval, args.iterations))
    if args.dht_signif is not None and args.dht_digits is not None:
        raise RtsimError("--dht-signif and --dht-digits exclude each other")
    overrides = {k: dict(v) for k, v in scenario.dht.overrides.items()}
    changes = {}
    if args.dht_signif is not None or args.dht_digits is not None:
        aqueous, mineral = args.dht_digits or (args.dht_signif, args.dht_signif)
        changes.update(aqueous_digits=aqueous, mineral_digits=mineral)
        for o in overrides.values():
            o.pop("digits", None)
    if args.dht_raw:
        changes["log10"] = False
        for o in overrides.values():
            o.pop("log10", None)
    if changes:
        scenario = scenario.with_dht(overrides=overrides, **changes)
    return _interpolation_overrides(scenario, args)


def _interpolation_overrides(scenario: Scenario, args: argparse.Namespace) -> Scenario:
    """The command line's [dht.interpolation] overrides, checked if it is on."""
    spec = scenario.dht.interpolation
    changes: dict = {}
    if getattr(args, "interpolate", None) is not None:
        changes["enabled"] = args.interpolate
    if getattr(args, "interp_method", None):
        changes["method"] = args.interp_method
    overrides = {k: dict(v) for k, v in spec.overrides.items()}
    if getattr(args, "interp_digits", None):
        changes["aqueous_digits"], changes["mineral_digits"] = args.interp_digits
        for o in overrides.values():
            o.pop("digits", None)
    if getattr(args, "interp_tolerance", None):
        # Every tolerance keeps its ratio to the state increments' one.
        factor = args.interp_tolerance / spec.tolerance
        names = scenario.state_names + AUX_NAMES
        for name, tol in zip(names, scenario.interpolation_tolerances()):
            if name in overrides or name in AUX_NAMES:
                overrides.setdefault(name, {})["tolerance"] = tol * factor
        changes["tolerance"] = args.interp_tolerance
    if getattr(args, "interp_neighbours", None):
        changes["min_neighbours"], changes["max_neighbours"] = args.interp_neighbours
    if getattr(args, "interp_radius", None):
        changes["radius"] = args.interp_radius
    if getattr(args, "interp_coarse", None) is not None:
        changes["coarse_aqueous_digits"], changes["coarse_mineral_digits"] = args.interp_coarse
    if getattr(args, "interp_coarse_scale", None):
        changes["coarse_tolerance_scale"] = args.interp_coarse_scale
    if changes:
        changes["overrides"] = overrides
        scenario = scenario.with_dht(interpolation=dataclasses.replace(spec, **changes))
    if scenario.dht.interpolation.enabled:
        scenario.check_interpolation()
    return scenario


def _run(args: argparse.Namespace) -> int:
    """rtsim run, on every rank."""
    from rtsim.protocol import prefer_eager_messages

    prefer_eager_messages()
    from mpi4py import MPI

    from rtsim.master import RunOptions
    from rtsim.run import run

    comm = MPI.COMM_WORLD
    try:
        if not args.dht and (args.dht_file or args.dht_snaps):
            raise RtsimError("--dht-file and --dht-snaps need --dht")
        if not args.dht and args.interpolate:
            raise RtsimError("--interpolate needs --dht")
        scenario = apply_overrides(load_scenario(args.scenario), args)
    except RtsimError as exc:
        # Every rank reads the same file and fails alike: no rank waits.
        if comm.Get_rank() == 0:
            print(f"rtsim: error: {exc}", file=sys.stderr)
        return 2
    options = RunOptions(outdir=args.outdir, package_size=args.work_package_size,
                         dht=args.dht, dht_size_mb=args.dht_size, dht_snaps=args.dht_snaps,
                         dht_file=args.dht_file, progress=args.progress,
                         progress_style=args.progress_style)
    return run(comm, scenario, options)


def _compare(args: argparse.Namespace) -> int:
    """rtsim compare."""
    from rtsim.compare import compare_command, table

    variables = args.variables.split(",") if args.variables else None
    result, written = compare_command(args.ref_dir, args.dht_dir, args.out, variables)
    print(table(result))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    """rtsim sweep."""
    from rtsim.sweep import sweep_command

    return sweep_command(args)


def _reuse(args: argparse.Namespace) -> int:
    """rtsim reuse."""
    from rtsim.compare import read_summary
    from rtsim.reuse import best_hit_rates, table

    path = args.scenario or Path(read_summary(args.ref_dir)["scenario_file"])
    print(table(best_hit_rates(args.ref_dir, apply_overrides(load_scenario(path), args))))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rtsim`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    commands = {"compare": _compare, "sweep": _sweep, "reuse": _reuse}
    try:
        return commands[args.command](args)
    except RtsimError as exc:
        print(f"rtsim: error: {exc}", file=sys.stderr)
        return 2
