"""Glucose: glycemic fidelity, motif breadth, forecasting utility and privacy of CGM traces."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import streamlit as st

import app_state
from synthreview.figures import fidelity as fidelity_fig
from synthreview.figures import glucose as fig
from synthreview.figures import privacy as privacy_fig
from synthreview.figures.explain import numbers_as_text, readings_markdown
from synthreview.figures.text import markdown_text
from synthreview.metrics.glucose.clinical import EPISODE_LABELS
from synthreview.metrics.glucose.consensus import CONSENSUS_METRICS
from synthreview.metrics.glucose.motifs import (
    DEFAULT_MOTIF_LENGTH,
    DEFAULT_TOLERANCE_MG_DL,
    PAPER_MOTIF_LENGTH,
    PAPER_TOLERANCE_MG_DL,
)

session = app_state.session()  # this browser session's review

ALPHA = 0.05

app_state.require_review_or_record()  # an opened record's numbers need no data
# the traces themselves: the loaded files (an opened record's only when their sha256 are its own)
review = session.record_rows()
locked = session.locked()  # an opened record's options are shown, not changed
st.header("Glucose traces")
if session.review_kind() != "traces" or (review is not None and not review.traces):
    st.info(
        "This page reviews glucose (CGM) day traces; the review shown holds tables. "
        "Load the glucose demo or upload trace files on the Data page."
    )
    st.page_link("pages/data.py", label="Go to the Data page", icon=":material/folder_open:")
    st.stop()

st.caption(
    "Following GlucoSynth (Lamp et al. 2023): population glycemic statistics with p-values, "
    "motif breadth, a glucose forecaster trained on synthetic and tested on real traces with "
    "the Clarke error grid, and the fidelity and privacy metrics on an LSTM-autoencoder "
    "embedding of the traces (Alaa et al. 2022). The holdout (a fresh real sample) shows what "
    "sampling noise alone costs."
)
traces = review.traces if review is not None else None
shown = {}
if traces is not None:
    shown = {"real": traces["real"].values, **{n: traces[n].values for n in review.candidates}}

st.subheader("Traces")
if traces is None:
    app_state.inputs_needed("The trace heatmaps and the PCA of the traces")
else:
    st.plotly_chart(
        fig.trace_heatmaps(shown, step_minutes=traces["real"].step_minutes, seed=session.seed()),
        key="glucose_heatmaps",
    )

options = session.get_options()
with st.expander("Motif matching (τ, σ)", expanded=False):
    left, right = st.columns(2)
    motif_length = left.number_input(
        "Motif length τ (steps of 5 minutes)", min_value=2, max_value=288,
        value=int(options.motif_length), key="glucose_motif_length", disabled=locked,
    )  # fmt: skip
    motif_tolerance = right.number_input(
        "Tolerance σ (mg/dL per value)", min_value=0.5, max_value=100.0,
        value=float(options.motif_tolerance), step=0.5, key="glucose_motif_tolerance",
        disabled=locked,
    )  # fmt: skip
    st.caption(
        f"Defaults τ = {DEFAULT_MOTIF_LENGTH} (30 minutes), σ = {DEFAULT_TOLERANCE_MG_DL:g} mg/dL: "
        f"GlucoSynth's τ = {PAPER_MOTIF_LENGTH} (4 hours), σ = {PAPER_TOLERANCE_MG_DL:g} mg/dL "
        "find no motif shared even by two samples of real CGM days. Changing them recomputes "
        "the glucose review."
    )
    paper, ours = st.columns(2)
    if paper.button("Use GlucoSynth's settings", key="glucose_motif_paper", disabled=locked):
        motif_length, motif_tolerance = PAPER_MOTIF_LENGTH, PAPER_TOLERANCE_MG_DL
    if ours.button("Use the defaults", key="glucose_motif_default", disabled=locked):
        motif_length, motif_tolerance = DEFAULT_MOTIF_LENGTH, DEFAULT_TOLERANCE_MG_DL
wanted = (motif_length, motif_tolerance)
if wanted != (options.motif_length, options.motif_tolerance) and not locked:
    session.set_options(
        replace(options, motif_length=int(motif_length), motif_tolerance=float(motif_tolerance))
    )
report = app_state.get_report(("glucose",))
results = app_state.section_results(report, "glucose", what="The glucose review")


def _tabs(names) -> list:
    """One tab per candidate; tab labels render Markdown, so each name is shown as text."""
    return st.tabs([markdown_text(name) for name in names])


def _fmt(value: float, digits: int = 3) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.{digits}g}"


def _computed(part: str, what: str) -> dict:
    """Each candidate's ``part`` of its glucose result; a failed one shows its error instead."""
    found = {}
    for name, result in results.items():
        if getattr(result, part) is None:
            app_state.show_error(result.errors.get(part, "unknown"), what=f"{what} of {name}")
        else:
            found[name] = getattr(result, part)
    return found


left, right = st.columns(2)
with left:
    if results:
        first = next(iter(results.values()))
        samples = {"real": first.samples["real"]}
        if "holdout" in first.samples:
            samples["holdout"] = first.samples["holdout"]
        samples.update({n: r.samples["synthetic"] for n, r in results.items()})
        st.plotly_chart(fig.variance_distributions(samples), key="glucose_variance")
with right:
    if traces is not None:
        pca_sources = dict(shown)
        if "holdout" in traces:
            pca_sources["holdout"] = traces["holdout"].values
        st.plotly_chart(fig.trace_pca(pca_sources, seed=session.seed()), key="glucose_pca")

if not results:
    st.stop()

# the release rules judging traces: the value each judged, its line and verdict, written as the
# Overview writes them (figures.explain.rule_reading)
verdicts = session.rule_verdicts(report)
rules = {
    n: readings_markdown(n, v, ("glucose", "fidelity", "privacy")) for n, v in verdicts.items()
}
if any(rules.values()):
    with st.container(key="glucose_rules"):
        st.subheader("Release rules")
        for text in rules.values():
            if text:
                st.markdown(text)

st.subheader("Glycemic metrics")
st.caption(
    f"Means of per-trace metrics. p = Welch t-test (Mann–Whitney U beside it); red cells differ "
    f"significantly from real (p < {ALPHA}), which a faithful generator avoids. Holdout columns "
    "compare a fresh real sample with real. PGS is 0 for every trace whose time in range is 100 %."
)


# static tables whose cells wrap (app_state.TABLE_CSS): they fit 1280 px without scrolling
for tab, result in zip(_tabs(results), results.values(), strict=True):
    with tab:
        st.table(fig.comparison_table(result.metrics, result.holdout_metrics, alpha=ALPHA))

st.subheader("Clinical consensus: time in ranges, variability, risk")
st.caption(
    "Per-trace metrics of the international consensus (Battelino et al. 2019, 2023): level 1/2 "
    "bands, time in tight range, GMI, CV, the Glycemia Risk Index, LBGI/HBGI, ADRR, J-index, "
    "MAGE, CONGA and CGM wear, checked against iglu. p and red cells as above; MODD needs "
    "several days of one subject and appears in the per-subject table."
)


def _table(rows, reference, labels):
    st.table(fig.comparison_table(rows, reference, alpha=ALPHA, labels=labels))


clinical = {name: r for name, r in results.items() if r.clinical is not None}
for tab, result in zip(_tabs(clinical), clinical.values(), strict=True):
    with tab:
        ref = result.holdout_clinical
        _table(result.clinical.consensus, ref.consensus if ref else None, CONSENSUS_METRICS)
        st.markdown("**Hypo- and hyperglycemic episodes** (≥ 15 minutes beyond the threshold, "
                    "ended by ≥ 15 minutes back)")  # fmt: skip
        _table(result.clinical.episodes, ref.episodes if ref else None, EPISODE_LABELS)
        # day and night one below the other: seven columns do not fit half a 1280 px page
        st.markdown("**Day (06:00–24:00)**")
        _table(result.clinical.day, ref.day if ref else None, CONSENSUS_METRICS)
        st.markdown("**Night (00:00–06:00)**")
        _table(result.clinical.night, ref.night if ref else None, CONSENSUS_METRICS)
        if result.clinical.subjects is not None:
            st.markdown("**Per subject** (all days of a subject together)")
            _table(result.clinical.subjects, ref.subjects if ref else None, CONSENSUS_METRICS)

if clinical:
    st.subheader("Ambulatory glucose profile")
    first = next(iter(clinical.values()))
    profiles = {"real": first.agp["real"]}
    if "holdout" in first.agp:
        profiles["holdout"] = first.agp["holdout"]
    profiles.update({n: r.agp["synthetic"] for n, r in clinical.items()})
    st.plotly_chart(fig.agp_overlay(profiles), key="glucose_agp")
    reference_distance = first.holdout_clinical.agp_distance if first.holdout_clinical else None
    st.table(fig.agp_distance_table({n: r.clinical.agp_distance for n, r in clinical.items()},
                                    reference_distance))  # fmt: skip
    st.caption(
        "5, 25, 50, 75 and 95 % percentiles of glucose in 15-minute bins of the day, all days "
        "stacked. The distance is the mean gap between the five curves of real and each source; "
        "the holdout row shows what a fresh real sample gives (lower is better)."
    )

st.subheader("Motif breadth")
rows = []
for name, result in results.items():
    rows.append({"source": name, **result.motifs.to_dict()})
reference = next((r.holdout_motifs for r in results.values() if r.holdout_motifs), None)
if reference is not None:
    rows.append({"source": "real vs holdout (reference)", **reference.to_dict()})
st.dataframe(numbers_as_text(pd.DataFrame(rows)), hide_index=True, key="glucose_motifs")
st.caption(
    f"Motifs are chunks of {motif_length} readings; two match when every reading falls in the "
    f"same {motif_tolerance:g} mg/dL cell. VM: share of synthetic motifs seen in real traces; "
    "coverage: share of real motifs the candidate produces (both higher is better); MSE "
    "between motif frequencies (lower is better). The reference row shows what a second real "
    "sample reaches."
)

st.subheader("Forecasting utility and the Clarke error grid")
forecasts = _computed("forecast", "Forecast")
if forecasts:
    first = next(iter(forecasts.values()))
    st.caption(
        f"An LSTM predicts glucose {first.horizon_minutes:.0f} minutes ahead from the past "
        f"{first.history_minutes:.0f} minutes, trained on each candidate (TSTR) or on real "
        f"traces (TRTR), tested on {first.test_set} traces ({first.tstr.n_test_windows} "
        "windows). Zone A is clinically accurate; C, D and E are clinically risky."
    )
    rmse = {name: f.tstr.rmse for name, f in forecasts.items()}
    st.plotly_chart(fig.forecast_rmse(rmse, trtr_rmse=first.trtr.rmse), key="glucose_rmse")
    zones = {"TRTR (real)": first.trtr.clarke.to_dict()}
    zones.update({f"{n} (TSTR)": f.tstr.clarke.to_dict() for n, f in forecasts.items()})
    st.plotly_chart(fig.clarke_zone_bars(zones), key="glucose_zone_bars")
    parkes = {"TRTR (real)": first.trtr.accuracy}
    parkes.update({f"{n} (TSTR)": f.tstr.accuracy for n, f in forecasts.items()})
    parkes = {k: v for k, v in parkes.items() if v is not None}
    if parkes:
        st.plotly_chart(
            fig.clarke_zone_bars({k: dict(v.percent) for k, v in parkes.items()},
                                 title="Parkes zones (type 1)"),
            key="glucose_parkes_bars",
        )  # fmt: skip
        st.dataframe(
            pd.DataFrame(
                [{"model": k, "MARD %": v.mard, "within 15 mg/dL / 15 % (%)": v.within_15,
                  "Parkes A+B %": v.percent["A"] + v.percent["B"]} for k, v in parkes.items()]
            ).round(2),
            hide_index=True,
            key="glucose_point_accuracy",
        )  # fmt: skip
        st.caption(
            "Parkes (consensus) error grid for type 1 diabetes, edges from Pfützner et al. 2013 "
            "Table 1; MARD = mean |error| / reference (lower is better); the 15/15 share is the "
            "ISO 15197:2013 criterion (higher is better)."
        )
    for tab, (name, forecast) in zip(_tabs(forecasts), forecasts.items(), strict=True):
        with tab:
            grid, shares = st.columns([3, 2])
            clarke = forecast.tstr.clarke
            grid.plotly_chart(
                fig.clarke_grid(clarke.reference, clarke.prediction,
                                title=f"Clarke error grid: trained on {name}"),
                key=f"glucose_clarke_{name}",
            )  # fmt: skip
            percent = pd.DataFrame(
                {"TSTR %": clarke.to_dict(), "TRTR %": forecast.trtr.clarke.to_dict()}
            ).rename_axis("zone")
            shares.dataframe(percent.round(1), key=f"glucose_zones_{name}")
            shares.metric("TSTR RMSE (mg/dL)", _fmt(forecast.tstr.rmse, 4),
                          delta=f"{forecast.tstr.rmse - forecast.trtr.rmse:+.2f} vs TRTR",
                          delta_color="inverse")  # fmt: skip

st.subheader("Fidelity on the trace embedding")
fidelity = _computed("fidelity", "Fidelity")
if fidelity:
    st.caption(
        "α-Precision, β-Recall and authenticity on the 280-d LSTM-autoencoder embedding of the "
        "traces (centre = mean real embedding). Curves on the green diagonal are ideal."
    )
    # IRβ beyond the holdout reads amber ("suspicious"), never as an improvement
    st.table(fig.fidelity_table(fidelity_fig.score_table(fidelity)), hide_index=True)
    st.plotly_chart(fidelity_fig.precision_recall_curves(fidelity), key="glucose_curves")
    st.plotly_chart(fidelity_fig.authenticity_histogram(fidelity), key="glucose_authenticity")

st.subheader("Membership inference on traces")
privacy = _computed("privacy", "Privacy")
if privacy:
    st.caption(
        "Attacks that try to tell training traces from holdout traces using only the released "
        "traces: the Hide-and-Seek seekers on the traces themselves (nearest neighbour, GRU "
        "classifier) and the tabular attacks on the embedding. AUC 0.5 is ideal (chance)."
    )
    attacks = privacy_fig.attack_table(privacy)
    for tab, (name, result) in zip(_tabs(privacy), privacy.items(), strict=True):
        with tab:
            st.plotly_chart(privacy_fig.roc_overlay(result), key=f"glucose_roc_{name}")
            main, more = fig.attack_tables(attacks, name)
            if not main.empty:
                st.table(main)  # riskiest attack first
                st.caption("More figures of the same attacks: TPR at 0.1 % FPR, the membership "
                           "advantage and the challenge accuracy.")  # fmt: skip
                st.table(more)
elif not session.holdout_given():
    st.warning("No holdout traces: membership attacks need them as non-members.")

st.subheader("Privacy per person")
per_person = fig.subject_privacy_table(results)
if not per_person.empty:
    st.caption(
        "The attacks above judge one day at a time; a regulator protects the person. Each real "
        "window's distance to the closest synthetic trace (mg/dL RMS) scores it, and a "
        "subject's score is the max over its windows (one memorised day discloses the person; a "
        "mean would dilute it). Subject AUC compares subjects found only in the training traces "
        "with subjects found only in the holdout (0.5 = chance). A subject is memorised when "
        "one of its windows is closer to a synthetic trace than a fifth of the holdout's median "
        "distance; the audit can drop every synthetic window drawn from such a subject."
    )
    # one row per measure, one column per candidate: it grows down, not sideways
    st.table(fig.subject_privacy_reading(per_person))
    for name, memorised in zip(per_person["candidate"], per_person["memorised subjects"],
                               strict=True):  # fmt: skip
        if memorised != "none":
            # subject ids come from the uploaded file: shown as text, never as Markdown
            st.warning(markdown_text(f"{name}: traces of subjects {memorised} are reproduced."))
    st.dataframe(numbers_as_text(fig.subject_rows(results)), hide_index=True,
                 key="glucose_subjects_table")  # fmt: skip
elif not session.holdout_given():
    st.warning("No holdout traces: per-person privacy needs them as non-members.")

st.subheader("Plausibility of the traces")
plausible = fig.plausibility_table(results)
if not plausible.empty:
    st.caption(
        "Shares of traces with a reading outside the CGM sensor's reporting range (Dexcom "
        "G6/G7: 40–400 mg/dL; FreeStyle Libre 2/3: 40–500) or a net change faster than a CGM "
        "reports over 30 minutes; the last row is what the same rule flags on real traces "
        "(its expected false-positive rate). The audit removes flagged traces."
    )
    st.dataframe(numbers_as_text(plausible), hide_index=True, key="glucose_plausibility")
