"""What the API refuses beyond each task's own option model: server paths, network addresses,
non-finite numbers and deep nesting in anything that arrives over HTTP.

The CLI user owns the machine and may name local files (``--model-file``, a plan file) or a Dask
scheduler (``--scheduler``); an API caller may not. The Dask scheduler of API jobs is server
configuration (``BACKBONE_DASK_SCHEDULER``, see :func:`server_job_options`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from backbone.errors import Problem, ValidationError

SERVER_ONLY_OPTIONS: dict[str, str] = {
    "model_file": "names a file on the server; send the SNDlib model code in 'model' "
                  "(the CLI's --model-file reads a local file and sends its code)",
    "scheduler": "is a network address; the Dask scheduler of API jobs is server configuration "
                 "(BACKBONE_DASK_SCHEDULER), never a job option",
    "plan_file": "names a file on the server; send the plan's text in 'plan_text'",
    "baseline": "names a folder on the server; compare two plan jobs with GET /v1/jobs/{id}/diff?against=...",
}
"""Option names (at any depth of a job's options) the API rejects, with the reason."""

SERVER_ONLY_META: dict[tuple[str, ...], str] = {
    ("sndlib", "file"): "names a file on the server; an SNDlib scenario carries its design data in "
                        "meta.sndlib.links / meta.sndlib.demands",
}
"""Scenario ``meta`` paths the API rejects, with the reason."""

MAX_DEPTH = 32
"""Deepest nesting of objects/arrays accepted in job options and scenario ``meta``."""


def json_problems(value: Any, table: str, prefix: str = "", max_depth: int = MAX_DEPTH) -> list[Problem]:
    """Non-finite numbers and nesting deeper than ``max_depth`` in a JSON value, each naming its
    dotted path (iterative: no recursion however deep the value is)."""
    problems: list[Problem] = []
    stack: list[tuple[Any, str, int]] = [(value, prefix, 0)]
    while stack and len(problems) < 50:
        v, path, depth = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            problems.append(Problem(f"{v} is not allowed (numbers must be finite)", table=table, field=path))
        elif isinstance(v, dict | list):
            if depth >= max_depth:
                problems.append(Problem(f"nested deeper than {max_depth} levels", table=table, field=path))
                continue
            items = v.items() if isinstance(v, dict) else enumerate(v)
            stack += [(x, f"{path}.{k}" if path else str(k), depth + 1) for k, x in items]
    return problems


def _named_anywhere(value: Any, names: Mapping[str, str], table: str) -> list[Problem]:
    problems: list[Problem] = []
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, path = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                where = f"{path}.{k}" if path else str(k)
                if k in names and x is not None:
                    problems.append(Problem(f"{k} {names[k]}", table=table, field=where))
                stack.append((x, where))
        elif isinstance(v, list):
            stack += [(x, f"{path}.{i}" if path else str(i)) for i, x in enumerate(v)]
    return problems


def check_job_options(options: dict[str, Any]) -> None:
    """Refuse job options that name a server path or address, or hold NaN/Infinity or deep nesting.

    Raises
    ------
    ValidationError
        One problem per offending option, ``table="options"`` and the dotted option name as field.
    """
    problems = json_problems(options, "options")
    if not problems:
        problems = _named_anywhere(options, SERVER_ONLY_OPTIONS, "options")
    if problems:
        raise ValidationError(problems)


def check_scenario_document(doc: Mapping[str, Any], file: str) -> None:
    """Refuse a scenario whose ``meta`` names a server path or holds NaN/Infinity or deep nesting.

    Raises
    ------
    ValidationError
        Naming ``meta.<path>``.
    """
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        return
    problems = [Problem(p.message, file=file, table="meta", field=f"meta.{p.field}" if p.field else "meta")
                for p in json_problems(meta, "meta")]
    for path, reason in SERVER_ONLY_META.items():
        node: Any = meta
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            problems.append(Problem(f"meta.{'.'.join(path)} {reason}", file=file, table="meta",
                                    field="meta." + ".".join(path)))
    if problems:
        raise ValidationError(problems)


def server_job_options(kind: str, options: Mapping[str, Any], dask_scheduler: str,
                       dask_timeout_s: float = 10.0) -> dict[str, Any]:
    """A job's options as its worker runs them: with a server Dask scheduler, the failure sweeps run on it.

    A ``failures`` job, and the ``failures`` stage of a ``plan`` or ``roadmap`` job (whose options every sweep of
    that job uses: the stage itself, the survivable design's sweeps, the roadmap's periods), get ``engine: dask``,
    the scheduler and ``scheduler_timeout_s`` unless they ask for ``engine: local`` or ``serial`` (then they run on
    the job's own processes, as without a scheduler). Without a scheduler the options are returned unchanged.
    """
    out = dict(options)
    if not dask_scheduler:
        return out
    on_cluster = {"engine": "dask", "scheduler": dask_scheduler, "scheduler_timeout_s": dask_timeout_s}
    if kind == "failures" and out.get("engine", "dask") == "dask":
        out.update(on_cluster)
    elif kind in ("plan", "roadmap"):
        stage = out.get("failures")
        if stage is None:
            out["failures"] = on_cluster
        elif isinstance(stage, dict) and stage.get("engine", "dask") == "dask":
            out["failures"] = {**stage, **on_cluster}
    return out
