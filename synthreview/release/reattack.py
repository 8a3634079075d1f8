"""Re-attack after curation: is the curated set really safer than the candidate it came from?

Removing rows by a similarity filter changes the data an attacker sees and can itself leak
(Ganev & De Cristofaro, "On the Inadequacy of Similarity-based Privacy Metrics", arXiv
2312.05114): the curated set is therefore evaluated again with the full privacy section
(``evaluate_privacy``, every membership-inference attack it runs) on the same attack set (same
seed, same members and non-members), and each attack's result is compared before → after.

An attack counts as *worse* after curation when its AUC (or its TPR at 1 % FPR, when the
section gives that a confidence interval) rises above the upper end of the interval it had
before, widened for the number of comparisons: with ``K`` comparisons (each attack's AUC, and
its TPR where it has an interval; 12 attacks give up to 24), each before-interval's upper
half-width is scaled from its two-sided 95 % level (z = 1.96) to a one-sided ``1 - 0.05 / K``
level (Bonferroni: z = 2.86 at K = 24), so that a candidate whose curation changed nothing is
called worse by *some* attack in at most 5 % of reviews instead of in one review of a few (a
curated fresh-like sample failed on a rise of 0.0006 in 1 of 30 runs without the correction).
The curated set fails when any attack is worse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy.stats import norm

from synthreview.results import to_jsonable

__all__ = ["FAMILY_ALPHA", "AttackChange", "Reattack", "compare_attacks", "widened_upper"]

#: family-wise chance, over every attack compared, of calling an unchanged candidate worse
FAMILY_ALPHA = 0.05
#: the level the attacks' before-intervals are given at (two-sided 95 %)
_Z_INTERVAL = float(norm.ppf(0.975))


def _num(value: object) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return out


def _ci(value: object) -> tuple[float, float]:
    if isinstance(value, Sequence) and len(value) == 2:
        return _num(value[0]), _num(value[1])
    return float("nan"), float("nan")


@dataclass(frozen=True)
class AttackChange:
    """One attack before and after curation (AUC 0.5 / TPR 0.01 = chance; lower is better).

    ``auc_limit`` and ``tpr_limit`` are the before-interval's upper ends widened for the number
    of comparisons (:func:`widened_upper`); ``worse`` means an after-value above one of them.
    """

    attack: str
    auc_before: float
    auc_before_ci: tuple[float, float]
    auc_after: float
    auc_after_ci: tuple[float, float]
    tpr_before: float
    tpr_before_ci: tuple[float, float]
    tpr_after: float
    tpr_after_ci: tuple[float, float]
    worse: bool
    auc_limit: float = math.nan
    tpr_limit: float = math.nan

    def to_dict(self) -> dict[str, object]:
        """JSON-ready row."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


@dataclass(frozen=True)
class Reattack:
    """Every attack before → after curation of one candidate.

    Attributes
    ----------
    attacks : tuple of AttackChange
    worse : bool
        Some attack got worse beyond its before-interval: the curated set fails.
    note : str
        Why nothing could be compared (no attack before or after), else empty.
    """

    attacks: tuple[AttackChange, ...]
    worse: bool
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready ``{"attacks": [...], "worse": bool, "note": str}``."""
        return to_jsonable(
            {"attacks": [a.to_dict() for a in self.attacks], "worse": self.worse,
             "note": self.note}
        )  # fmt: skip


def _attacks(candidate: Mapping[str, object] | None) -> dict[str, Mapping[str, object]]:
    privacy = (candidate or {}).get("privacy") or {}
    return {
        str(a.get("attack")): a
        for a in privacy.get("membership_inference") or []
        if isinstance(a, Mapping) and not a.get("error")
    }


def _beyond(after: float, upper: float) -> bool:
    return math.isfinite(after) and math.isfinite(upper) and after > upper


def widened_upper(estimate: float, ci: tuple[float, float], *, n_comparisons: int) -> float:
    """Upper end of a two-sided 95 % interval widened to a one-sided Bonferroni level.

    ``estimate + (ci[1] - estimate) * z(1 - 0.05 / n_comparisons) / z(0.975)``: the upper
    half-width is rescaled as for a normal interval (for a bootstrap interval, an approximation
    of the same rescaling). NaN when the estimate or the interval is not finite.

    Parameters
    ----------
    estimate : float
        The before-curation value.
    ci : tuple of float
        Its two-sided 95 % interval.
    n_comparisons : int
        Comparisons judged together (at least 1).

    Examples
    --------
    >>> round(widened_upper(0.5, (0.45, 0.55), n_comparisons=1), 4)  # one-sided 95 %: narrower
    0.542
    >>> round(widened_upper(0.5, (0.45, 0.55), n_comparisons=24), 4)
    0.5731
    """
    if n_comparisons < 1:
        raise ValueError(f"n_comparisons must be at least 1; got {n_comparisons} instead")
    if not (math.isfinite(estimate) and math.isfinite(ci[1])):
        return math.nan
    z = float(norm.ppf(1 - FAMILY_ALPHA / n_comparisons))
    return estimate + max(ci[1] - estimate, 0.0) * z / _Z_INTERVAL


def compare_attacks(before: Mapping[str, object], after: Mapping[str, object]) -> Reattack:
    """Compare the membership-inference results of a candidate and its curated version.

    Parameters
    ----------
    before, after : mapping
        The candidate's and the curated candidate's ``to_dict()`` (as in ``report.json``).
        Each attack entry gives ``auc``, ``auc_ci`` and ``tpr_at_fpr_1pct``, and, when the
        privacy section provides one, ``tpr_at_fpr_1pct_ci``.

    Returns
    -------
    Reattack
        Attacks present on both sides, in the order of ``before``.
    """
    first, second = _attacks(before), _attacks(after)
    pairs = [(name, b, second[name]) for name, b in first.items() if name in second]
    values = []
    for name, b, a in pairs:
        auc = (_num(b.get("auc")), _ci(b.get("auc_ci")), _num(a.get("auc")), _ci(a.get("auc_ci")))
        tpr = (_num(b.get("tpr_at_fpr_1pct")), _ci(b.get("tpr_at_fpr_1pct_ci")),
               _num(a.get("tpr_at_fpr_1pct")), _ci(a.get("tpr_at_fpr_1pct_ci")))  # fmt: skip
        values.append((name, auc, tpr))
    # every before-value with an interval and an after-value is one comparison of the family
    n_comparisons = max(
        sum(
            math.isfinite(before_v) and math.isfinite(ci[1]) and math.isfinite(after_v)
            for _, *metrics in values
            for before_v, ci, after_v, _ in metrics
        ),
        1,
    )
    rows = []
    for name, (auc_b, ci_b, auc_a, ci_a), (tpr_b, tci_b, tpr_a, tci_a) in values:
        auc_limit = widened_upper(auc_b, ci_b, n_comparisons=n_comparisons)
        tpr_limit = widened_upper(tpr_b, tci_b, n_comparisons=n_comparisons)
        worse = _beyond(auc_a, auc_limit) or _beyond(tpr_a, tpr_limit)
        change = (name, auc_b, ci_b, auc_a, ci_a, tpr_b, tci_b, tpr_a, tci_a, worse)
        rows.append(AttackChange(*change, auc_limit=auc_limit, tpr_limit=tpr_limit))
    note = "" if rows else "no membership-inference attack ran both before and after curation"
    return Reattack(tuple(rows), any(r.worse for r in rows), note)
