"""Re-attack after curation: is the curated set really safer than the candidate it came from?

Removing rows by a similarity filter changes the data an attacker sees and can itself leak
(Ganev & De Cristofaro, "On the Inadequacy of Similarity-based Privacy Metrics", arXiv
2312.05114): the curated set is therefore evaluated again with the full privacy section
(``evaluate_privacy``, every membership-inference attack it runs) on the same attack set (same
seed, same members and non-members), and each attack's result is compared before → after.

An attack counts as *worse* after curation when its AUC (or its TPR at 1 % FPR, when the
section gives that a confidence interval) rises above the upper end of the 95 % interval it had
before: a change the before-interval does not explain. The curated set fails when any attack is
worse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from synthreview.results import to_jsonable

__all__ = ["AttackChange", "Reattack", "compare_attacks"]


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
    """One attack before and after curation (AUC 0.5 / TPR 0.01 = chance; lower is better)."""

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
    rows = []
    for name, b in first.items():
        a = second.get(name)
        if a is None:
            continue
        auc_b, auc_a = _num(b.get("auc")), _num(a.get("auc"))
        ci_b, ci_a = _ci(b.get("auc_ci")), _ci(a.get("auc_ci"))
        tpr_b, tpr_a = _num(b.get("tpr_at_fpr_1pct")), _num(a.get("tpr_at_fpr_1pct"))
        tci_b, tci_a = _ci(b.get("tpr_at_fpr_1pct_ci")), _ci(a.get("tpr_at_fpr_1pct_ci"))
        worse = _beyond(auc_a, ci_b[1]) or _beyond(tpr_a, tci_b[1])
        rows.append(AttackChange(name, auc_b, ci_b, auc_a, ci_a, tpr_b, tci_b, tpr_a, tci_a, worse))
    note = "" if rows else "no membership-inference attack ran both before and after curation"
    return Reattack(tuple(rows), any(r.worse for r in rows), note)
