"""The design instance: a network design problem in plain arrays (nodes, links, modules, demands, states)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

FEAS_TOL = 1e-6
"""Tolerance for capacity and demand comparisons in the design modules."""


@dataclass(frozen=True)
class DesignInstance:
    """A network design problem in plain arrays.

    Attributes
    ----------
    name
        For logs and results.
    nodes
        Node ids (positions are the integer node numbers used below).
    links
        Index: link id. Columns ``a``, ``b`` (int node positions), ``preinstalled``,
        ``preinstalled_cost``, ``routing_cost`` (per unit of flow), ``setup_cost``.
    modules
        One row per installable module type: ``link`` (int position), ``capacity``, ``cost``
        (per module), ``max_count`` (``inf`` = unlimited).
    demands
        Index: demand id. Columns ``s``, ``t`` (int node positions), ``volume``.
    link_model
        ``U`` undirected (both directions share capacity), ``B`` bidirected (each direction
        has the installed capacity), ``D`` directed (only ``a -> b``).
    capacity_model
        ``M`` modular (integer counts), ``E`` explicit (at most one module per link), ``L``
        linear (continuous counts).
    fixed_charge
        Pay ``setup_cost`` for every link with capacity.
    states
        Failed link positions per network state; ``states[0]`` must be ``()``.
    state_names
        Name per state (``NOS``, then the failed link ids).
    """

    name: str
    nodes: pd.Index
    links: pd.DataFrame
    modules: pd.DataFrame
    demands: pd.DataFrame
    link_model: Literal["U", "B", "D"] = "U"
    capacity_model: Literal["M", "E", "L"] = "M"
    fixed_charge: bool = False
    states: tuple[tuple[int, ...], ...] = ((),)
    state_names: tuple[str, ...] = ("NOS",)

    @property
    def n_links(self) -> int:
        return len(self.links)

    def arcs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tail, head, link) per arc: arcs ``0..L-1`` run ``a -> b``; for U and B links arcs
        ``L..2L-1`` run ``b -> a``."""
        a, b = self.links["a"].to_numpy(int), self.links["b"].to_numpy(int)
        idx = np.arange(self.n_links)
        if self.link_model == "D":
            return a, b, idx
        return np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([idx, idx])

    def sources(self) -> tuple[np.ndarray, np.ndarray]:
        """(source nodes K, supply matrix K x N) of the aggregated flow."""
        s, t = self.demands["s"].to_numpy(int), self.demands["t"].to_numpy(int)
        vol = self.demands["volume"].to_numpy(float)
        keep = vol > 0
        src = np.unique(s[keep])
        k_of = np.searchsorted(src, s[keep])
        n = len(self.nodes)
        out = sp.coo_matrix((vol[keep], (k_of, s[keep])), shape=(len(src), n))
        into = sp.coo_matrix((vol[keep], (k_of, t[keep])), shape=(len(src), n))
        return src, (out - into).toarray()

    def constant_cost(self) -> float:
        """Cost every design pays: pre-installed capacity, and setup of links with pre-installed
        capacity under fixed charge."""
        c = float(self.links["preinstalled_cost"].sum())
        if self.fixed_charge:
            pre = self.links["preinstalled"].to_numpy(float) > 0
            c += float(self.links["setup_cost"].to_numpy(float)[pre].sum())
        return c

    def module_upper(self) -> np.ndarray:
        """A finite upper bound per module: ``max_count``, else enough to carry all demand
        (1 for explicit capacities)."""
        cap = self.modules["capacity"].to_numpy(float)
        total = float(self.demands["volume"].sum()) * (2.0 if self.link_model == "U" else 1.0)
        need = np.ceil(np.maximum(total, 1.0) / cap) + 1.0
        ub = np.minimum(self.modules["max_count"].to_numpy(float), need)
        return np.minimum(ub, 1.0) if self.capacity_model == "E" else ub
