"""``backbone workloads``: a scenario's training jobs and datasets, and the backbone traffic they create."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from backbone.api.cli.common import (
    JsonOpt,
    ScenarioArg,
    emit_json,
    err_console,
    handle_errors,
    load,
    out_console,
)


def register(app: typer.Typer) -> None:
    """Add the ``workloads`` command to ``app``."""
    app.command("workloads")(workloads)


AtOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--at", metavar="JOB=SITE[,SITE]",
    help="Run a training job at these sites instead of its pinned ones (repeat for more jobs; 'JOB=' unplaces it).")]


def parse_at(values: list[str] | None) -> dict[str, list[str]]:
    """``["big=ash,dfw", "small="]`` -> ``{"big": ["ash", "dfw"], "small": []}``.

    Raises
    ------
    ValidationError
        For a value without ``=`` or a job given twice.
    """
    from backbone.errors import Problem, ValidationError

    out: dict[str, list[str]] = {}
    problems = []
    for v in values or []:
        job, sep, sites = v.partition("=")
        if not sep or not job.strip():
            problems.append(Problem(f"expected JOB=SITE[,SITE], got {v!r}", table="options", field="at"))
        elif job.strip() in out:
            problems.append(Problem(f"job {job.strip()!r} given twice", table="options", field="at"))
        else:
            out[job.strip()] = [s.strip() for s in sites.split(",") if s.strip()]
    if problems:
        raise ValidationError(problems)
    return out


@handle_errors
def workloads(scenario: ScenarioArg = None, at: AtOpt = None, json_out: JsonOpt = False) -> None:
    """List the training jobs and datasets and the backbone traffic they create, by class and by job.

    Jobs run at their pinned sites (or where --at puts them); a job without sites is not placed (placement
    decides) and creates no traffic yet. A job's sites are shown as its sync ring, a+b+c (a -> b -> c -> a): for
    three or more sites their least-latency ring from the first given site, the placement's rule. Flows: gradient sync between a job's sites (training-sync), dataset reads
    from the nearest replica (dataset), checkpoint copies (checkpoint) and dataset growth between replicas
    (replication). Exit 2 for bad input (an unknown job or site in --at).
    """
    from backbone.workload_summary import summarise_workloads

    summary = summarise_workloads(load(scenario), parse_at(at))
    if json_out:
        emit_json(summary.to_dict())
        return
    _print(summary)


def _ids(values: Any) -> str:
    return ", ".join(values) if len(values) else "-"


def _small(value: float) -> str:
    """One decimal from 1 up (thousands separated), three significant digits below (a 0.005 Gbps read is not 0)."""
    return f"{value:,.1f}" if value >= 1 or value == 0 else f"{value:.3g}"


def _print(summary: Any) -> None:
    from rich.table import Table

    from backbone.serialize import count_text

    d = summary.to_dict()
    jobs = Table(title=f"training jobs of {summary.scenario}: {d['gpus_placed']:,} of {d['gpus']:,} GPUs placed")
    for col in ("job", "GPUs", "method", "sites", "datasets", "period", "checkpoint TB", "backbone Gbps"):
        jobs.add_column(col, justify="right" if col in ("GPUs", "checkpoint TB", "backbone Gbps") else "left")
    for j, r in summary.jobs.iterrows():
        period = f"{r['start'] or 'now'} - {r['end'] or 'open'}"
        sites = "+".join(r["sites"]) if r["placed"] else f"not placed (up to {r['max_sites']})"  # ring order
        jobs.add_row(str(j), f"{r['gpus']:,}", r["sync_method"], sites, _ids(r["datasets"]), period,
                     _small(r["checkpoint_tb"]), _small(r["backbone_gbps"]))
    out_console.print(jobs)
    data = Table(title=f"datasets: {d['stored_pb']:,.1f} PB stored of {summary.storage_pb:,.1f} PB installed")
    for col in ("dataset", "PB", "homes", "residency", "read Gbps/1000 GPU", "growth PB/yr", "read by"):
        data.add_column(col, justify="right" if col in ("PB", "read Gbps/1000 GPU", "growth PB/yr") else "left")
    for i, r in summary.datasets.iterrows():
        data.add_row(str(i), _small(r["size_pb"]), _ids(r["home_sites"]), _ids(r["residency"]) if len(
            r["residency"]) else "anywhere", _small(r["read_gbps_per_1000_gpus"]), _small(r["growth_pb_per_year"]),
                     _ids(r["read_by"]))
    out_console.print(data)
    by = Table(title=f"backbone traffic: {summary.total_gbps:,.1f} Gbps")
    by.add_column("class")
    by.add_column("demands", justify="right")
    by.add_column("Gbps", justify="right")
    for cls, r in summary.by_class.iterrows():
        by.add_row(str(cls), f"{int(r['demands']):,}", _small(r["gbps"]))
    out_console.print(by)
    per_job = Table(title="backbone Gbps by job")
    per_job.add_column("job")
    for col in summary.by_job.columns:
        per_job.add_column(str(col), justify="right")
    for j, r in summary.by_job.iterrows():
        per_job.add_row(str(j) or "(dataset growth)", *(_small(v) for v in r))
    out_console.print(per_job)
    if d["jobs_not_placed"]:
        err_console.print(f"{count_text(d['jobs_not_placed'], 'job')} not placed: no traffic counted for them "
                          "(pin their sites or use --at)", highlight=False)
