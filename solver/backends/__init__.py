"""Backend registry. Each adapter imports its solver package only inside itself, so a missing
package makes that backend unavailable (with a clear reason), never the whole solver."""

from __future__ import annotations

import importlib
from typing import Annotated, Any, Protocol

from pydantic import AfterValidator, StringConstraints

from backbone.errors import SolverError

BACKENDS: dict[str, tuple[str, str]] = {
    "highs": ("backbone.solver.backends.highs", "HighsBackend"),
    "ortools-glop": ("backbone.solver.backends.ortools", "GlopBackend"),
    "ortools-pdlp": ("backbone.solver.backends.ortools", "PdlpBackend"),
    "ortools-scip": ("backbone.solver.backends.ortools", "ScipBackend"),
    "pulp-cbc": ("backbone.solver.backends.pulp", "PulpCbcBackend"),
    "pulp-highs": ("backbone.solver.backends.pulp", "PulpHighsBackend"),
}
"""Backend name -> (module, class)."""

def check_backend_name(name: str) -> str:
    """``name`` when it names a backend; ValueError otherwise (a 422 naming the option).

    Whether its solver package is installed is a run-time question (:func:`get_backend`).
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    return name


BackendName = Annotated[str, StringConstraints(max_length=32), AfterValidator(check_backend_name)]
"""An option naming a solver backend, checked against :data:`BACKENDS` when the options are parsed."""


class Backend(Protocol):
    """What an adapter provides."""

    name: str
    supports_mip: bool

    def available(self) -> tuple[bool, str]:
        """(usable, reason when not)."""
        ...

    def solve(self, lp: Any, time_limit_s: float, mip_gap: float, threads: int | None, lp_method: str | None = None,
              presolve: bool = True, **options: Any) -> Any:
        """Solve and return a :class:`backbone.solver.core.problem.Solution`.

        ``time_limit_s``, ``mip_gap``, ``threads``, ``lp_method`` and ``presolve`` are the backend-neutral
        settings of :func:`backbone.solver.core.problem.solve`; the adapter translates them into its solver's own.
        """
        ...


def get_backend(name: str) -> Backend:
    """The adapter for ``name``.

    Raises
    ------
    SolverError
        When the name is unknown or the backend's package is missing.
    """
    key = name
    if key not in BACKENDS:
        raise SolverError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    module, cls = BACKENDS[key]
    try:
        impl = getattr(importlib.import_module(module), cls)()
    except ImportError as exc:
        raise SolverError(f"backend {key!r} is not available: {exc}") from None
    ok, reason = impl.available()
    if not ok:
        raise SolverError(f"backend {key!r} is not available: {reason}")
    return impl


def available_backends(mip: bool = False) -> list[str]:
    """Names of the backends usable here (``mip=True``: only those solving MIPs)."""
    names = []
    for name in BACKENDS:
        try:
            impl = get_backend(name)
        except SolverError:
            continue
        if mip and not impl.supports_mip:
            continue
        names.append(name)
    return names
