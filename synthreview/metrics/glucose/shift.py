"""Consensus shift: how far a candidate's clinical consensus metrics sit from the real traces'.

A clinician reads a CGM population through the international consensus metrics (Battelino et
al. 2019, *Diabetes Care* 42:1593; the 2023 update): mean glucose, time in ranges, CV, GMI,
GRI and the risk and variability indices of :mod:`.consensus`. A generator whose days sit
40 mg/dL too high keeps their shape (the embedding's fidelity scores and the forecaster barely
see it, issue 27) but moves every one of those metrics. This module measures that move per
metric as a standardized mean difference and judges the worst one with its noise. The metrics
compared are :data:`SHIFT_METRICS` (GMI and CGM wear left out, for the reasons given there).

Per metric m, over the traces where it is finite (``n_r`` real, ``n_s`` synthetic)::

    d_m  = (mean_s - mean_r) / sd_r
    se_m = sqrt(sd_s**2 / (n_s * sd_r**2) + 1 / n_r + d_m**2 / (2 * (n_r - 1)))

``d_m`` is Cohen's d with the real traces' sample sd (ddof = 1) as the scale (Glass's Δ: the
real traces are the control group, so a candidate with a different spread does not move its
own yardstick). ``se_m`` is its large-sample standard error by the delta method, as Hedges &
Olkin (1985, *Statistical Methods for Meta-Analysis*, ch. 5) give it for Glass's estimator,
without assuming equal variances: the two means' sampling variances in units of ``sd_r²``, plus
the variance that the estimated scale itself adds (``var(sd_r) ≈ sd_r² / (2 (n_r - 1))`` for
roughly normal values). The approximation is fair for a few dozen traces per side and
understates the noise of skewed metrics (time below 54 mg/dL) on a handful of traces.

The worst metric decides: ``value = max_m |d_m|`` and its lower bound
``max_m max(0, |d_m| - z se_m)``, with ``z`` the one-sided normal quantile at
``1 - (1 - confidence) / M`` over the ``M`` metrics compared (Bonferroni, so all M bounds hold
together with the family-wise ``confidence``): the largest of some twenty noisy differences of
two real samples sits well above each one's expectation, as the worst of K membership attacks
does (:mod:`synthreview.judgement.rules`). Cohen (1988) calls d = 0.2 small, 0.5 medium and
0.8 large.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.metrics.glucose.clinical import TRACE_METRICS

#: family-wise confidence of the lower bound over the metrics compared
CONFIDENCE = 0.95
#: metrics compared: the per-trace consensus metrics except CGM wear (``active``), which
#: describes the recording, not the glucose (a generator emits gap-free traces: against the
#: shared CGM days, 95 % +- 6 % active, every candidate would read d = 0.8), and GMI, an affine
#: function of mean glucose whose d is mean glucose's (counted twice, it widens the bound)
SHIFT_METRICS: tuple[str, ...] = tuple(m for m in TRACE_METRICS if m not in ("active", "gmi"))
#: columns of :func:`consensus_shift_details`
DETAIL_COLUMNS = ("mean_real", "sd_real", "n_real", "mean_synthetic", "sd_synthetic",
                  "n_synthetic", "d", "se", "lower")  # fmt: skip


@dataclass(frozen=True)
class ConsensusShift:
    """Standardized shift of the consensus metrics of a candidate from the real traces'.

    Attributes
    ----------
    value : float
        ``max |d|`` over the metrics compared, in real standard deviations; range [0, inf),
        lower is better, 0 = the same means. NaN when no metric could be compared.
    lower : float
        Largest per-metric lower bound ``max(0, |d| - z se)`` (Bonferroni over
        ``n_metrics``, family-wise ``confidence``); the number a rule judges.
    metric : str
        The metric with the largest ``|d|`` (``""`` when none was compared).
    lower_metric : str
        The metric with the largest lower bound (usually ``metric``).
    n_metrics : int
        Metrics compared (finite values on >= 2 traces of each side, real sd > 0).
    confidence : float
        Family-wise confidence of the lower bounds.
    z : float
        One-sided normal quantile at ``1 - (1 - confidence) / n_metrics`` (NaN without any).
    n_real, n_synthetic : int
        Traces on each side (a metric may use fewer: those where it is finite).
    d, se : Mapping[str, float]
        Per compared metric: the standardized difference (signed, synthetic minus real) and
        its standard error.
    """

    value: float
    lower: float
    metric: str
    lower_metric: str
    n_metrics: int
    confidence: float
    z: float
    n_real: int
    n_synthetic: int
    d: Mapping[str, float] = field(default_factory=dict)
    se: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{value, lower, metric, lower_metric, n_metrics, ..., d, se}``."""
        return {
            "value": self.value,
            "lower": self.lower,
            "metric": self.metric,
            "lower_metric": self.lower_metric,
            "n_metrics": self.n_metrics,
            "confidence": self.confidence,
            "z": self.z,
            "n_real": self.n_real,
            "n_synthetic": self.n_synthetic,
            "d": dict(self.d),
            "se": dict(self.se),
        }


def _columns(frame: object, name: str, metrics: Sequence[str]) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise DataError(
            f"{name} must be a DataFrame of per-trace consensus metrics (consensus_samples); "
            f"got {type(frame).__name__} instead"
        )
    missing = [m for m in metrics if m not in frame.columns]
    if missing:
        raise DataError(
            f"{name} is missing consensus metrics {missing}; expected the columns of "
            "consensus_samples"
        )
    return frame[list(metrics)].apply(pd.to_numeric, errors="coerce")


def _moments(values: np.ndarray) -> tuple[float, float, int]:
    # sorted: the sums run in one order whatever the order of the traces (equal, not close)
    finite = np.sort(values[np.isfinite(values)])
    if finite.size < 2:
        return math.nan, math.nan, int(finite.size)
    return float(finite.mean()), float(finite.std(ddof=1)), int(finite.size)


def consensus_shift_details(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    metrics: Sequence[str] = SHIFT_METRICS,
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """Per-metric standardized differences of ``synthetic`` from ``real``, with their noise.

    Parameters
    ----------
    real, synthetic : DataFrame
        Per-trace consensus metrics (:func:`~synthreview.metrics.glucose.consensus.
        consensus_samples`), one row per trace.
    metrics : sequence of str, default=SHIFT_METRICS
        Columns compared.
    confidence : float, default=0.95
        Family-wise confidence of the ``lower`` column (Bonferroni over the metrics compared).

    Returns
    -------
    DataFrame indexed by metric, columns :data:`DETAIL_COLUMNS`
        ``d`` (signed), ``se`` and ``lower = max(0, |d| - z se)``; NaN where the metric was not
        compared (real sd 0, or fewer than 2 finite values on a side).
    """
    if not 0 < confidence < 1:
        raise DataError(f"confidence must be in (0, 1); got {confidence!r} instead")
    r = _columns(real, "real", metrics)
    s = _columns(synthetic, "synthetic", metrics)
    rows = {}
    for m in metrics:
        mean_r, sd_r, n_r = _moments(r[m].to_numpy(dtype=np.float64))
        mean_s, sd_s, n_s = _moments(s[m].to_numpy(dtype=np.float64))
        d = se = math.nan
        if n_r >= 2 and n_s >= 2 and sd_r > 0:
            d = (mean_s - mean_r) / sd_r
            # Hedges & Olkin (1985): both means' variances in sd_r units + the scale's own
            se = math.sqrt(sd_s**2 / (n_s * sd_r**2) + 1 / n_r + d**2 / (2 * (n_r - 1)))
        rows[m] = {"mean_real": mean_r, "sd_real": sd_r, "n_real": n_r,
                   "mean_synthetic": mean_s, "sd_synthetic": sd_s, "n_synthetic": n_s,
                   "d": d, "se": se}  # fmt: skip
    details = pd.DataFrame.from_dict(rows, orient="index", columns=list(DETAIL_COLUMNS[:-1]))
    compared = int(details["d"].notna().sum())
    z = float(norm.ppf(1 - (1 - confidence) / compared)) if compared else math.nan
    details["lower"] = (details["d"].abs() - z * details["se"]).clip(lower=0.0)
    return details


def consensus_shift(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    metrics: Sequence[str] = SHIFT_METRICS,
    confidence: float = CONFIDENCE,
) -> ConsensusShift:
    """Worst standardized shift of the consensus metrics, with its Bonferroni lower bound.

    Parameters
    ----------
    real, synthetic : DataFrame
        Per-trace consensus metrics of the training traces and of the candidate
        (:func:`~synthreview.metrics.glucose.consensus.consensus_samples`).
    metrics : sequence of str, default=SHIFT_METRICS
        Consensus metrics compared (the per-trace ones but CGM wear and GMI).
    confidence : float, default=0.95
        Family-wise confidence of the lower bound.

    Returns
    -------
    ConsensusShift
        ``value`` = max |d| in [0, inf), lower is better (0 = same means; Cohen 1988: 0.2
        small, 0.5 medium, 0.8 large); ``lower`` its bound (module docstring). With no metric
        comparable (a single trace, constant real values) the value is NaN and an
        :class:`~synthreview.errors.UndefinedMetricWarning` says why.

    Examples
    --------
    >>> real = pd.DataFrame({"mean": [100.0, 120.0, 140.0], "tir": [90.0, 80.0, 70.0]})
    >>> shifted = pd.DataFrame({"mean": [140.0, 160.0, 180.0], "tir": [90.0, 80.0, 70.0]})
    >>> shift = consensus_shift(real, shifted, metrics=["mean", "tir"])
    >>> shift.metric, round(shift.value, 3), round(shift.se["mean"], 3)
    ('mean', 2.0, 1.291)
    """
    details = consensus_shift_details(real, synthetic, metrics=metrics, confidence=confidence)
    compared = details[details["d"].notna()]
    n_real, n_synthetic = len(real), len(synthetic)
    if compared.empty:
        warnings.warn(
            f"no consensus metric could be compared ({n_real} real and {n_synthetic} synthetic "
            "traces; each metric needs >= 2 finite values per side and a real sd > 0); the "
            "consensus shift is NaN",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return ConsensusShift(math.nan, math.nan, "", "", 0, confidence, math.nan,
                              n_real, n_synthetic)  # fmt: skip
    size = compared["d"].abs()
    # ties resolve to the first metric in consensus order, the same on every run; with every
    # bound at 0 the worst point names the bound too
    metric = str(size.idxmax())
    lower_metric = str(compared["lower"].idxmax()) if compared["lower"].max() > 0 else metric
    n = len(compared)
    return ConsensusShift(
        value=float(size[metric]),
        lower=float(compared["lower"][lower_metric]),
        metric=metric,
        lower_metric=lower_metric,
        n_metrics=n,
        confidence=confidence,
        z=float(norm.ppf(1 - (1 - confidence) / n)),
        n_real=n_real,
        n_synthetic=n_synthetic,
        d={m: float(v) for m, v in compared["d"].items()},
        se={m: float(v) for m, v in compared["se"].items()},
    )
