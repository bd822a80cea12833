"""``backbone demand``: regenerate a scenario's inference demand and traffic matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    JsonOpt,
    ScenarioArg,
    emit_json,
    err_console,
    handle_errors,
    load,
)


def register(app: typer.Typer) -> None:
    """Add the ``demand`` command to ``app``."""
    app.command("demand")(demand)


@handle_errors
def demand(
    scenario: ScenarioArg = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the scenario with regenerated demand.")]
    = Path("scenario-demand"),
    total_gbps: Annotated[Optional[float], typer.Option("--total-gbps", help="Total inter-site traffic, Gbps.")]  # noqa: UP045
    = None,
    total_inference_gpus: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--total-inference-gpus", help="Worldwide peak inference demand, GPU-equivalents.")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of the per-pair volume noise.")] = None,  # noqa: UP045
    noise_sigma: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--noise-sigma", help="Log-normal sigma of the per-pair noise (0: none).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Regenerate metro inference demand and the inter-site traffic matrix (gravity model).

    Parameters not given keep the scenario's stored ``demand_parameters`` (or the defaults). A
    topology without data centers (Topology Zoo, TopoHub, SNDlib) gets a gravity matrix between
    all its sites, by default totalling 10 % of its link capacity.
    """
    from backbone.demand import DemandParameters, regenerate, site_gravity_total_gbps, slo_violations
    from backbone.io import save_scenario

    net = load(scenario)
    if total_gbps is None and not (net.sites["kind"] == "datacenter").any() \
            and "total_gbps" not in (net.meta.get("demand_parameters") or {}):
        total_gbps = site_gravity_total_gbps(net)
    params = DemandParameters.from_meta(net.meta, total_gbps=total_gbps, total_inference_gpus=total_inference_gpus,
                                        seed=seed, noise_sigma=noise_sigma)
    with err_console.status("generating demand...", spinner="dots"):
        result = regenerate(net, params)
        path = save_scenario(result, out)
    summary = _summary(result, path, len(slo_violations(result)))
    if json_out:
        emit_json(summary)
        return
    from rich.table import Table

    t = Table(title=f"demand for {result.name} -> {path}")
    for col in ("class", "demands", "Gbps", "share", "median SLO ms"):
        t.add_column(col, justify="left" if col == "class" else "right")
    for cls, row in summary["by_class"].items():
        slo = row["median_slo_rtt_ms"]
        t.add_row(cls, f"{row['demands']:,}", f"{row['gbps']:,.0f}", f"{row['share']:.0%}",
                  "-" if slo is None else f"{slo:.0f}")
    t.add_row("total", f"{summary['demands']:,}", f"{summary['demand_gbps']:,.0f}", "100%", "", style="bold")
    err_console.print(t)
    err_console.print(f"inference demand: {summary['inference_gpus']:,.0f} GPU-equivalents over "
                      f"{summary['metros']} metros; SLO violations on shortest paths: {summary['slo_violations']}")


def _summary(net: Any, path: Path, violations: int) -> dict[str, Any]:
    import math

    d = net.demands
    total = float(d["demand_gbps"].sum())
    by_class: dict[str, dict[str, Any]] = {}
    for cls, g in d.groupby("traffic_class", sort=False):
        slo = g["slo_rtt_ms"].median()
        by_class[str(cls)] = {"demands": len(g), "gbps": round(float(g["demand_gbps"].sum()), 1),
                              "share": round(float(g["demand_gbps"].sum()) / total, 4) if total else 0.0,
                              "median_slo_rtt_ms": None if math.isnan(slo) else float(slo)}
    return {"scenario": net.name, "out": str(path), "demands": len(d), "demand_gbps": round(total, 1),
            "by_class": by_class, "metros": len(net.metros),
            "inference_gpus": float(net.metros["inference_gpus"].sum()), "slo_violations": violations,
            "parameters": net.meta.get("demand_parameters", {})}
