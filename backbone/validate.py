"""Validation of user input: collect every problem, then fail once.

:func:`build_network` is the one door from raw records (CSV rows, JSON objects, importer
output) to a :class:`~backbone.model.Network`. It checks every rule, and raises a
:class:`~backbone.errors.ValidationError` listing all problems (file, record id, field) before
anything is built or written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pandas as pd

from backbone import geo
from backbone.errors import Problem, ValidationError
from backbone.failure_policy import FAILURE_POLICY_KEY, check_failure_policy
from backbone.quarters import QUARTER_PATTERN
from backbone.schema import MAX_MS, MAX_QUARTERS, MAX_USD, TABLES, Column, TableSpec
from backbone.validate_workloads import check_workload_references

if TYPE_CHECKING:
    from backbone.model import Network

RawTable: TypeAlias = "pd.DataFrame | list[dict[str, Any]] | None"

GEOMETRY_MIN_GAP_KM = 50.0
"""Geometry gaps below this are never reported (sites and waypoints are approximate)."""

GEOMETRY_MISPLACED_KM = 1000.0
"""A route's first (last) waypoint may lie at most this much farther from its own site than the
other site is; beyond that the geometry starts (ends) somewhere else: another link's waypoints.
Sparse real cable geometry stays well within it: the 2,708 cable chains folded from TopoHub's
continental and world backbones reach at most 850 km beyond."""

QUARTER_COLUMNS: frozenset[tuple[str, str]] = frozenset({("candidates", "available_from"), ("training_jobs", "start"),
                                                          ("training_jobs", "end")})
"""The (table, column) pairs that hold a quarter like ``2027Q3`` (blank where allowed)."""

GEOMETRY_REVERSED_FRACTION = 0.8
"""Waypoints look reversed when the route through them in reverse order is shorter than this
fraction of the route as given (a traced cable is not a zig-zag)."""


def build_network(tables: Mapping[str, RawTable], name: str = "scenario", meta: Mapping[str, Any] | None = None,
                  files: Mapping[str, str] | None = None) -> Any:
    """Validate raw tables and build a :class:`~backbone.model.Network`.

    Parameters
    ----------
    tables
        ``{"sites": ..., "links": ..., "srlgs": ..., "metros": ..., "demands": ..., "candidates": ..., "datasets": ...,
        "training_jobs": ...}``; each a
        DataFrame (any dtypes; an ``id`` column or index) or a list of record dicts. Missing
        tables are empty.
    name, meta
        Scenario name and metadata.
    files
        File name per table, used in problem messages.

    Raises
    ------
    ValidationError
        Listing every problem found.
    """
    from backbone.model import Network

    files = dict(files or {})
    unknown_tables = [t for t in tables if t not in TABLES]
    problems: list[Problem] = [
        Problem(f"unknown table {t!r} (expected one of {', '.join(TABLES)})", file=files.get(t, "")) for t in unknown_tables
    ]
    frames: dict[str, pd.DataFrame] = {}
    for t, spec in TABLES.items():
        df, probs = _check_table(spec, tables.get(t), files.get(t, f"{t}"))
        problems += probs
        frames[t] = df
    problems += _check_references(frames, files)
    problems += check_latency_parameters(dict((meta or {}).get("parameters") or {}))
    problems += check_failure_policy((meta or {}).get(FAILURE_POLICY_KEY))
    if problems:
        raise ValidationError(problems)
    net = Network.from_tables(frames, name=name, meta=meta)
    return net


LATENCY_PARAMETER_MINIMA = {"terrestrial_latency_factor": 1.0, "submarine_latency_factor": 1.0,
                            "equipment_delay_ms": 0.0, "group_index": 1.0, "route_factor": 1.0}
"""Lowest valid value of each latency parameter: latency never goes below the fibre floor."""

PARAMETER_RANGES: dict[str, tuple[float, float]] = {
    "terrestrial_latency_factor": (1.0, 100.0), "submarine_latency_factor": (1.0, 100.0),
    "equipment_delay_ms": (0.0, MAX_MS), "group_index": (1.0, 100.0), "route_factor": (1.0, 100.0),
    "terrestrial_module_fixed_usd": (0.0, MAX_USD), "terrestrial_module_usd_per_km": (0.0, MAX_USD),
    "submarine_module_fixed_usd": (0.0, MAX_USD), "submarine_module_usd_per_km": (0.0, MAX_USD),
    "max_capacity_factor": (0.0, 1e6), "upgrade_lead_quarters": (0.0, float(MAX_QUARTERS)),
}
"""Valid range (inclusive) of each scenario parameter: latency never goes below the fibre floor
(:data:`LATENCY_PARAMETER_MINIMA`), and nothing derived from a bounded column overflows."""


def check_latency_parameters(params: Mapping[str, Any]) -> list[Problem]:
    """Problems with the scenario's parameters (each a finite number in its :data:`PARAMETER_RANGES`).

    The name is historical: the cost and capacity parameters of derived columns are checked too.
    """
    problems = []
    for name, (low, high) in PARAMETER_RANGES.items():
        if name not in params:
            continue
        value = params[name]
        ok = isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)
        if ok and value < low and name in LATENCY_PARAMETER_MINIMA:
            problems.append(Problem(f"must be a number >= {low:g} (latency never below the fibre floor), "
                                    f"got {value!r}", file="scenario.yaml", table="parameters", field=name))
            continue
        if not ok or not low <= value <= high:
            problems.append(Problem(f"must be a finite number from {low:g} to {high:g}, got {value!r}",
                                    file="scenario.yaml", table="parameters", field=name))
    return problems


def validate_records(table: str, records: list[dict[str, Any]], file: str = "") -> None:
    """Check one table's records on their own (no cross-table references).

    Raises
    ------
    ValidationError
        Listing every problem found.
    """
    _, problems = _check_table(TABLES[table], records, file or table)
    if problems:
        raise ValidationError(problems)


def _to_frame(raw: RawTable) -> pd.DataFrame:
    if raw is None:
        return pd.DataFrame()
    if isinstance(raw, pd.DataFrame):
        df = raw.copy()
        if df.index.name == "id" and "id" not in df.columns:
            df = df.reset_index()
        return df
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise ValidationError("table must be a list of records (objects)")
    return pd.DataFrame(raw)


MAX_WHOLE_NUMBER = 2**53
"""Largest magnitude of a whole-number column (exact in a float and in int64; larger values were
silently wrapped when cast)."""


def _is_blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and v.strip() == "")


def _check_table(spec: TableSpec, raw: RawTable, file: str) -> tuple[pd.DataFrame, list[Problem]]:
    """Check one table; return it (ids as index, values coerced where valid) and its problems."""
    problems: list[Problem] = []
    try:
        df = _to_frame(raw)
    except ValidationError as exc:
        return pd.DataFrame(), [Problem(p.message, file=file, table=spec.name) for p in exc.problems]
    if len(df.index) == 0 and len(df.columns) == 0:
        return df, problems
    cols = set(df.columns)
    if "id" not in cols:
        problems.append(Problem("missing required column 'id'", file=file, table=spec.name, field="id"))
        return pd.DataFrame(), problems
    missing = [c.name for c in spec.columns if c.required and c.name not in cols]
    problems += [Problem(f"missing required column {c!r}", file=file, table=spec.name, field=c) for c in missing]

    ids = [("" if _is_blank(v) else str(v).strip()) for v in df["id"]]
    labels = [i if i else f"row {n + 2}" for n, i in enumerate(ids)]
    seen: dict[str, int] = {}
    for n, i in enumerate(ids):
        if not i:
            problems.append(Problem("missing id", file=file, table=spec.name, record=labels[n], field="id"))
        elif i in seen:
            problems.append(Problem(f"duplicate id (first at row {seen[i] + 2})", file=file, table=spec.name,
                                    record=i, field="id"))
        else:
            seen[i] = n
    for col in spec.columns:
        if col.name not in cols:
            continue
        problems += _check_column(spec, col, df[col.name].tolist(), labels, file)
    problems += _record_problems(spec.name, df, labels, file, {(p.record, p.field) for p in problems})
    df = df.assign(id=ids)
    return df, problems


def _record_problems(table: str, df: pd.DataFrame, labels: list[str], file: str,
                     flagged: set[tuple[str, str]]) -> list[Problem]:
    """The rules across a record's fields: a link or candidate route from a site to itself, a demand to its own
    source, a link's capacity above its ceiling (unless either value already has a problem, in ``flagged``:
    record, field)."""
    problems: list[Problem] = []
    cols = set(df.columns)
    if table in ("links", "candidates") and {"site_a", "site_b"} <= cols:
        for lab, a, b in zip(labels, df["site_a"], df["site_b"], strict=True):
            if not _is_blank(a) and str(a).strip() == str(b).strip():
                problems.append(Problem(f"self-loop: both ends are {str(a).strip()!r}", file=file, table=table,
                                        record=lab, field="site_b"))
    if table == "demands" and {"src", "dst"} <= cols:
        for lab, a, b in zip(labels, df["src"], df["dst"], strict=True):
            if not _is_blank(a) and str(a).strip() == str(b).strip():
                problems.append(Problem(f"demand from {str(a).strip()!r} to itself", file=file, table="demands",
                                        record=lab, field="dst"))
    if table == "links" and {"capacity_gbps", "max_capacity_gbps"} <= cols:
        problems += _capacity_ceiling_problems(df, labels, file, flagged)
    return problems


def _capacity_ceiling_problems(df: pd.DataFrame, labels: list[str], file: str,
                               flagged: set[tuple[str, str]]) -> list[Problem]:
    """A link's ``max_capacity_gbps``, when given, is its ceiling (the most its upgrades may reach, and what
    :meth:`~backbone.model.Network.with_capacity` refuses to exceed): a capacity above it is a problem on
    ``capacity_gbps``. An empty ceiling is derived later (``max_capacity_factor`` x capacity) and never below it."""
    problems = []
    for lab, cap, top in zip(labels, df["capacity_gbps"], df["max_capacity_gbps"], strict=True):
        if (lab, "capacity_gbps") in flagged or (lab, "max_capacity_gbps") in flagged:
            continue
        capacity, ceiling = finite_or_nan(cap), finite_or_nan(top)
        if np.isfinite(capacity) and np.isfinite(ceiling) and capacity > ceiling + 1e-9:
            problems.append(Problem(f"capacity {capacity:g} Gbps is above the link's max_capacity_gbps {ceiling:g} "
                                    "Gbps (the most its upgrades may reach): raise max_capacity_gbps, or leave it "
                                    "empty to derive it", file=file, table="links", record=lab, field="capacity_gbps"))
    return problems


def _check_column(spec: TableSpec, col: Column, values: list[Any], labels: list[str], file: str) -> list[Problem]:
    problems: list[Problem] = []
    for lab, v in zip(labels, values, strict=True):
        where = {"file": file, "table": spec.name, "record": lab, "field": col.name}
        if _is_blank(v) or (col.dtype == "idlist" and isinstance(v, list) and not v):
            if col.required:
                problems.append(Problem("missing required value", **where))
            continue
        if col.dtype in ("float", "int"):
            messages = _number_problems(col, v)
        elif col.dtype == "str":
            messages = _text_problems(col, v, spec.name)
        elif col.dtype == "bool" and str(v).strip().lower() not in ("1", "0", "true", "false", "yes", "no", "y", "n"):
            messages = [f"expected true/false, got {v!r}"]
        else:
            messages = []
        problems += [Problem(message, **where) for message in messages]
    return problems


def _number_problems(col: Column, v: Any) -> list[str]:
    """What is wrong with ``v`` as a value of the numeric column ``col`` (not a finite number, out of bounds, not
    whole)."""
    if isinstance(v, bool):
        return [f"expected a number, got {v!r}"]
    try:
        x = float(v)
    except OverflowError:  # an integer beyond any float: report its size, not its digits
        bits = int(v).bit_length() if isinstance(v, int) else 1024
        return [f"out of range: a whole number of about {int(bits * 0.30103) + 1} digits, beyond any {col.dtype}"]
    except (TypeError, ValueError):
        return [f"expected a number, got {v!r}"]
    if not math.isfinite(x):
        return [f"expected a finite number, got {v!r}"]
    messages: list[str] = []
    if col.min_value is not None and (x < col.min_value or (not col.min_inclusive and x == col.min_value)):
        bound = ">=" if col.min_inclusive else ">"
        messages.append(f"must be {bound} {col.min_value:g}, got {x:g}")
    if col.max_value is not None and x > col.max_value:
        unit = f" {col.unit}" if col.unit else ""
        messages.append(f"must be <= {col.max_value:g}{unit}, got {x:g}")
    if col.dtype == "int" and x != round(x):
        messages.append(f"expected a whole number, got {v!r}")
    elif col.dtype == "int" and abs(x) > MAX_WHOLE_NUMBER:
        messages.append(f"out of range: whole numbers are limited to +-{MAX_WHOLE_NUMBER} (2**53), got {x:g}")
    return messages


def _text_problems(col: Column, v: Any, table: str) -> list[str]:
    """What is wrong with ``v`` as a value of the text column ``col`` (a choice, waypoints, a quarter)."""
    messages: list[str] = []
    if col.choices and str(v).strip() not in col.choices:
        messages.append(f"{str(v).strip()!r} is not one of {', '.join(col.choices)}")
    if col.name == "waypoints":
        try:
            geo.parse_waypoints(str(v))
        except ValueError as exc:
            messages.append(str(exc))
    if (table, col.name) in QUARTER_COLUMNS and not QUARTER_PATTERN.match(str(v).strip()):  # the model's one rule
        messages.append(f"expected a quarter like '2027Q3', got {v!r}")
    return messages


def _ids(df: pd.DataFrame) -> set[str]:
    return set(df["id"]) if "id" in df.columns else set()


def _check_references(frames: dict[str, pd.DataFrame], files: Mapping[str, str]) -> list[Problem]:
    """Cross-table rules: endpoints and members exist, geometry ends near its sites."""
    problems: list[Problem] = []
    site_ids, link_ids, metro_ids = _ids(frames["sites"]), _ids(frames["links"]), _ids(frames["metros"])
    f = {t: files.get(t, t) for t in TABLES}

    def refs(table: str, column: str, known: set[str], what: str, allow_blank: bool = False) -> None:
        df = frames[table]
        if column not in df.columns or "id" not in df.columns:
            return
        for rid, v in zip(df["id"], df[column], strict=True):
            if _is_blank(v):
                continue
            if str(v).strip() not in known:
                problems.append(Problem(f"unknown {what} {str(v).strip()!r}", file=f[table], table=table,
                                        record=rid or "?", field=column))

    refs("links", "site_a", site_ids, "site")
    refs("links", "site_b", site_ids, "site")
    refs("candidates", "site_a", site_ids, "site")
    refs("candidates", "site_b", site_ids, "site")
    refs("demands", "src", site_ids, "site")
    refs("demands", "dst", site_ids, "site")
    if metro_ids:
        refs("sites", "metro", metro_ids, "metro", allow_blank=True)
    srlgs = frames["srlgs"]
    if "links" in srlgs.columns and "id" in srlgs.columns:
        from backbone.tables import parse_idlist

        for rid, members in zip(srlgs["id"], srlgs["links"], strict=True):
            for m in parse_idlist(members):
                if m not in link_ids:
                    problems.append(Problem(f"unknown link {m!r}", file=f["srlgs"], table="srlgs", record=rid,
                                            field="links"))
    problems += _check_candidate_references(frames, f["candidates"], link_ids)
    problems += check_workload_references(frames, f)
    problems += _check_geometry(frames, f["links"])
    problems += _check_geometry(frames, f["candidates"], table="candidates")
    return problems


def _check_candidate_references(frames: dict[str, pd.DataFrame], file: str, link_ids: set[str]) -> list[Problem]:
    """Candidate ids must not collide with link ids (a built candidate becomes a link of the same id);
    the SRLGs a candidate joins must exist."""
    cands = frames["candidates"]
    if "id" not in cands.columns:
        return []
    from backbone.tables import parse_idlist

    srlg_ids = _ids(frames["srlgs"])
    problems = []
    for rid in cands["id"]:
        if rid and rid in link_ids:
            problems.append(Problem(f"candidate id {rid!r} is already a link id (a built candidate becomes "
                                    "a link of the same id)", file=file, table="candidates", record=rid, field="id"))
    if "srlgs" in cands.columns:
        for rid, members in zip(cands["id"], cands["srlgs"], strict=True):
            for m in parse_idlist(members):
                if m not in srlg_ids:
                    problems.append(Problem(f"unknown SRLG {m!r}", file=file, table="candidates",
                                            record=rid or "?", field="srlgs"))
    return problems


def _check_geometry(frames: dict[str, pd.DataFrame], file: str, table: str = "links") -> list[Problem]:
    """Waypoints must trace the link (or candidate route) from ``site_a`` to ``site_b``.

    Two rules (gaps under :data:`GEOMETRY_MIN_GAP_KM` are ignored):

    * reversed: with two or more waypoints, the route through them in reverse order is shorter
      than :data:`GEOMETRY_REVERSED_FRACTION` x the route as given;
    * misplaced: the first (last) waypoint is more than :data:`GEOMETRY_MISPLACED_KM` farther
      from ``site_a`` (``site_b``) than the two sites are from each other, i.e. the geometry
      starts or ends somewhere else (another link's waypoints). Sparse geometry (one waypoint
      near the far end, a festoon out to sea and back) is fine.
    """
    links, sites = frames[table], frames["sites"]
    need = {"site_a", "site_b", "waypoints", "id"}
    if not need <= set(links.columns) or not {"lon", "lat", "id"} <= set(sites.columns):
        return []
    coords: dict[str, tuple[float, float]] = {}
    for sid, lon, lat in zip(sites["id"], sites["lon"], sites["lat"], strict=True):
        try:
            coords[str(sid)] = (float(lon), float(lat))
        except (TypeError, ValueError, OverflowError):
            continue
    problems = []
    for rid, a, b, wp in zip(links["id"], links["site_a"], links["site_b"], links["waypoints"], strict=True):
        if _is_blank(wp) or str(a).strip() not in coords or str(b).strip() not in coords:
            continue
        try:
            pts = geo.parse_waypoints(str(wp))
        except ValueError:
            continue  # already reported
        if not pts:
            continue
        pa, pb = coords[str(a).strip()], coords[str(b).strip()]
        total = geo.polyline_km([pa, *pts, pb])
        direct = float(geo.geodesic_km(pa[0], pa[1], pb[0], pb[1]))
        where = {"file": file, "table": table, "record": str(rid), "field": "waypoints"}
        if len(pts) >= 2:
            backwards = geo.polyline_km([pa, *pts[::-1], pb])
            if backwards < GEOMETRY_REVERSED_FRACTION * total and total - backwards > GEOMETRY_MIN_GAP_KM:
                problems.append(Problem(
                    f"waypoints look reversed: the route is {total:.0f} km as given but {backwards:.0f} km "
                    f"in reverse order (list them from site {str(a).strip()!r} to {str(b).strip()!r})", **where))
                continue
        gap_a = float(geo.geodesic_km(pa[0], pa[1], pts[0][0], pts[0][1]))
        gap_b = float(geo.geodesic_km(pts[-1][0], pts[-1][1], pb[0], pb[1]))
        for gap, end, site in ((gap_a, "first", a), (gap_b, "last", b)):
            if gap > direct + GEOMETRY_MISPLACED_KM:
                problems.append(Problem(
                    f"geometry's {end} waypoint is {gap:.0f} km from site {str(site).strip()!r}, "
                    f"{gap - direct:.0f} km more than the {direct:.0f} km between the link's sites "
                    "(waypoints of another link?)", **where))
    return problems


def finite_or_nan(x: Any) -> float:
    """``float(x)`` or NaN."""
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        return float("nan")
    return v if np.isfinite(v) else float("nan")


def srlg_coverage_warning(net: Network) -> str | None:
    """A warning naming the links that belong to no SRLG (up to five ids), or None when every link is in one.
    Such a link is valid input, but an SRLG sweep fails it only as its own implicit group: give it its conduit
    or corridor SRLG when it shares a right of way."""
    links = net.links_in_no_srlg()
    if not links:
        return None
    more = f", ... ({len(links) - 5} more)" if len(links) > 5 else ""
    return (f"{len(links)} of {len(net.links)} links belong to no SRLG ({', '.join(links[:5])}{more}); an SRLG "
            "sweep fails each as its own group (add conduit or corridor SRLGs where links share a right of way)")
