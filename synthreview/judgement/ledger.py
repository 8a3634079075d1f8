"""The ledger per source: what was already released from the same training data, and a cap.

Each release from the same training data adds risk, and differential-privacy guarantees claimed
for separate releases compose (NIST SP 800-226 §2.3). The register (``synthreview ledger``)
lists every review recorded from one source (the training file's sha256, or the release
context's ``source`` id); a policy's ``[ledger]`` table may cap the number of releases and the
composed claimed ε. Composition here is **basic composition** (Dwork & Roth 2014, Thm 3.16: the
ε of k releases is at most the sum of their ε): an upper bound that advanced composition or a
privacy accountant can tighten, stated as such in every reason. A release that claims no ε
leaves the composed ε unknown, and a cap on ε then refuses (fail closed).

:func:`cap_decisions` turns a candidate that would ship past a cap into *do not release*, its
reason naming the earlier releases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from synthreview.judgement.decision import SHIPPING_OUTCOMES, Decision
from synthreview.judgement.policy import LedgerLimits

#: ``Decision.rule`` of a candidate refused by the ledger
LEDGER_RULE = "ledger"


@dataclass(frozen=True)
class PriorRelease:
    """One review recorded from the same source (a register record, in words a ledger needs)."""

    seq: int
    candidate: str
    recorded_at: str
    outcome: str
    access: str | None
    claimed_epsilon: float | None

    #: why the earlier releases are unknown (the register could not be read); such an entry
    #: stands for "the history is unknown", and a capping policy then refuses (fail closed)
    unknown: str | None = None

    @classmethod
    def unreadable(cls, reason: str) -> PriorRelease:
        """The ledger could not be read: every candidate a capping policy judges is refused."""
        return cls(seq=0, candidate="", recorded_at="", outcome="unknown", access=None,
                   claimed_epsilon=None, unknown=reason)  # fmt: skip

    @property
    def shipped(self) -> bool:
        """Whether its data were released (release or release after curation)."""
        return self.outcome in SHIPPING_OUTCOMES

    def describe(self) -> str:
        """``#3 ctgan 2026-11-25 (release, secure access, claimed ε 1)``."""
        eps = (
            "no ε claimed"
            if self.claimed_epsilon is None
            else f"claimed ε {self.claimed_epsilon:g}"
        )
        if self.unknown is not None:
            return f"unknown (the register could not be read: {self.unknown})"
        access = f"{self.access} access" if self.access else "no context"
        when = self.recorded_at[:10]
        return f"#{self.seq} {self.candidate} {when} ({self.outcome}, {access}, {eps})"


def composed_epsilon(epsilons: Sequence[float | None]) -> float | None:
    """Basic composition: the sum of the claimed ε; None when one release claims none."""
    if any(e is None for e in epsilons):
        return None
    return float(sum(e for e in epsilons if e is not None))


def cap_decisions(
    decisions: Mapping[str, Decision],
    prior: Sequence[PriorRelease],
    limits: LedgerLimits,
    *,
    claimed_epsilon: float | None,
) -> dict[str, Decision]:
    """``decisions`` with each candidate that would ship past ``limits`` made *do not release*.

    The candidates of this review count in name order, each after ``prior``'s releases (only
    those that shipped count), so two candidates where the cap allows one more: the first
    ships. A refused candidate's reason names the cap, the count or composed ε and every earlier
    release.
    """
    released = [p for p in prior if p.shipped]
    epsilons: list[float | None] = [p.claimed_epsilon for p in released]
    names: list[str] = [p.describe() for p in released]
    unknown = [p.unknown for p in prior if p.unknown is not None]
    capped: dict[str, Decision] = {}
    for name in sorted(decisions):
        decision = decisions[name]
        if not decision.ships:
            capped[name] = decision
            continue
        if unknown and (limits.max_releases is not None or limits.max_epsilon is not None):
            # the policy caps releases from this source and the history cannot be read: what
            # cannot be counted is not released (fail closed)
            capped[name] = replace(
                decision,
                outcome="do_not_release",
                rule=LEDGER_RULE,
                reason=(
                    "ledger: the policy caps releases from this source, and the earlier "
                    f"releases could not be read ({unknown[0]}); nothing ships until they can"
                ),
            )
            continue
        problems = []
        count = len(names) + 1
        if limits.max_releases is not None and count > limits.max_releases:
            problems.append(
                f"it would be release {count} from this source; the policy allows "
                f"{limits.max_releases}"
            )
        if limits.max_epsilon is not None:
            total = composed_epsilon([*epsilons, claimed_epsilon])
            if total is None:
                problems.append(
                    "a release from this source claims no ε, so the composed ε is unknown "
                    f"(the policy caps it at {limits.max_epsilon:g})"
                )
            elif total > limits.max_epsilon:
                problems.append(
                    f"the composed claimed ε would be {total:g} (basic composition: the sum), "
                    f"above the policy's cap {limits.max_epsilon:g}"
                )
        if problems:
            earlier = "; ".join(names) if names else "none"
            capped[name] = replace(
                decision,
                outcome="do_not_release",
                rule=LEDGER_RULE,
                reason=f"ledger: {'; '.join(problems)}. Earlier releases: {earlier}",
            )
            continue
        capped[name] = decision
        epsilons.append(claimed_epsilon)
        names.append(f"{name} (this review)")
    return capped
