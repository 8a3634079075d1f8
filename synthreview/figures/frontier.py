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
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from synthreview.figures.style import HOLDOUT_COLOR, apply_style, palette
from synthreview.figures.text import plot_text
from synthreview.judgement.rules import measure_k_marginal, measure_mia_tpr, measure_tstr_trtr_ratio

#: TPR of an attacker with no advantage at the 1 % false-positive operating point
CHANCE_TPR = 0.01
UTILITY_AXES = {
    "tstr_trtr_ratio": "utility: TSTR / TRTR (worst model; 1 = as useful as real data)",
    "k_marginal": "utility: 2-way marginal score (0–1000)",
}


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
    points: list[FrontierPoint], *, utility: str = "tstr_trtr_ratio", height: int = 420
) -> go.Figure:
    """Scatter of privacy risk (x) against utility (y); curated versions hollow, joined to
    their original by an arrow; the real-data reference grey."""
    order = list(dict.fromkeys(p.candidate for p in points if p.kind != "reference"))
    fig = go.Figure()
    shown = [p for p in points if p.kind != "reference"]
    front = _pareto(shown)
    if len(front) > 1:
        fig.add_trace(
            go.Scatter(
                x=[p.risk for p in front], y=[p.utility for p in front], mode="lines",
                line={"color": "#999999", "dash": "dash", "width": 1},
                name="frontier (not beaten on both axes)", hoverinfo="skip",
            )
        )  # fmt: skip
    for p in points:
        if p.kind == "reference":
            color, symbol = HOLDOUT_COLOR, "diamond"
        else:
            color = palette(order.index(p.candidate))
            symbol = "circle-open" if p.kind == "curated" else "circle"
        label = plot_text(p.name)  # a candidate's file name: drawn as text, never as markup
        fig.add_trace(
            go.Scatter(
                x=[p.risk], y=[p.utility], mode="markers+text", name=label, text=[label],
                textposition="top center",
                marker={"color": color, "size": 14, "symbol": symbol, "line": {"width": 2}},
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
    risks = [p.risk for p in points] or [CHANCE_TPR]
    fig.update_xaxes(
        title_text="privacy risk: attacker hits at 1 % false alarms (lower is better)",
        tickformat=".0%", range=[-0.02, max(max(risks) * 1.15, 0.1)], zeroline=False,
    )  # fmt: skip
    fig.update_yaxes(title_text=UTILITY_AXES[utility])
    fig.update_layout(showlegend=False)
    return apply_style(fig, height=height)
