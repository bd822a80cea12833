"""What ``backbone diff`` compares: a scenario (folder or file), a plan output folder or a roadmap output folder.

A plan folder is recognised by its ``plan.json``, a roadmap folder by its ``roadmap.json``; anything else is read
as a scenario by :func:`backbone.io.load_scenario`. A plan's backbone is its ``scenario_after/`` (the planned
network), a roadmap's the scenario of its last period, so the structural diff compares what would be built.
The plan's JSON documents are kept as read (the same figures ``plan.json`` and the report show).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backbone.errors import NotFoundError, Problem, ValidationError
from backbone.model import Network

__all__ = ["PLAN_DOCUMENTS", "ComparedInput", "InputKind", "load_input"]

logger = logging.getLogger(__name__)

InputKind = Literal["scenario", "plan", "roadmap"]

PLAN_DOCUMENTS: tuple[str, ...] = ("plan", "place", "te", "failures", "design")
"""The JSON documents of a plan folder the diff reads (``<name>.json``); ``plan.json`` is required."""


@dataclass(frozen=True)
class ComparedInput:
    """One side of a comparison.

    Attributes
    ----------
    label
        How the side is named in tables (the path given, or the network's name).
    kind
        ``scenario``, ``plan`` or ``roadmap``.
    network
        The backbone compared structurally (a plan's ``scenario_after``, a roadmap's last period).
    documents
        The result documents by name (``plan``, ``place``, ``te``, ``failures``, ``design``; ``roadmap``),
        as written by the plan or roadmap task; empty for a scenario.
    path
        The folder or file read (None for an in-memory network).
    """

    label: str
    kind: InputKind
    network: Network
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    path: Path | None = None

    def document(self, name: str) -> dict[str, Any]:
        """The document ``name`` (an empty dict when the folder has none)."""
        return self.documents.get(name, {})


def _read_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValidationError(Problem(f"cannot read {path.name}: {exc}", file=str(path))) from None
    if not isinstance(doc, dict):
        raise ValidationError(Problem(f"{path.name} is not a JSON object", file=str(path)))
    return doc


def _load_network(path: Path, what: str) -> Network:
    from backbone.io import load_scenario

    if not path.exists():
        raise ValidationError(Problem(f"{what} has no {path.name}/ (the backbone to compare)", file=str(path.parent)))
    return load_scenario(path)


def _plan_input(path: Path, label: str) -> ComparedInput:
    docs = {name: _read_json(path / f"{name}.json") for name in PLAN_DOCUMENTS if (path / f"{name}.json").is_file()}
    network = _load_network(path / "scenario_after", "the plan folder")
    return ComparedInput(label, "plan", network, docs, path)


def _roadmap_input(path: Path, label: str) -> ComparedInput:
    doc = _read_json(path / "roadmap.json")
    periods = [str(p.get("period")) for p in doc.get("periods") or [] if isinstance(p, dict)]
    if not periods:
        raise ValidationError(Problem("roadmap.json lists no periods", file=str(path / "roadmap.json")))
    network = _load_network(path / "periods" / periods[-1] / "scenario", f"period {periods[-1]}")
    return ComparedInput(label, "roadmap", network, {"roadmap": doc}, path)


def load_input(source: str | Path | Network, label: str | None = None) -> ComparedInput:
    """Read one side of a comparison.

    Parameters
    ----------
    source
        A scenario (folder, ``scenario.yaml``, canonical JSON/YAML or any importable format), a plan output
        folder (``plan.json`` and ``scenario_after/``), a roadmap output folder (``roadmap.json`` and
        ``periods/``; the ``plan.json`` or ``roadmap.json`` file stands for its folder), or a :class:`Network`.
    label
        The side's name in tables (default: the path, or the network's name).

    Returns
    -------
    ComparedInput

    Raises
    ------
    ValidationError
        When the path is missing, or is neither a scenario nor a plan or roadmap folder (one problem naming it).
    """
    if isinstance(source, Network):
        return ComparedInput(label or source.name, "scenario", source)
    path = Path(source)
    label = label or str(source)
    if not path.exists():
        raise ValidationError(Problem("no such file or folder", file=str(path)))
    if path.is_file() and path.name in ("plan.json", "roadmap.json"):
        path = path.parent  # a result document stands for its folder
    if path.is_dir() and (path / "plan.json").is_file():
        return _plan_input(path, label)
    if path.is_dir() and (path / "roadmap.json").is_file():
        return _roadmap_input(path, label)
    try:
        from backbone.io import load_scenario

        return ComparedInput(label, "scenario", load_scenario(path), {}, path)
    except ValidationError:
        raise
    except NotFoundError as exc:
        raise ValidationError(Problem(str(exc), file=str(path))) from None
    except Exception as exc:  # an unreadable file is bad input, not an internal error
        logger.debug("cannot read %s as a scenario", path, exc_info=True)
        raise ValidationError(Problem(f"not a scenario, plan or roadmap folder ({type(exc).__name__}: {exc})",
                                      file=str(path))) from None
