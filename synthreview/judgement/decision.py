"""One decision per candidate, with one plain-language reason: the product's answer.

:func:`decide` turns a candidate's :class:`~synthreview.judgement.policy.Verdicts` (and, when the
audit curated it, the verdicts of the curated version) into ``release``,
``release_after_curation``, ``do_not_release`` or ``incomplete``. The CLI's exit code, the
Overview page, the Audit page and the exported report all come from here, so they cannot
disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synthreview.judgement.policy import RuleVerdict, Verdicts
from synthreview.judgement.rules import SPECS
from synthreview.judgement.verdicts import Outcome
from synthreview.metrics.registry import get as metric_info
from synthreview.results import to_jsonable

#: CLI exit codes (README "Command line", ``synthreview review --help``)
EXIT_RELEASE = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 3
#: every candidate may be released, but at least one only as its curated files
EXIT_RELEASE_AFTER_CURATION = 4
#: the outcomes whose data may ship (their curated files are written); every other keeps its
#: audit evidence only
SHIPPING_OUTCOMES = frozenset({"release", "release_after_curation"})
#: how a curated version's rule that removing rows provably cannot fix begins its reason
#: (``release.curation.curation_bounds``); a decision then says it instead of "does not fix"
CANNOT_FIX = "curation cannot fix"


@dataclass(frozen=True)
class Decision:
    """What to do with one candidate, and why.

    Attributes
    ----------
    candidate : str
    outcome : {"release", "release_after_curation", "do_not_release", "incomplete"}
    reason : str
        One sentence a release meeting can read out.
    rule : str or None
        The rule that decided (the worst failing or first missing required rule).
    verdict : str
        The overall verdict of the candidate as submitted.
    curated_verdict : str or None
        The overall verdict of the curated version, when there is one.
    """

    candidate: str
    outcome: Outcome
    reason: str
    rule: str | None
    verdict: str
    curated_verdict: str | None = None

    @property
    def exit_code(self) -> int:
        """0 release, 1 do not release, 3 incomplete, 4 release after curation."""
        if self.outcome == "do_not_release":
            return EXIT_FAIL
        if self.outcome == "release_after_curation":
            return EXIT_RELEASE_AFTER_CURATION
        if self.outcome in ("incomplete", "out_of_date"):
            return EXIT_INCOMPLETE
        return EXIT_RELEASE

    @property
    def ships(self) -> bool:
        """Whether the candidate's data may ship: ``release`` or ``release_after_curation``.

        Only such a candidate's curated files (``NAME/curated.csv``, ``curated.parquet``) are
        written; a rejected or incomplete one keeps its audit evidence only.
        """
        return self.outcome in SHIPPING_OUTCOMES

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready decision."""
        return to_jsonable(self.__dict__)


def rule_label(rule: str) -> str:
    """The words a meeting reads for policy rule ``rule``: its registry metric's label.

    ``"wp29_inference"`` reads "attribute inference (WP29)"; a rule the policy does not know
    keeps its id. Decisions say rules in these words; ``report.json`` keeps the ids
    (``Decision.rule``, every verdict's ``rule``).
    """
    spec = SPECS.get(rule)
    return metric_info(spec.metric).label if spec is not None else rule


def _worst(rules: list[RuleVerdict]) -> RuleVerdict:
    # the failing rule furthest beyond its fail mark, relative to the warn band, decides
    def excess(r: RuleVerdict) -> float:
        band = abs(r.fail_at - r.pass_at) or 1.0
        value = r.value if r.value is not None else r.fail_at
        beyond = value - r.fail_at if r.direction == "lower" else r.fail_at - value
        return beyond / band

    return max(rules, key=excess)


def _first_sentence(verdicts: Verdicts) -> tuple[str, str | None]:
    if verdicts.failed:
        worst = _worst(verdicts.failed)
        others = len(verdicts.failed) - 1
        more = f" (and {others} more failing rule{'s' * (others > 1)})" if others else ""
        return f"{worst.reason}{more}", worst.rule
    if verdicts.incomplete:
        first = verdicts.incomplete[0]
        others = len(verdicts.incomplete) - 1
        more = f" (and {others} more required rule{'s' * (others > 1)} missing)" if others else ""
        return f"{rule_label(first.rule)}: {first.reason}{more}", first.rule
    checked = [r for r in verdicts.rules if r.required and r.verdict in ("pass", "warn")]
    if verdicts.warned:
        names = "; ".join(rule_label(r.rule) for r in verdicts.warned)
        return (
            f"every required rule is met ({len(checked)}); warnings to read: {names}",
            verdicts.warned[0].rule,
        )
    if not checked:
        return "no rule of the policy applies to this candidate", None
    return f"every required rule is met ({len(checked)}), no warnings", None


def real_records_flagged(verdicts: Verdicts) -> bool:
    """Whether the audit found real records beyond coincidence (rule ``real_records`` warns).

    A warning there means rows equal to a training or holdout record exceed what a fresh
    sample repeats by coincidence at the sample's own power (its one-sided 95 % bound beyond
    the reference): each is a named person's record that the audit itself flags, so it must
    never ship unremoved (issue 36 item 6), even when no rule fails.
    """
    return any(r.rule == "real_records" and r.verdict == "warn" for r in verdicts.rules)


def decide(name: str, verdicts: Verdicts, curated: Verdicts | None = None) -> Decision:
    """The decision for one candidate.

    Parameters
    ----------
    name : str
    verdicts : Verdicts
        The policy applied to the candidate as submitted.
    curated : Verdicts, optional
        The policy applied to its curated version (audit removed rows).

    Returns
    -------
    Decision
        ``do_not_release`` when a rule fails and curation does not fix it (or there was no
        curation); ``release_after_curation`` when the submitted candidate fails but its
        curated version passes every required rule, or when it fails none but holds real
        records beyond coincidence (:func:`real_records_flagged`) and its curated version
        passes; ``incomplete`` when no rule fails but a
        required rule could not be computed; ``release`` otherwise. A candidate judged "n/a"
        throughout (no rule applies) is ``incomplete``: nothing was shown to be safe.
    """
    reason, rule = _first_sentence(verdicts)
    after = curated.overall if curated is not None else None
    if verdicts.overall == "fail":
        if curated is not None and curated.overall in ("pass", "warn"):
            return Decision(
                name,
                "release_after_curation",
                f"as submitted: {reason}; the curated version meets every required rule",
                rule,
                verdicts.overall,
                after,
            )
        if curated is not None:
            proven = [r.reason for r in curated.failed if r.reason.startswith(CANNOT_FIX)]
            reason = f"{reason}; {proven[0] if proven else f'curation does not fix it ({after})'}"
        return Decision(name, "do_not_release", reason, rule, verdicts.overall, after)
    if verdicts.overall in ("incomplete", "n/a"):
        return Decision(name, "incomplete", reason, rule, verdicts.overall, after)
    if real_records_flagged(verdicts) and curated is not None:
        if curated.overall in ("pass", "warn"):
            return Decision(
                name,
                "release_after_curation",
                "as submitted it holds real records beyond what a fresh sample repeats by "
                "coincidence (real_records); the curated version removes them and meets every "
                "required rule",
                "real_records",
                verdicts.overall,
                after,
            )
        reason = f"{reason}; real records beyond coincidence and the curated version fails"
        return Decision(name, "do_not_release", reason, "real_records", verdicts.overall, after)
    return Decision(name, "release", reason, rule, verdicts.overall, after)


def out_of_date(name: str, changed: Sequence[str]) -> Decision:
    """The decision shown while the numbers are older than the options: none is taken.

    Parameters
    ----------
    name : str
    changed : sequence of str
        What changed since the run (option names, "inputs", "policy").
    """
    what = ", ".join(changed) or "the inputs"
    return Decision(
        name,
        "out_of_date",
        f"out of date — re-run: {what} changed after the review was computed",
        None,
        "incomplete",
    )


def decide_all(
    verdicts: Mapping[str, Verdicts], curated: Mapping[str, Verdicts] | None = None
) -> dict[str, Decision]:
    """:func:`decide` for every candidate."""
    curated = curated or {}
    return {name: decide(name, v, curated.get(name)) for name, v in verdicts.items()}


def exit_code(decisions: Mapping[str, Decision]) -> int:
    """The CLI's exit code for a review, the worst decision first.

    1 if a candidate may not be released, else 3 if one is incomplete (or there is none), else
    4 if a candidate may be released only as its curated files (the submitted file must not
    ship: a pipeline acting on the code ships ``NAME/curated.csv``), else 0.
    """
    codes = {d.exit_code for d in decisions.values()}
    if EXIT_FAIL in codes:
        return EXIT_FAIL
    if EXIT_INCOMPLETE in codes or not decisions:
        return EXIT_INCOMPLETE
    if EXIT_RELEASE_AFTER_CURATION in codes:
        return EXIT_RELEASE_AFTER_CURATION
    return EXIT_RELEASE
