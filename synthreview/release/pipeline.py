"""The one release pipeline: audit, curate, re-evaluate, re-attack and judge a candidate.

:func:`release_candidate` is the only place where a candidate's release is assembled. The CLI
(through :func:`review_release`), the dashboard's Run review and the Audit page's threshold
controls all call it, so the screen, ``report.json``, ``report.html`` and the exit code state the
same decision. Each step is one typed value:

* :class:`CandidateAudit` — the per-row audit (``release.audit.audit_table``) and its holdout
  reference under one :class:`~synthreview.release.audit.Thresholds`;
* :class:`CuratedCandidate` — the curated rows, their re-evaluation with **every section of the
  submitted review** (so the policy's required rules are computed after curation too), the
  curated set's own copy audit and the re-attack (Ganev & De Cristofaro, arXiv 2312.05114);
* :class:`CandidateRelease` — both, the policy's verdicts as submitted and after curation, and the
  :class:`~synthreview.judgement.decision.Decision` they give.

A call can hand back a previous :class:`CandidateRelease` (``reuse=``): whatever its thresholds
and the review's numbers still determine (the audit, the curated evaluation) is kept, and only
the judgement is redone. Model auditing as in Alaa et al. (2022, §5.1): judge every synthetic row,
release the rest unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import numpy as np
import pandas as pd

from synthreview.errors import ConfigError
from synthreview.io.schema import Review
from synthreview.judgement.context import ReleaseContext
from synthreview.judgement.decision import Decision, decide, exit_code, real_records_flagged
from synthreview.judgement.ledger import PriorRelease, cap_decisions
from synthreview.judgement.policy import LedgerLimits, Policy, Verdicts, load_policy
from synthreview.judgement.waivers import Waiver, decide_with_waivers
from synthreview.metrics.glucose.trace_rules import trace_rule_columns
from synthreview.release.audit import (
    CopyCounts,
    Thresholds,
    audit_table,
    copy_counts,
    holdout_audit,
    kept_audit,
    rule_overlaps,
    rule_summary,
)
from synthreview.release.bundle import AuditRecord, build_release
from synthreview.release.controls import PlantedControls, planted_controls
from synthreview.release.curation import (
    CurationBound,
    CurationResult,
    bounded_verdicts,
    curate,
    curation_bounds,
    evaluate_curated,
)
from synthreview.release.evidence import copy_evidence_for
from synthreview.release.reattack import Reattack, compare_attacks
from synthreview.release.rows import every_row_evidence
from synthreview.release.signoff import SignOff
from synthreview.release.table import STATISTICS
from synthreview.release.verdicts import CopyExcess, copy_excess, judge_audited
from synthreview.review import Report, scaled_progress

__all__ = [
    "REAL_LOSS_WARNING",
    "CandidateAudit",
    "CandidateRelease",
    "CuratedCandidate",
    "Release",
    "RulePreview",
    "audit_candidate",
    "release_candidate",
    "review_release",
]

#: a per-row rule that would remove more than this share of a fresh real sample is flagged on
#: the Audit page (the default rules lose about 1-1.5 %; see ``release.audit``)
REAL_LOSS_WARNING = 0.03

Progress = Callable[[float, str], None]
#: where the curated evaluation's progress stands when its privacy section starts (the other
#: sections first; privacy took about 60 % of a demo candidate's CPU: 4.7 of 8.2 s)
_PRIVACY_START = 0.4
#: the share of one candidate's release progress an every-row audit takes (a review estimated
#: on samples): at a million rows it took about as long as the curated re-evaluation after it
EVERY_ROW_AUDIT_SHARE = 0.5
#: when to curate: always, never, or only a candidate that fails the policy as submitted
CurateWhen = Literal["always", "never", "failing"]


@dataclass(frozen=True)
class RulePreview:
    """What one audit rule removes, beside what it would remove of fresh real data.

    Attributes
    ----------
    rule : str
        Rule id (``"any"`` for the union of the rules).
    label : str
        Words for the rule.
    active : bool
        Whether the thresholds switch the rule on.
    flagged, only : int
        Rows the rule flags; rows it alone flags.
    share : float
        ``flagged`` over the candidate's rows.
    real_loss : float or None
        The larger of the calibrated expected loss and the holdout's own share (leave-one-out);
        ``None`` without a holdout reference.
    too_lossy : bool
        ``real_loss`` above :data:`REAL_LOSS_WARNING` for an active rule.
    """

    rule: str
    label: str
    active: bool
    flagged: int
    only: int
    share: float
    real_loss: float | None
    too_lossy: bool


@dataclass(frozen=True)
class CandidateAudit:
    """The per-row audit of one candidate and the same rules on its holdout.

    Attributes
    ----------
    audit : pandas.DataFrame
        ``release.audit.audit_table``: one row per synthetic row, ``removed`` and ``reasons``.
    reference : pandas.DataFrame
        ``release.audit.holdout_audit``: the holdout judged by the same rules (leave-one-out).
    thresholds : Thresholds
        The thresholds both tables were built with.
    """

    audit: pd.DataFrame
    reference: pd.DataFrame
    thresholds: Thresholds

    @property
    def copies(self) -> CopyExcess:
        """Copy-rule flags beyond the holdout's share: what ``audit_copies`` judges."""
        return copy_excess(self.audit, self.reference)

    @property
    def counts(self) -> CopyCounts:
        """The candidate's copies counted once (``release.audit.copy_counts``): every page,
        ``report.json`` and ``report.html`` state these numbers."""
        return copy_counts(self.audit)

    @property
    def n_removed(self) -> int:
        """Rows the audit removes."""
        return int(self.audit["removed"].sum())

    def summary(self) -> pd.DataFrame:
        """``release.audit.rule_summary`` against the holdout reference."""
        return rule_summary(self.audit, self.reference)

    def overlaps(self) -> pd.DataFrame:
        """``release.audit.rule_overlaps`` (rows removed by each combination of rules)."""
        return rule_overlaps(self.audit)

    def preview(self) -> list[RulePreview]:
        """One :class:`RulePreview` per rule that applies to this review and the union, for the
        Audit page's preview. A table rule whose statistic this review has no column for (the
        quasi-identifier rule without ``--quasi-identifiers``, the holdout-copy rule without a
        holdout, the α-support of a trace review without one) cannot remove a row here and is
        left out; a rule switched off keeps its tile (the reviewer switched it off)."""
        found = []
        for rule, row in self.summary().iterrows():
            if rule in STATISTICS and not self._measured(STATISTICS[rule]):
                continue
            known = [
                float(x)
                for x in (row.get("expected_fpr"), row.get("reference_share"))
                if x is not None and x == x
            ]
            loss = max(known) if known else None
            found.append(
                RulePreview(
                    rule=str(rule),
                    label=str(row["label"]),
                    active=bool(row["active"]),
                    flagged=int(row["flagged"]),
                    only=int(row["only"]),
                    share=float(row["share"]),
                    real_loss=loss,
                    too_lossy=bool(row["active"]) and loss is not None and loss > REAL_LOSS_WARNING,
                )
            )
        return found

    def _measured(self, statistic: str) -> bool:
        """Whether the audit holds ``statistic`` for its rows (missing or all NA: not measured
        for this review)."""
        if statistic not in self.audit:
            return False
        return len(self.audit) == 0 or bool(self.audit[statistic].notna().any())

    def record(self) -> AuditRecord:
        """The audit as ``release.bundle`` files it (tables, thresholds, copy evidence)."""
        return AuditRecord(self.audit, self.reference, self.thresholds, self.copies)


@dataclass(frozen=True)
class CuratedCandidate:
    """A candidate with the audited rows removed, re-evaluated, re-audited and re-attacked.

    Attributes
    ----------
    curation : CurationResult
        Kept and removed rows, as in the input file.
    report : Report or None
        The curated set evaluated with every section of the submitted review (same context,
        options and seed); ``None`` when no row was left.
    content : dict
        What the policy judges: ``report``'s candidate ``to_dict()``, or an ``errors`` entry
        saying nothing was left.
    audit : CandidateAudit or None
        The curated set's own copy audit (same thresholds); ``None`` when no row was left or it
        has neither fidelity nor privacy results.
    reattack : Reattack or None
        Every membership attack before -> after curation.
    verdicts : Verdicts
        The policy applied to ``content`` with the curated audit's evidence and the re-attack.
    bounds : tuple of CurationBound
        The failing rules that removing the audit's rows provably cannot bring under their
        fail line (``release.curation.curation_bounds``). When there are any, the curated set
        is cut but not evaluated (``report`` is None): the decision cannot change, and its
        reason says "curation cannot fix: ..." with the bound.
    skipped : tuple of str
        Sections not evaluated after curation because the sections computed first already
        fail a required rule (the curated set fails whatever they give); ``content`` says so
        under ``errors``.
    """

    curation: CurationResult
    report: Report | None
    content: dict[str, object]
    audit: CandidateAudit | None
    reattack: Reattack | None
    verdicts: Verdicts
    bounds: tuple[CurationBound, ...] = ()
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True)
class CandidateRelease:
    """Everything the release of one candidate rests on, and its decision.

    Attributes
    ----------
    name : str
    content : dict
        The candidate as submitted (``CandidateResult.to_dict()``).
    audit : CandidateAudit or None
        ``None`` when the candidate has neither fidelity nor privacy results (the audit rules
        then do not apply).
    verdicts : Verdicts
        The policy, audit rules included, applied to the candidate as submitted.
    curated : CuratedCandidate or None
        Its curated version, when it was curated.
    """

    name: str
    content: dict[str, object]
    audit: CandidateAudit | None
    verdicts: Verdicts
    curated: CuratedCandidate | None

    @property
    def decision(self) -> Decision:
        """The one decision (``judgement.decision.decide``) the screen, record and CLI state."""
        return decide(self.name, self.verdicts, self.curated.verdicts if self.curated else None)


def policy_key(policy: Policy) -> str:
    """A value that changes whenever anything the policy judges with changes."""
    return repr(policy.to_dict())


def audit_candidate(
    report: Report,
    name: str,
    thresholds: Thresholds | None = None,
    *,
    review: Review | None = None,
    progress: Progress | None = None,
) -> CandidateAudit | None:
    """The per-row audit of candidate ``name`` (``None`` without fidelity or privacy results).

    The authenticity ratio is taken in the encoder space of the report's fitted context
    (``evidence.copy_evidence_for``) when there is one; a trace review adds its plausibility and
    memorised-subject rules from the glucose section, on the candidate and on the holdout alike.
    A report estimated on samples (``report.sampling``) is audited on every row of ``review``
    (:func:`synthreview.release.rows.every_row_evidence`), which it then needs; its search
    stages go to ``progress`` (minutes each at a million rows).
    """
    result = report.candidates[name]
    if result.fidelity is None and result.privacy is None:
        return None
    chosen = thresholds or Thresholds()
    if report.sampling is not None:
        if review is None:
            raise ConfigError(
                "review must be given to audit a review estimated on samples (every synthetic "
                "row is judged against every training row); got review=None"
            )
        if chosen.mode == "paper":
            raise ConfigError(
                "thresholds.mode 'paper' needs the embedding's authenticity flag of every row, "
                "which a review estimated on samples does not compute; choose 'quantile' or "
                "'strict', or review every row (sample_rows=None, the CLI's --exact)"
            )
        rows = every_row_evidence(review, report, name, progress=progress)
        audit = audit_table(rows, rows, chosen, copies=rows.copies)
        audit.attrs["search"] = list(rows.search)
        reference = holdout_audit(rows, rows, chosen, copies=rows.copies)
        return CandidateAudit(audit, reference, chosen)
    copies = copy_evidence_for(report, name)
    glucose = result.glucose
    traces = trace_rule_columns(glucose) if glucose is not None else None
    held = trace_rule_columns(glucose, holdout=True) if glucose is not None else None
    audit = audit_table(result.fidelity, result.privacy, chosen, copies=copies, traces=traces)
    reference = holdout_audit(result.fidelity, result.privacy, chosen, copies=copies, traces=held)
    return CandidateAudit(audit, reference, chosen)


def _removed_of_statistics(report: Report, name: str, curation: CurationResult) -> tuple[int, int]:
    """Rows removed of the rows the candidate's statistics were computed on, and those rows:
    the whole file, or on a review estimated on samples the candidate's sample (whose kept rows
    are what the curated set is evaluated on: ``curation._kept_of_sample``)."""
    if report.sampling is None:
        return len(curation.removed_rows), curation.n_input
    positions = report.sampling.table(name).positions
    return int(np.isin(positions, curation.removed_rows).sum()), len(positions)


def _not_evaluated(
    report: Report, curation: CurationResult, policy: Policy, bounds: Sequence[CurationBound]
) -> CuratedCandidate:
    """The curated version of a candidate that curation provably cannot fix: cut, not evaluated.

    Its content says for every section why it was not computed; its verdicts fail each bounded
    rule on its least value after curation, so the decision is the full computation's
    (*do not release*) and says why.
    """
    why = "; ".join(b.reason for b in bounds)
    content: dict[str, object] = {
        "errors": {section: f"not evaluated after curation: {why}" for section in report.sections}
    }
    judged = judge_audited(policy, content, copies=None, kind=report.kind)
    return CuratedCandidate(
        curation, None, content, None, None, bounded_verdicts(judged, bounds), tuple(bounds)
    )


def _partly_evaluated(
    after: Report,
    name: str,
    curation: CurationResult,
    policy: Policy,
    failing: Sequence[str],
    skipped: tuple[str, ...],
) -> CuratedCandidate:
    """The curated version whose first sections already fail ``failing``: the ``skipped``
    sections could not change its verdict (fail) nor so the decision, and are not computed.

    Its content says why for each; without the privacy section it has neither its own copy
    audit nor a re-attack (the audit rules are left out, as for any set judged without them).
    """
    why = (
        f"not evaluated after curation: the curated set already fails {', '.join(failing)}, "
        "which no other section changes"
    )
    # the report says it too, so every reader of the curated result (the Audit page) sees why
    result = after.candidates[name]
    result = replace(result, errors={**result.errors, **dict.fromkeys(skipped, why)})
    after = replace(after, candidates={**after.candidates, name: result})
    content = result.to_dict()
    verdicts = judge_audited(policy, content, copies=None, kind=after.kind)
    return CuratedCandidate(curation, after, content, None, None, verdicts, skipped=skipped)


def _curate(
    review: Review,
    report: Report,
    name: str,
    audit: CandidateAudit,
    policy: Policy,
    *,
    submitted: Verdicts,
    waived: Collection[str] | None,
    device: str,
    progress: Progress | None,
) -> CuratedCandidate:
    curation = curate(review.synthetic[name], audit.audit)
    if not len(curation.kept_rows):
        content: dict[str, object] = {
            "errors": {"curation": "every row was removed; nothing to measure"}
        }
        verdicts = judge_audited(policy, content, copies=None, kind=report.kind)
        return CuratedCandidate(curation, None, content, None, None, verdicts)
    # a rule that removing these rows provably leaves failing decides without a re-evaluation
    # (only where the caller knows which rules a waiver may leave out of the decision)
    n_removed, n_rows = _removed_of_statistics(report, name, curation)
    bounds = (
        curation_bounds(submitted, n_removed=n_removed, n_rows=n_rows, waived=waived)
        if waived is not None
        else ()
    )
    if bounds:
        return _not_evaluated(report, curation, policy, bounds)

    def evaluated(sections: Sequence[str], lo: float, hi: float) -> Report:
        return evaluate_curated(
            review,
            {name: curation},
            context=report.context,
            sections=sections,
            options=report.options,
            seed=report.seed,
            device=device,
            progress=scaled_progress(progress, lo, hi),
            threads=report.threads,
            approximate=report.approximate,
        )

    # every section of the submitted review, so each rule the policy requires is judged again;
    # the privacy section (the costliest) last, and only while no rule fails without it
    first = tuple(s for s in report.sections if s != "privacy") if waived is not None else ()
    rest = tuple(s for s in report.sections if s not in first)
    # the privacy section is about three fifths of a table candidate's evaluation
    split = _PRIVACY_START if first and rest else 1.0
    after = evaluated(first or rest, 0.0, split)
    if first and rest:
        early = judge_audited(policy, after.candidates[name].to_dict(), copies=None,
                              kind=report.kind)  # fmt: skip
        # a computed required rule that fails fails the curated set whatever privacy gives; a
        # rule a waiver may leave out does not, nor does one only missing (policy.missing)
        failing = [r.rule for r in early.failed if r.value is not None and r.rule not in waived]
        if failing:
            return _partly_evaluated(after, name, curation, policy, failing, rest)
        after = after.merged(evaluated(rest, split, 1.0))
    content = after.candidates[name].to_dict()
    if report.sampling is not None:
        # every kept row's evidence is its submitted row's: the every-row search is not redone
        kept = kept_audit(audit.audit, curation.kept_rows, audit.thresholds)
        left = CandidateAudit(kept, audit.reference, audit.thresholds)
    else:
        left = audit_candidate(after, name, audit.thresholds)
    reattack = compare_attacks(report.candidates[name].to_dict(), content)
    verdicts = judge_audited(
        policy,
        content,
        copies=left.copies if left is not None else None,
        reattack=reattack,
        kind=report.kind,
    )
    return CuratedCandidate(curation, after, content, left, reattack, verdicts)


def _rejudged(curated: CuratedCandidate, policy: Policy, kind: str) -> CuratedCandidate:
    copies = curated.audit.copies if curated.audit is not None else None
    verdicts = judge_audited(
        policy, curated.content, copies=copies, reattack=curated.reattack, kind=kind
    )
    return replace(curated, verdicts=verdicts)


def release_candidate(
    review: Review,
    report: Report,
    name: str,
    *,
    policy: Policy,
    thresholds: Thresholds | None = None,
    curate_when: CurateWhen = "failing",
    reuse: CandidateRelease | None = None,
    device: str = "cpu",
    progress: Progress | None = None,
    waived: Collection[str] | None = None,
) -> CandidateRelease:
    """Audit, curate, re-evaluate, re-attack and judge one candidate.

    Parameters
    ----------
    review : Review
        The loaded review (the curated files are cut from its synthetic tables).
    report : Report
        ``review.evaluate(review, ...)`` with every section the policy reads: the curated set
        is re-evaluated with ``report.sections``, ``report.options``, ``report.seed`` and
        ``report.context``.
    name : str
        The candidate.
    policy : Policy
    thresholds : Thresholds, optional
        The audit's thresholds (default ``Thresholds()``, holdout-calibrated).
    curate_when : {"failing", "always", "never"}
        Curate only a candidate that fails the policy as submitted (what a decision needs: the
        dashboard's run), always (the CLI's ``--curate`` writes every curated file), or never.
    reuse : CandidateRelease, optional
        A previous release of this candidate from the same review and report: its audit and
        curated evaluation are kept when the thresholds are equal, so only the judgement is
        redone (e.g. after a policy change).
    device, progress
        As for ``review.evaluate`` (the curated re-evaluation); ``progress`` is also told the
        search stages of an every-row audit (:func:`audit_candidate`), on the first
        :data:`EVERY_ROW_AUDIT_SHARE` of its range (the curation then takes the rest).
    waived : collection of str, optional
        The rules a waiver may leave out of the decision (requested waivers included). Given
        it, the curated set is evaluated only where that can change the outcome: a candidate
        failing a rule that removing the audit's rows provably cannot bring under its line
        (``release.curation.curation_bounds``) is cut but not evaluated again, and a curated
        set whose other sections already fail a required rule is not re-attacked (privacy
        last); a rule in ``waived`` is never used so, since without it the other rules
        decide. Default None: the waivers are not known (any rule may be waived later), so
        every curated set is evaluated whole.

    Returns
    -------
    CandidateRelease
    """
    if name not in report.candidates:
        raise KeyError(f"name must be a candidate of the report {list(report.candidates)}; "
                       f"got {name!r} instead")  # fmt: skip
    chosen = thresholds or Thresholds()
    same = (
        reuse is not None
        and reuse.name == name
        and (reuse.audit is None or reuse.audit.thresholds == chosen)
    )
    # the progress of an every-row audit (a review estimated on samples: as long as the
    # curated re-evaluation at a million rows) takes the first half, the curation the rest
    audit_share = 0.0
    if same and reuse is not None:
        audit = reuse.audit
    else:
        audit_share = EVERY_ROW_AUDIT_SHARE if report.sampling is not None else 0.0
        audit = audit_candidate(report, name, chosen, review=review,
                                progress=scaled_progress(progress, 0.0, audit_share))  # fmt: skip
    content = report.candidates[name].to_dict()
    verdicts = judge_audited(
        policy, content, copies=audit.copies if audit is not None else None, kind=report.kind
    )
    # a candidate holding real records beyond coincidence is curated too: they must not ship
    failing = verdicts.overall == "fail" or real_records_flagged(verdicts)
    wanted = curate_when == "always" or (curate_when == "failing" and failing)
    curated = None
    if wanted and audit is not None:
        # a curated set left (partly) unevaluated is not re-judged: under another policy or
        # other waivers what let it be skipped may not decide, and it must then be evaluated
        if (
            same
            and reuse is not None
            and reuse.curated is not None
            and not (reuse.curated.bounds or reuse.curated.skipped)
        ):
            curated = _rejudged(reuse.curated, policy, report.kind)
        else:
            curated = _curate(review, report, name, audit, policy, submitted=verdicts,
                              waived=waived, device=device,
                              progress=scaled_progress(progress, audit_share, 1.0))  # fmt: skip
    return CandidateRelease(name, content, audit, verdicts, curated)


@dataclass(frozen=True)
class Release:
    """A whole review's release: each candidate's :class:`CandidateRelease` and the files.

    Attributes
    ----------
    files : dict of str to bytes
        ``release.bundle.build_release`` output (report.json, report.html, per-candidate
        CSV / Parquet, manifest.json).
    candidates : dict of str to CandidateRelease
    policy : Policy
    controls : PlantedControls or None
    prior : tuple of PriorRelease
        Earlier releases from the same source (the register's ledger): a candidate that would
        ship past the policy's ``[ledger]`` caps is *do not release*.
    claimed_epsilon : float or None
        The review's claimed ε, composed with the earlier releases' for the ε cap.
    waivers : tuple of Waiver
        Requested exceptions; an approved one leaves its rule out of the decision.
    """

    files: dict[str, bytes]
    candidates: dict[str, CandidateRelease]
    policy: Policy
    controls: PlantedControls | None = None
    prior: tuple[PriorRelease, ...] = ()
    claimed_epsilon: float | None = None
    waivers: tuple[Waiver, ...] = ()

    @property
    def decisions(self) -> dict[str, Decision]:
        """One decision per candidate, as the CLI prints it and ``report.json`` files it."""
        decisions = {n: c.decision for n, c in self.candidates.items()}
        if self.waivers:
            decisions = decide_with_waivers(self.verdicts, self.after_verdicts, self.waivers)
        if self.policy.ledger == LedgerLimits():
            return decisions
        return cap_decisions(
            decisions, self.prior, self.policy.ledger, claimed_epsilon=self.claimed_epsilon
        )

    @property
    def verdicts(self) -> dict[str, Verdicts]:
        """The policy applied to each candidate as submitted."""
        return {n: c.verdicts for n, c in self.candidates.items()}

    @property
    def after_verdicts(self) -> dict[str, Verdicts]:
        """The policy applied to each curated version (curated candidates only)."""
        return {n: c.curated.verdicts for n, c in self.candidates.items() if c.curated}

    @property
    def audits(self) -> dict[str, pd.DataFrame]:
        """Each audited candidate's audit table."""
        return {n: c.audit.audit for n, c in self.candidates.items() if c.audit is not None}

    @property
    def curations(self) -> dict[str, CurationResult]:
        """Each curated candidate's kept and removed rows."""
        return {n: c.curated.curation for n, c in self.candidates.items() if c.curated}

    @property
    def reattacks(self) -> dict[str, Reattack]:
        """Each curated candidate's re-attack (a candidate with rows left)."""
        return {
            n: c.curated.reattack
            for n, c in self.candidates.items()
            if c.curated is not None and c.curated.reattack is not None
        }

    @property
    def failed(self) -> dict[str, list[object]]:
        """Candidate -> the rules it fails as submitted, for candidates that fail."""
        return {n: list(v.failed) for n, v in self.verdicts.items() if v.overall == "fail"}

    @property
    def exit_code(self) -> int:
        """``judgement.decision.exit_code`` of the decisions (README "Exit codes")."""
        return exit_code(self.decisions)


def release_files(
    report: Report,
    candidates: Mapping[str, CandidateRelease],
    *,
    policy: Policy,
    review: Review,
    controls: PlantedControls | None = None,
    signoff: Mapping[str, SignOff] | None = None,
    sources: Sequence[str | os.PathLike[str] | bytes] = (),
    params: Mapping[str, object] | None = None,
    context: ReleaseContext | None = None,
    prior: Sequence[PriorRelease] = (),
    waivers: Sequence[Waiver] = (),
    timestamp: datetime | None = None,
) -> dict[str, bytes]:
    """Every release file of ``candidates`` (``release.bundle.build_release``).

    A candidate of the report missing from ``candidates`` is an error: a record never files a
    review with a candidate left unjudged.
    """
    missing = [n for n in report.candidates if n not in candidates]
    if missing:
        raise ValueError(
            f"candidates must hold a release of every candidate of the report; missing {missing}"
        )
    return build_release(
        report.to_dict(),
        audits={n: c.audit.record() for n, c in candidates.items() if c.audit is not None},
        curations={n: c.curated.curation for n, c in candidates.items() if c.curated},
        verdicts={n: c.verdicts for n, c in candidates.items()},
        policy=policy,
        after={n: c.curated.content for n, c in candidates.items() if c.curated},
        after_verdicts={n: c.curated.verdicts for n, c in candidates.items() if c.curated},
        reattacks={
            n: c.curated.reattack
            for n, c in candidates.items()
            if c.curated is not None and c.curated.reattack is not None
        },
        controls=controls,
        signoff=signoff,
        schema=review.schema,
        sources=sources,
        params=params,
        context=context,
        prior=prior,
        waivers=waivers,
        timestamp=timestamp,
    )


def review_release(
    review: Review,
    report: Report,
    *,
    policy: Policy | None = None,
    thresholds: Thresholds | Mapping[str, Thresholds] | None = None,
    curate: bool = False,
    controls: bool = False,
    control_rows: int | None = None,
    signoff: Mapping[str, SignOff] | None = None,
    sources: Sequence[str | os.PathLike[str] | bytes] = (),
    params: Mapping[str, object] | None = None,
    device: str = "cpu",
    progress: Progress | None = None,
    context: ReleaseContext | None = None,
    prior: Sequence[PriorRelease] = (),
    waivers: Sequence[Waiver] = (),
    timestamp: datetime | None = None,
) -> Release:
    """:func:`release_candidate` for every candidate, then every release file.

    Parameters
    ----------
    review : Review
    report : Report
        From ``review.evaluate(review, ...)``.
    policy : Policy, optional
        Default: ``judgement.policy.load_policy()``.
    thresholds : Thresholds or mapping of candidate name to Thresholds, optional
        Default: ``Thresholds()`` (holdout-calibrated rules, 1 % quantile).
    curate : bool
        Curate every candidate, re-evaluate, re-attack and write its curated files (the CLI's
        ``--curate``; the decision *release after curation* needs it). Without it no candidate
        is curated, and one that fails as submitted is *do not release*.
    controls : bool
        Add the planted-leak control table (table reviews with a holdout of at least 20 rows).
    control_rows : int, optional
        Rows per control candidate (default ``min(n_holdout // 2, 1000)``).
    signoff : mapping of str to SignOff, optional
        The meeting's sign-off per candidate, filed in ``report.json`` and ``report.html``.
    sources : sequence of path or bytes, optional
        The candidates' input files: curated rows are copied from them byte for byte.
    context : ReleaseContext, optional
        To whom, why, under which access model and threat: filed in ``report.json``, and the
        policy's thresholds are those of its access model (``Policy.for_access``; without a
        context the strictest set, fail closed), unless ``policy`` already names one.
    prior : sequence of PriorRelease, optional
        Earlier releases from the same source (``release.register.ledger``), judged against
        the policy's ``[ledger]`` caps.
    waivers : sequence of Waiver, optional
        Requested exceptions (``release.waivers.waivers_for``): filed, and an approved one
        leaves its rule out of its candidate's decision.
    device : str, default="cpu"
        As for ``review.evaluate`` (the curated re-evaluations).
    progress : callable, optional
        ``progress(fraction, message)``: candidate i of n reports on ``[i / n, (i + 1) / n]``
        (its audit, then its curation), so the fraction only grows over the whole release.
    params, timestamp
        Manifest parameters and the record's time (default now).
    """
    policy = policy if policy is not None else load_policy()
    if policy.access is None:
        policy = policy.for_access(context.access if context is not None else None)
    candidates = {}
    names = list(report.candidates)
    for i, name in enumerate(names):
        chosen = thresholds.get(name) if isinstance(thresholds, Mapping) else thresholds
        candidates[name] = release_candidate(
            review,
            report,
            name,
            policy=policy,
            thresholds=chosen,
            curate_when="always" if curate else "never",
            device=device,
            # candidate by candidate an equal share, so the fraction only grows over the run
            progress=scaled_progress(progress, i / len(names), (i + 1) / len(names)),
            # a requested waiver may be approved: its rule must not stand in for the others
            waived={w.rule for w in waivers},
        )
    control_table = None
    if controls and review.kind == "table" and review.holdout is not None:
        control_table = planted_controls(
            review,
            report,
            n_rows=control_rows,
            policy=policy,
            thresholds=thresholds if isinstance(thresholds, Thresholds) else None,
        )
    files = release_files(
        report,
        candidates,
        policy=policy,
        review=review,
        controls=control_table,
        signoff=signoff,
        sources=sources,
        params=params,
        context=context,
        prior=prior,
        waivers=waivers,
        timestamp=timestamp,
    )
    claimed = report.options.claimed_epsilon if report.options is not None else None
    return Release(files, candidates, policy, control_table, tuple(prior), claimed, tuple(waivers))
