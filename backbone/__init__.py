"""backbone: the geographic model of a global AI backbone.

Tables of sites, links, SRLGs, metros and demands (:class:`Network`), geodesy and latency
(:mod:`backbone.geo`), scenario I/O (:mod:`backbone.io`), validation, demand generation and maps.
Heavy modules are imported lazily so the CLI starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from backbone.io import load_scenario, save_scenario
    from backbone.model import Network

__all__ = ["Network", "__version__", "load_scenario", "save_scenario"]


def __getattr__(name: str) -> Any:
    if name == "Network":
        from backbone.model import Network

        return Network
    if name in ("load_scenario", "save_scenario"):
        import backbone.io as io

        return getattr(io, name)
    raise AttributeError(name)
