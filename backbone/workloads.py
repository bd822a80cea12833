"""Backbone traffic of AI workloads beyond inference (issue #29): one documented function per flow.

Training jobs, their datasets and checkpoints put four kinds of traffic on a wide-area backbone. Each function
below gives the sustained rate one flow needs, in Gbps, from the workload's own figures, with its formula in its
docstring and a hand-computed example in ``tests/backbone/test_workloads.py``:

* :func:`gradient_sync_gbps` -- cross-site gradient synchronisation of a job split over ``R`` sites
  (class ``training-sync``): data-parallel all-reduce every step, DiLoCo every ``H`` inner steps, Streaming DiLoCo
  one fragment at a time, each optionally with compressed gradients;
* :func:`dataset_read_gbps` -- a job reading its dataset from a replica at another site (class ``dataset``);
* :func:`checkpoint_replication_gbps` -- checkpoints copied to each replica site (class ``checkpoint``);
* :func:`dataset_replication_gbps` -- a dataset's growth copied to each of its other replicas (class
  ``replication``).

Units: bytes are decimal (1 GB = 1e9 bytes, 1 PB = 1e15 bytes), rates are decimal Gbps (1e9 bit/s), times in
seconds. Every function is vectorised: scalars or NumPy arrays broadcast together.

Sources for the models (and for the figures the tests use):

* ring all-reduce moves ``2 (R-1)/R`` times the buffer per participant: Patarasuk and Yuan, "Bandwidth optimal
  all-reduce algorithms for clusters of workstations", J. Parallel Distrib. Comput. 69(2), 2009;
* DiLoCo synchronises outer gradients once every ``H`` inner steps (H = 500 in the paper): Douillard et al.,
  "DiLoCo: Distributed Low-Communication Training of Language Models", arXiv:2311.08105, 2023;
* Streaming DiLoCo synchronises ``P`` fragments of the model in turn, overlapping each exchange with ``tau``
  inner steps of compute, and quantises outer gradients to 4 bits; its peak bandwidth falls by the number of
  fragments: Douillard et al., "Streaming DiLoCo with overlapping communication", arXiv:2501.18512, 2025;
* Llama 3 405B: 405e9 parameters trained in BF16 (2 bytes per parameter): Llama Team, "The Llama 3 Herd of
  Models", arXiv:2407.21783, 2024.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["SYNC_METHODS", "SyncMethod", "checkpoint_replication_gbps", "dataset_read_gbps",
           "dataset_replication_gbps", "gradient_sync_gbps"]

SyncMethod = Literal["data-parallel", "diloco", "streaming-diloco"]
SYNC_METHODS: tuple[str, ...] = ("data-parallel", "diloco", "streaming-diloco")
"""The synchronisation methods :func:`gradient_sync_gbps` models."""

BITS_PER_BYTE = 8.0
GBPS = 1e9  # bit/s in a Gbps
SECONDS_PER_YEAR = 365.25 * 86_400.0


def gradient_sync_gbps(parameters: ArrayLike, bytes_per_parameter: ArrayLike, step_time_s: ArrayLike,
                       sites: ArrayLike, method: SyncMethod = "data-parallel", inner_steps: ArrayLike = 1,
                       fragments: ArrayLike = 1, overlap_steps: ArrayLike | None = None,
                       compression_bits: ArrayLike | None = None) -> np.ndarray:
    """Sustained Gbps each site of a training job sends over the WAN to synchronise gradients.

    A job of ``N`` parameters of ``b`` bytes (model bytes ``M = N b``) split over ``R`` sites reduces within each
    site first, then runs a ring all-reduce of the whole gradient between the sites: each site sends
    ``2 M (R - 1) / R`` bytes per synchronisation to the next site of the ring (the bandwidth-optimal all-reduce;
    Patarasuk and Yuan 2009). With ``c``-bit compressed gradients the bytes scale by ``c / (8 b)``. So, per site,
    in Gbps, with step time ``t`` seconds:

    * ``data-parallel`` (a synchronisation every step)::

          G = 2 M (1 - 1/R) (c / 8b) * 8 / t / 1e9

    * ``diloco`` (outer gradients every ``H = inner_steps`` steps)::

          G = 2 M (1 - 1/R) (c / 8b) * 8 / (H t) / 1e9

    * ``streaming-diloco`` (``P = fragments`` fragments, each synchronised every ``H`` steps, staggered; each
      fragment's exchange overlaps ``tau = overlap_steps`` inner steps of compute, default ``H / P``): a
      fragment of ``M / P`` bytes must cross within ``tau`` steps, so::

          G = 2 (M / P) (1 - 1/R) (c / 8b) * 8 / (min(tau, H / P) t) / 1e9

      which is DiLoCo's average rate when ``tau = H / P`` (fragments back to back), and a higher burst when the
      overlap window is shorter.

    A job on one site (``R = 1``) sends nothing. The rate is what the backbone must carry on each ring edge
    between the job's sites; a ring of ``R`` sites has ``R`` such edges.

    Parameters
    ----------
    parameters
        Model parameters ``N``.
    bytes_per_parameter
        Bytes per parameter of the gradient as stored ``b`` (2 for BF16, 4 for FP32).
    step_time_s
        Seconds per inner (optimiser) step ``t``.
    sites
        Sites the job spans ``R`` (>= 1).
    method
        ``data-parallel``, ``diloco`` or ``streaming-diloco``.
    inner_steps
        ``H``: inner steps between outer synchronisations (DiLoCo, Streaming DiLoCo; ignored by data-parallel).
    fragments
        ``P``: model fragments synchronised in turn (Streaming DiLoCo only).
    overlap_steps
        ``tau``: inner steps each fragment's exchange may take (Streaming DiLoCo; default ``H / P``).
    compression_bits
        Bits per gradient value on the wire (e.g. 4 for Streaming DiLoCo's quantised outer gradients); default
        uncompressed (``8 b``).

    Returns
    -------
    numpy.ndarray
        Gbps per site (0-d for scalar inputs).

    Raises
    ------
    ValueError
        An unknown method, or a non-positive size, step time, site count, inner steps, fragments or overlap.
    """
    if method not in SYNC_METHODS:
        raise ValueError(f"unknown synchronisation method {method!r}; choose one of {', '.join(SYNC_METHODS)}")
    n, b, t, r = (np.asarray(x, dtype=float) for x in (parameters, bytes_per_parameter, step_time_s, sites))
    h, p = np.asarray(inner_steps, dtype=float), np.asarray(fragments, dtype=float)
    _positive(parameters=n, bytes_per_parameter=b, step_time_s=t, inner_steps=h, fragments=p)
    if np.any(r < 1):
        raise ValueError("sites must be at least 1")
    bits = BITS_PER_BYTE * b if compression_bits is None else np.asarray(compression_bits, dtype=float)
    _positive(compression_bits=bits)
    per_sync_bytes = 2.0 * n * b * (1.0 - 1.0 / r) * bits / (BITS_PER_BYTE * b)
    if method == "data-parallel":
        window_s = t
    elif method == "diloco":
        window_s = h * t
    else:
        tau = h / p if overlap_steps is None else np.asarray(overlap_steps, dtype=float)
        _positive(overlap_steps=tau)
        per_sync_bytes = per_sync_bytes / p
        window_s = np.minimum(tau, h / p) * t
    return np.asarray(per_sync_bytes * BITS_PER_BYTE / window_s / GBPS)


def dataset_read_gbps(gpus: ArrayLike, read_gbps_per_1000_gpus: ArrayLike, local_replica: ArrayLike = False
                      ) -> np.ndarray:
    """Gbps a training job reads from a dataset replica at another site.

    ``G = g / 1000 * r`` for ``g`` GPUs reading ``r`` Gbps per 1,000 GPUs, and 0 where a replica sits at the job's
    own site (``local_replica``): the read then stays inside the campus.

    Parameters
    ----------
    gpus
        GPUs of the job (at the site in question, for a job split over several).
    read_gbps_per_1000_gpus
        The dataset's read rate per 1,000 training GPUs.
    local_replica
        Whether a replica of the dataset sits at the job's site.

    Returns
    -------
    numpy.ndarray
        Gbps from the nearest remote replica to the job's site.
    """
    g, rate = np.asarray(gpus, dtype=float), np.asarray(read_gbps_per_1000_gpus, dtype=float)
    if np.any(g < 0) or np.any(rate < 0):
        raise ValueError("GPUs and read rates must not be negative")
    return np.where(np.asarray(local_replica, dtype=bool), 0.0, g / 1000.0 * rate)


def checkpoint_replication_gbps(checkpoint_bytes: ArrayLike, interval_s: ArrayLike) -> np.ndarray:
    """Sustained Gbps to copy each checkpoint to one replica site before the next is written.

    ``G = C * 8 / T / 1e9`` for a checkpoint of ``C`` bytes written every ``T`` seconds; a policy with ``k``
    replica sites needs ``G`` towards each of them.

    Parameters
    ----------
    checkpoint_bytes
        Bytes of one checkpoint (weights and optimiser state).
    interval_s
        Seconds between checkpoints.

    Returns
    -------
    numpy.ndarray
        Gbps from the job's site to each replica site.
    """
    c, t = np.asarray(checkpoint_bytes, dtype=float), np.asarray(interval_s, dtype=float)
    if np.any(c < 0):
        raise ValueError("checkpoint bytes must not be negative")
    _positive(interval_s=t)
    return np.asarray(c * BITS_PER_BYTE / t / GBPS)


def dataset_replication_gbps(growth_pb_per_year: ArrayLike) -> np.ndarray:
    """Sustained Gbps to copy a dataset's growth to one other replica.

    ``G = g * 1e15 * 8 / (365.25 * 86,400) / 1e9`` for ``g`` PB of new data a year; each replica besides the one
    written first receives ``G``. (Seeding a new replica of ``S`` PB within ``D`` days is ``S * 1e15 * 8 /
    (D * 86,400) / 1e9`` Gbps while it lasts: :func:`checkpoint_replication_gbps` with ``C = S * 1e15`` and ``T =
    D * 86,400``.)

    Parameters
    ----------
    growth_pb_per_year
        PB added to the dataset each year.

    Returns
    -------
    numpy.ndarray
        Gbps towards each other replica.
    """
    g = np.asarray(growth_pb_per_year, dtype=float)
    if np.any(g < 0):
        raise ValueError("growth must not be negative")
    return np.asarray(g * 1e15 * BITS_PER_BYTE / SECONDS_PER_YEAR / GBPS)


def _positive(**values: np.ndarray) -> None:
    """ValueError naming the first argument with a value that is not positive and finite."""
    for name, v in values.items():
        if np.any(~np.isfinite(v)) or np.any(v <= 0):
            raise ValueError(f"{name} must be positive and finite")
