"""Independent result checks: recompute feasibility and objectives from result tables.

Each module (``te``, ``placement``, ``design``, ...) reads a result's *tables* (never solver
internals) plus the input network, and returns a :class:`CheckReport`. Tests run them on every
result; ``--verify`` runs them behind the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backbone.solver.checks.records import CheckRecord, StateCheck, Violation

__all__ = ["CheckRecord", "CheckReport", "StateCheck", "Violation"]


@dataclass
class CheckReport:
    """Outcome of a check: ``ok`` when no violation was found.

    Attributes
    ----------
    name
        What was checked (``te``, ``placement``, ``design <network>``, ``survivability``).
    violations
        The violations found (at most ``max_violations`` kept; ``n_violations`` counts them all).
    checked
        The check families that ran, in order.
    counts
        Items examined per family, where a check counts them (e.g. ``{"flows": 120, "n_plus_one_failures": 3}``).
    details
        Per-state rows where a check reports each state it measured (the survivability check: per state the
        claimed and the independent unmet Gbps); the record holds them as ``states`` when there are any.
    """

    name: str
    violations: list[Violation] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    max_violations: int = 200
    n_violations: int = 0
    details: list[StateCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def messages(self) -> list[str]:
        """The kept violations' messages, in order."""
        return [v.message for v in self.violations]

    def add(self, violation: Violation) -> None:
        """Record a violation (kept while fewer than ``max_violations`` are)."""
        self.n_violations += 1
        if len(self.violations) < self.max_violations:
            self.violations.append(violation)

    def count(self, family: str, items: int) -> None:
        """Record that check family ``family`` ran over ``items`` items."""
        self.counts[family] = int(items)
        if family not in self.checked:
            self.checked.append(family)

    def record(self) -> CheckRecord:
        """The check's typed record (a summary's ``verification``): what was checked, the counts and the violations
        kept, with the per-state rows as ``states`` when there are any."""
        return CheckRecord(name=self.name, ok=self.ok, checked=list(self.checked), counts=dict(self.counts),
                           n_violations=max(self.n_violations, len(self.violations)),
                           violations=list(self.violations), states=list(self.details) or None)

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON document (:meth:`record`, dumped): for a caller at the file or API edge."""
        return self.record().document()

    def __str__(self) -> str:
        if self.ok:
            return f"{self.name}: ok ({', '.join(self.checked)})"
        lines = [f"{self.name}: {len(self.violations)} violation(s)"]
        lines += [f"  {v.check} {v.table}:{v.id}: {v.message}" for v in self.violations[:20]]
        return "\n".join(lines)
