"""The roadmap's slides: quarter-by-quarter capex and served share (native charts), and the builds with their
commit and online periods (a native table), from ``roadmap.json``."""

from __future__ import annotations

import logging
import math
from typing import Any

import pandas as pd

from backbone.review.data import DeckData
from backbone.review.layout import (
    add_bar_chart,
    add_bullets,
    add_line_chart,
    add_table,
    content_box,
    new_slide,
)
from backbone.review.slides import money_m
from backbone.serialize import count_text

__all__ = ["builds_table", "period_table", "timeline_slides"]

logger = logging.getLogger(__name__)


def period_table(doc: dict[str, Any]) -> pd.DataFrame:
    """Per period (``roadmap.json`` ``periods``): ``period, capex_usd, served_share, mlu, survived, states``."""
    rows = doc.get("periods") or []
    frame = pd.DataFrame(rows, columns=["period", "capex_usd", "served_share", "mlu", "survivability"])
    sv = frame["survivability"].map(lambda s: s if isinstance(s, dict) else {})
    return pd.DataFrame({"period": frame["period"].astype(str),
                         "capex_usd": pd.to_numeric(frame["capex_usd"], errors="coerce").fillna(0.0),
                         "served_share": pd.to_numeric(frame["served_share"], errors="coerce"),
                         "mlu": pd.to_numeric(frame["mlu"], errors="coerce"),
                         "survived": sv.map(lambda s: s.get("survived")), "states": sv.map(lambda s: s.get("states"))})


def builds_table(doc: dict[str, Any]) -> pd.DataFrame:
    """The builds (``roadmap.json`` ``builds``) in commit order: ``id, action, modules, gpus, cost_usd,
    committed, online``."""
    frame = pd.DataFrame(doc.get("builds") or [], columns=["id", "action", "modules", "gpus", "cost_usd", "committed",
                                                           "online", "committed_index", "online_index"])
    return frame.sort_values(["committed_index", "online_index", "cost_usd"], ascending=[True, True, False],
                             kind="stable").reset_index(drop=True)


def timeline_slides(prs: Any, data: DeckData, rows: int) -> list[Any]:
    """The timeline: capex per period (columns) and served share per period (line), then the builds with their
    commit and online periods."""
    doc = data.side.document("roadmap")
    periods = period_table(doc)
    slide = new_slide(prs, f"Timeline: {money_m(periods['capex_usd'].sum())} M USD committed over "
                           f"{len(periods)} periods")
    left, top, width, height = content_box(prs)
    half = width // 2
    add_bar_chart(slide, list(periods["period"]), {"capex committed (M USD)": periods["capex_usd"] / 1e6},
                  (left, top, half - width // 40, height), value_title="M USD", number_format="#,##0.0")
    add_line_chart(slide, list(periods["period"]), {"inference demand served": periods["served_share"].fillna(0.0)},
                   (left + half, top, half, height), value_title="share of inference demand served")
    slides = [slide]
    builds = builds_table(doc)
    if not len(builds):
        slide = new_slide(prs, "Builds: commit and online")
        add_bullets(slide, ["Nothing is built in this roadmap."] + [str(n) for n in doc.get("notes") or []],
                    content_box(prs), 16)
        return [*slides, slide]
    shown = pd.DataFrame({"build": builds["id"], "action": builds["action"],
                          "modules / GPUs": [str(int(g)) + " GPUs" if a == "gpus" and pd.notna(g) else
                                             ("" if pd.isna(m) or a == "replica" else count_text(int(m), "module"))
                                             for a, m, g in zip(builds["action"], builds["modules"], builds["gpus"],
                                                                strict=True)],
                          "cost (M USD)": builds["cost_usd"].map(money_m), "commit": builds["committed"],
                          "online": builds["online"]})
    pages = max(1, math.ceil(len(shown) / rows))
    for page in range(pages):
        part = f" ({page + 1}/{pages})" if pages > 1 else ""
        slide = new_slide(prs, f"Builds: commit and online{part}")
        add_table(slide, shown.iloc[page * rows:(page + 1) * rows], content_box(prs), 10)
        slides.append(slide)
    return slides
