"""Glucose-trace review: glycemic fidelity, motif breadth, forecasting utility, embedding checks.

:func:`evaluate_glucose` is the glucose section of :func:`synthreview.review.evaluate`. For one
synthetic candidate it gathers, following GlucoSynth (Lamp et al. 2023):

- ``metrics``: per-trace glycemic metrics compared real vs synthetic (§7.2, appendix C.2;
  :mod:`synthreview.metrics.glucose.glycemic`), and holdout vs real as the reference a faithful
  generator can hope to reach;
- ``motifs``: VM, coverage and motif-frequency MSE (§3.1, §7.3; :mod:`.motifs`) against the
  holdout (validation) traces when there are some, else against real;
- ``forecast`` and ``clarke``: LSTM forecaster RMSE trained on synthetic (TSTR) and on real
  (TRTR), both tested on holdout, with Clarke error grid zones (§7.4, appendix E);
- ``fidelity`` and ``privacy``: α-precision / β-recall / authenticity and the membership
  attacks on the LSTM-autoencoder embedding of the traces (Alaa et al. 2022, appendix), plus
  the Hide-and-Seek trace seekers (:mod:`.trace_seekers`); the fidelity scores' 95 % intervals
  are those of :func:`~synthreview.metrics.fidelity.section.evaluate_fidelity` (centred
  percentile bootstrap of the same estimators on the embedded traces: each holds its score);
- ``consensus_shift``: the largest standardized difference of a consensus metric's mean (mean
  glucose, time in ranges, CV, GRI, ...) from the training traces', with its Bonferroni
  lower bound (:mod:`.shift`); the holdout's beside it as the reference;
- ``subject_privacy``: the nearest-neighbour seeker and DCR aggregated per subject, with the
  subjects whose traces the candidate reproduces (:mod:`.subjects`);
- ``plausibility``: traces with readings outside the sensor range or changing faster than a
  CGM sensor reports (:mod:`.plausibility`), the evidence of the trace audit rules.

What depends only on real and holdout (the embedding, the TRTR forecaster, the reference
statistics) is a :class:`GlucoseContext`: build it once with :func:`prepare_glucose` and pass
it to every candidate, or let :func:`evaluate_glucose` reuse the last one it built for the same
data, seed and device (kept in memory, keyed on a full digest of the values).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from synthreview.embeddings.lstm_autoencoder import LSTMAutoencoderEmbedding, fit_lstm_autoencoder
from synthreview.errors import DataError, UndefinedMetricWarning, attempt
from synthreview.io.row_hash import value_order
from synthreview.memo import Memo, array_digest, remember
from synthreview.metrics.fidelity.section import evaluate_fidelity
from synthreview.metrics.glucose.agp import AGPProfile, start_minutes
from synthreview.metrics.glucose.clinical import (
    ClinicalComparison,
    ClinicalSamples,
    clinical_samples,
    compare_clinical,
)
from synthreview.metrics.glucose.forecast import (
    ForecastEvaluation,
    ForecastUtility,
    evaluate_forecaster,
    train_forecaster,
)
from synthreview.metrics.glucose.glycemic import (
    GlycemicComparison,
    compare_glycemic,
    glycemic_samples,
)
from synthreview.metrics.glucose.motifs import (
    DEFAULT_MOTIF_LENGTH,
    DEFAULT_TOLERANCE_MG_DL,
    MotifBreadth,
    MotifSet,
    motif_breadth,
    motif_set,
)
from synthreview.metrics.glucose.plausibility import (
    PlausibilityReport,
    plausibility_samples,
    trace_plausibility,
)
from synthreview.metrics.glucose.seekers import trace_attacks
from synthreview.metrics.glucose.shift import ConsensusShift, consensus_shift
from synthreview.metrics.glucose.subjects import SubjectPrivacy, subject_privacy
from synthreview.metrics.privacy.section import evaluate_privacy_arrays
from synthreview.results import to_jsonable

__all__ = [
    "GlucoseContext",
    "GlucoseReport",
    "evaluate_glucose",
    "prepare_glucose",
]

Progress = Callable[[float, str], None]
#: share of real traces held back as the forecasting test set when there is no holdout
TEST_SHARE_WITHOUT_HOLDOUT = 0.2


def _values(traces: Any, name: str) -> np.ndarray:
    values = np.asarray(getattr(traces, "values", traces), dtype=np.float64)
    if values.ndim != 2 or len(values) < 2:
        raise DataError(f"{name} must hold >= 2 traces of shape (n, n_steps); got {values.shape}")
    return values


def _in_value_order(values: np.ndarray) -> np.ndarray:
    """``values`` (traces) sorted by their values: the same rows for any input order.

    Models are trained by minibatch and test windows subsampled by position; training and
    testing on traces in this order makes every estimate independent of the files' row order.
    """
    return values[value_order(pd.DataFrame(values))]


def _key(real: np.ndarray, holdout: np.ndarray | None, *settings: object) -> str:
    return f"{array_digest(real)}:{array_digest(holdout)}{settings!r}"


@dataclass(frozen=True, eq=False)
class GlucoseContext:
    """Everything computed from real and holdout alone, shared by every candidate."""

    key: str
    real_samples: pd.DataFrame = field(repr=False)
    holdout_samples: pd.DataFrame | None = field(repr=False)
    holdout_metrics: tuple[GlycemicComparison, ...] | None
    reference_motifs: MotifSet = field(repr=False)
    motif_reference: str
    holdout_motifs: MotifBreadth | None
    test: np.ndarray = field(repr=False)
    test_set: str
    trtr: ForecastEvaluation = field(repr=False)
    embedding: LSTMAutoencoderEmbedding = field(repr=False)
    embedded: Mapping[str, np.ndarray] = field(repr=False)
    real_clinical: ClinicalSamples | None = field(default=None, repr=False)
    holdout_clinical: ClinicalSamples | None = field(default=None, repr=False)
    holdout_comparison: ClinicalComparison | None = None
    start_minute: float = 0.0
    plausibility: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False)


def prepare_glucose(
    real: Any,
    holdout: Any | None,
    *,
    seed: int = 0,
    device: str = "cpu",
    progress: Progress | None = None,
    motif_length: int = DEFAULT_MOTIF_LENGTH,
    motif_tolerance_mg_dl: float = DEFAULT_TOLERANCE_MG_DL,
) -> GlucoseContext:
    """Fit and compute what every candidate is compared against (seeded, deterministic).

    With a holdout, TRTR trains on all real traces and tests on holdout, and the motif
    reference set is the holdout's. Without one, a seeded 20 % of real traces is held back as
    the forecasting test set (TRTR trains on the rest) and motifs are compared with real.
    Models train, and test windows are drawn, on the traces in a value-defined order
    (``synthreview.io.row_hash.value_order``): the order of the files' rows changes nothing.
    ``motif_length`` (τ, readings) and ``motif_tolerance_mg_dl`` (σ) set the motif matching of
    :mod:`synthreview.metrics.glucose.motifs`; the defaults are τ = 6, σ = 10 (GlucoSynth's 48, 2
    find no motif shared by two samples of real CGM days).
    """
    r = _values(real, "real")
    h = None if holdout is None else _values(holdout, "holdout")
    key = _key(r, h, seed, device, motif_length, motif_tolerance_mg_dl)
    motifs = {"motif_length": motif_length, "tolerance_mg_dl": motif_tolerance_mg_dl}
    note = progress or (lambda fraction, message: None)
    # splits, minibatches and test windows are drawn by position: from a value-defined order
    ordered_r = _in_value_order(r)
    note(0.0, "glycemic metrics of real traces")
    real_samples = glycemic_samples(r)
    # generated traces carry no start time: they are read on real's most common clock start
    starts = start_minutes(real)
    start_minute = float(pd.Series(starts).mode().iloc[0]) if starts.size else 0.0
    real_clinical = clinical_samples(real, default_start=start_minute)
    holdout_samples = holdout_metrics = holdout_motifs = None
    holdout_clinical = holdout_comparison = None
    if h is not None:
        holdout_clinical = clinical_samples(holdout, default_start=start_minute)
        holdout_comparison = compare_clinical(real_clinical, holdout_clinical)
        holdout_samples = glycemic_samples(h)
        holdout_metrics = compare_glycemic(real_samples, holdout_samples)
        reference_motifs, motif_reference = motif_set(h, **motifs), "holdout"
        holdout_motifs = motif_breadth(
            reference_motifs, motif_set(r, **motifs), reference="holdout"
        )
        train, test, test_set = ordered_r, _in_value_order(h), "holdout"
    else:
        reference_motifs, motif_reference = motif_set(r, **motifs), "real"
        rng = np.random.default_rng(seed)
        is_test = np.zeros(len(r), bool)
        is_test[rng.choice(len(r), max(1, round(TEST_SHARE_WITHOUT_HOLDOUT * len(r))), False)] = 1
        train, test, test_set = ordered_r[~is_test], ordered_r[is_test], "real split"
    note(0.1, "training the forecaster on real traces (TRTR)")
    trtr = evaluate_forecaster(train_forecaster(train, seed=seed, device=device), test, seed=seed)
    note(0.4, "training the LSTM autoencoder embedding on real traces")
    embedding = fit_lstm_autoencoder(
        ordered_r,
        seed=seed,
        device=device,
        progress=lambda f, m: note(0.4 + 0.55 * f, m),
    )
    embedded = {"real": embedding.transform(r)}
    if h is not None:
        embedded["holdout"] = embedding.transform(h)
    plausibility = {"real": plausibility_samples(real)}
    if holdout is not None:
        plausibility["holdout"] = plausibility_samples(holdout)
    note(1.0, "reference ready")
    return GlucoseContext(
        key=key,
        real_samples=real_samples,
        holdout_samples=holdout_samples,
        holdout_metrics=holdout_metrics,
        reference_motifs=reference_motifs,
        motif_reference=motif_reference,
        holdout_motifs=holdout_motifs,
        test=test,
        test_set=test_set,
        trtr=trtr,
        embedding=embedding,
        embedded=embedded,
        real_clinical=real_clinical,
        holdout_clinical=holdout_clinical,
        holdout_comparison=holdout_comparison,
        start_minute=start_minute,
        plausibility=plausibility,
    )


@dataclass(frozen=True)
class GlucoseReport:
    """Glucose section of one candidate.

    Attributes
    ----------
    metrics : tuple of GlycemicComparison
        Real vs synthetic, one per glycemic metric; ``p_value`` is Welch's t-test (the
        Mann-Whitney U p-value is kept beside it). p < 0.05 flags a significant difference.
    holdout_metrics : tuple of GlycemicComparison or None
        Real vs holdout: the differences two samples of real data already show.
    motifs : MotifBreadth
        Synthetic motifs against the reference set (holdout, else real); VM and coverage
        higher-better (0-1), MSE lower-better.
    holdout_motifs : MotifBreadth or None
        Real training traces against the holdout set (reference values).
    forecast : ForecastUtility or None
        TSTR and TRTR RMSE (mg/dL, lower is better) and Clarke zones; None if it failed.
    fidelity : FidelityReport or None
        On the LSTM-autoencoder embedding, centre = mean real embedding.
    privacy : PrivacyReport or None
        ``evaluate_privacy_arrays`` on the embedding, with the trace seekers appended to
        ``membership_inference``.
    samples : Mapping[str, DataFrame]
        Per-trace glycemic metrics of ``"real"``, ``"synthetic"`` and ``"holdout"``.
    errors : Mapping[str, str]
        Part (``"forecast"``, ``"fidelity"``, ``"privacy"``) -> why it could not be computed.
    clinical : ClinicalComparison or None
        Consensus metrics, episodes, day/night and AGP distance, real vs synthetic
        (:mod:`.clinical`).
    holdout_clinical : ClinicalComparison or None
        The same for holdout vs real (the reference).
    agp : Mapping[str, AGPProfile]
        AGP percentile bands of ``"real"``, ``"synthetic"`` and ``"holdout"``.
    clinical_samples : Mapping[str, DataFrame]
        Per-trace consensus metrics and episodes of ``"real"``, ``"synthetic"``, ``"holdout"``.
    plausibility : PlausibilityReport or None
        Sensor-range and rate-of-change flags per trace, with their share on real data.
    subject_privacy : SubjectPrivacy or None
        Membership AUC and DCR per subject, memorised subjects (needs a holdout).
    consensus_shift : ConsensusShift or None
        Largest standardized shift of the per-trace consensus metrics from the training
        traces' (:mod:`.shift`), lower is better.
    holdout_consensus_shift : ConsensusShift or None
        The same for holdout vs real (the reference: sampling noise alone).
    """

    metrics: tuple[GlycemicComparison, ...]
    holdout_metrics: tuple[GlycemicComparison, ...] | None
    motifs: MotifBreadth
    holdout_motifs: MotifBreadth | None
    forecast: ForecastUtility | None
    fidelity: Any = None
    privacy: Any = None
    samples: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    errors: Mapping[str, str] = field(default_factory=dict)
    clinical: ClinicalComparison | None = None
    holdout_clinical: ClinicalComparison | None = None
    agp: Mapping[str, AGPProfile] = field(default_factory=dict, repr=False)
    clinical_samples: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    plausibility: PlausibilityReport | None = None
    subject_privacy: SubjectPrivacy | None = None
    consensus_shift: ConsensusShift | None = None
    holdout_consensus_shift: ConsensusShift | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{metrics, motifs, forecast, clarke, fidelity, privacy, errors}`` (JSON-ready)."""
        holdout = {m.metric: m for m in self.holdout_metrics or ()}
        metrics = {}
        for m in self.metrics:
            entry = m.to_dict()
            if m.metric in holdout:
                entry["holdout_mean"] = holdout[m.metric].synthetic_mean
                entry["holdout_p_value"] = holdout[m.metric].p_value
            metrics[m.metric] = entry
        motifs = self.motifs.to_dict()
        if self.holdout_motifs is not None:
            motifs["holdout_reference"] = self.holdout_motifs.to_dict()
        out: dict[str, Any] = {"metrics": metrics, "motifs": motifs}
        if self.clinical is not None:
            clinical = self.clinical.to_dict()
            reference = self.holdout_clinical.to_dict() if self.holdout_clinical else {}
            for part in ("consensus", "episodes", "subjects"):
                out[part] = _with_reference(clinical[part], reference.get(part))
            out["day_night"] = {
                period: _with_reference(
                    clinical["day_night"][period], (reference.get("day_night") or {}).get(period)
                )
                for period in ("day", "night")
            }
            out["agp"] = {
                "distance": clinical["agp_distance"],
                "holdout_distance": reference.get("agp_distance"),
                "profiles": {name: profile.to_dict() for name, profile in self.agp.items()},
            }
        if self.consensus_shift is not None:
            reference = self.holdout_consensus_shift
            out["consensus_shift"] = {
                **self.consensus_shift.to_dict(),
                "holdout_reference": None if reference is None else reference.value,
            }
        if self.forecast is not None:
            out["forecast"] = self.forecast.to_dict()
            out["clarke"] = {
                "tstr": self.forecast.tstr.clarke.to_dict(),
                "trtr": self.forecast.trtr.clarke.to_dict(),
            }
            out["parkes"] = {
                name: part.accuracy.to_dict()
                for name, part in (("tstr", self.forecast.tstr), ("trtr", self.forecast.trtr))
                if part.accuracy is not None
            }
        for part in ("fidelity", "privacy", "plausibility"):
            value = getattr(self, part)
            if value is not None:
                out[part] = value.to_dict()
        if self.subject_privacy is not None:
            subjects = self.subject_privacy.to_dict()
            # the per-window figures beside the per-subject ones
            attacks = getattr(self.privacy, "membership_inference", ()) or ()
            subjects["per_window"] = {
                "trace_nn_seeker_auc": next(
                    (a.auc for a in attacks if a.attack == "trace_nn_seeker"), None
                ),
                "dcr_share_closer_to_train": getattr(
                    getattr(self.privacy, "dcr", None), "share_closer_to_train", None
                ),
            }
            out["subject_privacy"] = subjects
        if self.errors:
            out["errors"] = dict(self.errors)
        return to_jsonable(out)


def _with_reference(
    table: Mapping[str, Any] | None, reference: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Add holdout-vs-real ``holdout_mean`` / ``holdout_p_value`` to each metric's entry."""
    if table is None:
        return None
    out = {}
    for metric, entry in table.items():
        entry = dict(entry)
        if reference and metric in reference:
            entry["holdout_mean"] = reference[metric]["synthetic_mean"]
            entry["holdout_p_value"] = reference[metric]["p_value"]
        out[metric] = entry
    return out


def evaluate_glucose(
    real: Any,
    synthetic: Any,
    holdout: Any | None,
    *,
    seed: int = 0,
    device: str = "cpu",
    progress: Progress | None = None,
    context: GlucoseContext | None = None,
    max_attack: int = 10_000,
    n_bootstrap: int = 200,
    motif_length: int = DEFAULT_MOTIF_LENGTH,
    motif_tolerance_mg_dl: float = DEFAULT_TOLERANCE_MG_DL,
    memo: Memo | None = None,
) -> GlucoseReport:
    """Review one synthetic candidate of glucose traces.

    Parameters
    ----------
    real, synthetic : Traces or array-like of shape (n, n_steps)
        Training traces and the candidate's traces, mg/dL, NaN for gaps.
    holdout : Traces, array-like or None
        Real traces not used for training: the forecasting test set, the motif reference and
        the non-members of the membership attacks.
    seed : int
        Seeds every model and sample; same inputs and seed give the same numbers.
    device : str
        Torch device for the LSTM models.
    progress : callable, optional
        ``progress(fraction, message)``.
    context : GlucoseContext, optional
        From :func:`prepare_glucose` for the same real, holdout, seed and device.
    memo : Memo, optional
        The review's :class:`~synthreview.memo.Memo`: without ``context``, the glucose context
        is prepared once per review and shared by its candidates (never kept beyond it).
    max_attack, n_bootstrap : int
        Passed to the privacy attacks and the fidelity bootstrap (resamples of each interval).
    motif_length, motif_tolerance_mg_dl : int, float, default=6, 10.0
        τ and σ of the motif matching. GlucoSynth's 48 and 2 give VM = coverage = 0 even
        between two real samples of the shared CGM files; τ = 6, σ = 10 give holdout-vs-real
        coverage 0.56-0.65 there and a +40 mg/dL shifted copy 0.49-0.52.

    Returns
    -------
    GlucoseReport
    """
    r = _values(real, "real")
    s = _values(synthetic, "synthetic")
    h = None if holdout is None else _values(holdout, "holdout")
    note = progress or (lambda fraction, message: None)
    key = _key(r, h, seed, device, motif_length, motif_tolerance_mg_dl)
    if context is None:
        # the real side (trained models, embedding) is shared by the candidates of one review
        context = remember(
            memo,
            ("glucose-context", key),
            lambda: prepare_glucose(
                r, h, seed=seed, device=device, progress=lambda f, m: note(0.5 * f, m),
                motif_length=motif_length, motif_tolerance_mg_dl=motif_tolerance_mg_dl,
            ),
        )  # fmt: skip
    elif context.key != key:
        raise DataError(
            "context was prepared for other real/holdout traces, seed, device or motif settings"
        )
    errors: dict[str, str] = {}
    note(0.5, "glycemic metrics and motifs of the candidate")
    synthetic_samples = glycemic_samples(s)
    metrics = compare_glycemic(context.real_samples, synthetic_samples)
    motifs = motif_breadth(
        context.reference_motifs,
        motif_set(s, motif_length=motif_length, tolerance_mg_dl=motif_tolerance_mg_dl),
        reference=context.motif_reference,
    )
    note(0.52, "consensus metrics, episodes and AGP of the candidate")
    clinical = candidate_clinical = None
    if context.real_clinical is not None:
        candidate_clinical = clinical_samples(synthetic, default_start=context.start_minute)
        clinical = compare_clinical(context.real_clinical, candidate_clinical)
    shift = holdout_shift = None
    if context.real_clinical is not None and candidate_clinical is not None:
        real_consensus = context.real_clinical.consensus
        candidate_consensus = candidate_clinical.consensus
        shift = attempt(
            "consensus_shift",
            errors,
            lambda: consensus_shift(real_consensus, candidate_consensus),
        )
        if context.holdout_clinical is not None:
            holdout_consensus = context.holdout_clinical.consensus
            holdout_shift = attempt(
                "consensus_shift_reference",
                errors,
                lambda: consensus_shift(real_consensus, holdout_consensus),
            )
    note(0.55, "training the forecaster on synthetic traces (TSTR)")

    step = float(getattr(real, "step_minutes", 5))

    def forecast() -> ForecastUtility:
        model = train_forecaster(_in_value_order(s), seed=seed, device=device)
        return ForecastUtility(
            tstr=evaluate_forecaster(model, context.test, seed=seed),
            trtr=context.trtr,
            test_set=context.test_set,
            history_minutes=model.history_steps * step,
            horizon_minutes=model.horizon_steps * step,
        )

    forecast_result = attempt("forecast", errors, forecast)
    note(0.7, "fidelity on the LSTM-autoencoder embedding")
    synthetic_z = context.embedding.transform(s)

    def fidelity() -> Any:

        return evaluate_fidelity(
            context.embedded["real"],
            synthetic_z,
            holdout_z=context.embedded.get("holdout"),
            center=context.embedding.center,
            seed=seed,
            n_bootstrap=n_bootstrap,
        )

    fidelity_result = attempt("fidelity", errors, fidelity)
    note(0.8, "membership attacks on traces")

    def privacy() -> Any:
        report = evaluate_privacy_arrays(
            context.embedded["real"], synthetic_z, context.embedded.get("holdout"),
            max_attack=max_attack, seed=seed, progress=lambda f, m: note(0.8 + 0.1 * f, m),
        )  # fmt: skip
        if h is None:
            return report
        seekers = trace_attacks(r, s, h, max_attack=max_attack, n_bootstrap=n_bootstrap,
                                seed=seed, device=device)  # fmt: skip
        return replace(report, membership_inference=(*report.membership_inference, *seekers))

    privacy_result = attempt("privacy", errors, privacy)
    note(0.92, "per-subject privacy and plausibility of the traces")

    def subjects() -> SubjectPrivacy:
        with warnings.catch_warnings():  # an undefined per-subject AUC says why in its note
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            return subject_privacy(real, synthetic, holdout)

    subject_result = attempt("subject_privacy", errors, subjects) if h is not None else None
    plausibility_result = attempt(
        "plausibility",
        errors,
        lambda: trace_plausibility(real, synthetic, holdout, samples=context.plausibility),
    )
    note(1.0, "glucose review done")
    samples = {"real": context.real_samples, "synthetic": synthetic_samples}
    if context.holdout_samples is not None:
        samples["holdout"] = context.holdout_samples
    sources = {"real": context.real_clinical, "synthetic": candidate_clinical,
               "holdout": context.holdout_clinical}  # fmt: skip
    agp = {name: c.agp for name, c in sources.items() if c is not None}
    per_trace = {
        name: pd.concat([c.consensus, c.episodes], axis=1)
        for name, c in sources.items()
        if c is not None
    }
    return GlucoseReport(
        metrics=metrics,
        holdout_metrics=context.holdout_metrics,
        motifs=motifs,
        holdout_motifs=context.holdout_motifs,
        forecast=forecast_result,
        fidelity=fidelity_result,
        privacy=privacy_result,
        samples=samples,
        errors=errors,
        clinical=clinical,
        holdout_clinical=context.holdout_comparison,
        agp=agp,
        clinical_samples=per_trace,
        plausibility=plausibility_result,
        subject_privacy=subject_result,
        consensus_shift=shift,
        holdout_consensus_shift=holdout_shift,
    )
