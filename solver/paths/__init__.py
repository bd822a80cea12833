"""Candidate paths: the ``k`` lowest-latency admissible paths per demand, and what is built on them.

* :mod:`~backbone.solver.paths.candidates`: :class:`PathSet`, :func:`candidate_paths` (cached),
  :func:`paths_after_failure`, :func:`csr_ranges`.
* :mod:`~backbone.solver.paths.search`: the grouped k-shortest-path search.
* :mod:`~backbone.solver.paths.reference`: its reference Python kernels (and the link-disjoint search).
* :mod:`~backbone.solver.paths.kernels` and :mod:`~backbone.solver.paths.array_kernels`: its compiled kernels.
* :mod:`~backbone.solver.paths.topology`: the arc arrays the search runs on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from backbone.solver.paths.candidates import (
        CACHE_SIZE,
        PARALLEL_MIN_PAIRS,
        PathSet,
        candidate_paths,
        clear_cache,
        csr_ranges,
        paths_after_failure,
    )

__all__ = ["CACHE_SIZE", "PARALLEL_MIN_PAIRS", "PathSet", "candidate_paths", "clear_cache", "csr_ranges",
           "paths_after_failure"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={"candidates": __all__})
"""Each public name is imported from its submodule on first use (SPEC 1, ``lazy_loader``)."""
