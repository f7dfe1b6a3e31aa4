# SPDX-License-Identifier: BSD-3-Clause
"""Scenario files: TOML loading and validation.

Every problem with a scenario is reported as a :class:`ScenarioError` naming
the file, the table and the key, so that a user can fix it without reading
the code.  Units are part of the key names where they are not SI.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rtsim.errors import ScenarioError

MILLIDARCY_M2 = 9.869233e-16
BAR_PA = 1.0e5

#: Conservative totals every scenario transports before its own elements,
#: as PhreeqcRM does: water and acidity live in total H and O, and charge
#: keeps the imbalance that transport may carry.
BASE_COMPONENTS = ("H", "O", "charge")

#: What PHREEQC reports besides the state.  They are not transported: they
#: describe the cell after chemistry and seed PHREEQC's next solve there.
AUX_NAMES = ("pH", "pe", "mu")


@dataclass(frozen=True)
class PermeabilityFieldSpec:
    """A heterogeneous permeability: a seeded log-normal field, or a file in mD."""

    log10_std: float = 0.0
    correlation_length: tuple[float, float] = (1.0, 1.0)  # m, along x and along y
    seed: int = 0
    file: str | None = None  # absolute path; the other settings are then unused


@dataclass(frozen=True)
class GridSpec:
    """A 2D Cartesian grid; permeability is uniform unless a field is given."""

    nx: int
    ny: int
    lx: float
    ly: float
    depth: float
    porosity: float
    permeability: float  # m2; the geometric mean of a heterogeneous field
    viscosity: float  # Pa s
    permeability_field: PermeabilityFieldSpec | None = None

    @property
    def cells(self) -> int:
        """Number of grid cells."""
        return self.nx * self.ny


#: Edges of the grid water can enter or leave through (row 0 is the top).
BOUNDARIES = ("left", "right", "top", "bottom")


@dataclass(frozen=True)
class FlowSpec:
    """What drives the steady Darcy flow: a fixed-pressure cell or a boundary
    edge for the injection, and one for the outflow.

    An edge has its pressure on the outer faces of its cells; an injection
    edge may instead take a total rate (m3/s) shared among its cells in
    proportion to their permeability, as a well's rate is shared among its
    layers.  The rest of the boundary is closed.
    """

    injection_cell: tuple[int, int] | None  # (row, column), row 0 at the top
    injection_pressure: float | None  # Pa
    outflow_cell: tuple[int, int] | None
    outflow_pressure: float  # Pa
    injection_boundary: str | None = None  # one of BOUNDARIES
    outflow_boundary: str | None = None
    injection_rate: float | None = None  # m3/s, instead of injection_pressure


@dataclass(frozen=True)
class WaterSpec:
    """A water defined in PHREEQC terms, equilibrated before the run."""

    ph: float
    pe: float
    charge_balance: bool
    totals: dict[str, float]  # element -> mol/kgw
    equilibrium: dict[str, float]  # phase -> saturation index


@dataclass(frozen=True)
class Mechanism:
    """One Palandri and Kharaka (2004) mechanism: k25, activation energy."""

    logk: float  # log10 mol/m2/s at 25 C
    ea: float  # J/mol
    n: float = 0.0  # exponent of a(H+), acid mechanism only


@dataclass(frozen=True)
class MineralSpec:
    """A kinetically reacting mineral, immobile in the cell."""

    name: str
    initial: float  # mol per kgw of pore water
    surface_area: float  # m2 per kgw, constant (rate independent of amount)
    acid: Mechanism | None
    neutral: Mechanism | None


#: Interpolation methods of rmadht.Interpolation.
INTERPOLATION_METHODS = ("linear", "idw")

#: The most neighbours rmadht.Interpolation lists per neighbour key.
MAX_NEIGHBOURS = 64

#: Default absolute tolerances of the outputs besides the state increments:
#: pH in pH units, pe in pe units, ionic strength in mol/kgw.
AUX_TOLERANCES = {"pH": 1e-4, "pe": 1e-2, "mu": 1e-6}


@dataclass(frozen=True)
class InterpolationSpec:
    """[dht.interpolation]: serving a miss from neighbouring cache entries.

    The neighbour key rounds each key variable to fewer digits than the
    exact key, so that entries near the query share it; a result is
    interpolated from them when the cache's error estimate stays within
    every output's absolute tolerance.
    """

    enabled: bool = False
    method: str = "linear"
    aqueous_digits: int = 3
    mineral_digits: int = 1
    tolerance: float = 1e-8  # mol/kgw, every state increment
    min_neighbours: int = 5
    max_neighbours: int = 20
    radius: float = 1.0
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A second, coarser neighbour key for the rows the first refuses for
    # too few neighbours (None: no second level), with every tolerance
    # times coarse_tolerance_scale (docs/explanation/interpolation.md, "The coarse level").
    coarse_aqueous_digits: int | None = None
    coarse_mineral_digits: int | None = None
    coarse_tolerance_scale: float = 1.0


@dataclass(frozen=True)
class DhtSpec:
    """Rounding of cache keys (De Lucia et al. 2021, sect. 2.4.3) and what
    goes into the cache."""

    log10: bool
    aqueous_digits: int
    mineral_digits: int
    zero_below: float
    keys: tuple[str, ...]
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    store_phase_changes: bool = False
    interpolation: InterpolationSpec = field(default_factory=InterpolationSpec)


@dataclass(frozen=True)
class Scenario:
    """A validated scenario.  Derived names are properties."""

    name: str
    path: str
    iterations: int
    dt: float
    output_interval: int
    courant: float
    grid: GridSpec
    flow: FlowSpec
    database: str  # absolute path, or the name of a database shipped with phreeqc
    database_builtin: bool
    temperature: float
    kinetics_tolerance: float
    elements: tuple[str, ...]
    pore_water: WaterSpec
    injection: WaterSpec
    minerals: tuple[MineralSpec, ...]
    dht: DhtSpec
    compare: tuple[str, ...]

    @property
    def components(self) -> tuple[str, ...]:
        """Transported conservative totals, in state-column order."""
        return BASE_COMPONENTS + self.elements

    @property
    def mineral_names(self) -> tuple[str, ...]:
        """Immobile mineral amounts, in state-column order after components."""
        return tuple(m.name for m in self.minerals)

    @property
    def state_names(self) -> tuple[str, ...]:
        """All columns of a cell's state."""
        return self.components + self.mineral_names

    @property
    def field_names(self) -> tuple[str, ...]:
        """Everything written to snapshots: the state, then pH, pe and mu."""
        return self.state_names + AUX_NAMES

    def key_digits(self) -> list[int]:
        """Significant digits of every cache key variable."""
        return [self._key_option(k, "digits") for k in self.dht.keys]

    def key_log10(self) -> list[bool]:
        """Whether every cache key variable is rounded on its log10."""
        return [self._key_option(k, "log10") for k in self.dht.keys]

    def _key_option(self, name: str, option: str) -> Any:
        """A key variable's digits or log10 flag: override, else class default."""
        override = self.dht.overrides.get(name, {})
        if option in override:
            return override[option]
        if option == "log10":
            return self.dht.log10
        return self.dht.mineral_digits if name in self.mineral_names else self.dht.aqueous_digits

    def interpolation_digits(self) -> list[int]:
        """Neighbour-key digits of every cache key variable."""
        spec = self.dht.interpolation
        return [spec.overrides.get(k, {}).get(
                    "digits", spec.mineral_digits if k in self.mineral_names
                    else spec.aqueous_digits) for k in self.dht.keys]

    def interpolation_coarse_digits(self) -> list[int] | None:
        """The coarse level's neighbour-key digits of every cache key
        variable, or None without a coarse level."""
        spec = self.dht.interpolation
        if spec.coarse_aqueous_digits is None:
            return None
        return [spec.coarse_mineral_digits if k in self.mineral_names
                else spec.coarse_aqueous_digits for k in self.dht.keys]

    def interpolation_phase(self) -> list[bool]:
        """Per key variable: must its presence agree with the neighbours'?

        Minerals by default: a rate changes its form where a mineral
        appears or vanishes, and no interpolation spans that.
        """
        spec = self.dht.interpolation
        return [spec.overrides.get(k, {}).get("phase", k in self.mineral_names)
                for k in self.dht.keys]

    def interpolation_tolerances(self) -> list[float]:
        """Absolute tolerance of every cache output: state increments, pH, pe, mu."""
        spec = self.dht.interpolation
        defaults = [spec.tolerance] * len(self.state_names) + [AUX_TOLERANCES[a]
                                                               for a in AUX_NAMES]
        return [spec.overrides.get(name, {}).get("tolerance", default)
                for name, default in zip(self.state_names + AUX_NAMES, defaults)]

    def check_interpolation(self) -> None:
        """Raises ScenarioError unless the neighbour key is coarser than the
        exact key and the neighbour counts fit (checked when interpolation
        is on, after the command line's overrides too).

        Each key variable's neighbour digits lie between 0 (left out of the
        neighbour key) and its exact digits, and at least one has fewer:
        otherwise every neighbour would be the exact entry itself.
        """
        pairs = list(zip(self.dht.keys, self.key_digits(), self.interpolation_digits()))
        for name, exact, coarse in pairs:
            if coarse > exact:
                raise ScenarioError(
                    f"{self.path}: [dht.interpolation] the neighbour key of '{name}' has "
                    f"{coarse} digits, the exact key {exact}: it must not be finer")
        if all(coarse == exact for _, exact, coarse in pairs):
            raise ScenarioError(
                f"{self.path}: [dht.interpolation] the neighbour key has the exact key's "
                f"digits ({', '.join(f'{n} {e}' for n, e, _ in pairs)}): it must be coarser "
                "(fewer digits) in at least one variable")
        spec = self.dht.interpolation
        if spec.max_neighbours < spec.min_neighbours:
            raise ScenarioError(f"{self.path}: [dht.interpolation] 'max_neighbours' "
                                f"({spec.max_neighbours}) is below 'min_neighbours' "
                                f"({spec.min_neighbours})")
        if spec.method not in INTERPOLATION_METHODS:
            raise ScenarioError(f"{self.path}: [dht.interpolation] 'method' must be one of "
                                f"{', '.join(INTERPOLATION_METHODS)}, got {spec.method!r}")
        if (spec.coarse_aqueous_digits is None) != (spec.coarse_mineral_digits is None):
            raise ScenarioError(f"{self.path}: [dht.interpolation] 'coarse_aqueous_digits' "
                                "and 'coarse_mineral_digits' go together")
        coarse = self.interpolation_coarse_digits()
        if coarse is not None:
            first = self.interpolation_digits()
            if any(c > f for c, f in zip(coarse, first)) or \
                    all(c == f for c, f in zip(coarse, first)):
                raise ScenarioError(
                    f"{self.path}: [dht.interpolation] the coarse neighbour key "
                    f"({', '.join(f'{n} {c}' for n, c in zip(self.dht.keys, coarse))}) must "
                    "be coarser than the first "
                    f"({', '.join(f'{n} {f}' for n, f in zip(self.dht.keys, first))}): "
                    "no finer in any variable, fewer digits in at least one")
        if not 0 < spec.coarse_tolerance_scale <= 1:
            raise ScenarioError(f"{self.path}: [dht.interpolation] 'coarse_tolerance_scale' "
                                f"must be in (0, 1], got {spec.coarse_tolerance_scale}")

    def with_dht(self, **changes: Any) -> Scenario:
        """A copy with some [dht] settings replaced (command-line overrides)."""
        return dataclasses.replace(self, dht=dataclasses.replace(self.dht, **changes))

    def with_interpolation(self, **changes: Any) -> Scenario:
        """A copy with some [dht.interpolation] settings replaced; checked."""
        spec = dataclasses.replace(self.dht.interpolation, **changes)
        scenario = self.with_dht(interpolation=spec)
        scenario.check_interpolation()
        return scenario


class _Table:
    """A TOML table that remembers where it is and which keys were read."""

    def __init__(self, data: Any, where: str, path: str) -> None:
        if not isinstance(data, dict):
            raise ScenarioError(f"{path}: [{where}] must be a table")
        self.data = data
        self.where = where
        self.path = path
        self.used: set[str] = set()

    def fail(self, message: str) -> ScenarioError:
        """An error naming this table."""
        return ScenarioError(f"{self.path}: [{self.where}] {message}")

    def get(self, key: str, default: Any = ...) -> Any:
        """A value, or default; a missing required key is an error."""
        self.used.add(key)
        if key not in self.data:
            if default is ...:
                close = difflib.get_close_matches(key, [str(k) for k in self.data], n=1)
                hint = f" ('{close[0]}' is not a known key: a misspelling?)" if close else ""
                raise self.fail(f"missing key '{key}'{hint}")
            return default
        return self.data[key]

    def table(self, key: str, default_empty: bool = False) -> _Table:
        """A sub-table (an empty one if optional and absent)."""
        value = self.get(key, {} if default_empty else ...)
        return _Table(value, f"{self.where}.{key}" if self.where else key, self.path)

    def number(self, key: str, default: Any = ..., *, minimum: float | None = None,
               positive: bool = False, maximum: float | None = None) -> float:
        """A finite float within bounds."""
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"'{key}' must be a number, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise self.fail(f"'{key}' must be finite, got {value!r}")
        if positive and value <= 0:
            raise self.fail(f"'{key}' must be > 0, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(f"'{key}' must be >= {minimum}, got {value!r}")
        if maximum is not None and value > maximum:
            raise self.fail(f"'{key}' must be <= {maximum}, got {value!r}")
        return value

    def integer(self, key: str, default: Any = ..., *, minimum: int = 1,
                maximum: int | None = None) -> int:
        """An integer within bounds."""
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"'{key}' must be an integer, got {value!r}")
        if value < minimum or (maximum is not None and value > maximum):
            upper = f" and <= {maximum}" if maximum is not None else ""
            raise self.fail(f"'{key}' must be >= {minimum}{upper}, got {value!r}")
        return value

    def boolean(self, key: str, default: Any = ...) -> bool:
        """true or false."""
        value = self.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(f"'{key}' must be true or false, got {value!r}")
        return value

    def string(self, key: str, default: Any = ...) -> str:
        """A non-empty string."""
        value = self.get(key, default)
        if not isinstance(value, str) or not value:
            raise self.fail(f"'{key}' must be a non-empty string, got {value!r}")
        return value

    def names(self, key: str, default: Any = ...) -> tuple[str, ...]:
        """A list of distinct non-empty strings."""
        value = self.get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(f"'{key}' must be a list of names, got {value!r}")
        if len(set(value)) != len(value):
            raise self.fail(f"'{key}' lists a name twice: {value!r}")
        return tuple(value)

    def done(self) -> None:
        """Rejects keys nobody read: almost always a typo."""
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise self.fail(
                f"unknown key(s) {', '.join(repr(k) for k in unknown)}; "
                f"known keys: {', '.join(sorted(self.used))}")


def load_scenario(path: str | Path) -> Scenario:
    """Reads and validates a scenario file."""
    path = Path(path)
    where = str(path)
    try:
        with open(path, "rb") as handle:
            raw = tomllib.load(handle)
    except FileNotFoundError:
        raise ScenarioError(f"{where}: scenario file not found") from None
    except OSError as exc:
        raise ScenarioError(f"{where}: cannot read scenario file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{where}: not valid TOML: {exc}") from None
    top = _Table(raw, "", where)
    name = top.string("name", path.stem)

    time = top.table("time")
    iterations = time.integer("iterations")
    dt = time.number("dt", positive=True)
    output_interval = time.integer("output_interval", 1)
    courant = time.number("courant", 1.0, positive=True, maximum=1.0)
    time.done()

    grid = _grid(top.table("grid"), path)
    flow = _flow(top.table("flow"), grid)

    chem = top.table("chemistry")
    database, builtin = _database(chem, path)
    temperature = chem.number("temperature", 25.0, minimum=0.0, maximum=100.0)
    kinetics_tolerance = chem.number("kinetics_tolerance", 1e-9, positive=True)
    elements = chem.names("elements")
    for bad in set(elements) & set(BASE_COMPONENTS):
        raise chem.fail(f"'elements' must not list '{bad}': H, O and charge are always transported")
    pore_water = _water(chem.table("pore_water"), elements)
    injection = _water(chem.table("injection"), elements)
    chem.done()

    minerals = _minerals(top.get("minerals", []), where, elements)
    state_names = BASE_COMPONENTS + elements + tuple(m.name for m in minerals)

    dht = _dht(top.table("dht", default_empty=True), state_names)

    output = top.table("output", default_empty=True)
    default_compare = tuple(elements) + ("pH",) + tuple(m.name for m in minerals)
    compare = output.names("compare", list(default_compare))
    for bad in [c for c in compare if c not in state_names + ("pH",)]:
        raise output.fail(f"'compare' names unknown variable '{bad}'; "
                          f"known: {', '.join(state_names + ('pH',))}")
    if not compare:
        raise output.fail("'compare' must name at least one variable")
    output.done()
    top.done()

    if output_interval > iterations:
        raise ScenarioError(f"{where}: [time] 'output_interval' exceeds 'iterations'")
    scenario = Scenario(
        name=name, path=str(path.resolve()), iterations=iterations, dt=dt,
        output_interval=output_interval, courant=courant, grid=grid, flow=flow,
        database=database, database_builtin=builtin, temperature=temperature,
        kinetics_tolerance=kinetics_tolerance,
        elements=elements, pore_water=pore_water, injection=injection,
        minerals=minerals, dht=dht, compare=compare)
    if dht.interpolation.enabled:
        scenario.check_interpolation()
    return scenario


def _grid(t: _Table, scenario_path: Path) -> GridSpec:
    """[grid], with its optional [grid.permeability_field]."""
    nx, ny = t.integer("nx"), t.integer("ny")
    lx, ly = t.number("lx", positive=True), t.number("ly", positive=True)
    heterogeneous = "permeability_field" in t.data
    field_spec = (_permeability_field(t.table("permeability_field"), scenario_path)
                  if heterogeneous else None)
    from_file = field_spec is not None and field_spec.file is not None
    if from_file and "permeability_mD" in t.data:
        raise t.fail("give either 'permeability_mD' or [grid.permeability_field] 'file': "
                     "the file holds every cell's permeability")
    if from_file:
        from rtsim.permeability import read_field  # scipy is loaded only when needed

        mean_md = float(np.exp(np.log(read_field(Path(field_spec.file), (ny, nx))).mean()))
    else:
        mean_md = t.number("permeability_mD", positive=True)
    spec = GridSpec(
        nx=nx, ny=ny, lx=lx, ly=ly,
        depth=t.number("depth", 1.0, positive=True),
        porosity=t.number("porosity", positive=True, maximum=1.0),
        permeability=mean_md * MILLIDARCY_M2,
        viscosity=t.number("viscosity_Pa_s", 1.0e-3, positive=True),
        permeability_field=field_spec)
    t.done()
    if spec.cells < 2:
        raise t.fail("the grid needs at least two cells")
    return spec


def _permeability_field(t: _Table, scenario_path: Path) -> PermeabilityFieldSpec:
    """[grid.permeability_field]: a file, or the statistics of a random field."""
    if "file" in t.data:
        name = t.string("file")
        path = Path(name) if Path(name).is_absolute() else scenario_path.parent / name
        t.done()
        return PermeabilityFieldSpec(file=str(path.resolve()))
    lengths = t.get("correlation_length_m")
    if isinstance(lengths, (int, float)) and not isinstance(lengths, bool):
        lengths = [lengths, lengths]
    if (not isinstance(lengths, list) or len(lengths) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       and math.isfinite(v) and v > 0 for v in lengths)):
        raise t.fail("'correlation_length_m' must be a number > 0 or [along x, along y] "
                     f"(both > 0), got {lengths!r}")
    spec = PermeabilityFieldSpec(
        log10_std=t.number("log10_std", minimum=0.0, maximum=3.0),
        correlation_length=(float(lengths[0]), float(lengths[1])),
        seed=t.integer("seed", minimum=0))
    t.done()
    return spec


def _cell(t: _Table, key: str, grid: GridSpec) -> tuple[int, int]:
    """A [row, column] pair inside the grid."""
    value = t.get(key)
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise t.fail(f"'{key}' must be [row, column], got {value!r}")
    row, col = value
    if not (0 <= row < grid.ny and 0 <= col < grid.nx):
        raise t.fail(f"'{key}' = {value!r} lies outside the {grid.ny}x{grid.nx} grid")
    return row, col


def _boundary(t: _Table, key: str) -> str:
    """One of the grid's edges."""
    value = t.get(key)
    if value not in BOUNDARIES:
        raise t.fail(f"'{key}' must be one of {', '.join(repr(b) for b in BOUNDARIES)}, "
                     f"got {value!r}")
    return value


def _on_boundary(cell: tuple[int, int], edge: str, grid: GridSpec) -> bool:
    """Whether a cell lies along an edge of the grid."""
    row, col = cell
    return {"left": col == 0, "right": col == grid.nx - 1,
            "top": row == 0, "bottom": row == grid.ny - 1}[edge]


def _where(t: _Table, what: str, grid: GridSpec) -> tuple[tuple[int, int] | None, str | None]:
    """'<what>_cell' or '<what>_boundary': exactly one of them."""
    cell_key, edge_key = f"{what}_cell", f"{what}_boundary"
    if (cell_key in t.data) == (edge_key in t.data):
        raise t.fail(f"give either '{cell_key}' or '{edge_key}' (one of "
                     f"{', '.join(BOUNDARIES)})")
    if cell_key in t.data:
        return _cell(t, cell_key, grid), None
    return None, _boundary(t, edge_key)


def _flow(t: _Table, grid: GridSpec) -> FlowSpec:
    """[flow]."""
    injection_cell, injection_boundary = _where(t, "injection", grid)
    outflow_cell, outflow_boundary = _where(t, "outflow", grid)
    if ("injection_pressure_bar" in t.data) == ("injection_rate_m3_per_day" in t.data):
        raise t.fail("give either 'injection_pressure_bar' or 'injection_rate_m3_per_day'")
    rate = None
    if "injection_rate_m3_per_day" in t.data:
        if injection_boundary is None:
            raise t.fail("'injection_rate_m3_per_day' needs 'injection_boundary': "
                         "an injection cell is held at a fixed pressure")
        rate = t.number("injection_rate_m3_per_day", positive=True) / 86400.0
    spec = FlowSpec(
        injection_cell=injection_cell,
        injection_pressure=(t.number("injection_pressure_bar", positive=True) * BAR_PA
                            if rate is None else None),
        outflow_cell=outflow_cell,
        outflow_pressure=t.number("outflow_pressure_bar", positive=True) * BAR_PA,
        injection_boundary=injection_boundary, outflow_boundary=outflow_boundary,
        injection_rate=rate)
    t.done()
    if injection_cell is not None and injection_cell == outflow_cell:
        raise t.fail("'injection_cell' and 'outflow_cell' must differ")
    if injection_boundary is not None and injection_boundary == outflow_boundary:
        raise t.fail("'injection_boundary' and 'outflow_boundary' must differ")
    if injection_cell is not None and outflow_boundary is not None \
            and _on_boundary(injection_cell, outflow_boundary, grid):
        raise t.fail("'injection_cell' lies on the outflow boundary")
    if outflow_cell is not None and injection_boundary is not None \
            and _on_boundary(outflow_cell, injection_boundary, grid):
        raise t.fail("'outflow_cell' lies on the injection boundary")
    if spec.injection_pressure is not None and spec.injection_pressure <= spec.outflow_pressure:
        raise t.fail("'injection_pressure_bar' must exceed 'outflow_pressure_bar'")
    return spec


def _database(t: _Table, scenario_path: Path) -> tuple[str, bool]:
    """Resolves [chemistry] database to a file or a shipped database name."""
    name = t.string("database", "phreeqc.dat")
    candidate = Path(name)
    if not candidate.is_absolute():
        candidate = scenario_path.parent / candidate
    if candidate.is_file():
        return str(candidate.resolve()), False
    from phreeqc import Phreeqc  # the engine is a hard dependency; import where needed

    builtin = Phreeqc.ListBuiltInDatabases()
    if name in builtin:
        return name, True
    raise t.fail(f"database '{name}' not found: it is neither a file (looked for "
                 f"{candidate}) nor one of phreeqc's databases ({', '.join(builtin)})")


def _water(t: _Table, elements: tuple[str, ...]) -> WaterSpec:
    """A [chemistry.*] water."""
    totals_t = t.table("totals", default_empty=True)
    totals = {}
    for element in list(totals_t.data):
        if element not in elements:
            raise totals_t.fail(f"element '{element}' is not listed in [chemistry] 'elements' "
                                f"({', '.join(elements)})")
        totals[element] = totals_t.number(element, minimum=0.0)
    totals_t.done()
    eq_t = t.table("equilibrium", default_empty=True)
    equilibrium = {phase: eq_t.number(phase) for phase in list(eq_t.data)}
    eq_t.done()
    spec = WaterSpec(ph=t.number("pH", 7.0, minimum=0.0, maximum=14.0),
                     pe=t.number("pe", 4.0), charge_balance=t.boolean("charge_balance", True),
                     totals=totals, equilibrium=equilibrium)
    t.done()
    return spec


def _mechanism(t: _Table, key: str, acid: bool) -> Mechanism | None:
    """An optional rate mechanism of a mineral."""
    if key not in t.data:
        t.used.add(key)
        return None
    m = t.table(key)
    mech = Mechanism(logk=m.number("logk"), ea=m.number("ea", minimum=0.0),
                     n=m.number("n", minimum=0.0) if acid else 0.0)
    m.done()
    return mech


def _minerals(raw: Any, where: str, elements: tuple[str, ...]) -> tuple[MineralSpec, ...]:
    """[[minerals]]."""
    if not isinstance(raw, list):
        raise ScenarioError(f"{where}: 'minerals' must be an array of tables ([[minerals]])")
    minerals = []
    for i, entry in enumerate(raw):
        t = _Table(entry, f"minerals #{i + 1}", where)
        name = t.string("name")
        if name in BASE_COMPONENTS + elements + ("pH",):
            raise t.fail(f"mineral name '{name}' clashes with a transported variable")
        spec = MineralSpec(name=name, initial=t.number("initial", minimum=0.0),
                           surface_area=t.number("surface_area", positive=True),
                           acid=_mechanism(t, "acid", True),
                           neutral=_mechanism(t, "neutral", False))
        if spec.acid is None and spec.neutral is None:
            raise t.fail("needs an 'acid' or a 'neutral' mechanism")
        t.done()
        minerals.append(spec)
    names = [m.name for m in minerals]
    if len(set(names)) != len(names):
        raise ScenarioError(f"{where}: [[minerals]] defines a mineral twice: {names}")
    return tuple(minerals)


def _dht(t: _Table, state_names: tuple[str, ...]) -> DhtSpec:
    """[dht]."""
    default_keys = [n for n in state_names if n != "charge"]
    keys = t.names("keys", default_keys)
    for bad in [k for k in keys if k not in state_names]:
        raise t.fail(f"'keys' names unknown variable '{bad}'; known: {', '.join(state_names)}")
    if not keys:
        raise t.fail("'keys' must name at least one variable")
    overrides: dict[str, dict[str, Any]] = {}
    variables = t.table("variables", default_empty=True)
    for name in list(variables.data):
        if name not in keys:
            raise variables.fail(f"'{name}' is not a cache key variable; keys: {', '.join(keys)}")
        v = variables.table(name)
        overrides[name] = {}
        if "digits" in v.data:
            overrides[name]["digits"] = v.integer("digits", maximum=15)
        if "log10" in v.data:
            overrides[name]["log10"] = v.boolean("log10")
        v.done()
    variables.done()
    spec = DhtSpec(log10=t.boolean("log10", True),
                   aqueous_digits=t.integer("aqueous_digits", 5, maximum=15),
                   mineral_digits=t.integer("mineral_digits", 5, maximum=15),
                   zero_below=t.number("zero_below", 1e-13, minimum=0.0),
                   keys=keys, overrides=overrides,
                   store_phase_changes=t.boolean("store_phase_changes", False),
                   interpolation=_interpolation(t.table("interpolation", default_empty=True),
                                                keys, state_names))
    t.done()
    return spec


def _interpolation(t: _Table, keys: tuple[str, ...],
                   state_names: tuple[str, ...]) -> InterpolationSpec:
    """[dht.interpolation]; the digits are checked against the exact key later."""
    default = InterpolationSpec()
    outputs = state_names + AUX_NAMES
    overrides: dict[str, dict[str, Any]] = {}
    variables = t.table("variables", default_empty=True)
    for name in list(variables.data):
        if name not in keys and name not in outputs:
            raise variables.fail(f"'{name}' is neither a cache key variable nor a cache output; "
                                 f"known: {', '.join(dict.fromkeys(keys + outputs))}")
        v = variables.table(name)
        overrides[name] = {}
        for option in ("digits", "phase"):
            if option in v.data and name not in keys:
                raise v.fail(f"'{option}' applies to cache key variables only; "
                             f"'{name}' is not one ({', '.join(keys)})")
        if "digits" in v.data:
            overrides[name]["digits"] = v.integer("digits", minimum=0, maximum=15)
        if "phase" in v.data:
            overrides[name]["phase"] = v.boolean("phase")
        if "tolerance" in v.data:
            overrides[name]["tolerance"] = v.number("tolerance", positive=True)
        v.done()
    variables.done()
    method = t.string("method", default.method)
    if method not in INTERPOLATION_METHODS:
        raise t.fail(f"'method' must be one of {', '.join(INTERPOLATION_METHODS)}, "
                     f"got {method!r}")
    spec = InterpolationSpec(
        enabled=t.boolean("enabled", default.enabled), method=method,
        aqueous_digits=t.integer("aqueous_digits", default.aqueous_digits, minimum=0,
                                 maximum=15),
        mineral_digits=t.integer("mineral_digits", default.mineral_digits, minimum=0,
                                 maximum=15),
        tolerance=t.number("tolerance", default.tolerance, positive=True),
        min_neighbours=t.integer("min_neighbours", default.min_neighbours, minimum=2,
                                 maximum=MAX_NEIGHBOURS),
        max_neighbours=t.integer("max_neighbours", default.max_neighbours, minimum=2,
                                 maximum=MAX_NEIGHBOURS),
        radius=t.number("radius", default.radius, positive=True),
        overrides=overrides,
        coarse_aqueous_digits=(t.integer("coarse_aqueous_digits", minimum=0, maximum=15)
                               if "coarse_aqueous_digits" in t.data else None),
        coarse_mineral_digits=(t.integer("coarse_mineral_digits", minimum=0, maximum=15)
                               if "coarse_mineral_digits" in t.data else None),
        coarse_tolerance_scale=t.number("coarse_tolerance_scale",
                                        default.coarse_tolerance_scale, positive=True,
                                        maximum=1.0))
    t.done()
    return spec
