"""CGM metrics of the international consensus, per trace and per subject.

A clinical reviewer reads CGM through the international consensus on time in ranges
(Battelino et al. 2019, *Diabetes Care* 42:1593; the 2023 update, Battelino et al.,
*Lancet Diabetes Endocrinol* 11:42) and the variability and risk indices that iglu
(Broll et al. 2021, R package; ``iglu-python`` is its port) computes. Everything is mg/dL and
regular steps (5 minutes by default), NaN marking missing readings.

Definitions (g = readings of one trace, valid ones only):

- bands (% of readings): ``tbr_54`` g < 54 (level 2 hypo), ``tbr_54_69`` 54 <= g < 70
  (level 1), ``tir`` 70 <= g <= 180, ``tar_181_250`` 180 < g <= 250 (level 1 hyper),
  ``tar_250`` g > 250 (level 2); they sum to 100. ``titr`` time in tight range 70-140
  (Battelino 2023), inclusive like iglu's ``in_range_percent``.
- ``gmi`` = 3.31 + 0.02392 · mean (Bergenstal et al. 2018); ``cv`` = 100 · sd / mean with the
  sample sd (ddof = 1), the consensus' 36 % threshold refers to it.
- ``gri`` Glycemia Risk Index (Klonoff et al. 2023): hypo component VLow + 0.8 Low, hyper
  component VHigh + 0.5 High (bands above, %), GRI = 3.0 hypo + 1.6 hyper, capped at 100.
- ``lbgi`` / ``hbgi`` (Kovatchev et al. 1998): mean over readings of r = 10 f² with
  f = 1.509 (ln(g)^1.084 - 5.381), counting only f < 0 (low) or f > 0 (high).
- ``adrr`` (Kovatchev et al. 2006): per calendar day, the largest low risk plus the largest
  high risk; averaged over days. For a day trace it is that day's risk range.
- ``j_index`` = 0.001 (mean + sd)² (Wojcicki 1995).
- ``conga_1/2/4``: sd (ddof = 1) of the differences between readings n hours apart, pairs with a
  missing reading left out (McDonnell et al. 2005).
- ``modd``: mean absolute difference between readings 24 hours apart (Service & Nelson 1980);
  per subject only (one day trace has no pair).
- ``mage``: mean amplitude of glycemic excursions by the moving-average algorithm of Fernandes
  et al. 2022 (iglu's default ``version="ma"``, short window 5, long 32 readings): the
  crossings of the two moving averages bracket the peaks and nadirs, excursions larger than
  one sd count, MAGE+ and MAGE- averaged; each gap-free run weighted by its duration.
- ``active`` (%): share of the trace's grid points that were observed (CGM wear), from
  ``Traces.meta.filled_share``; 100 for traces given as a bare array.

Where iglu differs from the consensus we follow the consensus and say so:
``adrr`` uses 10 · 1.509² (Kovatchev's r(BG)) where iglu rounds it to 22.77 (relative
difference 3.6e-5), and GRI uses the 2023 band edges (Low = 54-69, High = 181-250), which
for integer mg/dL readings is what iglu's ``gri`` computes.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from synthreview.errors import DataError, UndefinedMetricWarning

VERY_LOW_MG_DL = 54.0
LOW_MG_DL = 70.0
TIGHT_HIGH_MG_DL = 140.0
HIGH_MG_DL = 180.0
VERY_HIGH_MG_DL = 250.0
#: Kovatchev's risk scale: r(BG) = 10 f(BG)²
RISK_SCALE = 10.0
#: moving-average windows of the MAGE algorithm (Fernandes et al. 2022), in readings
MAGE_SHORT, MAGE_LONG = 5, 32
#: a gap longer than this splits a trace into separately scored MAGE runs (iglu's max_gap)
MAGE_MAX_GAP_MINUTES = 180.0
CONGA_HOURS = (1, 2, 4)

#: metric name -> (label, unit, better): "higher", "lower", "target" (closer to real) or "info"
CONSENSUS_METRICS: Mapping[str, tuple[str, str, str]] = {
    "mean": ("Mean glucose", "mg/dL", "target"),
    "gmi": ("Glucose management indicator", "%", "lower"),
    "cv": ("Coefficient of variation", "%", "lower"),
    "tbr_54": ("Time < 54 (level 2 hypo)", "%", "lower"),
    "tbr_54_69": ("Time 54–69 (level 1 hypo)", "%", "lower"),
    "tir": ("Time in range 70–180", "%", "higher"),
    "titr": ("Time in tight range 70–140", "%", "higher"),
    "tar_181_250": ("Time 181–250 (level 1 hyper)", "%", "lower"),
    "tar_250": ("Time > 250 (level 2 hyper)", "%", "lower"),
    "gri": ("Glycemia risk index", "0–100", "lower"),
    "gri_hypo": ("GRI hypoglycemia component", "%", "lower"),
    "gri_hyper": ("GRI hyperglycemia component", "%", "lower"),
    "lbgi": ("Low blood glucose index", "", "lower"),
    "hbgi": ("High blood glucose index", "", "lower"),
    "adrr": ("Average daily risk range", "", "lower"),
    "j_index": ("J-index", "", "lower"),
    "mage": ("Mean amplitude of glycemic excursions", "mg/dL", "lower"),
    "conga_1": ("CONGA 1 h", "mg/dL", "lower"),
    "conga_2": ("CONGA 2 h", "mg/dL", "lower"),
    "conga_4": ("CONGA 4 h", "mg/dL", "lower"),
    "modd": ("Mean of daily differences", "mg/dL", "lower"),
    "active": ("CGM active (wear)", "%", "higher"),
}


def trace_matrix(traces: object, name: str = "traces") -> np.ndarray:
    """``traces`` (Traces or array-like, 1-d = one trace) as a float64 (n, n_steps) array."""
    values = getattr(traces, "values", traces)
    if callable(values):  # a mapping's .values() is not a trace matrix
        values = traces
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise DataError(f"{name} must be traces of shape (n_traces, n_steps); got {arr.shape}")
    if np.isinf(arr).any():
        raise DataError(f"{name} must hold finite glucose values or NaN; got infinite values")
    return arr


def _risk_f(g: np.ndarray) -> np.ndarray:
    logs = np.log(np.where(g > 0, g, np.nan))
    return 1.509 * (logs**1.084 - 5.381)


def _lagged_sd(g: np.ndarray, lag: int) -> np.ndarray:
    if lag >= g.shape[1]:
        return np.full(len(g), np.nan)
    d = g[:, lag:] - g[:, :-lag]
    n = np.isfinite(d).sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sd = np.nanstd(d, axis=1, ddof=1)
    return np.where(n >= 2, sd, np.nan)


def _daily_risk_range(g: np.ndarray, steps_per_day: int) -> np.ndarray:
    """Mean over days of (max low risk + max high risk); days without a reading skipped."""
    n, t = g.shape
    n_days = -(-t // steps_per_day)
    padded = np.full((n, n_days * steps_per_day), np.nan)
    padded[:, :t] = g
    f = _risk_f(padded).reshape(n, n_days, steps_per_day)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN days
        high = np.nanmax(f, axis=2)
        low = np.nanmin(f, axis=2)
        day = RISK_SCALE * (np.maximum(high, 0.0) ** 2 + np.minimum(low, 0.0) ** 2)
        return np.nanmean(day, axis=1)


def _moving_average(g: np.ndarray, window: int) -> np.ndarray:
    # trailing mean over up to `window` readings; the first `window` values take the first full
    # window's mean so the start does not fake a crossing (Fernandes et al. 2022)
    c = np.cumsum(np.insert(g, 0, 0.0))
    idx = np.arange(len(g))
    lo = np.maximum(0, idx + 1 - window)
    ma = (c[idx + 1] - c[lo]) / (idx + 1 - lo)
    ma[: min(window, len(g))] = ma[min(window, len(g)) - 1]
    return ma


def _excursions(extrema: np.ndarray, sd: float, *, up: bool) -> list[float]:
    """Heights of excursions larger than ``sd`` between successive turning points.

    Upward: from the lowest point since the last counted excursion to the highest peak that
    is reached before glucose falls by more than ``sd`` (or the run ends). Downward mirrors it.
    """
    sign = 1.0 if up else -1.0
    m = sign * extrema
    heights: list[float] = []
    n = len(m)
    j = prev = 0
    while j < n:
        rise = m[j] - m[prev : j + 1]
        if rise.size == 0 or rise.max() <= sd:
            j += 1
            continue
        i = prev + int(np.argmax(rise))
        for k in range(j, n):
            if m[k] >= m[j]:
                j = k
            if m[k] - m[j] < -sd or k == n - 1:
                heights.append(float(m[j] - m[i]))
                # iglu 0.4.3 restarts an upward search at k, a downward one at the nadir j
                prev = k if up else j
                j = k
                break
    return heights


def _mage_run(g: np.ndarray) -> list[float]:
    """MAGE+ and MAGE- of one gap-free run (either left out when it has no excursion)."""
    n = len(g)
    sd = float(np.std(g, ddof=1)) if n > 1 else 0.0
    if n < 7 or n < MAGE_SHORT or sd < 1:
        return []
    delta = _moving_average(g, MAGE_SHORT) - _moving_average(g, MAGE_LONG)
    delta[delta == 0] = np.nan
    # crossings of the short over the long average; "max" = a peak lies up to the next one
    cross = [0]
    is_max = [bool(delta[0] > 0)]
    last = delta[0]
    for i in range(1, n):
        if np.isnan(delta[i]):
            continue
        ref = delta[i - 1] if not np.isnan(delta[i - 1]) else last
        if delta[i] * ref < 0:
            cross.append(i)
            is_max.append(bool(delta[i] > ref))
            last = delta[i]
    cross.append(n - 1)
    is_max.append(bool(delta[-1] > 0))
    extrema, where = [], []
    for c in range(len(cross) - 1):
        start = cross[0] if c == 0 else where[-1]
        part = g[start : cross[c + 1] + 1]
        at = int(np.argmax(part) if is_max[c] else np.argmin(part))
        extrema.append(part[at])
        where.append(start + at)
    values = np.asarray(extrema)
    plus = _excursions(values, sd, up=True)
    minus = _excursions(values, sd, up=False)
    return [float(np.mean(h)) for h in (plus, minus) if h]


def mage_samples(traces: object, *, step_minutes: float = 5.0) -> np.ndarray:
    """MAGE (mg/dL, >= 0, lower = steadier) of every trace; NaN where undefined.

    Runs without a reading longer than :data:`MAGE_MAX_GAP_MINUTES` are scored separately
    and weighted by their duration (Fernandes et al. 2022, iglu ``mage(version="ma")``).
    """
    g = trace_matrix(traces)
    out = np.full(len(g), np.nan)
    max_gap = int(MAGE_MAX_GAP_MINUTES // step_minutes)
    for r, row in enumerate(g):
        valid = np.flatnonzero(np.isfinite(row))
        if valid.size == 0:
            continue
        # split where consecutive valid readings are more than max_gap steps apart
        splits = np.flatnonzero(np.diff(valid) > max_gap) + 1
        values, weights = [], []
        for run in np.split(valid, splits):
            segment = row[run[0] : run[-1] + 1]
            if np.isnan(segment).any():  # short gaps: linear, like iglu's 45-minute rule
                x = np.arange(len(segment))
                ok = np.isfinite(segment)
                segment = np.interp(x, x[ok], segment[ok])
            # MAGE+ and MAGE- each count with the run's duration (iglu direction="avg")
            for value in _mage_run(segment):
                values.append(value)
                weights.append(len(segment) - 1)
        if values:
            w = np.asarray(weights, dtype=np.float64)
            out[r] = float(np.average(values, weights=w)) if w.sum() > 0 else float(np.mean(values))
    return out


def consensus_samples(
    traces: object,
    *,
    step_minutes: float = 5.0,
    observed_share: np.ndarray | None = None,
    steps_per_day: int | None = None,
) -> pd.DataFrame:
    """Consensus metrics of every trace (one row per trace, columns :data:`CONSENSUS_METRICS`).

    Parameters
    ----------
    traces : Traces or array-like of shape (n_traces, n_steps)
        mg/dL, NaN where missing; a 1-d array is one trace.
    step_minutes : float, default=5
    observed_share : array of shape (n_traces,), optional
        Share of each trace's points that were observed (``1 - meta.filled_share``); taken
        from ``traces.meta`` when it is a :class:`Traces`, else all observed.
    steps_per_day : int, optional
        Readings per calendar day (default 24 h / step): the day unit of ADRR and the lag of
        MODD. A trace starting at midnight is split into its days.

    Returns
    -------
    pandas.DataFrame of shape (n_traces, len(CONSENSUS_METRICS))
        Definitions in the module docstring; a trace with no valid reading gets NaN (with an
        :class:`~synthreview.errors.UndefinedMetricWarning`).

    Examples
    --------
    >>> consensus_samples([[50.0, 60.0, 100.0, 150.0, 200.0, 300.0]])[["tbr_54", "tir"]]
         tbr_54        tir
    0  16.666667  33.333333
    """
    g = trace_matrix(traces)
    if not step_minutes > 0:
        raise DataError(f"step_minutes must be > 0; got {step_minutes!r}")
    per_day = steps_per_day or round(24 * 60 / step_minutes)
    per_hour = round(60 / step_minutes)
    if observed_share is None:
        meta = getattr(traces, "meta", None)
        if meta is not None and "filled_share" in meta:
            observed_share = 1.0 - meta["filled_share"].to_numpy(dtype=np.float64)
        else:
            observed_share = np.ones(len(g))
    observed_share = np.asarray(observed_share, dtype=np.float64)
    if observed_share.shape != (len(g),):
        raise DataError(
            f"observed_share must have one value per trace ({len(g)}); "
            f"got shape {observed_share.shape}"
        )
    valid = np.isfinite(g)
    n_valid = valid.sum(axis=1).astype(np.float64)
    if (n_valid == 0).any():
        warnings.warn(
            f"{int((n_valid == 0).sum())} trace(s) have no valid reading; their metrics are NaN",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)

        def share(mask: np.ndarray) -> np.ndarray:
            return 100.0 * (mask & valid).sum(axis=1) / n_valid

        mean = np.nanmean(g, axis=1)
        sd = np.nanstd(g, axis=1, ddof=1)
        very_low = share(g < VERY_LOW_MG_DL)
        low = share((g >= VERY_LOW_MG_DL) & (g < LOW_MG_DL))
        high = share((g > HIGH_MG_DL) & (g <= VERY_HIGH_MG_DL))
        very_high = share(g > VERY_HIGH_MG_DL)
        hypo = very_low + 0.8 * low
        hyper = very_high + 0.5 * high
        f = _risk_f(g)
        risk = RISK_SCALE * f**2
        out = {
            "mean": mean,
            "gmi": 3.31 + 0.02392 * mean,
            "cv": 100.0 * sd / mean,
            "tbr_54": very_low,
            "tbr_54_69": low,
            "tir": share((g >= LOW_MG_DL) & (g <= HIGH_MG_DL)),
            "titr": share((g >= LOW_MG_DL) & (g <= TIGHT_HIGH_MG_DL)),
            "tar_181_250": high,
            "tar_250": very_high,
            "gri": np.minimum(3.0 * hypo + 1.6 * hyper, 100.0),
            "gri_hypo": hypo,
            "gri_hyper": hyper,
            "lbgi": np.where(f < 0, risk, 0.0).sum(axis=1) / n_valid,
            "hbgi": np.where(f > 0, risk, 0.0).sum(axis=1) / n_valid,
            "adrr": _daily_risk_range(g, per_day),
            "j_index": 0.001 * (mean + sd) ** 2,
            "mage": mage_samples(g, step_minutes=step_minutes),
            **{f"conga_{h}": _lagged_sd(g, h * per_hour) for h in CONGA_HOURS},
            "modd": _mean_abs_lagged(g, per_day),
            "active": 100.0 * observed_share,
        }
    return pd.DataFrame(out, columns=list(CONSENSUS_METRICS))


def _mean_abs_lagged(g: np.ndarray, lag: int) -> np.ndarray:
    if lag >= g.shape[1]:
        return np.full(len(g), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.abs(g[:, lag:] - g[:, :-lag]), axis=1)


def subject_timelines(traces: object) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Each subject's traces laid end to end on one regular timeline, NaN where no window.

    Traces of one ``meta.source_id`` are placed by ``meta.start`` (a dropped day becomes a run
    of NaN, so no lag crosses it); without start times they are assumed consecutive in input
    order. Returns ``(ids, timelines (n_subjects, n_max), observed (n_subjects,))`` where
    ``observed`` is the share of the timeline's points that were observed readings.
    """
    g = trace_matrix(traces)
    meta = getattr(traces, "meta", None)
    step = float(getattr(traces, "step_minutes", 5))
    n, t = g.shape
    if meta is None or "source_id" not in meta:
        ids = np.array([f"trace_{i + 1}" for i in range(n)])
        starts = pd.Series(pd.NaT, index=range(n), dtype="datetime64[ns]")
        filled = np.zeros(n)
    else:
        ids = meta["source_id"].astype(str).to_numpy()
        starts = pd.to_datetime(meta["start"]).reset_index(drop=True)
        filled = (
            meta["filled_share"].to_numpy(np.float64) if "filled_share" in meta else 0 * g[:, 0]
        )
    names = list(dict.fromkeys(ids))
    rows, observed = [], []
    for name in names:
        pos = np.flatnonzero(ids == name)
        s = starts.iloc[pos]
        if s.notna().all():
            order = pos[np.argsort(s.to_numpy(), kind="stable")]
            offset = (starts.iloc[order] - starts.iloc[order[0]]).dt.total_seconds() / 60.0 / step
            offset = np.round(offset.to_numpy()).astype(int)
        else:
            order, offset = pos, np.arange(len(pos)) * t
        line = np.full(int(offset.max()) + t, np.nan)
        for i, o in zip(order, offset, strict=True):
            line[o : o + t] = g[i]
        rows.append(line)
        observed.append(float(((1.0 - filled[order]) * t).sum() / len(line)))
    width = max(len(r) for r in rows)
    out = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return names, out, np.asarray(observed)


def subject_consensus(traces: object) -> pd.DataFrame:
    """Consensus metrics per subject (``meta.source_id``), over all of a subject's traces.

    Index: subject id. MODD needs two traces 24 h apart, ADRR averages the subject's days.
    """
    names, lines, observed = subject_timelines(traces)
    step = float(getattr(traces, "step_minutes", 5))
    frame = consensus_samples(lines, step_minutes=step, observed_share=observed)
    frame.index = pd.Index(names, name="subject")
    return frame
