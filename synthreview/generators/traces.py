"""Baseline generators for glucose traces (the trace half of :mod:`synthreview.generators.tables`).

Traces are ``(n_traces, n_steps)`` arrays in mg/dL; every generator clips to the sensor range
of common CGM devices and takes all randomness from ``seed``. Re-exported from
:mod:`synthreview.generators.tables`, which lists what each baseline is for.
"""

from __future__ import annotations

import numpy as np

from synthreview.errors import DataError

#: sensor range of common CGM devices; generated traces are clipped to it
GLUCOSE_MIN_MG_DL = 40.0
GLUCOSE_MAX_MG_DL = 400.0


def check_n(n: int | None, default: int) -> int:
    if n is None:
        return default
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer or None; got {n!r} instead")
    return int(n)


def _check_traces(values: np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype="float64")
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
        raise ValueError(f"values must be a 2-d array (n_traces, n_steps); got shape {arr.shape}")
    if not np.isfinite(arr).any():
        raise DataError("values has no finite glucose value")
    return arr


def traces_add_noise(values: np.ndarray, *, sigma: float = 5.0, seed: int = 0) -> np.ndarray:
    """The add-noise hider on traces: every real trace plus ``N(0, sigma^2)`` per step.

    Paper 002, section 2.1, applied to glucose in mg/dL. Trace ``i`` comes from real trace
    ``i``; missing steps stay missing; values are clipped to the 40-400 mg/dL sensor range.

    Parameters
    ----------
    values : ndarray of shape (n_traces, n_steps)
        Real traces in mg/dL.
    sigma : float, default 5.0
        Noise standard deviation in mg/dL, >= 0.
    seed : int

    Returns
    -------
    ndarray of shape (n_traces, n_steps), float64
    """
    arr = _check_traces(values)
    if not np.isfinite(sigma) or sigma < 0:
        raise ValueError(f"sigma must be a finite number >= 0 (mg/dL); got {sigma!r} instead")
    rng = np.random.default_rng(seed)
    noisy = arr + rng.normal(0.0, sigma, size=arr.shape)
    return np.clip(noisy, GLUCOSE_MIN_MG_DL, GLUCOSE_MAX_MG_DL)


def traces_motif_shuffle(
    values: np.ndarray,
    *,
    chunk: int = 48,
    n: int | None = None,
    smooth_steps: int = 6,
    seed: int = 0,
) -> np.ndarray:
    """Recombine real chunks across days: chunk ``k`` of a new day is chunk ``k`` of a random day.

    With 5-minute steps the default ``chunk=48`` is four hours, so every generated day is six
    real four-hour motifs at their real time of day (the daily rhythm is kept, day-to-day
    structure is not). The level jump at each seam is spread over the first ``smooth_steps``
    steps of the next chunk by a linearly fading offset; after that the values are exactly real.
    Motif metrics (paper 004, motif breadth) should rate it as diverse but copied locally.

    Parameters
    ----------
    values : ndarray of shape (n_traces, n_steps)
        Real traces in mg/dL; ``n_steps`` must be a multiple of ``chunk``.
    chunk : int, default 48
    n : int, optional
        Traces to generate; default ``n_traces``.
    smooth_steps : int, default 6
        Steps over which a seam is smoothed; 0 keeps the chunks exactly as recorded.
    seed : int

    Returns
    -------
    ndarray of shape (n, n_steps), float64
    """
    arr = _check_traces(values)
    n_traces, n_steps = arr.shape
    if not isinstance(chunk, (int, np.integer)) or chunk < 1 or n_steps % chunk:
        raise ValueError(f"chunk must divide n_steps={n_steps}; got {chunk!r} instead")
    if not 0 <= smooth_steps <= chunk:
        raise ValueError(f"smooth_steps must be in [0, chunk={chunk}]; got {smooth_steps!r}")
    n_out = check_n(n, n_traces)
    rng = np.random.default_rng(seed)
    n_chunks = n_steps // chunk
    source = rng.integers(0, n_traces, size=(n_out, n_chunks))
    out = np.concatenate(
        [arr[source[:, k], k * chunk : (k + 1) * chunk] for k in range(n_chunks)], axis=1
    )
    if smooth_steps:
        fade = 1.0 - np.arange(smooth_steps) / smooth_steps
        for start in range(chunk, n_steps, chunk):
            jump = np.nan_to_num(out[:, start - 1] - out[:, start])
            out[:, start : start + smooth_steps] += jump[:, None] * fade[None, :]
    return out


def traces_autoregressive(
    values: np.ndarray, *, n: int | None = None, order: int = 2, seed: int = 0
) -> np.ndarray:
    """Simulate traces from an AR(``order``) model of log glucose around the daily profile.

    The model is ``log g[t] = m[t] + d[t]``, with ``m`` the mean log glucose at each time of
    day and ``d[t] = sum_i a_i d[t-i] + e[t]``, ``e ~ N(0, s^2)``, fitted by least squares on
    every complete window of the real traces. Simulation starts from a burn-in of one trace
    length so each generated trace begins in the stationary state; values are clipped to the
    40-400 mg/dL sensor range. It keeps the daily rhythm and short-term smoothness but none of
    the meal-driven shapes, so it is a weak but honest baseline.

    Parameters
    ----------
    values : ndarray of shape (n_traces, n_steps)
        Real traces in mg/dL (NaN for missing steps).
    n : int, optional
        Traces to generate; default ``n_traces``.
    order : int, default 2
        Number of lags, 1 <= order < n_steps.
    seed : int

    Returns
    -------
    ndarray of shape (n, n_steps), float64, no missing values
    """
    arr = _check_traces(values)
    n_traces, n_steps = arr.shape
    if not isinstance(order, (int, np.integer)) or not 1 <= order < n_steps:
        raise ValueError(f"order must be an integer in [1, {n_steps - 1}]; got {order!r}")
    n_out = check_n(n, n_traces)
    logs = np.log(np.clip(arr, GLUCOSE_MIN_MG_DL, GLUCOSE_MAX_MG_DL))
    profile = np.nanmean(logs, axis=0)
    profile = np.where(np.isnan(profile), np.nanmean(logs), profile)
    deviation = logs - profile
    # lagged design: rows (d[t-1], ..., d[t-order]) -> d[t], windows with a gap are left out
    target = deviation[:, order:].ravel()
    lags = np.stack(
        [deviation[:, order - i : n_steps - i].ravel() for i in range(1, order + 1)], axis=1
    )
    complete = np.isfinite(target) & np.isfinite(lags).all(axis=1)
    if complete.sum() <= order + 1:
        raise DataError(f"values has too few complete windows to fit an AR({order}) model")
    coef, *_ = np.linalg.lstsq(lags[complete], target[complete], rcond=None)
    noise_sd = float(np.std(target[complete] - lags[complete] @ coef))
    companion = np.eye(order, k=-1)
    companion[0] = coef
    if np.max(np.abs(np.linalg.eigvals(companion))) >= 1.0:
        raise DataError(f"the AR({order}) model fitted to values is not stationary; try order=1")

    rng = np.random.default_rng(seed)
    total = order + 2 * n_steps
    shocks = rng.normal(0.0, noise_sd, size=(n_out, total))
    simulated = np.zeros((n_out, total))
    for t in range(order, total):
        simulated[:, t] = simulated[:, t - order : t][:, ::-1] @ coef + shocks[:, t]
    traces = np.exp(profile + simulated[:, -n_steps:])
    return np.clip(traces, GLUCOSE_MIN_MG_DL, GLUCOSE_MAX_MG_DL)
