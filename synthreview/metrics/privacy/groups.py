"""Worst-group membership risk: every attack's AUC and TPR at 1 % FPR within each group.

A population AUC averages over everyone; a generator that memorises the few dozen rows of one
small group barely moves it ("Lost in the Averages", Meeus et al. 2024; SACRO-ML #288 asks for
MIA risk per input group). With grouping columns (``--groups``), each attack's scores are cut
by the group of the scored row (each column on its own, as the utility section's by-group
errors are) and the ROC of each group is computed from its own members and non-members, so a
threshold at 1 % FPR is the group's own. Groups with fewer than :data:`MIN_GROUP_ROWS` members
or non-members in the attack set are pooled into ``"other"`` (and said so). The judgement
(rule ``group_mia_tpr_at_fpr_1pct``) takes the worst group over every attack, each TPR bounded
below with Clopper-Pearson and the multiplicity of groups x attacks corrected (Bonferroni).

Range: AUC in [0, 1] (0.5 = chance), TPR in [0, 1] (chance = 0.01 at 1 % FPR); lower is better.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score, roc_curve

from synthreview.metrics.privacy.attack_stats import AttackResult
from synthreview.results import to_jsonable

__all__ = ["MIN_GROUP_ROWS", "GroupAttack", "GroupMembership", "group_membership"]

#: fewest members and non-members a group needs in the attack set to be judged on its own
MIN_GROUP_ROWS = 30
OTHER = "other"


@dataclass(frozen=True)
class GroupAttack:
    """One attack within one group.

    Attributes
    ----------
    column, group, attack : str
    auc, tpr_at_fpr_1pct : float
    n_members, n_nonmembers : int
        The group's rows in the attack set (the judgement's bounds need them).
    """

    column: str
    group: str
    attack: str
    auc: float
    tpr_at_fpr_1pct: float
    n_members: int
    n_nonmembers: int

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return to_jsonable(self.__dict__)


@dataclass(frozen=True)
class GroupMembership:
    """Every (column, group, attack) result, and which groups were pooled.

    Attributes
    ----------
    results : tuple of GroupAttack
    pooled : dict of str -> list of str
        Column -> the groups pooled into ``"other"`` (below :data:`MIN_GROUP_ROWS`).
    min_rows : int
    unit : {"row", "person"}
        What a member is: a training row, or a training person in a person-level review
        (each attack's person scores, a person's group from the person's first row).
    """

    results: tuple[GroupAttack, ...]
    pooled: dict[str, list[str]]
    min_rows: int = MIN_GROUP_ROWS
    unit: str = "row"

    def to_dict(self) -> dict:
        """JSON-ready: ``results``, ``pooled``, ``min_rows``, ``unit``."""
        return to_jsonable(
            {
                "results": [r.to_dict() for r in self.results],
                "pooled": self.pooled,
                "min_rows": self.min_rows,
                "unit": self.unit,
            }
        )


def _labels(values: pd.Series, is_member: np.ndarray, min_rows: int) -> tuple[np.ndarray, list]:
    text = values.astype("string").fillna("(missing)").to_numpy(dtype=object)
    small = []
    for group in sorted(set(text)):
        inside = text == group
        if min(int((inside & is_member).sum()), int((inside & ~is_member).sum())) < min_rows:
            small.append(group)
    labels = np.where(np.isin(text, small), OTHER, text)
    return labels, small


def group_membership(
    attacks: Sequence[AttackResult],
    members: pd.DataFrame,
    nonmembers: pd.DataFrame,
    *,
    columns: Sequence[str],
    min_rows: int = MIN_GROUP_ROWS,
) -> GroupMembership:
    """Each attack's AUC and TPR at 1 % FPR per group of each column (module text).

    Parameters
    ----------
    attacks : sequence of AttackResult
        Scored on the attack set: members first, then non-members, in the order of
        ``members`` and ``nonmembers``; an attack with an error or another length is skipped.
    members, nonmembers : pandas.DataFrame
        The scored training and holdout rows (their grouping columns), in attack-set order.
    columns : sequence of str
        Grouping columns, each judged on its own.
    min_rows : int, default=MIN_GROUP_ROWS

    Returns
    -------
    GroupMembership
    """
    n_m, n_o = len(members), len(nonmembers)
    is_member = np.r_[np.ones(n_m, bool), np.zeros(n_o, bool)]
    results, pooled = [], {}
    for column in columns:
        values = pd.concat([members[column], nonmembers[column]], ignore_index=True)
        labels, small = _labels(values, is_member, min_rows)
        pooled[column] = small
        for group in sorted(set(labels), key=lambda g: (g == OTHER, g)):
            inside = labels == group
            m, o = int((inside & is_member).sum()), int((inside & ~is_member).sum())
            if not m or not o:
                continue  # "other" with members only (or non-members only): no ROC
            for attack in attacks:
                scores = np.asarray(attack.scores, dtype=float)
                if attack.error is not None or len(scores) != n_m + n_o:
                    continue
                truth, score = is_member[inside], scores[inside]
                fpr, tpr, _ = roc_curve(truth, score)
                results.append(
                    GroupAttack(
                        column=column,
                        group=str(group),
                        attack=attack.attack,
                        auc=float(roc_auc_score(truth, score)),
                        tpr_at_fpr_1pct=float(np.interp(0.01, fpr, tpr)),
                        n_members=m,
                        n_nonmembers=o,
                    )
                )
    return GroupMembership(tuple(results), pooled, min_rows)
