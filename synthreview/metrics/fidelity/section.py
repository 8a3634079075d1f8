"""All fidelity metrics of one candidate (Alaa et al. 2022, §3–4; Naeem et al. 2020 PRDC).

:func:`evaluate_fidelity` runs the α-Precision, β-Recall and Authenticity estimators of
:mod:`synthreview.metrics.fidelity.alpha_beta` (where they are defined and documented; they
are re-exported here) together with PRDC, and adds a holdout reference (the same estimators
with holdout rows in place of synthetic rows: a fresh sample of the real distribution scores
about 0.5 on authenticity, so every score is shown beside it).

Searches: one exact k-NN of the real rows (their radii NND_1…NND_5, cached across candidates)
and of the synthetic rows (PRDC's synthetic radii), then one grouped pass per evaluated set
(:func:`synthreview.metrics.fidelity.scan.tally`) that reduces every pair it meets to each
row's nearest real row, the β-Recall minima and PRDC's counts and flags. The tests hold the
result equal to the single-metric functions, to the authors' ``prdc`` package and to brute
force.

Confidence intervals (95 %, ``ci_method = "centred percentile"``, :data:`CI_METHOD`): each
bootstrap replicate resamples, with replacement and at their own sizes, the rows the point
estimate used and recomputes the same estimator from the per-row results: IPα resamples real
rows (its α-radii are re-taken as quantiles of the resampled real centre distances) and
synthetic rows; IRβ resamples real rows with the synthetic β-balls fixed; authenticity
resamples synthetic rows with the real nearest-neighbour radii fixed. Rows are drawn by
position in :func:`synthreview.io.row_hash.value_order`, so a permutation of either input
gives the same interval. The interval is the percentile interval of the replicates re-centred
on the point (see :func:`_centred_interval`, which also says why neither the plain percentile
nor BCa interval is used), so it always holds the point value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthreview.engine import current_engine
from synthreview.errors import UndefinedMetricWarning
from synthreview.io.row_hash import value_order
from synthreview.memo import Memo, array_digest, remember
from synthreview.metrics.fidelity.alpha_beta import (
    DEFAULT_GRID,
    AlphaPrecisionCurve,
    BetaRecallCurve,
    alpha_levels,
    authenticity_from,
    centre_distances,
    check_embedded,
    distance_to,
)
from synthreview.metrics.fidelity.features import feature_distances, pairwise_unique_combinations
from synthreview.metrics.fidelity.prdc import PRDC, neighbour_radii, prdc_from_tally
from synthreview.metrics.fidelity.scan import real_index, tally
from synthreview.neighbors import nearest
from synthreview.results import to_jsonable
from synthreview.splits import bootstrap_rows

#: how ``FidelityReport.ci`` is built (see :func:`_centred_interval`)
CI_METHOD = "centred percentile"
#: two-sided level of ``FidelityReport.ci``
CI_LEVEL = 0.95


@dataclass(frozen=True)
class FidelitySamples:
    """Per-row fidelity results (one entry per row of the evaluated set, in input order).

    Attributes
    ----------
    alpha_level : ndarray of float
        Smallest α whose real α-support contains the row (``inf`` outside every support).
    center_distance : ndarray of float
        Distance to the real centre c.
    authentic, authenticity_ratio, nearest_real_index, nearest_real_distance
        See :class:`AuthenticitySamples`.
    """

    alpha_level: np.ndarray
    center_distance: np.ndarray
    authentic: np.ndarray
    authenticity_ratio: np.ndarray
    nearest_real_index: np.ndarray
    nearest_real_distance: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """One row per evaluated row, columns named like the attributes."""
        return pd.DataFrame({f: getattr(self, f) for f in self.__dataclass_fields__})


def _scores_and_curves(result: FidelityReference | FidelityReport) -> dict[str, Any]:
    # one key set for a candidate and its holdout reference, so the two always compare
    return {
        "ip_alpha": result.ip_alpha,
        "ir_beta": result.ir_beta,
        "authenticity": result.authenticity,
        "alpha_precision_curve": result.alpha_precision_curve.to_dict(),
        "beta_recall_curve": result.beta_recall_curve.to_dict(),
    }


@dataclass(frozen=True)
class FidelityReference:
    """The same metrics with the holdout rows in place of the synthetic rows.

    ``ci``: 95 % bootstrap interval of each reference score, built as the candidate's
    (:func:`_bootstrap_intervals`, same seed and resamples): the judgement needs the noise of
    both sides of a shortfall, since a fresh real sample of a few dozen rows scores IRβ 0.28-0.64
    against a reference of 0.29-0.63 (CGM days, 15 per split, issue 27).
    """

    ip_alpha: float
    ir_beta: float
    authenticity: float
    alpha_precision_curve: AlphaPrecisionCurve
    beta_recall_curve: BetaRecallCurve
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Scores, curves and ``ci``."""
        return to_jsonable(
            {
                **_scores_and_curves(self),
                "ci": {name: list(bounds) for name, bounds in self.ci.items()},
            }
        )


@dataclass(frozen=True)
class FidelityReport:
    """Everything the Fidelity page, the audit and ``report.json`` need for one candidate.

    ``ip_alpha``, ``ir_beta``, ``authenticity``: higher is better, range [0, 1]; compare each
    with ``holdout_reference``. ``ci``: 95 % bootstrap interval of each score, ``(low, high)``
    with ``low <= score <= high``, built as ``ci_method`` says (``"centred percentile"``, see
    the module docstring; empty and ``None`` without resamples). ``samples``: per synthetic
    row; ``holdout_samples``: per holdout row (or None). ``features``: per-column table from
    :func:`synthreview.metrics.fidelity.features.feature_distances` (or None).
    """

    ip_alpha: float
    ir_beta: float
    authenticity: float
    alpha_precision_curve: AlphaPrecisionCurve
    beta_recall_curve: BetaRecallCurve
    prdc: PRDC
    samples: FidelitySamples
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    holdout_reference: FidelityReference | None = None
    holdout_samples: FidelitySamples | None = None
    features: pd.DataFrame | None = None
    combinations: Any = None
    n_bootstrap: int = 0
    ci_method: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no per-row arrays)."""
        ref = self.holdout_reference
        return to_jsonable(
            {
                **_scores_and_curves(self),
                "holdout_reference": None if ref is None else ref.to_dict(),
                "prdc": self.prdc.to_dict(),
                "ci": {name: list(bounds) for name, bounds in self.ci.items()},
                "n_bootstrap": self.n_bootstrap,
                "ci_method": self.ci_method,
                "features": self.features,
                "pairwise_unique_combinations": self.combinations,
            }
        )


def _evaluate_source(real_x, real_cd, center, other_x, real_nn, index, k, grid, prdc_k, radii=None):
    """Curves, per-row results, PRDC (given ``radii``) and bootstrap state of one set.

    One :func:`~synthreview.metrics.fidelity.scan.tally` pass of ``other_x`` against the
    real rows serves authenticity, β-Recall and, given ``radii`` (the other set's own NND_k
    for PRDC), precision, recall, density and coverage.
    """
    cd_g = centre_distances(other_x)
    found = tally(
        index,
        other_x,
        recall_radii=real_nn.distances[:, k - 1],
        cd_g=cd_g,
        ball_radii=None if radii is None else real_nn.distances[:, prdc_k - 1],
        own_radii=radii,
    )
    cd = distance_to(other_x, center)
    auth = authenticity_from(found.nearest_distance, found.nearest_index, real_nn.distances[:, 0])
    minima = found.recall_minima
    alpha_radii = np.quantile(real_cd, grid)
    samples = FidelitySamples(
        alpha_level=alpha_levels(real_cd, cd),
        center_distance=cd,
        authentic=auth.authentic,
        authenticity_ratio=auth.ratio,
        nearest_real_index=auth.nearest_real_index,
        nearest_real_distance=auth.nearest_real_distance,
    )
    precision = AlphaPrecisionCurve(grid, (cd[:, None] <= alpha_radii[None, :]).mean(axis=0))
    beta_radii = np.quantile(cd_g, grid)
    recall = BetaRecallCurve(grid, (minima[:, None] <= beta_radii[None, :]).mean(axis=0), k)
    state = _BootstrapState(
        center_distance=cd,
        recall_first=np.searchsorted(beta_radii, minima, side="left"),
        authentic=auth.authentic,
    )
    prdc = None if radii is None else prdc_from_tally(found, k=prdc_k)
    return precision, recall, samples, prdc, state


@dataclass(frozen=True)
class _BootstrapState:
    center_distance: np.ndarray  # per evaluated row: distance to the real centre c
    recall_first: np.ndarray  # per real row: first grid index at which it is covered
    authentic: np.ndarray  # per evaluated row


@dataclass(frozen=True)
class _RealDraws:
    """The real side of the bootstrap, in the real rows' value order."""

    order: np.ndarray  # value_order of the real rows: resampled positions index this
    center_distance: np.ndarray  # real centre distances, value order


def _real_draws(real_x: np.ndarray, real_cd: np.ndarray) -> _RealDraws:
    order = value_order(pd.DataFrame(real_x.astype(np.float64)))
    return _RealDraws(order=order, center_distance=real_cd[order])


def _resampled_quantiles(
    sorted_values: np.ndarray, counts: np.ndarray, grid: np.ndarray
) -> np.ndarray:
    """``numpy.quantile`` (linear) of ``sorted_values`` repeated ``counts`` times, at ``grid``.

    The k-th value of the repeated sample (0-based) is ``sorted_values[i]`` with ``i`` the first
    position whose cumulative count exceeds k, so no repeated array is built.
    """
    cumulative = np.cumsum(counts)
    n = int(cumulative[-1])
    position = grid * (n - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, n - 1)
    low = sorted_values[np.searchsorted(cumulative, below, side="right")]
    high = sorted_values[np.searchsorted(cumulative, above, side="right")]
    return low + (high - low) * (position - below)


def _centred_interval(
    point: float, replicates: np.ndarray, *, level: float, bounds: tuple[float, float]
) -> tuple[float, float]:
    """Percentile interval of the median-bias-corrected replicates: always holds ``point``.

    ``(point + q_lo - med, point + q_hi - med)`` with ``q_lo``, ``med``, ``q_hi`` the
    ``(1 - level) / 2``, 0.5 and ``(1 + level) / 2`` quantiles of the replicates, i.e. the
    percentile interval of ``θ* - (median θ* - θ̂)``, clipped to the score's range.

    Why not the plain percentile interval: IPα and IRβ are ``1 - 2 mean |curve - diagonal|``,
    and resampling adds noise to every point of the curve, which the absolute value turns into
    a drift away from the diagonal: the replicates sit below the point. On the bundled trace
    demo's ``noisy_copy`` (118 training days) each of 200 replicates of IPα 0.987 fell below it
    (percentile interval 0.873-0.970), likewise of IRβ 0.977 (0.875-0.969). BCa does not
    repair this: its bias correction ``z0 = Φ⁻¹(share of replicates below θ̂)`` is infinite
    when all of them are, and when nearly all are it picks quantiles near the largest
    replicate, which still lie below θ̂. Re-centring on the median keeps the bootstrap's spread
    (its width) and removes its median bias, so ``q_lo <= med <= q_hi`` puts the point inside
    by construction. For authenticity (a mean, unbiased under resampling) the median shift is
    within a row or two of zero and the interval is the percentile interval.
    """
    tail = (1.0 - level) / 2.0
    q_lo, med, q_hi = np.quantile(replicates, [tail, 0.5, 1.0 - tail])
    low = point + min(q_lo - med, 0.0)
    high = point + max(q_hi - med, 0.0)
    return float(max(low, bounds[0])), float(min(high, bounds[1]))


def _bootstrap_intervals(
    synth_x: np.ndarray,
    state: _BootstrapState,
    real: _RealDraws,
    grid: np.ndarray,
    points: dict[str, float],
    *,
    seed: int,
    n_bootstrap: int,
    level: float = CI_LEVEL,
) -> dict[str, tuple[float, float]]:
    """Centred-percentile intervals of IPα, IRβ and authenticity (see the module docstring).

    Each replicate draws m synthetic and n real rows with replacement (one draw of each serves
    the three scores) and recomputes, as the point estimate does: P_α from the resampled real
    α-radii and synthetic rows; R_β as the resampled real rows' coverage by the fixed
    synthetic β-balls; authenticity as the resampled rows' share authentic. β-Recall keeps the
    synthetic side fixed: resampling synthetic rows would drop about 37 % of the distinct rows
    and bias nearest-neighbour coverage downwards, and authenticity keeps the real radii fixed
    for the same reason (a duplicated real row is at distance 0 from its copy).
    """
    if n_bootstrap <= 0:
        return {}
    m, n_real, n_grid = len(synth_x), len(real.order), len(grid)
    # resample positions of a value-defined order, so shuffled input gives the same interval
    order = value_order(pd.DataFrame(synth_x.astype(np.float64)))
    cd, authentic = state.center_distance[order], state.authentic[order]
    recall_first = state.recall_first[real.order]
    by_cd = np.argsort(cd, kind="stable")
    cd_sorted = cd[by_cd]
    by_real_cd = np.argsort(real.center_distance, kind="stable")
    real_cd_sorted = real.center_distance[by_real_cd]
    rng = np.random.default_rng(seed)
    stats = np.empty((n_bootstrap, 3))
    for b in range(n_bootstrap):
        w = np.bincount(bootstrap_rows(rng, m), minlength=m)
        v = np.bincount(bootstrap_rows(rng, n_real), minlength=n_real)
        radii = _resampled_quantiles(real_cd_sorted, v[by_real_cd], grid)
        inside = np.concatenate(([0], np.cumsum(w[by_cd])))  # weight of rows with cd <= r
        p_alpha = inside[np.searchsorted(cd_sorted, radii, side="right")]
        r_beta = np.cumsum(np.bincount(recall_first, weights=v, minlength=n_grid + 1))
        stats[b] = (
            1.0 - 2.0 * np.mean(np.abs(p_alpha / m - grid)),
            1.0 - 2.0 * np.mean(np.abs(r_beta[:n_grid] / n_real - grid)),
            np.dot(w, authentic) / m,
        )
    names = ("ip_alpha", "ir_beta", "authenticity")
    return {
        name: _centred_interval(points[name], stats[:, i], level=level, bounds=(0.0, 1.0))
        for i, name in enumerate(names)
    }


def _scores_with_intervals(
    precision, recall, samples, x, state, draws, grid, seed, n_bootstrap
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """IPα, IRβ and authenticity of one set (synthetic or holdout rows) and their intervals."""
    points = {
        "ip_alpha": precision.integrated,
        "ir_beta": recall.integrated,
        "authenticity": float(samples.authentic.mean()),
    }
    ci = _bootstrap_intervals(x, state, draws, grid, points, seed=seed, n_bootstrap=n_bootstrap)
    return points, ci


def evaluate_fidelity(
    real_z: np.ndarray,
    synthetic_z: np.ndarray,
    *,
    holdout_z: np.ndarray | None = None,
    center: np.ndarray | None = None,
    real: pd.DataFrame | None = None,
    synthetic: pd.DataFrame | None = None,
    schema: Any = None,
    seed: int = 0,
    n_bootstrap: int = 200,
    memo: Memo | None = None,
    k: int = 1,
    prdc_k: int = 5,
    grid: np.ndarray | None = None,
) -> FidelityReport:
    """All fidelity metrics of one candidate, sharing the nearest-neighbour searches.

    Parameters
    ----------
    real_z, synthetic_z : ndarray of shape (n, d), (m, d)
        Embedded real (training) and synthetic rows.
    holdout_z : ndarray of shape (h, d), optional
        Embedded holdout rows; gives ``holdout_reference`` and ``holdout_samples``.
    center : ndarray of shape (d,), optional
        The embedding's centre (default: mean of ``real_z``).
    real, synthetic : DataFrame, optional
        Raw tables for the per-feature table (needs ``schema``).
    schema : Schema, optional
    seed : int, default=0
        Seeds the bootstrap.
    n_bootstrap : int, default=200
        Resamples for the 95 % intervals of IPα, IRβ and authenticity (0: none); each holds
        its score (centred percentile bootstrap, see the module docstring).
    k : int, default=1
        β-Recall neighbourhood.
    prdc_k : int, default=5
        PRDC neighbourhood.
    grid : array, optional
        α / β grid (default 0, 0.025, …, 1).
    memo : Memo, optional
        The review's :class:`~synthreview.memo.Memo`: the real-side neighbours and the holdout
        reference are computed once and shared by its candidates. Without one, each call
        computes them.

    Returns
    -------
    FidelityReport
    """

    real_x = check_embedded(real_z, "real_z", min_rows=max(k, prdc_k) + 1)
    synth_x = check_embedded(synthetic_z, "synthetic_z", d=real_x.shape[1])
    hold_x = (
        None if holdout_z is None else check_embedded(holdout_z, "holdout_z", d=real_x.shape[1])
    )
    grid = DEFAULT_GRID if grid is None else np.asarray(grid, dtype=np.float64)
    c = real_x.mean(axis=0, dtype=np.float64) if center is None else np.asarray(center, float)
    # the search kind too: an approximate search's neighbours are not the exact search's
    key = ("fidelity-real-side", array_digest(real_x), array_digest(hold_x), c.tobytes(),
           current_engine().search_kind)  # fmt: skip
    real_cd, real_nn, index, reference, holdout_samples, real_draws = remember(
        memo,
        (*key, k, prdc_k, grid.tobytes(), seed, n_bootstrap),
        lambda: _real_side(real_x, hold_x, c, k, prdc_k, grid, seed, n_bootstrap),
    )
    radii = _synthetic_radii(synth_x, prdc_k)
    precision, recall, samples, prdc, state = _evaluate_source(
        real_x, real_cd, c, synth_x, real_nn, index, k, grid, prdc_k, radii
    )
    if prdc is None:
        prdc = PRDC(np.nan, np.nan, np.nan, np.nan, k=prdc_k)
    features = combos = None
    if real is not None and synthetic is not None and schema is not None:
        features = feature_distances(real, synthetic, schema=schema)
        combos = pairwise_unique_combinations(real, synthetic, schema=schema)
    points, ci = _scores_with_intervals(
        precision, recall, samples, synth_x, state, real_draws, grid, seed, n_bootstrap
    )
    return FidelityReport(
        **points,
        alpha_precision_curve=precision,
        beta_recall_curve=recall,
        prdc=prdc,
        samples=samples,
        ci=ci,
        holdout_reference=reference,
        holdout_samples=holdout_samples,
        features=features,
        combinations=combos,
        n_bootstrap=n_bootstrap,
        ci_method=CI_METHOD if ci else None,
    )


def _real_side(real_x, hold_x, center, k, prdc_k, grid, seed, n_bootstrap):
    """Real centre distances, real k-NN, the holdout reference and the real bootstrap order.

    The holdout reference carries its own bootstrap intervals (the holdout rows resampled in
    place of the synthetic rows, with the same seed and number of resamples).

    These depend only on real, holdout, centre and options, not on the candidate, and cost
    about half of one evaluation: a review shares them between its candidates through its memo.
    """
    real_cd = distance_to(real_x, center)
    real_nn = nearest(real_x, real_x, k=max(k, prdc_k), exclude_self=True)
    index = real_index(real_x, real_nn.distances[:, -1])
    reference = holdout_samples = None
    draws = _real_draws(real_x, real_cd)
    if hold_x is not None and len(hold_x):
        h_prec, h_rec, holdout_samples, _, h_state = _evaluate_source(
            real_x, real_cd, center, hold_x, real_nn, index, k, grid, prdc_k
        )
        points, ci = _scores_with_intervals(
            h_prec, h_rec, holdout_samples, hold_x, h_state, draws, grid, seed, n_bootstrap
        )
        reference = FidelityReference(**points, alpha_precision_curve=h_prec,
                                      beta_recall_curve=h_rec, ci=ci)  # fmt: skip
    return real_cd, real_nn, index, reference, holdout_samples, draws


def _synthetic_radii(synth_x: np.ndarray, prdc_k: int) -> np.ndarray | None:
    """NND_k of every synthetic row (PRDC recall), or None with a warning when too few rows."""
    import warnings

    if len(synth_x) <= prdc_k:
        warnings.warn(
            f"PRDC with k={prdc_k} needs more than {prdc_k} synthetic rows; got {len(synth_x)}",
            UndefinedMetricWarning,
            stacklevel=3,
        )
        return None
    return neighbour_radii(synth_x, k=prdc_k)
