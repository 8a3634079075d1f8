"""Glucose-trace metrics as the reviewer sees them (pure data; see :mod:`synthreview.metrics.info`).

Fidelity and privacy of traces are the fidelity and privacy metrics computed on the trace
embedding, so they are not listed again here. The bound functions read
:class:`~synthreview.io.traces.Traces` (``schema=None``); the forecasting metrics train a torch
forecaster inside the glucose section and bind no function (``unbound``).
"""

from __future__ import annotations

from collections.abc import Callable

from synthreview.metrics.glucose.agp import agp_distance, agp_profile
from synthreview.metrics.glucose.consensus import consensus_samples
from synthreview.metrics.glucose.motifs import motif_breadth
from synthreview.metrics.glucose.shift import consensus_shift
from synthreview.metrics.glucose.subjects import subject_privacy
from synthreview.metrics.info import MetricInfo

_GLUCOSYNTH = "Lamp et al. (2023), GlucoSynth"
_FORECAST = "trains a torch forecaster on traces inside the glucose section"


def _motifs(score: str) -> Callable[..., float]:
    """``score`` of :func:`motif_breadth` with its default motif length and tolerance."""

    def compute(real, synthetic, *, holdout=None, schema=None, seed=0) -> float:
        return getattr(motif_breadth(real, synthetic), score)

    compute.__name__ = compute.__qualname__ = f"motif_{score}"
    return compute


def agp_band_distance(real, synthetic, *, holdout=None, schema=None, seed=0) -> float:
    """Mean gap between the real and synthetic AGP percentile curves (mg/dL)."""
    return agp_distance(agp_profile(real), agp_profile(synthetic))


def consensus_shift_error(real, synthetic, *, holdout=None, schema=None, seed=0) -> float:
    """Largest standardized shift of the per-trace consensus metrics (:mod:`.shift`)."""

    def samples(traces):
        return consensus_samples(traces, step_minutes=float(getattr(traces, "step_minutes", 5)))

    return consensus_shift(samples(real), samples(synthetic)).value


def subject_membership_auc(real, synthetic, *, holdout, schema=None, seed=0) -> float:
    """Per-subject membership AUC of :func:`subject_privacy` (needs holdout traces)."""
    if holdout is None:
        raise ValueError("subject_membership_auc needs holdout traces; got holdout=None instead")
    return subject_privacy(real, synthetic, holdout).subject_auc


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
        function=_motifs("vm"),
        inputs="traces",
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
        function=_motifs("coverage"),
        inputs="traces",
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
        function=_motifs("mse"),
        inputs="traces",
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
        unbound=f"{_FORECAST} (tests/test_glucose_engine.py)",
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
        unbound=f"{_FORECAST} (tests/test_glucose_engine.py)",
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
        function=agp_band_distance,
        inputs="traces",
    ),
    MetricInfo(
        name="consensus_shift_error",
        section="glucose",
        label="consensus shift",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="consensus_shift.value",
        citation="Battelino et al. (2019), Diabetes Care 42:1593 (consensus metrics); Cohen "
        "(1988) effect sizes; Hedges & Olkin (1985) standard error",
        meaning="largest gap between the synthetic and training traces' mean of a consensus "
        "metric (mean glucose, time in ranges, CV, GRI, ...), in training standard "
        "deviations; 0.2 is a small, 0.5 a medium effect (Cohen)",
        holdout_meaning="consensus_shift.holdout_reference: the same gap for held-out real "
        "traces, what sampling alone gives",
        fmt=".2f",
        function=consensus_shift_error,
        inputs="traces",
        rules=("consensus_shift",),
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
        unbound=f"{_FORECAST} (tests/test_glucose_parkes_agp.py)",
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
        unbound=f"{_FORECAST} (tests/test_glucose_parkes_agp.py)",
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
        function=subject_membership_auc,
        inputs="traces",
        identical="worst",  # identical windows: every person found
    ),
)
