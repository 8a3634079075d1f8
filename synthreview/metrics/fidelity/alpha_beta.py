"""Single-metric estimators of Alaa et al. 2022 (§3–4): α-Precision, β-Recall, Authenticity.

All functions take embedded arrays (rows of real and synthetic, or holdout, in one space,
e.g. :func:`synthreview.embeddings.fit_embedding` output), accept unequal sizes and are
invariant to the order of the synthetic rows. Estimators, exactly as implemented (§4):

* α-Precision. ``r_α = Q_α{‖x_r,i − c‖}`` (``numpy.quantile``, linear interpolation) with c the
  embedding's centre; ``P_α = (1/m) Σ_j 1{‖x_g,j − c‖ ≤ r_α}``. A row's ``alpha_level`` is the
  smallest α with ``r_α ≥ ‖x_g,j − c‖`` (``inf`` beyond the farthest real row).
* β-Recall. ``c_g`` = mean of the synthetic rows, ``r_β = Q_β{‖x_g,j − c_g‖}``; real row i is
  covered at β iff some synthetic row inside ``B(c_g, r_β)`` lies within ``NND_k(i)`` of it
  (the distance from i to its k-th nearest other real row; k = 1 as in the appendix), i.e.
  iff the closest synthetic row of the β-ball is that near. ``R_β`` = share of real rows
  covered. (The authors' released code instead checks only the single nearest synthetic row
  and takes quantiles over those rows; this module follows the paper's text.)
* ``ΔP_α = mean over the grid of |P_α − α|`` (likewise ΔR_β) on the default grid
  0, 0.025, …, 1; ``IPα = 1 − 2ΔP_α``, ``IRβ = 1 − 2ΔR_β``, both in [0, 1], 1 only when the
  curves lie on the diagonal (Theorem 1).
* Authenticity. For synthetic row j with nearest real row i*, the statistic is
  ``authenticity_ratio = d(j, i*) / d(i*, nearest other real row)``; j is *unauthentic* iff the
  ratio ≤ 1 (it is at least as close to i* as any other real row is). Score = share authentic.
  A fresh sample of the real distribution scores about 0.5, so every score is shown beside its
  holdout reference (the same estimators with holdout rows in place of synthetic rows).

:func:`synthreview.metrics.fidelity.section.evaluate_fidelity` combines these estimators for one
candidate, sharing the nearest-neighbour searches, and adds 95 % bootstrap intervals that
resample the rows these estimators use, recompute them and hold each score (centred percentile;
its module docstring says how and why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from synthreview.metrics.fidelity.scan import real_index, tally
from synthreview.neighbors import as_float32, nearest
from synthreview.results import to_jsonable

#: α / β grid of the curves: 0, 0.025, …, 1
DEFAULT_GRID = np.linspace(0.0, 1.0, 41)


@dataclass(frozen=True)
class AlphaPrecisionCurve:
    """``P_α`` over a grid of α; ``integrated`` is IPα (range [0, 1], higher is better)."""

    alpha: np.ndarray
    value: np.ndarray

    @property
    def deviation(self) -> float:
        """ΔP_α: mean absolute distance from the diagonal, in [0, 0.5]."""
        return float(np.mean(np.abs(self.value - self.alpha)))

    @property
    def integrated(self) -> float:
        """IPα = 1 − 2ΔP_α."""
        return 1.0 - 2.0 * self.deviation

    def to_dict(self) -> dict[str, Any]:
        """``{alpha: [...], value: [...]}``."""
        return to_jsonable({"alpha": self.alpha, "value": self.value})


@dataclass(frozen=True)
class BetaRecallCurve:
    """``R_β`` over a grid of β; ``integrated`` is IRβ (range [0, 1], higher is better)."""

    beta: np.ndarray
    value: np.ndarray
    k: int = 1

    @property
    def deviation(self) -> float:
        """ΔR_β: mean absolute distance from the diagonal, in [0, 0.5]."""
        return float(np.mean(np.abs(self.value - self.beta)))

    @property
    def integrated(self) -> float:
        """IRβ = 1 − 2ΔR_β."""
        return 1.0 - 2.0 * self.deviation

    def to_dict(self) -> dict[str, Any]:
        """``{beta: [...], value: [...]}``."""
        return to_jsonable({"beta": self.beta, "value": self.value})


@dataclass(frozen=True)
class AuthenticitySamples:
    """Per synthetic row, in input order: the authenticity test of §4.

    Attributes
    ----------
    authentic : ndarray of bool
        ``ratio > 1``.
    ratio : ndarray of float
        ``d(j, i*) / d(i*, nearest other real)`` (0/0 → 0, x/0 → inf).
    nearest_real_index : ndarray of int64
        i*, a row position in real (ties → lower index).
    nearest_real_distance : ndarray of float
        d(j, i*).
    """

    authentic: np.ndarray
    ratio: np.ndarray
    nearest_real_index: np.ndarray
    nearest_real_distance: np.ndarray

    @property
    def score(self) -> float:
        """Share of authentic rows, in [0, 1]; higher is better (≈ 0.5 for a fresh sample)."""
        return float(np.mean(self.authentic)) if len(self.authentic) else np.nan


def check_embedded(
    x: np.ndarray, name: str, *, d: int | None = None, min_rows: int = 1
) -> np.ndarray:
    arr = as_float32(x, name)
    if d is not None and arr.shape[1] != d:
        raise ValueError(f"{name} has {arr.shape[1]} features; expected {d} like real")
    if len(arr) < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows; got {len(arr)}")
    return arr


def distance_to(x: np.ndarray, center: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x.astype(np.float64) - center, axis=1)


def alpha_levels(real_cd: np.ndarray, cd: np.ndarray) -> np.ndarray:
    """Inverse of the linear-interpolation quantile function of the real centre distances."""
    s = np.sort(real_cd)
    n = len(s)
    pos = np.searchsorted(s, cd, side="left")
    level = np.full(len(cd), np.inf)
    level[pos == 0] = 0.0
    mid = (pos > 0) & (pos < n)
    p = pos[mid]
    lo, hi = s[p - 1], s[p]
    frac = np.divide(cd[mid] - lo, hi - lo, out=np.ones_like(lo), where=hi > lo)
    level[mid] = (p - 1 + frac) / max(n - 1, 1)
    return level


def authenticity_samples(real: np.ndarray, synthetic: np.ndarray) -> AuthenticitySamples:
    """Authenticity test for every synthetic row (Alaa et al. 2022, §4 "Authenticity").

    Parameters
    ----------
    real : ndarray of shape (n, d), n ≥ 2
    synthetic : ndarray of shape (m, d)

    Returns
    -------
    AuthenticitySamples
        ``.score`` is the Authenticity score (range [0, 1], higher is better).
    """
    real_x = check_embedded(real, "real", min_rows=2)
    synth_x = check_embedded(synthetic, "synthetic", d=real_x.shape[1])
    real_nnd = nearest(real_x, real_x, k=1, exclude_self=True).distances[:, 0]
    return _authenticity(real_x, synth_x, real_nnd)


def _authenticity(real_x, synth_x, real_nnd) -> AuthenticitySamples:
    nn = nearest(synth_x, real_x, k=1)
    return authenticity_from(nn.distances[:, 0], nn.indices[:, 0], real_nnd)


def authenticity_from(d, i_star, real_nnd) -> AuthenticitySamples:
    """The §4 test from each row's nearest real row ``i_star`` at distance ``d``."""
    own = real_nnd[i_star]
    ratio = np.divide(d, own, out=np.where(d > 0, np.inf, 0.0), where=own > 0)
    return AuthenticitySamples(ratio > 1.0, ratio, i_star, d)


def authenticity_score(real: np.ndarray, synthetic: np.ndarray) -> float:
    """Share of authentic synthetic rows (range [0, 1], higher is better)."""
    return authenticity_samples(real, synthetic).score


def alpha_precision_curve(
    real: np.ndarray,
    synthetic: np.ndarray,
    *,
    center: np.ndarray | None = None,
    alphas: np.ndarray | None = None,
) -> AlphaPrecisionCurve:
    """α-Precision curve P_α (Alaa et al. 2022, §3.2.1 and §4).

    Parameters
    ----------
    real, synthetic : ndarray of shape (n, d), (m, d)
    center : ndarray of shape (d,), optional
        Centre of the real support (the embedding's ``center``); default the real mean.
    alphas : array of float in [0, 1], optional
        Grid; default 0, 0.025, …, 1.

    Returns
    -------
    AlphaPrecisionCurve
        ``.integrated`` is IPα (range [0, 1], higher is better).
    """
    real_x = check_embedded(real, "real")
    synth_x = check_embedded(synthetic, "synthetic", d=real_x.shape[1])
    grid = DEFAULT_GRID if alphas is None else np.asarray(alphas, dtype=np.float64)
    c = real_x.mean(axis=0, dtype=np.float64) if center is None else np.asarray(center, float)
    real_cd, cd = distance_to(real_x, c), distance_to(synth_x, c)
    radii = np.quantile(real_cd, grid)
    return AlphaPrecisionCurve(grid, (cd[:, None] <= radii[None, :]).mean(axis=0))


def centre_distances(other_x: np.ndarray) -> np.ndarray:
    """‖x_g − c_g‖ with c_g the mean of the evaluated rows (the β-Recall centre)."""
    return distance_to(other_x, other_x.mean(axis=0, dtype=np.float64))


def beta_recall_curve(
    real: np.ndarray,
    synthetic: np.ndarray,
    *,
    betas: np.ndarray | None = None,
    k: int = 1,
) -> BetaRecallCurve:
    """β-Recall curve R_β (Alaa et al. 2022, §3.2.1, §4 Eq. 9; k = 1 as in the appendix).

    Parameters
    ----------
    real : ndarray of shape (n, d), n > k
    synthetic : ndarray of shape (m, d)
    betas : array of float in [0, 1], optional
        Grid; default 0, 0.025, …, 1.
    k : int, default=1
        Real rows are covered by synthetic rows within their k-th nearest-real distance.

    Returns
    -------
    BetaRecallCurve
        ``.integrated`` is IRβ (range [0, 1], higher is better).
    """
    real_x = check_embedded(real, "real", min_rows=k + 1)
    synth_x = check_embedded(synthetic, "synthetic", d=real_x.shape[1])
    grid = DEFAULT_GRID if betas is None else np.asarray(betas, dtype=np.float64)
    nnd = nearest(real_x, real_x, k=k, exclude_self=True).distances[:, k - 1]
    cd_g = centre_distances(synth_x)
    minima = tally(real_index(real_x, nnd), synth_x, recall_radii=nnd, cd_g=cd_g).recall_minima
    radii = np.quantile(cd_g, grid)
    return BetaRecallCurve(grid, (minima[:, None] <= radii[None, :]).mean(axis=0), k=k)
