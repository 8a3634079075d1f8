"""Privacy section: membership inference, distance to closest record and disclosure risk.

Sources (``papers/``): Urban Institute appendix "Disclosure risk" (``001_*``: l-diversity of
tree nodes, attribute inference against a holdout benchmark, Gower membership inference),
Hide-and-Seek seekers (``002_*``, section 3) and ROC-AUC reporting of attacks (``003_*``,
section 2.4). The attacks live in :mod:`synthreview.metrics.privacy.membership`, attribute inference
and ℓ-diversity in :mod:`synthreview.metrics.privacy.disclosure` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from synthreview.encoding import TabularEncoder
from synthreview.engine import current_engine
from synthreview.errors import ConfigError, DataError, attempt
from synthreview.io.persons import person_ids
from synthreview.io.row_hash import table_row_hashes, value_order
from synthreview.io.schema import Schema
from synthreview.memo import Memo, array_digest, remember
from synthreview.metrics.privacy.attack_stats import AttackResult, attack_set
from synthreview.metrics.privacy.attacks import encoded_nearest
from synthreview.metrics.privacy.disclosure import (
    AttributeInferenceResult,
    LDiversityResult,
    attribute_inference,
    l_diversity,
)
from synthreview.metrics.privacy.dp_claim import DPClaimTest, dp_claim_test, verbatim_events
from synthreview.metrics.privacy.epsilon import EpsilonBound, epsilon_lower_bound
from synthreview.metrics.privacy.groups import GroupMembership, group_membership
from synthreview.metrics.privacy.membership import membership_inference
from synthreview.metrics.privacy.person import (
    PersonAttack,
    PersonLevel,
    one_row_per_person,
    person_membership_inference,
)
from synthreview.metrics.privacy.quasi import QuasiIdentifierRisk, quasi_identifier_risk
from synthreview.metrics.privacy.sensitive_values import (
    SensitiveValueReplay,
    sensitive_value_replay,
)
from synthreview.metrics.privacy.shadow import ShadowAttackResult, ShadowSettings, shadow_attack
from synthreview.metrics.privacy.vulnerable import (
    VulnerableRecords,
    mask_rows,
    vulnerable_records,
)
from synthreview.metrics.privacy.wp29 import WP29Report, wp29_risks
from synthreview.results import to_jsonable
from synthreview.splits import draw_rows

__all__ = [
    "DCRResult",
    "PrivacyReport",
    "distance_to_closest_record",
    "evaluate_privacy",
    "evaluate_privacy_arrays",
    "row_hashes",
]

Progress = Callable[[float, str], None] | None


@dataclass(frozen=True)
class DCRResult:
    """Distance to closest record (L2 in the encoded space), per synthetic row in input order.

    Attributes
    ----------
    synthetic_to_train, nearest_train_index : ndarray (n_synthetic,)
        Distance to and position of the nearest real (training) row.
    synthetic_to_holdout : ndarray (n_synthetic,) or None
    exact_copy : ndarray of bool (n_synthetic,)
        The row equals a training row on every analysed column (row hashes, not float
        distance 0).
    nndr : ndarray (n_synthetic,)
        Nearest-neighbour distance ratio d1 / d2 to the training rows, in [0, 1]; near 0 = the
        row sits on one training record rather than among several.
    holdout_to_train : ndarray (n_holdout,) or None
        Distance from each holdout row to its nearest training row: the reference distribution.
    share_closer_to_train : float
        Fraction of synthetic rows closer to the training rows than to the holdout rows (ties
        count 1/2), with the larger of the two sets subsampled to the smaller's size
        (``share_rows`` each, seeded): 0.5 is ideal, 1 = every row sits on training data.
    share_rows : int
    n_synthetic : int
        Synthetic rows the share is a mean over (the judgement's lower bound needs it).
    exact_copies : int
    exact_copy_share : float
        ``exact_copies / n_synthetic``.
    holdout_exact_copy_share : float
        Share of holdout rows that equal a training row: how often real data repeats itself,
        the reference for ``exact_copy_share`` (``nan`` without a holdout).
    synthetic_to_train_median, holdout_to_train_median, nndr_median : float
    holdout_copy : ndarray of bool (n_synthetic,) or None
        The row equals a holdout row on every analysed column (row hashes): a real record the
        generator never saw, released as synthetic. None without a holdout.
    holdout_in_train : ndarray of bool (n_holdout,) or None
        The holdout row equals a training row (row hashes).
    holdout_repeated : ndarray of bool (n_holdout,) or None
        The holdout row equals *another* holdout row (leave-one-out). With
        ``holdout_in_train`` it gives how often a fresh real row is, by coincidence, a record
        of the real or holdout data: the reference of the ``real_records`` rule.
    """

    synthetic_to_train: np.ndarray = field(repr=False)
    nearest_train_index: np.ndarray = field(repr=False)
    synthetic_to_holdout: np.ndarray | None = field(repr=False)
    exact_copy: np.ndarray = field(repr=False)
    nndr: np.ndarray = field(repr=False)
    holdout_to_train: np.ndarray | None = field(repr=False)
    share_closer_to_train: float
    share_rows: int
    exact_copies: int
    exact_copy_share: float
    holdout_exact_copy_share: float
    synthetic_to_train_median: float
    holdout_to_train_median: float
    nndr_median: float
    holdout_copy: np.ndarray | None = field(default=None, repr=False)
    holdout_in_train: np.ndarray | None = field(default=None, repr=False)
    holdout_repeated: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_synthetic(self) -> int:
        """Synthetic rows measured."""
        return len(self.synthetic_to_train)

    @property
    def holdout_copies(self) -> int:
        """Synthetic rows that equal a holdout row (0 without a holdout)."""
        return 0 if self.holdout_copy is None else int(np.sum(self.holdout_copy))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no per-row arrays)."""
        keys = ("share_closer_to_train", "share_rows", "exact_copies", "exact_copy_share",
                "holdout_exact_copy_share", "synthetic_to_train_median",
                "holdout_to_train_median", "nndr_median", "holdout_copies",
                "n_synthetic")  # fmt: skip
        return to_jsonable({k: getattr(self, k) for k in keys})


def row_hashes(table: pd.DataFrame | np.ndarray) -> np.ndarray:
    """One uint64 per row; equal rows (same values, numbers compared as float64) hash equal."""
    if isinstance(table, np.ndarray):
        table = pd.DataFrame(np.asarray(table, dtype=np.float64))
    return table_row_hashes(table, list(table.columns))


def distance_to_closest_record(
    real_x: np.ndarray,
    synthetic_x: np.ndarray,
    holdout_x: np.ndarray | None = None,
    *,
    real_hashes: np.ndarray | None = None,
    synthetic_hashes: np.ndarray | None = None,
    holdout_hashes: np.ndarray | None = None,
    categorical_blocks: Sequence[Sequence[int]] | None = None,
    real_groups: np.ndarray | None = None,
    holdout_groups: np.ndarray | None = None,
    seed: int = 0,
    memo: Memo | None = None,
) -> DCRResult:
    """Distance to closest record, DCR share, NNDR and exact copies.

    Parameters
    ----------
    real_x, synthetic_x, holdout_x : ndarray
        Encoded rows (same feature space).
    real_hashes, synthetic_hashes, holdout_hashes : ndarray of uint64, optional
        :func:`row_hashes` of the original rows; default: hashes of the encoded rows.
    categorical_blocks : sequence of sequence of int, optional
        One-hot positions of each categorical column: enables the exact same-tuple pre-pass
        of :func:`~synthreview.metrics.privacy.membership.encoded_nearest`.
    real_groups, holdout_groups : ndarray, optional
        Person id of every real / holdout row: the subsample that equalises the sizes for
        the share then takes whole people (:func:`synthreview.splits.draw_rows`), so no
        person's rows are split between the reference and the rows left out.
    seed : int, default=0
        Seeds the subsample that equalises train and holdout sizes for the share.
    memo : Memo, optional
        The review's :class:`~synthreview.memo.Memo`: each holdout row's distance to the
        nearest training row reads no synthetic row, so it is computed once per review.

    Returns
    -------
    DCRResult
    """
    if len(real_x) < 2:
        raise ValueError(f"real must have at least 2 rows for the NNDR; got {len(real_x)}")

    def search(
        query: np.ndarray, reference: np.ndarray, k: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        return encoded_nearest(query, reference, k=k, categorical_blocks=categorical_blocks)

    to_train, train_index = search(synthetic_x, real_x, k=2)
    d1, d2 = to_train[:, 0], to_train[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        nndr = np.where(d2 > 0, d1 / d2, 0.0)  # d2 == 0: the row sits on duplicated records
    real_hashes = row_hashes(real_x) if real_hashes is None else real_hashes
    synthetic_hashes = row_hashes(synthetic_x) if synthetic_hashes is None else synthetic_hashes
    exact = np.isin(synthetic_hashes, real_hashes)
    to_holdout = holdout_to_train = None
    share, share_rows, holdout_median = float("nan"), 0, float("nan")
    holdout_copy_share = float("nan")
    holdout_copy = in_train = repeated = None
    if holdout_x is not None and len(holdout_x):
        holdout_hashes = row_hashes(holdout_x) if holdout_hashes is None else holdout_hashes
        in_train = np.isin(holdout_hashes, real_hashes)
        holdout_copy_share = float(in_train.mean())
        holdout_copy = np.isin(synthetic_hashes, holdout_hashes)
        _, inverse, counts = np.unique(holdout_hashes, return_inverse=True, return_counts=True)
        repeated = counts[inverse.reshape(-1)] > 1
        to_holdout = search(synthetic_x, holdout_x)[0][:, 0]
        # the engine's search kind is in the key: an approximate search's result is not exact
        key = ("privacy-holdout-to-train", array_digest(holdout_x), array_digest(real_x),
               repr(categorical_blocks), current_engine().search_kind)  # fmt: skip
        holdout_to_train = remember(memo, key, lambda: search(holdout_x, real_x)[0][:, 0])
        holdout_median = float(np.median(holdout_to_train))
        share_rows = min(len(real_x), len(holdout_x))
        rng = np.random.default_rng(seed)
        d_train, d_holdout = d1, to_holdout
        if len(real_x) > share_rows:
            subset = real_x[draw_rows(rng, len(real_x), share_rows, groups=real_groups)]
            d_train = search(synthetic_x, subset)[0][:, 0]
        elif len(holdout_x) > share_rows:
            subset = holdout_x[draw_rows(rng, len(holdout_x), share_rows, groups=holdout_groups)]
            d_holdout = search(synthetic_x, subset)[0][:, 0]
        share = float(np.mean((d_train < d_holdout) + 0.5 * (d_train == d_holdout)))
    return DCRResult(
        synthetic_to_train=d1,
        nearest_train_index=train_index[:, 0],
        synthetic_to_holdout=to_holdout,
        exact_copy=exact,
        nndr=nndr,
        holdout_to_train=holdout_to_train,
        share_closer_to_train=share,
        share_rows=share_rows,
        exact_copies=int(exact.sum()),
        exact_copy_share=float(exact.mean()) if len(exact) else float("nan"),
        holdout_exact_copy_share=holdout_copy_share,
        synthetic_to_train_median=float(np.median(d1)),
        holdout_to_train_median=holdout_median,
        nndr_median=float(np.median(nndr)),
        holdout_copy=holdout_copy,
        holdout_in_train=in_train,
        holdout_repeated=repeated,
    )


_l_diversity = l_diversity  # evaluate_privacy's option of the same name shadows it


def _group_membership_by_person(
    attacks: Sequence[PersonAttack],
    real: pd.DataFrame,
    holdout: pd.DataFrame,
    real_people: np.ndarray,
    holdout_people: np.ndarray,
    columns: Sequence[str],
) -> GroupMembership:
    """:func:`group_membership` on the person scores of a person-level review's attacks."""
    persons = attacks[0].persons
    same = [a.result for a in attacks if np.array_equal(a.persons, persons)]
    member = np.asarray(same[0].is_member, bool)
    first_real = real[list(columns)].groupby(real_people, sort=False).first()
    first_holdout = holdout[list(columns)].groupby(holdout_people, sort=False).first()
    found = group_membership(
        same,
        first_real.loc[persons[member]].reset_index(drop=True),
        first_holdout.loc[persons[~member]].reset_index(drop=True),
        columns=columns,
    )
    return replace(found, unit="person")


def _value_order(frame: pd.DataFrame, cols: Sequence[str], person: str | None) -> np.ndarray:
    """The rows of ``frame`` in the order of their values on ``cols``.

    In a person-level review, equal rows of different people are ordered by their person (as
    :func:`~synthreview.metrics.privacy.person.person_rounds` orders them), so that a draw of
    people does not depend on the file's row order either.
    """
    if person is None:
        return value_order(frame[list(cols)])
    return np.lexsort((person_ids(frame[person]), table_row_hashes(frame, list(cols))))


@dataclass(frozen=True)
class PrivacyReport:
    """Everything the privacy section found for one synthetic candidate.

    Attributes
    ----------
    membership_inference : tuple of AttackResult
        One per attack (AUC 0.5 = chance, lower is better); empty without a holdout.
    dcr : DCRResult or None
    attribute_inference : AttributeInferenceResult or None
        When a sensitive column was chosen and a holdout exists.
    l_diversity : LDiversityResult or None
    epsilon_lower_bound : EpsilonBound or None
        ε ≥ x from the best attack on held-out attack rows (black-box, loose).
    wp29 : WP29Report or None
        Singling out, linkability and inference risks (anonymeter's method).
    vulnerable : VulnerableRecords or None
        The training records the attacks expose most (masked values).
    shadow : ShadowAttackResult or None
        Shadow-model membership inference against the generator itself (TAPAS), when the
        review names a generator (``ShadowSettings``); ``complete=False`` when its time limit
        stopped it.
    person_level : PersonLevel or None
        Membership judged per person, when the review names a person column (``person``).
    dp_claim : DPClaimTest or None
        A claimed (ε, δ)-DP guarantee tested against the attacks, when one was claimed.
    quasi_identifiers : QuasiIdentifierRisk or None
        QI replay, k-anonymity and prosecutor risk, when the review names quasi-identifiers
        (:mod:`synthreview.metrics.privacy.quasi`).
    groups : GroupMembership or None
        Every attack's AUC and TPR at 1 % FPR per group of the grouping columns, when the
        review names some (:mod:`synthreview.metrics.privacy.groups`).
    sensitive_values : SensitiveValueReplay or None
        Training-unique values the candidate writes again, per column, beside the holdout
        (:mod:`synthreview.metrics.privacy.sensitive_values`).
    errors : dict of str -> str
        Part (``"dcr"``, ``"attribute_inference"``, ``"l_diversity"``, ``"membership_inference"``,
        ``"wp29"``, ...) -> why it failed; a failed attack carries its own ``error``.
    skipped : dict of str -> str
        Part -> why it was not run (e.g. no holdout).
    """

    membership_inference: tuple[AttackResult, ...]
    dcr: DCRResult | None
    attribute_inference: AttributeInferenceResult | None = None
    l_diversity: LDiversityResult | None = None
    errors: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    epsilon_lower_bound: EpsilonBound | None = None
    wp29: WP29Report | None = None
    vulnerable: VulnerableRecords | None = None
    shadow: ShadowAttackResult | None = None
    person_level: PersonLevel | None = None
    dp_claim: DPClaimTest | None = None
    quasi_identifiers: QuasiIdentifierRisk | None = None
    sensitive_values: SensitiveValueReplay | None = None
    groups: GroupMembership | None = None

    def attack(self, name: str) -> AttackResult | None:
        """The result of attack ``name``, or None."""
        return next((a for a in self.membership_inference if a.attack == name), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary with the keys of issue 4."""
        return to_jsonable(
            {
                "membership_inference": [a.to_dict() for a in self.membership_inference],
                "dcr": None if self.dcr is None else self.dcr.to_dict(),
                "attribute_inference": self.attribute_inference,
                "l_diversity": self.l_diversity,
                "epsilon_lower_bound": self.epsilon_lower_bound,
                "wp29": self.wp29,
                "vulnerable_records": self.vulnerable,
                "shadow": self.shadow,
                "person_level": self.person_level,
                "dp_claim": self.dp_claim,
                "quasi_identifiers": self.quasi_identifiers,
                "sensitive_values": self.sensitive_values,
                "groups": self.groups,
                "errors": self.errors,
                "skipped": self.skipped,
            }
        )


def _input_positions(
    dcr: DCRResult, real_order: np.ndarray, holdout_order: np.ndarray | None
) -> DCRResult:
    """``dcr`` of value-ordered real and holdout rows, with positions and rows as input."""

    def back(values: np.ndarray | None) -> np.ndarray | None:
        if values is None or holdout_order is None:
            return values
        out = np.empty_like(values)
        out[holdout_order] = values
        return out

    return replace(
        dcr,
        nearest_train_index=real_order[dcr.nearest_train_index],
        holdout_to_train=back(dcr.holdout_to_train),
        holdout_in_train=back(dcr.holdout_in_train),
        holdout_repeated=back(dcr.holdout_repeated),
    )


def evaluate_privacy(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame | None,
    *,
    schema: Schema,
    encoder: TabularEncoder,
    sensitive: str | None = None,
    l_diversity: int = 10,
    max_attack: int = 10_000,
    n_vulnerable: int = 100,
    seed: int = 0,
    progress: Progress = None,
    shadow: ShadowSettings | None = None,
    person: str | None = None,
    claimed_epsilon: float | None = None,
    claimed_delta: float = 0.0,
    quasi_identifiers: Sequence[str] = (),
    groups: Sequence[str] = (),
    memo: Memo | None = None,
) -> PrivacyReport:
    """Privacy section for one synthetic table.

    Parameters
    ----------
    real, synthetic, holdout : pandas.DataFrame
        ``holdout`` may be None: membership inference, the DCR share and attribute inference
        are then skipped with a reason.
    schema : Schema
        Column kinds; must be the schema ``encoder`` was built with.
    encoder : TabularEncoder
        Fitted on ``real``.
    sensitive : str, optional
        Column for the attribute-inference test.
    l_diversity : int, default=10
    max_attack : int, default=10_000
    n_vulnerable : int, default=100
        Training records listed as most exposed.
    seed : int, default=0
    progress : callable(fraction, message), optional
    shadow : ShadowSettings, optional
        Run the shadow-model attack against this generator (its targets start with the most
        exposed records); skipped with a reason when None.
    person : str, optional
        Identifier column naming each row's person (checked by
        :func:`synthreview.io.persons.check_person_column`): the membership attacks are also
        judged per person (``person_level``, :mod:`synthreview.metrics.privacy.person`) and the
        WP29 attacks target one seeded row per person, on both the training and the control
        side.
    claimed_epsilon, claimed_delta : float, optional
        A claimed (ε, δ)-DP guarantee to test against the membership attacks (``dp_claim``,
        :mod:`synthreview.metrics.privacy.dp_claim`); None: no claim, no test.
    quasi_identifiers : sequence of str, default=()
        Columns an intruder may know: QI replay against the holdout, k-anonymity and prosecutor
        risk (:mod:`synthreview.metrics.privacy.quasi`); empty: skipped with the reason.
    groups : sequence of str, default=()
        Categorical grouping columns: every attack is also judged within each group
        (:mod:`synthreview.metrics.privacy.groups`); empty: skipped with the reason.
    memo : Memo, optional
        The review's :class:`~synthreview.memo.Memo`: the searches that read only training
        and holdout rows (the holdout rows' nearest training row, the no-box attacks' nearest
        holdout rows) are computed once per review, for every candidate and its curated
        version.

    Returns
    -------
    PrivacyReport
    """
    if dict(encoder.schema.kinds) != dict(schema.kinds):
        raise ConfigError("encoder was fitted with a different schema than the one given")
    for name, table in (("real", real), ("synthetic", synthetic)):
        if len(table) < 2:
            raise DataError(
                f"{name} must have at least 2 rows for the privacy section; got {len(table)}"
            )
    step = progress or (lambda fraction, message: None)
    errors: dict[str, str] = {}
    skipped: dict[str, str] = {}
    cols = schema.analysed
    wp29_real, wp29_holdout = real, holdout  # the WP29 attacks order their inputs themselves
    person_real, person_holdout = real, holdout
    wp29_train, wp29_control, wp29_targets = real, holdout, ""
    if person is not None:
        # one target per person: a person with ten rows is not ten targets, and a control
        # person's other rows never help the control attack on that person
        wp29_train = one_row_per_person(real, person, cols, seed=seed)
        if holdout is not None:
            wp29_control = one_row_per_person(holdout, person, cols, seed=seed)
        wp29_targets = (
            f"one seeded row per person of {person!r} in training ({len(wp29_train)}) and "
            f"holdout ({0 if wp29_control is None else len(wp29_control)}): singling out, "
            "linkability and inference target people, not rows"
        )
    # attack sets, folds and subsamples are drawn by position: put real and holdout in an order
    # defined by their values, so shuffling either file changes no estimate; rows reported back
    # (vulnerable records, nearest training rows, per-holdout-row evidence) are input positions
    real_order = _value_order(real, cols, person)
    real = real.iloc[real_order].reset_index(drop=True)
    holdout_order = None
    if holdout is not None:
        holdout_order = _value_order(holdout, cols, person)
        holdout = holdout.iloc[holdout_order].reset_index(drop=True)
    real_x, synthetic_x = (
        encoder.transform(real, name="real"),
        encoder.transform(synthetic, name="synthetic"),
    )
    holdout_x = None if holdout is None else encoder.transform(holdout, name="holdout")
    # person of every (value-ordered) row: what a split of real or holdout rows must keep whole
    real_groups = holdout_groups = None
    if person is not None:
        real_groups = person_ids(real[person])
        holdout_groups = None if holdout is None else person_ids(holdout[person])

    attacks: tuple[AttackResult, ...] = ()
    if holdout is None or len(holdout) < 2:
        skipped["membership_inference"] = "needs a holdout table (the non-members)"
    else:
        attacks = attempt("membership_inference", errors, lambda: membership_inference(
            real, synthetic, holdout, encoder=encoder, max_attack=max_attack,
            real_groups=real_groups, holdout_groups=holdout_groups, seed=seed,
            progress=lambda f, m: step(0.6 * f, m), memo=memo,
        )) or ()  # fmt: skip
    epsilon, vulnerable, wp29 = None, None, None
    # the rows every attack scored (members first), drawn once: the vulnerable-records and the
    # group rules read the same draw
    chosen = None
    if attacks:
        chosen = attack_set(
            len(real),
            len(holdout),
            max_attack=max_attack,
            seed=seed,
            real_groups=real_groups,
            holdout_groups=holdout_groups,
        )
        scored = None  # the person of every scored row (members first), with --person
        if person is not None:
            # the scored rows do not depend on the sanity split drawn after them
            # (attack_stats.attack_set), so the one draw above names their people
            scored = np.r_[np.char.add("r:", real_groups[chosen.real_rows]),
                           np.char.add("h:", holdout_groups[chosen.holdout_rows])]  # fmt: skip
        epsilon = attempt("epsilon_lower_bound", errors, lambda: epsilon_lower_bound(
            attacks, groups=scored, seed=seed,
        ))  # fmt: skip
        members = chosen.real_rows
        found = attempt("vulnerable", errors,
                        lambda: vulnerable_records(attacks, members, k=n_vulnerable))  # fmt: skip
        if found is not None:
            masked = mask_rows(real[cols], found.rows, numeric=schema.numeric)
            vulnerable = replace(found, rows=real_order[found.rows], values=masked)
    person_level = None
    if person is not None and (holdout is None or len(holdout) < 2):
        skipped["person_level"] = "needs a holdout table (the non-member people)"
    elif person is not None:
        step(0.5, f"membership by person ({person})")
        person_level = attempt("person_level", errors, lambda: person_membership_inference(
            person_real, synthetic, person_holdout, column=person, encoder=encoder,
            max_attack=max_attack, wp29_targets=wp29_targets, seed=seed,
            progress=lambda f, m: step(0.5 + 0.1 * f, m),
        ))  # fmt: skip
    real_hashes, synthetic_hashes = row_hashes(real[cols]), row_hashes(synthetic[cols])
    holdout_hashes = None if holdout is None else row_hashes(holdout[cols])
    dp_claim = verbatim = None
    if claimed_epsilon is not None and holdout is not None and len(holdout) >= 2:
        # a verbatim record is an event whose probability ε-DP bounds like any attack's
        # (dp_claim's module docstring): tested beside the attacks, per person with --person
        verbatim = attempt("dp_claim", errors, lambda: verbatim_events(
            real_hashes, holdout_hashes, synthetic_hashes,
            real_groups=real_groups, holdout_groups=holdout_groups,
        ))  # fmt: skip
    if "dp_claim" in errors:
        pass  # the verbatim event could not be counted: no test without it (incomplete)
    elif claimed_epsilon is not None and person is not None:
        # the claim protects people: tested on the attacks' person scores (one per person)
        judged = [a.result for a in (person_level.attacks if person_level else ())
                  if a.error is None and a.result is not None]  # fmt: skip
        if judged:
            dp_claim = attempt("dp_claim", errors, lambda: replace(dp_claim_test(
                judged, epsilon=claimed_epsilon, delta=claimed_delta, verbatim=verbatim,
            ), unit="person"))  # fmt: skip
        elif holdout is not None and len(holdout) >= 2:
            errors["dp_claim"] = "no membership attack could be judged per person"
    elif attacks and claimed_epsilon is not None:
        dp_claim = attempt("dp_claim", errors, lambda: dp_claim_test(
            attacks, epsilon=claimed_epsilon, delta=claimed_delta, verbatim=verbatim,
        ))  # fmt: skip
    if holdout is None:
        skipped["wp29"] = "needs a holdout table (the control attack)"
    else:
        step(0.6, "singling out, linkability, inference")
        wp29 = attempt("wp29", errors, lambda: wp29_risks(
            wp29_train, synthetic, wp29_control, numeric=schema.numeric,
            categorical=schema.categorical, seed=seed,
        ))  # fmt: skip
    step(0.7, "distance to closest record")
    dcr = attempt("dcr", errors, lambda: distance_to_closest_record(
        real_x, synthetic_x, holdout_x, real_hashes=real_hashes,
        synthetic_hashes=synthetic_hashes, holdout_hashes=holdout_hashes,
        categorical_blocks=[encoder.groups[c] for c in schema.categorical],
        real_groups=real_groups, holdout_groups=holdout_groups, seed=seed, memo=memo,
    ))  # fmt: skip
    if dcr is not None:
        dcr = _input_positions(dcr, real_order, holdout_order)
    if holdout is None:
        skipped["dcr_share"] = "needs a holdout table"
    inference = None
    if sensitive is None:
        skipped["attribute_inference"] = "no sensitive column chosen"
    elif holdout is None:
        skipped["attribute_inference"] = "needs a holdout table (the benchmark attacker)"
    else:
        step(0.85, f"attribute inference on {sensitive}")
        inference = attempt("attribute_inference", errors, lambda: attribute_inference(
            real, synthetic, holdout, sensitive=sensitive, encoder=encoder, seed=seed
        ))  # fmt: skip
    step(0.92, "l-diversity of tree leaves")
    diversity = None
    if schema.numeric:
        diversity = attempt(
            "l_diversity",
            errors,
            lambda: _l_diversity(synthetic, encoder=encoder, ell=l_diversity, seed=seed),
        )
    else:
        skipped["l_diversity"] = "no numeric columns"
    shadow_result = None
    if shadow is None:
        skipped["shadow"] = "no generator given (--generator module:function)"
    else:
        exposed = []
        if vulnerable is not None:
            exposed = list(zip(vulnerable.rows, vulnerable.p_value, strict=True))
        shadow_result = attempt("shadow", errors, lambda: shadow_attack(
            wp29_real, synthetic, wp29_holdout, settings=shadow, schema=schema, exposed=exposed,
            person=person, seed=seed,
            progress=lambda f, m: step(0.93 + 0.07 * f, m),
        ))  # fmt: skip
    quasi = None
    if not quasi_identifiers:
        skipped["quasi_identifiers"] = "no quasi-identifiers named (--quasi-identifiers)"
    else:
        quasi = attempt("quasi_identifiers", errors, lambda: quasi_identifier_risk(
            real, synthetic, holdout=holdout, quasi_identifiers=quasi_identifiers,
            person=person, seed=seed,
        ))  # fmt: skip
        if quasi is not None and quasi.holdout_risk is not None and holdout_order is not None:
            in_input = np.empty_like(quasi.holdout_risk)
            in_input[holdout_order] = quasi.holdout_risk  # holdout rows back in input order
            quasi = replace(quasi, holdout_risk=in_input)
    by_group = None
    if not groups:
        skipped["groups"] = "no grouping columns named (--groups)"
    elif not attacks:
        skipped["groups"] = "no membership attack ran (needs a holdout)"
    elif person is not None:
        # the unit of privacy: each attack's person scores, a person's group read from the
        # person's first row in value order (grouping columns such as sex or race are constant
        # within a person), so a group's counts are people, never a person's rows
        judged = [a for a in (person_level.attacks if person_level else ())
                  if a.error is None and a.persons is not None]  # fmt: skip
        if not judged:
            errors["groups"] = "no membership attack could be judged per person"
        else:
            by_group = attempt("groups", errors, lambda: _group_membership_by_person(
                judged, real, holdout, real_groups, holdout_groups, groups,
            ))  # fmt: skip
    elif chosen is not None:  # attacks ran, so their rows were drawn above
        by_group = attempt("groups", errors, lambda: group_membership(
            attacks, real.iloc[chosen.real_rows], holdout.iloc[chosen.holdout_rows],
            columns=groups,
        ))  # fmt: skip
    values = attempt("sensitive_values", errors, lambda: sensitive_value_replay(
        real, synthetic, holdout=holdout, columns=cols, numeric=schema.numeric,
    ))  # fmt: skip
    step(1.0, "privacy done")
    return PrivacyReport(
        attacks, dcr, inference, diversity, errors, skipped, epsilon, wp29, vulnerable,
        shadow=shadow_result, person_level=person_level, dp_claim=dp_claim,
        quasi_identifiers=quasi, sensitive_values=values, groups=by_group,
    )  # fmt: skip


def evaluate_privacy_arrays(
    real_x: np.ndarray,
    synthetic_x: np.ndarray,
    holdout_x: np.ndarray | None,
    *,
    max_attack: int = 10_000,
    seed: int = 0,
    progress: Progress = None,
) -> PrivacyReport:
    """Privacy section on numeric features (e.g. trace embeddings): seekers, density, DCR.

    No Gower attack, attribute inference or ℓ-diversity (they need named columns). Real and
    holdout rows are put in a value-defined order (:func:`synthreview.io.row_hash.value_order`)
    before attack sets and subsamples are drawn, so no estimate depends on the order of the rows
    of any input; ``dcr`` reports rows at input positions. A further attack (e.g. a recurrent
    seeker) orders its own rows the same way, draws them with
    ``membership.attack_set(len(real), len(holdout), max_attack=..., seed=...)``, scores them
    with ``membership.summarize_attack`` and is appended with ``dataclasses.replace(report,
    membership_inference=report.membership_inference + (result,))``.
    """
    arrays = [
        None if x is None else np.asarray(x, np.float32) for x in (real_x, synthetic_x, holdout_x)
    ]
    real_x, synthetic_x, holdout_x = arrays
    for name, x in (("real_x", real_x), ("synthetic_x", synthetic_x), ("holdout_x", holdout_x)):
        if x is not None and (x.ndim != 2 or x.shape[1] != real_x.shape[1]):
            raise ValueError(f"{name} must be 2-d with {real_x.shape[1]} features; got {x.shape}")
        if x is not None and name != "holdout_x" and len(x) < 2:
            raise DataError(f"{name} must have at least 2 rows; got {len(x)}")
    step = progress or (lambda fraction, message: None)
    errors: dict[str, str] = {}
    skipped: dict[str, str] = {
        "attribute_inference": "not defined on arrays",
        "l_diversity": "not defined on arrays",
    }
    # attack sets and subsamples are drawn by position: put real and holdout rows in an order
    # defined by their values (as evaluate_privacy does), so shuffling either changes no
    # estimate; rows reported back (nearest training rows, per-holdout-row evidence) are
    # input positions, per-synthetic-row arrays stay in the synthetic input order
    real_order = value_order(pd.DataFrame(real_x.astype(np.float64)))
    real_x = real_x[real_order]
    holdout_order = None
    if holdout_x is not None:
        holdout_order = value_order(pd.DataFrame(holdout_x.astype(np.float64)))
        holdout_x = holdout_x[holdout_order]
    attacks: tuple[AttackResult, ...] = ()
    if holdout_x is None or len(holdout_x) < 2:
        skipped["membership_inference"] = "needs holdout rows (the non-members)"
    else:
        attacks = attempt("membership_inference", errors, lambda: membership_inference(
            real_x, synthetic_x, holdout_x, max_attack=max_attack, seed=seed,
            progress=lambda f, m: step(0.8 * f, m),
        )) or ()  # fmt: skip
    epsilon = None
    if attacks:
        epsilon = attempt("epsilon_lower_bound", errors,
                          lambda: epsilon_lower_bound(attacks, seed=seed))  # fmt: skip
    step(0.8, "distance to closest record")
    dcr = attempt(
        "dcr", errors, lambda: distance_to_closest_record(real_x, synthetic_x, holdout_x, seed=seed)
    )
    if dcr is not None:
        dcr = _input_positions(dcr, real_order, holdout_order)
    step(1.0, "privacy done")
    return PrivacyReport(attacks, dcr, None, None, errors, skipped, epsilon)
