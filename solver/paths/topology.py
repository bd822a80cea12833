"""The plain-array topology a path search runs on (and ships to worker processes), its cache key, and the
flat arrays a search returns.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from backbone.errors import Problem, ValidationError
from backbone.model import Network


@dataclass(frozen=True)
class SearchTopology:
    """Plain arrays of the link table (what the worker processes need)."""

    n_sites: int
    site_a: np.ndarray
    site_b: np.ndarray
    latency_ms: np.ndarray
    length_km: np.ndarray

    @property
    def n_links(self) -> int:
        return len(self.site_a)

    def adjacency(self) -> list[list[tuple[int, int, float]]]:
        """Per site: list of (neighbour, arc, latency) over every incident link."""
        adj: list[list[tuple[int, int, float]]] = [[] for _ in range(self.n_sites)]
        n_links = self.n_links
        for j, (a, b, w) in enumerate(zip(self.site_a.tolist(), self.site_b.tolist(), self.latency_ms.tolist(),
                                          strict=True)):
            adj[a].append((b, j, w))
            adj[b].append((a, n_links + j, w))
        return adj

    def graph(self) -> sp.csr_matrix:
        """Symmetric site x site matrix of the lowest link latency (for Dijkstra)."""
        n = self.n_sites
        rows = np.concatenate([self.site_a, self.site_b])
        cols = np.concatenate([self.site_b, self.site_a])
        w = np.concatenate([self.latency_ms, self.latency_ms])
        order = np.lexsort((w, cols, rows))  # keep the minimum over parallel links
        rows, cols, w = rows[order], cols[order], w[order]
        first = np.ones(len(rows), bool)
        first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
        # tiny floor so that zero-latency links remain edges in the csgraph sense
        return sp.csr_matrix((np.maximum(w[first], 1e-12), (rows[first], cols[first])), shape=(n, n))


def build_topology(net: Network) -> SearchTopology:
    """The link table as the plain arrays a search (or a worker process) needs."""
    a, b = net.link_endpoints()
    links = net.links
    lat = links["latency_ms"].to_numpy(float)
    if len(lat) and (np.isnan(lat).any() or (lat < 0).any()):
        bad = links.index[np.isnan(lat) | (lat < 0)]
        raise ValidationError([Problem("latency must be a non-negative number", table="links", record=str(i),
                                       field="latency_ms") for i in bad])
    return SearchTopology(len(net.sites), np.asarray(a, np.int64), np.asarray(b, np.int64), lat,
                     links["length_km"].to_numpy(float))


def topology_key(net: Network) -> str:
    """Hash of what paths depend on: sites, and the links' ids, endpoints, latency and length."""
    h = hashlib.sha256()
    h.update(pd.util.hash_pandas_object(pd.Series(net.sites.index, dtype=str), index=False).to_numpy().tobytes())
    cols = net.links[["site_a", "site_b", "latency_ms", "length_km"]]
    h.update(pd.util.hash_pandas_object(cols, index=True).to_numpy().tobytes())
    return h.hexdigest()[:24]


@dataclass(frozen=True)
class FoundPath:
    """Search output as flat arrays: per path its pair (index into the searched pairs),
    latency, hops; arcs and sites of all paths concatenated in travel order."""

    pair: np.ndarray
    latency: np.ndarray
    hops: np.ndarray
    arcs: np.ndarray
    sites: np.ndarray

    @staticmethod
    def concat(parts: list[FoundPath], pair_maps: list[np.ndarray]) -> FoundPath:
        return FoundPath(np.concatenate([m[p.pair] for p, m in zip(parts, pair_maps, strict=True)]),
                      np.concatenate([p.latency for p in parts]), np.concatenate([p.hops for p in parts]),
                      np.concatenate([p.arcs for p in parts]), np.concatenate([p.sites for p in parts]))
