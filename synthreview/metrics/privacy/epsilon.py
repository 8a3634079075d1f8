"""Empirical lower bound on the differential-privacy ε from membership attacks (black-box, loose).

If a generator is (ε, 0)-DP, every membership test satisfies TPR ≤ e^ε · FPR and
1 − FPR ≤ e^ε · (1 − TPR) (Kairouz et al. 2015; the auditing recipe of Jagielski et al. 2020
and Nasr et al. 2021, used by TAPAS, Houssiau et al. 2022). An attack with a fixed threshold
therefore certifies ε ≥ log(TPR_lo / FPR_hi) (and the mirrored ratio), with Clopper–Pearson
bounds on the two rates.

To keep the bound honest the threshold is chosen on one half of the attack set (each attack,
each candidate threshold) and the rates are counted on the other half, never on the rows that
chose it. The result bounds ε from below only: a small value never shows that data is private,
and with one training set (not many neighbouring datasets) the bound is loose by design.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from scipy.stats import beta

from synthreview.metrics.privacy.attack_stats import AttackResult
from synthreview.results import to_jsonable
from synthreview.splits import draw_rows

__all__ = ["EpsilonBound", "clopper_pearson", "epsilon_lower_bound"]


@dataclass(frozen=True)
class EpsilonBound:
    """Lower bound on ε, certified at ``confidence`` by one attack on held-out rows.

    Attributes
    ----------
    epsilon : float
        ε ≥ this (0 = no evidence against any ε), in [0, inf); higher = riskier.
    attack : str or None
        The attack and threshold chosen on the selection half.
    confidence : float
        Both Clopper–Pearson bounds hold jointly with at least this probability (each one-sided
        at 1 - (1 - confidence) / 2).
    threshold : float
        Score at or above which a row is called a member.
    tpr, fpr : float
        Rates on the held-out half at that threshold.
    n_members, n_nonmembers : int
        Rows of the held-out half.
    caveat : str
    """

    epsilon: float
    attack: str | None
    confidence: float
    threshold: float
    tpr: float
    fpr: float
    n_members: int
    n_nonmembers: int
    caveat: str = "black-box, loose: bounds ε from below only"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``epsilon``, ``attack``, ``confidence``, ...)."""
        return to_jsonable({f.name: getattr(self, f.name) for f in fields(self)})


def clopper_pearson(k: int | np.ndarray, n: int, alpha: float) -> tuple[Any, Any]:
    """One-sided Clopper–Pearson (lower, upper) bounds, each at level ``1 - alpha``."""
    k = np.asarray(k, np.float64)
    lower = np.where(k > 0, beta.ppf(alpha, k, n - k + 1), 0.0)
    upper = np.where(k < n, beta.ppf(1 - alpha, k + 1, n - k), 1.0)
    return lower, upper


def _bound(tp: np.ndarray, fp: np.ndarray, n_m: int, n_o: int, alpha: float) -> np.ndarray:
    """ε certified by (tp of n_m members, fp of n_o non-members) called members."""
    tpr_lo, _ = clopper_pearson(tp, n_m, alpha)
    _, fpr_hi = clopper_pearson(fp, n_o, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.log(tpr_lo / fpr_hi)
        # conservative: the smallest numerator and the largest denominator the bounds allow
        second = np.log((1 - fpr_hi) / (1 - tpr_lo))
    out = np.fmax(first, second)
    return np.where(np.isfinite(out), np.maximum(out, 0.0), 0.0)


def _counts(scores: np.ndarray, is_member: np.ndarray, thresholds: np.ndarray):
    """Members and non-members with score >= each threshold."""
    m = np.sort(scores[is_member])
    o = np.sort(scores[~is_member])
    tp = len(m) - np.searchsorted(m, thresholds, side="left")
    fp = len(o) - np.searchsorted(o, thresholds, side="left")
    return tp, fp


def epsilon_lower_bound(
    attacks: Sequence[AttackResult],
    *,
    confidence: float = 0.95,
    n_thresholds: int = 200,
    groups: np.ndarray | None = None,
    seed: int = 0,
) -> EpsilonBound:
    """Best ε lower bound over ``attacks``: threshold picked on one half, certified on the other.

    Parameters
    ----------
    attacks : sequence of AttackResult
        Results with per-row ``scores`` and ``is_member`` (failed attacks are skipped).
    confidence : float, default=0.95
    n_thresholds : int, default=200
        Candidate thresholds per attack (score quantiles of the selection half).
    groups : ndarray, optional
        Person of every scored row (the row-level attacks of a person-level review): each
        half then takes whole people, so no person's rows both choose the threshold and
        certify it.
    seed : int, default=0
        Seeds the split of members and of non-members into halves.

    Returns
    -------
    EpsilonBound
        ``epsilon = 0`` with ``attack = None`` when no attack ran.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence} instead")
    alpha = (1 - confidence) / 2
    usable = [a for a in attacks if a.error is None and len(a.scores)]
    if not usable:
        return EpsilonBound(0.0, None, confidence, math.nan, math.nan, math.nan, 0, 0)
    is_member = np.asarray(usable[0].is_member, bool)
    rng = np.random.default_rng(seed)
    select = np.zeros(len(is_member), bool)
    for side in (np.flatnonzero(is_member), np.flatnonzero(~is_member)):
        people = None if groups is None else np.asarray(groups)[side]
        select[side[draw_rows(rng, len(side), len(side) // 2, groups=people)]] = True
    held = ~select
    n_m, n_o = int((is_member & held).sum()), int((~is_member & held).sum())
    best = (-1.0, None, math.nan)
    for a in usable:
        if len(a.scores) != len(is_member) or not np.array_equal(a.is_member, is_member):
            continue  # scored another attack set: its rows cannot share this split
        s = np.asarray(a.scores, np.float64)
        cand = np.unique(np.quantile(s[select], np.linspace(0, 1, n_thresholds)))
        tp, fp = _counts(s[select], is_member[select], cand)
        fit = _bound(tp, fp, int((is_member & select).sum()), int((~is_member & select).sum()),
                     alpha)  # fmt: skip
        i = int(np.argmax(fit))
        if fit[i] > best[0]:
            best = (float(fit[i]), a, float(cand[i]))
    _, attack, threshold = best
    s = np.asarray(attack.scores, np.float64)
    tp, fp = _counts(s[held], is_member[held], np.array([threshold]))
    eps = float(_bound(tp, fp, n_m, n_o, alpha)[0])
    return EpsilonBound(
        epsilon=eps, attack=attack.attack, confidence=confidence, threshold=threshold,
        tpr=float(tp[0] / n_m), fpr=float(fp[0] / n_o), n_members=n_m, n_nonmembers=n_o,
    )  # fmt: skip
