"""Options of the placement task (pydantic, ``extra="forbid"``) and their documented defaults.

Defaults worth knowing:

* Demand classes: ``interactive`` (share ``metros.interactive_share``, RTT SLO 50 ms) and ``batch``
  (agentic/batch, the rest, 150 ms).
* ``kw_per_gpu = 1.4`` kW all-in (accelerator + host + PUE) -> ~714 GPUs per MW.
* GPUs are built in blocks of ``block_gpus = 1024`` (0 or 1: GPU by GPU), at least ``min_build_gpus``
  when a site is built at all.
* Opex over ``horizon_years = 5`` at each site's power price, plus carbon at ``carbon_price_usd_per_t``.
* Residency (:data:`DEFAULT_RESIDENCY`): demand from EU/EEA countries is served in EU/EEA sites only.
  UK and Swiss demand are not restricted by default (adequacy decisions); add a rule to restrict them.
* Follow-the-sun profile (:data:`DIURNAL_PROFILE`, :data:`REGION_UTC_OFFSET_H`): a metro's demand in UTC
  hour ``t`` is its peak demand x ``DIURNAL_PROFILE[(t + offset) % 24]``; the profile peaks at 1.0
  (20:00-21:00 local), so ``periods=1`` is the peak hour of every metro at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backbone.solver.backends import BackendName
from backbone.solver.core.options import KPaths, MipGap, TimeLimitS

if TYPE_CHECKING:
    import numpy as np

EU_EEA_COUNTRIES: tuple[str, ...] = (
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT",
    "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",  # EU-27
    "IS", "LI", "NO",  # EEA
)
"""ISO 3166-1 alpha-2 codes of the EU-27 and the EEA (GDPR applies)."""

REGION_UTC_OFFSET_H: dict[str, int] = {"NA": -6, "LATAM": -4, "EMEA": 1, "AFRICA": 2, "APAC": 8}
"""Representative UTC offset per planning region (hours) for the follow-the-sun profile."""

DIURNAL_PROFILE: tuple[float, ...] = (
    0.55, 0.45, 0.38, 0.35, 0.35, 0.38, 0.45, 0.55, 0.66, 0.75, 0.80, 0.84,
    0.86, 0.86, 0.85, 0.85, 0.87, 0.90, 0.94, 0.98, 1.00, 1.00, 0.90, 0.72,
)
"""Inference demand by local hour 0..23 as a fraction of the daily peak (consumer + business mix:
trough 35 % at 03:00-05:00, business plateau ~85 %, evening peak 100 % at 20:00-22:00)."""


class ResidencyRule(BaseModel):
    """Demand from the ``from_*`` countries/regions may only be served by the allowed sites.

    A site is allowed when it is listed in ``allowed_sites``, or its country is in
    ``allowed_countries``, or its region is in ``allowed_regions``.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = "rule"
    from_countries: list[str] = Field(default_factory=list)
    from_regions: list[str] = Field(default_factory=list)
    from_metros: list[str] = Field(default_factory=list)
    allowed_sites: list[str] = Field(default_factory=list)
    allowed_countries: list[str] = Field(default_factory=list)
    allowed_regions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> ResidencyRule:
        if not (self.from_countries or self.from_regions or self.from_metros):
            raise ValueError("a residency rule needs from_countries, from_regions or from_metros")
        if not (self.allowed_sites or self.allowed_countries or self.allowed_regions):
            raise ValueError("a residency rule needs allowed_sites, allowed_countries or allowed_regions")
        return self


DEFAULT_RESIDENCY: tuple[ResidencyRule, ...] = (
    ResidencyRule(name="eu-gdpr", from_countries=list(EU_EEA_COUNTRIES), allowed_countries=list(EU_EEA_COUNTRIES)),
)
"""Shipped residency rules: EU/EEA demand stays in EU/EEA sites."""


class DemandClass(BaseModel):
    """An inference demand class with its round-trip SLO.

    ``share`` None means: ``metros.interactive_share`` for the first class, the remainder for the
    second (the default two classes).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str
    slo_rtt_ms: float = Field(gt=0)
    share: float | None = Field(default=None, ge=0, le=1)


MAX_SPLIT_SITES = 4
"""The most sites the placement MIP splits one training job over (evenly, synchronising over a ring)."""

SPLIT_SETS_PER_JOB = 8
"""Default ``split_sets_per_job``: the 3- and 4-site sets the placement keeps per job and set size."""


class TrainingJob(BaseModel):
    """A training job given with the options (the scenario's ``training_jobs`` table holds the same fields):
    ``gpus`` GPUs at one site, or split evenly over up to ``max_sites`` sites (at most :data:`MAX_SPLIT_SITES`),
    optionally restricted to regions or sites, reading ``datasets`` (ids of the scenario's ``datasets`` table).

    Without ``parameters`` the job makes no synchronisation or checkpoint traffic (GPUs only)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str
    gpus: int = Field(gt=0)
    regions: list[str] = Field(default_factory=list)
    sites: list[str] = Field(default_factory=list, max_length=MAX_SPLIT_SITES,
                             description="Pinned sites (one, or up to four for a split job, which then spans "
                                         "exactly these); empty: placement decides")
    max_sites: int = Field(default=1, ge=1, description="Most sites the job may span (the MIP splits over at "
                                                        "most four)")
    parameters: float = Field(default=0.0, ge=0, description="Model parameters (count)")
    bytes_per_parameter: float = Field(default=2.0, gt=0, description="Bytes per parameter of the gradients")
    step_time_s: float = Field(default=1.0, gt=0, description="Seconds per training step")
    sync_method: Literal["data-parallel", "diloco", "streaming-diloco"] = "data-parallel"
    inner_steps: int = Field(default=1, ge=1, description="DiLoCo inner steps H between synchronisations")
    fragments: int = Field(default=1, ge=1, description="Streaming DiLoCo fragments")
    compression_bits: float | None = Field(default=None, gt=0, le=32,
                                           description="Bits per gradient value on the wire (None: uncompressed)")
    datasets: list[str] = Field(default_factory=list, description="Ids of the datasets the job reads")
    checkpoint_size_tb: float | None = Field(default=None, gt=0, description="TB per checkpoint (None: 14 bytes "
                                                                             "per parameter)")
    checkpoint_interval_s: float = Field(default=3600.0, gt=0, description="Seconds between checkpoints")
    checkpoint_replicas: Literal["none", "same-region", "other-region"] = "other-region"

    @model_validator(mode="after")
    def _check_sites(self) -> TrainingJob:
        if len(self.sites) > self.max_sites:
            raise ValueError(f"{len(self.sites)} pinned sites but max_sites is {self.max_sites}")
        return self


TOKENS_PER_S_PER_GPU = 2500.0
"""Output tokens per second one inference GPU serves at peak (an **estimate** for a 70B-class model with batching:
above a single stream, ~100 tokens/s per H100 at batch 1, and well below the benchmark maxima, 865,000 tokens/s on
one 72-GPU GB200 NVL72, ~12,000 per GPU, Llama 2 70B, Azure's unverified MLPerf Inference v4.1 run)."""
STREAM_BYTES_PER_TOKEN = 250.0
"""Bytes on the wire per streamed output token: one server-sent event ``data: {"id":..., "object":
"chat.completion.chunk", "created":..., "model":..., "choices":[{"index":0, "delta":{"content":"..."}, ...}]}``
(~180-200 bytes in the OpenAI-compatible format) plus HTTP/2 and TLS framing. At ~50 tokens/s a user's stream is
then 100 kbps."""
PROMPT_BYTES_PER_OUTPUT_TOKEN = 80.0
"""Request bytes per output token: ~20 input tokens per output token (chat history, retrieved context and agent
tool output resent with every turn) at ~4 bytes of UTF-8 text per token (an **estimate**; images or audio in the
prompt would add more)."""
BITS_PER_TOKEN = 8.0 * (STREAM_BYTES_PER_TOKEN + PROMPT_BYTES_PER_OUTPUT_TOKEN)
"""Backbone bits per output token served remotely: the response stream and its share of the request."""
GBPS_PER_GPU = TOKENS_PER_S_PER_GPU * BITS_PER_TOKEN / 1e9
"""Backbone traffic of one inference GPU served remotely: 2,500 tokens/s x 2,640 bits = 6.6 Mbps (0.0066 Gbps),
the default ``gbps_per_gpu`` (derived here, so it cannot drift from ``tokens_per_s_per_gpu``'s default)."""


class PlaceOptions(BaseModel):
    """Options of ``backbone place`` / the ``place`` planning task."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    objective: Literal["min-cost", "max-served"] = Field(
        default="min-cost", description="min-cost: serve all demand at least cost; max-served: serve the most "
                                        "demand within budget_usd")
    budget_usd: float | None = Field(default=None, ge=0, description="Budget (capex + opex) for max-served")
    n_plus_one: bool = Field(default=False, description="Serve all inference within SLO after losing any one site")
    slo_failures: Literal["none", "link", "srlg", "srlg,link"] = Field(
        default="none", description="Prefer sites whose RTT to the metro stays within the SLO after any single "
                                    "failure of this kind (with every candidate route built; failures that cut the "
                                    "metro's own access site off are not counted): others serve only what robust "
                                    "sites cannot, at slo_failures_penalty_usd_per_gpu")
    slo_failures_penalty_usd_per_gpu: float = Field(
        default=1e6, ge=0, description="Objective weight of a GPU serving a metro from a site whose SLO a single "
                                       "failure breaks (below the unserved penalty, far above any site's cost)")
    periods: Literal[1, 24] = Field(default=1, description="1 = peak hour; 24 = follow-the-sun hourly profile")
    backend: BackendName = Field(default="highs", description="MIP backend (highs, ortools-scip, pulp-cbc, ...)")
    time_limit_s: TimeLimitS = Field(default=60.0,
                                description="Time limit per solve (LP relaxation, MIP, diagnosis), seconds")
    mip_gap: MipGap = Field(default=1e-4, description="Relative MIP gap (1e-4 = 0.01 %)")
    lp_bound: bool = Field(default=True, description="Also solve the LP relaxation and report it as a bound")
    verify: bool = Field(default=False, description="Run the independent checker on the result tables")
    allow_partial: bool = Field(default=True,
                                description="min-cost: when demand cannot be served, return the best-effort plan "
                                            "with status 'partial' (true) or fail as infeasible (false)")

    classes: list[DemandClass] = Field(default_factory=lambda: [DemandClass(name="interactive", slo_rtt_ms=50.0),
                                                                DemandClass(name="batch", slo_rtt_ms=150.0)])
    demand_growth: float = Field(default=1.0, ge=0, description="Multiply inference demand by this factor")
    tokens_per_s: dict[str, float] | None = Field(default=None,
                                                  description="Demand per metro in tokens/s (overrides inference_gpus)")
    tokens_per_s_per_gpu: float = Field(default=TOKENS_PER_S_PER_GPU, gt=0,
                                        description="Tokens/s one GPU serves (with tokens_per_s)")
    training: list[TrainingJob] = Field(default_factory=list, description="Training jobs to place besides the "
                                                                          "scenario's")
    split_sets_per_job: int = Field(
        default=SPLIT_SETS_PER_JOB, ge=1,
        description="3- and 4-site splits: keep this many site sets per job and set size, those whose sync ring "
                    "fits the links and whose sites' power has room first, half of least estimated GPU cost and "
                    "half with the shortest least-latency ring (the result notes when sets were left out: its "
                    "optimum is then over the sets kept)")
    scenario_jobs: bool = Field(default=True, description="Place the scenario's training_jobs with inference (pinned "
                                                          "ones at their sites), with their datasets' data gravity "
                                                          "(off: inference only)")

    kw_per_gpu: float = Field(default=1.4, gt=0, description="All-in kW per GPU (incl. host and PUE)")
    block_gpus: int = Field(default=1024, ge=0, description="GPUs are built in blocks of this many (0 or 1: GPU by GPU)")
    min_build_gpus: int = Field(default=0, ge=0, description="Fewest GPUs built at a site that is built at all")
    site_fixed_cost_usd: float = Field(default=0.0, ge=0, description="Fixed cost of building at a new site")
    horizon_years: float = Field(default=5.0, ge=0, description="Years of opex counted in the cost")
    carbon_price_usd_per_t: float = Field(default=0.0, ge=0, description="Carbon price per tonne CO2 in the opex")
    unserved_penalty_usd_per_gpu: float = Field(default=1e7, gt=0, description="Objective penalty per GPU of demand "
                                                                               "left unserved")
    latency_weight_usd_per_gpu_ms: float = Field(default=0.01, ge=0,
                                                 description="Tie-break: prefer low RTT (tiny next to capex)")

    gbps_per_gpu: float = Field(default=GBPS_PER_GPU, ge=0,
                                description="Backbone traffic per inference GPU served remotely (default: "
                                            "tokens_per_s_per_gpu x BITS_PER_TOKEN, 0.0066 Gbps)")
    k_paths: KPaths = Field(default=3,
                         description="Candidate backbone paths per metro-site pair")
    baseline: Literal["joint", "none"] = Field(
        default="joint", description="joint: route the scenario's demands with the placement traffic; none: ignore them")

    residency: list[ResidencyRule] | None = Field(default=None, description="None = DEFAULT_RESIDENCY; [] = no rules")
    allow_sites: list[str] = Field(default_factory=list)
    deny_sites: list[str] = Field(default_factory=list)
    allow_regions: list[str] = Field(default_factory=list)
    deny_regions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> PlaceOptions:
        if self.objective == "max-served" and self.budget_usd is None:
            raise ValueError("objective max-served needs budget_usd")
        if self.min_build_gpus and self.block_gpus > 1 and self.min_build_gpus % self.block_gpus:
            raise ValueError("min_build_gpus must be a multiple of block_gpus")
        if not self.classes:
            raise ValueError("at least one demand class is needed")
        names = [c.name for c in self.classes]
        if len(set(names)) != len(names):
            raise ValueError("demand class names must be unique")
        return self

    @property
    def residency_rules(self) -> list[ResidencyRule]:
        """The rules in force (the shipped defaults when ``residency`` is None)."""
        return list(DEFAULT_RESIDENCY) if self.residency is None else list(self.residency)

    @property
    def block(self) -> int:
        """GPUs per build block (1 when building GPU by GPU)."""
        return max(1, self.block_gpus)


def period_factors(regions: np.ndarray, periods: int) -> np.ndarray:
    """Demand factor per (metro, period): 1.0 for ``periods=1``; the diurnal profile otherwise.

    Parameters
    ----------
    regions
        Region of each metro.
    periods
        1 or 24 (UTC hours).

    Returns
    -------
    numpy.ndarray
        Shape (len(regions), periods).
    """
    import numpy as np

    if periods == 1:
        return np.ones((len(regions), 1))
    offsets = np.array([REGION_UTC_OFFSET_H.get(str(r), 0) for r in regions], dtype=int)
    profile = np.asarray(DIURNAL_PROFILE)
    hours = (np.arange(periods)[None, :] + offsets[:, None]) % 24
    return profile[hours]
