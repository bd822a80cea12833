"""``backbone deck``: the editable review deck of a plan or roadmap output folder (python-pptx)."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

from pptx import Presentation
from pptx.util import Inches

from backbone.artifacts import write_bytes_atomic
from backbone.compare.options import DeckOptions
from backbone.errors import Problem, ValidationError
from backbone.review.data import DeckData, deck_data
from backbone.review.layout import title_slide
from backbone.review.roadmap_slides import timeline_slides
from backbone.review.slides import (
    buy_slides,
    caveat_slides,
    comparison_slides,
    failures_slide,
    gpu_region_slide,
    map_inches,
    map_slide,
    utilisation_slide,
)

__all__ = ["build_deck", "deck_bytes", "open_template"]

logger = logging.getLogger(__name__)


def open_template(template: str | Path | None) -> Any:
    """A presentation to add slides to: the template's masters and layouts with its own slides removed, or a
    blank 16:9 deck.

    Raises
    ------
    ValidationError
        When the template is missing or not a PowerPoint file.
    """
    if template is None:
        prs = Presentation()
        prs.slide_width, prs.slide_height = Inches(13.333), Inches(7.5)
        return prs
    path = Path(template)
    if not path.is_file():
        raise ValidationError(Problem("template not found", file=str(path), field="template"))
    try:
        prs = Presentation(str(path))
    except Exception as exc:  # python-pptx raises several kinds for a file that is not a deck
        raise ValidationError(Problem(f"not a PowerPoint template ({type(exc).__name__}: {exc})", file=str(path),
                                      field="template")) from None
    slides = prs.slides._sldIdLst
    for sld_id in list(slides):  # the template's example slides go; its masters and layouts stay
        prs.part.drop_rel(sld_id.rId)
        slides.remove(sld_id)
    return prs


def _plan_slides(prs: Any, data: DeckData, opts: DeckOptions) -> None:
    if opts.map:
        map_slide(prs, data)
    buy_slides(prs, data, opts.buy_rows)
    failures_slide(prs, data, opts.worst_failures)
    utilisation_slide(prs, data)
    gpu_region_slide(prs, data)


def _roadmap_slides(prs: Any, data: DeckData, opts: DeckOptions) -> None:
    if opts.map:
        map_slide(prs, data, title=f"The backbone at the end of {data.side.document('roadmap').get('end', '')}")
    timeline_slides(prs, data, opts.buy_rows)


def deck_bytes(folder: str | Path, *, baseline: str | Path | None = None, template: str | Path | None = None,
               options: DeckOptions | None = None, baseline_label: str | None = None) -> tuple[bytes, int]:
    """The deck of ``folder`` as ``.pptx`` bytes and its number of slides (see :func:`build_deck`);
    ``baseline_label`` names the baseline on the comparison slides (default: its path)."""
    opts = options or DeckOptions.model_validate({})
    prs = open_template(template)
    data = deck_data(folder, with_map=opts.map, map_in=map_inches(prs))
    title_slide(prs, data.title, data.subtitle, data.headline)
    if data.side.kind == "plan":
        _plan_slides(prs, data, opts)
    else:
        _roadmap_slides(prs, data, opts)
    if baseline is not None:
        from backbone.compare import diff, load_input

        comparison_slides(prs, diff(load_input(baseline, label=baseline_label), data.side))
    caveat_slides(prs, data)
    buffer = io.BytesIO()
    prs.save(buffer)
    return buffer.getvalue(), len(prs.slides)


def build_deck(folder: str | Path, out: str | Path, *, baseline: str | Path | None = None,
               template: str | Path | None = None, options: DeckOptions | None = None) -> int:
    """Write the review deck of a plan or roadmap output folder to ``out`` (``.pptx``); returns its slide count.

    Slides: the title with the plan's headline; the map after the plan; what to buy (native table: cost, lead
    time, failures each protects); the worst failures before and after, the utilisation distribution and the GPUs
    by region (native charts); for a roadmap the timeline (capex and served share per period, builds with commit
    and online periods); with ``baseline`` the comparison (``backbone diff baseline folder``); the assumptions and
    caveats (stage status and gaps, the bound, excused states with their reasons).

    Parameters
    ----------
    folder
        A plan or roadmap output folder.
    out
        The ``.pptx`` file to write (atomically).
    baseline
        An earlier plan or roadmap folder to compare with.
    template
        A ``.pptx`` whose slide master and layouts the deck uses ("Title Slide", "Title Only" by name when it has
        them).
    options
        :class:`~backbone.compare.options.DeckOptions`.

    Raises
    ------
    ValidationError
        When a folder is not a plan or roadmap output folder or the template is not a deck.
    """
    data, slides = deck_bytes(folder, baseline=baseline, template=template, options=options)
    write_bytes_atomic(Path(out), data)
    logger.info("deck %s: %d slides", out, slides)
    return slides
