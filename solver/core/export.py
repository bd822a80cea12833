"""Write a :class:`~solver.problem.LinearProgram` as MPS or LP files for other solvers.

Planners who run commercial solvers (Gurobi, CPLEX, Xpress) take the exact program we would
solve. The model goes through highspy in one call (arrays, not rows) and HiGHS writes the file;
columns and rows are named from the blocks' labels (``flow_d12_p3``, ``capacity_lon-par``),
sanitised to the characters every format accepts and made unique.

Example
-------
>>> write_mps(lp, "te.mps")            # doctest: +SKIP
>>> write_lp(lp, "te.lp")              # doctest: +SKIP
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pandas as pd

from backbone.solver.backends._stdio import stdout_to_stderr
from backbone.solver.backends.highs import highs_lp
from backbone.solver.core.problem import LinearProgram

logger = logging.getLogger(__name__)

MAX_NAME_LENGTH = 200
"""Longest name written (the LP format allows 255 characters)."""

_BAD = re.compile(r"[^A-Za-z0-9_]+")


def _label_text(label: Any) -> str:
    if isinstance(label, tuple):
        return "_".join(str(x) for x in label)
    return str(label)


def sanitise_names(block: str, index: pd.Index) -> list[str]:
    """``{block}_{label}`` per label, with anything but letters, digits and ``_`` replaced by ``_``."""
    prefix = _BAD.sub("_", block).strip("_") or "b"
    if not prefix[0].isalpha() or (prefix[0] in "eE" and len(prefix) > 1 and prefix[1].isdigit()):
        prefix = "v_" + prefix
    return [f"{prefix}_{_BAD.sub('_', _label_text(lab)).strip('_')}"[:MAX_NAME_LENGTH] for lab in index]


def _unique(names: list[str]) -> list[str]:
    """Make names unique by suffixing the position of later duplicates."""
    seen: set[str] = set()
    out = []
    for i, n in enumerate(names):
        if n in seen:
            n = f"{n[:MAX_NAME_LENGTH - 12]}_{i}"
        seen.add(n)
        out.append(n)
    return out


def column_names(lp: LinearProgram) -> list[str]:
    """Sanitised, unique column names in column order."""
    names: list[str] = []
    for block in sorted(lp.variables.values(), key=lambda b: b.start):
        names += sanitise_names(block.name, block.index)
    return _unique(names)


def row_names(lp: LinearProgram) -> list[str]:
    """Sanitised, unique row names in row order."""
    names: list[str] = []
    for block in sorted(lp.constraints.values(), key=lambda b: b.start):
        names += sanitise_names(block.name, block.index)
    return _unique(names)


def _highs_with_model(lp: LinearProgram) -> Any:
    import highspy

    with stdout_to_stderr():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    model = highs_lp(lp)
    model.col_names_ = column_names(lp)
    model.row_names_ = row_names(lp)
    with stdout_to_stderr():
        h.passModel(model)
    return h


def _write(lp: LinearProgram, path: str | Path, suffix: str) -> Path:
    from backbone.errors import SolverError

    path = Path(path)
    if path.suffix.lower() != suffix:
        raise SolverError(f"expected a {suffix} file name, got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    h = _highs_with_model(lp)
    with stdout_to_stderr():
        status = h.writeModel(str(path))
    import highspy

    if status == highspy.HighsStatus.kError or not path.exists():
        raise SolverError(f"HiGHS could not write {path}")
    logger.info("wrote %s (%d rows, %d columns)", path, lp.n_rows, lp.n_cols)
    return path


def write_mps(lp: LinearProgram, path: str | Path) -> Path:
    """Write ``lp`` as a (free-format) MPS file; returns the path.

    Raises
    ------
    SolverError
        When highspy is missing or cannot write the file.
    """
    return _write(lp, path, ".mps")


def write_lp(lp: LinearProgram, path: str | Path) -> Path:
    """Write ``lp`` in CPLEX LP format; returns the path.

    Raises
    ------
    SolverError
        When highspy is missing or cannot write the file.
    """
    return _write(lp, path, ".lp")
