"""Presentation mode's first screen: every decision fits, named by its deciding rule when its
reason is long; the whole reason follows below (issue 38: presentation mode shows every
decision; a 422-character group-disclosure reason wrapped the last decision off 1280x720)."""

from __future__ import annotations

from synthreview.figures.explain import SHORT_REASON, short_reason
from synthreview.judgement.decision import Decision, rule_label

LONG = "in the most exposed group an attacker identifies 12 % of its training members " * 5


def _decision(reason: str, *, rule: str | None = "group_mia_tpr_at_fpr_1pct") -> Decision:
    return Decision(
        candidate="copula",
        outcome="do_not_release",
        reason=reason,
        rule=rule,
        verdict="fail",
        curated_verdict="fail",
    )


def test_a_short_reason_is_shown_whole():
    decision = _decision("copies of training rows: 30 of 300 rows flagged")
    assert short_reason(decision) == decision.reason


def test_a_long_reason_is_named_by_its_rule_and_verdicts_never_cut():
    decision = _decision(LONG)
    assert len(LONG) > SHORT_REASON
    short = short_reason(decision)
    assert len(short) <= SHORT_REASON
    assert rule_label("group_mia_tpr_at_fpr_1pct") in short
    assert "fail as submitted, fail after curation" in short
    assert "whole reason is below" in short
    assert not LONG.startswith(short[:20])  # a statement of its own, not a truncation


def test_a_long_reason_without_a_rule_points_below():
    assert short_reason(_decision(LONG, rule=None)) == "see the whole reason below"
