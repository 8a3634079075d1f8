"""Person-level membership inference: a person's rows judged together.

A table with several rows per person (visits, transactions, days of glucose) is audited row by
row by the attacks of :mod:`synthreview.metrics.privacy.membership`, and a row-level audit
underestimates what is learnt about a *person*: MT-MIA (arXiv 2602.07126) and FERMI (arXiv
2605.11527) show that single-table, row-level attacks miss user-level leakage, because weak
evidence spread over a person's rows adds up. Here every attack's per-row scores (its
``AttackResult.scores``, members first, in the order of
:func:`~synthreview.metrics.privacy.attack_stats.attack_set`) are aggregated per person, and the
person scores are summarised exactly as rows are (:func:`~synthreview.metrics.privacy.
attack_stats.summarize_attack`: ROC AUC with a bootstrap CI, TPR at 1 % and 0.1 % FPR), with
Clopper-Pearson intervals on the two TPRs and the ε lower bound of
:func:`~synthreview.metrics.privacy.epsilon.epsilon_lower_bound` on the person scores.

Membership is by person: the training table's people are the members, the holdout's people the
non-members, and a person on both sides is refused before anything is computed
(:func:`synthreview.io.persons.check_person_column`).

**Default aggregate: the mean of a person's row scores**, chosen by measurement on the test
table of ``tests/test_person_level.py`` (coded hourly CGM windows, one "person" per 8-hour block
of a subject's recording, 3-8 rows each; about 300 training and 220 holdout people; a
candidate that copies every row of 5 % of the training people, and a fresh sample of other
people), four seeded splits: the worst attack's person-level TPR at 1 % FPR for the copying
candidate was 0.051-0.065 with the mean and 0.010-0.055 with the max (fresh sample: 0.020-0.040
with the mean, 0.016-0.034 with the max; row-level figure of the copying candidate 0.013-0.018).
The max lets one coincidental row decide, and in a table whose rows repeat across people
(coded visits) most people, member or not, have some row that sits on a synthetic row; the mean
asks whether *all* of a person's rows are where the synthetic data put them, the question a
copied person answers yes to. ``aggregate="max"`` stays available: one memorised row of a person
with many fresh ones is the case it catches, and the glucose section's per-subject review
(:mod:`synthreview.metrics.glucose.subjects`) uses it on continuous day traces, whose rows do
not repeat by coincidence.

Only rows of the attack set are scored (at most ``max_attack`` training and holdout rows,
drawn by row): a person whose rows were not all drawn is judged on the rows that were.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from synthreview.io.persons import person_ids
from synthreview.io.row_hash import table_row_hashes
from synthreview.metrics.privacy.attack_stats import (
    AttackResult,
    attack_set,
    failed_attack,
    summarize_attack,
)
from synthreview.metrics.privacy.epsilon import (
    EpsilonBound,
    clopper_pearson,
    epsilon_lower_bound,
)
from synthreview.metrics.privacy.membership import membership_inference
from synthreview.results import to_jsonable

__all__ = [
    "AGGREGATES",
    "DEFAULT_AGGREGATE",
    "PersonAttack",
    "PersonLevel",
    "PersonScores",
    "aggregate_person_scores",
    "one_row_per_person",
    "person_membership",
    "person_membership_inference",
    "person_rounds",
    "tpr_interval",
]

AGGREGATES = ("mean", "max")
DEFAULT_AGGREGATE = "mean"
#: one-sided level of each Clopper-Pearson bound of a TPR (a two-sided 95 % interval)
_ALPHA = 0.025
#: bootstrap resamples of each round's row-level AUC: never reported (the person AUC has its own)
_ROUND_BOOTSTRAP = 10


@dataclass(frozen=True)
class PersonScores:
    """One attack's scores aggregated per person.

    Attributes
    ----------
    persons : ndarray of str
    scores : ndarray of float
        Higher = "member".
    is_member : ndarray of bool
    n_rows : ndarray of int
        Scored rows behind each person's score.
    """

    persons: np.ndarray = field(repr=False)
    scores: np.ndarray = field(repr=False)
    is_member: np.ndarray = field(repr=False)
    n_rows: np.ndarray = field(repr=False)


def aggregate_person_scores(
    scores: np.ndarray,
    is_member: np.ndarray,
    persons: np.ndarray,
    *,
    aggregate: str = DEFAULT_AGGREGATE,
    rows: np.ndarray | None = None,
) -> PersonScores:
    """One score per person from per-row scores (higher = "member").

    Parameters
    ----------
    scores : ndarray (n,)
        Per scored row.
    is_member : ndarray of bool (n,)
    persons : ndarray (n,)
        Person id of every row; ids are compared as text.
    aggregate : {"mean", "max"}
    rows : ndarray (n,), optional
        Which of the person's rows each score belongs to: scores of the same row (a row scored
        in two runs) are averaged first, so every row counts once.

    Returns
    -------
    PersonScores
        Members first, each side in the order of the persons' first scored rows (with one row
        per person: the rows' own order, so the bootstrap and the ε bound draw exactly as for
        rows).
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {list(AGGREGATES)}; got {aggregate!r} instead")
    scores = np.asarray(scores, np.float64)
    is_member = np.asarray(is_member, bool)
    ids = np.asarray(persons).astype(str)
    rows = np.arange(len(ids)) if rows is None else np.asarray(rows)
    if not (len(scores) == len(is_member) == len(ids) == len(rows)):
        raise ValueError(
            "scores, is_member, persons and rows must have one value per score; got lengths "
            f"{len(scores)}, {len(is_member)}, {len(ids)} and {len(rows)}"
        )
    frame = pd.DataFrame({"member": ~is_member, "person": ids, "row": rows, "score": scores})
    per_row = frame.groupby(["member", "person", "row"], sort=False)["score"].mean()
    summary = per_row.groupby(level=["member", "person"], sort=False).agg([aggregate, "size"])
    summary = summary.sort_index(level="member", kind="stable", sort_remaining=False)
    keys = summary.index.to_frame(index=False)
    return PersonScores(
        persons=keys["person"].to_numpy(),
        scores=summary[aggregate].to_numpy(np.float64),
        is_member=~keys["member"].to_numpy(bool),
        n_rows=summary["size"].to_numpy(np.int64),
    )


def tpr_interval(tpr: float, n_members: int) -> tuple[float, float]:
    """Two-sided 95 % Clopper-Pearson interval of a TPR measured on ``n_members`` members.

    An interpolated TPR (between two ROC points) is treated as ``tpr * n_members`` hits; the
    beta quantiles take fractional counts.
    """
    if not math.isfinite(tpr) or n_members < 1:
        return (math.nan, math.nan)
    low, high = clopper_pearson(tpr * n_members, n_members, _ALPHA)
    return (float(low), float(high))


@dataclass(frozen=True)
class PersonAttack:
    """One attack judged on people.

    Attributes
    ----------
    attack : str
    auc : float
        ROC AUC of the person scores in [0, 1]; 0.5 = chance, lower is better.
    auc_ci : tuple of float
        Stratified bootstrap 95 % interval (persons resampled).
    tpr_at_fpr_1pct, tpr_at_fpr_01pct : float
        Share of member people identified at 1 % / 0.1 % of non-member people wrongly accused
        (chance = the FPR itself).
    tpr_at_fpr_1pct_ci, tpr_at_fpr_01pct_ci : tuple of float
        Two-sided 95 % Clopper-Pearson intervals (:func:`tpr_interval`).
    advantage : float
        max(TPR - FPR) over the person ROC, in [0, 1].
    error : str or None
        Why the attack could not be judged on people (the row attack failed, or too few).
    result : AttackResult
        The person-level ROC and scores (``scores`` / ``is_member`` one per person).
    persons : ndarray of str or None
        The person of each of ``result``'s scores (not in ``to_dict``).
    """

    attack: str
    auc: float
    auc_ci: tuple[float, float]
    tpr_at_fpr_1pct: float
    tpr_at_fpr_1pct_ci: tuple[float, float]
    tpr_at_fpr_01pct: float
    tpr_at_fpr_01pct_ci: tuple[float, float]
    advantage: float
    error: str | None = None
    result: AttackResult | None = field(default=None, repr=False, compare=False)
    persons: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures and the person ROC (interpolated as for rows)."""
        roc = self.result.to_dict()["roc"] if self.result is not None else {"fpr": [], "tpr": []}
        return to_jsonable(
            {
                "attack": self.attack,
                "auc": self.auc,
                "auc_ci": list(self.auc_ci),
                "tpr_at_fpr_1pct": self.tpr_at_fpr_1pct,
                "tpr_at_fpr_1pct_ci": list(self.tpr_at_fpr_1pct_ci),
                "tpr_at_fpr_01pct": self.tpr_at_fpr_01pct,
                "tpr_at_fpr_01pct_ci": list(self.tpr_at_fpr_01pct_ci),
                "advantage": self.advantage,
                "error": self.error,
                "roc": roc,
            }
        )


@dataclass(frozen=True)
class PersonLevel:
    """Membership inference judged per person, beside the row-level attacks.

    Attributes
    ----------
    column : str
        The person column the rows were grouped by.
    aggregate : {"mean", "max"}
        How a person's row scores were combined (module docstring).
    n_member_persons, n_nonmember_persons : int
        People in the attack set (training people, holdout people).
    rows_per_person_median, rows_per_person_max : float
        Attack-set rows per person.
    attacks : tuple of PersonAttack
        One per row-level attack, same order.
    epsilon_lower_bound : EpsilonBound or None
        ε ≥ this from the person scores (threshold chosen on half the people, certified on the
        other half); None when no attack could be judged.
    wp29_targets : str
        How the WP29 attacks drew their targets in a person-level review.
    synthetic_persons : bool
        Whether the synthetic table carries person ids (then the audit curates by them).
    synthetic_ids : ndarray of str or None
        Person id of every synthetic row in input order (None: the column is empty there).
    holdout_ids : ndarray of str or None
        Person id of every holdout row in input order (the audit's fresh-sample reference
        groups by them too).
    """

    column: str
    aggregate: str
    n_member_persons: int
    n_nonmember_persons: int
    rows_per_person_median: float
    rows_per_person_max: float
    attacks: tuple[PersonAttack, ...]
    epsilon_lower_bound: EpsilonBound | None = None
    wp29_targets: str = ""
    synthetic_persons: bool = False
    synthetic_ids: np.ndarray | None = field(default=None, repr=False, compare=False)
    holdout_ids: np.ndarray | None = field(default=None, repr=False, compare=False)

    def attack(self, name: str) -> PersonAttack | None:
        """The person-level result of attack ``name``, or None."""
        return next((a for a in self.attacks if a.attack == name), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (``privacy.person_level`` of report.json)."""
        return to_jsonable(
            {
                "column": self.column,
                "aggregate": self.aggregate,
                "n_member_persons": self.n_member_persons,
                "n_nonmember_persons": self.n_nonmember_persons,
                "rows_per_person_median": self.rows_per_person_median,
                "rows_per_person_max": self.rows_per_person_max,
                "attacks": [a.to_dict() for a in self.attacks],
                "epsilon_lower_bound": self.epsilon_lower_bound,
                "wp29_targets": self.wp29_targets,
                "synthetic_persons": self.synthetic_persons,
            }
        )


def _failed(attack: str, error: str) -> PersonAttack:
    nan2 = (math.nan, math.nan)
    return PersonAttack(attack, math.nan, nan2, math.nan, nan2, math.nan, nan2, math.nan,
                        error=error, result=failed_attack(attack, error))  # fmt: skip


def _ranks(frame: pd.DataFrame, column: str, columns: Sequence[str], seed: int, salt: int):
    """Rows in a value-defined order, their person ids and each row's seeded rank in its person.

    The order is the privacy section's (:func:`~synthreview.io.row_hash.value_order` of the
    analysed columns), rows equal on those columns ordered by person id.
    """
    ids_in = person_ids(frame[column])
    ordered_rows = np.lexsort((ids_in, table_row_hashes(frame, list(columns))))
    ordered = frame.iloc[ordered_rows].reset_index(drop=True)
    ids = ids_in[ordered_rows]
    key = np.random.default_rng([seed, salt]).random(len(ordered))
    order = np.lexsort((key, ids))
    sorted_ids = ids[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    group = np.cumsum(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]]) - 1
    rank = np.empty(len(ordered), np.int64)
    rank[order] = np.arange(len(ordered)) - starts[group]
    return ordered, ids, rank, order


def person_rounds(
    frame: pd.DataFrame,
    column: str,
    columns: Sequence[str],
    *,
    max_rows: int = 10,
    seed: int = 0,
    salt: int = 0,
) -> tuple[pd.DataFrame, ...]:
    """``frame`` cut into rounds holding at most one row of each person.

    Round ``k`` holds the ``k``-th row of every person with more than ``k`` rows, in a seeded
    order of each person's rows (drawn on a value-defined row order, so the rounds never depend
    on the row order of the file); at most ``max_rows`` rounds, so a person with more rows is
    judged on ``max_rows`` of them. Rows within a round keep the value-defined order (with
    one row per person, round 0 is the table in the privacy section's row order).
    """
    if not _is_count(max_rows) or max_rows < 1:
        raise ValueError(f"max_rows must be an integer >= 1; got {max_rows!r} instead")
    ordered, _, rank, order = _ranks(frame, column, columns, seed, salt)
    ranked = rank[order]
    return tuple(
        ordered.iloc[np.sort(order[ranked == k])].reset_index(drop=True)
        for k in range(min(max_rows, int(rank.max()) + 1 if len(rank) else 0))
    )


def one_row_per_person(
    frame: pd.DataFrame, column: str, columns: Sequence[str], *, seed: int = 0
) -> pd.DataFrame:
    """One seeded row of each person of ``frame``: the first of :func:`person_rounds`.

    The WP29 attacks of a person-level review target these rows, so each person is one target
    (a person with ten rows is not ten times as likely to be drawn, and the attack on a
    training person is never helped by the same person's other rows in the control set).
    """
    rounds = person_rounds(frame, column, columns, max_rows=1, seed=seed)
    return rounds[0] if rounds else frame.iloc[:0]


def _is_count(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def person_membership(
    rounds: Sequence[tuple[int, Sequence[AttackResult], np.ndarray, np.ndarray]],
    *,
    column: str,
    aggregate: str = DEFAULT_AGGREGATE,
    n_bootstrap: int = 200,
    wp29_targets: str = "",
    synthetic_persons: bool = False,
    seed: int = 0,
) -> PersonLevel:
    """Aggregate every attack's per-row scores per person and summarise them per person.

    Parameters
    ----------
    rounds : sequence of (round, attacks, member_persons, nonmember_persons)
        Row-level results of one or more attack runs (:func:`person_membership_inference`
        runs one or more per round); each attack's ``scores`` list the run's member rows, then
        its non-member rows, whose person ids are ``member_persons`` and ``nonmember_persons``
        in that order. A round holds one row per person: a person scored twice in one round
        (two runs) is averaged there first, then the person's rounds are aggregated.
    column : str
        Name of the person column (reported).
    aggregate : {"mean", "max"}, default="mean"
    n_bootstrap : int, default=200
        Person resamples for the AUC interval.
    wp29_targets, synthetic_persons
        Reported as given (see :class:`PersonLevel`).
    seed : int, default=0

    Returns
    -------
    PersonLevel
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {list(AGGREGATES)}; got {aggregate!r} instead")
    pooled: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = {}
    errors: dict[str, str] = {}
    for round_index, attacks, member_persons, nonmember_persons in rounds:
        persons = np.r_[np.asarray(member_persons).astype(str),
                        np.asarray(nonmember_persons).astype(str)]  # fmt: skip
        truth = np.r_[np.ones(len(member_persons), bool), np.zeros(len(nonmember_persons), bool)]
        for row_result in attacks:
            pooled.setdefault(row_result.attack, [])
            if row_result.error is not None or not len(row_result.scores):
                errors.setdefault(row_result.attack, row_result.error or "no scores")
            elif len(row_result.scores) != len(persons) or not np.array_equal(
                row_result.is_member, truth
            ):
                errors.setdefault(
                    row_result.attack,
                    f"scored {len(row_result.scores)} rows, not the {len(persons)} rows of the "
                    "attack set the persons were read from",
                )
            else:
                pooled[row_result.attack].append(
                    (row_result.scores, truth, persons, np.full(len(persons), round_index))
                )
    results: list[PersonAttack] = []
    counts = np.zeros(0, np.int64)
    n_members = n_nonmembers = 0
    for attack, parts in pooled.items():
        if attack in errors:
            results.append(_failed(attack, errors[attack]))
            continue
        found = aggregate_person_scores(
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
            aggregate=aggregate,
            rows=np.concatenate([p[3] for p in parts]),
        )
        scores, is_member, counts = found.scores, found.is_member, found.n_rows
        n_members, n_nonmembers = int(is_member.sum()), int((~is_member).sum())
        if n_members < 2 or n_nonmembers < 2:
            results.append(_failed(
                attack,
                f"needs >= 2 member and >= 2 non-member people; got {n_members} and "
                f"{n_nonmembers}",
            ))  # fmt: skip
            continue
        summary = summarize_attack(attack, scores, is_member, n_bootstrap=n_bootstrap, seed=seed)
        results.append(
            PersonAttack(
                attack=attack,
                auc=summary.auc,
                auc_ci=summary.auc_ci,
                tpr_at_fpr_1pct=summary.tpr_at_fpr_1pct,
                tpr_at_fpr_1pct_ci=tpr_interval(summary.tpr_at_fpr_1pct, n_members),
                tpr_at_fpr_01pct=summary.tpr_at_fpr_01pct,
                tpr_at_fpr_01pct_ci=tpr_interval(summary.tpr_at_fpr_01pct, n_members),
                advantage=summary.advantage,
                result=summary,
                persons=found.persons,
            )
        )
    judged = [a.result for a in results if a.error is None and a.result is not None]
    epsilon = epsilon_lower_bound(judged, seed=seed) if judged else None
    return PersonLevel(
        column=column,
        aggregate=aggregate,
        n_member_persons=n_members,
        n_nonmember_persons=n_nonmembers,
        rows_per_person_median=float(np.median(counts)) if len(counts) else math.nan,
        rows_per_person_max=float(counts.max()) if len(counts) else math.nan,
        attacks=tuple(results),
        epsilon_lower_bound=epsilon,
        wp29_targets=wp29_targets,
        synthetic_persons=synthetic_persons,
    )


def person_membership_inference(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    *,
    column: str,
    encoder: Any,
    aggregate: str = DEFAULT_AGGREGATE,
    max_attack: int = 10_000,
    max_rows_per_person: int = 10,
    n_bootstrap: int = 200,
    wp29_targets: str = "",
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
) -> PersonLevel:
    """The membership attacks run in rounds of one row per person, then judged per person.

    Why rounds: the no-box attacks use the holdout as the attacker's reference sample and leave
    only the scored row itself out of it. With several rows per person a non-member's *other*
    rows stay in the reference, so every non-member sits next to its own person and looks less
    like a member than a member does: a fresh sample of other people reached person-level TPR
    at 1 % FPR of 0.08-0.15 (dcr_difference, logan_classifier) on the test table this way.
    In round ``k`` (:func:`person_rounds`) the training and holdout tables hold the ``k``-th row
    of each person only, so no scored row has another row of its person in the reference, and
    members and non-members are treated alike. Each round runs every attack of
    :func:`~synthreview.metrics.privacy.membership.membership_inference` (its public API, so a
    new attack is judged per person too); a person's rows are pooled over the rounds and
    aggregated (:func:`person_membership`).

    Parameters
    ----------
    real, synthetic, holdout : DataFrame
        With the person column ``column`` in ``real`` and ``holdout`` (no person on both
        sides: :func:`synthreview.io.persons.check_person_column`).
    column : str
    encoder : TabularEncoder
        Fitted on ``real``; the person column must not be one of its analysed columns.
    aggregate : {"mean", "max"}, default="mean"
    max_attack : int, default=10_000
        Members (and non-members) per round's attack set at most.
    max_rows_per_person : int, default=10
        Rounds at most: a person with more rows is judged on this many, drawn seeded.
    n_bootstrap : int, default=200
    wp29_targets : str
        Reported as given.
    seed : int, default=0
    progress : callable(fraction, message), optional

    Returns
    -------
    PersonLevel
    """
    cols = list(encoder.schema.analysed)
    if column in cols:
        raise ValueError(
            f"person column {column!r} must not be an analysed column (it is an identifier); "
            f"got it among {cols}"
        )
    real_rounds = person_rounds(real, column, cols, max_rows=max_rows_per_person, seed=seed)
    holdout_rounds = person_rounds(
        holdout, column, cols, max_rows=max_rows_per_person, seed=seed, salt=1
    )
    n_rounds = min(len(real_rounds), len(holdout_rounds))
    runs = []
    for k in range(n_rounds):
        real_k, holdout_k = real_rounds[k], holdout_rounds[k]
        if len(holdout_k) < 2 or len(real_k) < 1:
            break  # later rounds only hold fewer people
        # the attack set is balanced (as many members as non-members): training people beyond
        # the holdout's count go to further runs, so every training person of the round is
        # scored once, as every holdout person is (at least once)
        size = min(max_attack, len(holdout_k))
        for start in range(0, len(real_k), size):
            if progress is not None:
                progress(k / n_rounds, f"person-level attacks: round {k + 1} of {n_rounds}")
            chunk = real_k.iloc[start : start + size].reset_index(drop=True)
            found = membership_inference(
                chunk, synthetic, holdout_k, encoder=encoder, max_attack=max_attack,
                n_bootstrap=_ROUND_BOOTSTRAP, seed=seed,
            )  # fmt: skip
            sets = attack_set(len(chunk), len(holdout_k), max_attack=max_attack, seed=seed)
            runs.append((
                k,
                found,
                person_ids(chunk[column])[sets.real_rows],
                person_ids(holdout_k[column])[sets.holdout_rows],
            ))  # fmt: skip
    carried = not synthetic[column].isna().all()
    found = person_membership(
        runs, column=column, aggregate=aggregate, n_bootstrap=n_bootstrap,
        wp29_targets=wp29_targets, synthetic_persons=carried, seed=seed,
    )  # fmt: skip
    return replace(
        found,
        synthetic_ids=person_ids(synthetic[column]) if carried else None,
        holdout_ids=person_ids(holdout[column]),
    )
