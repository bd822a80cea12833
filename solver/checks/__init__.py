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
    """Outcome of a check: ``ok`` when no violation was found."""

    name: str
    violations: list[Violation] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    max_violations: int = 200

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, violation: Violation) -> None:
        if len(self.violations) < self.max_violations:
            self.violations.append(violation)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "checked": self.checked,
                "violations": [v.to_dict() for v in self.violations]}

    def __str__(self) -> str:
        if self.ok:
            return f"{self.name}: ok ({', '.join(self.checked)})"
        lines = [f"{self.name}: {len(self.violations)} violation(s)"]
        lines += [f"  {v.check} {v.table}:{v.id}: {v.message}" for v in self.violations[:20]]
        return "\n".join(lines)
