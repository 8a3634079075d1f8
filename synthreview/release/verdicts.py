"""The release audit's evidence for the policy: copies beyond real data, worse after curation.

Three policy rules read the audit rather than a section's headline number
(``[rules.audit_copies]``, ``[rules.real_records]`` and ``[rules.reattack]`` in
``policies/default.toml``; their thresholds, reasons and grading live
in :mod:`synthreview.judgement`, like every other rule). This module measures what they read and
hands it to :func:`synthreview.judgement.policy.apply_policy` under the candidate's ``"audit"``
key:

* ``copies``: share of rows the copy rules flag (authenticity ratio, distance, exact copy), its
  one-sided 95 % Clopper–Pearson lower bound, and the share a fresh real sample loses under the
  same rules (the holdout, leave-one-out). A distance-only policy does not see a few planted
  copies (5 % planted training rows move the DCR share and a distance attack's AUC by about
  0.025); this rule does.
* ``real_records``: share of rows that equal a training or holdout record (row hashes), its
  lower bound and the share a fresh real sample shows by coincidence
  (:func:`synthreview.release.audit.real_records`, carried by :class:`CopyExcess`).
* ``reattack``: the membership attacks run again on the curated set
  (:mod:`synthreview.release.reattack`); judged for a curated set only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd
from scipy.stats import beta

from synthreview.judgement.policy import Policy, Verdicts, apply_policy
from synthreview.release.audit import RealRecords, copy_counts, real_records
from synthreview.release.reattack import Reattack
from synthreview.results import to_jsonable

__all__ = [
    "CopyExcess",
    "audit_evidence",
    "copy_excess",
    "judge_audited",
]


@dataclass(frozen=True)
class CopyExcess:
    """Rows the copy rules flag, against the share a fresh real sample loses.

    Attributes
    ----------
    flagged, n_rows : int
    share : float
        ``flagged / n_rows``.
    lower : float
        One-sided 95 % Clopper–Pearson lower bound of ``share``.
    reference : float
        Share of holdout rows the same rules flag (leave-one-out); NaN without a holdout.
    excess : float
        ``max(lower - reference, 0)``; NaN without a reference.
    real_records : RealRecords or None
        Rows that equal a training or holdout record against the holdout's coincidental
        rate (:func:`synthreview.release.audit.real_records`), read by the ``real_records``
        rule; None without the privacy section's row hashes.
    """

    flagged: int
    n_rows: int
    share: float
    lower: float
    reference: float
    excess: float
    real_records: RealRecords | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


def _copy_share(audit: pd.DataFrame) -> tuple[int, int]:
    counts = copy_counts(audit)  # the rows every page counts as flagged copies
    return counts.flagged_as_copies, counts.n_rows


def copy_excess(audit: pd.DataFrame, reference: pd.DataFrame | None) -> CopyExcess:
    """:class:`CopyExcess` of an audit table against its ``holdout_audit``."""
    k, n = _copy_share(audit)
    lower = float(beta.ppf(0.05, k, n - k + 1)) if k > 0 else 0.0
    ref = float("nan")
    if reference is not None and len(reference):
        rk, rn = _copy_share(reference)
        ref = rk / rn
    excess = max(lower - ref, 0.0) if math.isfinite(ref) else float("nan")
    found = real_records(audit, reference)
    return CopyExcess(k, n, k / n if n else float("nan"), lower, ref, excess, found)


def audit_evidence(
    copies: CopyExcess | None = None, reattack: Reattack | None = None
) -> dict[str, object]:
    """The ``"audit"`` entry the audit rules of a policy read (``to_dict()`` of each part)."""
    evidence: dict[str, object] = {}
    if copies is not None:
        evidence["copies"] = copies.to_dict()
        if copies.real_records is not None:
            evidence["real_records"] = copies.real_records.to_dict()
    if reattack is not None:
        evidence["reattack"] = reattack.to_dict()
    return evidence


def judge_audited(
    policy: Policy,
    candidate: Mapping[str, object],
    *,
    copies: CopyExcess | None,
    reattack: Reattack | None = None,
    kind: str | None = None,
) -> Verdicts:
    """Every rule of ``policy`` for a candidate, the audit rules included when its audit ran.

    Parameters
    ----------
    policy : Policy
    candidate : mapping
        The candidate's ``to_dict()`` (as submitted, or its curated version).
    copies : CopyExcess or None
        From :func:`copy_excess`; None when the audit does not cover the candidate (no
        fidelity or privacy results, or a curated set with no rows left): it is then judged
        without the audit rules, as :func:`~synthreview.judgement.policy.apply_policy` does.
    reattack : Reattack, optional
        The curated set's re-attack (after curation only; read only with ``copies``).
    kind : {"table", "traces"}, optional
    """
    if copies is None:
        return apply_policy(policy, candidate, kind=kind)
    audited = {**candidate, "audit": audit_evidence(copies, reattack)}
    return apply_policy(policy, audited, kind=kind)
