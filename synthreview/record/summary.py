"""What the Overview, the sidebar, the Audit page and the record read: one summary per result.

:func:`summarize` judges the stored steps of a :class:`~synthreview.record.live.LiveReview`
(the report, each candidate's release, waivers and the ledger's caps) into a
:class:`ReviewSummary`, or says every decision is *out of date* when the numbers are older than
the options, the policy, the confirmations or the requested waivers (never a judgement on a
mix). :func:`record_summary` gives the same object for an opened
:class:`~synthreview.record.record.ReviewRecord`, whose decisions are those ``report.json``
states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from synthreview.errors import ConfigError
from synthreview.judgement.context import ReleaseContext, parse_context
from synthreview.judgement.decision import Decision, decide, out_of_date
from synthreview.judgement.ledger import PriorRelease, cap_decisions
from synthreview.judgement.policy import LedgerLimits, Policy, Verdicts, apply_policy
from synthreview.judgement.waivers import Waiver, decide_with_waivers
from synthreview.options import ReviewOptions
from synthreview.record.live import LiveReview, ReleaseTerms
from synthreview.record.record import ReviewRecord
from synthreview.release.pipeline import CandidateRelease
from synthreview.review import Report

__all__ = ["ReviewSummary", "record_summary", "stated_context", "summarize"]


@dataclass(frozen=True)
class ReviewSummary:
    """What the Overview, the sidebar, the Audit page and the record read: built once per result.

    Serialising the report (``to_dict``) and judging every candidate takes about a second on
    the demo; doing it on every page open made each switch slow. The dashboard stores the
    summary beside the results it was built from and rebuilds it only when a step, the options,
    the policy or a confirmation change.

    Attributes
    ----------
    report : Report
        The stored report (never recomputed).
    stale : tuple of str
        Sections shown from a previous run because an option changed.
    content : dict
        ``report.to_dict()["candidates"]``: what the policy judges and the figures read.
    releases : dict of str -> CandidateRelease
        Each candidate's release from the one pipeline (``release.pipeline.release_candidate``),
        under the thresholds the reviewer confirmed (default ones otherwise); only when
        ``current``.
    verdicts : dict of str -> Verdicts
        The policy applied to each candidate as submitted (audit rules included).
    curated : dict
        ``to_dict()`` of the curated versions (candidates that were curated).
    decisions : dict of str -> Decision
        One decision per candidate: the release's, or *out of date* when the numbers are older
        than the options, the policy or the confirmations (never a judgement on a mix).
    changed : tuple of str
        What made the decisions out of date (empty when ``current``).
    """

    report: Report
    stale: tuple[str, ...]
    content: dict[str, dict[str, Any]]
    releases: dict[str, CandidateRelease]
    verdicts: dict[str, Verdicts]
    curated: dict[str, dict[str, Any]]
    decisions: dict[str, Decision]
    changed: tuple[str, ...] = ()

    @property
    def current(self) -> bool:
        """Whether every decision rests on numbers computed for the present choices."""
        return not self.changed


def record_summary(record: ReviewRecord) -> ReviewSummary:
    """An opened record as the summary a live run builds: its report, releases and decisions
    (as ``report.json`` states them); nothing is judged again."""
    releases = dict(record.releases)
    return ReviewSummary(
        report=record.report,
        stale=(),
        content=record.report.to_dict()["candidates"],
        releases=releases,
        verdicts={n: r.verdicts for n, r in releases.items()},
        curated={n: dict(r.curated.content) for n, r in releases.items() if r.curated},
        decisions=record.decisions,
    )


def stated_context(record: ReviewRecord) -> ReleaseContext | None:
    """The release context ``report.json`` of ``record`` states (None: none, or unreadable)."""
    stated = record.stated.get("context")
    if not isinstance(stated, Mapping):
        return None
    try:
        values = {k: v for k, v in stated.items() if v is not None}
        return parse_context(values, where="the record's context")
    except ConfigError:
        return None


def judged_without_release(
    policy: Policy, name: str, content: Mapping[str, Any], error: str, kind: str
) -> tuple[Verdicts, Decision]:
    """A candidate whose release failed: its audit rules read as not computed, never a pass."""
    verdicts = apply_policy(policy, {**content, "audit": {}}, kind=kind)
    decision = decide(name, verdicts)
    if decision.outcome in ("incomplete", "release"):
        decision = replace(
            decision,
            outcome="incomplete",
            reason=f"the audit and curation could not be computed: {error}",
        )
    return verdicts, decision


def summarize(
    live: LiveReview,
    report: Report,
    *,
    stale: Sequence[str] = (),
    changed: Sequence[str] = (),
    seed: int,
    options: ReviewOptions,
    policy: Policy,
    terms: Mapping[str, ReleaseTerms],
    waivers: Sequence[Waiver] = (),
    prior: Sequence[PriorRelease] = (),
) -> ReviewSummary:
    """Judge ``report`` (``live``'s stored steps) and each candidate's stored release into one
    decision per candidate; never computes a metric.

    Parameters
    ----------
    live : LiveReview
    report : Report
        ``live.stored_report`` of every needed section.
    stale : sequence of str
        Sections of ``report`` shown from a previous run.
    changed : sequence of str
        The options that made them stale (``LiveReview.changed_options``); ``["inputs"]`` is
        assumed when sections are stale and none is named.
    seed : int
    options : ReviewOptions
    policy : Policy
    terms : mapping of str to ReleaseTerms
        Each candidate's release terms (its confirmed thresholds and curation, else the
        defaults; its requested waivers): a release stored under others is not the one to
        show.
    waivers : sequence of Waiver
        Approved waivers leave their rule out, as the record will.
    prior : sequence of PriorRelease
        Earlier releases of the same source, for the policy's ``[ledger]`` caps.
    """
    changed = list(changed)
    content = report.to_dict()["candidates"]
    found: dict[str, CandidateRelease] = {}
    verdicts: dict[str, Verdicts] = {}
    decisions: dict[str, Decision] = {}
    if stale and not changed:
        changed = ["inputs"]
    for name, candidate in content.items():
        step = None
        if not stale:
            default = ReleaseTerms(seed=seed, options=options, policy=policy)
            step = live.stored_release(name, terms.get(name, default))
        if step is None:
            # out of date: the rules are shown on the stored numbers, no decision is taken
            verdicts[name] = apply_policy(policy, candidate, kind=report.kind)
            if not changed:
                earlier = live.previous_release(name, seed=seed, options=options)
                changed = [
                    "policy, audit thresholds or requested waivers"
                    if earlier is not None
                    else "the audit (not run yet)"
                ]
            continue
        if step.value is None:
            verdicts[name], decisions[name] = judged_without_release(
                policy, name, candidate, step.error or "unknown error", report.kind
            )
            continue
        found[name] = step.value
        verdicts[name] = step.value.verdicts
        decisions[name] = step.value.decision
        if waivers:  # an approved waiver leaves its rule out, as the record will
            curated = step.value.curated
            decisions[name] = decide_with_waivers(
                {name: step.value.verdicts},
                {name: curated.verdicts} if curated is not None else None,
                waivers,
            )[name]
    if changed:
        decisions = {n: out_of_date(n, changed) for n in content}
    elif policy.ledger != LedgerLimits():  # the policy caps releases per source
        decisions.update(
            cap_decisions(
                {n: decisions[n] for n in found},
                prior,
                policy.ledger,
                claimed_epsilon=options.claimed_epsilon,
            )
        )
    return ReviewSummary(
        report=report,
        stale=tuple(stale),
        content=content,
        releases=found,
        verdicts=verdicts,
        curated={n: dict(r.curated.content) for n, r in found.items() if r.curated},
        decisions=decisions,
        changed=tuple(changed),
    )
