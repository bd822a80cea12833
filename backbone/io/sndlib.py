"""SNDlib native network format: a full-fidelity parser and the mapping to a :class:`Network`.

:func:`parse_sndlib` reads every section of an SNDlib 1.0 network file (``META``, ``NODES``,
``LINKS`` with pre-installed capacity/cost, routing cost, setup cost and module list,
``DEMANDS`` with routing unit, value and hop limit, and the optional ``ADMISSIBLE_PATHS``) into
an :class:`SndlibNetwork` of tables keyed by id. :func:`load_sndlib` maps it onto the backbone's
tables through :func:`backbone.validate.build_network`. Format reference: SNDlib's
"Network input file" page (Zuse Institute Berlin).

Mapping rules (documented once, here)
-------------------------------------
* **Units.** ``META unit`` converts capacities and demands to Gbps: ``BITSPERSEC`` x 1e-9,
  ``KBITPERSEC`` x 1e-6, ``MBITPERSEC`` x 1e-3, ``GBITPERSEC`` x 1. Without a unit (most
  instances) one SNDlib capacity unit is taken as 1 Gbps. The factor is kept in
  ``meta["sndlib"]["gbps_per_unit"]``.
* **Coordinates.** When every node lies in lon [-180, 180] x lat [-90, 90] the coordinates are
  used as given; when only some do (at most half of them), the others are errors naming node,
  line and field (:func:`check_coordinates`). Several instances use planar (pixel) coordinates
  instead (atlanta, france, norway, ..., more than half of the nodes outside the box): their
  bounding box is then scaled, preserving aspect ratio, into a 10-degree
  box at lon 0..10, lat 45..55 (y increases northwards), and ``meta["sndlib"]["coordinates"]``
  says ``"planar-rescaled"``. Link lengths (geodesic x route factor) and latencies are derived
  from these positions, so they are indicative only for planar instances.
* **Region** by lon/lat (:func:`region_of`): lon < -30 is ``NA`` when lat >= 13 else ``LATAM``;
  -30 <= lon < 60 is ``EMEA`` when lat >= 35 or (lon >= 34 and lat >= 12) else ``AFRICA``;
  lon >= 60 is ``APAC``.
* **Link capacity** (``capacity_gbps``, what TE routes on): the pre-installed capacity when it is
  > 0, else the largest finite module (so TE has something to route on), else -- for pure
  fixed-charge links ``(UNLIMITED 0)`` or links without modules -- the total demand. The
  pre-installed capacity itself is kept in the extra column ``sndlib_preinstalled_gbps``.
* **Modules**: ``module_gbps`` / ``module_cost_usd`` are the module with the lowest cost per unit
  of capacity; ``max_capacity_gbps`` is the capacity plus the total demand rounded up to that
  module (a design never needs more). ``routing_cost_per_gbps`` and ``preinstalled_cost_usd``
  are copied (routing cost converted per Gbps).
* **Strict sections.** A section whose ``)`` is missing (a truncated file) or a stray ``)`` that
  ends a section early (unbalanced parentheses) is an error naming the section and line; nothing
  that was read before it is used.
* **Demands** are kept one record per SNDlib demand, ``src -> dst`` as written, with
  ``demand_gbps = routing_unit x demand_value`` converted to Gbps; whether they are directed is
  decided later by the SNDlib model (see :mod:`backbone.solver.sndlib`).
* **Design data inside the scenario.** What the tables cannot hold is kept in
  ``meta["sndlib"]``: ``links`` maps each link id to ``{"preinstalled": units, "setup_cost": c,
  "modules": [[capacity units or null for UNLIMITED, cost], ...]}`` and ``demands`` maps each
  demand id to ``{"routing_unit": r}``. :func:`sndlib_from_network` rebuilds the
  :class:`SndlibNetwork` from the scenario alone, so an SNDlib design never re-reads a file (an
  uploaded scenario keeps working; no file path travels with a scenario).
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
from backbone.model import Network

logger = logging.getLogger(__name__)

UNIT_TO_GBPS: dict[str, float] = {
    "BITSPERSEC": 1e-9,
    "BITPERSEC": 1e-9,
    "KBITPERSEC": 1e-6,
    "MBITPERSEC": 1e-3,
    "GBITPERSEC": 1.0,
}
"""``META unit`` value -> Gbps per SNDlib capacity unit (no unit: 1 unit = 1 Gbps)."""

PLANAR_BOX = (0.0, 45.0, 10.0)
"""(lon0, lat0, size_deg): planar coordinates are scaled into this box."""

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


# ---------------------------------------------------------------------- mapping to a Network
def region_of(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Planning region from position (the rule in the module docstring), vectorized."""
    lon, lat = np.asarray(lon, float), np.asarray(lat, float)
    americas = np.where(lat >= 13, "NA", "LATAM")
    emea = np.where((lat >= 35) | ((lon >= 34) & (lat >= 12)), "EMEA", "AFRICA")
    return np.where(lon < -30, americas, np.where(lon < 60, emea, "APAC"))


def node_positions(snd: SndlibNetwork) -> tuple[np.ndarray, np.ndarray, str]:
    """(lon, lat, kind): geographic coordinates as given, or planar ones rescaled (see module doc)."""
    x, y = snd.nodes["x"].to_numpy(float), snd.nodes["y"].to_numpy(float)
    if len(x) and (np.abs(x).max() <= 180) and (np.abs(y).max() <= 90):
        return x, y, "geographic"
    lon0, lat0, size = PLANAR_BOX
    span = max(float(np.ptp(x)), float(np.ptp(y)), 1e-9)
    return lon0 + (x - x.min()) / span * size, lat0 + (y - y.min()) / span * size, "planar-rescaled"


def to_tables(snd: SndlibNetwork) -> dict[str, pd.DataFrame]:
    """The backbone tables (sites, links, demands) for an SNDlib network (rules in the module doc)."""
    k = snd.gbps_per_unit
    lon, lat, _ = node_positions(snd)
    sites = pd.DataFrame({"id": snd.nodes.index, "name": snd.nodes.index, "lon": np.round(lon, 6),
                          "lat": np.round(lat, 6), "region": region_of(lon, lat), "kind": "pop"})
    total_demand = float(snd.demand_units.sum()) if len(snd.demands) else 1.0
    mods = snd.modules.copy()
    finite = mods[np.isfinite(mods["capacity"].to_numpy(float))].copy()
    finite["per_unit"] = finite["cost"] / finite["capacity"]
    cheapest = finite.sort_values(["per_unit", "capacity"], kind="stable").groupby("link").first()
    largest = finite.groupby("link")["capacity"].max()
    links = snd.links
    pre = links["preinstalled_capacity"].astype(float)
    fallback = largest.reindex(links.index).fillna(max(total_demand, 1.0))
    cap_units = pre.where(pre > 0, fallback)
    module_units = cheapest["capacity"].reindex(links.index).fillna(cap_units)
    module_cost = cheapest["cost"].reindex(links.index).fillna(0.0)
    max_units = cap_units + np.ceil(total_demand / module_units) * module_units
    out_links = pd.DataFrame({
        "id": links.index, "name": links.index, "site_a": links["source"], "site_b": links["target"],
        "capacity_gbps": cap_units.to_numpy() * k, "module_gbps": module_units.to_numpy() * k,
        "module_cost_usd": module_cost.to_numpy(), "max_capacity_gbps": max_units.to_numpy() * k,
        "routing_cost_per_gbps": links["routing_cost"].to_numpy(float) / k,
        "preinstalled_cost_usd": links["preinstalled_cost"].to_numpy(float),
        "sndlib_preinstalled_gbps": pre.to_numpy() * k,
    })
    demands = pd.DataFrame({"id": snd.demands.index, "src": snd.demands["source"], "dst": snd.demands["target"],
                            "demand_gbps": snd.demand_units * k, "traffic_class": "bulk"})
    return {"sites": sites, "links": out_links.reset_index(drop=True), "demands": demands.reset_index(drop=True)}


def load_sndlib(path: str | Path) -> Network:
    """Load an SNDlib native network file as a :class:`Network` (mapping rules: module doc).

    Raises
    ------
    ValidationError
        Listing every problem, each with file, ``line N (record)`` and field.

    Example
    -------
    >>> net = load_sndlib("polska.txt")  # doctest: +SKIP
    >>> net.links[["capacity_gbps", "module_gbps", "module_cost_usd"]].head()  # doctest: +SKIP
    """
    from backbone.validate import build_network

    snd = parse_sndlib(path)
    _, _, coords = node_positions(snd)
    meta = {"description": f"SNDlib network {snd.name}", "source": "sndlib",
            "sources": [{"file": Path(snd.file).name, "format": "sndlib"}],
            "sndlib": {"meta": snd.meta, "gbps_per_unit": snd.gbps_per_unit, "coordinates": coords,
                       "admissible_paths": len(snd.paths), **design_meta(snd)}}
    tables = to_tables(snd)
    files = {t: snd.file for t in ("sites", "links", "demands")}
    net = build_network(tables, name=snd.name, meta=meta, files=files)
    logger.info("loaded SNDlib %s: %d nodes, %d links, %d demands (%s coordinates)", snd.name, len(net.sites),
                len(net.links), len(net.demands), coords)
    return net


# ---------------------------------------------------------------------- design data kept in the scenario
def design_meta(snd: SndlibNetwork) -> dict[str, Any]:
    """``{"links": ..., "demands": ...}``: the SNDlib data the backbone tables do not hold (module doc).

    Capacities are in SNDlib units; an ``UNLIMITED`` module capacity is ``None`` (JSON null).
    """
    mods: dict[str, list[list[float | None]]] = {str(lk): [] for lk in snd.links.index}
    for lk, cap, cost in zip(snd.modules["link"], snd.modules["capacity"].to_numpy(float),
                             snd.modules["cost"].to_numpy(float), strict=True):
        mods[str(lk)].append([None if math.isinf(cap) else float(cap), float(cost)])
    links = {str(lk): {"preinstalled": float(pre), "setup_cost": float(setup), "modules": mods[str(lk)]}
             for lk, pre, setup in zip(snd.links.index, snd.links["preinstalled_capacity"].to_numpy(float),
                                       snd.links["setup_cost"].to_numpy(float), strict=True)}
    demands = {str(d): {"routing_unit": float(r)} for d, r in zip(snd.demands.index,
                                                                   snd.demands["routing_unit"].to_numpy(float),
                                                                   strict=True)}
    return {"links": links, "demands": demands}


def _number(value: Any, problems: list[Problem], record: str, field: str, positive: bool = False) -> float:
    """A finite number >= 0 (> 0 when ``positive``) from scenario meta, or NaN and a problem."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and \
        (value > 0 if positive else value >= 0)
    if not ok:
        problems.append(Problem(f"must be a finite number {'> 0' if positive else '>= 0'}", file="scenario",
                                table="meta", record=record, field=field))
        return math.nan
    return float(value)


def sndlib_from_network(net: Network) -> SndlibNetwork:
    """The :class:`SndlibNetwork` of a scenario, from its tables and ``meta["sndlib"]`` only.

    Capacity units follow ``meta["sndlib"]["meta"]["unit"]`` (as :attr:`SndlibNetwork.gbps_per_unit`).
    Links: ``site_a -> site_b``, routing cost ``routing_cost_per_gbps x gbps_per_unit``,
    pre-installed cost ``preinstalled_cost_usd``; pre-installed capacity, setup cost and the
    module list from ``meta["sndlib"]["links"][id]`` (a link it does not list: pre-installed
    ``capacity_gbps``, no setup cost and one module of ``module_gbps`` at ``module_cost_usd``).
    Demands: ``demand_gbps / gbps_per_unit`` capacity units, in the routing unit of
    ``meta["sndlib"]["demands"][id]`` (default 1). Any scenario works, SNDlib or not.

    Raises
    ------
    ValidationError
        For malformed ``meta.sndlib`` entries (naming ``meta.sndlib...`` and the record), and
        entries naming links or demands the scenario does not have.
    """
    raw = net.meta.get("sndlib") or {}
    problems: list[Problem] = []
    if not isinstance(raw, dict):
        raise ValidationError(Problem("must be an object", file="scenario", table="meta", field="sndlib"))
    link_meta = raw.get("links") or {}
    demand_meta = raw.get("demands") or {}
    for name, value in (("links", link_meta), ("demands", demand_meta)):
        if not isinstance(value, dict):
            problems.append(Problem("must be an object keyed by id", file="scenario", table="meta",
                                    field=f"sndlib.{name}"))
    snd_meta = raw.get("meta") or {}
    if not isinstance(snd_meta, dict):
        problems.append(Problem("must be an object", file="scenario", table="meta", field="sndlib.meta"))
    if problems:
        raise ValidationError(problems)
    plain_meta = {str(a): str(b) for a, b in snd_meta.items()}
    k = UNIT_TO_GBPS.get(plain_meta.get("unit", "").strip().upper(), 1.0)  # as SndlibNetwork.gbps_per_unit
    for name, value, known in (("links", link_meta, net.links.index), ("demands", demand_meta, net.demands.index)):
        unknown = sorted(set(value) - set(map(str, known)))
        problems += [Problem(f"no {name[:-1]} {u!r} in the scenario", file="scenario", table="meta", record=u,
                             field=f"sndlib.{name}") for u in unknown[:20]]
    lk = net.links
    rows: list[dict[str, Any]] = []
    mods: list[dict[str, Any]] = []
    for i, lid in enumerate(lk.index):
        entry = link_meta.get(str(lid))
        row = {"id": str(lid), "source": str(lk["site_a"].iat[i]), "target": str(lk["site_b"].iat[i]),
               "preinstalled_cost": float(lk["preinstalled_cost_usd"].iat[i]),
               "routing_cost": float(lk["routing_cost_per_gbps"].iat[i]) * k, "line": 0}
        if entry is None:
            row.update(preinstalled_capacity=float(lk["capacity_gbps"].iat[i]) / k, setup_cost=0.0)
            mods.append({"link": str(lid), "capacity": float(lk["module_gbps"].iat[i]) / k,
                         "cost": float(lk["module_cost_usd"].iat[i])})
            rows.append(row)
            continue
        field = f"sndlib.links.{lid}"
        if not isinstance(entry, dict) or not isinstance(entry.get("modules", []), list):
            problems.append(Problem("must be {preinstalled, setup_cost, modules: [[capacity, cost], ...]}",
                                    file="scenario", table="meta", record=str(lid), field=field))
            continue
        row["preinstalled_capacity"] = _number(entry.get("preinstalled", 0.0), problems, str(lid),
                                               f"{field}.preinstalled")
        row["setup_cost"] = _number(entry.get("setup_cost", 0.0), problems, str(lid), f"{field}.setup_cost")
        for j, mod in enumerate(entry.get("modules", [])):
            if not isinstance(mod, list) or len(mod) != 2:
                problems.append(Problem("a module is [capacity, cost]", file="scenario", table="meta",
                                        record=str(lid), field=f"{field}.modules.{j}"))
                continue
            cap = math.inf if mod[0] is None else _number(mod[0], problems, str(lid), f"{field}.modules.{j}",
                                                          positive=True)
            mods.append({"link": str(lid), "capacity": cap,
                         "cost": _number(mod[1], problems, str(lid), f"{field}.modules.{j}")})
        rows.append(row)
    units = net.demands["demand_gbps"].to_numpy(float) / k
    routing = []
    for did in net.demands.index:
        entry = demand_meta.get(str(did)) or {}
        if not isinstance(entry, dict):
            problems.append(Problem("must be {routing_unit}", file="scenario", table="meta", record=str(did),
                                    field=f"sndlib.demands.{did}"))
            entry = {}
        routing.append(_number(entry.get("routing_unit", 1.0), problems, str(did),
                               f"sndlib.demands.{did}.routing_unit", positive=True))
    if problems:
        raise ValidationError(problems)
    nodes = pd.DataFrame({"x": net.sites["lon"].to_numpy(float), "y": net.sites["lat"].to_numpy(float), "line": 0},
                         index=pd.Index(net.sites.index.astype(str), name="id"))
    links = pd.DataFrame(rows, columns=["id", "source", "target", "preinstalled_capacity", "preinstalled_cost",
                                        "routing_cost", "setup_cost", "line"]).set_index("id")
    ru = np.asarray(routing, float)
    demands = pd.DataFrame({"source": net.demands["src"].astype(str).to_numpy(),
                            "target": net.demands["dst"].astype(str).to_numpy(), "routing_unit": ru,
                            "demand_value": units / ru, "max_path_length": math.nan, "line": 0},
                           index=pd.Index(net.demands.index.astype(str), name="id"))
    modules = pd.DataFrame(mods, columns=["link", "capacity", "cost"])
    paths = pd.DataFrame(columns=["demand", "path", "links", "line"])
    return SndlibNetwork(net.name, plain_meta, nodes, links, modules, demands, paths)
