"""Attack-set sampling and ROC summaries shared by every membership-inference attack.

An attack gives each record of an *attack set* (training rows = members, holdout rows =
non-members, balanced; :func:`attack_set`) a score, higher = "more likely a member";
:func:`summarize_attack` turns the scores into an :class:`AttackResult` with the ROC curve, the
ROC AUC (Eiring 2022, ``003_*``, thesis section 2.4: ROC curves against the chance diagonal for
a 50-50 query set), a stratified bootstrap CI and TPR at low FPR, plus the Hide-and-Seek
challenge accuracy (``002_*``, section 3). The attacks themselves live in
:mod:`synthreview.metrics.privacy.membership` and :mod:`synthreview.metrics.glucose.seekers`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score, roc_curve

from synthreview.errors import DataError
from synthreview.results import to_jsonable
from synthreview.splits import bootstrap_rows, draw_rows, split_rows, units_of

#: ROC points kept in ``to_dict()``: a linear and a log-spaced FPR grid (the curve is interpolated)
_ROC_GRID = np.unique(np.concatenate([np.linspace(0, 1, 101), np.logspace(-4, 0, 41)]))


@dataclass(frozen=True)
class AttackResult:
    """Outcome of one membership-inference attack.

    Attributes
    ----------
    attack : str
    auc : float
        ROC AUC in [0, 1]; 0.5 = the attacker does no better than chance, lower is better.
    auc_ci : tuple of float
        Stratified bootstrap 95% percentile interval of the AUC.
    tpr_at_fpr_1pct, tpr_at_fpr_01pct : float
        True-positive rate at a false-positive rate of 1% and 0.1%, interpolated on the ROC
        (chance = the FPR itself).
    fpr, tpr : ndarray
        The ROC curve (``sklearn.metrics.roc_curve``).
    scores : ndarray
        Per attack-set row, higher = "member".
    is_member : ndarray of bool
    reference_auc : float or None
        AUC of the same attack when holdout rows play both roles (pseudo-members vs
        pseudo-non-members): the chance level actually achieved, expected ~0.5.
    reference_fpr, reference_tpr : ndarray or None
    advantage : float
        Membership advantage max(TPR - FPR) over the ROC (Yeom et al. 2018), in [0, 1]:
        0 = chance, 1 = every member told apart; lower is better.
    challenge_accuracy : float or None
        Hide-and-Seek score of the nearest-neighbour seeker: the N best-scored records are
        called members (N = number of members); accuracy, 0.5 = chance. Ties share the last
        places fractionally, so the value does not depend on row order.
    error : str or None
        Why the attack could not run; the numbers are then ``nan``.
    """

    attack: str
    auc: float
    auc_ci: tuple[float, float]
    tpr_at_fpr_1pct: float
    tpr_at_fpr_01pct: float
    fpr: np.ndarray = field(repr=False)
    tpr: np.ndarray = field(repr=False)
    scores: np.ndarray = field(repr=False)
    is_member: np.ndarray = field(repr=False)
    reference_auc: float | None = None
    reference_fpr: np.ndarray | None = field(default=None, repr=False)
    reference_tpr: np.ndarray | None = field(default=None, repr=False)
    challenge_accuracy: float | None = None
    error: str | None = None
    advantage: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary; the ROC is interpolated on a fixed linear + log FPR grid.

        ``n_members`` / ``n_nonmembers`` size the attack set, so a judgement can put a
        confidence bound on the TPR (:mod:`synthreview.judgement.rules`).
        """
        roc = {"fpr": [], "tpr": []}
        if len(self.fpr):
            roc = {"fpr": _ROC_GRID, "tpr": np.interp(_ROC_GRID, self.fpr, self.tpr)}
        return to_jsonable(
            {
                "attack": self.attack,
                "auc": self.auc,
                "auc_ci": list(self.auc_ci),
                "tpr_at_fpr_1pct": self.tpr_at_fpr_1pct,
                "tpr_at_fpr_01pct": self.tpr_at_fpr_01pct,
                "advantage": self.advantage,
                "reference_auc": self.reference_auc,
                "challenge_accuracy": self.challenge_accuracy,
                "n_members": int(np.sum(self.is_member)),
                "n_nonmembers": int(np.sum(~np.asarray(self.is_member, bool))),
                "error": self.error,
                "roc": roc,
            }
        )


def failed_attack(attack: str, error: str) -> AttackResult:
    """An :class:`AttackResult` that records why ``attack`` could not run."""
    empty = np.empty(0)
    return AttackResult(
        attack, np.nan, (np.nan, np.nan), np.nan, np.nan, empty, empty, empty,
        np.empty(0, bool), error=error,
    )  # fmt: skip


def bootstrap_auc(
    scores: np.ndarray, is_member: np.ndarray, *, n_bootstrap: int = 200, seed: int = 0
) -> np.ndarray:
    """AUCs of ``n_bootstrap`` stratified resamples (members and non-members separately).

    Each resample is evaluated in O(n) from one sort: with per-score counts ``m`` (members) and
    ``h`` (non-members), AUC = sum(m * (cumsum(h) - h / 2)) / (sum(m) * sum(h)), the
    Mann-Whitney statistic with ties counted one half.
    """
    rng = np.random.default_rng(seed)
    uniq, inv = np.unique(scores, return_inverse=True)
    members, others = inv[is_member], inv[~is_member]
    out = np.empty(n_bootstrap)
    for b in range(n_bootstrap):
        m = np.bincount(members[bootstrap_rows(rng, len(members))], minlength=len(uniq))
        h = np.bincount(others[bootstrap_rows(rng, len(others))], minlength=len(uniq))
        out[b] = np.sum(m * (np.cumsum(h) - h / 2)) / (len(members) * len(others))
    return out


def challenge_accuracy(scores: np.ndarray, is_member: np.ndarray) -> float:
    """Accuracy of calling the N best-scored records members (N = number of members).

    Records tied at the cut-off are called members in proportion to the places left, i.e. the
    expected accuracy under random tie-breaking.
    """
    n, n_members = len(scores), int(is_member.sum())
    if n_members == 0:
        return float("nan")
    cut = np.sort(scores)[::-1][n_members - 1]
    above, tied = scores > cut, scores == cut
    share = (n_members - above.sum()) / tied.sum()
    called_member = above + share * tied
    correct = np.where(is_member, called_member, 1.0 - called_member)
    return float(correct.sum() / n)


def summarize_attack(
    attack: str,
    scores: np.ndarray,
    is_member: np.ndarray,
    *,
    reference_scores: np.ndarray | None = None,
    reference_is_member: np.ndarray | None = None,
    with_challenge: bool = False,
    n_bootstrap: int = 200,
    seed: int = 0,
) -> AttackResult:
    """ROC, AUC with bootstrap CI, TPR at FPR 1% / 0.1% from per-record attack scores.

    Parameters
    ----------
    attack : str
        Name shown in reports and legends.
    scores : array-like of shape (n,)
        Higher = "member".
    is_member : array-like of bool, shape (n,)
    reference_scores, reference_is_member : array-like, optional
        The same attack run with holdout rows as pseudo-members; gives ``reference_auc``.
    with_challenge : bool, default=False
        Also compute the Hide-and-Seek challenge accuracy.
    n_bootstrap : int, default=200
    seed : int, default=0

    Returns
    -------
    AttackResult
    """
    scores = np.asarray(scores, dtype=np.float64)
    is_member = np.asarray(is_member, dtype=bool)
    if scores.shape != is_member.shape or scores.ndim != 1:
        raise ValueError(
            f"scores and is_member must be 1-d of equal length; got {scores.shape} and "
            f"{is_member.shape}"
        )
    if is_member.all() or not is_member.any() or not np.isfinite(scores).all():
        raise ValueError("the attack set must hold members and non-members with finite scores")
    fpr, tpr, _ = roc_curve(is_member, scores)
    boot = bootstrap_auc(scores, is_member, n_bootstrap=n_bootstrap, seed=seed)
    ref_auc = ref_fpr = ref_tpr = None
    if reference_scores is not None and reference_is_member is not None:
        ref_fpr, ref_tpr, _ = roc_curve(reference_is_member, reference_scores)
        ref_auc = float(roc_auc_score(reference_is_member, reference_scores))
    return AttackResult(
        attack=attack,
        auc=float(roc_auc_score(is_member, scores)),
        auc_ci=(float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))),
        tpr_at_fpr_1pct=float(np.interp(0.01, fpr, tpr)),
        tpr_at_fpr_01pct=float(np.interp(0.001, fpr, tpr)),
        fpr=fpr,
        tpr=tpr,
        scores=scores,
        is_member=is_member,
        reference_auc=ref_auc,
        reference_fpr=ref_fpr,
        reference_tpr=ref_tpr,
        challenge_accuracy=challenge_accuracy(scores, is_member) if with_challenge else None,
        advantage=float(max(0.0, np.max(tpr - fpr))),
    )


@dataclass(frozen=True)
class AttackSet:
    """Which rows the attacks score: a balanced member / non-member sample, plus the sanity split.

    Attributes
    ----------
    real_rows : ndarray of int
        Members: positions in the real (training) table.
    holdout_rows : ndarray of int
        Non-members: positions in the holdout table (same count as ``real_rows``).
    reference_member_rows, reference_nonmember_rows : ndarray of int
        Two disjoint halves of the holdout used as pseudo-members / pseudo-non-members.
    """

    real_rows: np.ndarray
    holdout_rows: np.ndarray
    reference_member_rows: np.ndarray
    reference_nonmember_rows: np.ndarray

    @property
    def is_member(self) -> np.ndarray:
        """Truth for the stacked attack set (members first)."""
        return np.r_[np.ones(len(self.real_rows), bool), np.zeros(len(self.holdout_rows), bool)]

    @property
    def reference_is_member(self) -> np.ndarray:
        """Pseudo-truth for the stacked sanity-reference set."""
        n_m, n_n = len(self.reference_member_rows), len(self.reference_nonmember_rows)
        return np.r_[np.ones(n_m, bool), np.zeros(n_n, bool)]


def attack_set(
    n_real: int,
    n_holdout: int,
    *,
    max_attack: int = 10_000,
    seed: int = 0,
    sanity_within_nonmembers: bool = False,
    real_groups: np.ndarray | None = None,
    holdout_groups: np.ndarray | None = None,
) -> AttackSet:
    """Draw the attack set: ``min(max_attack, n_real, n_holdout)`` members and as many non-members.

    Deterministic in ``(n_real, n_holdout, max_attack, seed)`` so that another attack (e.g. a
    recurrent seeker on traces) can score exactly the same rows and be summarised alongside.
    The sanity split takes two disjoint halves of ``min(2 * max_attack, n_holdout)`` holdout
    rows, or with ``sanity_within_nonmembers`` two halves of the non-members themselves: the
    sanity run then scores no row the main run does not, so per-row searches serve both (the
    split is smaller only when the holdout has more rows than the non-members).

    With ``real_groups`` / ``holdout_groups`` (the person of every row) members and
    non-members are whole people, as many as fit in that many rows, and the sanity split's
    halves hold as many people each, never a person on both sides
    (:mod:`synthreview.splits`); without them the draws are the row draws above.
    """
    if max_attack < 1:
        raise ValueError(f"max_attack must be a positive integer; got {max_attack}")
    if n_real < 1 or n_holdout < 2:
        raise DataError(
            f"membership inference needs >= 1 real and >= 2 holdout rows; got {n_real} and "
            f"{n_holdout}"
        )
    rng = np.random.default_rng(seed)
    n = min(max_attack, n_real, n_holdout)
    real_rows = draw_rows(rng, n_real, n, groups=real_groups)
    holdout_rows = draw_rows(rng, n_holdout, n, groups=holdout_groups)
    if sanity_within_nonmembers and len(holdout_rows) >= 2:
        drawn = None if holdout_groups is None else np.asarray(holdout_groups)[holdout_rows]
        units = units_of(len(holdout_rows), drawn)
        half = units.n_units // 2
        first, second = split_rows(rng, len(holdout_rows), (half, half), groups=units)
        first, second = holdout_rows[first], holdout_rows[second]
    else:
        units = units_of(n_holdout, holdout_groups)
        half = min(max_attack, units.n_units // 2)
        first, second = split_rows(rng, n_holdout, (half, half), groups=units)
    return AttackSet(real_rows, holdout_rows, first, second)
