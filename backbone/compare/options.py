"""Options of ``backbone diff`` and ``backbone deck`` (one pydantic model each; the CLI's flags are generated
from them). No pandas or solver import here, so ``backbone --help`` stays fast."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DeckOptions", "DiffOptions"]


class DiffOptions(BaseModel):
    """How ``backbone diff`` reports."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    fail_on_change: bool = Field(False, description="Exit 1 when anything changed (for CI checks of a scenario "
                                                    "repository); exit 0 when the two are the same.")
    rows: int = Field(20, ge=1, le=100_000, description="Rows shown per table in the terminal (largest change first; "
                                                        "--json and the CSV files keep every row).")


class DeckOptions(BaseModel):
    """What ``backbone deck`` puts in the deck."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    map: bool = Field(True, description="Include the map after the plan (a picture: the static slide map).")
    worst_failures: int = Field(12, ge=1, le=60, description="Failures shown in the worst-failures chart.")
    buy_rows: int = Field(10, ge=1, le=60, description="Rows per 'what to buy' slide (more rows continue on the "
                                                       "next slide).")
