"""The sweep's records: one :class:`ScenarioRecord` per failure scenario and the intact :class:`SweepBaseline`.

Both are typed, frozen and picklable (the local process pool and Dask workers return them); they become plain dicts
only where they are written -- ``failures.json``, ``--json``, the API's job result, the scenario table --
through :meth:`ScenarioRecord.to_dict` and :meth:`SweepBaseline.to_dict`, whose keys are the field names (the
impact's fields flattened in), in the order the JSON has always had.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from backbone.solver.failures.impact import FailureImpact, StateAssessment

__all__ = ["ScenarioRecord", "SweepBaseline"]


def _figure(value: Any) -> float:
    """A float read back from JSON: null is NaN (unknown)."""
    return float("nan") if value is None else float(value)


@dataclass(frozen=True, slots=True)
class ScenarioRecord:
    """One failure scenario re-routed and measured against the intact baseline
    (:func:`~backbone.solver.failures.evaluation.evaluate_scenario` builds it).

    Attributes
    ----------
    scenario
        The scenario id (``link:<id>``, ``srlg:<id>``, ``site:<id>``, ``srlg:<a>+srlg:<b>``, a listed id; derated
        states ``derate:...``).
    kind
        ``link``, ``srlg``, ``site``, ``srlg-pairs`` or ``list``.
    failed
        The failed (or derated) elements: link, SRLG or site ids.
    links_down, links_derated, sites_down
        Links cut, links derated and sites failed.
    derate
        The fraction of capacity derated elements keep; None when they are cut.
    status
        Worst solver status of the state's solves.
    impact
        The impact (:class:`~backbone.solver.failures.impact.FailureImpact`): unmet by class, SLO violations, lost
        traffic, ``impact_gbps``, ``mlu`` with its bound and gap, ``overloaded``, ``survived``.
    method
        The min-MLU engine: ``path`` or ``srcflow``.
    path_lp_only
        Whether ``mlu`` is the path LP's over the candidate paths, kept without column generation because the
        state is within capacity (``FailureOptions.exact_mlu`` runs it for every state).
    untouched
        Whether no flow the state offers crosses its failed links in the intact routing, so the intact routing was
        kept without a solve (a quick sweep: :mod:`backbone.solver.failures.untouched`); ``mlu`` is then that
        routing's, an upper bound on the state's optimum.
    carried_gbps
        Traffic carried at <= 100 % utilisation (NaN, as ``unmet_gbps``, when an overloaded state's shortfall is
        not measured).
    p50_latency_inflation_ms, p99_latency_inflation_ms, worst_latency_inflation_ms
        One-way latency added over the intact routing, per demand carried in both (0 when none).
    link_utilisation
        Utilisation per surviving link (rounded to 6 decimals).
    seconds
        Wall-clock time of the evaluation.
    """

    scenario: str
    kind: str
    failed: tuple[str, ...]
    links_down: int
    links_derated: int
    sites_down: int
    derate: float | None
    status: str
    impact: FailureImpact
    method: str
    path_lp_only: bool
    carried_gbps: float
    p50_latency_inflation_ms: float
    p99_latency_inflation_ms: float
    worst_latency_inflation_ms: float
    link_utilisation: Mapping[str, float]
    seconds: float
    untouched: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready record: every field, the impact's flattened in after ``status`` (NaN kept: the file and
        API edge writes it as null)."""
        return {"scenario": self.scenario, "kind": self.kind, "failed": list(self.failed),
                "links_down": self.links_down, "links_derated": self.links_derated, "sites_down": self.sites_down,
                "derate": self.derate, "status": self.status, **self.impact.to_dict(), "method": self.method,
                "path_lp_only": self.path_lp_only, "carried_gbps": self.carried_gbps,
                "p50_latency_inflation_ms": self.p50_latency_inflation_ms,
                "p99_latency_inflation_ms": self.p99_latency_inflation_ms,
                "worst_latency_inflation_ms": self.worst_latency_inflation_ms,
                "link_utilisation": dict(self.link_utilisation), "seconds": self.seconds,
                "untouched": self.untouched}

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> ScenarioRecord:
        """A record as :meth:`to_dict` (or ``failures.json``'s ``scenarios``) wrote it; null figures are NaN
        (unknown), a missing ``link_utilisation`` (the JSON summary leaves it out) is empty, a missing
        ``untouched`` (files written before it) false.

        Raises
        ------
        KeyError
            A field other than ``link_utilisation`` is missing.
        """
        derate = record["derate"]
        return cls(scenario=str(record["scenario"]), kind=str(record["kind"]),
                   failed=tuple(str(x) for x in record["failed"]), links_down=int(record["links_down"]),
                   links_derated=int(record["links_derated"]), sites_down=int(record["sites_down"]),
                   derate=None if derate is None else float(derate), status=str(record["status"]),
                   impact=FailureImpact.from_dict(record), method=str(record["method"]),
                   path_lp_only=bool(record["path_lp_only"]), carried_gbps=_figure(record["carried_gbps"]),
                   p50_latency_inflation_ms=_figure(record["p50_latency_inflation_ms"]),
                   p99_latency_inflation_ms=_figure(record["p99_latency_inflation_ms"]),
                   worst_latency_inflation_ms=_figure(record["worst_latency_inflation_ms"]),
                   link_utilisation={str(k): _figure(v) for k, v in (record.get("link_utilisation") or {}).items()},
                   seconds=float(record["seconds"]), untouched=bool(record.get("untouched", False)))


@dataclass(frozen=True, slots=True)
class SweepBaseline:
    """The intact network's figures, by the same definitions as every scenario's
    (:meth:`~backbone.solver.failures.evaluation.SweepContext.baseline_record` builds it from its
    :class:`~backbone.solver.failures.impact.StateAssessment`).

    Attributes
    ----------
    mlu, mlu_lower_bound, gap
        The utilisation the traffic needs, a proven lower bound on it (NaN when none) and their relative gap.
    overloaded
        Whether the traffic needs more than 100 % of some link.
    unmet_gbps, unmet_known
        Traffic that cannot be carried at <= 100 % utilisation (NaN when not measured) and whether it was measured.
    unmet_by_class, unmet_by_reason
        ``unmet_gbps`` per traffic class and per reason.
    status, solves, method
        Worst solver status, the TE objectives solved, the min-MLU engine.
    definition
        What ``mlu`` and ``unmet_gbps`` mean here (the routing engine, the one meaning of unmet).
    carried_gbps
        Traffic carried at <= 100 % utilisation.
    link_utilisation
        Utilisation per link of the intact routing.
    """

    mlu: float
    mlu_lower_bound: float
    gap: float
    overloaded: bool
    unmet_gbps: float
    unmet_known: bool
    unmet_by_class: Mapping[str, float]
    unmet_by_reason: Mapping[str, float]
    status: str
    solves: tuple[str, ...]
    method: str
    definition: str
    carried_gbps: float
    link_utilisation: Mapping[str, float]

    @classmethod
    def from_state(cls, state: StateAssessment) -> SweepBaseline:
        """The figures of the intact network's assessment ``state``."""
        demand_gbps = float(state.routing.demands["demand_gbps"].sum())
        return cls(mlu=state.mlu, mlu_lower_bound=state.mlu_lower_bound, gap=state.gap, overloaded=state.overloaded,
                   unmet_gbps=state.unmet_total_gbps, unmet_known=state.unmet_known,
                   unmet_by_class=state.unmet_by_class(), unmet_by_reason=state.unmet_by_reason(),
                   status=state.status, solves=tuple(state.solves), method=state.method,
                   definition=state.definition, carried_gbps=demand_gbps - state.unmet_total_gbps,
                   link_utilisation={str(k): float(v) for k, v in state.link_utilisation.items()})

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready figures (:meth:`StateAssessment.summary
        <backbone.solver.failures.impact.StateAssessment.summary>`'s keys, then ``carried_gbps`` and
        ``link_utilisation``)."""
        return {"mlu": self.mlu, "mlu_lower_bound": self.mlu_lower_bound, "gap": self.gap,
                "overloaded": self.overloaded, "unmet_gbps": self.unmet_gbps, "unmet_known": self.unmet_known,
                "unmet_by_class": dict(self.unmet_by_class), "unmet_by_reason": dict(self.unmet_by_reason),
                "status": self.status, "solves": list(self.solves), "method": self.method,
                "definition": self.definition, "carried_gbps": self.carried_gbps,
                "link_utilisation": dict(self.link_utilisation)}
