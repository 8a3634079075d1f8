"""Ambulatory glucose profile (AGP) and the day / night split of the consensus metrics.

The AGP (Bergenstal et al. 2013, *Diabetes Technol Ther* 15:198; the consensus report of
Battelino et al. 2019) stacks every day on one 24-hour clock and draws the 5, 25, 50, 75 and
95 % percentiles of glucose by time of day. Here the readings are pooled over all traces of a
source in 15-minute bins of the clock. ``agp_distance`` is the mean absolute difference of the
five percentile curves of two profiles (mg/dL, >= 0, lower is better); the distance between
real and holdout profiles is what sampling alone gives.

Night is 00:00-06:00 and day 06:00-24:00 (Battelino et al. 2019, the AGP report's split).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.metrics.glucose.consensus import trace_matrix

PERCENTILES = (5, 25, 50, 75, 95)
BIN_MINUTES = 15
NIGHT_END_MINUTE = 6 * 60


def start_minutes(traces: object, default: float = 0.0) -> np.ndarray:
    """Minute of the day at which every trace starts (``meta.start``; ``default`` where unknown)."""
    g = trace_matrix(traces)
    meta = getattr(traces, "meta", None)
    if meta is None or "start" not in meta:
        return np.full(len(g), float(default))
    start = pd.to_datetime(meta["start"])
    minutes = (start.dt.hour * 60 + start.dt.minute + start.dt.second / 60).to_numpy(np.float64)
    return np.where(np.isnan(minutes), float(default), minutes)


def clock_minutes(
    traces: object, *, step_minutes: float = 5.0, default_start: float = 0.0
) -> np.ndarray:
    """Minute of the day (0-1440) of every reading, shape (n_traces, n_steps)."""
    g = trace_matrix(traces)
    offset = np.arange(g.shape[1]) * step_minutes
    return (start_minutes(traces, default_start)[:, None] + offset[None, :]) % (24 * 60)


@dataclass(frozen=True)
class AGPProfile:
    """Glucose percentiles by time of day.

    Attributes
    ----------
    minutes : ndarray of shape (n_bins,)
        Start of each bin, minutes after midnight.
    percentiles : Mapping[int, ndarray]
        5, 25, 50, 75, 95 -> mg/dL per bin (NaN for a bin without readings).
    n_readings : ndarray of shape (n_bins,)
    """

    minutes: np.ndarray
    percentiles: Mapping[int, np.ndarray] = field(repr=False)
    n_readings: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, object]:
        """``{minutes, p5, p25, p50, p75, p95}`` (lists)."""
        out: dict[str, object] = {"minutes": self.minutes.tolist()}
        out.update({f"p{q}": self.percentiles[q].tolist() for q in PERCENTILES})
        return out


def agp_profile(
    traces: object,
    *,
    step_minutes: float = 5.0,
    bin_minutes: int = BIN_MINUTES,
    default_start: float = 0.0,
) -> AGPProfile:
    """Pool readings of all traces into ``bin_minutes`` bins of the clock and take percentiles.

    Parameters
    ----------
    traces : Traces or array-like of shape (n_traces, n_steps)
        mg/dL; a :class:`Traces` places each trace by ``meta.start`` on the clock, generated
        traces without a start begin at ``default_start`` (minutes after midnight).
    step_minutes : float, default=5
    bin_minutes : int, default=15
        Must divide 1440.

    Returns
    -------
    AGPProfile
    """
    if not (
        isinstance(bin_minutes, int | np.integer) and bin_minutes > 0 and 1440 % bin_minutes == 0
    ):
        raise DataError(f"bin_minutes must be a positive divisor of 1440; got {bin_minutes!r}")
    g = trace_matrix(traces)
    clock = clock_minutes(traces, step_minutes=step_minutes, default_start=default_start)
    bins = (clock // bin_minutes).astype(int).ravel()
    values = g.ravel()
    ok = np.isfinite(values)
    n_bins = 1440 // bin_minutes
    frame = pd.DataFrame({"bin": bins[ok], "g": values[ok]})
    grouped = frame.groupby("bin")["g"]
    table = grouped.quantile([q / 100 for q in PERCENTILES]).unstack()
    table = table.reindex(range(n_bins))
    counts = grouped.size().reindex(range(n_bins), fill_value=0).to_numpy()
    return AGPProfile(
        minutes=np.arange(n_bins) * float(bin_minutes),
        percentiles={q: table[q / 100].to_numpy(np.float64) for q in PERCENTILES},
        n_readings=counts,
    )


def agp_distance(profile: AGPProfile, other: AGPProfile) -> float:
    """Mean |difference| of the five percentile curves, mg/dL (lower is better).

    Bins empty in either profile are left out; NaN (with a warning) when none is shared.
    """
    if profile.minutes.shape != other.minutes.shape:
        raise DataError(
            f"profiles must have the same bins; got {profile.minutes.size} and {other.minutes.size}"
        )
    diffs = np.stack([np.abs(profile.percentiles[q] - other.percentiles[q]) for q in PERCENTILES])
    if not np.isfinite(diffs).any():
        warnings.warn("the profiles share no time-of-day bin; AGP distance is undefined",
                      UndefinedMetricWarning, stacklevel=2)  # fmt: skip
        return float("nan")
    return float(np.nanmean(diffs))


def split_day_night(
    traces: object, *, step_minutes: float = 5.0, default_start: float = 0.0
) -> dict[str, np.ndarray]:
    """``{"day": values, "night": values}``: the traces with the other period's readings NaN."""
    g = trace_matrix(traces)
    night = (
        clock_minutes(traces, step_minutes=step_minutes, default_start=default_start)
        < NIGHT_END_MINUTE
    )
    return {"day": np.where(night, np.nan, g), "night": np.where(night, g, np.nan)}
