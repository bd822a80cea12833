"""SNDlib network models: the 8-letter model codes and the native model files.

Model code, position by position: 1 demand model ``U``/``D``; 2 link model ``U``/``B``/``D``;
3 link capacity model ``M`` modular / ``S`` single modular / ``E`` explicit / ``L`` linear;
4 fixed charge ``N``/``Y``; 5 routing ``C`` continuous / ``I`` integer / ``S`` single path;
6 admissible paths ``A`` all / ``E`` explicit list; 7 hop limits ``N`` ignored / ``Y``;
8 survivability ``N`` none / ``P`` 1+1 / ``S`` shared path / ``U`` unrestricted reconfiguration.

Every code parses; the backbone's design solver (:mod:`backbone.solver.design.sndlib`) solves the subset in
:data:`SUPPORTED` (demand U/D, link U/B/D, capacity M/E/L, fixed charge N/Y, continuous routing over all
paths without hop limits, survivability N and U), and :meth:`SndlibModel.unsupported` names the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from backbone.errors import Problem, ValidationError

POSITIONS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("demand", "DEMAND_MODEL", {"U": "UNDIRECTED", "D": "DIRECTED"}),
    ("link", "LINK_MODEL", {"U": "UNDIRECTED", "B": "BIDIRECTED", "D": "DIRECTED"}),
    ("capacity", "LINK_CAPACITY_MODEL", {"M": "MODULAR_LINK_CAPACITIES", "S": "SINGLE_MODULAR_CAPACITIES",
                                         "E": "EXPLICIT_LINK_CAPACITIES", "L": "LINEAR_LINK_CAPACITIES"}),
    ("fixed_charge", "FIXED_CHARGE_MODEL", {"N": "NO", "Y": "YES"}),
    ("routing", "ROUTING_MODEL", {"C": "CONTINUOUS", "I": "INTEGER", "S": "SINGLE_PATH"}),
    ("paths", "ADMISSIBLE_PATH_MODEL", {"A": "ALL_PATHS", "E": "EXPLICIT_LIST"}),
    ("hop_limits", "HOP_LIMIT_MODEL", {"N": "IGNORE_HOP_LIMITS", "Y": "INDIVIDUAL_HOP_LIMITS"}),
    ("survivability", "SURVIVABILITY_MODEL", {"N": "NO_SURVIVABILITY", "P": "ONE_PLUS_ONE_PROTECTION",
                                              "S": "SHARED_PATH_PROTECTION", "U": "UNRESTRICTED_FLOW_RECONFIGURATION"}),
)
"""(attribute, model-file key, code letter -> model-file value) per code position."""

ALIASES: dict[str, str] = {"SINGLE_MODULAR_LINK_CAPACITIES": "SINGLE_MODULAR_CAPACITIES"}
"""Other spellings seen for model-file values."""

SUPPORTED: dict[str, str] = {"demand": "UD", "link": "UBD", "capacity": "MEL", "fixed_charge": "NY",
                             "routing": "C", "paths": "A", "hop_limits": "N", "survivability": "NU"}
"""Code letters the design solver (:mod:`backbone.solver.design.sndlib`) can solve, per position."""


@dataclass(frozen=True)
class SndlibModel:
    """One SNDlib network model (see the module docstring for the letters)."""

    demand: str = "U"
    link: str = "U"
    capacity: str = "M"
    fixed_charge: str = "N"
    routing: str = "C"
    paths: str = "A"
    hop_limits: str = "N"
    survivability: str = "N"

    @property
    def code(self) -> str:
        """The 8-letter code, dash-separated (``U-U-M-N-C-A-N-N``)."""
        return "-".join(getattr(self, attr) for attr, _, _ in POSITIONS)

    def unsupported(self) -> list[Problem]:
        """A problem per position the design solver cannot solve (see :data:`SUPPORTED`)."""
        return [Problem(f"model position {i + 1} ({key}) = {getattr(self, attr)!r} is not supported "
                        f"(supported: {', '.join(SUPPORTED[attr])})", table="model", field=key)
                for i, (attr, key, _) in enumerate(POSITIONS) if getattr(self, attr) not in SUPPORTED[attr]]

    def to_text(self) -> str:
        """The model in SNDlib native model-file format."""
        lines = ["?SNDlib native format; type: model; version: 1.0", f"# model {self.code}", ""]
        lines += [f"{key} = {values[getattr(self, attr)]}" for attr, key, values in POSITIONS]
        lines += ["NODE_MODEL = NO_NODE_HARDWARE", "OBJECTIVE_MODEL = MINIMIZE_TOTAL_COST"]
        return "\n".join(lines) + "\n"


def parse_model_code(code: str) -> SndlibModel:
    """``"U-U-M-N-C-A-N-N"`` (dashes optional) -> :class:`SndlibModel`.

    Raises
    ------
    ValidationError
        For a wrong length or an unknown letter (naming the position).
    """
    letters = code.replace("-", "").strip().upper()
    if len(letters) != len(POSITIONS):
        raise ValidationError(Problem(f"model code {code!r} must have {len(POSITIONS)} letters (e.g. U-U-M-N-C-A-N-N)",
                                      table="model", field="code"))
    problems = [Problem(f"position {i + 1} ({key}): {ch!r} is not one of {', '.join(values)}", table="model",
                        field=key)
                for i, ((_, key, values), ch) in enumerate(zip(POSITIONS, letters, strict=True)) if ch not in values]
    if problems:
        raise ValidationError(problems)
    return SndlibModel(**{attr: ch for (attr, _, _), ch in zip(POSITIONS, letters, strict=True)})


def parse_model_file(path: str | Path, text: str | None = None) -> SndlibModel:
    """Read an SNDlib native model file (``KEY = VALUE`` lines).

    Raises
    ------
    ValidationError
        For unknown keys or values (file, ``line N``, key) and missing keys.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="replace") if text is None else text
    by_key = {key: (attr, {v: k for k, v in values.items()}) for attr, key, values in POSITIONS}
    found: dict[str, str] = {}
    problems: list[Problem] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("?"):
            continue
        m = re.fullmatch(r"([A-Z_]+)\s*=\s*([A-Z_0-9]+)", line)
        if not m:
            problems.append(Problem("expected 'KEY = VALUE'", file=str(p), record=f"line {n}"))
            continue
        key, value = m.groups()
        if key in ("NODE_MODEL", "OBJECTIVE_MODEL"):
            continue
        if key not in by_key:
            problems.append(Problem("unknown key (expected one of "
                                    f"{', '.join(by_key)}, NODE_MODEL, OBJECTIVE_MODEL)", file=str(p),
                                    record=f"line {n}"))
            continue
        attr, letters = by_key[key]
        value = ALIASES.get(value, value)
        if value not in letters:
            problems.append(Problem(f"unknown value (expected one of {', '.join(letters)})", file=str(p),
                                    record=f"line {n}", field=key))
            continue
        found[attr] = letters[value]
    for attr, key, _ in POSITIONS:
        if attr not in found and not any(p.field == key for p in problems):
            problems.append(Problem("missing", file=str(p), field=key))
    if problems:
        raise ValidationError(problems)
    return SndlibModel(**found)


def load_model(model: str | Path) -> SndlibModel:
    """A model from a code (``U-U-M-N-C-A-N-N``) or a model-file path."""
    text = str(model)
    if Path(text).suffix.lower() == ".txt" or Path(text).exists():
        return parse_model_file(text)
    return parse_model_code(text)
