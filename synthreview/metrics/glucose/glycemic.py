"""Per-trace glycemic metrics and their real-versus-synthetic population comparison.

GlucoSynth (Lamp et al. 2023, §7.2 and appendix C.2, Tables 3-4) judges fidelity on the
population scale: compute clinical metrics per trace, then test whether the synthetic
population differs from the real one (p < 0.05 = a significant difference, which is what a
good generator avoids). Everything here is vectorised over traces: one ``(n, n_steps)`` array
in, one row per trace out, NaN marking missing readings.

Definitions (mg/dL, 5-minute steps unless stated):

- ``variance``: sample variance (``ddof=1``) of the trace's readings; ``sd`` is its root and
  ``cv`` = 100 · sd / mean (%).
- ``tir`` = % of readings in 70-180 inclusive; ``tbr`` = % strictly below 70; ``tar`` = %
  strictly above 180. The three sum to 100. Consensus levels: ``tbr_54`` (< 54), ``tar_250``
  (> 250).
- ``gmi`` = 3.31 + 0.02392 · mean (glucose management indicator, %).
- ``lbgi`` / ``hbgi``: Kovatchev's low/high blood glucose indices, the mean over readings of
  10 f² where f = 1.509 (ln(g)^1.084 - 5.381), counting only f < 0 (low) or f > 0 (high).
- ``gvi`` (Dexcom glycaemic variability index): L / L0 with L = Σ √(Δt² + Δg²) over
  consecutive pairs of valid readings (minutes, mg/dL) and L0 = √((ΣΔt)² + (ΣΔg)²) over the
  same pairs; without gaps ΣΔg = g_last - g_first. A pair with a missing reading is dropped
  from both sums. A flat trace gives 1.0; [100, 110, 100] gives √5 = 2.2361.
- ``pgs`` (Dexcom *Patient Glycaemic Status*) = gvi · mean · (1 - tir / 100). It is 0 for
  every trace with TIR = 100 %, however variable. Not iglu's "Personal Glycemic State".
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.io.cgm_grid import MG_DL_PER_MMOL_L
from synthreview.metrics.glucose.consensus import trace_matrix

LOW_MG_DL = 70.0
HIGH_MG_DL = 180.0
VERY_LOW_MG_DL = 54.0
VERY_HIGH_MG_DL = 250.0

#: metric name -> (label, unit), in display order
GLYCEMIC_METRICS: Mapping[str, tuple[str, str]] = {
    "mean": ("Mean glucose", "mg/dL"),
    "sd": ("Standard deviation", "mg/dL"),
    "cv": ("Coefficient of variation", "%"),
    "variance": ("Variance (VAR, ddof=1)", "(mg/dL)²"),
    "tir": ("Time in range 70-180", "%"),
    "tbr": ("Time below 70 (hypo)", "%"),
    "tar": ("Time above 180 (hyper)", "%"),
    "tbr_54": ("Time below 54", "%"),
    "tar_250": ("Time above 250", "%"),
    "gmi": ("Glucose management indicator", "%"),
    "lbgi": ("Low blood glucose index", ""),
    "hbgi": ("High blood glucose index", ""),
    "gvi": ("Glycaemic variability index", ""),
    "pgs": ("Patient glycaemic status", ""),
}


def to_mg_dl(values: np.ndarray, *, units: str = "mg/dL") -> np.ndarray:
    """Return glucose values in mg/dL as float64, converting from mmol/L when asked.

    Parameters
    ----------
    values : array-like
    units : {"mg/dL", "mmol/L"}
    """
    arr = np.asarray(values, dtype=np.float64)
    key = units.replace(" ", "").lower()
    if key == "mg/dl":
        return arr
    if key == "mmol/l":
        return arr * MG_DL_PER_MMOL_L
    raise DataError(f"units must be 'mg/dL' or 'mmol/L'; got {units!r}")


def glycemic_samples(
    traces: object, *, units: str = "mg/dL", step_minutes: float = 5.0
) -> pd.DataFrame:
    """Glycemic metrics of every trace (one row per trace, columns :data:`GLYCEMIC_METRICS`).

    Parameters
    ----------
    traces : Traces or array-like of shape (n_traces, n_steps)
        Glucose readings, NaN where missing; a 1-d array is one trace.
    units : {"mg/dL", "mmol/L"}
        Units of ``traces``; mmol/L is converted (× 18.016) so every output is in mg/dL.
    step_minutes : float, default=5
        Minutes between readings (the Δt of GVI).

    Returns
    -------
    pandas.DataFrame of shape (n_traces, 14)
        Definitions in the module docstring. Traces with no valid reading get NaN (with an
        :class:`~synthreview.errors.UndefinedMetricWarning`).

    Examples
    --------
    >>> glycemic_samples([[100.0, 110.0, 100.0]])["gvi"].round(4).tolist()
    [2.2361]
    """
    g = to_mg_dl(trace_matrix(traces), units=units)
    valid = np.isfinite(g)
    n_valid = valid.sum(axis=1).astype(np.float64)
    if (n_valid == 0).any():
        warnings.warn(
            f"{int((n_valid == 0).sum())} trace(s) have no valid reading; their metrics are NaN",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # empty or single-reading traces -> NaN
        mean = np.nanmean(g, axis=1)
        sd = np.nanstd(g, axis=1, ddof=1)

        def share(mask: np.ndarray) -> np.ndarray:
            return 100.0 * (mask & valid).sum(axis=1) / n_valid

        # log of non-positive readings is undefined; such readings add no risk
        logs = np.log(np.where(valid & (g > 0), g, np.nan))
        f = 1.509 * (np.sign(logs) * np.abs(logs) ** 1.084 - 5.381)
        risk = 10.0 * f**2
        lbgi = np.where(f < 0, risk, 0.0).sum(axis=1) / n_valid
        hbgi = np.where(f > 0, risk, 0.0).sum(axis=1) / n_valid

        dg = np.diff(g, axis=1)
        pair_ok = valid[:, 1:] & valid[:, :-1]
        dg = np.where(pair_ok, dg, 0.0)
        n_pairs = pair_ok.sum(axis=1)
        length = np.where(pair_ok, np.sqrt(step_minutes**2 + dg**2), 0.0).sum(axis=1)
        ideal = np.sqrt((step_minutes * n_pairs) ** 2 + dg.sum(axis=1) ** 2)
        gvi = np.where(n_pairs > 0, length / ideal, np.nan)
        tir = share((g >= LOW_MG_DL) & (g <= HIGH_MG_DL))
        out = {
            "mean": mean,
            "sd": sd,
            "cv": 100.0 * sd / mean,
            "variance": sd**2,
            "tir": tir,
            "tbr": share(g < LOW_MG_DL),
            "tar": share(g > HIGH_MG_DL),
            "tbr_54": share(g < VERY_LOW_MG_DL),
            "tar_250": share(g > VERY_HIGH_MG_DL),
            "gmi": 3.31 + 0.02392 * mean,
            "lbgi": lbgi,
            "hbgi": hbgi,
            "gvi": gvi,
            "pgs": gvi * mean * (1.0 - tir / 100.0),
        }
    return pd.DataFrame(out, columns=list(GLYCEMIC_METRICS))


@dataclass(frozen=True)
class GlycemicComparison:
    """One glycemic metric compared between two trace populations (GlucoSynth Table 4).

    Attributes
    ----------
    metric : str
        Key of :data:`GLYCEMIC_METRICS`.
    real_mean, synthetic_mean : float
        Population means of the per-trace metric.
    welch_p : float
        Two-sided Welch t-test p-value (difference of means, unequal variances).
    mannwhitney_p : float
        Two-sided Mann-Whitney U p-value (difference of distributions, robust to the many
        zeros of time-below-range metrics).

    ``p_value`` is the Welch p-value: the table compares means, and it is the test a mean
    difference calls for. p < 0.05 marks a significant difference (worse for synthetic data).
    """

    metric: str
    real_mean: float
    synthetic_mean: float
    welch_p: float
    mannwhitney_p: float

    @property
    def p_value(self) -> float:
        """The Welch t-test p-value (see the class docstring)."""
        return self.welch_p

    def to_dict(self) -> dict[str, float | str]:
        """``{real_mean, synthetic_mean, p_value, test, welch_p, mannwhitney_p}``."""
        return {
            "real_mean": self.real_mean,
            "synthetic_mean": self.synthetic_mean,
            "p_value": self.welch_p,
            "test": "welch_t",
            "welch_p": self.welch_p,
            "mannwhitney_p": self.mannwhitney_p,
        }


def _two_sample_p(a: np.ndarray, b: np.ndarray, metric: str) -> tuple[float, float]:
    if len(a) < 2 or len(b) < 2:
        warnings.warn(
            f"metric {metric!r} needs at least 2 traces per population to test; "
            f"got {len(a)} and {len(b)}",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return float("nan"), float("nan")
    if np.ptp(a) == 0 and np.ptp(b) == 0 and a[0] == b[0]:
        # identical constant samples (e.g. no time below 54 anywhere): no evidence of difference
        return 1.0, 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's precision-loss notice
        welch = stats.ttest_ind(a, b, equal_var=False).pvalue
        mw = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
    return float(welch), float(mw)


def compare_glycemic(
    real_samples: pd.DataFrame,
    synthetic_samples: pd.DataFrame,
    *,
    metrics: Sequence[str] | None = None,
) -> tuple[GlycemicComparison, ...]:
    """Compare per-trace metrics of two populations, one result per metric.

    Parameters
    ----------
    real_samples, synthetic_samples : pandas.DataFrame
        Outputs of :func:`glycemic_samples` (or of the consensus and episode ``*_samples``);
        NaN rows are left out per metric.
    metrics : sequence of str, optional
        Columns to compare; default :data:`GLYCEMIC_METRICS`.

    Returns
    -------
    tuple of GlycemicComparison
        In ``metrics`` order. A high p-value (> 0.05) is what a faithful synthetic population
        shows.
    """
    out = []
    for metric in GLYCEMIC_METRICS if metrics is None else metrics:
        a = real_samples[metric].to_numpy(dtype=np.float64)
        b = synthetic_samples[metric].to_numpy(dtype=np.float64)
        a, b = a[np.isfinite(a)], b[np.isfinite(b)]
        welch, mw = _two_sample_p(a, b, metric)
        out.append(
            GlycemicComparison(
                metric=metric,
                real_mean=float(a.mean()) if a.size else float("nan"),
                synthetic_mean=float(b.mean()) if b.size else float("nan"),
                welch_p=welch,
                mannwhitney_p=mw,
            )
        )
    return tuple(out)


def glycemic_table(
    metrics: Sequence[GlycemicComparison],
    holdout_metrics: Sequence[GlycemicComparison] | None = None,
    *,
    alpha: float = 0.05,
    labels: Mapping[str, tuple[str, ...]] | None = None,
) -> pd.DataFrame:
    """The comparison as a display table (GlucoSynth Table 4 layout).

    Columns: ``metric`` (label), ``unit``, ``real``, ``synthetic``, ``p_value`` (Welch),
    ``mannwhitney_p``, ``significant`` (Welch p < ``alpha``), plus ``holdout`` and
    ``holdout_p_value`` (holdout vs real) when ``holdout_metrics`` is given. ``labels`` maps a
    metric to ``(label, unit, ...)`` (default :data:`GLYCEMIC_METRICS`).
    """
    holdout = {m.metric: m for m in holdout_metrics or ()}
    rows = []
    for m in metrics:
        label, unit = (GLYCEMIC_METRICS if labels is None else labels)[m.metric][:2]
        row = {
            "metric": label,
            "unit": unit,
            "real": m.real_mean,
            "synthetic": m.synthetic_mean,
            "p_value": m.welch_p,
            "mannwhitney_p": m.mannwhitney_p,
            "significant": bool(m.welch_p < alpha),
        }
        if m.metric in holdout:
            row["holdout"] = holdout[m.metric].synthetic_mean
            row["holdout_p_value"] = holdout[m.metric].welch_p
        rows.append(row)
    return pd.DataFrame(rows)
