"""Slide plumbing over python-pptx: layouts (a template's own, by name), the content area below the title, native
tables and charts with legible defaults. Nothing here knows what a plan is."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pandas as pd
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE, XL_LEGEND_POSITION
from pptx.util import Emu, Pt

__all__ = ["Box", "add_bar_chart", "add_bullets", "add_line_chart", "add_table", "content_box", "new_slide",
           "title_slide"]

logger = logging.getLogger(__name__)

Box = tuple[int, int, int, int]
"""left, top, width, height in EMU."""

TITLE_LAYOUTS: tuple[str, ...] = ("Title Slide",)
CONTENT_LAYOUTS: tuple[str, ...] = ("Title Only", "Title and Content", "Title, Content")


def _layout(prs: Any, names: Sequence[str], default: int) -> Any:
    """The first layout named in ``names`` (a template's own, so its master applies), else the first layout with
    a title placeholder, else layout ``default``."""
    layouts = list(prs.slide_layouts)
    for name in names:
        for layout in layouts:
            if layout.name == name:
                return layout
    for layout in layouts:
        if any(ph.placeholder_format.type is not None and "TITLE" in str(ph.placeholder_format.type)
               for ph in layout.placeholders):
            return layout
    return layouts[min(default, len(layouts) - 1)]


def _clear_body_placeholders(slide: Any) -> None:
    """Remove empty placeholders other than the title, so a content layout shows only what the deck adds."""
    for ph in list(slide.placeholders):
        if ph.placeholder_format.idx != 0:
            ph._element.getparent().remove(ph._element)


def title_slide(prs: Any, title: str, subtitle: str, headline: str) -> Any:
    """The title slide: title, subtitle (scenario, date) and the headline sentence."""
    slide = prs.slides.add_slide(_layout(prs, TITLE_LAYOUTS, 0))
    if slide.shapes.title is not None:
        slide.shapes.title.text = title
    for ph in [ph for ph in slide.placeholders if ph.placeholder_format.idx != 0]:
        ph._element.getparent().remove(ph._element)  # the template's subtitle box is too small for the headline
    w, h = int(prs.slide_width), int(prs.slide_height)
    box = add_bullets(slide, [subtitle, headline], (int(w * 0.08), int(h * 0.55), int(w * 0.84), int(h * 0.4)), 20)
    box.text_frame.paragraphs[1].font.bold = True
    return slide


def new_slide(prs: Any, title: str) -> Any:
    """A content slide with ``title`` (the template's "Title Only" layout when it has one)."""
    slide = prs.slides.add_slide(_layout(prs, CONTENT_LAYOUTS, 5 if len(prs.slide_layouts) > 5 else 0))
    _clear_body_placeholders(slide)
    if slide.shapes.title is not None:
        slide.shapes.title.text = title
        for paragraph in slide.shapes.title.text_frame.paragraphs:
            for run in paragraph.runs:
                run.font.size = Pt(28)
    else:
        add_bullets(slide, [title], (int(prs.slide_width * 0.05), int(prs.slide_height * 0.03),
                                     int(prs.slide_width * 0.9), int(prs.slide_height * 0.12)), 28)
    return slide


def content_box(prs: Any, top_share: float = 0.2) -> Box:
    """The area below the title: 5 % margins left and right, ``top_share`` of the height down, 4 % from the
    bottom."""
    w, h = int(prs.slide_width), int(prs.slide_height)
    return int(w * 0.05), int(h * top_share), int(w * 0.9), int(h * (0.96 - top_share))


def add_bullets(slide: Any, lines: Sequence[str], box: Box, size: int = 14) -> Any:
    """A text box with one paragraph per line (wrapped, ``size`` points)."""
    shape = slide.shapes.add_textbox(Emu(box[0]), Emu(box[1]), Emu(box[2]), Emu(box[3]))
    frame = shape.text_frame
    frame.word_wrap = True
    for i, line in enumerate(lines):
        paragraph = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        paragraph.text = line
        paragraph.font.size = Pt(size)
    return shape


def add_table(slide: Any, frame: pd.DataFrame, box: Box, size: int = 11) -> Any:
    """A native table: a header row of ``frame``'s column names, then its rows as the text given (format the
    numbers before); returns the table."""
    rows, cols = len(frame) + 1, len(frame.columns)
    shape = slide.shapes.add_table(rows, cols, Emu(box[0]), Emu(box[1]), Emu(box[2]),
                                   Emu(min(box[3], int(Pt(size * 2.2)) * rows)))
    table = shape.table
    text = frame.astype(str)
    weights = [min(40.0, max(6.0, len(str(name)) * 0.6, float(text[name].str.len().mean() if len(text) else 0.0)))
               for name in frame.columns]  # columns as wide as their text, within limits
    for j, weight in enumerate(weights):
        table.columns[j].width = Emu(int(box[2] * weight / sum(weights)))
    for j, name in enumerate(frame.columns):
        table.cell(0, j).text = str(name)
    for i, record in enumerate(frame.itertuples(index=False), start=1):  # cells of a slide table: tens of rows
        for j, value in enumerate(record):
            table.cell(i, j).text = "" if value is None else str(value)
    for i in range(rows):
        for j in range(cols):
            for paragraph in table.cell(i, j).text_frame.paragraphs:
                paragraph.font.size = Pt(size)
    return table


def add_bar_chart(slide: Any, categories: Sequence[str], series: dict[str, Sequence[float]], box: Box, *,
                  value_title: str, number_format: str = "#,##0", horizontal: bool = False,
                  stacked: bool = False) -> Any:
    """A native (editable) bar chart: one series per entry of ``series`` over ``categories``; returns the chart."""
    data = CategoryChartData(number_format=number_format)
    data.categories = [str(c) for c in categories]
    for name, values in series.items():
        data.add_series(name, [float(v) for v in values])
    if horizontal:
        kind = XL_CHART_TYPE.BAR_STACKED if stacked else XL_CHART_TYPE.BAR_CLUSTERED
    else:
        kind = XL_CHART_TYPE.COLUMN_STACKED if stacked else XL_CHART_TYPE.COLUMN_CLUSTERED
    chart = slide.shapes.add_chart(kind, Emu(box[0]), Emu(box[1]), Emu(box[2]), Emu(box[3]), data).chart
    chart.has_legend = len(series) > 1
    if chart.has_legend:
        chart.legend.position = XL_LEGEND_POSITION.BOTTOM
        chart.legend.include_in_layout = False
        chart.legend.font.size = Pt(12)
    axis = chart.value_axis
    axis.has_title = True
    axis.axis_title.text_frame.text = value_title
    axis.tick_labels.font.size = Pt(11)
    axis.tick_labels.number_format = number_format
    axis.tick_labels.number_format_is_linked = False
    chart.category_axis.tick_labels.font.size = Pt(11)
    if horizontal:
        chart.category_axis.reverse_order = True  # the first category on top
    return chart


def add_line_chart(slide: Any, categories: Sequence[str], series: dict[str, Sequence[float]], box: Box, *,
                   value_title: str, number_format: str = "0%") -> Any:
    """A native line chart with markers (e.g. served share per period); returns the chart."""
    data = CategoryChartData(number_format=number_format)
    data.categories = [str(c) for c in categories]
    for name, values in series.items():
        data.add_series(name, [float(v) for v in values])
    chart = slide.shapes.add_chart(XL_CHART_TYPE.LINE_MARKERS, Emu(box[0]), Emu(box[1]), Emu(box[2]), Emu(box[3]),
                                   data).chart
    chart.has_legend = len(series) > 1
    axis = chart.value_axis
    axis.has_title = True
    axis.axis_title.text_frame.text = value_title
    axis.tick_labels.number_format = number_format
    axis.tick_labels.number_format_is_linked = False
    return chart
