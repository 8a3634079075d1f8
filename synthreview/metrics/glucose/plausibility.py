"""Plausibility of glucose traces: readings a CGM sensor cannot report, rates it does not see.

Two per-trace checks, used as audit rules for trace reviews
(:mod:`synthreview.metrics.glucose.trace_rules`):

- **sensor range**: CGM systems report glucose only inside a fixed range and show "LOW" /
  "HIGH" outside it: Dexcom G6 and G7 report 40-400 mg/dL (Dexcom G6 and G7 user guides,
  "Glucose range"), FreeStyle Libre 2 and 3 40-500 mg/dL (Abbott FreeStyle Libre 2/3 user
  manuals, "Sensor glucose reading range"). A synthetic trace with a reading outside the range
  of the device that recorded the real data shows something the sensor could never have
  written. Default: 40-400 mg/dL (Dexcom, the device of the shared example data; the iglu
  example set is Dexcom G4, also 40-400); pass ``sensor_range_mg_dl=SENSOR_RANGES["libre"]``
  for Libre data.
- **sustained rate of change**: Kovatchev et al. 2004 (continuous glucose-error grid analysis,
  *Diabetes Care* 27:1922) place the physiological rate of change of blood glucose within about
  ±4 mg/dL/min, and in healthy people rates beyond ±2 mg/dL/min over 15 minutes are rare
  (about 1 % of the time; normative Dexcom G6 data of 153 adults, *Diabetes Technol Ther* 2025).
  CGM traces of people with diabetes exceed those limits much more often, and sensor noise,
  compression lows and calibration jumps add short steep steps: measured on the shared CGM
  files, 13 % (iglu, 5 subjects) and 26 % (one-subject bokeh file) of real days change by more
  than 5 mg/dL/min over some 15 minutes. An audit rule that removes a tenth of real data is
  useless, so the rule looks at the net change over ``rate_window_minutes`` (default 30) and
  flags a trace whose absolute net change there exceeds ``max_rate_mg_dl_min`` (default
  6 mg/dL/min, i.e. 180 mg/dL in 30 minutes, 1.5 times Kovatchev's physiological edge). On the
  shared files it flags 0 % (iglu) and 1.8 % (bokeh) of real days; the audit states the share it
  flags on the review's own holdout (else real) traces as the rule's expected false-positive
  rate.

Missing readings (NaN) are skipped: a range check ignores them and a rate needs both ends.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.metrics.glucose.consensus import trace_matrix
from synthreview.results import to_jsonable

#: reporting ranges of common CGM systems, mg/dL (see the module docstring for the sources)
SENSOR_RANGES: Mapping[str, tuple[float, float]] = {
    "dexcom": (40.0, 400.0),  # Dexcom G4 to G7
    "libre": (40.0, 500.0),  # FreeStyle Libre 2 and 3
}
DEFAULT_SENSOR_RANGE_MG_DL = SENSOR_RANGES["dexcom"]
DEFAULT_MAX_RATE_MG_DL_MIN = 6.0
DEFAULT_RATE_WINDOW_MINUTES = 30.0
COLUMNS = ("glucose_min", "glucose_max", "n_outside_range", "max_rate_mg_dl_min",
           "outside_range", "implausible_rate")  # fmt: skip


def _check(sensor_range: tuple[float, float], max_rate: float, window: float, step: float) -> int:
    try:
        lo, hi = (float(v) for v in sensor_range)
    except (TypeError, ValueError):
        raise DataError(
            f"sensor_range_mg_dl must be (low, high); got {sensor_range!r} instead"
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi):
        raise DataError(
            f"sensor_range_mg_dl must be finite with 0 <= low < high; got {sensor_range!r} instead"
        )
    if not (isinstance(max_rate, int | float) and math.isfinite(max_rate) and max_rate > 0):
        raise DataError(f"max_rate_mg_dl_min must be > 0; got {max_rate!r} instead")
    if not (isinstance(step, int | float) and step > 0):
        raise DataError(f"step_minutes must be > 0; got {step!r} instead")
    lag = window / step if isinstance(window, int | float) else float("nan")
    if not (math.isfinite(lag) and lag >= 1 and abs(lag - round(lag)) < 1e-9):
        raise DataError(
            f"rate_window_minutes must be a positive multiple of the step ({step:g} min); "
            f"got {window!r} instead"
        )
    return round(lag)


def plausibility_samples(
    traces: object,
    *,
    step_minutes: float | None = None,
    sensor_range_mg_dl: tuple[float, float] = DEFAULT_SENSOR_RANGE_MG_DL,
    max_rate_mg_dl_min: float = DEFAULT_MAX_RATE_MG_DL_MIN,
    rate_window_minutes: float = DEFAULT_RATE_WINDOW_MINUTES,
) -> pd.DataFrame:
    """Per-trace range and rate evidence, with the two flags.

    Parameters
    ----------
    traces : Traces or array-like of shape (n_traces, n_steps)
        mg/dL, NaN for missing readings.
    step_minutes : float, optional
        Minutes between readings (default: ``traces.step_minutes``, else 5).
    sensor_range_mg_dl : (float, float), default=(40, 400)
        Readings strictly outside it are implausible for the sensor.
    max_rate_mg_dl_min : float, default=6
        Largest plausible absolute net change per minute over ``rate_window_minutes``.
    rate_window_minutes : float, default=30
        Window of the net change; a multiple of the step.

    Returns
    -------
    DataFrame
        One row per trace: ``glucose_min``, ``glucose_max`` (mg/dL), ``n_outside_range``,
        ``max_rate_mg_dl_min`` (largest |g(t + w) - g(t)| / w, NaN when no pair is observed),
        ``outside_range`` and ``implausible_rate`` (bool; a NaN statistic never flags).
    """
    step = float(step_minutes if step_minutes is not None else getattr(traces, "step_minutes", 5))
    lag = _check(sensor_range_mg_dl, max_rate_mg_dl_min, rate_window_minutes, step)
    g = trace_matrix(traces)
    lo, hi = (float(v) for v in sensor_range_mg_dl)
    finite = np.isfinite(g)
    with np.errstate(invalid="ignore"):
        outside = finite & ((g < lo) | (g > hi))
    gmin = np.where(finite, g, np.inf).min(axis=1) if g.shape[1] else np.full(len(g), np.inf)
    gmax = np.where(finite, g, -np.inf).max(axis=1) if g.shape[1] else np.full(len(g), -np.inf)
    none = ~finite.any(axis=1)
    if lag < g.shape[1]:
        change = np.abs(g[:, lag:] - g[:, :-lag]) / (lag * step)
        rate = np.where(np.isfinite(change), change, -np.inf).max(axis=1)
    else:
        rate = np.full(len(g), -np.inf)
    rate = np.where(np.isfinite(rate), rate, np.nan)
    with np.errstate(invalid="ignore"):
        implausible = np.nan_to_num(rate, nan=-np.inf) > max_rate_mg_dl_min
    return pd.DataFrame(
        {
            "glucose_min": np.where(none, np.nan, gmin),
            "glucose_max": np.where(none, np.nan, gmax),
            "n_outside_range": outside.sum(axis=1).astype(np.int64),
            "max_rate_mg_dl_min": rate,
            "outside_range": outside.any(axis=1),
            "implausible_rate": implausible,
        }
    )


@dataclass(frozen=True)
class PlausibilityReport:
    """Plausibility flags of a candidate's traces, beside the same flags on real data.

    Attributes
    ----------
    sensor_range_mg_dl : (float, float)
    max_rate_mg_dl_min, rate_window_minutes : float
    outside_range_share, implausible_rate_share : float
        Share of the candidate's traces flagged (0-1, lower is better).
    reference : str
        ``"holdout"`` or ``"real"``: the traces the expected false-positive rates come from.
    reference_outside_range_share, reference_implausible_rate_share : float
        The share of the reference's traces flagged: what each rule removes of real data.
    samples : Mapping[str, DataFrame]
        :func:`plausibility_samples` of ``"synthetic"``, ``"real"`` and ``"holdout"``.
    """

    sensor_range_mg_dl: tuple[float, float]
    max_rate_mg_dl_min: float
    rate_window_minutes: float
    outside_range_share: float
    implausible_rate_share: float
    reference: str
    reference_outside_range_share: float
    reference_implausible_rate_share: float
    samples: Mapping[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Thresholds and shares (no per-trace rows; those are in the audit table)."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__
                            if k != "samples"})  # fmt: skip


def _share(flags: pd.Series) -> float:
    return float(flags.mean()) if len(flags) else float("nan")


def trace_plausibility(
    real: object,
    synthetic: object,
    holdout: object | None = None,
    *,
    step_minutes: float | None = None,
    sensor_range_mg_dl: tuple[float, float] = DEFAULT_SENSOR_RANGE_MG_DL,
    max_rate_mg_dl_min: float = DEFAULT_MAX_RATE_MG_DL_MIN,
    rate_window_minutes: float = DEFAULT_RATE_WINDOW_MINUTES,
    samples: Mapping[str, pd.DataFrame] | None = None,
) -> PlausibilityReport:
    """Flag the candidate's implausible traces and measure the same flags on real data.

    Parameters
    ----------
    real, synthetic, holdout : Traces or array-like of shape (n, n_steps)
        mg/dL. The expected false-positive rate of each rule is its share on ``holdout``
        (fresh real data), or on ``real`` without a holdout.
    step_minutes, sensor_range_mg_dl, max_rate_mg_dl_min, rate_window_minutes
        See :func:`plausibility_samples`.
    samples : Mapping[str, DataFrame], optional
        Already computed ``"real"`` / ``"holdout"`` samples with the same settings (reused).

    Returns
    -------
    PlausibilityReport
    """
    step = step_minutes if step_minutes is not None else getattr(real, "step_minutes", 5)
    options = {"step_minutes": step, "sensor_range_mg_dl": sensor_range_mg_dl,
               "max_rate_mg_dl_min": max_rate_mg_dl_min,
               "rate_window_minutes": rate_window_minutes}  # fmt: skip
    found = dict(samples or {})
    sources = {"real": real, "synthetic": synthetic, "holdout": holdout}
    for name, traces in sources.items():
        if traces is not None and (name == "synthetic" or name not in found):
            found[name] = plausibility_samples(traces, **options)
    reference = "holdout" if holdout is not None else "real"
    syn, ref = found["synthetic"], found[reference]
    return PlausibilityReport(
        sensor_range_mg_dl=tuple(float(v) for v in sensor_range_mg_dl),
        max_rate_mg_dl_min=float(max_rate_mg_dl_min),
        rate_window_minutes=float(rate_window_minutes),
        outside_range_share=_share(syn["outside_range"]),
        implausible_rate_share=_share(syn["implausible_rate"]),
        reference=reference,
        reference_outside_range_share=_share(ref["outside_range"]),
        reference_implausible_rate_share=_share(ref["implausible_rate"]),
        samples={k: v for k, v in found.items() if sources.get(k) is not None},
    )
