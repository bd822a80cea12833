"""Even splits of a training job over one to :data:`~backbone.solver.placement.options.MAX_SPLIT_SITES` sites: the
admissible site sets, the least-latency synchronisation ring through each, the pruning of 3- and 4-site sets, and
why a job no set can place cannot be placed.

A job of ``G`` GPUs split over ``k`` sites puts ``G / k`` at each, and synchronises over a ring through them (the
model's rule, :mod:`backbone.workload_traffic`: each site sends its ring share to the next site of the ring, in
the order the sites are listed). The ring order of a set is the one whose summed one-way backbone latency of its
``k`` edges is least (ties: the first in :data:`RING_ORDERS`, which starts at the set's first site). Every edge of
the ring carries the same Gbps, so this ring also makes the least sync Gbps x ms on the backbone.

A set is *admissible* for a job when each of its sites is allowed (the job's regions, pinned sites and datasets'
residency) and has room for ``G / k`` GPUs, ``k <= min(max_sites, MAX_SPLIT_SITES)`` (``k`` = the number of pinned
sites when sites are pinned: the job spans exactly those), and the backbone connects every edge of its ring.
One- and two-site sets are all kept. Of the 3- and 4-site sets the :func:`split_sets` keeps, per job and size, the
``keep`` whose least-latency ring is shortest (ties: the lower site positions first); the placement's optimum is
then over the sets kept, and :func:`split_notes` says so.
"""

from __future__ import annotations

from itertools import combinations, permutations
from math import comb

import numpy as np
import pandas as pd

from backbone.solver.placement.options import MAX_SPLIT_SITES

__all__ = ["MAX_ENUMERATED_SETS", "RING_ORDERS", "SITE_COLUMNS", "option_labels", "ring_edges", "split_notes",
           "split_sets", "unplaceable_reasons"]

SITE_COLUMNS: tuple[str, ...] = ("site_a", "site_b", "site_c", "site_d")[:MAX_SPLIT_SITES]
"""Option columns holding the positions of an option's sites in ring order (-1 past its ``n_sites``)."""

RING_ORDERS: dict[int, np.ndarray] = {k: np.array([(0, *p) for p in permutations(range(1, k))], dtype=int)
                                      for k in range(1, MAX_SPLIT_SITES + 1)}
"""Every directed ring through ``k`` sites starting at the first (``(k - 1)!`` orders: 1, 1, 2 and 6)."""

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


def _best_rings(sets: np.ndarray, lat_ss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each set's least-latency ring (sites in ring order) and its summed one-way latency (inf when unreachable)."""
    k = sets.shape[1]
    orders = RING_ORDERS[k]
    if k == 1:
        return sets.copy(), np.zeros(len(sets))
    ordered = sets[:, orders]  # sets x orders x k
    ring_ms = lat_ss[ordered, np.roll(ordered, -1, axis=2)].sum(axis=2)
    best = ring_ms.argmin(axis=1) if len(sets) else np.zeros(0, int)
    return ordered[np.arange(len(sets)), best], ring_ms[np.arange(len(sets)), best]


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


def split_sets(jobs: pd.DataFrame, cap_gpus: np.ndarray, allowed: np.ndarray, lat_ss: np.ndarray, keep: int
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
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
            ring, ring_ms = _best_rings(sets, lat_ss)
            ok = np.isfinite(ring_ms)
            ring, ring_ms = ring[ok], ring_ms[ok]
            admissible = len(ring)
            if k >= 3 and admissible > keep:
                pick = np.sort(np.argsort(ring_ms, kind="stable")[:keep])
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
                     f"size the {keep} sets whose least-latency sync ring is shortest (split_sets_per_job) -- "
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
