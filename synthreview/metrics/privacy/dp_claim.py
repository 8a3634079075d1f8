"""Claim test: is the measured attack success consistent with a claimed (ε, δ)-DP generator?

Hypothesis-testing view of differential privacy (Kairouz, Oh & Viswanath 2015, Theorem 2.1;
the auditing recipe of Jagielski et al. 2020 and Nasr et al. 2023, "Tight Auditing of
Differentially Private Machine Learning"): if the generator is (ε, δ)-DP, every membership test
satisfies

    TPR <= e^ε · FPR + δ        and        1 - FPR <= e^ε · (1 - TPR) + δ.

Each attack's *operating points* (thresholds at fixed score quantiles of the attack set, chosen
without looking at membership) give one pair of rates; the claim is contradicted when, at some
operating point, the one-sided Clopper-Pearson lower bound of the TPR exceeds ``e^ε`` times the
upper bound of the FPR plus δ (or the mirrored inequality). The bounds are taken at
``1 - α / (2 · K · T)`` for K attacks × T thresholds (Bonferroni; α = 1 - confidence), so a
generator that keeps its claim is called a liar in at most 5 % of reviews. The largest ε that
the same bounds certify, ``log((TPR_lo - δ) / FPR_hi)`` (or the mirrored ratio), is reported
as ``certified_epsilon``: the claim is contradicted exactly when it exceeds the claimed ε.

Phantoms (Amin et al., arXiv 2606.16952): a disclosure the attacker also "makes" about people
who were never in the training data comes from the population, not from membership. At the
operating point reported, members flagged are the detected disclosures and non-members flagged
(scaled to the members' count) are the ones a model of the population produces equally;
``phantom_share`` is their ratio: about 1 for a fresh real sample (every detected disclosure is
a phantom), near 0 for a copy. Like the ε lower bound (:mod:`.epsilon`), the test uses one
training set, so it can refute a claim but never prove one.

**Verbatim copies** (issue 35 item 6). The attacks' quantile thresholds cannot isolate a few
copied records: at the top one of 20 the flagged rows are ~5 % of the attack set, so 15
verbatim training records among 300 certified nothing and a claimed ε = 0 passed. DP bounds
*every* event of the output, so the test adds one event fixed before looking at the data:
"the record (with ``--person``: any of the person's records) appears verbatim in the
candidate" (:func:`verbatim_events`, row hashes over the analysed columns). For members
(training units) and non-members (holdout units) it is one more operating point, bounded as
above: ``P(copied | member) <= e^ε P(copied | non-member) + δ`` (Kairouz, Oh & Viswanath 2015,
Theorem 2.1, for the test "call a unit a member when it is copied"; the same inequality
Jagielski et al. 2020 audit with). Under a fresh sample both sides are copied only by
coincidence, at one rate, and the bound certifies ε = 0. The family's α is split in two halves
(weighted Bonferroni, still ``1 - confidence`` in all): one for this single event, one shared by
the attacks' K × T operating points, so the event keeps its power (15 copies of 300 training
rows and none of 300 holdout rows certify ε ≥ 0.58; as one of 13 × 20 + 1 equal shares
they certified nothing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from synthreview.metrics.privacy.attack_stats import AttackResult
from synthreview.metrics.privacy.epsilon import clopper_pearson
from synthreview.results import to_jsonable
from synthreview.splits import units_of

__all__ = [
    "VERBATIM_EVENT",
    "DPClaimTest",
    "VerbatimEvents",
    "certified_epsilon",
    "dp_claim_test",
    "verbatim_events",
]

#: name of the verbatim-copy event among the tested operating points
VERBATIM_EVENT = "verbatim_copies"


@dataclass(frozen=True)
class VerbatimEvents:
    """How many member and non-member units appear verbatim in a candidate.

    Attributes
    ----------
    copied_members, n_members : int
        Training units (rows, or people with ``unit="person"``) with a record that equals a
        candidate row on every analysed column, and all training units.
    copied_nonmembers, n_nonmembers : int
        The same for the holdout units: what a fresh sample repeats by coincidence.
    unit : {"row", "person"}
    """

    copied_members: int
    n_members: int
    copied_nonmembers: int
    n_nonmembers: int
    unit: str = "row"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return to_jsonable({f.name: getattr(self, f.name) for f in fields(self)})


def verbatim_events(
    real_hashes: np.ndarray,
    holdout_hashes: np.ndarray,
    synthetic_hashes: np.ndarray,
    *,
    real_groups: np.ndarray | None = None,
    holdout_groups: np.ndarray | None = None,
) -> VerbatimEvents:
    """Count the training and holdout units whose record appears verbatim in the candidate.

    Parameters
    ----------
    real_hashes, holdout_hashes, synthetic_hashes : ndarray of uint64
        One hash per row over the analysed columns (equal rows hash equal).
    real_groups, holdout_groups : ndarray, optional
        Person id of every training / holdout row: the unit is then the person, copied when
        any of the person's rows is. Both or neither.

    Returns
    -------
    VerbatimEvents
    """
    if (real_groups is None) != (holdout_groups is None):
        raise ValueError(
            "real_groups and holdout_groups must be given together; got only "
            f"{'real_groups' if holdout_groups is None else 'holdout_groups'}"
        )
    counts = []
    for hashes, groups in ((real_hashes, real_groups), (holdout_hashes, holdout_groups)):
        copied = np.isin(np.asarray(hashes), np.asarray(synthetic_hashes))
        units = units_of(len(copied), groups)
        per_unit = np.bincount(units.labels, weights=copied, minlength=units.n_units) > 0
        counts += [int(per_unit.sum()), units.n_units]
    return VerbatimEvents(*counts, unit="row" if real_groups is None else "person")


@dataclass(frozen=True)
class DPClaimTest:
    """Outcome of testing a claimed (ε, δ) against the membership attacks.

    Attributes
    ----------
    claimed_epsilon, claimed_delta : float
    confidence : float
        Family-wise confidence of all bounds together (0.95).
    n_tests : int
        Attacks × operating points tried (the Bonferroni divisor, with 2 bounds each).
    contradicted : bool
        Some attack's operating point shows more success than the claim allows.
    certified_epsilon : float
        Largest ε the bounds certify at ``claimed_delta`` (ε ≥ this); 0 = no evidence.
    excess : float
        ``max(0, certified_epsilon - claimed_epsilon)``: > 0 exactly when contradicted; lower
        is better.
    attack : str or None
        Attack of the reported operating point (the one certifying the largest ε).
    contradicting : tuple of str
        Every attack with an operating point that contradicts the claim.
    threshold, tpr, fpr, tpr_lower, fpr_upper : float
        The reported operating point: score threshold, its rates and their bounds.
    n_members, n_nonmembers : int
    disclosures : int
        Members flagged at the reported operating point.
    phantom_share : float
        Share of those disclosures that non-members get equally (Amin et al.): flagged
        non-members scaled to the members' count over flagged members, capped at 1; NaN when
        nothing is flagged. Lower = more of the disclosures are real membership leaks.
    unit : str
        What the claim protects and the attacks scored: ``"row"``, or ``"person"`` in a
        person-level review (each person one score, so ε is a person's, the unit a DP
        guarantee for data with several rows per person must protect).
    verbatim : VerbatimEvents or None
        Units copied verbatim on each side, when the event was tested.
    verbatim_epsilon : float
        ε the verbatim event alone certifies (0 = no evidence; NaN when not tested).
    """

    claimed_epsilon: float
    claimed_delta: float
    confidence: float
    n_tests: int
    contradicted: bool
    certified_epsilon: float
    excess: float
    attack: str | None
    contradicting: tuple[str, ...]
    threshold: float
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    n_members: int
    n_nonmembers: int
    disclosures: int
    phantom_share: float
    unit: str = "row"
    verbatim: VerbatimEvents | None = None
    verbatim_epsilon: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["contradicting"] = list(self.contradicting)
        out["verbatim"] = None if self.verbatim is None else self.verbatim.to_dict()
        return to_jsonable(out)


def certified_epsilon(
    tp: Any, n_members: int, fp: Any, n_nonmembers: int, *, delta: float, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ε certified by ``tp`` of ``n_members`` and ``fp`` of ``n_nonmembers`` flagged.

    Each rate is bounded one-sided at ``1 - alpha`` (Clopper-Pearson): ``TPR_lo`` and
    ``FPR_hi``. Returns ``(epsilon, tpr_lower, fpr_upper)`` with ``epsilon = max(log((TPR_lo -
    δ) / FPR_hi), log((1 - FPR_hi - δ) / (1 - TPR_lo)), 0)``.
    """
    tpr_lo, _ = clopper_pearson(tp, n_members, alpha)
    _, fpr_hi = clopper_pearson(fp, n_nonmembers, alpha)
    tpr_lo, fpr_hi = np.asarray(tpr_lo, np.float64), np.asarray(fpr_hi, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.log((tpr_lo - delta) / fpr_hi)
        second = np.log((1 - fpr_hi - delta) / (1 - tpr_lo))
    eps = np.fmax(first, second)  # fmax: a log of a non-positive number (nan) never wins
    return np.where(np.isfinite(eps), np.maximum(eps, 0.0), 0.0), tpr_lo, fpr_hi


def dp_claim_test(
    attacks: Sequence[AttackResult],
    *,
    epsilon: float,
    delta: float = 0.0,
    verbatim: VerbatimEvents | None = None,
    confidence: float = 0.95,
    n_thresholds: int = 20,
) -> DPClaimTest:
    """Test a claimed (ε, δ)-DP guarantee against every attack's operating points.

    Parameters
    ----------
    attacks : sequence of AttackResult
        Results with per-row ``scores`` and ``is_member``; failed attacks are skipped.
    epsilon : float
        Claimed ε, ``>= 0``.
    delta : float, default=0.0
        Claimed δ, in ``[0, 1)``.
    verbatim : VerbatimEvents, optional
        Units copied verbatim (:func:`verbatim_events`): tested as one more operating point,
        with half the family's α (module docstring).
    confidence : float, default=0.95
        Family-wise confidence over all attacks, thresholds and the verbatim event.
    n_thresholds : int, default=20
        Operating points per attack: score quantiles at ``(i + 1) / (T + 1)`` of the attack
        set (members and non-members pooled, so no label chooses them).

    Returns
    -------
    DPClaimTest
    """
    if (
        isinstance(epsilon, bool)
        or not isinstance(epsilon, (int, float))
        or not (math.isfinite(epsilon) and epsilon >= 0)
    ):
        raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r} instead")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
        raise ValueError(f"delta must be a number in [0, 1); got {delta!r} instead")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r} instead")
    if isinstance(n_thresholds, bool) or not isinstance(n_thresholds, int) or n_thresholds < 1:
        raise ValueError(f"n_thresholds must be an integer >= 1; got {n_thresholds!r} instead")
    if verbatim is not None and (verbatim.n_members < 1 or verbatim.n_nonmembers < 1):
        raise ValueError(
            "verbatim must count >= 1 member and >= 1 non-member unit; got "
            f"{verbatim.n_members} and {verbatim.n_nonmembers} instead"
        )
    usable = [a for a in attacks if a.error is None and len(a.scores)]
    if not usable:
        raise ValueError("the claim test needs at least one membership attack that ran")
    n_tests = len(usable) * n_thresholds
    # two bounds per operating point; with the verbatim event, half of the family's α is its
    # own (one pre-chosen event) and the attacks' operating points share the other half
    share = 1 - confidence if verbatim is None else (1 - confidence) / 2
    alpha = share / (2 * n_tests)
    levels = np.arange(1, n_thresholds + 1) / (n_thresholds + 1)
    found = []  # (certified ε, excess flags, operating point) per attack
    contradicting = []
    for a in usable:
        scores = np.asarray(a.scores, np.float64)
        member = np.asarray(a.is_member, bool)
        n_m, n_o = int(member.sum()), int((~member).sum())
        thresholds = np.quantile(scores, levels)  # T points, repeats allowed (ties)
        m, o = np.sort(scores[member]), np.sort(scores[~member])
        tp = n_m - np.searchsorted(m, thresholds, side="left")
        fp = n_o - np.searchsorted(o, thresholds, side="left")
        eps, tpr_lo, fpr_hi = certified_epsilon(tp, n_m, fp, n_o, delta=delta, alpha=alpha)
        if (eps > epsilon).any():
            contradicting.append(a.attack)
        # the reported point: the largest certified ε, else the most excess disclosures
        excess_flags = tp - fp * n_m / max(n_o, 1)
        i = int(np.argmax(eps)) if eps.max() > 0 else int(np.argmax(excess_flags))
        point = (a.attack, thresholds[i], tp[i], fp[i], n_m, n_o, tpr_lo[i], fpr_hi[i])
        found.append((float(eps[i]), float(excess_flags[i]), point))
    verbatim_eps = math.nan
    if verbatim is not None:
        # the score "copied" (1) or not (0), flagged at >= 1
        tp, n_m = verbatim.copied_members, verbatim.n_members
        fp, n_o = verbatim.copied_nonmembers, verbatim.n_nonmembers
        eps, tpr_lo, fpr_hi = certified_epsilon(
            tp, n_m, fp, n_o, delta=delta, alpha=(1 - confidence) / 4
        )
        verbatim_eps = float(eps)
        if verbatim_eps > epsilon:
            contradicting.append(VERBATIM_EVENT)
        point = (VERBATIM_EVENT, 1.0, tp, fp, n_m, n_o, float(tpr_lo), float(fpr_hi))
        found.append((verbatim_eps, float(tp - fp * n_m / n_o), point))
    certified, _, point = max(found, key=lambda f: f[:2])
    attack, threshold, tp, fp, n_m, n_o, tpr_lo, fpr_hi = point
    phantoms = fp * n_m / n_o if n_o else math.nan
    return DPClaimTest(
        claimed_epsilon=float(epsilon),
        claimed_delta=float(delta),
        confidence=confidence,
        n_tests=n_tests + (verbatim is not None),
        contradicted=bool(contradicting),
        certified_epsilon=certified,
        excess=max(0.0, certified - float(epsilon)),
        attack=attack,
        contradicting=tuple(contradicting),
        threshold=float(threshold),
        tpr=float(tp / n_m),
        fpr=float(fp / n_o),
        tpr_lower=float(tpr_lo),
        fpr_upper=float(fpr_hi),
        n_members=n_m,
        n_nonmembers=n_o,
        disclosures=int(tp),
        phantom_share=float(min(1.0, phantoms / tp)) if tp > 0 else math.nan,
        verbatim=verbatim,
        verbatim_epsilon=verbatim_eps,
    )
