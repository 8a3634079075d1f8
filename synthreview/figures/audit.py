"""Figures of the audit and release step: scorecard, rule overlaps, before/after curation.

Built from JSON-ready dicts (a candidate's ``to_dict()``, ``Verdicts.to_dict()``) or small
frames, so ``report.html`` can be redrawn from a filed ``report.json`` alone. Candidate names
(and anything else from the record) are drawn as text (:func:`synthreview.figures.text.plot_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from synthreview.figures.explain import reading_table, rule_reading
from synthreview.figures.style import (
    CURVE_HEIGHT,
    HOLDOUT_COLOR,
    IDEAL_COLOR,
    VERDICT_COLORS,
    apply_style,
    palette,
)
from synthreview.figures.text import plot_text, plot_texts
from synthreview.judgement.decision import rule_label
from synthreview.judgement.policy import HEADLINES, headline_scores

_BEFORE_AFTER = ("ip_alpha", "ir_beta", "authenticity", "mia_auc", "dcr_share")


def _as_dict(verdicts: Any) -> dict[str, Any]:
    return verdicts.to_dict() if hasattr(verdicts, "to_dict") else dict(verdicts)


def _score_text(verdict: Mapping[str, Any]) -> str:
    # the verdict, the point and the judged number: "PASS 0.708, judged 0.497"
    reading = rule_reading(verdict)
    judged = f", judged {reading.judged_value}" if reading.judged_value else ""
    return f"{reading.verdict} {reading.value}{judged}"


def scorecard_frame(verdicts: Mapping[str, Any]) -> pd.DataFrame:
    """The scorecard for ``st.table``: one row per rule, one column per candidate.

    Each cell is :attr:`~synthreview.figures.explain.RuleReading.short` (the point, the value
    the rule judged and the verdict); labels are Markdown-escaped, cells wrap.
    """
    by_name = {name: _as_dict(v) for name, v in verdicts.items()}
    rules: list[str] = []
    for v in by_name.values():
        rules += [r for r in v["rules"] if r not in rules]
    columns = {
        name: [rule_reading(v["rules"][r]).short if r in v["rules"] else "N/A" for r in rules]
        + [v["overall"].upper()]
        for name, v in by_name.items()
    }
    labels = [rule_label(r) for r in rules]
    frame = pd.DataFrame(columns, index=pd.Index([*labels, "overall"], name="rule"))
    return reading_table(frame)


def scorecard_table(verdicts: Mapping[str, Any]) -> go.Figure:
    """Policy verdict of every rule (rows) for every candidate (columns), coloured by verdict.

    Parameters
    ----------
    verdicts : mapping of str to Verdicts or Verdicts.to_dict()
    """
    by_name = {name: _as_dict(v) for name, v in verdicts.items()}
    rules: list[str] = []
    for v in by_name.values():
        rules += [r for r in v["rules"] if r not in rules]
    header = ["rule", *by_name]
    cells: list[list[str]] = [[*plot_texts(rules), "overall"]]
    fills: list[list[str]] = [["white"] * (len(rules) + 1)]
    for v in by_name.values():
        texts, colours = [], []
        for rule in rules:
            r = v["rules"].get(rule)
            verdict = r["verdict"] if r else "n/a"
            texts.append(_score_text(r) if r else "N/A")
            colours.append(VERDICT_COLORS[verdict])
        texts.append(v["overall"].upper())
        colours.append(VERDICT_COLORS[v["overall"]])
        cells.append(texts)
        fills.append(colours)
    fig = go.Figure(
        go.Table(
            header={
                "values": plot_texts(header),
                "font": {"size": 15},
                "fill_color": "#eeeeee",
                "align": "left",
            },
            cells={
                "values": cells,
                "fill_color": fills,
                "font": {"size": 14},
                "align": "left",
                "height": 28,
            },
        )
    )
    return apply_style(fig, title="Policy scorecard", height=90 + 30 * (len(rules) + 1))


def rule_overlap_bars(overlaps: pd.DataFrame | Sequence[Mapping[str, Any]]) -> go.Figure:
    """Rows removed by each combination of audit rules (from ``audit.rule_overlaps``)."""
    frame = (
        pd.DataFrame(overlaps, columns=["rules", "n_rows"])
        if not isinstance(overlaps, pd.DataFrame)
        else overlaps
    )
    frame = frame.iloc[::-1]  # largest bar on top
    fig = go.Figure(
        go.Bar(
            x=frame["n_rows"],
            y=plot_texts(frame["rules"]),
            orientation="h",
            marker_color=palette(0),
            text=frame["n_rows"],
            textposition="auto",
        )
    )
    fig.update_xaxes(title="rows removed")
    return apply_style(
        fig, title="Rows removed, by combination of rules", height=max(220, 80 + 40 * len(frame))
    )


def before_after_bars(before: Mapping[str, Any], after: Mapping[str, Any]) -> go.Figure:
    """Headline scores of each candidate before and after curation, grouped by score.

    Parameters
    ----------
    before, after : mapping of str to candidate ``to_dict()``
        Candidates absent from ``after`` are drawn without an "after" bar.
    """
    labels = [HEADLINES[k] for k in _BEFORE_AFTER]
    fig = go.Figure()
    for i, (name, candidate) in enumerate(before.items()):
        for stage, source, opacity in (("before", candidate, 0.45), ("after", after.get(name), 1)):
            if source is None:
                continue
            scores = headline_scores(source)
            fig.add_bar(
                name=plot_text(f"{name} ({stage})"),
                x=labels,
                y=[scores[k][0] for k in _BEFORE_AFTER],
                marker_color=palette(i),
                opacity=opacity,
                marker_pattern_shape="" if stage == "after" else "/",
            )
    fig.update_layout(barmode="group")
    fig.update_yaxes(title="score", range=[0, 1.05])
    # the legend goes below (apply_style), so the plot keeps its CURVE_HEIGHT however many
    # candidates there are: a legend at the right squeezed it to ~90 px in a half column
    return apply_style(fig, title="Before and after curation", height=CURVE_HEIGHT)


def fidelity_curves(candidates: Mapping[str, Any], *, curve: str = "alpha") -> go.Figure:
    """α-precision (``curve="alpha"``) or β-recall curves of several fidelity dicts.

    Parameters
    ----------
    candidates : mapping of label to candidate ``to_dict()`` or its ``fidelity`` dict
        Labels ending in ``"(curated)"`` are drawn dashed next to the original; the holdout
        reference curve (from the first candidate that has one) is drawn in grey.
    curve : {"alpha", "beta"}
        Alaa et al. (2022) §3.1-3.2: the ideal curve is the diagonal.
    """
    key, axis = (
        ("alpha_precision_curve", "alpha") if curve == "alpha" else ("beta_recall_curve", "beta")
    )
    title = "α-precision curve" if curve == "alpha" else "β-recall curve"
    fig = go.Figure()
    fig.add_scatter(
        x=[0, 1], y=[0, 1], mode="lines", name="ideal", line={"color": IDEAL_COLOR, "dash": "dot"}
    )
    bases: list[str] = []
    reference = next(
        (
            (c.get("fidelity", c) or {}).get("holdout_reference")
            for c in candidates.values()
            if isinstance(c, Mapping) and (c.get("fidelity", c) or {}).get("holdout_reference")
        ),
        None,
    )
    ref_points = (reference or {}).get(key) or {}
    if ref_points.get(axis):
        fig.add_scatter(
            x=ref_points[axis],
            y=ref_points["value"],
            mode="lines",
            name="holdout (reference)",
            line={"color": HOLDOUT_COLOR, "width": 3},
        )
    for label, candidate in candidates.items():
        fidelity = candidate.get("fidelity", candidate) if isinstance(candidate, Mapping) else {}
        points = (fidelity or {}).get(key) or {}
        if not points.get(axis):
            continue
        base = label.removesuffix(" (curated)")
        bases += [] if base in bases else [base]
        fig.add_scatter(
            x=points[axis],
            y=points["value"],
            mode="lines",
            name=plot_text(label),
            line={
                "color": palette(bases.index(base)),
                "dash": "dash" if label.endswith("(curated)") else "solid",
            },
        )
    fig.update_xaxes(title=axis, range=[0, 1])
    fig.update_yaxes(title="precision" if curve == "alpha" else "recall", range=[0, 1.02])
    return apply_style(fig, title=title, height=CURVE_HEIGHT)


def reattack_reading_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The re-attack after curation for ``st.table``: one row per attack (``frame``'s index,
    ``release_tables.reattack_frame``: numbers already as text), each value with its 95 %
    interval in one cell, so five columns fit 1280 px; labels and cells Markdown-escaped."""
    table = pd.DataFrame(
        {
            "AUC before": frame["auc_before"] + " (" + frame["auc_before_ci"] + ")",
            "AUC after": frame["auc_after"] + " (" + frame["auc_after_ci"] + ")",
            "TPR at 1 % FPR before": frame["tpr_before"] + " (" + frame["tpr_before_ci"] + ")",
            "TPR at 1 % FPR after": frame["tpr_after"] + " (" + frame["tpr_after_ci"] + ")",
            "worse than before": ["yes" if w else "no" for w in frame["worse"]],
        },
        index=frame.index,
    )
    return reading_table(table)
