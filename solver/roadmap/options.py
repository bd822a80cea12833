"""Options of the roadmap (``backbone roadmap``, API kind ``roadmap``): periods, growth, lead times, budgets.

One pydantic model, :class:`RoadmapOptions`, holds every input of a multi-period build plan; a roadmap
file (YAML, ``--plan FILE``) holds the same keys. The shipped defaults come from public figures (see
``data/README.md``, section "Roadmap defaults"):

- demand growth per region per year: TeleGeography's used international bandwidth growth 2019-2023
  (about 30 % a year in the U.S. and Canada, 35-40 % in most regions, close to 50 % in Africa; A. Mauldin,
  "Used International Bandwidth Reaches New Heights", TeleGeography blog, 2024-05-15), rounded down to
  planning figures; per traffic class the region's rate is multiplied by ``class_growth_factor`` (1 by
  default: no public split by class);
- an upgrade of a lit link (more waves on an existing line system) online one quarter after its order;
- GPU blocks online two quarters after their order (reported accelerator lead times fell from 8-11 months
  in 2023 to 3-4 months in early 2024; two quarters covers delivery plus installation);
- candidate routes: their own ``lead_time_quarters`` and ``available_from`` (ready-for-service quarter of
  an announced cable system) from the candidates table.

Periods are calendar quarters (``2027Q1``) or years (``2027``). A build that is online in period ``t``
was committed (ordered and paid: its capex falls in that period's budget) ``ceil(lead / quarters per
period)`` periods earlier; a commitment before the first period is not allowed.

The options sit beside the algorithm that reads them (:mod:`backbone.solver.roadmap.rolling`, its bound and its checker);
the task (:mod:`backbone.solver.tasks.roadmap`) re-exports them with ``run_roadmap_task`` and the roadmap-file
loader ``load_roadmap_file``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from backbone.quarters import quarter_label, quarter_number
from backbone.schema import REGIONS, TRAFFIC_CLASSES
from backbone.solver.core.options import BoundTimeLimitS
from backbone.solver.failures.options import FailureOptions
from backbone.solver.placement.options import PlaceOptions
from backbone.solver.plan.stage_options import (
    STAGE_MODELS,
    PlanUpgradeOptions,
    plan_stage_defaults,
    with_stage_defaults,
)
from backbone.solver.te.options import TEOptions

YEAR_RE = re.compile(r"^(\d{4})$")

DEFAULT_GROWTH_PER_YEAR: dict[str, float] = {"NA": 0.30, "LATAM": 0.35, "EMEA": 0.35, "APAC": 0.35, "AFRICA": 0.45}
"""Annual demand growth per region (traffic and inference GPUs); see the module doc for the source."""

UPGRADE_LEAD_QUARTERS = 1
"""Quarters from ordering more waves on a lit link to service."""

GPU_LEAD_QUARTERS = 2
"""Quarters from ordering a GPU block to service."""

DESIGN_TIME_LIMIT_S = 15.0
"""Default seconds per design MIP solve in each period (the period's design stops after 4 x that)."""

PLACE_TIME_LIMIT_S = 30.0
"""Default seconds per placement solve in each period."""

PLACE_MIP_GAP = 5e-3
"""Default relative MIP gap of each period's placement (0.5 %). With the GPUs of earlier periods installed the
placement finds its solution in seconds but takes its whole time limit to prove 0.01 %; each period's
``placement_gap`` says what was proven."""

BOUND_TIME_LIMIT_S = 180.0
"""Default seconds for the roadmap's global lower bound (paths, the LPs over every period and the period MIPs with
the states they add: docs/benchmarks/roadmap.md)."""


ROADMAP_TIME_LIMIT_S = 540.0
"""Default wall-clock seconds of the whole roadmap, its periods and its global bound (outputs apart): each period
gets a share, the bound what they leave (:mod:`backbone.solver.roadmap.clock`)."""


class PowerStep(BaseModel):
    """Power that arrives in steps: from period ``from_period`` on, site ``site`` may draw up to
    ``power_max_mw`` (its ``power_max_mw`` before that period stays the scenario's)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    site: str = Field(min_length=1, max_length=200, description="Site id.")
    from_period: str = Field(description="First period (``2027Q3`` or ``2028``) with the new power.")
    power_max_mw: float = Field(ge=0, description="Maximum power of the site from that period on (MW).")


class RoadmapOptions(BaseModel):
    """Options of the ``roadmap`` task; a roadmap file (YAML) holds the same keys.

    ``place``, ``te``, ``failures`` and ``design`` are the plan's typed stage options (see ``backbone plan``)
    with the plan's stage defaults; per period, ``design.time_limit_s`` defaults to 15 s (the design of a
    period stops after 4 x that) and ``place`` to ``time_limit_s`` 30 s and ``mip_gap`` 0.5 % without the
    LP-relaxation bound. A bad stage option is refused under its dotted name (``design.time_limit_s``).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    periods: int = Field(8, ge=1, le=40, description="Number of periods.")
    period: Literal["quarter", "year"] = Field("quarter", description="Length of a period.")
    start: str = Field("2027Q1", description="First period: a quarter like 2027Q1 (or a year like 2027 with "
                                             "period year).")
    growth_per_year: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_GROWTH_PER_YEAR),
                                              description="Annual demand growth per region (0.3 = 30 %/year); "
                                                          "regions left out do not grow.")
    class_growth_factor: dict[str, float] = Field(default_factory=dict,
                                                  description="Per traffic class: multiplier on the region's "
                                                              "growth rate (default 1).")
    metro_growth_per_year: dict[str, float] = Field(default_factory=dict,
                                                    description="Per metro id: annual growth of its inference "
                                                                "GPUs (overrides the region's rate).")
    upgrade_lead_quarters: int = Field(UPGRADE_LEAD_QUARTERS, ge=0, le=40,
                                       description="Quarters from ordering an upgrade of a lit link to service "
                                                   "(default: the scenario's upgrade_lead_quarters parameter, as the "
                                                   "plan's changeover list uses).")
    gpu_lead_quarters: int = Field(GPU_LEAD_QUARTERS, ge=0, le=40,
                                   description="Quarters from ordering GPU blocks to service.")
    budget_usd_per_period: float | list[float] | None = Field(
        None, description="Capex budget per period (one number for every period, or one per period; "
                          "none: no budget). Capex is charged in the period a build is committed.")
    carry_over: float = Field(1.0, ge=0, le=1, description="Share of a period's unspent budget carried into "
                                                           "the next period (0: none, 1: all).")
    discount_rate_per_year: float = Field(0.08, ge=0, le=1, description="Discount rate of the objective.")
    unserved_penalty_usd_per_gbps: float = Field(1e5, ge=0, description="Objective penalty per Gbps of traffic "
                                                                         "unmet (intact state) per period.")
    unserved_penalty_usd_per_gpu: float = Field(1e4, ge=0, description="Objective penalty per inference GPU of "
                                                                       "demand left unserved per period.")
    power_steps: list[PowerStep] = Field(default_factory=list, description="Power that arrives in steps per site.")
    place: PlaceOptions = Field(default_factory=lambda: _stage_default("place"),
                                description="Placement options (as in the plan; per period time_limit_s defaults "
                                            "to 30, mip_gap to 0.005, lp_bound to false).")
    te: TEOptions = Field(default_factory=lambda: _stage_default("te"), description="Routing options (as in the plan).")
    failures: FailureOptions = Field(default_factory=lambda: _stage_default("failures"),
                                     description="Failure sweep options (as in the plan).")
    design: PlanUpgradeOptions = Field(default_factory=lambda: _stage_default("design"),
                                       description="Survivable design options per period (as in the plan; "
                                                   "time_limit_s defaults to 15).")
    bound_time_limit_s: BoundTimeLimitS = Field(BOUND_TIME_LIMIT_S,
                                      description="Seconds for the global lower bound (one LP over every period; "
                                                  "0: not computed).")
    time_limit_s: float = Field(ROADMAP_TIME_LIMIT_S, ge=0, le=86400,
                                description="Wall-clock seconds of the whole roadmap (every period and the global "
                                            "bound; 0: none, each stage keeps its own limits only). Each period gets "
                                            "a share of what is left once bound_time_limit_s is kept back; the "
                                            "bound gets what the periods leave.")
    maps: bool = Field(True, description="Draw the timeline, the maps per year and the report's charts.")
    verify: bool = Field(False, description="Run the independent roadmap checker (re-sweeps every period).")
    plan_file: str | None = Field(None, max_length=4096, description="Path of the roadmap file (CLI only).")
    plan_text: str | None = Field(None, max_length=1_000_000, description="Text of the roadmap file.")

    @field_validator("growth_per_year")
    @classmethod
    def _regions(cls, v: dict[str, float]) -> dict[str, float]:
        bad = sorted(set(v) - set(REGIONS))
        if bad:
            raise ValueError(f"unknown region(s) {', '.join(bad)}; regions are {', '.join(REGIONS)}")
        _rates(v)
        return v

    @field_validator("class_growth_factor")
    @classmethod
    def _classes(cls, v: dict[str, float]) -> dict[str, float]:
        bad = sorted(set(v) - set(TRAFFIC_CLASSES))
        if bad:
            raise ValueError(f"unknown traffic class(es) {', '.join(bad)}; classes are {', '.join(TRAFFIC_CLASSES)}")
        if any(not math.isfinite(x) or x < 0 for x in v.values()):
            raise ValueError("class growth factors must be finite and >= 0")
        return v

    @field_validator("metro_growth_per_year")
    @classmethod
    def _metro_rates(cls, v: dict[str, float]) -> dict[str, float]:
        _rates(v)
        return v

    @field_validator("start")
    @classmethod
    def _start(cls, v: str, info: ValidationInfo) -> str:
        parse_start(v, info.data.get("period", "quarter"))
        return v

    @field_validator("budget_usd_per_period")
    @classmethod
    def _budget(cls, v: float | list[float] | None, info: ValidationInfo) -> float | list[float] | None:
        n = info.data.get("periods")
        if isinstance(v, list):
            if n is not None and len(v) != n:
                raise ValueError(f"lists {len(v)} budgets for {n} periods")
            if any(x < 0 for x in v):
                raise ValueError("budgets must be >= 0")
        elif v is not None and v < 0:
            raise ValueError("must be >= 0")
        return v

    @field_validator("power_steps")
    @classmethod
    def _steps(cls, v: list[PowerStep], info: ValidationInfo) -> list[PowerStep]:
        for i, step in enumerate(v):
            try:
                parse_start(step.from_period, info.data.get("period", "quarter"))
            except ValueError as exc:
                raise ValueError(f"[{i}].from_period: {exc}") from None
        return v

    @model_validator(mode="before")
    @classmethod
    def _stage_defaults(cls, data: Any) -> Any:
        """Each stage's options: the roadmap's defaults (:func:`roadmap_stage_defaults`) with what is given over
        them, option by option (an older spelling, ``design.time_limit``, replaces its option's default too)."""
        return with_stage_defaults(data, roadmap_stage_defaults(data)) if isinstance(data, Mapping) else data

    # ---------------------------------------------------------------- periods
    @property
    def quarters_per_period(self) -> int:
        """3-month quarters in one period (1 or 4)."""
        return 1 if self.period == "quarter" else 4

    @property
    def years_per_period(self) -> float:
        """Years in one period (0.25 or 1)."""
        return self.quarters_per_period / 4.0

    def labels(self) -> list[str]:
        """The periods' labels (``2027Q1`` ... or ``2027`` ...)."""
        q0 = parse_start(self.start, self.period)
        return [period_label(q0 + t * self.quarters_per_period, self.period) for t in range(self.periods)]

    def first_quarter(self, t: int) -> int:
        """Absolute quarter number (year * 4 + quarter - 1) of period ``t``'s first quarter."""
        return parse_start(self.start, self.period) + t * self.quarters_per_period

    def lead_periods(self, lead_quarters: int) -> int:
        """Whole periods between commitment and service for a lead time in quarters."""
        return math.ceil(int(lead_quarters) / self.quarters_per_period)

    def budgets(self) -> list[float]:
        """Capex budget of each period (inf when there is none)."""
        b = self.budget_usd_per_period
        if b is None:
            return [math.inf] * self.periods
        if isinstance(b, list):
            return [float(x) for x in b]
        return [float(b)] * self.periods


def _rates(v: dict[str, float]) -> None:
    if any(not math.isfinite(x) or x <= -1 for x in v.values()):
        raise ValueError("annual growth rates must be finite and > -1 (0.3 = 30 %/year)")


def parse_start(text: str, period: str) -> int:
    """Absolute quarter number of a period label (``2027Q3`` -> 2027*4+2; ``2027`` -> 2027*4).

    Raises
    ------
    ValueError
        For a label that is not a quarter (or a year, with ``period='year'``).
    """
    s = str(text).strip()
    m = YEAR_RE.match(s)
    if m and period == "year":
        return int(m.group(1)) * 4
    try:
        quarter = quarter_number(s)  # the model's one reading of a quarter
    except ValueError:
        raise ValueError(f"expected a quarter like '2027Q1'{' or a year like 2027' if period == 'year' else ''}, "
                         f"got {text!r}") from None
    if period == "year" and quarter % 4 != 0:
        raise ValueError(f"a yearly roadmap starts in a first quarter or a year, got {text!r}")
    return quarter


def period_label(quarter: int, period: str) -> str:
    """The label of the period starting at absolute quarter ``quarter``."""
    return quarter_label(quarter) if period == "quarter" else f"{int(quarter) // 4}"


def roadmap_stage_defaults(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The stage defaults of a roadmap's periods from its raw options ``data``: the plan's
    (:func:`~backbone.solver.plan.stage_options.plan_stage_defaults`; the roadmap's ``verify`` runs its own checker,
    not the stages'), with design ``time_limit_s`` 15 s and placement ``time_limit_s`` 30 s and ``mip_gap`` 0.5 % per
    period, no LP bound."""
    defaults = plan_stage_defaults({stage: data.get(stage) for stage in STAGE_MODELS if stage in data})
    defaults["design"] = {**defaults["design"], "time_limit_s": DESIGN_TIME_LIMIT_S}
    defaults["place"] = {**defaults["place"], "time_limit_s": PLACE_TIME_LIMIT_S, "mip_gap": PLACE_MIP_GAP,
                         "lp_bound": False}
    return defaults


def _stage_default(stage: str) -> Any:
    """A stage's options with the roadmap's defaults alone (a ``RoadmapOptions()`` built without the validator)."""
    return STAGE_MODELS[stage].model_validate(roadmap_stage_defaults({})[stage])


def stage_options(opts: RoadmapOptions) -> tuple[PlaceOptions, TEOptions, FailureOptions, PlanUpgradeOptions]:
    """The place, te, failures and design options of every period (``opts.place`` / ``te`` / ``failures`` /
    ``design``, the roadmap's defaults, :func:`roadmap_stage_defaults`, applied when ``opts`` was validated)."""
    return opts.place, opts.te, opts.failures, opts.design
