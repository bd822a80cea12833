"""``place.json``'s summary as a typed model (:class:`PlaceSummary`), built by the ``place`` task
(:func:`backbone.solver.tasks.place.placement_summary`) and dumped only at the file and API edge."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from backbone.solver.checks.records import CheckRecord
from backbone.solver.core.summary import TaskSummary

__all__ = ["PlaceSummary"]


class PlaceSummary(TaskSummary):
    """``place``: where the GPUs go, at what cost, which demand is served (``status`` ``partial`` when not all).

    Built by the ``place`` task as this model (:func:`backbone.solver.tasks.place.placement_summary`), fields in
    ``place.json``'s order; ``verification`` is left out of the document when it was not run.
    """

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("verification",)

    status: str
    """The solver's status, or ``partial`` when not all demand is served."""
    solver_status: str
    """The MIP's own status (``optimal``, ``time_limit``, ...)."""
    objective: float | None
    """The MIP's objective value (USD for min-cost)."""
    gap: float | None
    """The MIP's relative gap."""
    lp_bound: float | None
    """The LP relaxation's bound (with ``lp_bound``)."""
    solve_seconds: float
    """Seconds the solve took."""
    backend: str
    """The solver backend."""
    cost_usd: float | None
    """Capex plus opex of the placement."""
    capex_usd: float | None
    """Capex of the GPUs, power and sites built."""
    opex_usd: float | None
    """Opex over the horizon."""
    served_share: float | None
    """Share of peak inference demand served."""
    totals: dict[str, Any]
    """Every total of the placement (costs, GPUs before/added/after, MW, demand and served GPUs, ...)."""
    gpus_by_site: dict[str, float]
    """GPUs after the placement, per site that has any."""
    gpus_added_by_site: dict[str, float]
    """GPUs added, per site that gains any."""
    assignments: list[dict[str, Any]]
    """Metro demand served from each site in its peak period: ``metro``, ``class``, ``site``, ``period``,
    ``gpus``, ``rtt_ms``, ``share``."""
    sites: list[dict[str, Any]]
    """``place_sites.csv``'s rows."""
    metros: list[dict[str, Any]]
    """``place_metros.csv``'s rows."""
    training: list[dict[str, Any]] = Field(default_factory=list)
    """``place_training.csv``'s rows."""
    replicas: list[dict[str, Any]] = Field(default_factory=list)
    """``place_replicas.csv``'s rows."""
    workload_gbps_by_class: dict[str, float | None] = Field(default_factory=dict)
    """Gbps the placed workloads put on the backbone, per traffic class."""
    infeasibility: list[str]
    """Why not all demand could be served (empty when it is)."""
    unserved_metros: list[dict[str, Any]]
    """Metro demand units left (partly) unserved, largest shortfall first."""
    notes: list[str]
    """What a planner should know about the solve."""
    model: dict[str, Any]
    """The MIP's size (rows, columns, nonzeros, integer columns)."""
    options: dict[str, Any]
    """The options it ran with."""
    map: dict[str, Any]
    """Map values: GPUs per site, utilisation and placement Gbps per link, the serving arcs."""
    verification: CheckRecord | None = None
    """The independent checker's record (with ``verify``)."""
