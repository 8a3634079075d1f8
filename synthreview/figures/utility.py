"""Figures and the traffic-light summary of the utility section (no Streamlit).

Every builder takes result objects from :mod:`synthreview.metrics.utility.section`;
``reports`` maps a
candidate name to its ``UtilityReport``. The holdout reference is drawn in the holdout grey.
Candidate, column, category and formula text is drawn as text
(:func:`synthreview.figures.text.plot_text`); the summary table keeps names as written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from synthreview.figures.explain import direction_text, format_number, metric_help
from synthreview.figures.style import (
    HOLDOUT_COLOR,
    REAL_COLOR,
    VERDICT_COLORS,
    apply_style,
    palette,
)
from synthreview.figures.text import plot_text, plot_texts
from synthreview.metrics.registry import REGISTRY, get
from synthreview.metrics.utility.kmarginal import MarginalDifference
from synthreview.metrics.utility.marginals import CorrelationError

REFERENCE = "holdout reference"

#: metric -> (ideal value, tolerance on the metric's own scale; None = 5 % of the reference)
LIGHT_RULES: dict[str, tuple[float, float | None]] = {
    "k_marginal 1": (1000.0, 10.0),
    "k_marginal 2": (1000.0, 10.0),
    "k_marginal 3": (1000.0, 10.0),
    "correlation_mae": (0.0, 0.02),
    "discriminator_auc": (0.5, 0.02),
    "ci_overlap": (1.0, 0.1),
    "proportion_error": (0.0, 0.005),
    "proportion_error_by_group": (0.0, 0.01),
    "mean_error": (0.0, 0.02),
    "mean_error_by_group": (0.0, 0.05),
    "percentile_error": (0.0, 0.02),
    "accuracy": (1.0, 0.02),
    "roc_auc": (1.0, 0.02),
    "f1": (1.0, 0.02),
    "r2": (1.0, 0.02),
    "rmse": (0.0, None),
}

LIGHT_CAPTION = (
    "Traffic lights compare each candidate with the holdout reference (for ML efficacy: with "
    "training on real data, TRTR). The excess is how much farther the candidate is from the "
    "ideal value than the reference is: green when the excess is at most the tolerance, yellow "
    "up to three tolerances, red beyond. Tolerances: k-marginal 10 points, correlation MAE 0.02, "
    "discriminator AUC 0.02 (ideal 0.5), CI overlap 0.1, proportion error 0.005 (0.01 by group), "
    "mean error 0.02 (0.05 by group), percentile error 0.02, accuracy / ROC AUC / F1 / R² 0.02, "
    "RMSE 5 % of TRTR."
)


def traffic_light(value: float, reference: float, *, metric: str) -> str:
    """``"pass"`` (green), ``"warn"`` (yellow), ``"fail"`` (red) or ``"n/a"`` for one metric."""
    rule_key = metric.rsplit(" · ", 1)[-1]
    if rule_key not in LIGHT_RULES or not (math.isfinite(value) and math.isfinite(reference)):
        return "n/a"
    ideal, tol = LIGHT_RULES[rule_key]
    tol = 0.05 * abs(reference) if tol is None else tol
    excess = abs(value - ideal) - abs(reference - ideal)
    if excess <= tol:
        return "pass"
    return "warn" if excess <= 3 * tol else "fail"


@dataclass(frozen=True)
class UtilitySummary:
    """Headline metrics (rows) by candidate and holdout reference (columns), with lights."""

    values: pd.DataFrame
    lights: pd.DataFrame

    def styled(self):
        """A pandas Styler for display: a readable ``metric`` label and ``better`` column from
        the metric registry, numbers without exponents (``–`` where missing), each candidate
        cell tinted with its light's colour and its text label in the hover tooltip."""
        names = [registry_name(key) for key in self.values.index]
        table = self.values.map(format_number)
        table.insert(0, "better", [direction_text(get(n)) if n else "" for n in names])
        table.insert(0, "metric", [display_label(key) for key in self.values.index])
        table = table.reset_index(drop=True)
        colours = pd.DataFrame("", index=table.index, columns=table.columns)
        tips = pd.DataFrame("", index=table.index, columns=table.columns)
        for i, key in enumerate(self.values.index):
            tips.loc[i, "metric"] = metric_help(names[i]) if names[i] else key
            for column in self.lights.columns:
                light = self.lights.loc[key, column]
                if light in VERDICT_COLORS:
                    colours.loc[i, column] = (
                        f"background-color: {VERDICT_COLORS[light]}; color: #111111"
                    )
                    tips.loc[i, column] = f"{light} against the holdout reference"
        return table.style.apply(lambda _: colours, axis=None).set_tooltips(tips)


def registry_name(key: str) -> str | None:
    """The metric registry name of a summary row (``"k_marginal 2"`` -> ``"k_marginal"``)."""
    if " · " in key:
        return "tstr_trtr_ratio"
    base = key.split(" ")[0].removesuffix("_by_group")
    return base if base in REGISTRY else None


def display_label(key: str) -> str:
    """A summary row as the reviewer reads it (``"k-marginal (categorical), k = 2"``)."""
    if " · " in key:
        model, metric = key.split(" · ")
        return f"TSTR {metric.replace('_', ' ')} ({model.replace('_', ' ')}; reference: TRTR)"
    name = registry_name(key)
    if name is None:
        return key.replace("_", " ")
    label = get(name).label
    if key.endswith("_by_group"):
        return f"{label} within groups"
    parts = key.split(" ")
    return f"{label}, k = {parts[1]}" if len(parts) == 2 else label


def _flat(summary: dict) -> dict[str, float]:
    out = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            out.update({f"{key} {k}": float(v) for k, v in value.items()})
        else:
            out[key] = float(value)
    return out


def utility_summary(reports: Mapping[str, object]) -> UtilitySummary:
    """Values and traffic lights of every headline metric for every candidate."""
    columns: dict[str, dict[str, float]] = {}
    references: dict[str, float] = {}
    for name, report in reports.items():
        values = {k: v for k, v in _flat(report.candidate.summary()).items() if "binned" not in k}
        ref = report.holdout_reference
        ref_values = _flat(ref.summary()) if ref else {}
        if report.ml_efficacy:
            for s in report.ml_efficacy.scores:
                values[f"{s.model} · {s.metric}"] = s.tstr
                ref_values[f"{s.model} · {s.metric}"] = s.trtr
        columns[name] = values
        for key, value in ref_values.items():
            references.setdefault(key, value)
    values = pd.DataFrame(columns)
    values[REFERENCE] = pd.Series(references)
    lights = pd.DataFrame("", index=values.index, columns=values.columns)
    for name in reports:
        for metric in values.index:
            lights.loc[metric, name] = traffic_light(
                values.loc[metric, name], values.loc[metric, REFERENCE], metric=metric
            )
    return UtilitySummary(values=values, lights=lights)


def _diverging(z: np.ndarray) -> float:
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def correlation_heatmaps(correlation: CorrelationError, *, name: str = "synthetic") -> go.Figure:
    """Real, synthetic and difference (synthetic - real) Pearson correlation matrices."""
    diff = correlation.difference.to_numpy()
    titles = plot_texts(("real", name, f"difference ({name} − real)"))
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.08)
    labels = plot_texts(correlation.real.columns)
    bound = _diverging(diff)
    for col, (z, zmax, bar_x) in enumerate(
        [
            (correlation.real.to_numpy(), 1.0, None),
            (correlation.synthetic.to_numpy(), 1.0, 0.64),
            (diff, bound, 1.0),
        ],
        start=1,
    ):
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=labels,
                y=labels,
                zmin=-zmax,
                zmax=zmax,
                zmid=0,
                colorscale="RdBu_r",
                showscale=bar_x is not None,
                colorbar={"x": bar_x, "len": 0.9} if bar_x else None,
                hovertemplate="%{y} × %{x}: %{z:.3f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_yaxes(autorange="reversed", row=1, col=col, showticklabels=col == 1)
    return apply_style(fig, title=f"Pearson correlations, MAE {correlation.mae:.3f}", height=430)


def k_marginal_bars(reports: Mapping[str, object]) -> go.Figure:
    """k-marginal scores for k = 1, 2, 3: each candidate next to the holdout reference."""
    fig = go.Figure()
    reference = None
    for i, (name, report) in enumerate(reports.items()):
        km = report.candidate.k_marginal
        if km is not None:
            ks = [f"k = {k}" for k in km.scores]
            fig.add_bar(
                name=plot_text(name), x=ks, y=list(km.scores.values()), marker_color=palette(i)
            )
        ref = report.holdout_reference
        if reference is None and ref is not None and ref.k_marginal is not None:
            reference = ref.k_marginal
    if reference is not None:
        ks = [f"k = {k}" for k in reference.scores]
        fig.add_bar(
            name=REFERENCE, x=ks, y=list(reference.scores.values()), marker_color=HOLDOUT_COLOR
        )
    fig.update_layout(barmode="group", yaxis_title="score (1000 = identical)")
    return apply_style(fig, title="k-marginal score (total variation distance)")


def marginal_heatmap(marginal: MarginalDifference) -> go.Figure:
    """Cell differences (synthetic - real proportion) of one marginal, diverging around 0."""
    cells = marginal.cells
    *row_cols, col = marginal.columns
    rows = cells[row_cols].astype(str).agg(" | ".join, axis=1) if row_cols else "all"
    grid = cells.assign(_row=rows).pivot_table(
        index="_row", columns=col, values="difference", aggfunc="sum", fill_value=0.0
    )
    z = grid.to_numpy()
    bound = _diverging(z)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=plot_texts(grid.columns),
            y=plot_texts(grid.index),
            zmin=-bound,
            zmax=bound,
            zmid=0,
            colorscale="RdBu_r",
            colorbar={"title": "Δ proportion"},
            hovertemplate="%{y} · %{x}: %{z:+.4f}<extra></extra>",
        )
    )
    height = int(min(900, max(320, 22 * len(grid.index) + 140)))
    fig.update_layout(
        xaxis_title=plot_text(col), yaxis_title=plot_text(" | ".join(row_cols)) or None
    )
    title = f"{' × '.join(marginal.columns)}: TVD {marginal.tvd:.3f}"
    return apply_style(fig, title=title, height=height)


def percentile_figure(reports: Mapping[str, object], column: str) -> go.Figure:
    """Percentiles (min, 10th ... 90th, max) of one column: real, candidates and holdout."""
    fig = go.Figure()
    real_drawn = holdout_drawn = False
    for i, (name, report) in enumerate(reports.items()):
        sources = [(name, report.candidate.percentiles, palette(i))]
        if report.holdout_reference is not None and not holdout_drawn:
            sources.append(("holdout", report.holdout_reference.percentiles, HOLDOUT_COLOR))
            holdout_drawn = True
        for label, result, colour in sources:
            if result is None:
                continue
            rows = result.table[result.table["column"] == column]
            if not real_drawn:
                fig.add_scatter(
                    x=rows["percentile"],
                    y=rows["real"],
                    name="real",
                    line={"color": REAL_COLOR, "width": 3},
                )
                real_drawn = True
            fig.add_scatter(
                x=rows["percentile"],
                y=rows["synthetic"],
                name=plot_text(label),
                line={"color": colour, "dash": "dot" if label == "holdout" else None},
                customdata=rows["error"],
                hovertemplate="p%{x}: %{y:.4g} (error %{customdata:.3f})",
            )
    fig.update_layout(xaxis_title="percentile", yaxis_title=plot_text(column))
    return apply_style(fig, title=f"Percentiles of {column}")


def group_error_bars(reports: Mapping[str, object], *, kind: str = "proportions") -> go.Figure:
    """Mean absolute proportion error (or mean error) within each group, by candidate."""
    fig = go.Figure()
    for i, (name, report) in enumerate(reports.items()):
        sources = [(name, report.candidate, palette(i))]
        if i == 0 and report.holdout_reference is not None:
            sources.append((REFERENCE, report.holdout_reference, HOLDOUT_COLOR))
        for label, parts, colour in sources:
            result = getattr(parts, kind)
            if result is None or result.by_group.empty:
                continue
            by = result.by_group.assign(key=lambda t: t["group_by"] + "=" + t["group"].astype(str))
            mean = by.groupby("key", sort=True)["error"].mean()
            fig.add_bar(
                name=plot_text(label), x=plot_texts(mean.index), y=mean.to_numpy(),
                marker_color=colour,
            )  # fmt: skip
    what = "class proportions" if kind == "proportions" else "means (relative)"
    fig.update_layout(barmode="group", yaxis_title=f"mean absolute error of {what}")
    return apply_style(fig, title=f"Errors of {what} by group")


def efficacy_bars(reports: Mapping[str, object]) -> go.Figure:
    """TSTR (each candidate) vs TRTR (real) per model, one panel per metric."""
    tables = {n: r.ml_efficacy.table() for n, r in reports.items() if r.ml_efficacy is not None}
    if not tables:
        return apply_style(go.Figure(), title="ML efficacy: no target column chosen")
    metrics = list(dict.fromkeys(next(iter(tables.values()))["metric"]))
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=metrics)
    for j, metric in enumerate(metrics, start=1):
        first = next(iter(tables.values()))
        trtr = first[first["metric"] == metric]
        fig.add_bar(
            x=trtr["model"],
            y=trtr["trtr"],
            name="TRTR (train on real)",
            marker_color=REAL_COLOR,
            showlegend=j == 1,
            row=1,
            col=j,
        )
        for i, (name, table) in enumerate(tables.items()):
            rows = table[table["metric"] == metric]
            fig.add_bar(
                x=rows["model"],
                y=rows["tstr"],
                name=plot_text(f"TSTR: {name}"),
                marker_color=palette(i),
                showlegend=j == 1,
                row=1,
                col=j,
            )
    fig.update_layout(barmode="group")
    target = next(iter(reports.values())).ml_efficacy
    return apply_style(fig, title=f"ML efficacy for '{target.target}', tested on holdout")


def ci_forest(reports: Mapping[str, object]) -> go.Figure:
    """Coefficients with confidence intervals: real, each candidate and the holdout."""
    fig = go.Figure()
    sources: list[tuple[str, pd.DataFrame, str, str]] = []
    for i, (name, report) in enumerate(reports.items()):
        ci = report.candidate.ci_overlap
        if ci is None:
            continue
        if not sources:
            sources.append(("real", ci.coefficients, "real", REAL_COLOR))
            ref = report.holdout_reference
            if ref is not None and ref.ci_overlap is not None:
                sources.append(("holdout", ref.ci_overlap.coefficients, "synthetic", HOLDOUT_COLOR))
        sources.append((name, ci.coefficients, "synthetic", palette(i)))
    if not sources:
        return apply_style(go.Figure(), title="Regression CI overlap: no formula")
    terms = list(sources[0][1]["term"])
    for k, (label, table, side, colour) in enumerate(sources):
        offset = (k - (len(sources) - 1) / 2) * 0.8 / max(len(sources), 1)
        est = table[side].to_numpy()
        fig.add_scatter(
            x=est,
            y=np.arange(len(terms)) + offset,
            mode="markers",
            name=plot_text(label),
            marker={"color": colour, "size": 9},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": table[f"{side}_upper"].to_numpy() - est,
                "arrayminus": est - table[f"{side}_lower"].to_numpy(),
            },
            customdata=table["overlap"] if side == "synthetic" else None,
            hovertemplate="%{x:.4g}"
            + (" overlap %{customdata:.2f}" if side == "synthetic" else ""),
        )
    fig.update_yaxes(
        tickvals=list(range(len(terms))), ticktext=plot_texts(terms), autorange="reversed"
    )
    fig.update_layout(xaxis_title="coefficient (95 % CI)")
    formula = next(r.candidate.ci_overlap for r in reports.values() if r.candidate.ci_overlap)
    return apply_style(
        fig,
        title=f"Regression CI overlap: {formula.formula}",
        height=max(360, 60 * len(terms) + 120),
    )
