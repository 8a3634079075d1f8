"""Figures of the glucose review (GlucoSynth figures 5, 6 and 18): plotly only, no Streamlit.

Every builder takes result objects or trace arrays and returns a ``plotly.graph_objects.Figure``
styled with :func:`synthreview.figures.style.apply_style`. Sources are coloured like the rest
of the dashboard: real blue, holdout grey, candidates from :func:`palette`. Source and model
names and titles are drawn as text (:func:`synthreview.figures.text.plot_text`).

The page's tables are built here too, for ``st.table``: numbers written without float noise,
every text cell, index label and header Markdown-escaped (a static table renders Markdown), and
each table narrow enough to read at 1280 px without scrolling sideways (``app_state.TABLE_CSS``
makes its cells wrap).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from numbers import Real

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from pandas.io.formats.style import Styler
from plotly.subplots import make_subplots
from sklearn.decomposition import PCA

from synthreview.embeddings.lstm_autoencoder import fill_gaps
from synthreview.figures.explain import (
    MISSING,
    SUSPICIOUS_READING,
    format_number,
    numbers_as_text,
    reading_table,
)
from synthreview.figures.style import apply_style, source_color
from synthreview.figures.text import markdown_text, plot_text, plot_texts
from synthreview.judgement.verdicts import style as verdict_style
from synthreview.metrics.glucose.glycemic import glycemic_table

#: the fixed colour scale of every heatmap (GlucoSynth appendix C.1), mg/dL
HEATMAP_RANGE_MG_DL = (40.0, 400.0)
#: zone boundaries of the Clarke error grid as drawn by Tsue's port (reference x, prediction y)
CLARKE_LINES: tuple[tuple[tuple[float, float], tuple[float, float]], ...] = (
    ((0, 175 / 3), (70, 70)),
    ((175 / 3, 400 / 1.2), (70, 400)),
    ((70, 70), (84, 400)),
    ((0, 70), (180, 180)),
    ((70, 290), (180, 400)),
    ((70, 70), (0, 56)),
    ((70, 400), (56, 320)),
    ((180, 180), (0, 70)),
    ((180, 400), (70, 70)),
    ((240, 240), (70, 180)),
    ((240, 400), (180, 180)),
    ((130, 180), (0, 70)),
)
_CLARKE_LABELS = (
    (30, 15, "A"),
    (370, 260, "B"),
    (280, 370, "B"),
    (160, 370, "C"),
    (160, 15, "C"),
    (30, 140, "D"),
    (370, 120, "D"),
    (30, 370, "E"),
    (370, 15, "E"),
)


def _colors(sources: Sequence[str]) -> dict[str, str]:
    candidates = [s for s in sources if s not in ("real", "holdout")]
    return {s: source_color(s, candidates) for s in sources}


def _time_labels(n_steps: int, step_minutes: float) -> list[str]:
    minutes = (np.arange(n_steps) * step_minutes).astype(int)
    return [f"{(m // 60) % 24:02d}:{m % 60:02d}" for m in minutes]


def trace_heatmaps(
    traces: Mapping[str, np.ndarray],
    *,
    n_traces: int = 100,
    step_minutes: float = 5.0,
    seed: int = 0,
) -> go.Figure:
    """Heatmaps of ``n_traces`` random traces per source, side by side (GlucoSynth fig. 5).

    Rows are traces, columns time of day; one colour scale fixed to 40-400 mg/dL for every
    panel so colours compare across sources. Rows are a seeded sample, in their input order.
    """
    names = list(traces)
    fig = make_subplots(
        rows=1,
        cols=len(names),
        subplot_titles=plot_texts(names),
        shared_yaxes=True,
        horizontal_spacing=0.02,
    )
    rng = np.random.default_rng(seed)
    lo, hi = HEATMAP_RANGE_MG_DL
    for col, name in enumerate(names, start=1):
        values = np.asarray(traces[name], dtype=np.float64)
        rows = np.sort(rng.choice(len(values), size=min(n_traces, len(values)), replace=False))
        fig.add_trace(
            go.Heatmap(
                z=values[rows],
                x=_time_labels(values.shape[1], step_minutes),
                y=np.arange(1, len(rows) + 1),
                zmin=lo,
                zmax=hi,
                colorscale="Viridis",
                coloraxis="coloraxis",
                hovertemplate="%{x}<br>trace %{y}<br>%{z:.0f} mg/dL<extra>"
                + plot_text(name)
                + "</extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text="time of day", nticks=7, row=1, col=col)
    fig.update_yaxes(title_text="trace", row=1, col=1)
    fig.update_layout(
        coloraxis={"cmin": lo, "cmax": hi, "colorscale": "Viridis", "colorbar": {"title": "mg/dL"}}
    )
    return apply_style(fig, title="100 random traces per source", height=460)


def variance_distributions(samples: Mapping[str, pd.DataFrame]) -> go.Figure:
    """Distribution of per-trace glucose variance per source (GlucoSynth fig. 6)."""
    colors = _colors(list(samples))
    fig = go.Figure()
    for name, frame in samples.items():
        fig.add_trace(
            go.Histogram(
                x=frame["variance"],
                name=plot_text(name),
                histnorm="probability density",
                opacity=0.55,
                marker_color=colors[name],
                nbinsx=40,
            )
        )
    fig.update_layout(
        barmode="overlay", xaxis_title="per-trace variance (mg/dL)²", yaxis_title="density"
    )
    return apply_style(fig, title="Per-trace variance")


def trace_pca(
    traces: Mapping[str, np.ndarray], *, max_points: int = 2000, seed: int = 0
) -> go.Figure:
    """Traces projected on the first two principal components of the real traces."""
    if "real" not in traces:
        raise ValueError(f"traces must include 'real'; got {list(traces)}")
    pca = PCA(n_components=2, random_state=seed).fit(fill_gaps(traces["real"]))
    colors = _colors(list(traces))
    rng = np.random.default_rng(seed)
    fig = go.Figure()
    for name, values in traces.items():
        values = fill_gaps(values)
        if len(values) > max_points:
            values = values[np.sort(rng.choice(len(values), max_points, replace=False))]
        z = pca.transform(values)
        fig.add_trace(
            go.Scatter(
                x=z[:, 0],
                y=z[:, 1],
                mode="markers",
                name=plot_text(name),
                marker={"color": colors[name], "size": 6, "opacity": 0.6},
            )
        )
    ratio = pca.explained_variance_ratio_
    fig.update_layout(
        xaxis_title=f"PC1 ({100 * ratio[0]:.0f} % of real variance)",
        yaxis_title=f"PC2 ({100 * ratio[1]:.0f} %)",
    )
    return apply_style(fig, title="PCA of traces (fitted on real)")


def clarke_grid(
    reference: np.ndarray,
    prediction: np.ndarray,
    *,
    title: str = "Clarke error grid",
    color: str = "#d62728",
    max_points: int = 3000,
    seed: int = 0,
) -> go.Figure:
    """Scatter of predictions against reference values with the Clarke zone boundaries.

    At most ``max_points`` pairs (a seeded sample) are drawn to keep the page light; the zone
    percentages are computed on all pairs elsewhere.
    """
    r = np.asarray(reference, dtype=np.float64)
    p = np.asarray(prediction, dtype=np.float64)
    if len(r) > max_points:
        keep = np.sort(np.random.default_rng(seed).choice(len(r), max_points, replace=False))
        r, p = r[keep], p[keep]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=r,
            y=p,
            mode="markers",
            name="forecasts",
            marker={"color": color, "size": 4, "opacity": 0.5},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0, 400],
            y=[0, 400],
            mode="lines",
            name="perfect",
            line={"color": "black", "dash": "dot", "width": 1},
        )
    )
    xs: list[float | None] = []
    ys: list[float | None] = []
    for (x0, x1), (y0, y1) in CLARKE_LINES:
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            name="zone boundaries",
            line={"color": "black", "width": 1.5},
            hoverinfo="skip",
        )
    )
    for x, y, text in _CLARKE_LABELS:
        fig.add_annotation(x=x, y=y, text=f"<b>{text}</b>", showarrow=False, font={"size": 18})
    fig.update_xaxes(range=[0, 400], title_text="reference glucose (mg/dL)", constrain="domain")
    fig.update_yaxes(
        range=[0, 400], title_text="predicted glucose (mg/dL)", scaleanchor="x", scaleratio=1
    )
    # apply_style puts the legend under the grid (on top it collided with the title)
    return apply_style(fig, title=title, height=560)


def clarke_zone_bars(
    percent: Mapping[str, Mapping[str, float]], *, title: str = "Clarke zones"
) -> go.Figure:
    """Stacked zone shares (%) per model, e.g. ``{"TRTR": {...}, "copula (TSTR)": {...}}``.

    The same layout serves the Parkes grid (``title="Parkes zones (type 1)"``).
    """
    zone_colors = {"A": "#2ca02c", "B": "#98df8a", "C": "#ffbf00", "D": "#ff7f0e", "E": "#d62728"}
    names = list(percent)
    fig = go.Figure()
    for zone, color in zone_colors.items():
        fig.add_trace(
            go.Bar(
                y=plot_texts(names),
                x=[percent[n][zone] for n in names],
                name=zone,
                orientation="h",
                marker_color=color,
            )
        )
    fig.update_layout(barmode="stack", xaxis_title="% of forecasts", xaxis_range=[0, 100])
    return apply_style(fig, title=title, height=140 + 40 * len(names))


def forecast_rmse(rmse: Mapping[str, float], *, trtr_rmse: float) -> go.Figure:
    """TSTR RMSE per candidate as bars, TRTR RMSE as the reference line (lower is better)."""
    names = list(rmse)
    colors = _colors(names)
    fig = go.Figure(
        go.Bar(
            x=plot_texts(names),
            y=[rmse[n] for n in names],
            name="TSTR",
            marker_color=[colors[n] for n in names],
        )
    )
    fig.add_hline(
        y=trtr_rmse,
        line_dash="dash",
        line_color=source_color("real", []),
        annotation_text=f"TRTR {trtr_rmse:.1f}",
    )
    fig.update_layout(yaxis_title="RMSE (mg/dL), lower is better", showlegend=False)
    return apply_style(fig, title="Forecasting RMSE: train on synthetic, test on real")


def agp_overlay(
    profiles: Mapping[str, object], *, title: str = "Ambulatory glucose profile"
) -> go.Figure:
    """AGP bands by time of day: median line, 25-75 % band and 5-95 % dotted lines per source.

    ``profiles`` maps a source (``"real"``, ``"holdout"``, candidate names) to an
    :class:`~synthreview.metrics.glucose.agp.AGPProfile`; the target range 70-180 mg/dL is
    shaded (Battelino et al. 2019).
    """
    colors = _colors(list(profiles))
    fig = go.Figure()
    fig.add_hrect(y0=70, y1=180, fillcolor="#2ca02c", opacity=0.07, line_width=0)
    for name, profile in profiles.items():
        hours = np.asarray(profile.minutes) / 60.0
        p = profile.percentiles
        color = colors[name]
        label = plot_text(name)
        fig.add_trace(go.Scatter(x=hours, y=p[75], mode="lines", line={"width": 0},
                                 showlegend=False, legendgroup=label,
                                 hoverinfo="skip"))  # fmt: skip
        fig.add_trace(
            go.Scatter(x=hours, y=p[25], mode="lines", line={"width": 0}, fill="tonexty",
                       fillcolor=color, opacity=0.25, name=f"{label} 25–75 %", legendgroup=label,
                       showlegend=False)
        )  # fmt: skip
        fig.add_trace(go.Scatter(x=hours, y=p[50], mode="lines", name=label, legendgroup=label,
                                 line={"color": color, "width": 2}))  # fmt: skip
        for q in (5, 95):
            fig.add_trace(go.Scatter(x=hours, y=p[q], mode="lines", legendgroup=label,
                                     showlegend=False, name=f"{label} {q} %",
                                     line={"color": color, "width": 1, "dash": "dot"}))  # fmt: skip
    fig.update_layout(xaxis_title="time of day (h)", yaxis_title="glucose (mg/dL)",
                      xaxis={"range": [0, 24], "dtick": 3})  # fmt: skip
    return apply_style(fig, title=title, height=420)


def subject_privacy_table(results: Mapping[str, object]) -> pd.DataFrame:
    """One row per candidate: per-subject figures beside the per-window ones.

    ``results`` maps candidate -> GlucoseReport; candidates without ``subject_privacy`` (no
    holdout, or it failed) are left out.
    """
    rows = []
    for name, result in results.items():
        s = getattr(result, "subject_privacy", None)
        if s is None:
            continue
        attacks = getattr(getattr(result, "privacy", None), "membership_inference", ()) or ()
        seeker = next((a.auc for a in attacks if a.attack == "trace_nn_seeker"), np.nan)
        rows.append(
            {
                "candidate": name,
                "subject AUC (max)": s.subject_auc,
                "window AUC": s.window_auc,
                "NN seeker AUC (attack set)": seeker,
                "member subjects": s.n_member_subjects,
                "non-member subjects": s.n_nonmember_subjects,
                "closest mg/dL, members": s.member_dcr_median,
                "closest mg/dL, non-members": s.nonmember_dcr_median,
                "memorised subjects": ", ".join(s.memorised) or "none",
                "fresh window called a copy": s.expected_window_fpr,
                "note": s.note,
            }
        )
    return pd.DataFrame(rows)


def subject_rows(results: Mapping[str, object]) -> pd.DataFrame:
    """Every candidate's per-subject table, stacked with a ``candidate`` column first."""
    frames = [
        result.subject_privacy.subjects.assign(candidate=name)
        for name, result in results.items()
        if getattr(result, "subject_privacy", None) is not None
    ]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    return out[["candidate", *[c for c in out.columns if c != "candidate"]]]


def plausibility_table(results: Mapping[str, object]) -> pd.DataFrame:
    """Share of implausible traces per candidate, with the reference (holdout or real) row."""
    rows, reference = [], None
    for name, result in results.items():
        p = getattr(result, "plausibility", None)
        if p is None:
            continue
        lo, hi = p.sensor_range_mg_dl
        range_label = f"outside {lo:g}–{hi:g} mg/dL"
        rate_label = f"> {p.max_rate_mg_dl_min:g} mg/dL/min over {p.rate_window_minutes:g} min"
        rows.append({"source": name, range_label: p.outside_range_share,
                     rate_label: p.implausible_rate_share})  # fmt: skip
        reference = {"source": f"{p.reference} (expected rate)",
                     range_label: p.reference_outside_range_share,
                     rate_label: p.reference_implausible_rate_share}  # fmt: skip
    return pd.DataFrame([*rows, reference] if reference else rows)


# --- tables for st.table ------------------------------------------------------------------------
#: a cell that is only a number (or a range of two) as the helpers below write it: no Markdown
#: can hide in it, so it is shown as written (an escaped ``.`` would carry a WORD JOINER)
_NUMBER_TEXT = re.compile(
    r"[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( %)?( to [-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?( %)?)?"
)
#: a significant difference from real (p below alpha): the fail colour of the verdicts
SIGNIFICANT_CSS = verdict_style("fail").css()


def _cell_text(value: object) -> str:
    """One cell for ``st.table``: number text as written, ``n/a``, or Markdown-escaped text."""
    text = str(value)
    return text if text == MISSING or _NUMBER_TEXT.fullmatch(text) else markdown_text(text)


def _escaped(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (cells already text) with its cells, index and headers safe for ``st.table``."""
    shown = frame.astype(object).map(_cell_text)
    shown.index = [_cell_text(i) for i in frame.index]
    shown.columns = [_cell_text(c) for c in frame.columns]
    return shown


def mean_text(value: object) -> str:
    """A mean as a reviewer reads it: ``138.3``, ``2,346``, ``36.54``, ``0.640``, ``n/a``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        return format_number(value)
    number = float(value)
    if abs(number) >= 1000:
        return f"{number:,.0f}"
    if abs(number) >= 100:
        return f"{number:.1f}"
    return format_number(number)


def comparison_table(
    rows: Sequence[object],
    reference: Sequence[object] | None = None,
    *,
    alpha: float = 0.05,
    labels: Mapping[str, tuple[str, ...]] | None = None,
) -> Styler:
    """Per-trace metric means of real and a candidate with their tests, for ``st.table``.

    ``rows`` and ``reference`` (holdout vs real) are the comparisons
    :func:`~synthreview.metrics.glucose.glycemic.glycemic_table` reads; ``labels`` maps a metric
    to ``(label, unit, ...)``. One row per metric, labelled ``"Mean glucose (mg/dL)"``; means
    read ``138.3``, p-values ``0.640``; ``differs from real`` reads yes/no (Welch p < ``alpha``)
    and every p below ``alpha`` is painted in the fail colour.
    """
    table = glycemic_table(rows, reference, alpha=alpha, labels=labels)
    units = table["unit"].fillna("").astype(str)
    index = [f"{m} ({u})" if u else str(m) for m, u in zip(table["metric"], units, strict=True)]
    p_columns = {"p_value": "Welch p", "mannwhitney_p": "Mann–Whitney p",
                 "holdout_p_value": "holdout vs real p"}  # fmt: skip
    columns = {"real": "real", "synthetic": "synthetic", "p_value": "Welch p",
               "mannwhitney_p": "Mann–Whitney p",
               "significant": f"differs from real (p < {alpha:g})", "holdout": "holdout",
               "holdout_p_value": "holdout vs real p"}  # fmt: skip
    columns = {k: v for k, v in columns.items() if k in table}
    text = pd.DataFrame(index=range(len(table)))
    for key, header in columns.items():
        values = table[key].tolist()
        if key == "significant":
            text[header] = ["yes" if v else "no" for v in values]
        elif key in p_columns:
            text[header] = [format_number(v) for v in values]
        else:
            text[header] = [mean_text(v) for v in values]
    text.index = index
    marks = pd.DataFrame("", index=text.index, columns=text.columns)
    for key, header in p_columns.items():
        if key in table:
            p = pd.to_numeric(table[key], errors="coerce").to_numpy(dtype=float)
            marks[header] = np.where(p < alpha, SIGNIFICANT_CSS, "")
    if "significant" in table:
        marks[columns["significant"]] = np.where(table["significant"], SIGNIFICANT_CSS, "")
    shown = _escaped(text)
    marks.index, marks.columns = shown.index, shown.columns
    return shown.style.apply(lambda _: marks, axis=None)


def agp_distance_table(
    distances: Mapping[str, float], reference: float | None = None
) -> pd.DataFrame:
    """AGP band distance per source (mg/dL) for ``st.table``, the holdout reference last."""
    rows = dict(distances)
    if reference is not None:
        rows["holdout (reference)"] = reference
    frame = pd.DataFrame({"AGP band distance (mg/dL)": pd.Series(rows, dtype=float)})
    return reading_table(frame.rename_axis(None))


#: a holdout gap's words (``explain.HoldoutGap.reading``) as the verdict whose colour it takes
_GAP_READING = {"(better)": "pass", "(worse)": "fail", f"({SUSPICIOUS_READING})": "warn"}


def fidelity_table(scores: pd.DataFrame) -> Styler:
    """The fidelity scores (``figures.fidelity.score_table``, all text) for ``st.table``.

    Each ``vs holdout`` cell takes the colour of its reading: better green, worse red,
    suspicious (beyond a fresh real sample) amber. Show it with ``hide_index=True``.
    """
    shown = _escaped(scores.reset_index(drop=True))
    marks = pd.DataFrame("", index=shown.index, columns=shown.columns)
    if "vs holdout" in scores:
        readings = scores["vs holdout"].astype(str).tolist()
        marks[_cell_text("vs holdout")] = [
            next((verdict_style(v).css() for end, v in _GAP_READING.items() if r.endswith(end)),
                 "")
            for r in readings
        ]  # fmt: skip
    return shown.style.apply(lambda _: marks, axis=None)


#: the trace seekers (``metrics.glucose.seekers``) in words; ``attack_table`` writes their ids
TRACE_ATTACK_LABELS = {
    "trace_nn_seeker": "Hide-and-Seek NN seeker on traces",
    "trace_gru_seeker": "Hide-and-Seek GRU seeker on traces",
}
#: the membership columns a meeting reads; the rest go to a second table
ATTACK_MAIN = ("AUC", "AUC 95% CI", "holdout-only AUC", "TPR @ FPR 1%", "verdict")
ATTACK_MORE = ("TPR @ FPR 0.1%", "advantage", "challenge accuracy")


def attack_tables(attacks: pd.DataFrame, candidate: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One candidate's rows of ``figures.privacy.attack_table`` as two tables for ``st.table``.

    Indexed by attack (the trace seekers in words), riskiest first: the first holds what a
    meeting reads (AUC with its interval, the holdout-only reference, TPR at 1 % FPR, verdict),
    the second the remaining figures. The interval reads ``0.481 to 0.532``.
    """
    if "candidate" not in attacks:  # no candidate had an attack
        return pd.DataFrame(), pd.DataFrame()
    rows = attacks[attacks["candidate"] == candidate]
    rows = rows.set_index(rows["attack"].replace(TRACE_ATTACK_LABELS)).rename_axis(None)
    rows = rows.drop(columns=[c for c in ("candidate", "attack", "error") if c in rows])
    if "AUC 95% CI" in rows:
        rows["AUC 95% CI"] = [
            re.sub(r"^\[\s*(\S+),\s*(\S+)\s*\]$", r"\1 to \2", str(v)) for v in rows["AUC 95% CI"]
        ]
    numbers = numbers_as_text(rows)
    main = _escaped(numbers[[c for c in ATTACK_MAIN if c in numbers]])
    more = _escaped(numbers[[c for c in ATTACK_MORE if c in numbers]])
    return main, more


def subject_privacy_reading(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`subject_privacy_table`'s ``table`` for ``st.table``: one row per measure, one
    column per candidate (a meeting has more measures than candidates, so the table grows down).

    Empty when ``table`` is.
    """
    if table.empty:
        return table
    shown = numbers_as_text(table).set_index("candidate")
    shown = shown.astype(object).map(str).T
    shown.columns.name = None
    return _escaped(shown)
