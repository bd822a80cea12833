"""Independent result checks: recompute feasibility and objectives from result tables.

Each module (``te``, ``placement``, ``design``, ...) reads a result's *tables* (never solver
internals) plus the input network, and returns a :class:`CheckReport`. Tests run them on every
result; ``--verify`` runs them behind the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Violation:
    """One failed check: what (``check``), where (``table`` + ``id``), by how much."""

    check: str
    table: str
    id: str
    message: str
    value: float | None = None
    limit: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


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
        Per-item rows where a check reports each item it measured (the survivability check: per state the
        claimed and the independent unmet Gbps); ``to_dict()`` gives them as ``states`` when there are any.
    """

    name: str
    violations: list[Violation] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    max_violations: int = 200
    n_violations: int = 0
    details: list[dict[str, Any]] = field(default_factory=list)

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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "ok": self.ok, "checked": self.checked, "counts": self.counts,
                               "n_violations": max(self.n_violations, len(self.violations)),
                               "violations": [v.to_dict() for v in self.violations]}
        if self.details:
            out["states"] = self.details
        return out

    def __str__(self) -> str:
        if self.ok:
            return f"{self.name}: ok ({', '.join(self.checked)})"
        lines = [f"{self.name}: {len(self.violations)} violation(s)"]
        lines += [f"  {v.check} {v.table}:{v.id}: {v.message}" for v in self.violations[:20]]
        return "\n".join(lines)
