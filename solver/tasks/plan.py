"""The ``plan`` task, the main job: one command from a scenario to a planner's report.

Stages, a chain of functions each taking the previous stages' typed results (never their files, so a plan
without an output folder computes the same answer), each calling the same task function the CLI and the API
call on its own:

1. **place** -- where the GPUs go (:mod:`backbone.solver.placement`);
2. **route** -- the scenario's traffic plus the traffic the placement creates (serving sites to
   their metros' access sites), routed by TE (:mod:`backbone.solver.te`);
3. **failures** -- every single-SRLG failure re-routed (:mod:`backbone.solver.failures`);
4. **upgrades** -- the cheapest module upgrades and new routes so the backbone carries all demand within a
   utilisation ceiling in the intact state and in every failure state (the survivable design,
   :func:`backbone.solver.plan.pipeline.plan_upgrades`, against the failure states :mod:`backbone.solver.plan.states`
   selects). A state the current capacity already carries cannot bind (upgrades only add capacity), so only the
   states the sweep found short are modelled;
5. **report** -- maps (PNG world and Pacific-centred, SVG, interactive HTML, GeoJSON), charts,
   ``report.html`` and the machine-readable results (JSON + CSV) (:mod:`backbone.solver.plan.report_data`).

This module holds the options (:mod:`~backbone.solver.tasks.plan_options`), the chain of typed stage functions and
the summary; the algorithms are the modules named above.

A plan file (YAML) sets every option so a study can be rerun exactly; the report records the
plan file, the scenario's fingerprint and the software version.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from backbone.artifacts import ArtifactWriter
from backbone.model import Network
from backbone.serialize import count_text
from backbone.solver.checks.records import CheckRecord
from backbone.solver.core.progress import ProgressFn
from backbone.solver.design.summary import PlanDesign, SurvivableDesignSummary, built_design
from backbone.solver.failures import FailureOptions
from backbone.solver.failures.impact import StateAssessment
from backbone.solver.failures.scenarios import implicit_groups
from backbone.solver.failures.summary import FailuresSummary, ran_on_text
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.plan.pipeline import (
    StageStatuses,
    UpgradeStage,
    grown_network,
    network_after_placement,
    overall_status,
    placement_demands,
    plan_upgrades,
)
from backbone.solver.plan.report_data import draw_images, headline_text, plan_map, report_data
from backbone.solver.plan.states import (
    LinkSurvivability,
    covers_links,
    design_failure_kind,
    link_survivability,
)
from backbone.solver.plan.workloads import with_workload_demands
from backbone.solver.tasks.base import TaskResult
from backbone.solver.tasks.failures import FailuresTaskResult
from backbone.solver.tasks.place import PlaceTaskResult
from backbone.solver.tasks.plan_options import (
    DESIGN_KEYS,
    PlanOptions,
    PlanUpgradeOptions,
    load_plan_file,
    stage_options,
)
from backbone.solver.tasks.summaries import (
    ComparedWith,
    FailuresToday,
    PlaceSummary,
    PlanSummary,
    PlanVerification,
    Residency,
    StageRow,
)
from backbone.solver.tasks.te import TEOptions, TETaskResult

if TYPE_CHECKING:
    from backbone.compare import ComparedInput, DiffResult

logger = logging.getLogger(__name__)

__all__ = ["DESIGN_KEYS", "STAGES", "PlanOptions", "PlanTaskResult", "PlanUpgradeOptions", "UpgradeStage",
           "load_plan_file", "run_plan_task", "stage_options"]

STAGES = ("place", "route", "failures", "today", "upgrades", "report")
"""Plan stages, in order."""

STAGE_WEIGHTS = {"place": 0.2, "route": 0.05, "failures": 0.15, "today": 0.1, "upgrades": 0.4, "report": 0.1}


@dataclass(frozen=True)
class PlanStageOptions:
    """The options of each stage of one plan (the typed stage sections of :class:`PlanOptions`, the plan's
    defaults applied); ``survive`` is the failure kind the upgrade stage designs for."""

    place: PlaceOptions
    te: TEOptions
    failures: FailureOptions
    upgrade: PlanUpgradeOptions
    survive: str


@dataclass
class PlanRun:
    """One plan run's shared state: its options, its artifact writer, progress, and the per-stage rows and
    timings the summary reports."""

    opts: PlanOptions
    stages: PlanStageOptions
    writer: ArtifactWriter
    progress: ProgressFn
    stage_rows: list[StageRow] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    done: float = 0.0

    def stage_progress(self, stage: str) -> ProgressFn:
        """Progress of ``stage``, mapped onto its share of the whole plan."""
        base, w = self.done, STAGE_WEIGHTS[stage]
        return lambda f, m: self.progress(min(0.999, base + w * f), f"{stage}: {m}")

    def finish(self, stage: str, t0: float, *, status: str | None = None, backend: str | None = None,
               gap: float | None = None, note: str | None = None) -> None:
        """Record the stage's time (and, given its ``note``, its row of the stage table with its ``status``,
        ``backend`` and ``gap``) and advance the progress base."""
        self.timings[stage] = time.perf_counter() - t0
        if note is not None:
            self.stage_rows.append(StageRow(stage=stage, status=status, backend=backend, gap=gap,
                                            seconds=self.timings[stage], note=note))
        self.done += STAGE_WEIGHTS.get(stage, 0.0)


@dataclass
class RouteStage:
    """The route stage: the network after the placement (its GPUs and its traffic added) and its TE result."""

    routed: Network
    extra_demands: pd.DataFrame
    te: TETaskResult


@dataclass
class AfterStage:
    """The planned backbone assessed: min-MLU utilisation and unmet traffic, the survivability check
    (``verify``), and its single-link survivability when the design did not target single links
    (:func:`~backbone.solver.plan.states.link_survivability`)."""

    state: StateAssessment
    verification: CheckRecord | None
    link_check: LinkSurvivability | None = None


@dataclass(kw_only=True)
class PlanTaskResult(TaskResult[PlanSummary]):
    """The ``plan`` task's outcome: the summary, the files and every stage's typed result."""

    place: PlaceTaskResult
    route: RouteStage
    failures: FailuresTaskResult
    upgrade: UpgradeStage
    after: AfterStage
    today: FailuresTaskResult | None = None


def run_plan_task(net: Network, opts: PlanOptions, out_dir: Path | None, progress: ProgressFn) -> PlanTaskResult:
    """Place, route, sweep SRLG failures, plan upgrades, and write the report: a chain of stage functions, each
    taking the previous stages' results.

    Files (in ``out_dir``): ``report.html``, ``map_world.png``, ``map_pacific.png``, ``map.svg``,
    ``map.html``, ``map.geojson``, the chart PNGs, ``place.json``/``te.json``/``failures.json``/
    ``design.json`` with their CSV tables, and ``plan.json`` (the summary, added by the service).
    """
    t_start = time.perf_counter()
    baseline = None
    if opts.baseline:  # a bad baseline folder is bad input: refused before anything runs or is written
        from backbone.compare import load_input

        baseline = load_input(opts.baseline)
    work = grown_network(net, opts.demand_growth)
    run = PlanRun(opts, plan_stage_options(opts), ArtifactWriter(out_dir), progress)
    place = place_stage(run, work)
    route = route_stage(run, work, place)
    failures = failures_stage(run, route)
    today = today_stage(run, net)
    upgrade = upgrade_stage(run, route, failures)
    after = after_stage(run, upgrade)
    summary = plan_summary(net, run, place, route, failures, upgrade, after, today)
    compared = compare_stage(run, baseline, summary, place, route, failures, upgrade)
    report_stage(run, net, summary, place, route, failures, upgrade, compared, today)
    summary.stage_seconds["report"] = round(run.timings["report"], 3)
    summary.total_seconds = round(time.perf_counter() - t_start, 3)
    progress(1.0, "done")
    return PlanTaskResult("plan", summary, run.writer.files, place=place, route=route, failures=failures,
                          upgrade=upgrade, after=after, today=today)


def plan_stage_options(opts: PlanOptions) -> PlanStageOptions:
    """The options of every stage (validated with ``opts``), and the failure kind the design survives (the design's
    ``survive``, else the failures stage's kind when it is one a design can survive, else ``srlg``)."""
    return PlanStageOptions(opts.place, opts.te, opts.failures, opts.design,
                            design_failure_kind(opts.design.survive, opts.failures.kind))


def place_stage(run: PlanRun, work: Network) -> PlaceTaskResult:
    """1. place: where the GPUs go (the ``place`` task)."""
    from backbone.solver.tasks.place import run_place_task

    t0 = time.perf_counter()
    run.progress(0.0, "place: building the placement model")
    place_res = run_place_task(work, run.stages.place, run.writer.out_dir, run.stage_progress("place"))
    ps = place_res.summary
    run.writer.json("place.json", place_res.to_dict())
    run.writer.extend(place_res.files)
    run.finish("place", t0, status=ps.status, backend=ps.backend, gap=ps.gap, note="; ".join(ps.infeasibility)[:300])
    return place_res


def route_stage(run: PlanRun, work: Network, place: PlaceTaskResult) -> RouteStage:
    """2. route: the scenario's traffic plus the placement's, on the network with the placement's GPUs (TE)."""
    from backbone.solver.tasks.te import run_te_task

    t0 = time.perf_counter()
    slo_by_class = {c.name: c.slo_rtt_ms for c in run.stages.place.classes}
    place_tables = place.placement.tables
    extra = placement_demands(place_tables["flows"], slo_by_class)
    place_opts = run.stages.place
    if place_opts.scenario_jobs or place_opts.training:  # training placed: its flows and dataset growth are routed
        work, extra = with_workload_demands(work, place_tables, extra)
    routed = network_after_placement(work, place_tables["sites"], extra)
    te_res = run_te_task(routed, run.stages.te, run.writer.out_dir, run.stage_progress("route"))
    ts = te_res.summary
    run.writer.json("te.json", te_res.to_dict())
    run.writer.extend(te_res.files)
    run.finish("route", t0, status=ts.status, backend=ts.backend,
               note=f"{len(extra)} placement demands added, {ts.unmet_gbps:,.1f} Gbps unmet")
    return RouteStage(routed, extra, te_res)


def failures_stage(run: PlanRun, route: RouteStage) -> FailuresTaskResult:
    """3. failures: every failure of the failures stage's kind re-routed (the ``failures`` task)."""
    from backbone.solver.tasks.failures import run_failures_task

    t0 = time.perf_counter()
    fail_opts = run.stages.failures
    fail_res = run_failures_task(route.routed, fail_opts, run.writer.out_dir, run.stage_progress("failures"))
    fs = fail_res.summary
    run.writer.json("failures.json", fail_res.to_dict())
    run.writer.extend(fail_res.files)
    run.finish("failures", t0, status=fs.status, backend=fail_opts.backend,
               note=f"{count_text(fs.scenarios_run, 'scenario')}, {fs.scenarios_per_second or 0:.1f}/s"
                    + (f", on {ran_on_text(fs.ran_on)}" if fs.ran_on else ""))
    return fail_res


def today_stage(run: PlanRun, net: Network) -> FailuresTaskResult:
    """3b. today: what breaks today -- the scenario as given (today's network, today's traffic: no growth, no
    placement) swept by the same task as ``backbone failures``, with the failures stage's options. Its files are
    not written (``failures.json`` is the sweep with the plan's traffic)."""
    from backbone.solver.tasks.failures import run_failures_task

    t0 = time.perf_counter()
    fail_opts = run.stages.failures
    res = run_failures_task(net, fail_opts, None, run.stage_progress("today"))
    fs = res.summary
    run.finish("today", t0, status=fs.status, backend=fail_opts.backend,
               note=f"today's network and traffic: {count_text(fs.scenarios_run, 'scenario')}, "
                    f"{fs.not_survived} not carried")
    return res


def failures_today(fs: FailuresSummary) -> FailuresToday:
    """The plan summary's ``failures_today``: what ``backbone failures`` finds on the scenario as given (today's
    network and traffic, its summary ``fs``): scenarios swept, survived, not carried, and the worst one."""
    worst = fs.worst[0] if fs.worst else None
    return FailuresToday(scenarios=fs.scenarios_run, survived=fs.survived, not_survived=fs.not_survived,
                         worst_failure=worst["scenario"] if worst else None,
                         worst_failure_impact_gbps=worst["impact_gbps"] if worst else None)


def upgrade_stage(run: PlanRun, route: RouteStage, failures: FailuresTaskResult) -> UpgradeStage:
    """4. upgrades: the survivable design (:func:`~backbone.solver.plan.pipeline.plan_upgrades`; skipped with
    ``skip_upgrades``, ``infeasible`` kept as a result), its table and summary written when it ran."""
    t0 = time.perf_counter()
    skip = run.opts.skip_upgrades
    upgrade = plan_upgrades(route.routed, failures.sweep.worst_first(), run.stages.failures, run.stages.upgrade,
                            run.stages.survive, skip, run.stage_progress("upgrades"))
    survivability, built = upgrade.survivability, upgrade.built
    if not skip:
        run.writer.csv("design_upgrades.csv", upgrade.table())
        run.writer.json("design.json", {"kind": "design", **upgrade.summary.document()})
    run.finish("upgrades", t0, status=upgrade.summary.status, backend=run.stages.upgrade.backend,
               gap=built.gap if built else None,
               note="skipped: nothing designed" if skip else
               f"{count_text(len(built.iterations) if built else 0, 'iteration')}; "
               f"{count_text(built.states_examined if built else 0, 'state')} examined, "
               f"{built.states_added if built else 0} added to the model, {built.states_needed if built else 0} needed; "
               f"survives {survivability.survived} of {survivability.states}")
    return upgrade


def after_stage(run: PlanRun, upgrade: UpgradeStage) -> AfterStage:
    """The planned backbone: assessed as every state is (:func:`~backbone.solver.failures.impact.assess_state`), written
    as ``scenario_after/``, and checked independently for survivability (``verify``)."""
    from backbone.io import save_scenario
    from backbone.solver.failures.impact import assess_state

    t0 = time.perf_counter()
    opts, te_opts, fail_opts = run.opts, run.stages.te, run.stages.failures
    after = upgrade.network_after
    after_state = assess_state(after, te_opts.k_paths, te_opts.backend, te_opts.time_limit_s)
    run.writer.directory("scenario_after", lambda path: save_scenario(after, path))
    verification_after = None
    if opts.verify and not opts.skip_upgrades and upgrade.built is not None:
        from backbone.solver.checks.survivability import check_survivability

        def verify_progress(fraction: float, message: str) -> None:
            run.progress(run.done, f"verify: {message}")

        verification_after = check_survivability(
            after, upgrade.kind,  # each excuse checked, with its Gbps
            [x.model_dump() for x in upgrade.survivability.not_survivable],
            time_limit_s=fail_opts.time_limit_s,
            progress=verify_progress, failure_policy=fail_opts.failure_policy).record()
    link_check = None
    if not opts.skip_upgrades and upgrade.built is not None and not covers_links(upgrade.kind):
        run.progress(run.done, "after: single-link failures of the planned backbone")
        link_check = single_link_check(after, fail_opts)
    run.finish("after", t0)
    return AfterStage(after_state, verification_after, link_check)


def single_link_check(after: Network, fail_opts: FailureOptions) -> LinkSurvivability:
    """One quick sweep of every single-link failure of the planned backbone (overloaded states flagged, not
    measured), as :func:`~backbone.solver.plan.states.link_survivability`."""
    from backbone.solver.failures import sweep

    quick = fail_opts.model_copy(update={"kind": "link", "derate": None, "scenarios": None, "verify": False,
                                         "shortfall": False})
    return link_survivability(sweep(after, quick).scenarios)


RESIDENCY_EXAMPLES = 10
"""Assignments that violate residency listed in ``plan.json`` (all are counted)."""


def after_traffic_figures(route: RouteStage, failures: FailuresTaskResult, upgrade: UpgradeStage,
                          after_state: StateAssessment) -> dict[str, Any]:
    """Unmet traffic per class and latency-SLO violations before and after the upgrades, by the one definition
    (:meth:`~backbone.solver.failures.impact.StateAssessment.unmet_by_class`, :func:`~backbone.solver.failures.impact.slo_violation_summary`
    over the failure records before and after): ``plan.json`` keys ``unmet_by_class_gbps``,
    ``unmet_by_class_gbps_after``, ``slo_violations``, ``slo_violations_after``."""
    from backbone.solver.failures.impact import slo_violation_summary
    from backbone.solver.te.instance import REASON_SLO

    impact = route.te.summary.impact
    slo_before = impact.unmet_by_reason.get(REASON_SLO, 0.0) if impact is not None else None
    return {"unmet_by_class_gbps": impact.unmet_by_class if impact is not None else None,
            "unmet_by_class_gbps_after": after_state.unmet_by_class(),
            "slo_violations": slo_violation_summary([r.impact for r in failures.sweep.scenarios], slo_before),
            "slo_violations_after": slo_violation_summary([r.impact for r in upgrade.records_after],
                                                          after_state.slo_unmet_gbps if after_state.unmet_known
                                                          else None)}


def residency_figures(net: Network, opts: PlaceOptions, place_summary: PlaceSummary) -> Residency:
    """``plan.json`` ``residency``: the placement's assignments a residency rule forbids
    (:func:`~backbone.solver.checks.placement.residency_violations`, run by every plan): ``rules`` in force,
    ``violations`` (assignments), ``gpus`` they carry and the first few."""
    from backbone.solver.checks.placement import residency_violations

    bad = residency_violations(net, opts, pd.DataFrame(place_summary.assignments))
    return Residency(rules=len(opts.residency_rules), violations=len(bad), gpus=float(bad["gpus"].sum()),
                     examples=bad.head(RESIDENCY_EXAMPLES).to_dict("records"))


def plan_summary(net: Network, run: PlanRun, place: PlaceTaskResult, route: RouteStage,
                 failures: FailuresTaskResult, upgrade: UpgradeStage, after: AfterStage,
                 today: FailuresTaskResult) -> PlanSummary:
    """The plan's summary (``plan.json``, ``backbone plan --json``), built from the stages' results."""
    from backbone import __version__
    from backbone.solver.failures.impact import impact_key

    opts, fail_opts = run.opts, run.stages.failures
    ps, ts, fs, ds = place.summary, route.te.summary, failures.summary, upgrade.summary
    survivability, records_after, after_state = upgrade.survivability, upgrade.records_after, after.state
    up = upgrade.upgrades.copy()
    worst = fs.worst[0] if fs.worst else None
    worst_after = max(records_after, key=lambda r: impact_key(r.impact)) if records_after else None
    n_up = int((up["action"] == "upgrade").sum()) if len(up) else 0
    n_new = int((up["action"] == "new route").sum()) if len(up) else 0
    verification = None
    if opts.verify:
        verification = PlanVerification(
            place=None if ps.verification is None else ps.verification.ok,
            route=None if ts.verification is None else ts.verification.ok,
            survivability=None if after.verification is None else after.verification.ok)
    return PlanSummary(
        status=overall_status(StageStatuses(place=ps.status, route=ts.status, failures=fs.status,
                                            upgrades=ds.status), survivability),
        scenario=net.name,
        scenario_fingerprint=net.fingerprint(),
        software_version=__version__,
        created_utc=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        plan_file=opts.plan_file,
        headline=headline_text(survivability, ds, opts.skip_upgrades, n_up, n_new, after.link_check),
        gpus_added=float(sum(ps.gpus_added_by_site.values())),
        placement_cost_usd=ps.cost_usd,
        placement_gap=ps.gap,
        served_share=ps.served_share,
        mlu=ts.mlu,
        mlu_after=after_state.mlu,
        carried_gbps=ts.carried_gbps,
        unmet_gbps=(ts.impact.unmet_gbps if ts.impact is not None  # overloaded, impact not measured: unknown
                    else None if (ts.mlu or 0.0) > 1 else ts.unmet_gbps),
        unmet_gbps_after=after_state.unmet_total_gbps,
        **after_traffic_figures(route, failures, upgrade, after_state),
        residency=residency_figures(route.routed, run.stages.place, ps),
        weighted_latency_ms=ts.weighted_latency_ms,
        failure_kind=fail_opts.kind,
        failure_scenarios=fs.scenarios_run,
        worst_failure=worst["scenario"] if worst else None,
        worst_failure_impact_gbps=worst["impact_gbps"] if worst else None,
        worst_failure_unmet_gbps=worst["unmet_gbps"] if worst else None,
        failures_with_unmet_demand=sum(1 for r in failures.sweep.scenarios if not r.impact.survived),
        failures_with_unmet_demand_after=sum(1 for r in records_after if not r.impact.survived),
        worst_failure_after=worst_after.scenario if worst_after else None,
        worst_failure_after_impact_gbps=worst_after.impact.impact_gbps if worst_after else None,
        survivability=survivability,
        link_survivability=after.link_check,
        # new routes in no SRLG are swept as their own group after the plan (the SRLG sweep's rule)
        links_swept_as_own_group=implicit_groups(records_after),
        **upgrade_figures(ds),
        links_upgraded=n_up,
        routes_built=n_new,
        scenario_after="scenario_after" if run.writer.enabled else None,
        stage_seconds={k: round(v, 3) for k, v in run.timings.items()},
        stages=run.stage_rows,
        before_after=upgrade.before_after,
        map=plan_map(ps.map, ts.map),
        map_after=after_map(after_state, upgrade.built, up, ps.map),
        verification=verification,
        survivability_check=after.verification if opts.verify else None,
        failures_today=failures_today(today.summary),
    )


def upgrade_figures(design: PlanDesign) -> dict[str, Any]:
    """``plan.json``'s figures of the upgrade stage's design (:data:`~backbone.solver.design.summary.PlanDesign`):
    its cost, and the bound, gap, iterations and states of a design that was built (None, or 0 iterations, when
    none was)."""
    built = built_design(design)
    if built is None:
        return {"upgrade_cost_usd": design.cost_usd, "upgrade_lower_bound_usd": None, "upgrade_gap": None,
                "upgrade_bound": None, "upgrade_restricted_optimum": None, "design_iterations": 0,
                "states_examined": None, "states_added": None, "states_needed": None}
    return {"upgrade_cost_usd": built.cost_usd, "upgrade_lower_bound_usd": built.lower_bound_usd,
            "upgrade_gap": built.gap, "upgrade_bound": built.bound,
            "upgrade_restricted_optimum": built.restricted_optimum, "design_iterations": len(built.iterations),
            "states_examined": built.states_examined, "states_added": built.states_added,
            "states_needed": built.states_needed}


def after_map(after_state: StateAssessment, design: SurvivableDesignSummary | None, upgrades: pd.DataFrame,
              place_map: dict[str, Any]) -> dict[str, Any]:
    """The map of the planned backbone: utilisation after the plan, what was bought (``added_gbps`` per link; the new
    routes as ``built_candidates``, so they are drawn apart from the upgraded links) and the GPUs each site gained
    (``site_values``: ``gpus_added``, ``gpus_after``); ``design`` is the design built (None: nothing was)."""
    added = design.map.get("link_values", {}).get("added_gbps", {}) if design else {}
    new = upgrades.loc[upgrades["action"] == "new route", "link"].astype(str).tolist() if len(upgrades) else []
    site_values = place_map.get("site_values", {})
    return {"link_values": {"utilisation": {str(k): float(v) for k, v in after_state.link_utilisation.items()},
                            "added_gbps": added},
            "site_values": {k: v for k, v in site_values.items() if k in ("gpus_added", "gpus_after")},
            "built_candidates": new, "failed_links": []}


def compare_stage(run: PlanRun, baseline: ComparedInput | None, summary: PlanSummary, place: PlaceTaskResult,
                  route: RouteStage, failures: FailuresTaskResult, upgrade: UpgradeStage) -> DiffResult | None:
    """With a baseline (an earlier plan folder, ``baseline``): what changed from it to this plan
    (:func:`backbone.compare.diff`), this plan taken from the stages' own results (never from its files: the
    documents they would be); ``summary.compared_with`` records it."""
    if baseline is None:
        return None
    from backbone.compare import ComparedInput, diff

    documents = {"plan": summary.document(), "place": place.document(), "te": route.te.document(),
                 "failures": failures.document()}
    if not run.opts.skip_upgrades:
        documents["design"] = upgrade.summary.document()
    this = ComparedInput("this plan", "plan", upgrade.network_after, documents)
    result = diff(baseline, this)
    summary.compared_with = ComparedWith(baseline=run.opts.baseline, kind=result.before.kind,
                                         changed=result.changed, counts=result.counts())
    return result


def report_stage(run: PlanRun, net: Network, summary: PlanSummary, place: PlaceTaskResult, route: RouteStage,
                 failures: FailuresTaskResult, upgrade: UpgradeStage, compared: DiffResult | None = None,
                 today: FailuresTaskResult | None = None) -> None:
    """5. report: maps, charts and ``report.html`` (only with an output folder), drawn from the plan's and the
    stages' typed summaries."""
    t0 = time.perf_counter()
    writer = run.writer
    if writer.enabled:
        rp = run.stage_progress("report")
        rp(0.0, "maps and charts")
        today_fs = today.summary if today else None
        images = draw_images(route.routed, upgrade.network_after, summary, route.te.te.demands,
                             today_fs or failures.summary, place.summary, writer, run.opts.maps, rp)
        from backbone.report import render_report

        data = report_data(net, route.routed, run.opts, summary, place.summary, route.te.summary, failures.summary,
                           upgrade.summary, upgrade.upgrades.copy(), writer.files, today_fs)
        if compared is not None:
            from backbone.compare import report_section

            data.compared = report_section(compared)
        report = render_report(data.document(), images)  # the file edge: the report renders the data's document
        writer.text("report.html", report)
    run.finish("report", t0)
