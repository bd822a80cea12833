"""The architecture contracts in pyproject.toml cover every module they are meant to: a new algorithm module in
``solver/`` is listed in the "algorithm modules do not import the planning tasks" contract (or the contract would
silently not check it)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ABOVE_THE_TASKS = {"tasks", "facade"}
"""solver modules allowed to import the tasks: the tasks themselves and the notebook facade (which runs them)."""


def _contract(name_start: str) -> dict:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"].startswith(name_start))


def test_every_algorithm_module_is_forbidden_to_import_the_tasks() -> None:
    contract = _contract("the algorithm modules do not import the planning tasks")
    modules = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "solver").iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    listed = {m.removeprefix("backbone.solver.") for m in contract["source_modules"]}
    assert modules - ABOVE_THE_TASKS - listed == set(), "solver modules missing from the contract"
    assert listed <= modules, "the contract names modules that do not exist"
    assert {"backbone.solver.tasks", "backbone.solver.facade"} <= set(contract["forbidden_modules"])
    assert "ignore_imports" not in contract  # no algorithm module reaches the tasks, not even the roadmap
