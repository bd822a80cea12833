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
from backbone.solver.failures.summary import BaselineFigures
from backbone.solver.te.sections import ImpactFigures

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
    impact
        The intact state's impact figures (:class:`~backbone.solver.te.sections.ImpactFigures`, the one type that
        ``te``'s ``impact`` section is too: :meth:`StateAssessment.summary
        <backbone.solver.failures.impact.StateAssessment.summary>` builds both): ``mlu`` with its bound and gap,
        ``overloaded``, ``unmet_gbps`` (NaN when not measured) and ``unmet_known``, by class and by reason, the
        worst solver status, the TE objectives solved, the min-MLU engine and what ``mlu`` and ``unmet_gbps`` mean.
    carried_gbps
        Traffic carried at <= 100 % utilisation.
    link_utilisation
        Utilisation per link of the intact routing.
    """

    impact: ImpactFigures
    carried_gbps: float
    link_utilisation: Mapping[str, float]

    @classmethod
    def from_state(cls, state: StateAssessment) -> SweepBaseline:
        """The figures of the intact network's assessment ``state``."""
        demand_gbps = float(state.routing.demands["demand_gbps"].sum())
        return cls(impact=state.summary(), carried_gbps=demand_gbps - state.unmet_total_gbps,
                   link_utilisation={str(k): float(v) for k, v in state.link_utilisation.items()})

    def figures(self) -> BaselineFigures:
        """``failures.json``'s ``baseline``: the impact's figures and ``carried_gbps`` (no ``link_utilisation``)."""
        return BaselineFigures(**dict(self.impact), carried_gbps=self.carried_gbps)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready figures (the impact's keys, :meth:`ImpactFigures.document
        <backbone.solver.te.sections.ImpactFigures.document>`, then ``carried_gbps`` and ``link_utilisation``; NaN
        kept)."""
        return {**self.figures().document(), "link_utilisation": dict(self.link_utilisation)}
