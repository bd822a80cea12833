"""Valid inequalities for the roadmap bound (:mod:`backbone.solver.roadmap.bound`): site cuts with integer
rounding, and the running maximum of the period floors. Each is valid for every roadmap the bound covers; the
docstrings say why."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.model import Network
from backbone.solver.core.problem import Block, LinearProgram

__all__ = ["CUT_TOL", "floor_rows", "monotone_floors", "site_cut_rows"]

CUT_TOL = 1e-6
"""How far below its exact value a site cut's right-hand side is rounded (modules): solver noise must not round up."""


def site_cut_rows(lp: LinearProgram, full: Network, period: np.ndarray, failed: Sequence[Sequence[str]],
                  ceiling: np.ndarray, h: np.ndarray, allowed: np.ndarray, cap: np.ndarray, mod: np.ndarray,
                  y_max: np.ndarray, slack: np.ndarray) -> Block | None:
    """Site cuts with integer rounding (MIR), one row per block ``j``, site ``v`` and module size ``M`` where they
    cut off fractional modules (None when none does).

    Every path of a commodity that starts (ends) at ``v`` leaves (enters) ``v`` over one of its links that survive
    in ``j``'s state, and each arc carries at most ``c_j (cap_l + m_l Y_{t(j),l})``; at most ``slack_j`` (the
    ``carried`` row's right-hand side) is left unmet. So, with ``D_jv`` the larger of the routable traffic out of
    and into ``v``, ``delta_j(v)`` its surviving links that may be online in ``t(j)`` and ``C_jv`` the capacity of
    all its surviving links today::

        sum_{l in delta_j(v)} m_l Y_{t(j),l} >= R_jv = (D_jv - slack_j) / c_j - C_jv

    The ``Y`` are integer, so the mixed-integer rounding of this row divided by ``M`` is valid: with
    ``a_l = m_l / M``, ``b = R_jv / M``, ``f = b - floor(b) > 0`` and ``f_l = a_l - floor(a_l)``::

        sum_{l in delta_j(v)} (floor(a_l) + min(f_l, f) / f) Y_{t(j),l} >= ceil(b)

    (Nemhauser and Wolsey's MIR of ``sum a_l y_l >= b`` over ``y >= 0`` integer). The LP alone may buy a tenth of
    a 1,600 Gbps module where a site needs 160 Gbps more in a failure state; the row asks for a whole module. ``b``
    is taken a hair low (``CUT_TOL``) so rounding noise cannot lift it past an integer.

    Parameters
    ----------
    lp
        The bound LP (its ``online`` block: periods x links of ``full``, period-major).
    period, failed, ceiling
        Per block: its period, the links its state fails, its utilisation ceiling ``c_j``.
    h
        Blocks x commodities (``full.demands``' rows): the demand, zero where a commodity has no path in the block.
    allowed
        Periods x links: may the link be online then.
    cap, mod, y_max
        Per link: installed capacity (Gbps), module size (Gbps), modules that can be added at most.
    slack
        Per block: the traffic it may leave unmet (Gbps)."""
    L = len(full.links)
    J = len(period)
    if not J:
        return None
    sites = full.sites.index
    ends = np.stack([sites.get_indexer(full.links["site_a"]), sites.get_indexer(full.links["site_b"])])
    V = len(sites)
    incid = sp.csr_matrix((np.ones(2 * L), (ends.ravel(), np.tile(np.arange(L), 2))), shape=(V, L))
    surviving = np.ones((J, L), bool)
    for j, out in enumerate(failed):  # one mask per block (its failed links)
        surviving[j, full.links.index.get_indexer([x for x in out if x in full.links.index])] = False
    usable = surviving & allowed[period] & (y_max > 0)[None, :]
    src = sp.csr_matrix((np.ones(len(full.demands)), (np.arange(len(full.demands)),
                                                      sites.get_indexer(full.demands["src"]))), shape=(h.shape[1], V))
    dst = sp.csr_matrix((np.ones(len(full.demands)), (np.arange(len(full.demands)),
                                                      sites.get_indexer(full.demands["dst"]))), shape=(h.shape[1], V))
    need = np.maximum(np.asarray(src.T @ h.T).T, np.asarray(dst.T @ h.T).T) - slack[:, None]  # J x V
    R = need / np.asarray(ceiling, float)[:, None] - np.asarray(incid @ (surviving * cap[None, :]).T).T
    jj, ll = np.nonzero(usable)
    jj, ll, vv = np.r_[jj, jj], np.r_[ll, ll], np.r_[ends[0, ll], ends[1, ll]]
    parts, rhs, index = [], [], []
    for M in np.unique(mod[y_max > 0]):  # one family per module size (a handful)
        b = R / M - CUT_TOL
        f = b - np.floor(b)
        a = mod[ll] / M
        fl = a - np.floor(a)
        keep_row = (R > CUT_TOL) & (f > CUT_TOL)
        on = keep_row[jj, vv]
        coef = np.floor(a[on]) + np.minimum(fl[on], f[jj[on], vv[on]]) / f[jj[on], vv[on]]
        rows_jv = np.flatnonzero(keep_row.ravel())
        row_of = np.full(J * V, -1, np.int64)
        row_of[rows_jv] = np.arange(len(rows_jv))
        T = lp.variables["online"].size // L
        parts.append(sp.csr_matrix((coef, (row_of[jj[on] * V + vv[on]], period[jj[on]] * L + ll[on])),
                                   shape=(len(rows_jv), T * L)))
        rhs.append(np.ceil(b.ravel()[rows_jv]))
        index.append(pd.DataFrame({"block": rows_jv // V, "site": sites[rows_jv % V], "module_gbps": M}))
    if not sum(p.shape[0] for p in parts):
        return None
    table = pd.concat(index, ignore_index=True)
    return lp.add_constraints("site_cut", {"online": sp.vstack(parts, format="csr")}, lower=np.concatenate(rhs),
                              index=pd.MultiIndex.from_frame(table))


def monotone_floors(floors: np.ndarray) -> np.ndarray:
    """Each period's floor raised to the largest floor of the periods before it (a running maximum).

    Valid: capacity persists, so what any roadmap has online in ``t`` contains what it had online in every
    ``tau < t`` (``Y_t >= Y_tau``, ``B_t >= B_tau``) and costs at least as much (costs are non-negative):
    ``cost_t >= cost_tau >= F_tau``. The LP's rows imply this already (``Y_t = Y_tau + sum z``, ``z >= 0``);
    the running maximum states it in the reported floors."""
    return np.maximum.accumulate(floors) if len(floors) else floors


def floor_rows(lp: LinearProgram, floors: np.ndarray, unit: np.ndarray, fixed: np.ndarray, with_fixed: np.ndarray,
               L: int, name: str = "floor") -> None:
    """Per period with a floor: the undiscounted cost of what is online then is at least the floor,
    ``sum_l module_cost_l Y_{t,l} + sum_c fixed_c B_{t,c} >= floor_t`` (rows ``name``)."""
    rows = np.flatnonzero(floors > 0)
    if not len(rows):
        return
    T = len(floors)
    sel = np.zeros((len(rows), T))
    sel[np.arange(len(rows)), rows] = 1.0
    coef: dict[str, sp.spmatrix] = {"online": sp.kron(sp.csr_matrix(sel), sp.csr_matrix(unit[None, :]), format="csr")}
    if len(with_fixed):
        coef["built"] = sp.kron(sp.csr_matrix(sel), sp.csr_matrix(fixed[with_fixed][None, :]), format="csr")
    lp.add_constraints(name, coef, lower=floors[rows], index=pd.Index(rows, name="period"))
