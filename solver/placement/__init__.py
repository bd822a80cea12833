"""AI capacity placement: where the GPUs go, under latency, power, cost, residency and network limits.

* :mod:`~solver.placement.options`: :class:`PlaceOptions` and the documented defaults (classes and
  SLOs, residency rules, follow-the-sun profile).
* :mod:`~solver.placement.inputs`: demand units, candidate sites, metro -> site RTT, routes.
* :mod:`~solver.placement.formulation`: the MIP, one function per constraint family.
* :mod:`~solver.placement.rounding`: the LP relaxation rounded into a plan (a dive fixes split training jobs),
  the MIP's start.
* :mod:`~solver.placement.result`: solve, planner tables, infeasibility diagnosis.
* the ``place`` planning task (JSON + CSV) is :mod:`backbone.solver.tasks.place`.

The independent checker is :func:`backbone.solver.checks.placement.check_placement`.

Modelling choices (documented defaults; see :mod:`~solver.placement.options`)
-----------------------------------------------------------------------------
* Demand: metros' ``inference_gpus`` (or tokens/s) x growth, split into ``interactive`` (50 ms RTT,
  share ``metros.interactive_share``) and ``batch`` (150 ms). A metro reaches the backbone at its
  access site (:mod:`backbone.access`: a site in the metro, PoP first, then data center, then landing; else
  the nearest site) over access fibre (geodesic x route factor).
* Supply: datacenters, or any site with ``gpus_max`` or installed GPUs; GPUs are built in blocks
  (1,024 by default) with an optional minimum build; power (``kw_per_gpu`` all-in) is covered by
  spare power plus MW built up to the cap; cost = capex (GPUs, MW, fixed) + energy and carbon
  opex of the added GPUs over the horizon (installed GPUs' running cost is the same in every plan).
* Network: serving metro m from site s puts ``gbps_per_gpu`` per GPU on both directions of each
  link of the chosen SLO-meeting candidate path; the scenario's own demands are routed jointly on
  their candidate paths (``baseline="joint"``), so a plan never uses capacity the backbone lacks.
* N+1: for every candidate site lost, every unit's demand served in its own peak hour can be
  fully re-served within SLO by the survivors' GPUs (explicit backup assignment per failure; GPU
  capacity only -- the network is not re-checked in failure states). Demand that cannot be
  protected (one site in reach) is still served and reported per failed site.
* Time: ``periods=24`` applies a follow-the-sun profile by region; GPUs are shared across hours.
* Infeasibility: unserved demand is a penalised slack, so an impossible instance still yields the
  best partial plan plus reasons in planner's terms (metros out of reach, residency, sites at their
  GPU maximum or power cap, bottleneck links -- from an elastic re-solve). The task then raises
  :class:`~backbone.errors.InfeasibleError` (CLI exit 3, API 409) unless ``allow_partial``.
* Solving: the LP relaxation is solved first (reported as ``lp_bound``) and rounded into a plan, which the
  MIP starts from; the MIP runs to ``mip_gap`` or the time limit; the better plan is reported with its gap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.placement.options import DEFAULT_RESIDENCY, PlaceOptions, ResidencyRule, TrainingJob
    from backbone.solver.placement.result import PlacementResult, solve_placement


__all__ = ["DEFAULT_RESIDENCY", "PlaceOptions", "PlacementResult", "ResidencyRule", "TrainingJob", "solve_placement"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "options": ["DEFAULT_RESIDENCY", "PlaceOptions", "ResidencyRule", "TrainingJob"],
    "result": ["PlacementResult", "solve_placement"],
})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
