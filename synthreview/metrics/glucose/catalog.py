"""Glucose-trace metrics as the reviewer sees them (pure data; see :mod:`synthreview.metrics.info`).

Fidelity and privacy of traces are the fidelity and privacy metrics computed on the trace
embedding, so they are not listed again here.
"""

from __future__ import annotations

from synthreview.metrics.info import MetricInfo

_GLUCOSYNTH = "Lamp et al. (2023), GlucoSynth"

METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(
        name="motif_vm",
        section="glucose",
        label="motif VM",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="motifs.vm",
        citation=f"{_GLUCOSYNTH}, §7.3 (breadth, Table 1)",
        meaning="share of distinct synthetic motifs that also occur in real traces",
        holdout_meaning="the same for held-out real traces: how many motifs real data shares",
    ),
    MetricInfo(
        name="motif_coverage",
        section="glucose",
        label="motif coverage",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="motifs.coverage",
        citation=f"{_GLUCOSYNTH}, §7.3 (breadth, Table 1)",
        meaning="share of distinct real motifs the synthetic traces reproduce",
        holdout_meaning="the same for held-out real traces: how many motifs real data shares",
        suspicious_above_holdout=True,
    ),
    MetricInfo(
        name="motif_mse",
        section="glucose",
        label="motif frequency MSE",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="motifs.mse",
        citation=f"{_GLUCOSYNTH}, §7.3 (breadth, Table 1)",
        meaning="mean squared difference of how often each motif occurs",
        holdout_meaning="the same for held-out real traces: sampling noise alone",
        fmt=".2e",
    ),
    MetricInfo(
        name="forecast_rmse",
        section="glucose",
        label="forecast RMSE (TSTR)",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="forecast.tstr_rmse",
        citation=f"{_GLUCOSYNTH}, §7.4 (utility: glucose forecasting, RMSE)",
        meaning="error in mg/dL of a forecaster trained on synthetic traces and tested on real",
        holdout_meaning="forecast.trtr_rmse: the same forecaster trained on real traces",
        fmt=".2f",
    ),
    MetricInfo(
        name="clarke_zone_a",
        section="glucose",
        label="Clarke zone A",
        direction="higher",
        range=(0.0, 100.0),
        ideal=100.0,
        key="clarke.tstr.A",
        citation=f"{_GLUCOSYNTH}, §7.4 (Clarke error grid)",
        meaning="percentage of forecasts within 20 % of the true value (clinically accurate)",
        holdout_meaning="clarke.trtr.A: the same for a forecaster trained on real traces",
        fmt=".1f",
    ),
    MetricInfo(
        name="agp_distance",
        section="glucose",
        label="AGP band distance",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="agp.distance",
        citation="Bergenstal et al. (2013), ambulatory glucose profile; Battelino et al. (2019)",
        meaning="mean gap in mg/dL between the real and synthetic 5/25/50/75/95 % glucose "
        "curves by time of day",
        holdout_meaning="agp.holdout_distance: the same gap between real and held-out real "
        "traces, what sampling alone gives",
        fmt=".1f",
    ),
    MetricInfo(
        name="forecast_mard",
        section="glucose",
        label="forecast MARD (TSTR)",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="parkes.tstr.mard",
        citation="ISO 15197:2013 / Parkes et al. (2000); MARD as in CGM accuracy studies",
        meaning="mean absolute relative difference in % of a forecaster trained on synthetic "
        "traces, tested on real",
        holdout_meaning="parkes.trtr.mard: the same forecaster trained on real traces",
        fmt=".1f",
    ),
    MetricInfo(
        name="parkes_zone_a",
        section="glucose",
        label="Parkes zone A (TSTR)",
        direction="higher",
        range=(0.0, 100.0),
        ideal=100.0,
        key="parkes.tstr.parkes.A",
        citation="Parkes et al. (2000), consensus error grid, type 1",
        meaning="percentage of forecasts with no effect on clinical action",
        holdout_meaning="parkes.trtr.parkes.A: the same for a forecaster trained on real traces",
        fmt=".1f",
    ),
    MetricInfo(
        name="subject_membership_auc",
        section="glucose",
        label="membership AUC per subject",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.5,
        key="subject_privacy.subject_auc",
        citation="Hide-and-Seek NN seeker (paper 002, §3.1) aggregated per subject by the max "
        "of its windows' scores",
        meaning="how well the closeness of a person's days to the synthetic traces tells "
        "training persons from unseen persons; 0.5 = a coin toss",
        holdout_meaning="subject_privacy.window_auc: the same distances judged per day window",
    ),
)
