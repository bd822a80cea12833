"""Latency calibration: fit a scenario's latency parameters to measured round-trip times.

The latency model (:func:`backbone.model.link_latency_ms`) gives every link whose latency is
derived from its length

    latency_ms = length_km x group_index / c x factor(kind) + equipment_delay_ms

with ``factor`` = ``terrestrial_latency_factor`` or ``submarine_latency_factor`` (1.0 is the
physical fibre floor) and ``equipment_delay_ms`` a per-link (per-hop) overhead. Access fibre from
a point to its site counts as terrestrial (:func:`backbone.model.access_latency_ms`).

For a measured pair whose lowest-latency path is ``P``, the modelled round trip is linear in
the three parameters ``theta = (f_t, f_s, h)``::

    rtt = 2 x (f_t x T + f_s x S + h x N + C)

where ``T`` is the fibre delay (at factor 1) of the derived terrestrial links of ``P`` plus the
access fibre, ``S`` the same for submarine links, ``N`` the number of derived links on ``P`` and
``C`` the latency of links whose latency was given explicitly (kept as measured facts). The fit
minimises a robust loss (``soft_l1`` by default, :func:`scipy.optimize.least_squares`) of the
relative residuals ``(rtt - measured) / measured`` under the bounds ``f >= 1`` and ``h >= 0``, so
the model never goes below the fibre floor. The lowest-latency path depends on the parameters:
after each fit the pairs are routed again and the fit repeats until no path changes (at most
``max_iterations`` fits). A leave-one-out error refits without each pair in turn (on the final
paths) and predicts it.

Example
-------
>>> from backbone.io import load_scenario
>>> net = load_scenario()                                   # doctest: +SKIP
>>> result = calibrate(net, load_measured("data/calibration/public_rtt.csv"))  # doctest: +SKIP
>>> result.after["median_abs_pct"]                          # doctest: +SKIP
"""

from __future__ import annotations

import csv
import datetime as dt
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from backbone import geo
from backbone.errors import BackboneError, NotFoundError, Problem, ValidationError
from backbone.model import Network, access_latency_ms, link_latency_ms

logger = logging.getLogger(__name__)

FITTED_PARAMETERS: tuple[str, ...] = ("terrestrial_latency_factor", "submarine_latency_factor", "equipment_delay_ms")
"""The calibrated parameters, in the order of ``theta``."""

PARAMETER_BOUNDS: dict[str, tuple[float, float]] = {
    "terrestrial_latency_factor": (1.0, 5.0),
    "submarine_latency_factor": (1.0, 5.0),
    "equipment_delay_ms": (0.0, 50.0),
}
"""Bounds of each fitted parameter: factors never below the fibre floor, overheads never negative."""

LOSSES = ("soft_l1", "huber", "cauchy", "linear")
"""Loss functions of :func:`scipy.optimize.least_squares` accepted by :func:`calibrate`."""

DERIVED_TOLERANCE_MS = 1e-3
"""A link's latency counts as derived from its length when it is within this of the model's value
(the saved value is rounded to 4 decimals)."""

MEASURED_COLUMNS = ("from", "to", "rtt_ms")
"""Required columns of a measured-RTT table; ``source`` (a citation) is optional."""


# ---------------------------------------------------------------------- measured pairs
def load_measured(path: str | Path) -> pd.DataFrame:
    """Read a measured round-trip CSV: ``from,to,rtt_ms`` (and optionally ``source``).

    ``from``/``to`` are site ids or ``lat,lon`` points (quote them in CSV). Lines starting with
    ``#`` are comments.

    Raises
    ------
    ValidationError
        Naming the file, line and field of every bad record, or a missing column.
    """
    p = Path(path)
    if not p.is_file():
        raise ValidationError(Problem("measured RTT file not found", file=str(p)))
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(Problem(f"cannot read: {exc}", file=str(p))) from None
    lines = [(i, line) for i, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise ValidationError(Problem("no header and no pairs", file=str(p)))
    rows = list(csv.reader([line for _, line in lines]))
    header = [h.strip() for h in rows[0]]
    missing = [c for c in MEASURED_COLUMNS if c not in header]
    if missing:
        raise ValidationError([Problem(f"missing column {c!r} (expected {','.join(MEASURED_COLUMNS)})", file=str(p),
                                       field=c) for c in missing])
    records = []
    problems = []
    for (lineno, _), row in zip(lines[1:], rows[1:], strict=True):
        if len(row) != len(header):
            problems.append(Problem(f"{len(row)} fields, header has {len(header)}", file=str(p),
                                    record=f"line {lineno}"))
            continue
        records.append({**dict(zip(header, (v.strip() for v in row), strict=True)), "line": lineno})
    if problems:
        raise ValidationError(problems)
    return measured_frame(records, file=str(p))


def measured_frame(records: Iterable[Mapping[str, Any]], file: str = "") -> pd.DataFrame:
    """Validate measured pairs (dicts with ``from``, ``to``, ``rtt_ms``, optional ``source``).

    Returns a table with columns ``from``, ``to``, ``rtt_ms``, ``source`` and ``record`` (the
    line or position named in errors).

    Raises
    ------
    ValidationError
        For an empty endpoint, a non-positive or non-numeric ``rtt_ms``, or no pairs at all.
    """
    rows = []
    problems = []
    for i, rec in enumerate(records):
        where = f"line {rec['line']}" if "line" in rec else f"pair {i}"
        src, dst = str(rec.get("from") or "").strip(), str(rec.get("to") or "").strip()
        for name, value in (("from", src), ("to", dst)):
            if not value:
                problems.append(Problem("empty endpoint", file=file, record=where, field=name))
        try:
            rtt = float(rec.get("rtt_ms"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            problems.append(Problem(f"not a number: {rec.get('rtt_ms')!r}", file=file, record=where, field="rtt_ms"))
            continue
        if not (math.isfinite(rtt) and rtt > 0):
            problems.append(Problem(f"must be a finite number > 0, got {rtt}", file=file, record=where, field="rtt_ms"))
            continue
        rows.append({"from": src, "to": dst, "rtt_ms": rtt, "source": str(rec.get("source") or ""), "record": where})
    if not rows and not problems:
        problems.append(Problem("no measured pairs", file=file))
    if problems:
        raise ValidationError(problems)
    return pd.DataFrame(rows, columns=["from", "to", "rtt_ms", "source", "record"])


# ---------------------------------------------------------------------- latency parameters
def derived_links(net: Network) -> np.ndarray:
    """Boolean mask of links whose ``latency_ms`` is the model's value for their length (so a
    recalibration re-derives it); other links keep their explicit latency."""
    links = net.links
    if len(links) == 0:
        return np.zeros(0, dtype=bool)
    model = link_latency_ms(links["length_km"].to_numpy(float), links["kind"].to_numpy(), net.parameters)
    return np.isclose(links["latency_ms"].to_numpy(float), model, rtol=0.0, atol=DERIVED_TOLERANCE_MS)


def apply_latency_parameters(net: Network, updates: Mapping[str, float], derived: np.ndarray | None = None) -> Network:
    """A network whose parameters include ``updates`` and whose derived link (and candidate) latencies follow them.

    ``derived`` (default :func:`derived_links` of ``net``) selects the links re-derived; the
    others keep their explicit latency.

    Raises
    ------
    ValidationError
        When an update is not a known latency parameter or lies outside its bounds.
    """
    problems = []
    for name, value in updates.items():
        lo, hi = PARAMETER_BOUNDS.get(name, (None, None))
        if lo is None or hi is None:
            problems.append(Problem(f"not a calibrated parameter (choose from {', '.join(FITTED_PARAMETERS)})",
                                    field=name))
        elif not (math.isfinite(float(value)) and lo <= float(value) <= hi):
            problems.append(Problem(f"must lie in [{lo}, {hi}], got {value}", field=name))
    if problems:
        raise ValidationError(problems)
    mask = derived_links(net) if derived is None else np.asarray(derived, dtype=bool)
    params = {**net.parameters, **{k: float(v) for k, v in updates.items()}}
    links = net.links.copy()
    if mask.any():
        sub = links.loc[mask]
        links.loc[mask, "latency_ms"] = np.round(
            link_latency_ms(sub["length_km"].to_numpy(float), sub["kind"].to_numpy(), params), 4)
    meta = {**net.meta, "parameters": {**dict(net.meta.get("parameters") or {}), **params}}
    cands = net.candidates
    if len(cands):  # candidate routes' derived latencies follow the parameters too (overrides are kept)
        from backbone.derived import rederive

        cands = rederive("candidates", cands, cands, net.sites, net.sites, net.parameters, params)
    return replace(net, links=links, meta=meta, candidates=cands)


# ---------------------------------------------------------------------- routing the pairs
@dataclass(frozen=True)
class _Routed:
    """Pairs routed on one network: link positions per pair, one-way backbone latency, access km."""

    paths: list[tuple[int, ...]]
    backbone_ms: np.ndarray
    access_km: np.ndarray


def _resolve(net: Network, measured: pd.DataFrame, file: str) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                        list[str], list[str]]:
    from backbone.route import resolve_endpoint

    pos = {s: i for i, s in enumerate(net.sites.index)}
    src, dst, snap = [], [], []
    names_a, names_b = [], []
    problems = []
    for a, b, record in zip(measured["from"], measured["to"], measured["record"], strict=True):
        ends = []
        for name, text in (("from", a), ("to", b)):
            try:
                ends.append(resolve_endpoint(net, str(text)))
            except BackboneError as exc:
                problems.append(Problem(str(exc), file=file, record=str(record), field=name))
        if len(ends) == 2:
            src.append(pos[ends[0].site])
            dst.append(pos[ends[1].site])
            snap.append(ends[0].snap_km + ends[1].snap_km)
            names_a.append(ends[0].site)
            names_b.append(ends[1].site)
    if problems:
        raise ValidationError(problems)
    return np.array(src, dtype=int), np.array(dst, dtype=int), np.array(snap, dtype=float), names_a, names_b


def _route(net: Network, src: np.ndarray, dst: np.ndarray, snap_km: np.ndarray, records: Sequence[str]) -> _Routed:
    """Lowest-latency paths of every pair (one Dijkstra per distinct source)."""
    from scipy.sparse.csgraph import dijkstra

    from backbone.route import min_latency_graph

    graph, arc_link = min_latency_graph(net)
    uniq, inv = np.unique(src, return_inverse=True)
    dist, pred = dijkstra(graph, indices=uniq, return_predecessors=True)
    one_way = dist[inv, dst]
    unreachable = ~np.isfinite(one_way)
    if unreachable.any():
        raise NotFoundError("no path for measured pair(s) " + ", ".join(
            f"{records[i]} ({net.sites.index[src[i]]} - {net.sites.index[dst[i]]})"
            for i in np.flatnonzero(unreachable)[:10]))
    paths = []
    for row, t in zip(inv, dst, strict=True):  # walk each pair's predecessor chain (a few hops each)
        nodes = [int(t)]
        origin = int(uniq[row])
        while nodes[-1] != origin:
            nodes.append(int(pred[row, nodes[-1]]))
        nodes.reverse()
        paths.append(tuple(arc_link[(u, v)] for u, v in zip(nodes[:-1], nodes[1:], strict=True)))
    return _Routed(paths, one_way, snap_km * float(net.parameters["route_factor"]))


def _design(net: Network, routed: _Routed, derived: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Design matrix ``X`` (pairs x theta) and offset so that ``rtt = X @ theta + offset``."""
    import scipy.sparse as sp

    links = net.links
    n_pairs, n_links = len(routed.paths), len(links)
    rows = np.repeat(np.arange(n_pairs), [len(p) for p in routed.paths])
    cols = np.fromiter((li for p in routed.paths for li in p), dtype=int, count=len(rows))
    incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_pairs, n_links))
    ms_per_km = geo.fibre_delay_ms_per_km(net.parameters["group_index"])
    floor_ms = links["length_km"].to_numpy(float) * ms_per_km
    is_sub = (links["kind"] == "submarine").to_numpy()
    explicit = np.where(derived, 0.0, links["latency_ms"].to_numpy(float))
    terrestrial = incidence @ (floor_ms * derived * ~is_sub) + routed.access_km * ms_per_km
    submarine = incidence @ (floor_ms * derived * is_sub)
    hops = incidence @ derived.astype(float)
    x = 2.0 * np.column_stack([terrestrial, submarine, hops])
    return x, 2.0 * (incidence @ explicit)


def _fit(x: np.ndarray, offset: np.ndarray, y: np.ndarray, theta0: np.ndarray, free: np.ndarray, loss: str,
         f_scale: float) -> np.ndarray:
    """Bounded robust least squares on relative residuals; fixed parameters stay at ``theta0``."""
    from scipy.optimize import least_squares

    lower = np.array([PARAMETER_BOUNDS[p][0] for p in FITTED_PARAMETERS])
    upper = np.array([PARAMETER_BOUNDS[p][1] for p in FITTED_PARAMETERS])
    theta = np.clip(theta0, lower, upper)
    if not free.any() or len(y) == 0:
        return theta
    fixed_part = x[:, ~free] @ theta[~free] + offset
    a = x[:, free] / y[:, None]
    b = (fixed_part - y) / y
    # a parameter no pair depends on (say, no path crosses the sea) keeps its starting value
    used = np.abs(a).sum(axis=0) > 0
    if not used.any():
        return theta
    a_used = a[:, used]
    start = theta[free][used]
    lo, hi = lower[free][used], upper[free][used]
    start = np.clip(start, lo, np.nextafter(hi, lo))
    res = least_squares(lambda t: a_used @ t + b, start, jac=lambda t: a_used, bounds=(lo, hi), loss=loss,
                        f_scale=f_scale, method="trf")
    out = theta.copy()
    idx = np.flatnonzero(free)[used]
    out[idx] = res.x
    return out


def error_stats(predicted_ms: np.ndarray, measured_ms: np.ndarray) -> dict[str, float]:
    """Absolute errors of predicted against measured RTTs: median and worst, in ms and percent,
    and the median signed percent error (negative: the model is optimistic)."""
    p, m = np.asarray(predicted_ms, dtype=float), np.asarray(measured_ms, dtype=float)
    if len(m) == 0:
        return {"median_abs_ms": 0.0, "worst_abs_ms": 0.0, "median_abs_pct": 0.0, "worst_abs_pct": 0.0,
                "median_signed_pct": 0.0}
    err = p - m
    pct = 100.0 * err / m
    return {"median_abs_ms": round(float(np.median(np.abs(err))), 3),
            "worst_abs_ms": round(float(np.max(np.abs(err))), 3),
            "median_abs_pct": round(float(np.median(np.abs(pct))), 3),
            "worst_abs_pct": round(float(np.max(np.abs(pct))), 3),
            "median_signed_pct": round(float(np.median(pct)), 3)}


# ---------------------------------------------------------------------- the fit
@dataclass(frozen=True)
class CalibrationResult:
    """A calibration: the calibrated network, fitted parameters, per-pair table and errors.

    Attributes
    ----------
    network
        The input network with the fitted parameters and its derived latencies re-derived; its
        ``meta["calibration"]`` records the fit (date, pairs, parameters, errors).
    parameters, previous_parameters
        Fitted and starting values of :data:`FITTED_PARAMETERS`.
    pairs
        One row per measured pair: ``from``, ``to``, ``from_site``, ``to_site``, ``source``,
        ``measured_rtt_ms``, ``before_rtt_ms``, ``after_rtt_ms``, ``loo_rtt_ms``, ``error_pct``
        (after), ``hops`` and ``path`` (after).
    before, after, leave_one_out
        :func:`error_stats` of the input model, the calibrated model and the leave-one-out predictions.
    """

    network: Network
    parameters: dict[str, float]
    previous_parameters: dict[str, float]
    pairs: pd.DataFrame
    before: dict[str, float]
    after: dict[str, float]
    leave_one_out: dict[str, float]
    iterations: int
    converged: bool
    loss: str
    date: str
    fitted: tuple[str, ...]
    notes: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """The calibration as stored in the scenario's metadata (``scenario.yaml: calibration``)."""
        return {"date": self.date, "pairs": len(self.pairs), "loss": self.loss, "fitted": list(self.fitted),
                "parameters": dict(self.parameters), "previous_parameters": dict(self.previous_parameters),
                "iterations": self.iterations, "converged": self.converged,
                "errors": {"before": self.before, "after": self.after, "leave_one_out": self.leave_one_out}}

    def pairs_records(self) -> list[dict[str, Any]]:
        """:attr:`pairs` without ``path``, rounded to 3 decimals, one record per pair (``pairs_table``)."""
        return self.pairs.drop(columns=["path"]).round(3).to_dict("records")

    def to_dict(self) -> dict[str, Any]:
        """JSON form as ``backbone calibrate --json`` prints it."""
        return {**self.record(), "notes": list(self.notes), "pairs_table": self.pairs_records()}


def _check_options(net: Network, fit: Sequence[str], loss: str, f_scale: float, max_iterations: int) -> None:
    """Raise :class:`ValidationError` listing every bad calibration option (and a scenario with no links)."""
    problems = [Problem(f"not a calibrated parameter (choose from {', '.join(FITTED_PARAMETERS)})", field="fit")
                for p in fit if p not in FITTED_PARAMETERS]
    if loss not in LOSSES:
        problems.append(Problem(f"unknown loss {loss!r}; choose one of {', '.join(LOSSES)}", field="loss"))
    if not (isinstance(max_iterations, int) and 1 <= max_iterations <= 50):
        problems.append(Problem(f"must be an integer in [1, 50], got {max_iterations!r}", field="max_iterations"))
    if not (math.isfinite(f_scale) and f_scale > 0):
        problems.append(Problem(f"must be > 0, got {f_scale}", field="f_scale"))
    if len(net.links) == 0:
        problems.append(Problem("the scenario has no links to calibrate", table="links"))
    if problems:
        raise ValidationError(problems)


def _leave_one_out(x: np.ndarray, offset: np.ndarray, y: np.ndarray, theta: np.ndarray, free: np.ndarray,
                   loss: str, f_scale: float) -> np.ndarray:
    """Each pair's round trip predicted by a fit without it (on the final paths, starting from ``theta``)."""
    loo = np.empty(len(y))
    keep = np.ones(len(y), dtype=bool)
    for i in range(len(y)):  # refit without pair i (on the final paths), predict it
        keep[i] = False
        t_i = _fit(x[keep], offset[keep], y[keep], theta, free, loss, f_scale)
        loo[i] = float(x[i] @ t_i + offset[i])
        keep[i] = True
    return loo


def calibrate(net: Network, measured: pd.DataFrame, fit: Sequence[str] = FITTED_PARAMETERS, loss: str = "soft_l1",
              f_scale: float = 0.05, max_iterations: int = 5, date: str | None = None,
              source_label: str = "") -> CalibrationResult:
    """Fit the latency parameters of ``net`` to measured round trips.

    Parameters
    ----------
    net
        The scenario to calibrate (its links' explicit, non-derived latencies are kept).
    measured
        Pairs from :func:`load_measured` or :func:`measured_frame`.
    fit
        Which of :data:`FITTED_PARAMETERS` to fit; the others keep the scenario's value.
    loss, f_scale
        Robust loss of :func:`scipy.optimize.least_squares` and its scale (a relative error:
        0.05 = 5 %; residuals beyond it count less than quadratically).
    max_iterations
        Fit / re-route rounds at most (the lowest-latency paths depend on the parameters).
    date
        Date recorded in the metadata (ISO; default: today, UTC).
    source_label
        What the measurements are (a file name), recorded in the metadata.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    ValidationError
        For an unknown parameter or loss, a bad option, or an endpoint that is neither a site nor
        a point (naming the record and field).
    NotFoundError
        When no path joins a measured pair.
    """
    _check_options(net, fit, loss, f_scale, max_iterations)
    if not {"from", "to", "rtt_ms", "source", "record"} <= set(measured.columns):  # a caller's own table
        measured = measured_frame(measured.to_dict("records"), file=source_label)
    file = source_label
    src, dst, snap, site_a, site_b = _resolve(net, measured, file)
    records = measured["record"].astype(str).tolist()
    y = measured["rtt_ms"].to_numpy(float)
    free = np.array([p in fit for p in FITTED_PARAMETERS])
    derived = derived_links(net)
    previous = {p: float(net.parameters[p]) for p in FITTED_PARAMETERS}
    theta = np.array([previous[p] for p in FITTED_PARAMETERS])

    before_routed = _route(net, src, dst, snap, records)
    before_rtt = 2.0 * (before_routed.backbone_ms + access_latency_ms(before_routed.access_km, net.parameters))

    routed, current = before_routed, net
    converged, iterations = False, 0
    for iterations in range(1, max_iterations + 1):
        x, offset = _design(current, routed, derived)
        theta = _fit(x, offset, y, theta, free, loss, f_scale)
        current = apply_latency_parameters(net, dict(zip(FITTED_PARAMETERS, theta.tolist(), strict=True)), derived)
        again = _route(current, src, dst, snap, records)
        changed = sum(a != b for a, b in zip(again.paths, routed.paths, strict=True))
        logger.info("calibration round %d: theta=%s, %d path(s) changed", iterations, np.round(theta, 4), changed)
        routed = again
        if changed == 0:
            converged = True
            break

    theta = np.round(theta, 6)  # the values recorded are the values used
    current = apply_latency_parameters(net, dict(zip(FITTED_PARAMETERS, theta.tolist(), strict=True)), derived)
    routed = _route(current, src, dst, snap, records)
    after_rtt = 2.0 * (routed.backbone_ms + access_latency_ms(routed.access_km, current.parameters))
    x, offset = _design(current, routed, derived)
    loo = _leave_one_out(x, offset, y, theta, free, loss, f_scale)

    link_ids = current.links.index
    pairs = pd.DataFrame({
        "from": measured["from"].to_numpy(), "to": measured["to"].to_numpy(),
        "from_site": site_a, "to_site": site_b, "source": measured["source"].to_numpy(),
        "measured_rtt_ms": y, "before_rtt_ms": before_rtt, "after_rtt_ms": after_rtt, "loo_rtt_ms": loo,
        "error_pct": 100.0 * (after_rtt - y) / y,
        "hops": [len(p) for p in routed.paths],
        "path": [[str(link_ids[i]) for i in p] for p in routed.paths],
    })
    fitted = {p: float(v) for p, v in zip(FITTED_PARAMETERS, theta, strict=True)}
    notes = []
    unused = [p for p, f, col in zip(FITTED_PARAMETERS, free, x.T, strict=True) if f and not np.any(col)]
    if unused:
        notes.append(f"no measured path depends on {', '.join(unused)}: kept at the scenario's value")
    if len(y) < int(free.sum()):
        notes.append(f"{len(y)} measured pair(s) for {int(free.sum())} fitted parameters: the fit is not unique "
                     "(measure more pairs or fix parameters with `fit`)")
    if not converged:
        notes.append(f"paths still changed after {max_iterations} fit/re-route rounds; the last fit is kept")
    result = CalibrationResult(
        network=current, parameters=fitted, previous_parameters=previous, pairs=pairs,
        before=error_stats(before_rtt, y), after=error_stats(after_rtt, y), leave_one_out=error_stats(loo, y),
        iterations=iterations, converged=converged, loss=loss,
        date=date or dt.datetime.now(dt.UTC).date().isoformat(), fitted=tuple(p for p in FITTED_PARAMETERS if p in fit),
        notes=notes)
    record = result.record()
    if source_label:
        record["measured"] = source_label
    final = replace(current, meta={**current.meta, "calibration": record})
    notes.extend(_slo_notes(final))
    return replace(result, network=final)


def _slo_notes(net: Network) -> list[str]:
    """Warn when existing demand SLOs can no longer be met on the calibrated latencies."""
    if len(net.demands) == 0 or net.demands["slo_rtt_ms"].isna().all():
        return []
    from backbone.demand import slo_violations

    bad = slo_violations(net)
    if bad.empty:
        return []
    return [f"{len(bad)} demand(s) have an SLO the calibrated latencies cannot meet (e.g. {bad.index[0]}): "
            "regenerate demand (`backbone demand`) or relax their slo_rtt_ms"]
