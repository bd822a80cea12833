"""Scenario input and output.

:func:`load_scenario` reads every supported format (the canonical folder/YAML/JSON, SNDlib
native ``.txt``, Topology Zoo GraphML, networkx node-link JSON as TopoHub ships it) and returns a
validated :class:`~backbone.model.Network`; :func:`save_scenario` writes the canonical folder.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from backbone.errors import NotFoundError, Problem, ValidationError, one_line
from backbone.io.scenario import (
    load_folder,
    network_from_dict,
    network_to_dict,
    save_folder,
    save_json,
)
from backbone.model import Network
from backbone.paths import default_scenario_path
from backbone.validate import srlg_coverage_warning

logger = logging.getLogger(__name__)

__all__ = ["detect_format", "load_scenario", "network_from_dict", "network_to_dict", "save_json",
           "save_scenario"]

FORMATS = ("folder", "canonical-json", "canonical-yaml", "sndlib", "graphml", "node-link")


def detect_format(path: Path) -> str:
    """Name the format of a scenario file or folder (see :data:`FORMATS`)."""
    if path.is_dir():
        return "folder"
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "folder" if path.name == "scenario.yaml" or _yaml_has_tables(path) else "canonical-yaml"
    if suffix == ".txt":
        return "sndlib"
    if suffix == ".graphml":
        return "graphml"
    if suffix == ".json":
        return _json_format(path)
    raise ValidationError(Problem(
        f"unknown scenario format {suffix!r} (expected a folder, .yaml, .json, SNDlib .txt or .graphml)",
        file=str(path)))


def _json_format(path: Path) -> str:
    """``node-link`` for a top-level object with ``nodes`` and ``links``/``edges`` (and no
    ``sites``), else ``canonical-json``. The whole document is parsed: TopoHub files put a large
    ``graph`` object (demands) before ``nodes``, so a look at the head is not enough."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return "canonical-json"  # its loader reports the syntax error
    if isinstance(doc, dict) and "sites" not in doc and "nodes" in doc and ("links" in doc or "edges" in doc):
        return "node-link"
    return "canonical-json"


def _yaml_has_tables(path: Path) -> bool:
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return True  # let the folder loader report it
    return isinstance(doc, dict) and "tables" in doc


def load_scenario(path: str | Path | None = None) -> Network:
    """Load a scenario in any supported format; ``None`` loads the shipped global scenario.

    Raises
    ------
    NotFoundError
        When the path does not exist.
    ValidationError
        When the content is malformed (every problem listed with file, record and field).

    A scenario with links in no SRLG loads, with a warning (:func:`backbone.validate.srlg_coverage_warning`).
    """
    p = default_scenario_path() if path is None else Path(path)
    if not p.exists():
        raise NotFoundError(f"{p}: no such file or folder")
    net = _load(p)
    warning = srlg_coverage_warning(net)
    if warning:
        logger.warning("%s: %s", p, warning)
    return net


def _load(p: Path) -> Network:
    """The scenario at ``p``, by its detected format."""
    fmt = detect_format(p)
    if fmt == "folder":
        return load_folder(p)
    if fmt in ("canonical-json", "canonical-yaml"):
        return network_from_dict(_read_doc(p, fmt), file=str(p))
    if fmt == "sndlib":
        from backbone.io.sndlib import load_sndlib

        return load_sndlib(p)
    if fmt == "graphml":
        from backbone.io.graphml import load_graphml

        return load_graphml(p)
    from backbone.io.nodelink import load_node_link

    return load_node_link(p)


def _read_doc(p: Path, fmt: str) -> Any:
    import yaml

    text = p.read_text(encoding="utf-8", errors="replace")
    try:
        if fmt == "canonical-json":
            return json.loads(text)
        return yaml.safe_load(text)
    except (json.JSONDecodeError, ValueError, yaml.YAMLError) as exc:
        raise ValidationError(Problem(f"not valid {fmt.split('-')[1].upper()}: {one_line(exc)}", file=str(p),
                                      record=syntax_error_line(exc))) from None


def syntax_error_line(exc: BaseException) -> str:
    """``line N`` of a JSON or YAML syntax error (empty when the parser does not say)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}"
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f"line {mark.line + 1}" if mark is not None else ""


def save_scenario(net: Network, path: str | Path) -> Path:
    """Write ``net`` as a canonical scenario folder (or canonical JSON when ``path`` ends in .json)."""
    p = Path(path)
    if p.suffix.lower() == ".json":
        return save_json(net, p)
    return save_folder(net, p)
