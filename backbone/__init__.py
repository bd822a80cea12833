"""backbone: the geographic model of a global AI backbone.

Tables of sites, links, SRLGs, metros and demands (:class:`Network`), geodesy and latency
(:mod:`backbone.geo`), scenario I/O (:mod:`backbone.io`), validation, demand generation and maps.
Heavy modules are imported lazily so the CLI starts fast.

The facade a notebook meets (docs/notebook.md)::

    import backbone

    net = backbone.load_scenario()                              # the shipped global scenario
    r = backbone.solve_te(net, objective="min-mlu", k_paths=4)  # r.links["utilisation"]
    more = net.with_capacity({"some-link": 3200.0})              # a new Network; net is unchanged
    backbone.sweep(more, kind="srlg").table()                   # failure sweep, worst first
    backbone.place(net), backbone.plan(net, out_dir="out")
    backbone.diff("q2-plan", "q3-plan").kpis                    # what changed between two plans
    backbone.deck("q3-plan", "review.pptx")                     # the editable review deck

``solve_te``, ``place``, ``sweep``, ``plan``, ``diff`` and ``deck`` live in :mod:`backbone.solver.facade` and load the solver
on first use; the model layer never imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

# One namespace, three repository folders: an install maps ``solver/`` and ``api/`` to ``backbone/solver`` and
# ``backbone/api`` (see setup.py). Run from a source checkout, the sub-packages sit beside this folder, so the
# checkout's root joins the package path; an installed copy has them inside and never looks elsewhere.
_HERE = Path(__file__).resolve().parent
if not (_HERE / "solver").is_dir() and (_HERE.parent / "solver" / "__init__.py").is_file() \
        and (_HERE.parent / "setup.py").is_file():
    __path__.append(str(_HERE.parent))

if TYPE_CHECKING:
    from backbone.io import load_scenario, save_scenario
    from backbone.model import Network
    from backbone.solver.facade import (
        calibrate_latency,
        deck,
        design,
        diff,
        place,
        plan,
        roadmap,
        solve_te,
        sweep,
    )

__all__ = ["Network", "__version__", "calibrate_latency", "deck", "design", "diff", "load_scenario", "place", "plan",
           "roadmap", "save_scenario", "solve_te", "sweep"]

FACADE = ("solve_te", "place", "sweep", "plan", "design", "roadmap", "calibrate_latency", "diff", "deck")
"""Names :mod:`backbone.solver.facade` provides (imported on first use)."""


def __getattr__(name: str) -> Any:
    if name == "Network":
        from backbone.model import Network

        return Network
    if name in ("load_scenario", "save_scenario"):
        import backbone.io as io

        return getattr(io, name)
    if name in FACADE:
        import backbone.solver.facade as facade

        return getattr(facade, name)
    raise AttributeError(f"module 'backbone' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
