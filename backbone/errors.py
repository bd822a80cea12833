"""The three kinds of error, never mixed (the networkx way).

* :class:`ValidationError` -- bad input; lists every problem (file, table, record, field).
* :class:`InfeasibleError` -- valid input that cannot be satisfied; names what cannot be met.
* :class:`SolverError` -- a solver backend is missing or broke.

Front doors map them to exit codes (CLI) and HTTP statuses (API).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One problem found in input.

    Parameters
    ----------
    message
        What is wrong, in plain words.
    file
        The file it was found in (empty for in-memory data).
    table
        Table name (``sites``, ``links``, ...), or empty.
    record
        Record id (or row number as ``row N`` when the id itself is missing).
    field
        Column / field name, or empty.
    """

    message: str
    file: str = ""
    table: str = ""
    record: str = ""
    field: str = ""

    def __str__(self) -> str:
        where = ":".join(p for p in (self.file or self.table, self.record, self.field) if p)
        return f"{where}: {self.message}" if where else self.message

    def to_dict(self) -> dict[str, str]:
        """Plain dict, for JSON."""
        return asdict(self)


class BackboneError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code: int = 1
    """The CLI's exit code for this kind of error."""
    http_status: int = 400
    """The HTTP status the API answers with (the API has no second table: it reads this)."""
    title: str = "Bad request"
    """The ``title`` of the API's RFC 9457 problem document."""

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, for JSON."""
        return {"type": type(self).__name__, "message": str(self)}

    def problem_detail(self) -> str:
        """The ``detail`` of the API's problem document."""
        return str(self)

    def problem_errors(self) -> list[dict[str, str]]:
        """The ``errors`` list of the API's problem document (``{file, table, record, field, message}`` each)."""
        return []


class ValidationError(BackboneError):
    """Input is malformed; ``problems`` lists every problem found."""

    exit_code = 2
    http_status = 422
    title = "Invalid input"

    def __init__(self, problems: list[Problem] | Problem | str, file: str = "") -> None:
        if isinstance(problems, str):
            problems = [Problem(problems, file=file)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__(self._summary())

    def _summary(self) -> str:
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} found"
        return head + ":\n" + "\n".join(f"  {p}" for p in self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ValidationError", "message": self._summary(),
                "problems": [p.to_dict() for p in self.problems]}

    def problem_detail(self) -> str:
        return f"{len(self.problems)} problem(s) found in the input"

    def problem_errors(self) -> list[dict[str, str]]:
        return [p.to_dict() for p in self.problems]


class InfeasibleError(BackboneError):
    """Valid input that cannot be satisfied; ``reasons`` says what cannot be met."""

    exit_code = 3
    http_status = 409
    title = "Infeasible"

    def __init__(self, message: str, reasons: list[str] | None = None) -> None:
        self.reasons = list(reasons or [])
        text = message + ("".join(f"\n  {r}" for r in self.reasons) if self.reasons else "")
        super().__init__(text)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "InfeasibleError", "message": str(self), "reasons": self.reasons}

    def problem_errors(self) -> list[dict[str, str]]:
        return [{"file": "", "table": "", "record": "", "field": "", "message": r} for r in self.reasons]


class SolverError(BackboneError):
    """A solver backend is unavailable or failed."""

    exit_code = 4
    http_status = 503
    title = "Solver error"


class NotFoundError(BackboneError):
    """A named thing (site, file, scenario) does not exist."""

    exit_code = 2
    http_status = 404
    title = "Not found"


class VerificationError(BackboneError):
    """An independent check (``--verify``) found that a result violates its own model.

    This is a defect in the solver chain, not in the input: the CLI exits 5 whatever the command.
    """

    exit_code = 5
    http_status = 500
    title = "Verification failed"


class FrozenTableError(TypeError):
    """Code tried to write into a :class:`~backbone.model.Network`'s table.

    A network's tables are read-only (one instance is shared by concurrent solves and API requests). This is a
    programming error, not bad input: copy the table (``net.links.copy()``), change the copy and build a new
    network with :meth:`~backbone.model.Network.copy_with`.
    """


def one_line(exc: BaseException) -> str:
    """A parser error on one line: PyYAML's ``problem at line L, column C`` (its own text spans several lines,
    with a source excerpt), else the error's text with its whitespace collapsed."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(exc).split())
