"""Failure-state selection: which failure states a plan (and each period of a roadmap) designs against, sweeps,
and reports as survived, excused or violated.

* :func:`design_failure_kind` -- the failure kind the survivable design must survive;
* :func:`placement_slo_failures` -- the failure kind under which the placement keeps inference SLOs;
* :func:`initial_design_states` -- the failures stage's records the design may start from (a state the current
  capacity already carries cannot bind, so only the states the sweep found short enter the model);
* :func:`survivability_summary` -- survived / not survivable (excused, with reasons) / violated, as a
  :class:`~backbone.solver.design.survivable.survivability.Survivability`;
* :func:`covers_links` and :func:`link_survivability` -- the single-link check of a planned backbone whose design
  did not target single links (one more sweep, reported beside the design's own claim), as a
  :class:`LinkSurvivability`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from backbone.solver.design.survivable.survivability import Survivability

if TYPE_CHECKING:
    from backbone.solver.failures.records import ScenarioRecord

SURVIVABLE_KINDS = ("link", "srlg", "site", "srlg,link")
"""Failure kinds a survivable design can be asked to survive."""

SLO_FAILURE_KINDS = ("link", "srlg", "srlg,link")
"""Failure kinds under which the placement can keep the inference latency SLOs."""


class LinkSurvivability(BaseModel):
    """The single-link check of a planned backbone whose design did not target single links (nothing excused:
    these states were not designed for). ``plan.json``'s ``link_survivability``."""

    model_config = ConfigDict(extra="forbid")

    failure_kind: Literal["link"] = "link"
    """Always ``link``."""
    states: int
    """Single-link failures swept."""
    survived: int
    """Single-link failures the planned backbone carries."""
    not_carried: list[str]
    """The single-link failures it does not carry, in the sweep's order."""


def design_failure_kind(survive: str | None, failures_kind: str) -> str:
    """The failure kind the upgrade design survives: the design's ``survive`` when given (``none`` included),
    else the failures stage's kind when a design can survive it, else ``srlg``.

    Example
    -------
    >>> design_failure_kind(None, "link"), design_failure_kind(None, "srlg-pairs"), design_failure_kind("none", "srlg")
    ('link', 'srlg', 'none')
    """
    if survive is not None:
        return str(survive)
    return failures_kind if failures_kind in SURVIVABLE_KINDS else "srlg"


def placement_slo_failures(survive: str | None, failures_kind: str | None) -> str:
    """The failure kind whose states the placement keeps inference SLOs in (its ``slo_failures``): the kind the
    plan must survive (the design's ``survive`` as given, else the failures stage's ``kind`` as given, else
    ``srlg``) when it is one the placement models, else ``none``.

    Example
    -------
    >>> placement_slo_failures(None, None), placement_slo_failures("site", "link")
    ('srlg', 'none')
    """
    kind = survive or failures_kind or "srlg"
    return kind if kind in SLO_FAILURE_KINDS else "none"


def initial_design_states(records: list[ScenarioRecord], kind: str, sweep_kind: str,
                          derate: Any) -> list[ScenarioRecord] | None:
    """The failures stage's per-state ``records`` the design starts from when they describe the states it must
    survive (same ``kind``, no derating of capacity in the sweep); else ``None`` (the design sweeps for
    itself)."""
    return records if kind == sweep_kind and not derate else None


def survivability_summary(kind: str, design: Survivability | None, records: list[ScenarioRecord]) -> Survivability:
    """The plan's :class:`~backbone.solver.design.survivable.survivability.Survivability`: the ``design``'s own
    when one ran, else counted from the sweep's ``records`` of failure kind ``kind`` (``survived`` per state;
    nothing excused)."""
    if design is not None:
        return design
    return Survivability(failure_kind=kind, states=len(records), survived=sum(1 for r in records if r.impact.survived),
                         not_survivable=[], violated=sorted(r.scenario for r in records if not r.impact.survived))


def covers_links(kind: str) -> bool:
    """Whether a design of failure kind ``kind`` survives every single-link failure by construction (``link`` or
    ``srlg,link``); otherwise a plan sweeps its planned backbone's single links once more to report them."""
    return kind in ("link", "srlg,link")


def link_survivability(records: list[ScenarioRecord]) -> LinkSurvivability:
    """The :class:`LinkSurvivability` of a single-link sweep of the planned backbone (nothing excused: these
    states were not designed for). ``not_carried`` is in the sweep's order."""
    return LinkSurvivability(states=len(records), survived=sum(1 for r in records if r.impact.survived),
                             not_carried=[r.scenario for r in records if not r.impact.survived])
