"""Colours and layout shared by every figure, chosen to stay readable on a projector.

One rule places every legend: **below the plot area**, in a bottom margin sized from the
number of entries (:func:`legend_rows`), so a legend never covers the title, an axis title or
a trace, and every entry (all the membership attacks of a ROC figure) stays reachable. Tick,
axis-title and legend fonts are :data:`FONT_SIZE` px in :data:`TEXT_COLOR` on every axis, set
explicitly so Streamlit's chart theme (12.75 px grey ``#808495``) does not replace them, and
numbers are written as plain decimals (``exponentformat="none"``: no ``600µ``).
"""

from __future__ import annotations

import plotly.graph_objects as go

from synthreview.figures.text import plot_text
from synthreview.judgement.verdicts import VERDICT_STYLE

REAL_COLOR = "#1f77b4"
HOLDOUT_COLOR = "#7f7f7f"
IDEAL_COLOR = "#2ca02c"
CANDIDATE_COLORS = ("#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
SOURCE_COLORS = {"real": REAL_COLOR, "holdout": HOLDOUT_COLOR}
#: mark colours per verdict (pass / warn / fail / incomplete / n/a), from the judgement module
VERDICT_COLORS = {verdict: s.accent for verdict, s in VERDICT_STYLE.items()}

#: tick, axis-title and legend size (px): readable from the back of a room on a 1280×720 projector
FONT_SIZE = 16
TITLE_SIZE = 19
#: near-black text: high contrast on the white template (Streamlit's theme would draw grey)
TEXT_COLOR = "#1a1a1a"
#: the narrowest width a chart gets (half a column at 1280 px with the sidebar open): the
#: legend is laid out for it, so on a wider screen it only has room to spare
LEGEND_WIDTH_PX = 400
#: height of one legend row at :data:`FONT_SIZE` (plotly draws ~1.3 × the font plus a gap)
LEGEND_ROW_PX = 26
#: room under the plot area for tick labels and the x-axis title
AXIS_SPACE_PX = 80
#: the smallest plot area of a curve (px, each direction): readable in a room at 1280x720
CURVE_PLOT_PX = 300
#: a titled curve's height without its legend: the plot area, the title and the axis space
CURVE_HEIGHT = CURVE_PLOT_PX + 90 + AXIS_SPACE_PX
#: traces that never have a legend entry (they use a colour bar or none)
_NO_LEGEND_TYPES = frozenset({"heatmap", "histogram2d", "contour", "table", "pie", "indicator"})


def palette(i: int) -> str:
    """Colour of the ``i``-th synthetic candidate."""
    return CANDIDATE_COLORS[i % len(CANDIDATE_COLORS)]


def source_color(source: str, candidates: list[str]) -> str:
    """Colour for ``"real"``, ``"holdout"`` or a candidate name."""
    if source in SOURCE_COLORS:
        return SOURCE_COLORS[source]
    return palette(candidates.index(source) if source in candidates else 0)


def legend_entries(fig: go.Figure) -> list[str]:
    """Names plotly lists in ``fig``'s legend, in order (one per shown legend group).

    A trace is listed unless ``showlegend`` is False, its type has no legend entry (heatmap,
    table, ...) or the layout hides the legend; a lone trace is listed only with
    ``showlegend=True`` (plotly's default).
    """
    if fig.layout.showlegend is False:
        return []
    candidates = [
        t for t in fig.data if t.type not in _NO_LEGEND_TYPES and t.showlegend is not False
    ]
    if len(candidates) == 1 and candidates[0].showlegend is not True:
        return []
    return [str(t.name) if t.name is not None else "" for t in candidates]


def _entry_width(name: str) -> float:
    # symbol (40 px) + text at ~0.6 em per character
    return 40 + 0.6 * FONT_SIZE * len(name)


def legend_rows(names: list[str], *, width: float = LEGEND_WIDTH_PX) -> int:
    """Rows a horizontal legend of ``names`` takes in ``width`` px (entries packed in order).

    This is how plotly wraps a horizontal legend; an entry wider than ``width`` takes a row.
    """
    rows, used = 0, width
    for name in names:
        w = _entry_width(name)
        if used + w > width:
            rows, used = rows + 1, w
        else:
            used += w
    return rows


def apply_style(fig: go.Figure, *, title: str | None = None, height: int = 420) -> go.Figure:
    """Apply the shared layout and return ``fig``; call it after the last trace is added.

    ``height`` is the height of the figure without its legend: the legend goes below the plot
    area (under the x-axis title), in a bottom margin of :data:`LEGEND_ROW_PX` per row
    (:func:`legend_rows`), which is added to ``height`` so the plot keeps its size however many
    entries there are. Ticks, axis titles and the legend use :data:`FONT_SIZE` px
    :data:`TEXT_COLOR` text, numbers plain decimals.

    ``title`` is plain text (it may quote candidate or column names): it is drawn as written,
    never as plotly markup.
    """
    rows = legend_rows(legend_entries(fig))
    legend_px = LEGEND_ROW_PX * rows + (10 if rows else 0)
    font = {"size": FONT_SIZE, "color": TEXT_COLOR}
    fig.update_layout(
        template="plotly_white",
        font=font,
        height=height + legend_px,
        margin={"l": 70, "r": 30, "t": 70 if title else 30, "b": AXIS_SPACE_PX + legend_px},
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "x": 0,
            "xanchor": "left",
            "font": font,
            "bgcolor": "rgba(255,255,255,0)",
        },
        hoverlabel={"font": {"size": FONT_SIZE}},
    )
    axis = {
        "tickfont": font,
        "title_font": font,
        "exponentformat": "none",
        "separatethousands": True,
        "automargin": True,
    }
    fig.update_xaxes(**axis)
    fig.update_yaxes(**axis)
    fig.update_annotations(font_color=TEXT_COLOR)
    for trace in fig.data:
        if "colorbar" in trace:
            trace.update(colorbar={"tickfont": font, "exponentformat": "none"})
    if title:
        fig.update_layout(
            title={
                "text": plot_text(title),
                "x": 0,
                "xanchor": "left",
                "y": 1,
                "yref": "container",
                "yanchor": "top",
                "pad": {"t": 14},
                "font": {"size": TITLE_SIZE, "color": TEXT_COLOR},
            }
        )
    return fig
