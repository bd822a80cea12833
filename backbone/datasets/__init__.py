"""Curated public fact tables and the code that assembles the shipped global scenario from them.

* :mod:`backbone.datasets.global_sites`: sites (data centers, PoPs, cable landing stations) and
  demand metros, with coordinates, GPU/power estimates, grid carbon and power prices.
* :mod:`backbone.datasets.global_cables`: named submarine cable systems, segment by segment
  between their landing stations, routed along sea lanes.
* :mod:`backbone.datasets.global_terrestrial`: terrestrial long-haul fibre meshes.
* :mod:`backbone.datasets.build_global`: assembles the tables, derives SRLGs (cable system,
  shared landing, geographic corridors), runs the demand generator and writes ``data/global``.

Run ``python -m backbone.datasets.build_global`` to rebuild the shipped scenario.
"""
