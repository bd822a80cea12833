"""The independent checks' records: what a check found, typed (a summary's ``verification``, ``plan.json``'s
``survivability_check``), built by the check and dumped (:meth:`~backbone.solver.core.summary.TypedSummary.document`)
only at the file and API edge.

* :class:`Violation` -- one failed check.
* :class:`CheckRecord` -- every check's record (:meth:`CheckReport.record <backbone.solver.checks.CheckReport.record>`):
  its name, ``ok``, the families checked with their counts, and the violations kept.
* :class:`StateCheck` -- one failure state re-measured by the survivability check (the record's ``states``).
* :class:`DesignCheckRecord` -- an SNDlib or upgrade design's check, with the costs it recomputed;
  :class:`IntactDesignCheckRecord` the intact design's, with its witness routing's utilisation;
  :class:`NoDesignChecked` when a design had nothing to check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic import ConfigDict

from backbone.solver.core.summary import TaskSummary

__all__ = ["CheckRecord", "DesignCheckRecord", "IntactDesignCheckRecord", "NoDesignChecked", "StateCheck",
           "Violation"]


class _Frozen(TaskSummary):
    """A frozen record: built once where the check makes it."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)


@dataclass(frozen=True)
class Violation:
    """One failed check: what (``check``), where (``table`` + ``id``), by how much (``value`` against ``limit``,
    where there are figures)."""

    check: str
    table: str
    id: str
    message: str
    value: float | None = None
    limit: float | None = None


class StateCheck(_Frozen):
    """One failure state as the survivability check measured it: what the plan claims (``survives`` or
    ``excused``, with the Gbps it excuses) and the independent edge LP's unmet Gbps; an excused state checked
    against its reason has the full network's figures too (left out of the document otherwise)."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("full_network_unmet_gbps", "reason_parts",
                                                    "full_network_parts_gbps")

    scenario: str
    """The failure state's id."""
    claimed: str
    """What the plan claims: ``survives`` or ``excused``."""
    claimed_unmet_gbps: float | None
    """The Gbps the plan excuses (0 for a state it says survives; None: an excuse that names none)."""
    independent_unmet_gbps: float
    """The independent edge LP's loss beyond the intact baseline (Gbps)."""
    lost_gbps: float
    """Traffic lost with failed sites (Gbps)."""
    paused_gbps: float
    """Traffic of the classes paused in a failure (Gbps)."""
    seconds: float
    """Seconds the state's LP took."""
    full_network_unmet_gbps: float | None = None
    """The loss with every candidate built and every link at its maximum (an excused state, reason checked)."""
    reason_parts: list[str] | None = None
    """The parts of the excuse's reason the checker found (an excused state, reason checked)."""
    full_network_parts_gbps: dict[str, float] | None = None
    """Each part's Gbps measured on the full network (an excused state, reason checked)."""
    match: bool
    """Whether the plan's claim holds."""


class CheckRecord(_Frozen):
    """What an independent check found: ``ok`` when no violation was found; ``states`` (the survivability check's
    per-state rows) only when the check measured states."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("states",)

    name: str
    """What was checked (``te``, ``placement``, ``design <network>``, ``survivability``)."""
    ok: bool
    """Whether no violation was found."""
    checked: list[str]
    """The check families that ran, in order."""
    counts: dict[str, int]
    """Items examined per family."""
    n_violations: int
    """Violations found (all of them; ``violations`` keeps the first ones)."""
    violations: list[Violation]
    """The violations kept."""
    states: list[StateCheck] | None = None
    """Per failure state, the claimed and the independent unmet Gbps (the survivability check)."""


class DesignCheckRecord(CheckRecord):
    """An SNDlib or upgrade design's check (:class:`~backbone.solver.checks.design.DesignCheck`): the record plus
    the costs it recomputed (the instance's cost unit; None when not finite)."""

    capacity_cost: float
    """Cost of the installed modules."""
    setup_cost: float
    """Cost of opening links."""
    preinstalled_cost: float
    """Cost of the pre-installed capacity."""
    routing_cost: float | None
    """Cost of the cheapest routing of the design."""
    total_cost: float | None
    """The SNDlib objective of the design with its cheapest routing."""
    unserved: dict[str, float]
    """Per state, the total volume left unserved."""


class IntactDesignCheckRecord(CheckRecord):
    """The intact design's check (:func:`~backbone.solver.checks.design.check_intact_design`), with the maximum
    link utilisation of its witness routing (a min-MLU routing of the designed network over every admissible
    path)."""

    witness_mlu: float
    """The witness routing's maximum link utilisation."""


class NoDesignChecked(_Frozen):
    """A design's ``verification`` when the solve found no design to check (``ok`` False, and why)."""

    ok: bool = False
    """Always False: nothing was verified."""
    message: str
    """Why nothing was checked."""
