"""The KPIs of a plan or roadmap folder and their changes between two folders.

Every figure is read from the documents the plan (or roadmap) wrote -- ``plan.json``, ``te.json``,
``failures.json``, ``place.json``, ``design.json``, ``roadmap.json`` -- the numbers the report shows, computed by
the same functions; nothing is re-solved and no word gets a second meaning. Utilisation is min-MLU routing's;
unmet is the impact definition's traffic that cannot be carried at <= 100 % utilisation; a state survives,
is excused (no candidate can help) or is violated as in ``plan.json``'s ``survivability``. The 95th percentile
is pandas' linear quantile, as the report's utilisation chart states it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from backbone.compare.inputs import ComparedInput

__all__ = ["KPI_COLUMNS", "RANK_RULE", "kpi_changes", "placement_changes", "plan_kpis", "rank_kpis", "roadmap_kpis",
           "side_kpis"]

logger = logging.getLogger(__name__)

KPI_COLUMNS: tuple[str, ...] = ("kpi", "unit", "before", "after", "delta", "relative_change", "sign", "better_when",
                                "verdict", "source")
"""Columns of the KPI change table: ``relative_change`` is the size of the change (:func:`rank_kpis`); ``sign`` is
``+``, ``-`` or ``0`` (empty when a side has no value); ``better_when`` is ``higher``, ``lower`` or empty;
``verdict`` ``better``, ``worse`` or empty."""

RANK_RULE = ("largest relative change first: |after - before| / max(|before|, |after|), 1 when a side has no value; "
             "ties by the larger |after - before|, then by name")
"""How changed KPIs are ranked (terminal, report, deck), in words."""

KpiRow = tuple[str, str, str, Any, str]
"""(kpi, unit, better_when, value, source)."""


def _num(value: Any) -> float:
    try:
        return float(value) if value is not None else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def _quantile(values: Any, q: float) -> float:
    s = pd.Series(values, dtype=float).dropna()
    return float(s.quantile(q)) if len(s) else float("nan")


def _utilisation_rows(plan: Mapping[str, Any]) -> list[KpiRow]:
    util = ((plan.get("map_after") or {}).get("link_values") or {}).get("utilisation") or {}
    after = pd.DataFrame(plan.get("before_after") or [], columns=["scenario", "mlu_after"])
    return [
        ("utilisation_max_intact", "ratio", "lower", plan.get("mlu_after"), "plan.json mlu_after"),
        ("utilisation_p95_intact", "ratio", "lower", _quantile(list(util.values()), 0.95),
         "plan.json map_after utilisation, 95th percentile over links"),
        ("utilisation_max_worst_failure", "ratio", "lower",
         float(after["mlu_after"].max()) if len(after) else float("nan"), "plan.json before_after mlu_after, max"),
        ("utilisation_p95_failures", "ratio", "lower", _quantile(after["mlu_after"], 0.95),
         "plan.json before_after mlu_after, 95th percentile over failure states"),
    ]


def _state_rows(plan: Mapping[str, Any]) -> list[KpiRow]:
    sv = plan.get("survivability") or {}
    return [
        ("failure_states", "states", "", sv.get("states"), f"plan.json survivability ({sv.get('failure_kind', '')})"),
        ("states_survived", "states", "higher", sv.get("survived"), "plan.json survivability.survived"),
        ("states_excused", "states", "lower", len(sv.get("not_survivable") or []),
         "plan.json survivability.not_survivable (no candidate can help)"),
        ("states_violated", "states", "lower", len(sv.get("violated") or []), "plan.json survivability.violated"),
        ("worst_failure_impact_after_gbps", "Gbps", "lower", plan.get("worst_failure_after_impact_gbps"),
         "plan.json worst_failure_after_impact_gbps"),
    ]


def _slo_rows(plan: Mapping[str, Any], failures: Mapping[str, Any]) -> list[KpiRow]:
    """Latency-SLO violations before and after the upgrades (``plan.json`` ``slo_violations`` and
    ``slo_violations_after``; a plan written before they existed: the failure sweep's states, before only)."""
    before, after = plan.get("slo_violations"), plan.get("slo_violations_after")
    if before is None and failures:
        scenarios = pd.DataFrame(failures.get("scenarios") or [], columns=["scenario", "slo_violation_gbps"])
        slo = pd.to_numeric(scenarios["slo_violation_gbps"], errors="coerce")
        before = {"states": int((slo > 0).sum()), "worst_gbps": float(slo.max()) if len(slo) else None}
    before, after = before or {}, after or {}
    return [
        ("slo_violation_states", "states", "lower", before.get("states"),
         "plan.json slo_violations.states: failure states with slo_violation_gbps > 0, before upgrades"),
        ("slo_violation_states_after", "states", "lower", after.get("states"),
         "plan.json slo_violations_after.states: failure states with slo_violation_gbps > 0, after upgrades"),
        ("slo_violation_worst_gbps", "Gbps", "lower", before.get("worst_gbps"),
         "plan.json slo_violations.worst_gbps (before upgrades)"),
        ("slo_violation_worst_after_gbps", "Gbps", "lower", after.get("worst_gbps"),
         "plan.json slo_violations_after.worst_gbps"),
        ("slo_unmet_intact_after_gbps", "Gbps", "lower", after.get("intact_gbps"),
         "plan.json slo_violations_after.intact_gbps: intact demand with no path within its SLO"),
    ]


def _traffic_rows(side: ComparedInput) -> list[KpiRow]:
    plan, te, failures = side.document("plan"), side.document("te"), side.document("failures")
    by_class = plan.get("unmet_by_class_gbps") or (te.get("impact") or {}).get("unmet_by_class") or {}
    after_by_class = plan.get("unmet_by_class_gbps_after") or {}
    rows: list[KpiRow] = [
        ("carried_gbps", "Gbps", "", plan.get("carried_gbps"), "plan.json carried_gbps"),
        ("unmet_intact_gbps", "Gbps", "lower", plan.get("unmet_gbps"), "plan.json unmet_gbps (routed, before upgrades)"),
        ("unmet_intact_after_gbps", "Gbps", "lower", plan.get("unmet_gbps_after"), "plan.json unmet_gbps_after"),
    ]
    rows += [(f"unmet_intact_gbps[{cls}]", "Gbps", "lower", value,
              "plan.json unmet_by_class_gbps (te.json impact.unmet_by_class)") for cls, value in by_class.items()]
    rows += [(f"unmet_intact_after_gbps[{cls}]", "Gbps", "lower", value, "plan.json unmet_by_class_gbps_after")
             for cls, value in after_by_class.items()]
    rows += _slo_rows(plan, failures)
    rows.append(("weighted_latency_ms", "ms", "lower", plan.get("weighted_latency_ms"), "plan.json weighted_latency_ms"))
    return rows


def _placement_rows(side: ComparedInput) -> list[KpiRow]:
    plan, place = side.document("plan"), side.document("place")
    totals = place.get("totals") or {}
    residency, source = (plan.get("residency") or {}).get("violations"), "plan.json residency.violations"
    verification = place.get("verification")
    if residency is None and isinstance(verification, Mapping):  # a plan written before plan.json had it
        residency = sum(1 for v in verification.get("violations") or [] if "residency" in str(v.get("message", "")))
        source = "place.json verification (residency checks)"
    return [
        ("gpus_added", "GPU", "", plan.get("gpus_added"), "plan.json gpus_added"),
        ("gpus_after", "GPU", "", totals.get("gpus_after"), "place.json totals.gpus_after"),
        ("mw_built", "MW", "", totals.get("mw_built"), "place.json totals.mw_built"),
        ("served_share", "ratio", "higher", plan.get("served_share"), "plan.json served_share"),
        ("residency_violations", "count", "lower", residency, source),
        ("residency_violation_gpus", "GPU", "lower", (plan.get("residency") or {}).get("gpus"),
         "plan.json residency.gpus"),
    ]


def plan_kpis(side: ComparedInput) -> list[KpiRow]:
    """The KPIs of a plan folder: cost and bound, utilisation, survivability, unmet, SLOs, placement."""
    plan = side.document("plan")
    rows: list[KpiRow] = [
        ("upgrade_cost_usd", "USD", "lower", plan.get("upgrade_cost_usd"), "plan.json upgrade_cost_usd"),
        ("upgrade_lower_bound_usd", "USD", "", plan.get("upgrade_lower_bound_usd"), "plan.json upgrade_lower_bound_usd"),
        ("upgrade_gap", "ratio", "lower", plan.get("upgrade_gap"), "plan.json upgrade_gap"),
        ("links_upgraded", "links", "", plan.get("links_upgraded"), "plan.json links_upgraded"),
        ("routes_built", "routes", "", plan.get("routes_built"), "plan.json routes_built"),
        ("placement_cost_usd", "USD", "lower", plan.get("placement_cost_usd"), "plan.json placement_cost_usd"),
    ]
    return rows + _utilisation_rows(plan) + _state_rows(plan) + _traffic_rows(side) + _placement_rows(side)


def roadmap_kpis(side: ComparedInput) -> list[KpiRow]:
    """The KPIs of a roadmap folder: its totals (replica storage and training jobs left unplaced included), bound and
    gap, and per period capex, served share, MLU and survivability (``roadmap.json``)."""
    doc = side.document("roadmap")
    rows: list[KpiRow] = [(k, unit, better, doc.get(k), f"roadmap.json {k}") for k, unit, better in (
        ("total_capex_usd", "USD", "lower"), ("network_capex_usd", "USD", "lower"), ("gpu_capex_usd", "USD", ""),
        ("storage_capex_usd", "USD", ""), ("total_opex_usd", "USD", "lower"), ("objective_usd", "USD", "lower"), ("lower_bound_usd", "USD", ""),
        ("gap", "ratio", "lower"))]
    rows.append(("budget_shortfalls", "periods", "lower", len(doc.get("budget_shortfalls") or []),
                 "roadmap.json budget_shortfalls"))
    rows.append(("jobs_unplaced", "(period, job)", "lower", len(doc.get("jobs_unplaced") or []),
                 "roadmap.json jobs_unplaced"))
    for p in doc.get("periods") or []:
        name, sv = p.get("period"), p.get("survivability") or {}
        rows += [
            (f"capex_usd[{name}]", "USD", "", p.get("capex_usd"), "roadmap.json periods[].capex_usd"),
            (f"served_share[{name}]", "ratio", "higher", p.get("served_share"), "roadmap.json periods[].served_share"),
            (f"mlu[{name}]", "ratio", "lower", p.get("mlu"), "roadmap.json periods[].mlu"),
            (f"states_survived[{name}]", "states", "higher", sv.get("survived"), "roadmap.json periods[].survivability"),
            (f"states_violated[{name}]", "states", "lower", len(sv.get("violated") or []),
             "roadmap.json periods[].survivability"),
        ]
    return rows


def side_kpis(side: ComparedInput) -> pd.DataFrame:
    """The side's KPIs as a table indexed by ``kpi`` (empty for a scenario)."""
    rows = plan_kpis(side) if side.kind == "plan" else roadmap_kpis(side) if side.kind == "roadmap" else []
    frame = pd.DataFrame(rows, columns=["kpi", "unit", "better_when", "value", "source"])
    frame["value"] = frame["value"].map(_num).astype(float)
    return frame.set_index("kpi")


def kpi_changes(a: ComparedInput, b: ComparedInput) -> pd.DataFrame:
    """Every KPI of two plan (or two roadmap) folders with its delta, sign and verdict (columns
    :data:`KPI_COLUMNS`), in the KPIs' order; empty when the two sides are not of the same result kind."""
    if a.kind != b.kind or a.kind == "scenario":
        return pd.DataFrame(columns=list(KPI_COLUMNS))
    ka, kb = side_kpis(a), side_kpis(b)
    order = list(dict.fromkeys([*ka.index, *kb.index]))
    meta = kb[["unit", "better_when", "source"]].combine_first(ka[["unit", "better_when", "source"]]).reindex(order)
    before, after = ka["value"].reindex(order), kb["value"].reindex(order)
    delta = after - before
    close = np.isclose(before.fillna(0.0), after.fillna(0.0), rtol=1e-9, atol=1e-9) & before.notna() & after.notna()
    delta = delta.where(~close, 0.0)
    sign = np.where(delta.isna(), "", np.where(delta > 0, "+", np.where(delta < 0, "-", "0")))
    up = meta["better_when"] == "higher"
    down = meta["better_when"] == "lower"
    verdict = np.where(delta.isna() | (delta == 0) | ~(up | down), "",
                       np.where((up & (delta > 0)) | (down & (delta < 0)), "better", "worse"))
    scale = np.fmax(before.abs(), after.abs()).replace(0.0, np.nan)
    relative = (delta.abs() / scale).fillna(0.0).where(before.notna() == after.notna(), 1.0)
    relative = relative.where(before.notna() | after.notna(), 0.0)
    out = pd.DataFrame({"kpi": order, "unit": meta["unit"].to_numpy(), "before": before.to_numpy(),
                        "after": after.to_numpy(), "delta": delta.to_numpy(),
                        "relative_change": relative.to_numpy(dtype=float), "sign": sign,
                        "better_when": meta["better_when"].to_numpy(), "verdict": verdict,
                        "source": meta["source"].to_numpy()})
    return out[list(KPI_COLUMNS)]


def rank_kpis(kpis: pd.DataFrame) -> pd.DataFrame:
    """``kpis`` (columns :data:`KPI_COLUMNS`) ranked by the size of their change (:data:`RANK_RULE`): the largest
    ``relative_change`` first, ties by the larger ``|delta|``, then by KPI name. Relative first because the KPIs
    have different units (USD, Gbps, states, ratios): only the relative size compares across them."""
    if not len(kpis):
        return kpis
    order = np.lexsort((kpis["kpi"].astype(str).to_numpy(), -kpis["delta"].abs().fillna(0.0).to_numpy(dtype=float),
                        -kpis["relative_change"].to_numpy(dtype=float)))
    return kpis.iloc[order]


def _sites(side: ComparedInput) -> pd.DataFrame:
    records = side.document("place").get("sites") or []
    frame = pd.DataFrame(records, columns=["id", "region", "gpus_after", "mw_needed"])
    return frame.set_index("id")


def placement_changes(a: ComparedInput, b: ComparedInput) -> pd.DataFrame:
    """GPUs after the placement and the MW they need per site and per region (``place.json`` ``sites``:
    ``gpus_after``, ``mw_needed``) in plan ``a`` (``*_before``) and plan ``b`` (``*_after``), where they changed.

    Columns: ``level`` (``region`` rows first, then ``site``), ``id``, ``region``, ``gpus_before``, ``gpus_after``,
    ``gpus_delta``, ``mw_before``, ``mw_after``, ``mw_delta``; largest GPU change first.
    """
    columns = ["level", "id", "region", "gpus_before", "gpus_after", "gpus_delta", "mw_before", "mw_after", "mw_delta"]
    if a.kind != "plan" or b.kind != "plan":
        return pd.DataFrame(columns=columns)
    sa, sb = _sites(a), _sites(b)
    ids = sa.index.union(sb.index, sort=False)
    region = sb["region"].combine_first(sa["region"]).reindex(ids)
    site = pd.DataFrame({"level": "site", "id": ids, "region": region.to_numpy(),
                         "gpus_before": sa["gpus_after"].reindex(ids).fillna(0.0).to_numpy(dtype=float),
                         "gpus_after": sb["gpus_after"].reindex(ids).fillna(0.0).to_numpy(dtype=float),
                         "mw_before": sa["mw_needed"].reindex(ids).fillna(0.0).to_numpy(dtype=float),
                         "mw_after": sb["mw_needed"].reindex(ids).fillna(0.0).to_numpy(dtype=float)})
    sums = site.groupby("region")[["gpus_before", "gpus_after", "mw_before", "mw_after"]].sum().reset_index()
    regions = sums.assign(level="region", id=sums["region"])
    out = pd.concat([site, regions], ignore_index=True)
    out["gpus_delta"] = out["gpus_after"] - out["gpus_before"]
    out["mw_delta"] = out["mw_after"] - out["mw_before"]
    changed = ~np.isclose(out["gpus_delta"], 0.0, atol=1e-6) | ~np.isclose(out["mw_delta"], 0.0, atol=1e-9)
    out = out[changed]
    out = out.iloc[np.lexsort((-out["gpus_delta"].abs().to_numpy(), out["level"] != "region"))]
    return out.reset_index(drop=True)[columns]
