"""The ``design`` planning task: both modes of ``backbone design``.

An SNDlib network with a model code (solved by :func:`backbone.solver.design.solve_design`, written in SNDlib's
solution format ``design.sol.txt``), or any backbone scenario, where the task plans upgrades: routing ``paths`` --
the intact design over every admissible path with its true bound (:func:`backbone.solver.design.intact.design_intact`,
``survive`` none) or the survivable design over TE's candidate paths
(:func:`backbone.solver.design.survivable.iterate.design_survivable`), or routing
``edge`` -- :func:`backbone.solver.design.upgrades.design_upgrades`. Files: ``design_upgrades.csv`` (and
``scenario_after/`` for routing ``paths``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backbone.artifacts import ArtifactWriter
from backbone.errors import Problem, ValidationError
from backbone.model import Network
from backbone.serialize import finite_or_none
from backbone.solver.checks.records import DesignCheckRecord, IntactDesignCheckRecord, NoDesignChecked
from backbone.solver.core.progress import ProgressFn
from backbone.solver.design import DesignInstance, DesignSolution, solve_design
from backbone.solver.design.options import DesignOptions
from backbone.solver.design.summary import DesignSummary, SndlibDesignSummary
from backbone.solver.design.upgrades import design_upgrades
from backbone.solver.tasks.base import TaskResult


@dataclass(kw_only=True)
class DesignTaskResult(TaskResult[DesignSummary]):
    """The ``design`` task's outcome: the JSON summary, the files, and the design that ran -- a
    :class:`~backbone.solver.design.survivable.iterate.SurvivableDesign` (routing ``paths``), a :class:`DesignResult` (routing
    ``edge``) or a :class:`~backbone.solver.design.DesignSolution` (SNDlib mode)."""

    design: Any


def run_design_task(net: Network, opts: DesignOptions, out_dir: Path | None, progress: ProgressFn) -> DesignTaskResult:
    """Planning-service entry point for ``design`` (see :class:`DesignOptions`)."""
    writer = ArtifactWriter(out_dir)
    design: Any
    summary: DesignSummary
    if opts.model:
        summary, design = _run_sndlib(net, opts, writer, progress)
    elif _routing(net, opts) == "paths":
        from backbone.solver.design.survivable.iterate import SurviveOptions, design_survivable

        if opts.candidate_links:
            raise ValidationError(Problem("candidate_links need routing 'edge'; routing 'paths' builds the scenario's "
                                          "candidates table", table="options", field="candidate_links"))
        survive_opts = SurviveOptions.model_validate({
            "survive": opts.survive, "utilisation_ceiling": opts.utilisation_ceiling,
            "failure_utilisation_ceiling": opts.failure_utilisation_ceiling, "time_limit_s": opts.time_limit_s,
            "backend": opts.backend, "mip_gap": max(opts.mip_gap, 1e-4), "max_iterations": opts.max_iterations,
            "bound_time_limit_s": opts.bound_time_limit_s, "failure_policy": opts.failure_policy})
        if opts.survive == "none":  # the intact state: priced over every admissible path, an integer true bound
            from backbone.solver.design.intact import design_intact

            sres = design_intact(net, survive_opts, progress=progress)
        else:
            from backbone.solver.failures.pool import sweep_pool

            with sweep_pool():  # one process pool for every iteration's sweep
                sres = design_survivable(net, survive_opts, progress=progress)
        summary, design = sres.typed_summary(), sres
        summary.survive = opts.survive
        if opts.verify and opts.survive == "none":
            summary.verification = _verify_intact(net, sres, opts)
        elif opts.verify:
            from backbone.solver.checks.survivability import check_survivability

            summary.verification = check_survivability(
                sres.network_after, opts.survive, [x.model_dump() for x in sres.not_survivable],
                failure_policy=opts.failure_policy).record()
        from backbone.io import save_scenario

        writer.csv("design_upgrades.csv", sres.upgrades.assign(protects=sres.upgrades["protects"].map(";".join)))
        writer.directory("scenario_after", lambda path: save_scenario(sres.network_after, path))
    else:
        res = design_upgrades(net, opts.survive, opts.utilisation_ceiling, opts.time_limit_s, opts.backend,
                              opts.candidate_links, opts.mip_gap, progress)
        summary, design = res.typed_summary(), res
        if opts.verify:
            summary.verification = _verify(res.instance, res.solution, opts.time_limit_s)
        writer.csv("design_upgrades.csv", res.upgrades)
    return DesignTaskResult("design", summary, writer.files, design=design)


def _routing(net: Network, opts: DesignOptions) -> str:
    if opts.routing != "auto":
        return opts.routing
    return "edge" if (net.meta.get("sndlib") or opts.candidate_links) else "paths"


def _verify_intact(net: Network, sres: Any, opts: DesignOptions) -> IntactDesignCheckRecord:
    """The intact design checked by :func:`backbone.solver.checks.design.check_intact_design`, with a min-MLU routing
    of the designed network over every admissible path (TE's column generation) as the witness."""
    from backbone.solver.checks.design import check_intact_design
    from backbone.solver.te import solve_te
    from backbone.solver.te.options import TEOptions

    routing = solve_te(sres.network_after, TEOptions.model_validate({
        "objective": "min-mlu", "method": "colgen", "backend": opts.backend, "time_limit_s": opts.time_limit_s}))
    report = check_intact_design(net, sres.network_after, sres.cost_usd, sres.lower_bound_usd,
                                 opts.utilisation_ceiling, routing)
    return IntactDesignCheckRecord(**dict(report.record()), witness_mlu=routing.mlu)


def _verify(inst: DesignInstance, sol: DesignSolution, time_limit_s: float = 120.0,
            ) -> DesignCheckRecord | NoDesignChecked:
    from backbone.solver.checks.design import check_design, configurations_from_counts

    if sol.counts is None:
        return NoDesignChecked(message="no design to verify")
    check = check_design(inst, configurations_from_counts(inst, sol.counts), time_limit_s=time_limit_s,
                         reported_cost=sol.cost, reported_optimal=sol.status == "optimal")
    return check.record()


def _run_sndlib(net: Network, opts: DesignOptions, writer: ArtifactWriter, progress: ProgressFn,
                ) -> tuple[SndlibDesignSummary, DesignSolution]:
    from backbone.io.sndlib import sndlib_from_network
    from backbone.solver.design.sndlib import (
        build_instance,
        link_configurations,
        parse_model_code,
        solution_text,
    )

    snd = sndlib_from_network(net)
    model = parse_model_code(opts.model or "")
    inst = build_instance(snd, model)
    sol = solve_design(inst, opts.time_limit_s, opts.backend, opts.mip_gap, cuts=opts.cuts, progress=progress)
    links = link_configurations(snd, inst, sol.counts)
    k = snd.gbps_per_unit
    pre = inst.links["preinstalled"]
    added = {cfg.id: (cfg.capacity - float(pre.loc[cfg.id])) * k for cfg in links}
    summary = SndlibDesignSummary(
        network=snd.name, model=model.code, status=sol.status,
        cost=finite_or_none(sol.cost), lower_bound=finite_or_none(sol.lower_bound), gap=sol.gap,
        lp_bound=finite_or_none(sol.lp_bound), heuristic_cost=finite_or_none(sol.heuristic_cost),
        mip_status=sol.mip_status, solve_seconds=round(sol.seconds, 3), backend=sol.backend,
        size=sol.stats, links=links, notes=sol.notes,
        map={"link_values": {"added_gbps": added,
                             "capacity_gbps": {c.id: c.capacity * k for c in links}}, "failed_links": []},
    )
    if opts.verify:
        summary.verification = _verify(inst, sol, opts.time_limit_s)
    if writer.enabled and sol.counts is not None:
        writer.text("design.sol.txt", solution_text(snd, model, inst, sol))
    return summary, sol
