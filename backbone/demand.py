"""Demand generators: inference demand by metro and a gravity-model traffic matrix by class.

The model (all parameters in :class:`DemandParameters`, stored in a scenario's manifest under
``demand_parameters`` so that the shipped demand can be regenerated exactly):

**(a) Inference demand by metro.** Peak inference load in GPU-equivalents,

    ``gpus_m = G * w_m / sum_k w_k``,  ``w_m = population_m ** a * gdp_m ** b``

with ``G = total_inference_gpus``, ``a = population_exponent`` (0.3) and ``b = gdp_exponent``
(0.7): demand follows spending power more than headcount (AI services are bought by firms and
consumers in proportion to income; population still matters for consumer chat). Rounded to whole
GPUs.

**(b) Inter-site traffic by class.** Every metro is served from its *home site*: its access site by the one
access rule (:mod:`backbone.access`): the site whose ``metro`` column names it (a PoP first, else a data
center, else a landing), or the nearest site.
For each class a gravity model between source and destination sites,

    ``T_ij ~ m_i * m_j / ((d_ij + d0) / 1000 km) ** gamma``

(``d_ij`` geodesic km, ``d0 = distance_offset_km``, ``gamma`` per class), keeps the strongest
pairs and scales the class to its share of ``total_gbps``:

* ``training``: data center <-> data center, masses = GPUs installed (gradient / checkpoint
  synchronisation between campuses). Pairs in one region get a tight SLO
  ``ceil(training_slo_factor * rtt + training_slo_margin_ms)``; cross-region pairs a looser
  ``ceil10(cross_region_slo_factor * rtt + 10 ms)``.
* ``inference``: metro home site <-> serving data centers. Each home site splits its metros'
  inference GPUs over its ``serving_sites`` best data centers by ``gpus_dc / rtt ** gamma``
  among those within ``inference_max_rtt_ms`` (its own campus serves locally and adds no WAN
  traffic); responses (data center -> PoP) carry ``inference_response_share`` of the bytes. SLO
  ``clip(ceil10(1.3 * rtt + 20), 50, 150)`` ms RTT.
* ``replication``: data center <-> data center, masses = maximum GPUs (storage follows capacity
  growth), weak distance decay (geo-redundant copies go far). No SLO.
* ``bulk``: home sites <-> data centers, masses = metro GDP at the home site and GPUs installed
  (dataset ingest, model distribution, backups). No SLO.

**(c) Any topology.** A network without data centers (a Topology Zoo, TopoHub or SNDlib graph)
gets a plain gravity matrix between all its sites instead (:func:`site_gravity_traffic`):
``T_ij ~ 1 / ((d_ij + d0) / 1000 km) ** bulk_gamma`` for every ordered pair of distinct sites,
class ``bulk`` without SLO, scaled to ``total_gbps`` (the CLI's default there is
:data:`SITE_GRAVITY_LOAD` of the network's total link capacity) and rounded to 1 Mbps.

``rtt`` is the lowest-latency round trip on the network (Dijkstra on ``latency_ms``), so every
SLO is met by the shortest path: ``2 * shortest one-way latency <= slo_rtt_ms`` holds by
construction (checked by :func:`slo_violations`). An optional seeded log-normal factor
(``noise_sigma``, ``seed``) perturbs pair volumes; with ``noise_sigma = 0`` the model is fully
deterministic without randomness. Volumes are rounded to 0.1 Gbps; pairs under ``min_gbps`` are
dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from backbone import geo
from backbone.access import access_sites
from backbone.errors import Problem, ValidationError
from backbone.model import Network, normalize_table
from backbone.schema import DEMANDS, TRAFFIC_CLASSES

logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class DemandParameters:
    """Parameters of the demand model (see the module docstring for the formulas).

    Attributes
    ----------
    total_inference_gpus
        Peak inference demand worldwide, GPU-equivalents (``G``).
    population_exponent, gdp_exponent
        Exponents ``a`` and ``b`` of the metro weight ``population^a x GDP^b``.
    total_gbps
        Total inter-site traffic over all classes, Gbps (per direction, summed over demands).
    training_share, inference_share, replication_share, bulk_share
        Shares of ``total_gbps`` per class (normalised to sum 1).
    distance_offset_km
        ``d0`` in the distance deterrence ``((d + d0) / 1000) ** gamma``.
    training_gamma, inference_gamma, replication_gamma, bulk_gamma
        Distance-decay exponents per class.
    training_pairs, replication_pairs, bulk_pairs
        Number of site pairs kept (strongest by gravity) per class; each pair gives two demands.
    serving_sites
        Data centers serving each home site's inference.
    inference_max_rtt_ms
        Farthest serving data center, RTT on the network.
    inference_response_share
        Share of inference bytes flowing data center -> PoP.
    training_slo_factor, training_slo_margin_ms
        Intra-region training SLO = ceil(factor x rtt + margin).
    cross_region_slo_factor
        Cross-region training SLO = ceil10(factor x rtt + 10).
    min_gbps
        Demands below this are dropped.
    noise_sigma, seed
        Log-normal sigma of a per-pair volume factor, and its random seed (0: no noise).
    """

    total_inference_gpus: float = 1_150_000.0
    population_exponent: float = 0.3
    gdp_exponent: float = 0.7
    total_gbps: float = 300_000.0
    training_share: float = 0.35
    inference_share: float = 0.30
    replication_share: float = 0.20
    bulk_share: float = 0.15
    distance_offset_km: float = 500.0
    training_gamma: float = 1.2
    inference_gamma: float = 1.0
    replication_gamma: float = 0.3
    bulk_gamma: float = 0.8
    training_pairs: int = 250
    replication_pairs: int = 150
    bulk_pairs: int = 200
    serving_sites: int = 3
    inference_max_rtt_ms: float = 100.0
    inference_response_share: float = 0.75
    training_slo_factor: float = 1.25
    training_slo_margin_ms: float = 2.0
    cross_region_slo_factor: float = 1.5
    min_gbps: float = 1.0
    noise_sigma: float = 0.25
    seed: int = 2026

    def __post_init__(self) -> None:
        problems: list[Problem] = []
        for f in fields(self):
            v = getattr(self, f.name)
            if not np.isfinite(v) or v < 0:
                problems.append(Problem(f"must be a finite number >= 0, got {v!r}", table="demand_parameters",
                                        field=f.name))
        if not problems and self.total_gbps <= 0:
            problems.append(Problem("must be > 0", table="demand_parameters", field="total_gbps"))
        if not problems and sum(self.class_shares().values()) <= 0:
            problems.append(Problem("class shares must not all be 0", table="demand_parameters"))
        if not problems and self.serving_sites < 1:
            problems.append(Problem("must be >= 1", table="demand_parameters", field="serving_sites"))
        if problems:
            raise ValidationError(problems)

    def class_shares(self) -> dict[str, float]:
        """Class -> share of ``total_gbps`` (normalised)."""
        raw = {"training": self.training_share, "inference": self.inference_share,
               "replication": self.replication_share, "bulk": self.bulk_share}
        total = sum(raw.values())
        return {k: (v / total if total > 0 else 0.0) for k, v in raw.items()}

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], **overrides: Any) -> DemandParameters:
        """Parameters stored in a scenario manifest (``demand_parameters``), with overrides.

        Raises
        ------
        ValidationError
            On unknown or invalid parameters.
        """
        stored = dict(meta.get("demand_parameters") or {})
        stored.update({k: v for k, v in overrides.items() if v is not None})
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(stored) - set(known))
        if unknown:
            raise ValidationError(f"unknown demand parameter(s): {', '.join(unknown)}")
        try:
            values: dict[str, Any] = {k: (int(v) if known[k].type in ("int", int) else float(v))
                                      for k, v in stored.items()}
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"invalid demand parameter: {exc}") from None
        return cls(**values)


# ---------------------------------------------------------------------------------- (a) metros
def metro_weights(metros: pd.DataFrame, params: DemandParameters) -> pd.Series:
    """Normalised metro weights ``population^a x GDP^b / sum``."""
    w = (metros["population_m"].astype(float).clip(lower=0) ** params.population_exponent
         * metros["gdp_usd_bn"].astype(float).clip(lower=0) ** params.gdp_exponent)
    total = float(w.sum())
    return w / total if total > 0 else w * 0.0


def generate_metro_inference(net: Network, params: DemandParameters | None = None) -> pd.DataFrame:
    """Inference demand by metro (GPU-equivalents at peak).

    Returns
    -------
    DataFrame
        Indexed by metro id: ``weight``, ``inference_gpus`` (whole GPUs), ``home_site``.

    Example
    -------
    >>> from backbone.io import load_scenario
    >>> table = generate_metro_inference(load_scenario())
    >>> round(table["weight"].sum(), 6)
    1.0
    """
    params = params or DemandParameters()
    metros = net.metros
    weights = metro_weights(metros, params)
    return pd.DataFrame({"weight": weights, "inference_gpus": np.round(weights * params.total_inference_gpus),
                         "home_site": home_sites(net)}, index=metros.index)


def home_sites(net: Network) -> pd.Series:
    """Each metro's home site: its access site by the one access rule (:func:`backbone.access.access_sites`:
    a site in the metro, PoP, then data center, then landing, nearest first; else the nearest site)."""
    return access_sites(net)["site"].astype(str)


# ---------------------------------------------------------------------------------- (b) traffic
def rtt_matrix_ms(net: Network) -> pd.DataFrame:
    """Lowest round-trip latency between every pair of sites (2 x Dijkstra one-way), ms."""
    from scipy.sparse.csgraph import dijkstra

    from backbone.route import min_latency_graph

    graph, _ = min_latency_graph(net)
    one_way = dijkstra(graph, directed=False)
    return pd.DataFrame(2.0 * one_way, index=net.sites.index, columns=net.sites.index)


def _geodesic_matrix_km(sites: pd.DataFrame, a: pd.Index, b: pd.Index) -> np.ndarray:
    la, lb = sites.loc[a], sites.loc[b]
    return geo.geodesic_km(la["lon"].to_numpy(float)[:, None], la["lat"].to_numpy(float)[:, None],
                           lb["lon"].to_numpy(float)[None, :], lb["lat"].to_numpy(float)[None, :])


def _deterrence(dist_km: np.ndarray, gamma: float, offset_km: float) -> np.ndarray:
    return ((np.asarray(dist_km, float) + offset_km) / 1000.0) ** gamma


def _top_symmetric_pairs(names: pd.Index, mass_a: np.ndarray, mass_b: np.ndarray, dist_km: np.ndarray,
                         gamma: float, offset_km: float, n_pairs: int, same_set: bool) -> pd.DataFrame:
    """Strongest gravity pairs (``a``, ``b``, ``weight``) from a mass x mass / deterrence matrix."""
    g = np.outer(mass_a, mass_b) / _deterrence(dist_km, gamma, offset_km)
    if same_set:
        g = np.triu(g, k=1)
    flat = g.ravel()
    order = np.argsort(-flat, kind="stable")
    order = order[flat[order] > 0][:n_pairs]
    ia, ib = np.unravel_index(order, g.shape)
    return pd.DataFrame({"a": ia, "b": ib, "weight": flat[order]})


def _slo_training(rtt: np.ndarray, same_region: np.ndarray, params: DemandParameters) -> np.ndarray:
    intra = np.ceil(params.training_slo_factor * rtt + params.training_slo_margin_ms)
    cross = 10.0 * np.ceil((params.cross_region_slo_factor * rtt + 10.0) / 10.0)
    return np.where(same_region, intra, cross)


def _slo_inference(rtt: np.ndarray) -> np.ndarray:
    return np.clip(10.0 * np.ceil((1.3 * rtt + 20.0) / 10.0), 50.0, 150.0)


def generate_traffic(net: Network, params: DemandParameters | None = None,
                     metro_inference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Inter-site traffic matrix by class from the gravity model.

    Parameters
    ----------
    net
        The network (sites, links for latencies, metros).
    params
        Model parameters (default :class:`DemandParameters`).
    metro_inference
        Output of :func:`generate_metro_inference` (computed when omitted).

    Returns
    -------
    DataFrame
        The ``demands`` table (``backbone.schema.DEMANDS`` columns, indexed by id
        ``<class>-<src>-<dst>``), ordered by class, then volume.

    Raises
    ------
    ValidationError
        When the network is too disconnected to serve every metro. A network without data
        centers gets :func:`site_gravity_traffic` instead.
    """
    params = params or DemandParameters()
    sites = net.sites
    dcs = sites.index[sites["kind"] == "datacenter"]
    if len(dcs) == 0:
        return site_gravity_traffic(net, params)
    inference = metro_inference if metro_inference is not None else generate_metro_inference(net, params)
    rtt = rtt_matrix_ms(net)
    shares = params.class_shares()
    frames = [
        _training(net, dcs, rtt, params),
        _inference(net, dcs, rtt, inference, params),
        _replication(net, dcs, params),
        _bulk(net, dcs, inference, params),
    ]
    out = []
    rng = np.random.default_rng(params.seed)
    for cls, frame in zip(("training", "inference", "replication", "bulk"), frames, strict=True):
        if frame.empty or shares[cls] == 0:
            continue
        w = frame["weight"].to_numpy(float)
        if params.noise_sigma > 0:
            w = w * rng.lognormal(0.0, params.noise_sigma, size=len(w))
        gbps = w / w.sum() * shares[cls] * params.total_gbps
        frame = frame.assign(demand_gbps=np.round(gbps, 1), traffic_class=cls)
        out.append(frame[frame["demand_gbps"] >= params.min_gbps])
    table = pd.concat(out, ignore_index=True)
    table = table.groupby(["traffic_class", "src", "dst"], as_index=False, sort=False).agg(
        demand_gbps=("demand_gbps", "sum"), slo_rtt_ms=("slo_rtt_ms", "min"))
    table["demand_gbps"] = table["demand_gbps"].round(1)
    table["_order"] = table["traffic_class"].map({c: i for i, c in enumerate(TRAFFIC_CLASSES)})
    table = table.sort_values(["_order", "demand_gbps", "src", "dst"], ascending=[True, False, True, True],
                              kind="stable")
    table.index = pd.Index(table["traffic_class"] + "-" + table["src"] + "-" + table["dst"], name="id")
    return normalize_table(DEMANDS, table[["src", "dst", "demand_gbps", "traffic_class", "slo_rtt_ms"]])


SITE_GRAVITY_LOAD = 0.1
"""Default total of the site gravity matrix, as a share of the network's total link capacity
(``backbone demand`` on a network without data centers and without ``--total-gbps``)."""


def site_gravity_total_gbps(net: Network) -> float:
    """:data:`SITE_GRAVITY_LOAD` x the total link capacity, Gbps (at least 1 Gbps)."""
    return max(1.0, round(SITE_GRAVITY_LOAD * float(net.links["capacity_gbps"].sum()), 1))


def site_gravity_traffic(net: Network, params: DemandParameters | None = None) -> pd.DataFrame:
    """A gravity traffic matrix between all sites of any topology (model (c) in the module doc).

    Every ordered pair of distinct sites connected by the network gets
    ``params.total_gbps x w_ij / sum w`` with ``w_ij = 1 / ((d_ij + d0) / 1000 km) ** bulk_gamma``
    (times the seeded log-normal noise when ``noise_sigma > 0``), class ``bulk``, no SLO, rounded
    to 0.001 Gbps; pairs that round to zero are dropped.

    Raises
    ------
    ValidationError
        When the network has fewer than two connected sites.
    """
    params = params or DemandParameters()
    sites = net.sites.index
    rtt = rtt_matrix_ms(net).to_numpy(float) if len(sites) else np.zeros((0, 0))
    w = 1.0 / _deterrence(_geodesic_matrix_km(net.sites, sites, sites), params.bulk_gamma, params.distance_offset_km)
    reachable = np.isfinite(rtt)
    np.fill_diagonal(reachable, False)
    w = np.where(reachable, w, 0.0)
    if not (w > 0).any():
        raise ValidationError(Problem("a traffic matrix needs at least two sites connected by links", table="sites"))
    ia, ib = np.nonzero(w > 0)
    weight = w[ia, ib]
    if params.noise_sigma > 0:
        weight = weight * np.random.default_rng(params.seed).lognormal(0.0, params.noise_sigma, size=len(weight))
    gbps = np.round(weight / weight.sum() * params.total_gbps, 3)
    keep = gbps > 0
    src, dst = sites[ia[keep]], sites[ib[keep]]
    table = pd.DataFrame({"src": src, "dst": dst, "demand_gbps": gbps[keep], "traffic_class": "bulk",
                          "slo_rtt_ms": np.nan})
    table = table.sort_values(["demand_gbps", "src", "dst"], ascending=[False, True, True], kind="stable")
    table.index = pd.Index("bulk-" + table["src"] + "-" + table["dst"], name="id")
    return normalize_table(DEMANDS, table)


def _training(net: Network, dcs: pd.Index, rtt: pd.DataFrame, params: DemandParameters) -> pd.DataFrame:
    sites = net.sites.loc[dcs]
    gpus = sites["gpus_installed"].to_numpy(float)
    pairs = _top_symmetric_pairs(dcs, gpus, gpus, _geodesic_matrix_km(net.sites, dcs, dcs), params.training_gamma,
                                 params.distance_offset_km, params.training_pairs, same_set=True)
    a, b = dcs[pairs["a"]], dcs[pairs["b"]]
    r = rtt.loc[dcs, dcs].to_numpy()[pairs["a"], pairs["b"]]
    same = sites["region"].to_numpy()[pairs["a"]] == sites["region"].to_numpy()[pairs["b"]]
    reachable = np.isfinite(r)
    slo = _slo_training(r, same, params)
    w = pairs["weight"].to_numpy() / 2.0
    half = pd.DataFrame({"src": a, "dst": b, "weight": w, "slo_rtt_ms": slo})[reachable]
    return pd.concat([half, half.rename(columns={"src": "dst", "dst": "src"})], ignore_index=True)


def _inference(net: Network, dcs: pd.Index, rtt: pd.DataFrame, inference: pd.DataFrame,
               params: DemandParameters) -> pd.DataFrame:
    load = inference.groupby("home_site")["inference_gpus"].sum()
    load = load[load > 0]
    if load.empty:
        return pd.DataFrame(columns=["src", "dst", "weight", "slo_rtt_ms"])
    homes = load.index
    r = rtt.loc[homes, dcs].to_numpy()
    gpus = net.sites.loc[dcs, "gpus_installed"].to_numpy(float)
    attract = gpus[None, :] / np.maximum(r, 1.0) ** params.inference_gamma
    attract = np.where(r <= params.inference_max_rtt_ms, attract, 0.0)
    unserved = homes[(attract > 0).sum(axis=1) == 0]
    if len(unserved):
        raise ValidationError(f"no data center within {params.inference_max_rtt_ms:g} ms RTT of home site(s): "
                              + ", ".join(unserved[:10]))
    k = min(params.serving_sites, len(dcs))
    keep = np.argsort(-attract, axis=1, kind="stable")[:, :k]
    mask = np.zeros_like(attract, bool)
    np.put_along_axis(mask, keep, True, axis=1)
    attract = np.where(mask, attract, 0.0)
    split = attract / attract.sum(axis=1, keepdims=True) * load.to_numpy()[:, None]
    hi, di = np.nonzero(split)
    src, dst = homes[hi].to_numpy(), dcs[di].to_numpy()
    wan = src != dst  # a home site that is itself a serving campus serves locally
    vol, slo = split[hi, di][wan], _slo_inference(r[hi, di][wan])
    src, dst = src[wan], dst[wan]
    resp = params.inference_response_share
    return pd.concat([
        pd.DataFrame({"src": dst, "dst": src, "weight": vol * resp, "slo_rtt_ms": slo}),
        pd.DataFrame({"src": src, "dst": dst, "weight": vol * (1.0 - resp), "slo_rtt_ms": slo}),
    ], ignore_index=True)


def _replication(net: Network, dcs: pd.Index, params: DemandParameters) -> pd.DataFrame:
    mass = net.sites.loc[dcs, "gpus_max"].to_numpy(float)
    pairs = _top_symmetric_pairs(dcs, mass, mass, _geodesic_matrix_km(net.sites, dcs, dcs),
                                 params.replication_gamma, params.distance_offset_km, params.replication_pairs,
                                 same_set=True)
    half = pd.DataFrame({"src": dcs[pairs["a"]], "dst": dcs[pairs["b"]], "weight": pairs["weight"] / 2.0,
                         "slo_rtt_ms": np.nan})
    return pd.concat([half, half.rename(columns={"src": "dst", "dst": "src"})], ignore_index=True)


def _bulk(net: Network, dcs: pd.Index, inference: pd.DataFrame, params: DemandParameters) -> pd.DataFrame:
    gdp = net.metros["gdp_usd_bn"].groupby(inference["home_site"]).sum()
    gdp = gdp[gdp > 0]
    if gdp.empty:
        return pd.DataFrame(columns=["src", "dst", "weight", "slo_rtt_ms"])
    homes = gdp.index
    gpus = net.sites.loc[dcs, "gpus_installed"].to_numpy(float)
    dist = _geodesic_matrix_km(net.sites, homes, dcs)
    pairs = _top_symmetric_pairs(homes, gdp.to_numpy(float), gpus, dist, params.bulk_gamma,
                                 params.distance_offset_km, params.bulk_pairs + len(homes), same_set=False)
    pairs = pairs[homes[pairs["a"]].to_numpy() != dcs[pairs["b"]].to_numpy()].head(params.bulk_pairs)
    half = pd.DataFrame({"src": dcs[pairs["b"]], "dst": homes[pairs["a"]], "weight": pairs["weight"] / 2.0,
                         "slo_rtt_ms": np.nan})
    return pd.concat([half, half.rename(columns={"src": "dst", "dst": "src"})], ignore_index=True)


# ---------------------------------------------------------------------------------- regenerate / checks
def regenerate(net: Network, params: DemandParameters | None = None) -> Network:
    """A network whose ``metros.inference_gpus`` and ``demands`` come from the generator.

    The parameters are recorded in ``meta["demand_parameters"]`` so that the result can be
    regenerated exactly.
    """
    params = params or DemandParameters.from_meta(net.meta)
    inference = generate_metro_inference(net, params)
    demands = generate_traffic(net, params, inference)
    metros = net.metros.copy()
    metros["inference_gpus"] = inference["inference_gpus"].astype(float)
    meta = {**net.meta, "demand_parameters": asdict(params)}
    logger.info("generated %d demands, %.0f Gbps, %.0f inference GPUs", len(demands),
                demands["demand_gbps"].sum(), metros["inference_gpus"].sum())
    return replace(net, metros=metros, demands=demands, meta=meta)


def slo_violations(net: Network) -> pd.DataFrame:
    """Demands whose SLO the lowest-latency path cannot meet (``2 x shortest one-way > slo``).

    Returns the offending rows of ``net.demands`` with a ``shortest_rtt_ms`` column (empty when
    every demand is routable under its SLO; unreachable pairs count as violations).
    """
    d = net.demands
    rtt = rtt_matrix_ms(net)
    pos = net.sites.index
    shortest = rtt.to_numpy()[pos.get_indexer(d["src"]), pos.get_indexer(d["dst"])]
    has_slo = d["slo_rtt_ms"].notna().to_numpy()
    bad = ~np.isfinite(shortest) | (has_slo & (shortest > d["slo_rtt_ms"].to_numpy(float) + 1e-9))
    return d[bad].assign(shortest_rtt_ms=shortest[bad])


def parameters_dict(params: DemandParameters) -> dict[str, Any]:
    """Plain dict of the parameters (for JSON and manifests)."""
    return asdict(params)
