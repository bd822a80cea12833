"""Even splits of a training job over one to :data:`~backbone.solver.placement.options.MAX_SPLIT_SITES` sites: the
admissible site sets, the least-latency synchronisation ring through each, the pruning of 3- and 4-site sets, and
why a job no set can place cannot be placed.

A job of ``G`` GPUs split over ``k`` sites puts ``G / k`` at each, and synchronises over a ring through them (the
model's rule, :mod:`backbone.workload_ring`, which ``backbone workloads`` applies to pinned sites too: the ring
whose summed one-way backbone latency of its ``k`` edges is least, ties to the set's own order). Every edge of the
ring carries the same Gbps, so this ring also makes the least sync Gbps x ms on the backbone.

A set is *admissible* for a job when each of its sites is allowed (the job's regions, pinned sites and datasets'
residency) and has room for ``G / k`` GPUs, ``k <= min(max_sites, MAX_SPLIT_SITES)`` (``k`` = the number of pinned
sites when sites are pinned: the job spans exactly those), and the backbone connects every edge of its ring.
One- and two-site sets are all kept. Of the 3- and 4-site sets :func:`split_sets` keeps, per job and size,
``keep`` sets, ranked with a :class:`SplitRanking` by what the placement's objective and rows weigh:

1. sets that *fit* first: the ring's sync Gbps, routed over the lowest-latency path of each ring edge, overloads
   no link on its own (``capacity_gbps``), and each site has power-limited room for ``G / k`` GPUs (installed plus
   the blocks its power can feed) -- a set that fails either can only be placed by relaxing a hard row;
2. then the first ``ceil(keep / 2)`` by estimated GPU cost, ``sum over its sites of max(G / k - installed, 0) x
   cost per GPU`` (capex + power opex per GPU, :func:`~backbone.solver.placement.inputs.candidate_sites`, + MW
   capex per GPU), ties by ring latency: a cheap set far apart is kept;
3. the rest by ring latency, ties by cost: the compact sets, whose sync crosses the fewest links, are kept too.

Ties left go to the lower site positions. Without a ranking (``ranking=None``) the ``keep`` shortest rings are kept.
The placement's optimum is then over the sets kept, and :func:`split_notes` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.solver.placement.options import MAX_SPLIT_SITES
from backbone.workload_ring import least_latency_rings

__all__ = ["MAX_ENUMERATED_SETS", "SITE_COLUMNS", "SplitRanking", "option_labels", "ring_edges", "split_notes",
           "split_sets", "unplaceable_reasons"]

SITE_COLUMNS: tuple[str, ...] = ("site_a", "site_b", "site_c", "site_d")[:MAX_SPLIT_SITES]
"""Option columns holding the positions of an option's sites in ring order (-1 past its ``n_sites``)."""

MAX_ENUMERATED_SETS = 200_000
"""At most this many ``k``-site sets are enumerated per job; beyond, the job's eligible sites are cut to the most
compact ones first (see :func:`_eligible_for_enumeration`) and the note names the restriction."""


def ring_edges(ring: np.ndarray, n_sites: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The directed sync edges of each option's ring: ``(option, from, to)`` positions, one edge per site of a
    split option (``i -> i + 1``, the last back to the first; none for a single site).

    ``ring`` is ``options x MAX_SPLIT_SITES`` (site positions, -1 padded); for two sites this gives ``a -> b`` and
    ``b -> a``."""
    n_opt, width = ring.shape
    i = np.arange(width)[None, :]
    on = (i < n_sites[:, None]) & (n_sites[:, None] >= 2)
    nxt = np.where(i + 1 < n_sites[:, None], i + 1, 0)
    opt = np.broadcast_to(np.arange(n_opt)[:, None], (n_opt, width))
    return opt[on], ring[on], np.take_along_axis(ring, nxt, axis=1)[on]


def option_labels(options: pd.DataFrame, site_ids: np.ndarray) -> np.ndarray:
    """Each option's sites joined by ``+`` in ring order (``a+b+c``: the sync ring ``a -> b -> c -> a``)."""
    ring = options[list(SITE_COLUMNS)].to_numpy()
    names = np.asarray(site_ids, dtype=object)[np.maximum(ring, 0)]
    labels = names[:, 0].copy() if len(ring) else np.zeros(0, dtype=object)
    for i in range(1, ring.shape[1]):  # one pass per ring position (three)
        labels = np.where(ring[:, i] >= 0, labels + "+" + names[:, i], labels)
    return labels


@dataclass(frozen=True)
class SplitRanking:
    """What :func:`split_sets` ranks a job's 3- and 4-site sets by, besides ring latency (see the module docstring).

    Positions are the placement's candidate sites; arcs are ``2L`` (link ``l`` a -> b, then ``L + l`` b -> a)."""

    job_gpus: np.ndarray
    """Per job: its GPUs."""
    cost_per_gpu_usd: np.ndarray
    """Per site: USD of one added GPU (capex, power opex over the horizon, MW capex)."""
    free_gpus: np.ndarray
    """Per site: GPUs installed (no added cost)."""
    room_gpus: np.ndarray
    """Per site: GPUs its power can feed (installed plus the blocks its power cap allows)."""
    sync_gbps: np.ndarray
    """``jobs x (MAX_SPLIT_SITES + 1)``: Gbps on each ring edge of the job split over ``k`` sites (column ``k``)."""
    pair_arcs: sp.csr_matrix
    """``(sites x sites) x arcs``: the lowest-latency path of each ordered pair (row ``x * S + y``)."""
    arc_capacity_gbps: np.ndarray
    """Per arc: the link's capacity."""

    def fits(self, ring: np.ndarray, job: int) -> np.ndarray:
        """Per set (``sets x k`` positions in ring order): its ring overloads no link on its own and every site has
        power-limited room for the job's share."""
        n, k = ring.shape
        share = self._share(job, k)
        room = (self.room_gpus[ring] >= share - 1e-9).all(axis=1)
        S = len(self.free_gpus)
        pairs = (ring * S + np.roll(ring, -1, axis=1)).ravel()
        pick = sp.csr_matrix((np.full(n * k, float(self.sync_gbps[job, k])), (np.repeat(np.arange(n), k), pairs)),
                             shape=(n, S * S))
        load = (pick @ self.pair_arcs).tocoo()
        over = np.bincount(load.row[load.data > self.arc_capacity_gbps[load.col] + 1e-9], minlength=n) > 0
        return room & ~over

    def cost_usd(self, ring: np.ndarray, job: int) -> np.ndarray:
        """Per set: estimated USD of its GPUs, ``sum over sites of max(share - installed, 0) x cost per GPU``."""
        share = self._share(job, ring.shape[1])
        return (np.maximum(share - self.free_gpus[ring], 0.0) * self.cost_per_gpu_usd[ring]).sum(axis=1)

    def _share(self, job: int, k: int) -> float:
        return float(self.job_gpus[job]) / k


def _ranked(ring: np.ndarray, ring_ms: np.ndarray, keep: int, job: int, ranking: SplitRanking | None) -> np.ndarray:
    """Positions (sorted) of the ``keep`` sets kept of ``ring`` (see the module docstring)."""
    if ranking is None:
        return np.sort(np.argsort(ring_ms, kind="stable")[:keep])
    unfit = (~ranking.fits(ring, job)).astype(int)
    cost = ranking.cost_usd(ring, job)
    cheap = np.lexsort((ring_ms, cost, unfit))[:(keep + 1) // 2]  # last key first; stable: lower positions
    compact = np.lexsort((cost, ring_ms, unfit))
    compact = compact[~np.isin(compact, cheap)][:keep - len(cheap)]
    return np.sort(np.concatenate([cheap, compact]))


def _eligible_for_enumeration(eligible: np.ndarray, k: int, lat_ss: np.ndarray) -> tuple[np.ndarray, bool]:
    """The eligible site positions a job's ``k``-site sets are drawn from: all of them, or, when they make more than
    :data:`MAX_ENUMERATED_SETS` sets, the most compact ones (least latency to their ``k - 1``-th nearest eligible
    site) up to that many sets. Returns the positions and whether sites were cut."""
    if comb(len(eligible), k) <= MAX_ENUMERATED_SETS:
        return eligible, False
    sub = lat_ss[np.ix_(eligible, eligible)]
    spread = np.sort(sub + sub.T, axis=1)[:, k - 1]  # column 0 is the site itself
    m = k
    while comb(m + 1, k) <= MAX_ENUMERATED_SETS:
        m += 1
    return np.sort(eligible[np.argsort(spread, kind="stable")[:m]]), True


def split_sets(jobs: pd.DataFrame, cap_gpus: np.ndarray, allowed: np.ndarray, lat_ss: np.ndarray, keep: int,
               ranking: SplitRanking | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The admissible site sets of every job (see the module docstring), pruned to ``keep`` per job and size for
    three and four sites.

    Parameters
    ----------
    jobs
        The jobs (``gpus``, ``max_sites``, ``sites``: pinned ids).
    cap_gpus
        Room for GPUs at each candidate site (``gpus_cap``).
    allowed
        ``jobs x sites``: the site is allowed for the job.
    lat_ss
        ``sites x sites`` lowest one-way backbone latency (ms; inf where unreachable, 0 on the diagonal).
    keep
        3- and 4-site sets kept per job and size.
    ranking
        What the pruning ranks sets by (fit, GPU cost, ring latency); None: ring latency only.

    Returns
    -------
    options
        One row per kept set: ``job`` (position), the :data:`SITE_COLUMNS` (positions in ring order, -1 padded),
        ``n_sites`` and ``ring_latency_ms`` (summed one-way latency of the ring's edges; 0 for one site), sorted by
        job, size and sites.
    counts
        One row per (job, size) with any admissible set: ``job``, ``n_sites``, ``admissible``, ``kept`` and
        ``sites_cut`` (the enumeration drew from the most compact eligible sites only).
    """
    g = jobs["gpus"].to_numpy(dtype=float)
    pinned_n = jobs["sites"].map(len).to_numpy(dtype=int)
    most = np.where(pinned_n > 0, pinned_n, np.minimum(jobs["max_sites"].to_numpy(dtype=int), MAX_SPLIT_SITES))
    parts: list[pd.DataFrame] = []
    counts: list[dict[str, int | bool]] = []
    for k in range(1, MAX_SPLIT_SITES + 1):
        wants = (most >= k) & ((pinned_n == 0) | (pinned_n == k))
        eligible = allowed & (cap_gpus[None, :] >= g[:, None] / k) & wants[:, None]
        for j in np.flatnonzero(eligible.sum(axis=1) >= k):  # one pass per job (tens), vectorised over its sets
            pool, cut = _eligible_for_enumeration(np.flatnonzero(eligible[j]), k, lat_ss)
            sets = np.array(list(combinations(pool.tolist(), k)), dtype=int).reshape(-1, k)
            ring, ring_ms = least_latency_rings(sets, lat_ss)
            ok = np.isfinite(ring_ms)
            ring, ring_ms = ring[ok], ring_ms[ok]
            admissible = len(ring)
            if k >= 3 and admissible > keep:
                pick = _ranked(ring, ring_ms, keep, int(j), ranking)
                ring, ring_ms = ring[pick], ring_ms[pick]
            if admissible:
                counts.append({"job": int(j), "n_sites": k, "admissible": admissible, "kept": len(ring),
                               "sites_cut": cut})
            padded = np.full((len(ring), MAX_SPLIT_SITES), -1, dtype=int)
            padded[:, :k] = ring
            parts.append(pd.DataFrame({"job": int(j), **{c: padded[:, i] for i, c in enumerate(SITE_COLUMNS)},
                                       "n_sites": k, "ring_latency_ms": ring_ms}))
    columns = ["job", *SITE_COLUMNS, "n_sites", "ring_latency_ms"]
    options = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        {c: np.zeros(0, float if c == "ring_latency_ms" else int) for c in columns})
    options = options[columns].astype({c: int for c in columns if c != "ring_latency_ms"})
    options = options.sort_values(["job", "n_sites", *SITE_COLUMNS], kind="stable", ignore_index=True)
    table = pd.DataFrame(counts, columns=["job", "n_sites", "admissible", "kept", "sites_cut"])
    return options, table


def split_notes(jobs: pd.DataFrame, counts: pd.DataFrame, keep: int) -> list[str]:
    """The notes a restricted placement carries: which jobs' 3- and 4-site sets were pruned (the optimum is over
    the sets kept), and which jobs may span more sites than the placement considers."""
    notes: list[str] = []
    pruned = counts[(counts["kept"] < counts["admissible"]) | counts["sites_cut"].astype(bool)]
    if len(pruned):
        ids = jobs.index.to_numpy()
        what = "; ".join(f"{ids[r.job]}: {r.kept} of {r.admissible} {r.n_sites}-site sets"
                         + (" (drawn from its most compact sites)" if r.sites_cut else "")
                         for r in pruned.itertuples(index=False))
        notes.append(f"restricted placement: of the admissible 3- and 4-site splits, the MIP considers per job and "
                     f"size {keep} sets (split_sets_per_job): those whose sync ring fits the links and whose sites' "
                     f"power has room first, then the {(keep + 1) // 2} of least estimated GPU cost and the "
                     f"{keep - (keep + 1) // 2} with the shortest least-latency ring -- "
                     f"{what}; an 'optimal' status is optimal over these sets, not over every split")
    wide = jobs.index[jobs["max_sites"].to_numpy(dtype=float) > MAX_SPLIT_SITES] if len(jobs) else []
    if len(wide):
        notes.append(f"training jobs {', '.join(map(str, wide))} may span more than {MAX_SPLIT_SITES} sites; the "
                     f"placement considers one site or an even split over at most {MAX_SPLIT_SITES}")
    return notes


def unplaceable_reasons(jobs: pd.DataFrame, sites: pd.DataFrame, resident: np.ndarray, has_option: np.ndarray
                        ) -> dict[str, str]:
    """Why each job without a placement option cannot be placed, by the first rule that leaves it nowhere: its
    regions, its pinned sites, its datasets' residency, the room for its share of GPUs over the sites it may span
    (naming ``max_sites`` when a wider split would fit), or a backbone that connects no such set of sites."""
    out: dict[str, str] = {}
    cap = sites["gpus_cap"].to_numpy(dtype=float)
    region = sites["region"].to_numpy()
    for j in np.flatnonzero(~has_option):  # only the unplaceable jobs (a few at most)
        row = jobs.iloc[j]
        regions, pinned = tuple(row["regions"]), tuple(row["sites"])
        in_regions = np.isin(region, regions) if regions else np.ones(len(sites), bool)
        in_pins = sites.index.isin(pinned) if pinned else np.ones(len(sites), bool)
        allowed = in_regions & in_pins & resident[j]
        gpus = float(row["gpus"])
        most = len(pinned) if pinned else min(int(row["max_sites"]), MAX_SPLIT_SITES)
        if not in_regions.any():
            why = f"its regions ({', '.join(regions)}) hold no candidate site"
        elif not (in_regions & in_pins).any():
            why = f"its pinned sites ({', '.join(pinned)}) are not candidate sites in its regions"
        elif not allowed.any():
            why = (f"the residency of the datasets it reads ({', '.join(row['datasets'])}) leaves none of its "
                   f"{int((in_regions & in_pins).sum())} candidate sites")
        elif len(pinned) > MAX_SPLIT_SITES:
            why = f"it is pinned to {len(pinned)} sites; the placement splits a job over at most {MAX_SPLIT_SITES}"
        elif pinned and allowed.sum() < len(pinned):
            why = (f"only {int(allowed.sum())} of its {len(pinned)} pinned sites ({', '.join(pinned)}) are allowed "
                   "(candidate sites in its regions, within its datasets' residency)")
        elif any((allowed & (cap >= gpus / k)).sum() >= k for k in (range(most, most + 1) if pinned else
                                                                    range(1, most + 1))):
            why = "the backbone connects none of the allowed sets of sites with room for it (no path for its sync)"
        else:
            room = int((allowed & (cap >= gpus / most)).sum())
            why = (f"capacity: over at most {most} site(s) it needs {gpus / most:,.0f} GPUs per site, and {room} of "
                   f"its {int(allowed.sum())} allowed site(s) have room for that (the largest {cap[allowed].max():,.0f})")
            wider = [k for k in range(most + 1, MAX_SPLIT_SITES + 1) if (allowed & (cap >= gpus / k)).sum() >= k]
            if wider and not pinned:
                why += f"; its max_sites {int(row['max_sites'])} rules out a split over {wider[0]} sites that would fit"
            elif pinned:
                why += f" (pinned to {', '.join(pinned)})"
        out[str(jobs.index[j])] = (f"training job {jobs.index[j]}: no allowed site or split can host its "
                                   f"{int(gpus):,} GPUs: {why}")
    return out
