"""Exceptions to a rule, granted only by a second approver.

Output checking in trusted research environments works by exception requests: a researcher asks
for an output to leave despite a rule, with a justification, and a second person (the output
checker) accepts or refuses it (ACRO; SACRO-ML). Here a reviewer requests a per-rule waiver with
its reason (``review --waive RULE --reason TEXT``); the record files it as *requested* and it
changes nothing. It changes a decision only with an approval signed by a different key
(:mod:`synthreview.release.waivers`): the waived rule is then left out of the candidate's
verdicts before the decision is taken, the verdict itself stays in the record as measured, and
the decision's reason names the waiver, its requester and its approver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from synthreview.judgement.decision import Decision, decide
from synthreview.judgement.policy import Verdicts
from synthreview.judgement.verdicts import SEVERITY
from synthreview.results import to_jsonable


@dataclass(frozen=True)
class Waiver:
    """One requested exception to one rule.

    Attributes
    ----------
    rule : str
        The policy rule (``[rules.NAME]``).
    reason : str
        The requester's justification.
    requester : str
        Key id of the requester (the review's signing key).
    requested_at : str
        ISO time of the request.
    candidates : tuple of str
        The candidates it is asked for.
    approver, approved_at : str or None
        Key id and time of the second approver's signed approval; None: requested only.
    """

    rule: str
    reason: str
    requester: str
    requested_at: str
    candidates: tuple[str, ...]
    approver: str | None = None
    approved_at: str | None = None

    @property
    def approved(self) -> bool:
        """Approved by a key other than the requester's."""
        return self.approver is not None and self.approver != self.requester

    @property
    def status(self) -> str:
        """``approved`` or ``requested`` (changes nothing)."""
        return "approved" if self.approved else "requested"

    def to_dict(self) -> dict[str, object]:
        """``report.json`` ``waivers`` entry."""
        return to_jsonable({**self.__dict__, "status": self.status})


def _without(verdicts: Verdicts, rules: set[str]) -> Verdicts:
    kept = tuple(r for r in verdicts.rules if r.rule not in rules)
    overall = max((r.verdict for r in kept), key=SEVERITY.__getitem__, default="n/a")
    return replace(verdicts, rules=kept, overall=overall)


def decide_with_waivers(
    verdicts: Mapping[str, Verdicts],
    curated: Mapping[str, Verdicts] | None,
    waivers: Sequence[Waiver],
) -> dict[str, Decision]:
    """One decision per candidate, each approved waiver's rule left out of its verdicts.

    A requested (unapproved) waiver changes nothing. Where an approved waiver changes the
    outcome, the reason says so and names the rule, the justification, requester and approver.
    """
    curated = curated or {}
    decisions = {}
    for name, judged in verdicts.items():
        plain = decide(name, judged, curated.get(name))
        granted = [w for w in waivers if w.approved and name in w.candidates]
        rules = {w.rule for w in granted}
        if not rules & {r.rule for r in judged.rules}:
            decisions[name] = plain
            continue
        after = curated.get(name)
        waived = decide(name, _without(judged, rules), _without(after, rules) if after else None)
        said = "; ".join(
            f"{w.rule} waived ({w.reason}; requested by key {w.requester[:16]}, approved by key "
            f"{(w.approver or '')[:16]} at {w.approved_at})"
            for w in granted
        )
        decisions[name] = replace(waived, reason=f"{waived.reason}; {said}")
    return decisions
