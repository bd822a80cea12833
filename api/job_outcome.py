"""What a finished job says about its answer: the progress message (:func:`outcome_message`) and the status line
(:func:`status_detail`), which name a best-effort (``partial``) answer and one that stopped at its time limit, and
the result files it lists (:func:`listed_files`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["SAFE_FILE_NAME", "TIME_LIMIT_NOTE", "TIME_LIMIT_STATUS", "listed_files", "outcome_message",
           "partial_reasons", "status_detail", "time_limited"]

TIME_LIMIT_STATUS = "time_limit"
"""The solver status of an answer that stopped at its time limit (not proven optimal)."""

TIME_LIMIT_NOTE = "time limit: answer not proven"
"""What a job's message and status detail say when its answer hit its time limit."""


def time_limited(summary: Mapping[str, Any]) -> list[str]:
    """What in a finished task's summary stopped at its time limit: ``""`` for the answer itself (the summary's
    ``status``), and the name of each stage of a plan or part of the answer (``impact``) whose status is
    ``time_limit``; empty when nothing did."""
    hit = [""] if summary.get("status") == TIME_LIMIT_STATUS else []
    hit += [str(r.get("stage")) for r in summary.get("stages") or []
            if isinstance(r, Mapping) and r.get("status") == TIME_LIMIT_STATUS]
    impact = summary.get("impact")
    if isinstance(impact, Mapping) and impact.get("status") == TIME_LIMIT_STATUS:
        hit.append("impact")
    return hit


def outcome_message(summary: Mapping[str, Any]) -> str:
    """The job message of a finished task: ``done``, or ``partial: ...`` naming what a best-effort
    result left out (a placement that could not serve every metro keeps its result and files); either followed by
    ``(time limit: answer not proven)`` when the answer, or a named stage of it, stopped at its time limit."""
    hit = time_limited(summary)
    limit = ""
    if hit:
        parts = [p for p in hit if p]
        limit = f" ({TIME_LIMIT_NOTE}" + (f" in {', '.join(parts)}" if parts and "" not in hit else "") + ")"
    if summary.get("status") != "partial":
        return "done" + limit
    return f"partial: {'; '.join(partial_reasons(summary)) or 'not all demand is served'}{limit}"


def _named(rows: Any, key: str) -> list[str]:
    return sorted({str(r.get(key)) for r in rows or [] if isinstance(r, Mapping)})


def partial_reasons(summary: Mapping[str, Any]) -> list[str]:
    """What a ``partial`` summary left out, as its own fields say: unserved metros (placement, plan), training jobs
    left unplaced (roadmap), failure states not carried (a plan's ``survivability.violated``, a roadmap's per
    period); empty when none of these is given."""
    out = []
    if metros := _named(summary.get("unserved_metros"), "metro"):
        out.append(f"unserved metros: {', '.join(metros)}")
    if jobs := _named(summary.get("jobs_unplaced"), "job"):
        out.append(f"jobs unplaced: {', '.join(jobs)}")
    survivability = summary.get("survivability")
    if isinstance(survivability, Mapping) and survivability.get("violated"):
        out.append(f"failure states not carried: {len(survivability['violated'])}")
    periods = [(str(p.get("period")), len(p["survivability"].get("violated") or []))
               for p in summary.get("periods") or []
               if isinstance(p, Mapping) and isinstance(p.get("survivability"), Mapping)]
    if short := [f"{n} in {label}" for label, n in periods if n]:
        out.append(f"failure states not carried: {', '.join(short)}")
    return out


def status_detail(status: str, message: str | None) -> str:
    """A job's status line: its status, and for a succeeded job what its answer's message qualifies it with
    (``succeeded (time limit: answer not proven)``, ``succeeded (partial: unserved metros: lagos)``)."""
    text = message or ""
    if status != "succeeded" or text == "done" or not text:
        return status
    if text.startswith("done (") and text.endswith(")"):
        return f"{status} ({text[len('done ('):-1]})"
    return f"{status} ({text})" if text.startswith("partial") else status


SAFE_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}(/[A-Za-z0-9][A-Za-z0-9._-]{0,200}){0,3}$")
"""Result file names a job may expose (relative, no ``..``, no absolute paths)."""


def listed_files(names: list[str], folder: Path) -> list[str]:
    """The result files a job lists, from the names its task recorded: a folder (``scenario_after/``) becomes
    the files under it (``scenario_after/sites.csv``, ...), so each can be listed and fetched; names that are not
    :data:`SAFE_FILE_NAME` (or climb with ``..``) are dropped, symlinks are never followed."""
    out: list[str] = []
    for name in names:
        if name.endswith("/"):
            base = folder / name.rstrip("/")
            if base.is_dir() and not base.is_symlink():
                out.extend(sorted(p.relative_to(folder).as_posix() for p in base.rglob("*")
                                  if p.is_file() and not p.is_symlink()))
        else:
            out.append(name)
    return [f for f in out if SAFE_FILE_NAME.match(f) and ".." not in f.split("/")]
