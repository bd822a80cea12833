"""Independent check of a survivable plan: every failure state re-measured by the checker's own edge LP.

The check reads only the planned network (``scenario_after``: loaded from its folder when given a path) and
the plan's claims: the states it excuses, each with its reason and, where given, the Gbps it excuses. It
shares no code with what it checks: each state is measured by :class:`~backbone.solver.checks.edge_flow.
EdgeFlowModel`, an arc-flow max-throughput LP over *every* path (scipy.sparse + HiGHS; no candidate paths, no
TE formulation, no :func:`~backbone.solver.failures.impact.assess_state`), with latency SLOs tested apart by shortest
latency (the LP itself ignores them: see that module).

For a state ``s`` with its lost demands ``D_s`` (to or from failed sites) and its paused demands left out (the
classes whose failure policy is to pause are not offered in a failure state: the checker asks the model's
:func:`backbone.failure_policy.carried_in_failure`, the policy's one statement, and leaves them out of its own
LP)::

    unmet(s)  = cut(s) + no_path_within_slo(s) + (offered(s) - max_throughput(s))
    loss(s)   = unmet(s) - unmet(intact over the demands of s)           (beyond the intact baseline)

* a state the plan says survives: ``loss(s) <= tol`` (:func:`backbone.solver.failures.impact.survive_tolerance_gbps`);
* an **excused** state is checked too, never skipped:

  - ``|loss(s) - excused_gbps| <= tol + EXCUSE_REL_TOL * excused_gbps`` (it loses what it says it loses);
  - the reason holds on the *full* network (every remaining candidate built at ``max_modules``, every link at
    ``max_capacity_gbps``) in the same state: each part of the reason is measured there and compared with
    the Gbps the part names -- "takes off the network" (the site has no working link or candidate left),
    "cut apart even with every candidate built" (endpoints in different components), "no path within their
    latency SLO even with every candidate built" (shortest latency above the SLO), "more than every link at its
    max_capacity_gbps and every candidate at its max_modules can carry" (the edge LP's shortfall at maximum
    capacity); and what the plan's network loses is no more than the full network loses
    (``loss(s) <= loss_full(s) + tol``: nothing a candidate could carry is excused).

Because the LP relaxes SLOs (a demand that meets its SLO on some path may use any path), its shortfall is a
lower bound on an SLO-respecting routing's: a violation it reports is real; a carried verdict is exact for
demands without SLOs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backbone.model import Network
from backbone.solver.checks import CheckReport, StateCheck, Violation
from backbone.solver.checks.edge_flow import EdgeFlowModel, StateFlow
from backbone.solver.core.progress import ProgressFn, no_progress

logger = logging.getLogger(__name__)

__all__ = ["EXCUSE_REL_TOL", "Excuse", "check_survivability", "full_capacity_network"]

EXCUSE_REL_TOL = 1e-3
"""Relative tolerance between an excused figure and the checker's (LP round-off, MIP gap, rounded reasons)."""

REASON_GBPS_TOL = 0.5
"""Gbps: a reason's figures are printed rounded to whole Gbps."""

_PARTS: dict[str, re.Pattern[str]] = {
    "isolated": re.compile(r"\((?P<gbps>[\d,.]+) Gbps\) to or from (?P<sites>.+?), which the failure takes off"),
    "cut": re.compile(r"\((?P<gbps>[\d,.]+) Gbps\) cut apart even with every candidate built"),
    "slo": re.compile(r"\((?P<gbps>[\d,.]+) Gbps\) ha(?:s|ve) no path within their latency SLO"),
    "short": re.compile(r"(?P<gbps>[\d,.]+) Gbps more than every link at its max_capacity_gbps"),
}
"""The parts of an excuse's reason the checker can test, each naming its Gbps."""


@dataclass(frozen=True)
class Excuse:
    """A state the plan declares not survivable: its id, reason and the Gbps excused (None: not stated)."""

    scenario: str
    reason: str = ""
    gbps: float | None = None


def _excuses(excused: Iterable[Any] | Mapping[str, Any]) -> dict[str, Excuse]:
    """Normalise ``excused``: ids, ``{id: reason}`` or records ``{scenario, reason, gbps}``."""
    out: dict[str, Excuse] = {}
    if isinstance(excused, Mapping):
        items: Iterable[Any] = [{"scenario": k, "reason": v} for k, v in excused.items()]
    else:
        items = excused
    for item in items:
        if isinstance(item, Excuse):
            out[item.scenario] = item
        elif isinstance(item, Mapping):
            gbps = item.get("gbps")
            out[str(item["scenario"])] = Excuse(str(item["scenario"]), str(item.get("reason") or ""),
                                                None if gbps is None else float(gbps))
        else:
            out[str(item)] = Excuse(str(item))
    return out


def full_capacity_network(net: Network) -> Network:
    """``net`` with every candidate built at its ``max_modules`` and every link at its ``max_capacity_gbps``:
    the most any design can have, where an excuse must still hold."""
    if len(net.candidates):
        net = net.with_candidates_built({str(c): int(m) for c, m in net.candidates["max_modules"].items()})
    cap = net.links["capacity_gbps"].astype(float)
    top = net.links["max_capacity_gbps"].astype(float).fillna(cap)
    grow = top > cap
    return net.with_capacity({str(k): float(v) for k, v in top[grow].items()}) if grow.any() else net


class _States:
    """One network's edge model plus its failure states' masks; losses beyond the intact baseline."""

    def __init__(self, net: Network, survive: str, time_limit_s: float,
                 failure_policy: Mapping[str, str] | None = None) -> None:
        from backbone.failure_policy import carried_in_failure
        from backbone.solver.failures import enumerate_scenarios

        self.model = EdgeFlowModel(net, time_limit_s)
        self.paused = ~carried_in_failure(net, failure_policy).reindex(self.model.demand_ids).to_numpy(bool)
        self.scenarios = {s.id: s for s in enumerate_scenarios(net, survive)}  # type: ignore[arg-type]
        self.base = self.model.solve()

    def measure(self, sid: str) -> tuple[StateFlow, float]:
        """The state's flow and its loss beyond the intact network over the same demands."""
        sc = self.scenarios[sid]
        site_down = self.model.site_mask(sc.sites)
        m = self.model
        flow = m.solve(m.link_mask(sc.links), site_down, paused=self.paused)
        base = self.base
        if (flow.lost_gbps > 0 or flow.paused_gbps > 0) and self.base.unmet_gbps > 0:
            base = m.solve(drop_demands=site_down[m.src] | site_down[m.dst] | self.paused)  # over the state's demands
        return flow, flow.unmet_gbps - base.unmet_gbps


def check_survivability(network: Network | str | Path, survive: str,
                        excused: Iterable[Any] | Mapping[str, Any] = (),
                        time_limit_s: float = 60.0, progress: ProgressFn | None = None, *,
                        verify_excuses: bool = True, failure_policy: Mapping[str, str] | None = None) -> CheckReport:
    """Re-measure every ``survive`` failure state of the planned network with the checker's own edge LP.

    Parameters
    ----------
    network
        The planned network, or the path of its canonical scenario folder (``scenario_after``).
    survive
        The failure kind: ``link``, ``srlg``, ``site`` or ``srlg,link``.
    excused
        The states the plan declares not survivable: ids, ``{id: reason}`` or records ``{scenario, reason,
        gbps}`` (as in ``plan.json``'s ``survivability.not_survivable``). Each is checked (see the module doc).
    time_limit_s
        Time limit of each LP solve.
    verify_excuses
        When False, an excused state is measured and reported but its excuse is not tested (a roadmap period
        excuses candidates that cannot be online yet, which the scenario folder does not record).
    failure_policy
        The run's failure policy per class, over the scenario's (``network``'s ``failure_policy``) and the
        defaults: a pausing class is not offered in a failure state (:mod:`backbone.failure_policy`).

    Returns
    -------
    CheckReport
        ``ok`` when every claim holds; ``details`` (the record's ``states``: :class:`~backbone.solver.checks.
        records.StateCheck`) lists per state the claimed and the independent unmet Gbps, the seconds and whether
        it matches.
    """
    progress = progress or no_progress
    if not isinstance(network, Network):
        from backbone.io import load_scenario

        network = load_scenario(str(network))
    from backbone.solver.failures.impact import survive_tolerance_gbps

    net = network
    claims = _excuses(excused)
    tol = survive_tolerance_gbps(net)
    report = CheckReport("survivability")
    states = _States(net, survive, time_limit_s, failure_policy)
    full: _States | None = None
    if verify_excuses and any(s in states.scenarios for s in claims):
        full = _States(full_capacity_network(net), survive, time_limit_s, failure_policy)
    n, n_excused = len(states.scenarios), 0
    for i, sid in enumerate(states.scenarios):
        progress(i / max(1, n), f"checking {sid}")
        flow, loss = states.measure(sid)
        excuse = claims.get(sid)
        reason: ReasonCheck | None = None
        if excuse is None:
            if loss > tol:
                report.add(Violation("state_carried", "scenarios", sid,
                                     f"{loss:,.1f} Gbps cannot be carried at <= 100 % utilisation over any path "
                                     f"({_parts(flow)}); the plan says it survives", value=loss, limit=tol))
        else:
            n_excused += 1
            if full is not None and sid in full.scenarios:
                reason = _check_excuse(report, excuse, loss, full.measure(sid), full.base, tol)
        report.details.append(StateCheck(
            scenario=sid, claimed="excused" if excuse else "survives",
            claimed_unmet_gbps=0.0 if excuse is None else excuse.gbps, independent_unmet_gbps=round(loss, 3),
            lost_gbps=round(flow.lost_gbps, 3), paused_gbps=round(flow.paused_gbps, 3),
            seconds=round(flow.seconds, 4),
            full_network_unmet_gbps=None if reason is None else reason.full_network_unmet_gbps,
            reason_parts=None if reason is None else reason.reason_parts,
            full_network_parts_gbps=None if reason is None else reason.full_network_parts_gbps,
            match=not any(v.id == sid for v in report.violations)))
    report.count("states", n)
    report.checked.append(f"{n - n_excused} of {n} {survive} failure states claimed carried, each re-measured by "
                          f"an independent edge LP; {n_excused} excused states checked against their excuse "
                          f"{'and reason' if verify_excuses else '(loss reported, excuse not tested)'}")
    progress(1.0, "checked")
    return report


def _parts(flow: StateFlow) -> str:
    return (f"{flow.cut_gbps:,.1f} cut apart, {flow.slo_gbps:,.1f} outside their SLO, {flow.short_gbps:,.1f} "
            "short of capacity")


@dataclass(frozen=True)
class ReasonCheck:
    """An excused state's reason measured on the full network: its loss there, the reason's parts the checker
    found and each part's Gbps there (a :class:`StateCheck`'s full-network figures)."""

    full_network_unmet_gbps: float
    reason_parts: list[str]
    full_network_parts_gbps: dict[str, float]


def _check_excuse(report: CheckReport, excuse: Excuse, loss: float, full: tuple[StateFlow, float],
                  full_base: StateFlow, tol: float) -> ReasonCheck:
    """An excused state loses what it says it loses, and its reason holds with every candidate at its maximum
    (each part beyond what the full network leaves unmet intact); returns what the full network measured."""
    sid, (full_flow, full_loss) = excuse.scenario, full
    if excuse.gbps is not None:
        allowed = tol + EXCUSE_REL_TOL * max(excuse.gbps, loss)
        if abs(loss - excuse.gbps) > allowed:
            report.add(Violation("excused_gbps", "scenarios", sid,
                                 f"excused {excuse.gbps:,.1f} Gbps but the independent edge LP loses {loss:,.1f} "
                                 f"({_parts(full_flow)} with every candidate at its maximum)",
                                 value=loss, limit=excuse.gbps))
    if loss > full_loss + tol + EXCUSE_REL_TOL * full_loss:
        report.add(Violation("excuse_reason", "scenarios", sid,
                             f"loses {loss:,.1f} Gbps but with every candidate built and every link at its maximum "
                             f"only {full_loss:,.1f} Gbps is lost: a design could carry "
                             f"{loss - full_loss:,.1f} Gbps of it", value=loss, limit=full_loss))
    found = {kind: float(m.group("gbps").replace(",", "")) for kind, p in _PARTS.items()
             if (m := p.search(excuse.reason))}
    if excuse.reason and not found:
        report.add(Violation("excuse_reason", "scenarios", sid,
                             f"the reason cannot be checked (no part the checker knows): {excuse.reason!r}"))
    measured = {"isolated": full_flow.isolated_gbps - full_base.isolated_gbps,
                "cut": (full_flow.cut_gbps - full_flow.isolated_gbps) - (full_base.cut_gbps - full_base.isolated_gbps),
                "slo": full_flow.slo_gbps - full_base.slo_gbps, "short": full_flow.short_gbps - full_base.short_gbps}
    measured = {k: max(0.0, v) for k, v in measured.items()}
    names = {"isolated": "taken off the network", "cut": "cut apart", "slo": "without a path within their SLO",
             "short": "short of capacity"}
    for kind, stated in found.items():
        have = measured[kind]
        if abs(have - stated) > REASON_GBPS_TOL + tol + EXCUSE_REL_TOL * stated:
            report.add(Violation("excuse_reason", "scenarios", sid,
                                 f"the reason says {stated:,.0f} Gbps {names[kind]} even with every candidate at "
                                 f"its maximum; the independent check finds {have:,.1f} Gbps", value=have,
                                 limit=stated))
    if "isolated" in found:
        m = _PARTS["isolated"].search(excuse.reason)
        named = {s.strip() for s in m.group("sites").split(",")} if m else set()
        if not named <= set(full_flow.isolated_sites):
            report.add(Violation("excuse_reason", "scenarios", sid,
                                 f"the reason says {', '.join(sorted(named))} are taken off the network; with every "
                                 f"candidate built only {', '.join(full_flow.isolated_sites) or 'no site'} is"))
    return ReasonCheck(round(full_loss, 3), sorted(found), {k: round(v, 3) for k, v in measured.items()})
