"""Figures and the traffic-light summary of the utility section (no Streamlit).

Every builder takes result objects from :mod:`synthreview.metrics.utility.section`;
``reports`` maps a candidate name to its ``UtilityReport``. The summary's traffic lights are
the release policy's ``[lights.*]`` (``policies/default.toml``): this module holds no
threshold. The holdout reference is drawn in the holdout grey.
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
from pandas.io.formats.style import Styler
from plotly.subplots import make_subplots

from synthreview.figures.explain import MISSING, format_number, reading_table
from synthreview.figures.style import (
    HOLDOUT_COLOR,
    REAL_COLOR,
    VERDICT_COLORS,
    apply_style,
    palette,
)
from synthreview.figures.text import plot_text, plot_texts
from synthreview.judgement.policy import BY_GROUP, Policy, load_policy
from synthreview.metrics.info import MetricInfo
from synthreview.metrics.registry import REGISTRY, get
from synthreview.metrics.utility.kmarginal import MarginalDifference
from synthreview.metrics.utility.marginals import CorrelationError

REFERENCE = "holdout reference"
#: first columns of the summary table
METRIC, BETTER = "metric", "better"
#: widths (px) of the summary table's columns; candidates share what is left of
#: SUMMARY_WIDTH_PX, the main column of the wide layout at 1280 px with the sidebar open
#: (1280 - 336 sidebar - 2 x 80 padding = 784), so six candidates fit without scrolling
SUMMARY_WIDTH_PX = 780
METRIC_WIDTH_PX, BETTER_WIDTH_PX = 220, 80
VALUE_WIDTH_PX = (64, 120)
#: ML-efficacy rows are keyed "model · score"
_MODEL_SEP = " · "


def light_name(row: str) -> str:
    """The ``[lights.NAME]`` of a summary row (``"k_marginal 2"`` -> ``"k_marginal"``,
    ``"random_forest · roc_auc"`` -> ``"tstr_roc_auc"``)."""
    if _MODEL_SEP in row:
        return f"tstr_{row.rsplit(_MODEL_SEP, 1)[-1]}"
    return row.split(" ")[0]


def traffic_light(
    value: float, reference: float, *, metric: str, policy: Policy | None = None
) -> str:
    """``"pass"`` (green), ``"warn"`` (yellow), ``"fail"`` (red) or ``"n/a"`` for one row.

    The thresholds are the policy's ``[lights.NAME]`` (:class:`~synthreview.judgement.policy.
    Light`); a row the policy sets no light for, or a missing number, is ``"n/a"``.
    """
    light = (policy or load_policy()).light(light_name(metric))
    return "n/a" if light is None else light.verdict(value, reference)


def light_caption(policy: Policy | None = None) -> str:
    """How the summary's colours are decided, with every tolerance, from the policy."""
    policy = policy or load_policy()
    parts = [f"{_light_label(light.name)} {light.describe()}" for light in policy.lights.values()]
    return (
        "Colours compare each candidate with the holdout reference (for ML efficacy: with "
        "training on real data, TRTR): green when the candidate is at most the tolerance "
        "farther from the ideal value than the reference is, red beyond the second number, "
        "yellow between; a candidate better than the reference is green. Tolerances from the "
        f"release policy ({policy.name}): " + "; ".join(parts) + "."
    )


def _light_label(name: str) -> str:
    if name.startswith("tstr_") and name not in REGISTRY:
        return f"TSTR {name.removeprefix('tstr_').replace('_', ' ')}"
    base = name.removesuffix(BY_GROUP)
    label = get(base).label if base in REGISTRY else base.replace("_", " ")
    return f"{label} within groups" if name.endswith(BY_GROUP) else label


def _better_text(info: MetricInfo | None) -> str:
    if info is None:
        return "higher"
    return f"near {info.ideal:g}" if info.direction == "closest" else info.direction


@dataclass(frozen=True)
class UtilitySummary:
    """Headline metrics (rows) by candidate and holdout reference (columns), with lights.

    ``values`` holds the numbers (NaN where missing), ``lights`` each candidate cell's verdict
    under the policy's ``[lights.*]``.
    """

    values: pd.DataFrame
    lights: pd.DataFrame

    @property
    def candidates(self) -> list[str]:
        """The candidate columns, in review order."""
        return [c for c in self.values.columns if c != REFERENCE]

    def table(self) -> pd.DataFrame:
        """The summary as text: ``metric``, ``better``, one column per candidate, then the
        holdout reference; numbers in their registry format, ``n/a`` where missing."""
        names = [registry_name(key) for key in self.values.index]
        rows = []
        for key, name in zip(self.values.index, names, strict=True):
            info = get(name) if name else None
            fmt = info.fmt if info and _MODEL_SEP not in key else None
            row = {METRIC: display_label(key), BETTER: _better_text(info)}
            row |= {c: _text(self.values.loc[key, c], fmt) for c in self.values.columns}
            if _MODEL_SEP in key:
                row[BETTER] = "lower" if key.endswith(" · rmse") else "higher"
            rows.append(row)
        return pd.DataFrame(rows, columns=[METRIC, BETTER, *self.values.columns])

    def styled(self) -> Styler:
        """:meth:`table` with each candidate cell tinted by its light (no HTML in any cell:
        meanings go to the page's column help and caption, never into tooltips)."""
        return self._tinted(self.table(), first=2)

    def reading_styled(self) -> Styler:
        """:meth:`styled` for ``st.table``: labels and cells Markdown-escaped
        (:func:`~synthreview.figures.explain.reading_table`), so every header and cell wraps
        in the page's width instead of being cut in a fixed-width data grid column. The metric
        labels are the row labels."""
        return self._tinted(reading_table(self.table().set_index(METRIC)), first=1)

    def _tinted(self, table: pd.DataFrame, *, first: int) -> Styler:
        # first: the position of the first candidate column
        colours = pd.DataFrame("", index=table.index, columns=table.columns)
        for i, key in enumerate(self.values.index):
            for j, column in enumerate(self.candidates):
                light = self.lights.loc[key, column]
                if light in VERDICT_COLORS and light != "n/a":
                    colours.iloc[i, first + j] = (
                        f"background-color: {VERDICT_COLORS[light]}; color: #111111"
                    )
        return table.style.apply(lambda _: colours, axis=None)

    def widths(self, *, total_px: int = SUMMARY_WIDTH_PX) -> dict[str, int]:
        """Column widths in px that fit ``total_px``: the metric column, the direction, then
        candidates and the reference sharing the rest (never narrower than a number needs)."""
        values = [*self.candidates, REFERENCE]
        low, high = VALUE_WIDTH_PX
        share = (total_px - METRIC_WIDTH_PX - BETTER_WIDTH_PX) // max(len(values), 1)
        each = int(min(high, max(low, share)))
        return {METRIC: METRIC_WIDTH_PX, BETTER: BETTER_WIDTH_PX, **dict.fromkeys(values, each)}

    def meanings(self) -> list[tuple[str, str]]:
        """``(row label, what it means)`` for every row, from the metric registry."""
        out = []
        for key in self.values.index:
            name = registry_name(key)
            if _MODEL_SEP in key:
                model, score = key.split(_MODEL_SEP)
                text = (
                    f"{score.replace('_', ' ')} of a {model.replace('_', ' ')} model trained on "
                    "the candidate and tested on the holdout; the reference column trains it on "
                    "the real data (TRTR)"
                )
            else:
                text = get(name).meaning if name else key.replace("_", " ")
            out.append((display_label(key), text))
        return out


def _text(value: object, fmt: str | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    text = format_number(value, fmt)
    return "n/a" if text == MISSING else text


def number_table(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every number written as the reviewer reads it (``0.527``, ``n/a``).

    For the page's detail tables (percentiles, regression coefficients): no float noise such
    as ``0.5267029240000001``, no ``None`` or ``nan`` in a cell.
    """
    out = {}
    for column in frame.columns:
        values, dtype = frame[column].tolist(), frame[column].dtype
        if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
            out[column] = ["n/a" if _missing(v) else str(v) for v in values]
        elif pd.api.types.is_integer_dtype(dtype):
            out[column] = [str(v) for v in values]
        else:
            out[column] = [_text(v, None) for v in values]
    return pd.DataFrame(out, columns=frame.columns)


def _missing(value: object) -> bool:
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def registry_name(key: str) -> str | None:
    """The metric registry name of a summary row (``"k_marginal 2"`` -> ``"k_marginal"``)."""
    if _MODEL_SEP in key:
        return "tstr_trtr_ratio"
    base = key.split(" ")[0].removesuffix(BY_GROUP)
    return base if base in REGISTRY else None


def display_label(key: str) -> str:
    """A summary row as the reviewer reads it (``"k-marginal (categorical), k = 2"``)."""
    if _MODEL_SEP in key:
        model, metric = key.split(_MODEL_SEP)
        return f"TSTR {metric.replace('_', ' ')} · {model.replace('_', ' ')}"
    name = registry_name(key)
    if name is None:
        return key.replace("_", " ")
    label = get(name).label
    if key.endswith(BY_GROUP):
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


def utility_summary(
    reports: Mapping[str, object], *, policy: Policy | None = None
) -> UtilitySummary:
    """Values and traffic lights (the policy's ``[lights.*]``) of every headline metric."""
    policy = policy or load_policy()
    columns: dict[str, dict[str, float]] = {}
    references: dict[str, float] = {}
    for name, report in reports.items():
        values = {k: v for k, v in _flat(report.candidate.summary()).items() if "binned" not in k}
        ref = report.holdout_reference
        ref_values = _flat(ref.summary()) if ref else {}
        if report.ml_efficacy:
            for s in report.ml_efficacy.scores:
                values[f"{s.model}{_MODEL_SEP}{s.metric}"] = s.tstr
                ref_values[f"{s.model}{_MODEL_SEP}{s.metric}"] = s.trtr
        columns[name] = values
        for key, value in ref_values.items():
            references.setdefault(key, value)
    values = pd.DataFrame(columns)
    values[REFERENCE] = pd.Series(references, dtype=float)
    lights = pd.DataFrame("", index=values.index, columns=values.columns)
    for name in reports:
        for metric in values.index:
            lights.loc[metric, name] = traffic_light(
                values.loc[metric, name], values.loc[metric, REFERENCE], metric=metric,
                policy=policy,
            )  # fmt: skip
    return UtilitySummary(values=values, lights=lights)


def _diverging(z: np.ndarray) -> float:
    finite = np.abs(z[np.isfinite(z)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def correlation_heatmaps(correlation: CorrelationError, *, name: str = "synthetic") -> go.Figure:
    """Real, synthetic and difference (synthetic - real) Pearson correlation matrices."""
    diff = correlation.difference.to_numpy()
    # short subplot titles: three side by side at 789 px leave ~230 px each, and a long name
    # beside "difference (name - real)" overprinted its neighbour; the name is in the title
    titles = ("real", "candidate", "candidate − real")
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
    title = f"Pearson correlations of {name}, MAE {correlation.mae:.3f}"
    return apply_style(fig, title=title, height=430)


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
