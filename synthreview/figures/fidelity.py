"""Figures of the fidelity section (no Streamlit).

Builders take result objects from :mod:`synthreview.metrics.fidelity.section` (``reports`` maps a
candidate name to its ``FidelityReport``) or the tidy frames of
:mod:`synthreview.metrics.fidelity.features`. The ideal diagonal is green and dotted, the holdout
reference grey and dashed, candidates take ``palette(i)`` in the order given. Candidate, column
and category names are drawn as text (:func:`synthreview.figures.text.plot_text`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from pandas.io.formats.style import Styler
from plotly.subplots import make_subplots

from synthreview.figures.explain import (
    MISSING,
    format_metric,
    format_number,
    holdout_gap,
    metric_label,
    numbers_as_text,
)
from synthreview.figures.style import (
    HOLDOUT_COLOR,
    IDEAL_COLOR,
    REAL_COLOR,
    apply_style,
    palette,
    source_color,
)
from synthreview.figures.text import markdown_text, plot_text, plot_texts
from synthreview.judgement.verdicts import style as verdict_style

REFERENCE = "holdout reference"


def precision_recall_curves(reports: Mapping[str, object]) -> go.Figure:
    """α-Precision and β-Recall curves side by side, with the diagonal and the holdout curve."""
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("α-Precision", "β-Recall"), horizontal_spacing=0.1
    )
    for col in (1, 2):
        fig.add_trace(
            go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="ideal (same as real)",
                       line={"color": IDEAL_COLOR, "dash": "dot"}, showlegend=col == 1,
                       legendgroup="ideal"),
            row=1, col=col,
        )  # fmt: skip
    reference = next(
        (r.holdout_reference for r in reports.values() if r.holdout_reference is not None), None
    )
    if reference is not None:
        for col, curve in ((1, reference.alpha_precision_curve), (2, reference.beta_recall_curve)):
            x = curve.alpha if col == 1 else curve.beta
            fig.add_trace(
                go.Scatter(x=x, y=curve.value, mode="lines", name=REFERENCE,
                           line={"color": HOLDOUT_COLOR, "dash": "dash"}, showlegend=col == 1,
                           legendgroup="holdout"),
                row=1, col=col,
            )  # fmt: skip
    for i, (name, report) in enumerate(reports.items()):
        precision, recall = report.alpha_precision_curve, report.beta_recall_curve
        for col, x, y in ((1, precision.alpha, precision.value), (2, recall.beta, recall.value)):
            fig.add_trace(
                go.Scatter(x=x, y=y, mode="lines+markers", name=plot_text(name),
                           marker={"size": 4}, line={"color": palette(i)}, showlegend=col == 1,
                           legendgroup=plot_text(name)),
                row=1, col=col,
            )  # fmt: skip
    fig.update_xaxes(range=[0, 1], title_text="α", row=1, col=1)
    fig.update_xaxes(range=[0, 1], title_text="β", row=1, col=2)
    fig.update_yaxes(range=[0, 1.02])
    return apply_style(fig, height=440)


def pca_scatter(frame: pd.DataFrame, candidates: list[str]) -> go.Figure:
    """Scatter of a :func:`pca_projection` frame; points carry ``[source, row_id]`` customdata.

    One trace per source, so selections return ``customdata`` that names the row unambiguously
    (point indices restart in every trace). ``customdata`` keeps the source name as given (the
    page looks rows up by it); the hover label shows it from ``text``, escaped.
    """
    fig = go.Figure()
    for source, part in frame.groupby("source", sort=False):
        fig.add_trace(
            go.Scattergl(
                x=part["PC1"], y=part["PC2"], mode="markers", name=plot_text(source),
                text=[plot_text(source)] * len(part),
                marker={"color": source_color(str(source), candidates), "size": 5, "opacity": 0.6},
                customdata=np.array(
                    [[str(source), int(row)] for row in part["row_id"]], dtype=object
                ).reshape(-1, 2),
                hovertemplate="%{text} row %{customdata[1]}<extra></extra>",
            )
        )  # fmt: skip
    fig.update_layout(dragmode="lasso", xaxis_title="PC1", yaxis_title="PC2")
    return apply_style(fig, height=520)


def feature_overlay(
    values: Mapping[str, pd.Series], *, column: str, kind: str, candidates: list[str]
) -> go.Figure:
    """Distribution of one column per source: density histograms or category proportions."""
    fig = go.Figure()
    for source, series in values.items():
        color = REAL_COLOR if source == "real" else source_color(source, candidates)
        if kind == "numeric":
            numbers = pd.to_numeric(series, errors="coerce").dropna()
            fig.add_trace(
                go.Histogram(x=numbers, name=plot_text(source), histnorm="probability density",
                             opacity=0.55, marker_color=color, nbinsx=40)
            )  # fmt: skip
        else:
            shares = series.astype("string").fillna("(missing)").value_counts(normalize=True)
            fig.add_trace(
                go.Bar(x=plot_texts(shares.index.astype(str)), y=shares.to_numpy(),
                       name=plot_text(source), marker_color=color)
            )  # fmt: skip
    if kind == "numeric":
        fig.update_layout(barmode="overlay", xaxis_title=plot_text(column), yaxis_title="density")
    else:
        fig.update_layout(
            barmode="group", xaxis_title=plot_text(column), yaxis_title="share of rows"
        )
    return apply_style(fig, height=400)


def authenticity_histogram(reports: Mapping[str, object]) -> go.Figure:
    """Histogram of log10 of the authenticity ratio per row, candidates against holdout.

    A row is judged copied when its ratio is ≤ 1 (left of the line at 0).
    """
    fig = go.Figure()
    holdout = next((r.holdout_samples for r in reports.values() if r.holdout_samples), None)
    series = [(name, r.samples, palette(i)) for i, (name, r) in enumerate(reports.items())]
    if holdout is not None:
        series.insert(0, (REFERENCE, holdout, HOLDOUT_COLOR))
    for name, samples, color in series:
        ratio = np.asarray(samples.authenticity_ratio, dtype=float)
        finite = ratio[np.isfinite(ratio)]
        log_ratio = np.log10(np.clip(finite, 1e-6, None))
        fig.add_trace(
            go.Histogram(x=log_ratio, name=plot_text(name), histnorm="probability", opacity=0.55,
                         marker_color=color, nbinsx=50)
        )  # fmt: skip
    fig.add_vline(x=0.0, line={"color": "black", "dash": "dash"})
    fig.update_layout(
        barmode="overlay", xaxis_title="log10 authenticity ratio (≤ 0: judged copied)",
        yaxis_title="share of rows",
    )  # fmt: skip
    return apply_style(fig, height=380)


def prdc_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """One row per candidate: precision, recall, density, coverage (k = 5)."""
    rows = [{"candidate": name, **r.prdc.to_dict()} for name, r in reports.items()]
    return pd.DataFrame(
        rows, columns=["candidate", "precision", "recall", "density", "coverage", "k"]
    )


#: the PRDC scores, each written in its registry metric's format (``prdc_<score>``)
PRDC_SCORES = ("precision", "recall", "density", "coverage")


def prdc_text_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """:func:`prdc_table` with the scores as text in their registry formats (``0.967``, never
    ``0.9663333333333334``; ``n/a`` when missing): a data grid's cells, and what a browser
    reads from them, show the value as given."""
    table = prdc_table(reports).astype({score: float for score in PRDC_SCORES})
    return numbers_as_text(table, {score: f"prdc_{score}" for score in PRDC_SCORES})


def feature_text_table(features: pd.DataFrame) -> pd.DataFrame:
    """Per-feature distances (``feature_distances``) for ``st.table``, one row per column.

    Every distance (all on 0 to 1) to three decimals, ``n/a`` where a measure does not apply;
    names Markdown-escaped, since ``st.table`` renders its cells. A static table wraps, so a
    table with many columns fits 1280 px where a data grid scrolled sideways."""
    shown = {}
    for column in features.columns:
        values = features[column]
        if pd.api.types.is_float_dtype(values):
            shown[markdown_text(column)] = [format_number(v, ".3f") for v in values]
        else:
            shown[markdown_text(column)] = [markdown_text(v) for v in values]
    table = pd.DataFrame(shown)
    return table.set_index(table.columns[0]) if len(table.columns) else table


#: the three scores of Alaa et al. (2022) in the order they are shown
SCORES = ("ip_alpha", "ir_beta", "authenticity")
#: a gap's colour (``explain.HoldoutGap.color``) as the verdict whose cell style it takes
_GAP_VERDICT = {"green": "pass", "red": "fail", "orange": "warn"}


_SCORE_COLUMNS = ["candidate", "score", "value", "95 % CI", REFERENCE, "vs holdout"]


def _score_rows(reports: Mapping[str, object]) -> list[tuple[dict[str, str], str]]:
    """Each candidate's score rows as text, with the colour of its gap to the holdout."""
    rows = []
    for name, report in reports.items():
        ref = report.holdout_reference
        for score in SCORES:
            value = getattr(report, score)
            lo, hi = report.ci.get(score, (np.nan, np.nan))
            reference = getattr(ref, score) if ref is not None else None
            gap = holdout_gap(score, value, reference, interval=(lo, hi))
            row = {
                "candidate": name,
                "score": metric_label(score),
                "value": format_metric(score, value),
                "95 % CI": f"{format_metric(score, lo)} to {format_metric(score, hi)}",
                REFERENCE: format_metric(score, reference),
                "vs holdout": MISSING if gap is None else f"{gap.delta} ({gap.reading})",
            }
            rows.append((row, "gray" if gap is None else gap.color))
    return rows


def score_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """IPα, IRβ, authenticity with 95 % intervals beside the holdout reference, as text.

    One row per candidate and score, labels and numbers as the registry writes them; ``vs
    holdout`` reads the gap in words (:func:`synthreview.figures.explain.holdout_gap`), so an
    IRβ above a fresh real sample reads "suspicious", never as an improvement.
    """
    return pd.DataFrame([row for row, _ in _score_rows(reports)], columns=_SCORE_COLUMNS)


def styled_score_table(reports: Mapping[str, object]) -> Styler:
    """:func:`score_table` with its ``vs holdout`` cells in verdict colours (amber: suspicious)."""
    rows = _score_rows(reports)
    table = pd.DataFrame([row for row, _ in rows], columns=_SCORE_COLUMNS)

    def paint(frame: pd.DataFrame) -> pd.DataFrame:
        styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
        for i, (_, color) in enumerate(rows):
            if color in _GAP_VERDICT:
                styles.iloc[i, frame.columns.get_loc("vs holdout")] = verdict_style(
                    _GAP_VERDICT[color]
                ).css()
        return styles

    return table.style.apply(paint, axis=None)
