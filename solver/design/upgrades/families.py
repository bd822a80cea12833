"""Constraint families shared by the upgrade models: the per-state candidate paths, demand and capacity rows.

:func:`backbone.solver.design.upgrades.paths.plan_path_upgrades`, the survivable upgrade MIP
(:mod:`backbone.solver.design.survivable.model`) and the roadmap bound (:mod:`backbone.solver.roadmap.bound`) build their
programs from these (one block of rows per failure state; loops run over states, never over links, demands
or paths).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.problem import Block, LinearProgram
from backbone.solver.core.sparse import selector

__all__ = ["UNMET_PENALTY_USD_PER_GBPS", "state_capacity_rows", "state_demand_rows", "state_paths"]

UNMET_PENALTY_USD_PER_GBPS = 1e7
"""Penalty on demand left without an admissible path: far above any upgrade cost per Gbps, so
upgrades are never traded for unmet demand that capacity could carry."""


def state_paths(net: Network, failed: Sequence[str], k_paths: int) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """(var_demand, var_path, arc incidence of the variables) for one state, on the intact link
    index: the TE admissible-path rule applied to the state's ``k_paths`` candidate paths."""
    from backbone.solver.paths.candidates import candidate_paths, paths_after_failure
    from backbone.solver.te.formulations import admissible_paths
    from backbone.solver.te.instance import build_instance

    def provider(n: Network, pairs: pd.DataFrame, k_paths: int, max_latency_ms: Any, disjoint: bool) -> Any:
        if not failed:
            return candidate_paths(n, pairs, k_paths=k_paths, max_latency_ms=max_latency_ms)
        return paths_after_failure(n, list(failed), pairs, k_paths=k_paths, max_latency_ms=max_latency_ms)

    inst = build_instance(net, provider)
    demands = np.flatnonzero(inst.demand_gbps > 0)
    dp = admissible_paths(inst, demands, k_paths, False)
    if dp.paths is None or len(dp.var_path) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), sp.csr_matrix((0, 2 * len(net.links)))
    return dp.var_demand, dp.var_path, dp.paths.arc_incidence[dp.var_path]


def state_demand_rows(lp: LinearProgram, var_demand: Sequence[np.ndarray], h: np.ndarray, index: pd.Index) -> Block:
    """Demand family, one block of rows per state ``s``: ``sum_{p in P_s(d)} f_{s,p} + u_{s,d} = h_{s,d}``.

    ``var_demand[s]`` is the demand (``0..D-1``) of each path variable of state ``s`` (the states' variables
    one after the other in ``flow``); ``h`` the ``S x D`` demands, raveled like the rows and the ``unmet``
    columns.
    """
    S = len(var_demand)
    D = len(h) // S if S else 0
    rows = np.concatenate([s * D + vd for s, vd in enumerate(var_demand)]) if S else np.zeros(0, np.int64)
    return lp.add_constraints("demand", {"flow": selector(rows, S * D, lp.variables["flow"].size),
                                         "unmet": sp.identity(S * D, format="csr")}, lower=h, upper=h, index=index)


def state_capacity_rows(lp: LinearProgram, incidences: Sequence[sp.spmatrix], utilisation_ceiling: np.ndarray,
                        mod: np.ndarray, cap: np.ndarray, block: str = "modules", cols: np.ndarray | None = None,
                        level: str = "state") -> Block:
    """Capacity family, one block of rows per state ``s`` and arc ``a`` of link ``l``:
    ``A_s^T f_s - t_s m_l y_l <= t_s cap_l``.

    ``incidences[s]`` is the path x arc incidence of state ``s``, ``utilisation_ceiling[s]`` its ceiling ``t_s``;
    ``y`` is variable block ``block``, its column for each row ``cols`` (default: the row's link).
    """
    S, L = len(incidences), len(cap)
    t = np.repeat(np.asarray(utilisation_ceiling, float), 2 * L)
    arc_link = np.tile(np.concatenate([np.arange(L), np.arange(L)]), S)
    flow = (sp.block_diag([inc.T for inc in incidences], format="csr") if S
            else sp.csr_matrix((0, lp.variables["flow"].size)))
    y = selector(np.arange(2 * L * S), 2 * L * S, lp.variables[block].size,
                 cols=arc_link if cols is None else cols, values=-t * mod[arc_link])
    return lp.add_constraints("capacity", {"flow": flow, block: y}, upper=t * cap[arc_link],
                              index=pd.MultiIndex.from_product([range(S), range(2 * L)], names=[level, "arc"]))
