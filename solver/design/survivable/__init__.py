"""Survivable design: upgrades and new routes so that every failure state of a kind is carried.

* :mod:`~backbone.solver.design.survivable.iterate`: :func:`design_survivable`, the loop of design and sweep.
* :mod:`~backbone.solver.design.survivable.model`: the MIP over the intact state and the working set.
* :mod:`~backbone.solver.design.survivable.options`: :class:`SurviveOptions`.
* :mod:`~backbone.solver.design.survivable.bound`: the lower bound over every candidate and path (arc flows, SLOs
  dropped).
* :mod:`~backbone.solver.design.survivable.slo_bound`: the lower bound with the SLOs kept (a path LP by column
  generation), and the better of the two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.design.survivable.iterate import (
        SURVIVE_KINDS,
        SurvivableDesign,
        SurviveOptions,
        design_survivable,
        full_network,
    )

__all__ = ["SURVIVE_KINDS", "SurvivableDesign", "SurviveOptions", "design_survivable", "full_network"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={"iterate": __all__})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
