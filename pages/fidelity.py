"""Fidelity: α-Precision / β-Recall curves, authenticity, PRDC and per-feature distances."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import app_state
from synthreview.figures import explain
from synthreview.figures import fidelity as fig
from synthreview.figures.text import markdown_text

session = app_state.session()  # this browser session's review

app_state.require_review_or_record()  # an opened record's numbers need no data
st.header("Fidelity")
st.caption(
    "Alaa et al. (2022): α-Precision asks whether synthetic rows look like typical real rows, "
    "β-Recall whether typical real rows are covered by synthetic rows, Authenticity whether a "
    "synthetic row is closer to a training row than any other training row is (a copy). "
    "Curves on the green diagonal are ideal; the grey curve and the reference values are what a "
    "fresh real sample (the holdout) scores, i.e. what sampling noise alone costs."
)

report = app_state.get_report(("fidelity",))
reports = app_state.section_results(report, "fidelity")
if not reports:
    st.stop()


st.subheader("Scores")
suspicious = []
for name, result in reports.items():
    st.markdown(f"**{markdown_text(name)}**")
    ref = result.holdout_reference
    for column, score in zip(st.columns(3), fig.SCORES, strict=True):
        value = getattr(result, score)
        lo, hi = result.ci.get(score, (math.nan, math.nan))
        reference = getattr(ref, score) if ref is not None else math.nan
        # the delta's colour says how the value reads beside a fresh real sample: an IRβ
        # beyond it is amber (memorisation), never green (registry: suspicious_above_holdout)
        gap = explain.holdout_gap(score, value, reference, interval=(lo, hi))
        column.metric(
            explain.metric_label(score), explain.format_metric(score, value),
            delta=None if gap is None else gap.text,
            delta_color="off" if gap is None else gap.color,
            help=explain.metric_help(score),
        )  # fmt: skip
        column.caption(
            f"95 % CI {explain.format_metric(score, lo)} to {explain.format_metric(score, hi)}"
            f" · holdout {explain.format_metric(score, reference)}"
            + ("" if ref is not None else " (no holdout table)")
            + ("" if gap is None else f" · {gap.reading}")
        )
        if gap is not None and gap.suspicious:
            suspicious.append(f"{explain.metric_label(score)} of {name}")
if suspicious:
    st.warning(
        markdown_text(
            f"Beyond a fresh real sample: {', '.join(suspicious)}. A recall above the holdout's "
            "means the candidate reproduces training rows (memorisation), not a better generator."
        )
    )
if not session.holdout_given():
    st.warning("No holdout table: scores cannot be compared with a fresh real sample.")

# the release rules of this section: the value each judged, its line and verdict, written as the
# Overview writes them (figures.explain.rule_reading)
verdicts = session.rule_verdicts(report)
rules = {n: explain.readings_markdown(n, v, "fidelity") for n, v in verdicts.items()}
if any(rules.values()):
    with st.container(key="fidelity_rules"):
        st.subheader("Release rules")
        for text in rules.values():
            if text:
                st.markdown(text)

st.subheader("α-Precision and β-Recall curves")
st.plotly_chart(session.view("fidelity_curves", lambda: fig.precision_recall_curves(reports)),
                key="fidelity_curves")  # fmt: skip

st.subheader("Authenticity per row")
st.plotly_chart(
    session.view("fidelity_authenticity", lambda: fig.authenticity_histogram(reports)),
    key="fidelity_authenticity",
)

st.subheader("Precision, recall, density and coverage (Naeem et al. 2020, k = 5)")
st.dataframe(
    fig.prdc_text_table(reports),
    hide_index=True,
    key="fidelity_prdc",
    column_config={
        column: st.column_config.TextColumn(
            explain.metric_label(f"prdc_{column}"), help=explain.metric_help(f"prdc_{column}")
        )
        for column in fig.PRDC_SCORES
    },
)

if report.kind != "table":
    st.stop()
# the rows themselves: the loaded files (an opened record's only when their sha256 are its own)
review = session.record_rows()
record = session.opened_record()
if record is None and report.context is None:
    st.stop()

st.subheader("PCA of the encoded rows (fitted on real only)")
# a live run stores it; an opened record's is drawn from its own input files
pca = session.projection() if record is None else session.record_projection()
if review is None:
    app_state.inputs_needed("The PCA of the rows")
elif pca is None:
    st.info("The projection is computed with the review; press Run review.")
elif isinstance(pca, str):
    app_state.show_error(pca, what="The PCA projection")
else:
    sources = {"real": review.real.frame}
    if review.holdout is not None:
        sources["holdout"] = review.holdout.frame
    sources.update({name: table.frame for name, table in review.synthetic.items()})
    event = st.plotly_chart(
        session.view("fidelity_pca", lambda: fig.pca_scatter(pca, review.candidates)),
        key="fidelity_pca", on_select="rerun",
        selection_mode=("lasso", "box"),
    )  # fmt: skip
    points = event["selection"]["points"] if event else []
    if points:
        chosen = [(p["customdata"][0], int(p["customdata"][1])) for p in points]
        st.caption(f"{len(chosen)} rows selected (lasso or box on the chart).")
        rows = [
            sources[source].iloc[[row_id]].assign(source=source, row_id=row_id)
            for source, row_id in chosen[:500]
            if source in sources
        ]
        table = pd.concat(rows, ignore_index=True)
        st.dataframe(table[["source", "row_id", *review.schema.columns]], hide_index=True,
                     key="fidelity_selected")  # fmt: skip
    else:
        st.caption("Draw a lasso or a box on the chart to list the rows it contains.")

st.subheader("Per-feature distances")
st.caption(
    "Numeric columns on the real range (0–1): Wasserstein-1, Kolmogorov–Smirnov statistic and "
    "quantile RMSE; categorical columns: total variation distance of the proportions. Lower is "
    "better. Click a header to sort."
)
name = st.selectbox("Candidate", list(reports), key="fidelity_feature_candidate")
features = reports[name].features
if features is None:
    st.info("Per-feature distances need the raw tables; none were computed.")
else:
    st.table(fig.feature_text_table(features))  # wraps: fits 1280 px with many columns
    combos = reports[name].combinations
    if combos is not None:
        st.caption(
            f"Pairwise unique combinations of categorical values: real {combos.real}, "
            f"{markdown_text(name)} {combos.synthetic}, of which "
            f"{combos.synthetic_not_in_real} never occur in real."
        )
    column = st.selectbox("Column", list(features["column"]), key="fidelity_feature_column")
    if review is None:
        app_state.inputs_needed("The distribution of a column")
        st.stop()
    values = {"real": review.real.frame[column], name: review.synthetic[name].frame[column]}
    if review.holdout is not None:
        values = {"real": values["real"], "holdout": review.holdout.frame[column],
                  name: values[name]}  # fmt: skip
    st.plotly_chart(
        session.view("fidelity_overlay", lambda: fig.feature_overlay(
            values, column=column, kind=review.schema.kinds[column], candidates=review.candidates
        ), name, column),
        key="fidelity_overlay",
    )  # fmt: skip
