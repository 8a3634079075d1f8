"""Holdout-calibrated per-row rules: a row is judged against the same statistic of fresh real rows.

A per-row rule of the audit (authenticity ratio, α-level, distance to the closest training row)
compares a synthetic row's statistic with the distribution of the *same* statistic computed for
the holdout rows, which the generator never saw. A fresh real sample is exchangeable with the
holdout, so a rule whose threshold is the holdout's ``level`` quantile removes about ``level``
of any fresh real sample: that is the rule's expected false-positive rate on real data, and the
audit states it next to what the rule removes.

Everything here works on *counts*: ``count[i]`` = how many holdout rows are at least as
suspicious as row ``i`` (for a "low" statistic: holdout values ``<=`` the row's value). The
three modes read those counts:

* ``"quantile"``: flag when the row lies strictly beyond the holdout's ``level`` quantile,
  i.e. ``count <= j``, with the conformal index ``j = floor(level * (n + 1)) - 1`` (the row's
  conformal p-value ``(1 + count) / (n + 1)`` is at most ``level``; Vovk et al. 2005, Lei et
  al. 2018). Expected loss of a fresh row: ``(j + 1) / (n + 1) <= level``. Below
  ``n = 1 / level - 1`` rows no index keeps that promise: ``j = 0`` (only rows beyond the
  holdout's most extreme value) and the expected loss is ``1 / (n + 1)``, stated as such. A row
  *tied* with the holdout's most extreme value is never flagged: a real row of the holdout
  sits exactly there (α-levels pile up at ``inf`` beyond the farthest training row, ratios at
  0 on duplicated records), so the tie is no evidence against it.
* ``"strict"``: empirical p-value ``(1 + count) / (n + 1)`` (a conformal p-value, valid for an
  exchangeable fresh row) and Benjamini–Hochberg at ``fdr`` over the evaluated rows (Benjamini &
  Hochberg 1995; ``scipy.stats.false_discovery_control``).
* fixed thresholds (the paper's rules) do not use counts; see ``synthreview.release.audit``.

Statistics are rounded to ``DECIMALS`` decimals before counting, so the last-bit differences a
re-ordered input can cause in a float sum (the encoder's means) never flip a flag.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import false_discovery_control

from synthreview.errors import ConfigError

__all__ = [
    "DECIMALS",
    "MODES",
    "bh_flags",
    "expected_quantile_loss",
    "extreme_ties",
    "holdout_counts",
    "quantile_flags",
    "quantile_index",
    "quantile_threshold",
    "rounded",
]

#: audit modes: holdout quantile (default), Benjamini–Hochberg (strict), the paper's fixed rules
MODES = ("quantile", "strict", "paper")
#: statistics are rounded to this many decimals before being compared
DECIMALS = 10


def rounded(values: np.ndarray) -> np.ndarray:
    """``values`` as float64 rounded to ``DECIMALS`` decimals (what every rule compares)."""
    return np.round(np.asarray(values, dtype=np.float64), DECIMALS)


def holdout_counts(
    values: np.ndarray, reference: np.ndarray, *, direction: str, leave_one_out: bool = False
) -> np.ndarray:
    """How many reference (holdout) rows are at least as extreme as each value.

    Parameters
    ----------
    values : ndarray (n,)
        Statistic of the evaluated rows; NaN gives a NaN count (never flagged).
    reference : ndarray (m,)
        The same statistic for the holdout rows (NaN entries are dropped).
    direction : {"low", "high"}
        ``"low"``: small values are suspicious (count of reference ``<=`` value);
        ``"high"``: large values are (count of reference ``>=`` value).
    leave_one_out : bool
        ``values`` *are* the reference rows: each row's own entry is not counted.

    Returns
    -------
    ndarray of float (n,)
        Counts as floats (NaN where the value is NaN).
    """
    if direction not in ("low", "high"):
        raise ConfigError(f"direction must be 'low' or 'high'; got {direction!r} instead")
    ref = rounded(reference)
    ref = np.sort(ref[~np.isnan(ref)])
    x = rounded(values)
    if direction == "low":
        counts = np.searchsorted(ref, x, side="right").astype(np.float64)
    else:
        counts = (len(ref) - np.searchsorted(ref, x, side="left")).astype(np.float64)
    if leave_one_out:
        counts -= 1.0
    counts[np.isnan(x)] = np.nan
    return counts


def quantile_index(n: int, level: float) -> int:
    """``j = max(floor(level * (n + 1)) - 1, 0)``: the order statistic used as the threshold.

    The conformal index: a fresh row is flagged with probability ``(j + 1) / (n + 1)``, at most
    ``level`` once ``level * (n + 1) >= 1``; on fewer rows ``j = 0`` (beyond the holdout's most
    extreme value). ``-1`` without a holdout.
    """
    if n < 1:
        return -1
    return max(math.floor(level * (n + 1) + 1e-9) - 1, 0)


def extreme_ties(values: np.ndarray, counts: np.ndarray, extreme: float) -> np.ndarray:
    """Rows equal to the holdout's most extreme value ``extreme`` that a holdout row holds.

    ``counts`` are :func:`holdout_counts` of ``values`` (leave-one-out for holdout rows), so a
    holdout row at the extreme is tied only when another holdout row shares its value.
    """
    x = rounded(values)
    with np.errstate(invalid="ignore"):
        return (x == rounded(np.array([extreme]))[0]) & (np.nan_to_num(counts, nan=0.0) >= 1)


def quantile_flags(
    counts: np.ndarray, n: int, level: float, *, tied: np.ndarray | None = None
) -> np.ndarray:
    """Rows strictly beyond the holdout's ``level`` quantile (``count <= j``); NaN never flags.

    ``tied`` (:func:`extreme_ties`): rows tied with the holdout's most extreme value, never
    flagged.
    """
    if n < 1:
        return np.zeros(len(counts), dtype=bool)
    with np.errstate(invalid="ignore"):
        flags = np.nan_to_num(counts, nan=np.inf) <= quantile_index(n, level)
    return flags if tied is None else flags & ~np.asarray(tied, dtype=bool)


def expected_quantile_loss(n: int, level: float) -> float:
    """Share of a fresh real sample the quantile rule removes: ``(j + 1) / (n + 1)``.

    At most ``level`` once ``level * (n + 1) >= 1``; ``1 / (n + 1)`` on fewer holdout rows.
    """
    return float("nan") if n < 1 else (quantile_index(n, level) + 1) / (n + 1)


def quantile_threshold(reference: np.ndarray, level: float, *, direction: str) -> float:
    """The holdout value a row must fall beyond (``level`` quantile, method ``"lower"``)."""
    ref = rounded(reference)
    ref = np.sort(ref[~np.isnan(ref)])
    if not len(ref):
        return float("nan")
    j = quantile_index(len(ref), level)
    return float(ref[j] if direction == "low" else ref[len(ref) - 1 - j])


def bh_flags(counts: np.ndarray, n: int, fdr: float) -> np.ndarray:
    """Benjamini–Hochberg on the conformal p-values ``(1 + count) / (n + 1)`` at ``fdr``.

    Rows with a NaN count are left out of the procedure and never flagged.
    """
    flags = np.zeros(len(counts), dtype=bool)
    ok = ~np.isnan(counts)
    if n < 1 or not ok.any():
        return flags
    p = (1.0 + counts[ok]) / (n + 1.0)
    flags[ok] = false_discovery_control(p, method="bh") <= fdr
    return flags
