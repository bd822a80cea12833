"""The ``place`` planning task: options in, result JSON + CSV tables out (CLI and API call this).

When ``objective="min-cost"`` cannot serve all demand (SLO, residency, GPU/power caps, links), the
task returns the best-effort plan with ``status "partial"``: it serves what it can at least cost,
names the metros left unserved in ``unserved_metros`` and explains why in ``infeasibility``, and
writes its files like any other result (the CLI prints it and exits 3; the API job succeeds and keeps
the files, its message says ``partial``). With ``allow_partial=False`` the task instead raises
:class:`~backbone.errors.InfeasibleError` with the same reasons after writing the files.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from backbone.artifacts import ArtifactWriter
from backbone.errors import InfeasibleError
from backbone.model import Network
from backbone.serialize import finite_or_none
from backbone.solver.core.progress import ProgressFn
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.placement.result import PlacementResult, solve_placement
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.summaries import PlaceSummary

logger = logging.getLogger(__name__)

PARTIAL = "partial"
"""Status of a best-effort placement that could not serve all demand (unserved metros named)."""

UNSERVED_TOLERANCE_GPUS = 1e-6
"""Unserved GPU-equivalents below this count as served (solver round-off)."""

TABLE_FILES = ("sites", "assignments", "flows", "metros", "links", "existing", "training", "n_plus_one", "replicas",
               "workload_flows")
"""Tables written as ``place_<name>.csv``."""


@dataclass(kw_only=True)
class PlaceTaskResult(TaskResult[PlaceSummary]):
    """The ``place`` task's outcome: the JSON summary, the files, and the solved :class:`PlacementResult`
    (its tables are what the plan's next stages take)."""

    placement: PlacementResult


def run_place_task(net: Network, opts: PlaceOptions, out_dir: Path | None, progress: ProgressFn) -> PlaceTaskResult:
    """Place inference and training GPUs; write ``place_*.csv`` and return the JSON summary.

    Parameters
    ----------
    net
        The scenario.
    opts
        Validated :class:`PlaceOptions`.
    out_dir
        Folder for the result files (None: write nothing).
    progress
        ``progress(fraction, message)``.

    Raises
    ------
    InfeasibleError
        min-cost cannot serve all demand and ``allow_partial`` is false (files are written first);
        by default the task returns the ``partial`` plan instead.
    SolverError
        The backend failed or found no plan in time.
    """
    result = solve_placement(net, opts, progress)
    summary = placement_summary(net, opts, result)
    if opts.verify:
        from backbone.solver.checks.placement import check_placement

        progress(0.95, "verifying the plan independently")
        report = check_placement(net, opts, result.tables, expect_full=result.fully_served)
        summary.verification = report.record()
    writer = ArtifactWriter(out_dir)
    for name in TABLE_FILES:
        writer.csv(f"place_{name}.csv", result.tables[name], index=name in ("sites", "metros", "links", "n_plus_one"))
    progress(1.0, "done")
    task = PlaceTaskResult("place", summary, writer.files, placement=result)
    if result.infeasibility and not opts.allow_partial:
        writer.json("place.json", task.to_dict() | {"files": [*writer.files, "place.json"]})
        raise InfeasibleError("placement cannot serve all demand", result.infeasibility)
    return task


def placement_summary(net: Network, opts: PlaceOptions, result: PlacementResult) -> PlaceSummary:
    """The JSON summary: status, figures, per-site and per-metro tables, assignments and ``map``."""
    t = result.tables
    sites, metros = t["sites"], t["metros"]
    status = PARTIAL if result.infeasibility else result.status
    assign = _peak_assignments(t["assignments"], metros, result)
    by_metro_site = assign.groupby(["metro", "site"], sort=True).agg(gpus=("gpus", "sum"), rtt_ms=("rtt_ms", "max"))
    map_assign = [{"metro": m, "site": s, "gpus": _num(r["gpus"])} for (m, s), r in by_metro_site.iterrows()]
    links = t["links"]
    return PlaceSummary(
        status=status,
        solver_status=result.status,
        objective=_num(result.objective),
        gap=_num(result.gap),
        lp_bound=_num(result.lp_bound),
        solve_seconds=round(result.solve_seconds, 3),
        backend=result.backend,
        cost_usd=_num(result.totals["cost_usd"]),
        capex_usd=_num(result.totals["capex_usd"]),
        opex_usd=_num(result.totals["opex_usd"]),
        served_share=_num(result.totals["served_share"]),
        totals={k: _num(v) for k, v in result.totals.items()},
        gpus_by_site={str(k): _num(v) for k, v in sites["gpus_after"].items() if v > 0},
        gpus_added_by_site={str(k): _num(v) for k, v in sites["gpus_added"].items() if v > 0},
        assignments=[{"metro": r["metro"], "class": r["class"], "site": r["site"], "period": int(r["period"]),
                      "gpus": _num(r["gpus"]), "rtt_ms": _num(r["rtt_ms"]), "share": _num(r["share"])}
                     for r in assign.to_dict("records")],
        sites=_records(sites),
        metros=_records(metros),
        training=t["training"].to_dict("records"),
        replicas=t["replicas"].to_dict("records"),
        workload_gbps_by_class={str(k): _num(v) for k, v in
                                t["workload_flows"].groupby("traffic_class")["gbps"].sum().items()},
        infeasibility=result.infeasibility,
        unserved_metros=unserved_metros(metros),
        notes=result.notes,
        model=result.stats,
        options=opts.model_dump(mode="json"),
        map={
            "site_values": {"gpus_added": {str(k): _num(v) for k, v in sites["gpus_added"].items()},
                            "gpus_after": {str(k): _num(v) for k, v in sites["gpus_after"].items()}},
            "link_values": {"utilisation": {str(k): _num(v) for k, v in links["utilisation"].items()},
                            "placement_gbps": {str(k): _num(v) for k, v in links["placement_gbps"].items()}},
            "failed_links": [],
            "assignments": map_assign,
        },
    )


def unserved_metros(metros: pd.DataFrame) -> list[dict[str, Any]]:
    """Metro demand units left (partly) unserved: ``{metro, class, demand_gpus, unserved_gpus}``,
    largest shortfall first (empty when everything is served)."""
    if metros.empty or "unserved_gpus" not in metros:
        return []
    short = metros[metros["unserved_gpus"] > UNSERVED_TOLERANCE_GPUS]
    rows = [{"metro": str(r["metro"]), "class": str(r["class"]), "demand_gpus": _num(r["demand_gpus"]),
             "unserved_gpus": _num(r["unserved_gpus"])} for r in short.to_dict("records")]
    return sorted(rows, key=lambda r: (-(r["unserved_gpus"] or 0.0), r["metro"], r["class"]))


def _peak_assignments(assign: pd.DataFrame, metros: pd.DataFrame, result: PlacementResult) -> pd.DataFrame:
    """Assignments in each unit's peak period (the only period when ``periods=1``)."""
    if assign.empty:
        return assign
    key = assign["metro"] + "/" + assign["class"]
    peak = key.map(metros["peak_period"]).to_numpy()
    return assign[assign["period"].to_numpy() == peak].reset_index(drop=True)


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rid, row in df.to_dict("index").items():
        rec: dict[str, Any] = {"id": str(rid)}
        for k, v in row.items():
            rec[str(k)] = _num(v) if isinstance(v, float | int) and not isinstance(v, bool) else (
                bool(v) if isinstance(v, bool) else v)
        out.append(rec)
    return out


def _num(v: Any) -> Any:
    """JSON-ready value: numpy -> python, floats rounded to 6 decimals (NaN/inf -> None, as
    :func:`~backbone.serialize.finite_or_none`); bools, ints and text unchanged."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float):
        return finite_or_none(v, 6)
    return v
