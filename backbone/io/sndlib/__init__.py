"""SNDlib native formats: network files, network models and solution files, and the mapping to a :class:`Network`.

The package holds one module per file kind: :mod:`.network` (network files, :func:`parse_sndlib`),
:mod:`.model` (the 8-letter model codes and model files, :func:`parse_model_code`,
:func:`parse_model_file`), :mod:`.solution` (solution files, :func:`parse_solution`) and :mod:`.mapping`
(an SNDlib network as a backbone scenario and back, :func:`load_sndlib`, :func:`sndlib_from_network`).
Everything is parsing and mapping; building and solving a design is :mod:`backbone.solver.design.sndlib`.

:func:`parse_sndlib` reads every section of an SNDlib 1.0 network file (``META``, ``NODES``,
``LINKS`` with pre-installed capacity/cost, routing cost, setup cost and module list,
``DEMANDS`` with routing unit, value and hop limit, and the optional ``ADMISSIBLE_PATHS``) into
an :class:`SndlibNetwork` of tables keyed by id. :func:`load_sndlib` maps it onto the backbone's
tables through :func:`backbone.validate.build_network`. Format reference: SNDlib's
"Network input file" page (Zuse Institute Berlin).

Mapping rules (documented once, here)
-------------------------------------
* **Units.** ``META unit`` converts capacities and demands to Gbps: ``BITSPERSEC`` x 1e-9,
  ``KBITPERSEC`` x 1e-6, ``MBITPERSEC`` x 1e-3, ``GBITPERSEC`` x 1. Without a unit (most
  instances) one SNDlib capacity unit is taken as 1 Gbps. The factor is kept in
  ``meta["sndlib"]["gbps_per_unit"]``.
* **Coordinates.** When every node lies in lon [-180, 180] x lat [-90, 90] the coordinates are
  used as given; when only some do (at most half of them), the others are errors naming node,
  line and field (:func:`check_coordinates`). Several instances use planar (pixel) coordinates
  instead (atlanta, france, norway, ..., more than half of the nodes outside the box): their
  bounding box is then scaled, preserving aspect ratio, into a 10-degree
  box at lon 0..10, lat 45..55 (y increases northwards), and ``meta["sndlib"]["coordinates"]``
  says ``"planar-rescaled"``. Link lengths (geodesic x route factor) and latencies are derived
  from these positions, so they are indicative only for planar instances.
* **Region** by lon/lat (:func:`region_of`): lon < -30 is ``NA`` when lat >= 13 else ``LATAM``;
  -30 <= lon < 60 is ``EMEA`` when lat >= 35 or (lon >= 34 and lat >= 12) else ``AFRICA``;
  lon >= 60 is ``APAC``.
* **Link capacity** (``capacity_gbps``, what TE routes on): the pre-installed capacity when it is
  > 0, else the largest finite module (so TE has something to route on), else -- for pure
  fixed-charge links ``(UNLIMITED 0)`` or links without modules -- the total demand. The
  pre-installed capacity itself is kept in the extra column ``sndlib_preinstalled_gbps``.
* **Modules**: ``module_gbps`` / ``module_cost_usd`` are the module with the lowest cost per unit
  of capacity; ``max_capacity_gbps`` is the capacity plus the total demand rounded up to that
  module (a design never needs more). ``routing_cost_per_gbps`` and ``preinstalled_cost_usd``
  are copied (routing cost converted per Gbps).
* **Strict sections.** A section whose ``)`` is missing (a truncated file) or a stray ``)`` that
  ends a section early (unbalanced parentheses) is an error naming the section and line; nothing
  that was read before it is used.
* **Demands** are kept one record per SNDlib demand, ``src -> dst`` as written, with
  ``demand_gbps = routing_unit x demand_value`` converted to Gbps; whether they are directed is
  decided later by the SNDlib model (see :mod:`backbone.io.sndlib.model` and
  :mod:`backbone.solver.design.sndlib`).
* **Design data inside the scenario.** What the tables cannot hold is kept in
  ``meta["sndlib"]``: ``links`` maps each link id to ``{"preinstalled": units, "setup_cost": c,
  "modules": [[capacity units or null for UNLIMITED, cost], ...]}`` and ``demands`` maps each
  demand id to ``{"routing_unit": r}``. :func:`sndlib_from_network` rebuilds the
  :class:`SndlibNetwork` from the scenario alone, so an SNDlib design never re-reads a file (an
  uploaded scenario keeps working; no file path travels with a scenario).
"""

from __future__ import annotations

from backbone.io.sndlib.mapping import (
    PLANAR_BOX,
    design_meta,
    load_sndlib,
    node_positions,
    region_of,
    sndlib_from_network,
    to_tables,
)
from backbone.io.sndlib.model import (
    ALIASES,
    POSITIONS,
    SUPPORTED,
    SndlibModel,
    load_model,
    parse_model_code,
    parse_model_file,
)
from backbone.io.sndlib.network import SECTIONS, UNIT_TO_GBPS, SndlibNetwork, check_coordinates, parse_sndlib
from backbone.io.sndlib.solution import SndlibSolution, parse_solution

__all__ = [
    "ALIASES",
    "PLANAR_BOX",
    "POSITIONS",
    "SECTIONS",
    "SUPPORTED",
    "UNIT_TO_GBPS",
    "SndlibModel",
    "SndlibNetwork",
    "SndlibSolution",
    "check_coordinates",
    "design_meta",
    "load_model",
    "load_sndlib",
    "node_positions",
    "parse_model_code",
    "parse_model_file",
    "parse_sndlib",
    "parse_solution",
    "region_of",
    "sndlib_from_network",
    "to_tables",
]
