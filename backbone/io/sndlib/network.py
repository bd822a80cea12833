"""SNDlib native network files: a full-fidelity parser into an :class:`SndlibNetwork` of tables keyed by id.

:func:`parse_sndlib` reads every section of an SNDlib 1.0 network file (``META``, ``NODES``,
``LINKS`` with pre-installed capacity/cost, routing cost, setup cost and module list,
``DEMANDS`` with routing unit, value and hop limit, and the optional ``ADMISSIBLE_PATHS``).
Format reference: SNDlib's "Network input file" page (Zuse Institute Berlin). The units, coordinate
and strictness rules are in the :mod:`backbone.io.sndlib` docstring.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backbone.errors import Problem, ValidationError

logger = logging.getLogger(__name__)

UNIT_TO_GBPS: dict[str, float] = {
    "BITSPERSEC": 1e-9,
    "BITPERSEC": 1e-9,
    "KBITPERSEC": 1e-6,
    "MBITPERSEC": 1e-3,
    "GBITPERSEC": 1.0,
}
"""``META unit`` value -> Gbps per SNDlib capacity unit (no unit: 1 unit = 1 Gbps)."""

SECTIONS = ("META", "NODES", "LINKS", "DEMANDS", "ADMISSIBLE_PATHS")


@dataclass(frozen=True)
class SndlibNetwork:
    """Everything an SNDlib network file says, as tables keyed by id.

    Attributes
    ----------
    name
        Network name (file stem).
    meta
        ``META`` attributes (``unit``, ``origin``, ...), plain strings.
    nodes
        Index ``id``; columns ``x``, ``y`` (as written: lon/lat or planar), ``line``.
    links
        Index ``id``; ``source``, ``target``, ``preinstalled_capacity``, ``preinstalled_cost``,
        ``routing_cost``, ``setup_cost``, ``line``.
    modules
        Long table, one row per installable module: ``link``, ``capacity`` (``inf`` for
        ``UNLIMITED``), ``cost`` (per module), in file order.
    demands
        Index ``id``; ``source``, ``target``, ``routing_unit``, ``demand_value``,
        ``max_path_length`` (NaN = UNLIMITED), ``line``.
    paths
        Admissible paths: ``demand``, ``path``, ``links`` (tuple of link ids); empty when the
        section is absent.
    file
        Path it was read from.
    """

    name: str
    meta: dict[str, str]
    nodes: pd.DataFrame
    links: pd.DataFrame
    modules: pd.DataFrame
    demands: pd.DataFrame
    paths: pd.DataFrame
    file: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def gbps_per_unit(self) -> float:
        """Gbps per SNDlib capacity unit, from ``META unit`` (1.0 when absent)."""
        unit = self.meta.get("unit", "").strip().upper()
        return UNIT_TO_GBPS.get(unit, 1.0)

    @property
    def demand_units(self) -> np.ndarray:
        """Demand volume in SNDlib capacity units (``routing_unit x demand_value``)."""
        return (self.demands["routing_unit"] * self.demands["demand_value"]).to_numpy(float)


# ---------------------------------------------------------------------- tokenizer
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class _Tok:
    text: str
    line: int


def _tokenize(lines: list[str], start: int) -> list[_Tok]:
    toks: list[_Tok] = []
    for n, raw in enumerate(lines[start:], start=start + 1):
        text = raw.split("#", 1)[0]
        toks += [_Tok(m.group(0), n) for m in _TOKEN.finditer(text)]
    return toks


class _Parser:
    """A cursor over tokens that collects problems instead of stopping at the first one."""

    def __init__(self, toks: list[_Tok], file: str) -> None:
        self.toks, self.i, self.file = toks, 0, file
        self.problems: list[Problem] = []
        self.closed = False  # whether the section just read ended with its own ')'

    def close(self, last: _Tok | None) -> None:
        """Note how a section loop ended: on its ``)`` (closed) or at the end of the tokens."""
        self.closed = last is not None and last.text == ")"

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> _Tok | None:
        t = self.peek()
        self.i += t is not None
        return t

    def problem(self, msg: str, table: str = "", record: str = "", field: str = "", line: int | None = None) -> None:
        rec = f"line {line}" + (f" ({record})" if record else "") if line else record
        self.problems.append(Problem(msg, file=self.file, table=table, record=rec, field=field))

    def expect(self, text: str, table: str, record: str, field: str) -> bool:
        t = self.take()
        if t is None or t.text != text:
            line = t.line if t else (self.toks[-1].line if self.toks else 0)
            self.problem(f"expected {text!r}" + ("" if t else " before the end of the file"), table, record, field,
                         line)
            return False
        return True

    def group(self, table: str, record: str, field: str) -> list[_Tok] | None:
        """``( tok* )`` without nesting; None (and a problem) when malformed."""
        if not self.expect("(", table, record, field):
            return None
        out: list[_Tok] = []
        while (t := self.take()) is not None and t.text != ")":
            if t.text == "(":
                self.problem("unexpected '('", table, record, field, t.line)
                return None
            out.append(t)
        if t is None:
            self.problem("unclosed '('", table, record, field, out[-1].line if out else None)
            return None
        return out

    def skip_to_line_end(self, line: int) -> None:
        while (t := self.peek()) is not None and t.line == line and t.text != ")":
            self.take()

    def number(self, tok: _Tok | None, table: str, record: str, field: str, allow_unlimited: bool = False) -> float:
        if tok is None:
            self.problem("missing value", table, record, field)
            return math.nan
        if allow_unlimited and tok.text.upper() == "UNLIMITED":
            return math.inf
        try:
            x = float(tok.text)
        except ValueError:
            self.problem("expected a number", table, record, field, tok.line)
            return math.nan
        if not math.isfinite(x):
            self.problem("expected a finite number", table, record, field, tok.line)
            return math.nan
        if x < 0:
            self.problem(f"must be >= 0, got {x:g}", table, record, field, tok.line)
        return x


# ---------------------------------------------------------------------- parser
def parse_sndlib(path: str | Path, text: str | None = None) -> SndlibNetwork:
    """Parse an SNDlib native network file into an :class:`SndlibNetwork`.

    Parameters
    ----------
    path
        The file (also used in problem messages).
    text
        File content (read from ``path`` when None).

    Raises
    ------
    ValidationError
        Listing every problem found, each with file, section, ``line N (record)`` and field.
        Messages never quote the file's text (only record ids), so a problem list cannot leak
        the content of a file that is not an SNDlib file.
    """
    p = Path(path)
    file = str(p)
    if text is None:
        text = p.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    problems: list[Problem] = []
    if not lines or not lines[0].lstrip().startswith("?SNDlib"):
        problems.append(Problem("not an SNDlib native file (first line must start with '?SNDlib')", file=file,
                                record="line 1"))
        raise ValidationError(problems)
    if "type: network" not in lines[0] and "type:network" not in lines[0].replace(" ", ""):
        problems.append(Problem("not an SNDlib network file (line 1 must say 'type: network')", file=file,
                                record="line 1"))
        raise ValidationError(problems)
    meta, body_start = _parse_meta(lines)
    par = _Parser(_tokenize(lines, 0), file)
    par.toks = [t for t in par.toks if t.line > max(body_start, 1)]
    found: dict[str, Any] = {}
    previous: tuple[str, int] | None = None  # (section, line of its closing ')')
    if meta.get("") == _UNCLOSED:
        meta.pop("")
        par.problem("section META is not closed: the file ends before its ')' (the file looks truncated)",
                    table="meta", record="META", line=_meta_line(lines))
    while (t := par.take()) is not None:
        name = t.text
        if name not in SECTIONS or name == "META":
            after = (f" after section {previous[0]} closed at line {previous[1]} (unbalanced parentheses: "
                     f"an extra ')' in {previous[0]}?)") if previous else ""
            par.problem(f"not a section name{after}; expected a section ({', '.join(SECTIONS[1:])})",
                        table=previous[0].lower() if previous else "", record=previous[0] if previous else "",
                        line=t.line)
            break
        if name in found:
            par.problem(f"section {name} appears twice", line=t.line)
        if not par.expect("(", name, "", ""):
            break
        found[name] = {"NODES": _nodes, "LINKS": _links, "DEMANDS": _demands, "ADMISSIBLE_PATHS": _paths}[name](par)
        if not par.closed:
            end = par.toks[-1].line if par.toks else t.line
            par.problem(f"section {name} is not closed: the file ends at line {end} before its ')' (the file "
                        "looks truncated or its parentheses are unbalanced)", table=name.lower(), record=name,
                        line=t.line)
            break
        previous = (name, par.toks[par.i - 1].line)
    for sec in ("NODES", "LINKS", "DEMANDS"):
        if sec not in found:
            par.problem(f"missing section {sec}", table=sec.lower())
    nodes = found.get("NODES", _empty(["x", "y", "line"]))
    links, modules = found.get("LINKS", (_empty(["source", "target"]), pd.DataFrame(columns=["link", "capacity", "cost"])))
    demands = found.get("DEMANDS", _empty(["source", "target", "routing_unit", "demand_value"]))
    paths = found.get("ADMISSIBLE_PATHS", pd.DataFrame(columns=["demand", "path", "links", "line"]))
    problems += par.problems + _check_refs(nodes, links, demands, paths, file) + check_coordinates(nodes, file)
    if problems:
        raise ValidationError(problems)
    return SndlibNetwork(p.stem, meta, nodes, links, modules, demands, paths, file=file)


def _empty(cols: list[str]) -> pd.DataFrame:
    df = pd.DataFrame(columns=cols)
    df.index.name = "id"
    return df


_UNCLOSED = "\x00unclosed"
"""Marker :func:`_parse_meta` leaves under the key ``""`` when META has no closing ``)``."""


def _meta_line(lines: list[str]) -> int:
    """1-based line of the ``META`` keyword (0 when absent)."""
    return next((n for n, raw in enumerate(lines, start=1) if raw.split("#", 1)[0].strip().startswith("META")), 0)


def _parse_meta(lines: list[str]) -> tuple[dict[str, str], int]:
    """``META ( key = value ... )`` is free text; returns (attributes, last line index of META)."""
    meta: dict[str, str] = {}
    for n, raw in enumerate(lines):
        if raw.split("#", 1)[0].strip().startswith("META"):
            for m, inner in enumerate(lines[n + 1:], start=n + 1):
                s = inner.strip()
                if s.startswith(")"):
                    return meta, m + 1
                if "=" in s and not s.startswith("#"):
                    key, value = s.split("=", 1)
                    meta[key.strip()] = value.strip()
            meta[""] = _UNCLOSED
            return meta, len(lines)
        if raw.split("#", 1)[0].strip().startswith(("NODES", "LINKS", "DEMANDS")):
            break
    return meta, 0


def _nodes(par: _Parser) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    while (t := par.take()) is not None and t.text != ")":
        rid = t.text
        g = par.group("nodes", rid, "coordinates")
        if g is None:
            par.skip_to_line_end(t.line)
            continue
        if len(g) != 2:
            par.problem(f"expected '( x y )', got {len(g)} value(s)", "nodes", rid, "coordinates", t.line)
            continue
        x = _signed(par, g[0], rid, "x")
        y = _signed(par, g[1], rid, "y")
        while (o := par.peek()) is not None and o.text == "(" and o.line == t.line:  # design ids / options
            par.group("nodes", rid, "options")
        rows.append({"id": rid, "x": x, "y": y, "line": t.line})
    par.close(t)
    return _frame(par, rows, "nodes")


def _signed(par: _Parser, tok: _Tok, rid: str, fld: str) -> float:
    try:
        x = float(tok.text)
    except ValueError:
        par.problem("expected a number", "nodes", rid, fld, tok.line)
        return math.nan
    if not math.isfinite(x):
        par.problem("expected a finite number", "nodes", rid, fld, tok.line)
    return x


def _links(par: _Parser) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows: list[dict[str, Any]] = []
    mods: list[dict[str, Any]] = []
    fields = ("preinstalled_capacity", "preinstalled_cost", "routing_cost", "setup_cost")
    while (t := par.take()) is not None and t.text != ")":
        rid = t.text
        ends = par.group("links", rid, "endpoints")
        if ends is None or len(ends) != 2:
            if ends is not None:
                par.problem(f"expected '( source target )', got {len(ends)} id(s)", "links", rid, "endpoints", t.line)
            par.skip_to_line_end(t.line)
            continue
        row: dict[str, Any] = {"id": rid, "source": ends[0].text, "target": ends[1].text, "line": t.line}
        for f in fields:
            nxt = par.peek()
            if nxt is None or nxt.text in ("(", ")"):
                par.problem("missing value", "links", rid, f, t.line)
                row[f] = math.nan
                continue
            row[f] = par.number(par.take(), "links", rid, f)
        g = par.group("links", rid, "modules")
        if g is None:
            par.skip_to_line_end(t.line)
            continue
        if len(g) % 2:
            par.problem(f"module list needs capacity/cost pairs, got {len(g)} value(s)", "links", rid, "modules",
                        t.line)
        for k in range(0, len(g) - 1, 2):
            cap = par.number(g[k], "links", rid, "modules", allow_unlimited=True)
            cost = par.number(g[k + 1], "links", rid, "modules")
            if cap == 0:
                par.problem("module capacity must be > 0", "links", rid, "modules", t.line)
            mods.append({"link": rid, "capacity": cap, "cost": cost})
        if (o := par.peek()) is not None and o.text == "(":
            par.group("links", rid, "options")
        rows.append(row)
    par.close(t)
    return _frame(par, rows, "links"), pd.DataFrame(mods, columns=["link", "capacity", "cost"])


def _demands(par: _Parser) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    while (t := par.take()) is not None and t.text != ")":
        rid = t.text
        ends = par.group("demands", rid, "endpoints")
        if ends is None or len(ends) != 2:
            if ends is not None:
                par.problem(f"expected '( source target )', got {len(ends)} id(s)", "demands", rid, "endpoints",
                            t.line)
            par.skip_to_line_end(t.line)
            continue
        row: dict[str, Any] = {"id": rid, "source": ends[0].text, "target": ends[1].text, "line": t.line}
        values: list[_Tok] = []
        while (nxt := par.peek()) is not None and nxt.line == t.line and nxt.text not in ("(", ")"):
            values.append(par.take())  # type: ignore[arg-type]
        if len(values) not in (2, 3):
            par.problem("expected 'routing_unit demand_value max_path_length', got "
                        f"{len(values)} value(s)", "demands", rid, "demand_value", t.line)
        row["routing_unit"] = par.number(values[0] if values else None, "demands", rid, "routing_unit")
        row["demand_value"] = par.number(values[1] if len(values) > 1 else None, "demands", rid, "demand_value")
        hop = par.number(values[2], "demands", rid, "max_path_length", allow_unlimited=True) \
            if len(values) > 2 else math.inf
        row["max_path_length"] = math.nan if math.isinf(hop) else hop
        if row.get("routing_unit") == 0:
            par.problem("routing unit must be > 0", "demands", rid, "routing_unit", t.line)
        if (o := par.peek()) is not None and o.text == "(":
            par.group("demands", rid, "options")
        rows.append(row)
    par.close(t)
    return _frame(par, rows, "demands")


def _paths(par: _Parser) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    par.closed = True  # a malformed entry below has its own problem; only running out of file adds one
    while (t := par.take()) is not None and t.text != ")":
        did = t.text
        if not par.expect("(", "admissible_paths", did, "paths"):
            return pd.DataFrame(rows, columns=["demand", "path", "links", "line"])
        while (pt := par.take()) is not None and pt.text != ")":
            g = par.group("admissible_paths", f"{did}/{pt.text}", "links")
            if g is None:
                return pd.DataFrame(rows, columns=["demand", "path", "links", "line"])
            if not g:
                par.problem("empty path", "admissible_paths", f"{did}/{pt.text}", "links", pt.line)
            rows.append({"demand": did, "path": pt.text, "links": tuple(x.text for x in g), "line": pt.line})
        if pt is None:
            break
    par.close(t)
    return pd.DataFrame(rows, columns=["demand", "path", "links", "line"])


def _frame(par: _Parser, rows: list[dict[str, Any]], table: str) -> pd.DataFrame:
    seen: dict[str, int] = {}
    for r in rows:
        if r["id"] in seen:
            par.problem(f"duplicate id (first at line {seen[r['id']]})", table, r["id"], "id", r["line"])
        else:
            seen[r["id"]] = r["line"]
    df = pd.DataFrame(rows)
    if df.empty:
        return _empty([])
    return df.drop_duplicates("id").set_index("id")


def _check_refs(nodes: pd.DataFrame, links: pd.DataFrame, demands: pd.DataFrame, paths: pd.DataFrame,
                file: str) -> list[Problem]:
    problems: list[Problem] = []
    known = set(nodes.index)
    for table, df in (("links", links), ("demands", demands)):
        if df.empty or "source" not in df.columns:
            continue
        for rid, row in df.iterrows():
            rec = f"line {row['line']} ({rid})"
            for fld in ("source", "target"):
                if row[fld] not in known:
                    problems.append(Problem(f"unknown node {row[fld]!r}", file=file, table=table, record=rec, field=fld))
            if row["source"] == row["target"]:
                problems.append(Problem(f"both ends are {row['source']!r}", file=file, table=table, record=rec,
                                        field="target"))
    if not paths.empty:
        link_ids, demand_ids = set(links.index), set(demands.index)
        for row in paths.itertuples():
            rec = f"line {row.line} ({row.demand}/{row.path})"
            if row.demand not in demand_ids:
                problems.append(Problem(f"unknown demand {row.demand!r}", file=file, table="admissible_paths",
                                        record=rec, field="demand"))
            for lk in row.links:
                if lk not in link_ids:
                    problems.append(Problem(f"unknown link {lk!r}", file=file, table="admissible_paths", record=rec,
                                            field="links"))
    return problems


def check_coordinates(nodes: pd.DataFrame, file: str) -> list[Problem]:
    """Geographic files must stay within lon [-180, 180] x lat [-90, 90].

    A file is *planar* (drawing coordinates, rescaled by :func:`node_positions`) when more than
    half of its nodes lie outside that box -- the planar SNDlib instances (atlanta, di-yuan,
    norway, ta2, ...) have at most 2 of their nodes inside it. Otherwise it is geographic, and
    each node outside the box is a problem naming the node, its line and the field (``x``
    longitude / ``y`` latitude).
    """
    if nodes.empty or not {"x", "y"} <= set(nodes.columns):
        return []
    x, y = nodes["x"].to_numpy(float), nodes["y"].to_numpy(float)
    bad_x, bad_y = ~(np.abs(x) <= 180), ~(np.abs(y) <= 90)
    finite = np.isfinite(x) & np.isfinite(y)
    outside = (bad_x | bad_y) & finite
    if not outside.any() or outside.sum() * 2 > finite.sum():
        return []
    problems = []
    for rid, line, xv, yv, bx, by in zip(nodes.index, nodes["line"], x, y, bad_x & finite, bad_y & finite,
                                         strict=True):
        rec = f"line {line} ({rid})"
        if bx:
            problems.append(Problem(f"longitude {xv:g} is outside [-180, 180] (the other nodes are geographic)",
                                    file=file, table="nodes", record=rec, field="lon"))
        if by:
            problems.append(Problem(f"latitude {yv:g} is outside [-90, 90] (the other nodes are geographic)",
                                    file=file, table="nodes", record=rec, field="lat"))
    return problems
