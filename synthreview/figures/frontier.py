"""The privacy–utility frontier: every candidate (and its curated version) on one chart.

x is the privacy risk a release meeting cares about most: the share of training rows the
strongest membership-inference attack identifies while wrongly accusing only 1 % of non-members
(TPR at 1 % FPR; Carlini et al. 2022, "Membership inference attacks from first principles",
§IV argue for this low-FPR operating point over the AUC). y is utility: the worst model's
TSTR / TRTR ratio (train on synthetic, test on real, over train on real; Eiring 2022) or the
k-marginal score (Urban Institute appendix). The reference point is what real data scores: an
attacker without advantage hits 1 % at 1 % false alarms, and training on real data gives a
ratio of 1 (or the holdout's k-marginal). Up and to the left is better; the dashed line joins
the candidates no other candidate beats on both axes.

Labels never overprint each other, a marker or the axes: each name is placed by rule
(:func:`place_labels`: above, right, left, below, then the diagonals, then the same further
out on a leader line) so its box, estimated from its text (:func:`text_width_px`), stays
inside the plot area and clear of every other label and marker at every plot width a meeting
screen gives the chart (:data:`PLOT_WIDTHS_PX`). Where no such place exists for every name, the
markers carry numbers instead and the legend below the chart names them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from synthreview.figures.style import AXIS_SPACE_PX, FONT_SIZE, HOLDOUT_COLOR, apply_style, palette
from synthreview.figures.text import plot_text
from synthreview.judgement.rules import measure_k_marginal, measure_mia_tpr, measure_tstr_trtr_ratio

#: TPR of an attacker with no advantage at the 1 % false-positive operating point
CHANCE_TPR = 0.01
#: y-axis titles, short enough for a 310 px high plot (the page's caption says the rest)
UTILITY_AXES = {
    "tstr_trtr_ratio": "utility: TSTR / TRTR",
    "k_marginal": "utility: 2-way marginals",
}
#: widths (px) of the plot area the labels must fit: the full-width chart at 1280 px with the
#: sidebar open (about 680 px) up to 1920 px without it (the figure fills its column)
PLOT_WIDTHS_PX = (640, 800, 1100, 1500, 1800)
#: the figure's margins around the plot area (style.apply_style; the y-axis ticks and title
#: may widen the left one, which only narrows the plot, a width :data:`PLOT_WIDTHS_PX` covers)
TOP_MARGIN_PX = 30
#: marker diameter (px) and the box a marker occupies for the label placement
MARKER_PX = 14
_MARKER_CLEARANCE_PX = MARKER_PX / 2 + 3
#: space (px) between a point and its label, and between the rings of places further out
_GAP_PX = 6
_RING_STEP_PX = 24
_RINGS = 7
#: directions tried around a point, in order of preference (x right, y down)
_DIRECTIONS = (
    (0, -1), (1, 0), (-1, 0), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1),
    (1, -0.5), (-1, -0.5), (1, 0.5), (-1, 0.5), (0.5, -1), (-0.5, -1), (0.5, 1), (-0.5, 1),
)  # fmt: skip
#: widths of characters as a share of the font size, generous for the sans-serif fonts a
#: browser falls back to offline (DejaVu Sans is the widest of them)
_NARROW = frozenset("il.,:;'|!ijtfr()[]{} ")
_WIDE = frozenset("mwMW@%&")


@dataclass(frozen=True)
class FrontierPoint:
    """One point of the chart; ``kind`` is ``"candidate"``, ``"curated"`` or ``"reference"``."""

    name: str
    risk: float
    utility: float
    kind: str
    candidate: str


def _utility(candidate: Mapping[str, Any], measure: str) -> tuple[float, float]:
    if measure == "k_marginal":
        found = measure_k_marginal(candidate, 2)
        return found.value, found.reference
    return measure_tstr_trtr_ratio(candidate, 0).value, 1.0


def frontier_points(
    candidates: Mapping[str, Mapping[str, Any]],
    *,
    curated: Mapping[str, Mapping[str, Any]] | None = None,
    utility: str = "tstr_trtr_ratio",
) -> list[FrontierPoint]:
    """Points for :func:`privacy_utility_frontier` from ``report.json`` candidate dicts.

    Parameters
    ----------
    candidates : mapping of str to dict
        ``Report.to_dict()["candidates"]``.
    curated : mapping of str to dict, optional
        The same for curated versions (keyed by the original candidate's name).
    utility : {"tstr_trtr_ratio", "k_marginal"}

    Returns
    -------
    list of FrontierPoint
        Candidates with both numbers, their curated versions, then the real-data reference.
        A candidate missing either number is left out (the chart caption says which).
    """
    if utility not in UTILITY_AXES:
        raise ValueError(f"utility must be one of {list(UTILITY_AXES)}; got {utility!r} instead")
    points: list[FrontierPoint] = []
    reference = math.nan
    for kind, group in (("candidate", candidates), ("curated", curated or {})):
        for name, content in group.items():
            risk = measure_mia_tpr(content, 0).value
            value, ref = _utility(content, utility)
            if not math.isnan(ref) and math.isnan(reference):
                reference = ref
            if math.isnan(risk) or math.isnan(value):
                continue
            label = name if kind == "candidate" else f"{name} (curated)"
            points.append(FrontierPoint(label, risk, value, kind, name))
    if not math.isnan(reference):
        points.append(
            FrontierPoint("real data (reference)", CHANCE_TPR, reference, "reference", "")
        )
    return points


def text_width_px(text: str, *, font_size: float = FONT_SIZE) -> float:
    """A generous estimate of the width (px) ``text`` takes in a sans-serif font.

    Examples
    --------
    >>> round(text_width_px("copula", font_size=16))
    54
    """
    shares = (
        0.34 if ch in _NARROW else 0.95 if ch in _WIDE else 0.75 if ch.isupper() else 0.64
        for ch in text
    )
    return font_size * sum(shares)


@dataclass(frozen=True)
class LabelPlace:
    """Where one label goes: its box centre is ``(dx, dy)`` px from its point (y down);
    ``ring`` 0 is next to the marker, further rings hang on a leader line."""

    dx: float
    dy: float
    ring: int


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(
    positions: Sequence[tuple[float, float]],
    sizes: Sequence[tuple[float, float]],
    *,
    widths: Sequence[float] = PLOT_WIDTHS_PX,
    height: float,
) -> list[LabelPlace] | None:
    """Places for labels so that no two overlap, none covers a marker and all stay inside.

    Parameters
    ----------
    positions : sequence of (float, float)
        Each point as a share of the plot area, ``(0, 0)`` bottom left, ``(1, 1)`` top right.
    sizes : sequence of (float, float)
        Each label's box, width and height in px.
    widths : sequence of float
        Plot-area widths (px) the places must work at, all of them.
    height : float
        Plot-area height (px).

    Returns
    -------
    list of LabelPlace or None
        One place per point, tried in the order above, right, left, below, the diagonals,
        then the same rings further out; ``None`` when some label has no such place.
    """
    if len(positions) != len(sizes):
        raise ValueError(
            f"positions and sizes must have the same length; got {len(positions)} and "
            f"{len(sizes)} instead"
        )
    half = _MARKER_CLEARANCE_PX

    def pixel(i: int, width: float) -> tuple[float, float]:
        u, v = positions[i]
        return u * width, (1.0 - v) * height

    markers = {
        width: [
            (x - half, y - half, x + half, y + half)
            for x, y in (pixel(i, width) for i in range(len(positions)))
        ]
        for width in widths
    }

    def place(i: int, placed: dict[float, list[tuple[float, ...]]]) -> LabelPlace | None:
        w, h = sizes[i]
        for ring in range(_RINGS):
            gap = MARKER_PX / 2 + _GAP_PX + ring * _RING_STEP_PX
            for ux, uy in _DIRECTIONS:
                diagonal = 0.75 if ux and uy else 1.0
                dx = ux * (gap * diagonal + w / 2)
                dy = uy * (gap * diagonal + h / 2)
                boxes = {}
                for width in widths:
                    x, y = pixel(i, width)
                    box = (x + dx - w / 2, y + dy - h / 2, x + dx + w / 2, y + dy + h / 2)
                    if (
                        box[0] < 0
                        or box[1] < 0
                        or box[2] > width
                        or box[3] > height
                        or any(_overlap(box, m) for m in markers[width])
                        or any(_overlap(box, other) for other in placed[width])
                    ):
                        break
                    boxes[width] = box
                else:
                    for width, box in boxes.items():
                        placed[width].append(box)
                    return LabelPlace(dx, dy, ring)
        return None

    # greedy, in a few orders: as given, the lowest first, the highest first, the widest first
    n = range(len(positions))
    orders = (
        list(n),
        sorted(n, key=lambda i: positions[i][1]),
        sorted(n, key=lambda i: -positions[i][1]),
        sorted(n, key=lambda i: -sizes[i][0]),
    )
    for order in orders:
        placed: dict[float, list[tuple[float, ...]]] = {width: [] for width in widths}
        found: dict[int, LabelPlace] = {}
        for i in order:
            spot = place(i, placed)
            if spot is None:
                break
            found[i] = spot
        else:
            return [found[i] for i in n]
    return None


def _padded_range(values: list[float], *, low: float, high: float) -> tuple[float, float]:
    """The axis range over ``values`` with shares ``low`` / ``high`` of its span added."""
    lo, hi = min(values), max(values)
    span = hi - lo if hi > lo else max(abs(hi) * 0.1, 0.1)
    return lo - low * span, hi + high * span


def _pareto(points: list[FrontierPoint]) -> list[FrontierPoint]:
    """Points no other point beats on both axes (lower risk and higher utility), by risk."""
    front = [
        p
        for p in points
        if not any(
            (q.risk <= p.risk and q.utility >= p.utility)
            and (q.risk < p.risk or q.utility > p.utility)
            for q in points
        )
    ]
    return sorted(front, key=lambda p: p.risk)


def privacy_utility_frontier(
    points: list[FrontierPoint],
    *,
    utility: str = "tstr_trtr_ratio",
    height: int = 420,
    font_size: int = FONT_SIZE,
) -> go.Figure:
    """Scatter of privacy risk (x) against utility (y); curated versions hollow, joined to
    their original by an arrow; the real-data reference grey.

    Each point's name is an annotation placed by :func:`place_labels` for a plot
    ``height`` - margins px high at every width of :data:`PLOT_WIDTHS_PX`, in ``font_size`` px
    text; when the names cannot all be placed, the markers are numbered and the legend names
    them.
    """
    order = list(dict.fromkeys(p.candidate for p in points if p.kind != "reference"))
    fig = go.Figure()
    shown = [p for p in points if p.kind != "reference"]
    front = _pareto(shown)
    if len(front) > 1:
        fig.add_trace(
            go.Scatter(
                x=[p.risk for p in front], y=[p.utility for p in front], mode="lines",
                line={"color": "#999999", "dash": "dash", "width": 1},
                name="frontier (not beaten on both axes)", hoverinfo="skip", showlegend=False,
            )
        )  # fmt: skip
    x_range = _padded_range([p.risk for p in points] + [0.0, 0.1], low=0.06, high=0.15)
    y_range = _padded_range([p.utility for p in points] or [0.0], low=0.3, high=0.3)
    positions = [
        (
            (p.risk - x_range[0]) / (x_range[1] - x_range[0]),
            (p.utility - y_range[0]) / (y_range[1] - y_range[0]),
        )
        for p in points
    ]
    plot_height = height - TOP_MARGIN_PX - AXIS_SPACE_PX

    def boxes(texts: list[str]) -> list[tuple[float, float]]:
        return [(text_width_px(t, font_size=font_size) + 8, 1.4 * font_size + 6) for t in texts]

    names = [p.name for p in points]
    places = place_labels(positions, boxes(names), height=plot_height)
    numbered = places is None
    if numbered:  # no room for every name: numbers on the chart, names in the legend
        names = [str(i) for i in range(1, len(points) + 1)]
        places = place_labels(positions, boxes(names), height=plot_height)
    for i, p in enumerate(points):
        if p.kind == "reference":
            color, symbol = HOLDOUT_COLOR, "diamond"
        else:
            color = palette(order.index(p.candidate))
            symbol = "circle-open" if p.kind == "curated" else "circle"
        label = plot_text(p.name)  # a candidate's file name: drawn as text, never as markup
        fig.add_trace(
            go.Scatter(
                x=[p.risk], y=[p.utility], mode="markers",
                name=f"{i + 1}: {label}" if numbered else label, showlegend=numbered,
                marker={"color": color, "size": MARKER_PX, "symbol": symbol, "line": {"width": 2}},
                hovertemplate=f"{label}<br>attacker hits at 1 % false alarms: %{{x:.1%}}"
                f"<br>utility: %{{y:.3g}}<extra></extra>",
            )
        )  # fmt: skip
    by_name = {p.name: p for p in points}
    for p in points:
        if p.kind == "curated" and p.candidate in by_name:
            src = by_name[p.candidate]
            fig.add_annotation(
                x=p.risk, y=p.utility, ax=src.risk, ay=src.utility, xref="x", yref="y",
                axref="x", ayref="y", showarrow=True, arrowhead=3, arrowcolor="#666666", text="",
            )  # fmt: skip
    for p, text, place in zip(points, names, places or [], strict=False):
        # the box is centred on the arrow's tail; near labels hide their (short) leader line
        fig.add_annotation(
            x=p.risk, y=p.utility, xref="x", yref="y", text=plot_text(text),
            showarrow=True, ax=place.dx, ay=place.dy, axref="pixel", ayref="pixel",
            xanchor="center", yanchor="middle", arrowhead=0, arrowwidth=1,
            arrowcolor="#888888" if place.ring else "rgba(0,0,0,0)", standoff=MARKER_PX / 2,
            font={"size": font_size}, bgcolor="rgba(255,255,255,0.85)", name="frontier_label",
        )  # fmt: skip
    fig.update_xaxes(
        title_text="privacy risk: attacker hits at 1 % false alarms (lower is better)",
        tickformat=".0%", range=list(x_range), zeroline=False,
    )  # fmt: skip
    fig.update_yaxes(title_text=UTILITY_AXES[utility], range=list(y_range))
    fig.update_layout(showlegend=numbered)
    return apply_style(fig, height=height)
