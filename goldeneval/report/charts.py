"""The report's charts, as Bokeh documents the page embeds inline: the series' trend over the
nights (one line per rate, broken where the benchmark changed) and the slices of both runs.

Nothing leaves the page: BokehJS itself is inline (:func:`bokeh_js`, its lazy loaders' CDN
addresses emptied), and no label is ever read as TeX (:func:`plain_label`), which would make
Bokeh fetch MathJax.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any

from goldeneval.report.model import RunComparison, SliceRow, TrendPoint

__all__ = ["CHART_SLICES", "bokeh_js", "plain_label", "slice_chart", "trend_chart"]

CHART_SLICES = 40
"""At most this many slices are drawn in the slice chart (the table lists every one)."""

_TEX_DELIMITERS = (("$$", "$\u200b$"), ("\\[", "\\\u200b["), ("\\(", "\\\u200b("))


def plain_label(text: str) -> str:
    """A label Bokeh draws as text, never as TeX: Bokeh would fetch MathJax from a CDN for a
    label between TeX delimiters, and the page makes no request."""
    for delimiter, broken in _TEX_DELIMITERS:
        text = text.replace(delimiter, broken)
    return text


def _ms(point: TrendPoint) -> float:
    return point.created_at.timestamp() * 1000.0


def trend_chart(comparison: RunComparison) -> dict[str, Any] | None:
    """The series' runs over time, one line per rate, broken where the benchmark changed."""
    from bokeh.embed import json_item
    from bokeh.models import ColumnDataSource, DataRange1d, DatetimeTickFormatter, HoverTool
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    points = comparison.trend
    if not points:
        return None
    chart = figure(
        title=plain_label(f"{comparison.current.model} on {comparison.current.set_id}: every stored run"),
        x_axis_type="datetime",
        x_axis_location="below",
        y_range=DataRange1d(start=0),
        x_axis_label="night (run created)",
        y_axis_label="rate",
        height=320,
        sizing_mode="stretch_width",
        tools="pan,box_zoom,reset,save",
        toolbar_location="right",
    )
    markers: list[Any] = []
    for i, column in enumerate(("pass_rate", "mean_score")):
        name = plain_label(comparison.rate_names.get(column, column))
        colour = Category10_10[i]
        xs: list[float] = []
        ys: list[float] = []
        for point in points:
            value: float | None = getattr(point, column)
            if point.break_before and xs:
                xs.append(_ms(point))
                ys.append(math.nan)  # Bokeh breaks a line at NaN
            xs.append(_ms(point))
            ys.append(math.nan if value is None else value)
        if all(math.isnan(y) for y in ys):
            continue
        chart.line(xs, ys, line_width=2, color=colour, legend_label=name)
        source = ColumnDataSource(
            {
                "x": [_ms(p) for p in points],
                "y": [math.nan if getattr(p, column) is None else getattr(p, column) for p in points],
                "run": [p.run_id[:12] for p in points],
                "status": [p.status for p in points],
                "current": ["this run" if p.run_id == comparison.current.id else "" for p in points],
            }
        )
        markers.append(chart.scatter("x", "y", source=source, size=8, color=colour, legend_label=name))
    breaks = [_ms(point) for point in points if point.break_before]
    if breaks:
        chart.vspan(x=breaks, line_dash="dashed", line_color="#888", line_width=1)
    chart.add_tools(
        HoverTool(
            renderers=markers,
            tooltips=[("run", "@run"), ("rate", "@y{0.000}"), ("status", "@status"), ("", "@current")],
            formatters={"@x": "datetime"},
        )
    )
    chart.xaxis.formatter = DatetimeTickFormatter(
        microseconds="%H:%M:%S", milliseconds="%H:%M:%S", seconds="%H:%M:%S", minsec="%H:%M:%S",
        minutes="%H:%M", hourmin="%d %b %H:%M", hours="%d %b %H:%M", days="%d %b", months="%b %Y", years="%Y",
    )  # fmt: skip
    chart.legend.location = "bottom_left"
    chart.toolbar.logo = None
    item: dict[str, Any] = json_item(chart)  # type: ignore[assignment]
    return item


def _slice_label(row: SliceRow) -> str:
    return plain_label(f"{row.kind} {row.value}")


def slice_chart(comparison: RunComparison) -> dict[str, Any] | None:
    """Both runs' rates of each slice as grouped bars."""
    from bokeh.embed import json_item
    from bokeh.models import ColumnDataSource, FactorRange, HoverTool, Range1d
    from bokeh.plotting import figure
    from bokeh.transform import dodge

    rows = [row for row in comparison.slices if row.current is not None or row.earlier is not None][:CHART_SLICES]
    if not rows:
        return None
    factors: list[str] = []
    before: list[float] = []
    now: list[float] = []
    for row in rows:
        for column in ("pass_rate", "mean_score"):
            name = plain_label(comparison.rate_names.get(column, column))
            then_value = None if row.earlier is None else getattr(row.earlier, column)
            now_value = None if row.current is None else getattr(row.current, column)
            if then_value is None and now_value is None:
                continue
            factors.append(f"{_slice_label(row)} · {name}")
            before.append(math.nan if then_value is None else then_value)
            now.append(math.nan if now_value is None else now_value)
    if not factors:
        return None
    source = ColumnDataSource({"factor": factors, "before": before, "now": now})
    chart = figure(
        y_range=FactorRange(factors=list(reversed(factors))),
        x_range=Range1d(start=0, end=1.05),
        height=min(80 + 22 * len(factors), 2400),
        sizing_mode="stretch_width",
        title="Rates by slice",
        x_axis_label="rate",
        tools="save",
        toolbar_location="right",
    )
    bars: list[Any] = []
    if comparison.earlier is not None:
        bars.append(
            chart.hbar(
                y=dodge("factor", 0.18, range=chart.y_range),
                right="before",
                height=0.34,
                source=source,
                color="#9ecae1",
                legend_label="before",
            )
        )
    bars.append(
        chart.hbar(
            y=dodge("factor", -0.18 if comparison.earlier is not None else 0.0, range=chart.y_range),
            right="now",
            height=0.34,
            source=source,
            color="#3182bd",
            legend_label="now",
        )
    )
    chart.add_tools(HoverTool(renderers=bars, tooltips=[("before", "@before{0.000}"), ("now", "@now{0.000}")]))
    chart.legend.location = "bottom_right"
    chart.toolbar.logo = None
    item: dict[str, Any] = json_item(chart)  # type: ignore[assignment]
    return item


_CDN_ADDRESS = re.compile(r"https?://cdn\.jsdelivr\.net/[^\"'`\s]*")
"""Where Bokeh's library would fetch what the report never uses (MathJax for TeX labels, an
icon font): emptied, so that not even a code path of the page names an address to fetch."""


@cache
def bokeh_js() -> str:
    """Bokeh's core library, inline (``<script>`` elements): no request for it leaves the page."""
    from bokeh.resources import Resources

    rendered: str = Resources(mode="inline", components=["bokeh"]).render_js()
    return _CDN_ADDRESS.sub("data:,", rendered)
