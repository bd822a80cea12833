"""Options of a failure sweep (the ``failures`` task's options; CLI flags and API body use the same names)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from backbone.solver.backends import BackendName

FailureKind = Literal["link", "srlg", "site", "srlg-pairs", "list"]

DEFAULT_MAX_SCENARIOS = 5000
"""Bound on the number of scenarios (``srlg-pairs`` grows quadratically)."""


class FailureOptions(BaseModel):
    """Options of the ``failures`` task (CLI flags and API body use the same names)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    kind: FailureKind = Field("srlg", description="Failure set: link, srlg, site, srlg-pairs or list.")
    derate: float | None = Field(None, gt=0, lt=1, description="Derate to this fraction instead of failing.")
    scenarios: list[dict[str, Any]] | None = Field(None, description="For kind=list: scenario records.")
    k_paths: int = Field(4, ge=1, le=32, validation_alias=AliasChoices("k_paths", "paths"),
                         description="Candidate paths per demand; also accepted as 'paths'.")
    backend: BackendName = Field("highs", description="Solver backend.")
    time_limit_s: float = Field(60.0, gt=0, le=86_400, validation_alias=AliasChoices("time_limit_s", "time_limit"),
                                description="Time limit per scenario solve, seconds.")
    engine: Literal["local", "dask", "serial"] = Field("local", description="Where scenarios run.")
    workers: int | None = Field(None, ge=1, le=256, description="Worker processes (default: CPU count; the API server caps it).")
    scheduler: str | None = Field(None, description="Dask scheduler address (engine=dask).")
    batch_size: int | None = Field(None, ge=1, description="Scenarios per task (default: balanced).")
    max_scenarios: int = Field(DEFAULT_MAX_SCENARIOS, ge=1, description="Refuse larger sweeps.")
    reuse: bool = Field(True, description="Reuse the intact network's candidate paths across scenarios.")
    verify: bool = Field(False, description="Run the independent TE checker on every scenario's result.")
    shortfall: bool = Field(True, description="Measure the shortfall of overloaded states per class (max-throughput "
                                              "at 100 %); false only flags them (unmet null, not survived).")
