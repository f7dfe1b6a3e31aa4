# SPDX-License-Identifier: BSD-3-Clause
"""PHREEQC as the chemistry engine of a rank.

A cell's state is a row of conservative totals (total H, total O, charge
imbalance and the scenario's elements, in moles per cell of about 1 kg of
water) followed by the mineral amounts.  Each work package is one RunString:
a SOLUTION_RAW and a KINETICS block per cell, then RUN_CELLS over them.

PHREEQC never raises; every run's error count is checked and its warnings
are kept so the master can report them.
"""

from __future__ import annotations

import numpy as np
from phreeqc import Phreeqc

from rtsim.errors import ChemistryError
from rtsim.scenario import AUX_NAMES, Mechanism, MineralSpec, Scenario, WaterSpec

GAS_CONSTANT = 8.314462618  # J/mol/K

# SOLUTION_RAW insists on these.  PHREEQC recomputes them all from the
# totals; they only seed its Newton iterations (see ChemistryEngine.seed).
_RAW_FIXED = "-ah2o 1\n-mass_water 1\n-total_alkalinity 0\n"


def _rate_block(mineral: MineralSpec) -> str:
    """A RATES entry: Palandri and Kharaka rate, independent of the amount.

    rate = A (k_acid a(H+)^n + k_neutral) (1 - SR), positive when dissolving.
    A mineral that is absent can precipitate but not dissolve.  The rate is a
    function of the state only: PHREEQC's integrator itself shortens the
    step in which a mineral is used up.  Capping the moles of a step at M
    (a common idiom) would make the rate depend on the integrator's trial
    step length, so the result would depend on the step sequence the
    tolerance happens to select: at -tol 1e-8 such a cap moved dolomite by
    4e-6 mol and pH by 0.1 in a cell where calcite runs out.
    """
    terms = []
    if mineral.acid is not None:
        terms.append(f'{_k(mineral.acid)} * ACT("H+") ^ {mineral.acid.n!r}')
    if mineral.neutral is not None:
        terms.append(_k(mineral.neutral))
    return (f"{mineral.name}\n-start\n"
            f'10 om = SR("{mineral.name}")\n'
            "20 IF (M <= 0 AND om < 1) THEN GOTO 90\n"
            "30 dti = 1 / TK - 1 / 298.15\n"
            f"40 kk = {mineral.surface_area!r} * ({' + '.join(terms)})\n"
            "50 moles = kk * (1 - om) * TIME\n"
            "90 SAVE moles\n-end\n")


def _k(mech: Mechanism) -> str:
    """Rate constant at the cell temperature, Arrhenius from 25 C."""
    return f"10 ^ {mech.logk!r} * EXP({-mech.ea / GAS_CONSTANT!r} * dti)"


class ChemistryEngine:
    """One PHREEQC instance configured for a scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.components = scenario.components
        self.minerals = scenario.mineral_names
        self.warnings: list[str] = []  # the first few, for the summary
        self.warning_count = 0
        self._phreeqc = Phreeqc()
        if scenario.database_builtin:
            errors = self._phreeqc.LoadBuiltInDatabase(scenario.database)
        else:
            errors = self._phreeqc.LoadDatabase(scenario.database)
        if errors:
            raise ChemistryError(f"PHREEQC cannot load database {scenario.database}:\n"
                                 f"{self._phreeqc.GetErrorString().strip()}")
        punch = ['TOTMOLE("H")', 'TOTMOLE("O")', "CHARGE_BALANCE"]
        punch += [f'TOTMOLE("{e}")' for e in scenario.elements]
        punch += [f'KIN("{m}")' for m in self.minerals]
        punch += ['-LA("H+")', '-LA("e-")', "MU"]
        # Lines of USER_PUNCH are numbered by PHREEQC BASIC: one PUNCH each.
        lines = "\n".join(f"{10 * (i + 1)} PUNCH {p}" for i, p in enumerate(punch))
        rates = "".join(_rate_block(m) for m in scenario.minerals)
        setup = ("SELECTED_OUTPUT 1\n-reset false\n"
                 f"USER_PUNCH 1\n-headings {' '.join(self.field_columns)}\n{lines}\n")
        if rates:
            setup += f"RATES\n{rates}"
        self._run(setup + "END\n", "defining the rates and the output", strict=True)
        # pH, pe and ionic strength that seed every reaction: the pore
        # water's.  Being the same for every cell, they keep each result a
        # function of the cell's state alone, as a cache hit assumes.  Seeding
        # from the cell's own last result instead made the results depend on
        # its history (by 1e-14 mol and 1e-9 in pH), so a hit and a
        # recomputation differed; it saved nothing measurable over this seed.
        self.seed = self.water(scenario.pore_water, "pore water")[-len(AUX_NAMES):]

    @property
    def field_columns(self) -> tuple[str, ...]:
        """Columns returned by :meth:`react`: the state, then pH, pe, mu."""
        return self.components + self.minerals + AUX_NAMES

    def _run(self, text: str, what: str, strict: bool = False) -> None:
        """Runs PHREEQC input; errors raise, warnings raise only if strict.

        In a reaction step PHREEQC warns while it recovers from a too long
        integration step; those are counted.  When a water is defined, a
        warning means the definition is not what the user asked for (an
        unknown element is set to zero with only a warning).
        """
        errors = self._phreeqc.RunString(text)
        if errors:
            detail = self._phreeqc.GetErrorString().strip()
            raise ChemistryError(f"PHREEQC failed {what} ({errors} error(s)):\n{detail}")
        warning = self._phreeqc.GetWarningString().strip()
        if warning and strict:
            raise ChemistryError(f"PHREEQC warned while {what}:\n{warning}")
        if warning:
            self.warning_count += 1
            if len(self.warnings) < 5:
                self.warnings.append(f"{what}: {warning}")

    def _selected_rows(self, expected: int, what: str, exact: bool = True) -> np.ndarray:
        """The last expected rows of the selected output, as floats."""
        rows = self._phreeqc.GetSelectedOutputRowCount() - 1
        cols = self._phreeqc.GetSelectedOutputColumnCount()
        if rows < expected or (exact and rows != expected) or cols != len(self.field_columns):
            raise ChemistryError(f"PHREEQC returned {rows}x{cols} results {what}, "
                                 f"expected {expected}x{len(self.field_columns)}")
        get = self._phreeqc.GetSelectedOutputValue
        first = rows - expected + 1
        try:
            return np.array([[float(get(r, c)) for c in range(cols)]
                             for r in range(first, rows + 1)])
        except (TypeError, ValueError) as exc:
            raise ChemistryError(f"PHREEQC returned a non-numeric result {what}: {exc}") from None

    def water(self, spec: WaterSpec, label: str) -> np.ndarray:
        """Equilibrates a water definition; returns it as a row of field columns.

        The phases of spec.equilibrium are infinite reservoirs at the given
        saturation index; they shape the water but do not enter the cells.
        """
        lines = [f"SOLUTION 1 {label}", "units mol/kgw",
                 f"temp {self.scenario.temperature!r}",
                 f"pH {spec.ph!r}" + (" charge" if spec.charge_balance else ""),
                 f"pe {spec.pe!r}"]
        lines += [f"{element} {amount!r}" for element, amount in spec.totals.items()]
        if spec.equilibrium:
            lines.append("EQUILIBRIUM_PHASES 1")
            lines += [f"{phase} {si!r} 10" for phase, si in spec.equilibrium.items()]
        lines += ["END", "DELETE", "-all", "END"]
        self._run("\n".join(lines) + "\n", f"defining the {label}", strict=True)
        # The initial solution and the equilibration each print a row.
        return self._selected_rows(1, f"for the {label}", exact=False)[0]

    def react(self, states: np.ndarray, dt: float) -> np.ndarray:
        """Reacts every row of states for dt seconds.

        Returns one row per cell: the new state, then pH, pe and ionic
        strength.
        """
        n = states.shape[0]
        if n == 0:
            return np.empty((0, len(self.field_columns)))
        ncomp = len(self.components)
        elements = self.scenario.elements
        temp = f"-temp {self.scenario.temperature!r}\n"
        tol = f"-tol {self.scenario.kinetics_tolerance!r}\n"
        ph, pe, mu = self.seed.tolist()
        seed = f"-pH {ph!r}\n-pe {pe!r}\n-mu {mu!r}\n{_RAW_FIXED}"
        parts = []
        for i, row in enumerate(states.tolist(), start=1):
            totals = "".join(f"{e} {v!r}\n" for e, v in zip(elements, row[3:ncomp]))
            parts.append(f"SOLUTION_RAW {i}\n{temp}-total_h {row[0]!r}\n-total_o {row[1]!r}\n"
                         f"-cb {row[2]!r}\n-totals\n{totals}{seed}")
            if self.minerals:
                kin = "".join(f"{m}\n-m {v!r}\n{tol}" for m, v in zip(self.minerals, row[ncomp:]))
                parts.append(f"KINETICS {i}\n{kin}")
        # Without "USE kinetics none" the defining simulation would itself
        # run the kinetics for one second, on top of the real step.
        parts.append(f"USE kinetics none\nEND\nRUN_CELLS\n-cells 1-{n}\n-time_step {dt!r}\nEND\n")
        self._run("".join(parts), f"reacting a package of {n} cells")
        return self._selected_rows(n, f"for a package of {n} cells")
