"""The one meaning of utilisation: the larger direction's flow over the capacity.

A link's utilisation (``te_links.csv``, the TE summary's ``mlu``, every failure state's), a corridor's
(:mod:`backbone.corridors`: its directional sums over its lit capacity) and the shortest-path fallback's MLU are all
:func:`utilisation`. The independent checker (:mod:`backbone.solver.checks.te`) recomputes it on its own, by design.
Which routing a network state's utilisation is measured on (min-MLU over the latency-admissible candidate paths) is
the impact's rule (:mod:`backbone.solver.failures.impact`); this module is the ratio itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["utilisation"]


def utilisation(flow_ab_gbps: np.ndarray | pd.Series | float, flow_ba_gbps: np.ndarray | pd.Series | float,
                capacity_gbps: np.ndarray | pd.Series | float) -> np.ndarray:
    """The one meaning of utilisation: the larger direction's flow over the capacity.

    ``u = max(flow_ab, flow_ba) / capacity`` elementwise; with no capacity it is 0 without flow and infinite
    with flow. A link's utilisation (``te_links.csv``) and a corridor's (its directional sums over its lit
    capacity) are both this function.

    Parameters
    ----------
    flow_ab_gbps, flow_ba_gbps
        Gbps in each direction.
    capacity_gbps
        Capacity in Gbps (each direction).

    Returns
    -------
    numpy.ndarray
        The utilisation (1.0 = full), as floats.

    Example
    -------
    >>> utilisation([30.0], [50.0], [100.0])
    array([0.5])
    """
    larger = np.maximum(np.asarray(flow_ab_gbps, float), np.asarray(flow_ba_gbps, float))
    cap = np.broadcast_to(np.asarray(capacity_gbps, float), larger.shape)
    out = np.where(larger > 0, np.inf, 0.0)
    return np.divide(larger, cap, out=out, where=cap > 0)
