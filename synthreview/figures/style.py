"""Colours and layout shared by every figure, chosen to stay readable on a projector."""

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


def palette(i: int) -> str:
    """Colour of the ``i``-th synthetic candidate."""
    return CANDIDATE_COLORS[i % len(CANDIDATE_COLORS)]


def source_color(source: str, candidates: list[str]) -> str:
    """Colour for ``"real"``, ``"holdout"`` or a candidate name."""
    if source in SOURCE_COLORS:
        return SOURCE_COLORS[source]
    return palette(candidates.index(source) if source in candidates else 0)


def apply_style(fig: go.Figure, *, title: str | None = None, height: int = 420) -> go.Figure:
    """Apply the shared layout (white template, large fonts, legend on top) and return ``fig``.

    ``title`` is plain text (it may quote candidate or column names): it is drawn as written,
    never as plotly markup.
    """
    fig.update_layout(
        template="plotly_white",
        font={"size": 15},
        height=height,
        margin={"l": 60, "r": 20, "t": 60 if title else 30, "b": 50},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
    )
    if title:
        fig.update_layout(title={"text": plot_text(title), "x": 0})
    return fig
