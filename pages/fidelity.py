"""Fidelity: α-Precision / β-Recall curves, authenticity, PRDC and per-feature distances."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import app_state
from synthreview.figures import fidelity as fig
from synthreview.metrics.fidelity.features import pca_projection

PCA_KEY = "_fidelity_pca"

review = app_state.require_review()
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


def _fmt(value: float) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.3f}"


st.subheader("Scores")
labels = {"ip_alpha": "IPα (fidelity)", "ir_beta": "IRβ (diversity)",
          "authenticity": "Authenticity"}  # fmt: skip
for name, result in reports.items():
    st.markdown(f"**{name}**")
    ref = result.holdout_reference
    for column, (score, label) in zip(st.columns(3), labels.items(), strict=True):
        value = getattr(result, score)
        lo, hi = result.ci.get(score, (math.nan, math.nan))
        reference = getattr(ref, score) if ref is not None else math.nan
        column.metric(
            label, _fmt(value),
            delta=None if ref is None else f"{value - reference:+.3f} vs holdout",
            delta_color="normal" if score != "authenticity" else "off",
            help=f"95 % bootstrap interval [{_fmt(lo)}, {_fmt(hi)}]; holdout reference "
            f"{_fmt(reference)}. Range 0–1, higher is better.",
        )  # fmt: skip
        column.caption(f"95 % CI [{_fmt(lo)}, {_fmt(hi)}] · holdout {_fmt(reference)}")
if review.holdout is None:
    st.warning("No holdout table: scores cannot be compared with a fresh real sample.")

st.subheader("α-Precision and β-Recall curves")
st.plotly_chart(fig.precision_recall_curves(reports), key="fidelity_curves")

st.subheader("Authenticity per row")
st.plotly_chart(fig.authenticity_histogram(reports), key="fidelity_authenticity")

st.subheader("Precision, recall, density and coverage (Naeem et al. 2020, k = 5)")
st.dataframe(fig.prdc_table(reports), hide_index=True, key="fidelity_prdc")

if review.kind != "table" or report.context is None:
    st.stop()

st.subheader("PCA of the encoded rows (fitted on real only)")
sources = {"real": review.real.frame}
if review.holdout is not None:
    sources["holdout"] = review.holdout.frame
sources.update({name: table.frame for name, table in review.synthetic.items()})
encoded = report.context.encoded or report.embedded
pca_key = (app_state.review_digest(review), app_state.seed())
if st.session_state.get(PCA_KEY, (None,))[0] != pca_key:
    try:
        others = {s: x for s, x in encoded.items() if s != "real"}
        frame = pca_projection(encoded["real"], others, max_points=1500, seed=app_state.seed())
        st.session_state[PCA_KEY] = (pca_key, frame)
    except Exception as exc:  # a failed projection must not hide the tables below
        st.session_state[PCA_KEY] = (pca_key, exc)
pca = st.session_state[PCA_KEY][1]
if isinstance(pca, Exception):
    app_state.show_error(f"{type(pca).__name__}: {pca}", what="The PCA projection")
else:
    event = st.plotly_chart(
        fig.pca_scatter(pca, review.candidates), key="fidelity_pca", on_select="rerun",
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
    st.dataframe(features, hide_index=True, key="fidelity_features")
    combos = reports[name].combinations
    if combos is not None:
        st.caption(
            f"Pairwise unique combinations of categorical values: real {combos.real}, "
            f"{name} {combos.synthetic}, of which {combos.synthetic_not_in_real} never occur in "
            "real."
        )
    column = st.selectbox("Column", list(features["column"]), key="fidelity_feature_column")
    values = {"real": review.real.frame[column], name: review.synthetic[name].frame[column]}
    if review.holdout is not None:
        values = {"real": values["real"], "holdout": review.holdout.frame[column],
                  name: values[name]}  # fmt: skip
    st.plotly_chart(
        fig.feature_overlay(values, column=column, kind=review.schema.kinds[column],
                            candidates=review.candidates),
        key="fidelity_overlay",
    )  # fmt: skip
