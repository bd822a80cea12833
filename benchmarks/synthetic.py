"""Synthetic backbone generator shared by the benchmarks.

The implementation lives in :mod:`backbone.solver.synthetic` (an installed package, so tests can use it
too); this module re-exports it so benchmark scripts can ``from benchmarks.synthetic import
synthetic_backbone`` when run from the repository root.
"""

from __future__ import annotations

from backbone.solver.synthetic import ANCHORS, synthetic_backbone

__all__ = ["ANCHORS", "synthetic_backbone"]
