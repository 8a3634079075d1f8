"""Release verdicts the audit adds to the policy: copies beyond real data, worse after curation.

Two rules read the audit rather than a section's headline number, so they are added to a
candidate's ``Verdicts`` here (``with_rules``):

* ``audit_copies``: share of rows the copy rules flag (authenticity ratio, distance, exact copy)
  beyond what a fresh real sample loses under the same rules (the holdout, leave-one-out). The
  value is the one-sided 95 % Clopper–Pearson lower bound of the flagged share minus that
  reference, so sampling noise alone does not fail a candidate: pass ≤ 0.005, fail > 0.01.
  A distance-only policy does not see a few planted copies (5 % planted training rows move the
  DCR share and a distance attack's AUC by about 0.025); this rule does.
* ``reattack``: the curated set fails when a membership-inference attack got worse beyond its
  before-curation interval (``synthreview.release.reattack``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta

from synthreview.judgement.policy import RuleVerdict, Verdicts, grade
from synthreview.judgement.verdicts import SEVERITY
from synthreview.results import to_jsonable

__all__ = [
    "COPY_RULES",
    "CopyExcess",
    "copies_verdict",
    "copy_excess",
    "reattack_verdict",
    "with_rules",
]

#: audit rules that flag copies (the α-rule flags poor fidelity, judged by the IPα rule instead)
COPY_RULES = ("drop_unauthentic", "drop_too_close", "drop_exact_copy")
#: thresholds of the ``audit_copies`` rule (excess share over the holdout, lower is better)
COPIES_PASS, COPIES_FAIL = 0.005, 0.01


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
    """

    flagged: int
    n_rows: int
    share: float
    lower: float
    reference: float
    excess: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


def _copy_share(audit: pd.DataFrame) -> tuple[int, int]:
    rules = [r for r in COPY_RULES if r in audit]
    hits = audit[rules].to_numpy(dtype=bool).any(axis=1) if rules else np.zeros(len(audit), bool)
    return int(hits.sum()), len(audit)


def copy_excess(audit: pd.DataFrame, reference: pd.DataFrame | None) -> CopyExcess:
    """:class:`CopyExcess` of an audit table against its ``holdout_audit``."""
    k, n = _copy_share(audit)
    lower = float(beta.ppf(0.05, k, n - k + 1)) if k > 0 else 0.0
    ref = float("nan")
    if reference is not None and len(reference):
        rk, rn = _copy_share(reference)
        ref = rk / rn
    excess = max(lower - ref, 0.0) if math.isfinite(ref) else float("nan")
    return CopyExcess(k, n, k / n if n else float("nan"), lower, ref, excess)


def copies_verdict(excess: CopyExcess) -> RuleVerdict:
    """The ``audit_copies`` rule verdict of one candidate."""
    value = excess.excess
    note = (
        f"{excess.flagged} of {excess.n_rows} rows flagged as copies ({excess.share:.1%}); "
        f"a fresh real sample: {excess.reference:.1%}"
        if math.isfinite(excess.reference)
        else "no holdout: the copy rules have no real-data reference"
    )
    return RuleVerdict(
        "audit_copies",
        grade(value, COPIES_PASS, COPIES_FAIL) if math.isfinite(value) else "n/a",
        value if math.isfinite(value) else None,
        COPIES_PASS,
        COPIES_FAIL,
        "lower",
        "rows flagged as copies beyond a fresh real sample (95 % lower bound)",
        excess.reference if math.isfinite(excess.reference) else None,
        note,
        measured=excess.share,
        reason=(
            f"{excess.share:.1%} of rows copy training rows (a fresh real sample: "
            f"{excess.reference:.1%})"
            if math.isfinite(excess.reference)
            else "no holdout: the copy rules have no real-data reference"
        ),
    )


def reattack_verdict(reattack: Any) -> RuleVerdict:
    """The ``reattack`` rule verdict of a curated set (fail when an attack got worse)."""
    worse = [a.attack for a in reattack.attacks if a.worse]
    measured = bool(reattack.attacks)
    return RuleVerdict(
        "reattack",
        ("fail" if worse else "pass") if measured else "n/a",  # type: ignore[arg-type]
        float(len(worse)) if measured else None,
        0.0,
        0.0,
        "lower",
        "attacks worse after curation than their before-curation 95 % interval",
        None,
        ("worse: " + ", ".join(worse)) if worse else reattack.note,
        reason=(
            f"after curation these attacks got worse beyond their interval: {', '.join(worse)}"
            if worse
            else "no attack got worse after curation"
            if measured
            else "the curated set was not attacked again"
        ),
    )


def with_rules(verdicts: Verdicts, extra: list[RuleVerdict]) -> Verdicts:
    """``verdicts`` with ``extra`` rules appended and the overall verdict recomputed.

    An overall verdict this module does not know (e.g. "incomplete") is kept unless an added
    rule fails.
    """
    overall = verdicts.overall
    for rule in extra:
        if SEVERITY.get(rule.verdict, 0) > SEVERITY.get(overall, 3):
            overall = rule.verdict
    # replace keeps every other field (e.g. the data kind of a trace review)
    return replace(verdicts, overall=overall, rules=(*verdicts.rules, *extra))
