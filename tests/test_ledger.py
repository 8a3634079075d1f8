"""The ledger per source (issue 37): releases from one training source added up, and a review
past the policy's cap not released, its reason naming the earlier releases."""

from __future__ import annotations

import json

import pytest
from test_policy import candidate
from test_register import records_of, review_files

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.judgement.context import parse_context
from synthreview.judgement.ledger import PriorRelease, cap_decisions, composed_epsilon
from synthreview.judgement.policy import apply_policy, parse_policy
from synthreview.record.live import LiveReview
from synthreview.record.session import SUMMARY_KEY, ReviewSession
from synthreview.release.bundle import build_release
from synthreview.release.register import (
    append_records,
    ledger,
    prior_releases,
    records_from_statement,
)
from synthreview.release.signing import release_statement, statement_id

TRAINING = "a" * 64  # the real input's sha256 in test_register.review_files


def _release_records(number: int, *, epsilon: float | None, source: str | None = None):
    """The records of hand-made review ``number`` (one candidate, released) with a claimed ε
    and a release context."""
    files = review_files(number, candidates=(f"gen{number}",))
    report = json.loads(files["report.json"])
    report["options"]["claimed_epsilon"] = epsilon
    report["context"] = {
        "recipient": "consortium",
        "purpose": "methods",
        "access": "secure",
        "threat_model": "TRE analysts",
        "expires": None,
        "legal_basis": None,
        "source": source,
    }
    files["report.json"] = json.dumps(report, sort_keys=True).encode()
    statement = release_statement(files)
    return records_from_statement(statement, review_id=statement_id(statement))


def test_ledger_lists_and_sums_two_releases_of_one_source(tmp_path, capsys):
    db = str(tmp_path / "register.sqlite")
    assert ledger(db, sha256=TRAINING) == []  # no register yet: nothing released
    append_records(db, _release_records(1, epsilon=1.0, source="cgm-2025"))
    append_records(db, _release_records(2, epsilon=0.5, source="cgm-2025"))
    records = ledger(db, sha256=TRAINING)
    assert [(r.candidate, r.access, r.claimed_epsilon) for r in records] == [
        ("gen1", "secure", 1.0),
        ("gen2", "secure", 0.5),
    ]
    assert ledger(db, source="cgm-2025") == records  # by the context's source id too
    assert ledger(db, sha256="d" * 64) == []
    assert main(["ledger", "--db", db, "--source", TRAINING]) == 0
    out = capsys.readouterr().out
    assert "#1 gen1" in out and "#2 gen2" in out and "secure access" in out
    assert "2 released of 2 recorded; composed claimed ε 1.5 (basic composition" in out
    real = tmp_path / "train.csv"
    real.write_bytes(b"a,b\n1,2\n")
    assert main(["ledger", "--db", db, "--real", str(real)]) == 0
    assert "no reviews recorded from" in capsys.readouterr().out
    with pytest.raises(ConfigError, match="needs --real FILE or --source"):
        ledger(db)


def test_a_third_release_past_the_cap_is_not_released_and_names_the_earlier_ones(tmp_path):
    db = str(tmp_path / "register.sqlite")
    append_records(db, _release_records(1, epsilon=1.0))
    append_records(db, _release_records(2, epsilon=1.0))
    append_records(db, records_of(3, candidates=("refused",), flip={"mia_auc"}))  # not shipped
    prior = prior_releases(ledger(db, sha256=TRAINING))
    assert [p.shipped for p in prior] == [True, True, False]
    capped = parse_policy("[ledger]\nmax_releases = 2\n").for_access("secure")
    content = {"candidates": {"third": candidate()}, "inputs": [], "kind": "table"}

    def decided(policy, **options):
        files = build_release(
            {**content, "options": options},
            verdicts={"third": apply_policy(policy, candidate())},
            policy=policy,
            context=parse_context(
                {"recipient": "r", "purpose": "p", "access": "secure", "threat_model": "t"}
            ),
            prior=prior,
            figures=[],
        )
        return json.loads(files["report.json"])

    report = decided(capped)
    decision = report["decisions"]["third"]
    assert decision["outcome"] == "do_not_release" and decision["rule"] == "ledger"
    assert "release 3 from this source; the policy allows 2" in decision["reason"]
    assert "#1 gen1" in decision["reason"] and "#2 gen2" in decision["reason"]
    assert "#3" not in decision["reason"]  # a review not released is no earlier release
    assert report["ledger"]["released_before"] == 2
    # the same review under a policy without a cap is released
    assert decided(parse_policy("").for_access("secure"))["decisions"]["third"]["outcome"] == (
        "release"
    )
    # a cap on the composed claimed ε: 1 + 1 + 1 = 3 > 2.5; a review claiming no ε: unknown
    eps_cap = parse_policy("[ledger]\nmax_epsilon = 2.5\n").for_access("secure")
    over = decided(eps_cap, claimed_epsilon=1.0)["decisions"]["third"]
    assert over["outcome"] == "do_not_release"
    assert "composed claimed ε would be 3 (basic composition" in over["reason"]
    unknown = decided(eps_cap)["decisions"]["third"]
    assert "claims no ε, so the composed ε is unknown" in unknown["reason"]
    assert decided(eps_cap, claimed_epsilon=0.5)["decisions"]["third"]["outcome"] == "release"


def test_cap_counts_this_reviews_candidates_in_name_order():
    from synthreview.judgement.decision import decide

    policy = parse_policy("[ledger]\nmax_releases = 2\n")
    earlier = (PriorRelease(1, "old", "2026-11-01T00:00:00+00:00", "release", None, None),)
    decisions = {n: decide(n, apply_policy(policy, candidate())) for n in ("b", "a")}
    capped = cap_decisions(decisions, earlier, policy.ledger, claimed_epsilon=None)
    assert capped["a"].outcome == "release" and capped["b"].outcome == "do_not_release"
    assert "#1 old" in capped["b"].reason and "a (this review)" in capped["b"].reason
    assert composed_epsilon([1.0, 2.0]) == 3.0 and composed_epsilon([1.0, None]) is None


def test_an_unreadable_ledger_ships_nothing_under_a_cap():
    """A register that exists and cannot be read: the history is unknown, so a capping policy
    releases nothing (fail closed); without a cap the decisions stand."""
    from synthreview.judgement.decision import decide

    policy = parse_policy("[ledger]\nmax_releases = 5\n")
    decisions = {n: decide(n, apply_policy(policy, candidate())) for n in ("a", "b")}
    assert all(d.ships for d in decisions.values())
    unknown = (PriorRelease.unreadable("the register x refused the connection"),)
    capped = cap_decisions(decisions, unknown, policy.ledger, claimed_epsilon=None)
    assert {d.outcome for d in capped.values()} == {"do_not_release"}
    assert all("could not be read (the register x refused" in d.reason for d in capped.values())
    uncapped = parse_policy("")
    kept = cap_decisions(decisions, unknown, uncapped.ledger, claimed_epsilon=None)
    assert {d.outcome for d in kept.values()} == {"release"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[ledger]\nmax_releases = 0\n", "max_releases must be a positive integer"),
        ("[ledger]\nmax_epsilon = -1\n", "max_epsilon must be a positive number"),
        ("[ledger]\ncap = 1\n", "may set only max_releases and max_epsilon"),
    ],
)
def test_bad_ledger_tables_are_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_policy(text)


def test_the_dashboard_applies_the_cap_from_the_servers_register(tmp_path, monkeypatch):
    from unittest.mock import patch

    from test_page_audit import fake_report, open_page, small_review
    from test_release_ships import policy_text

    review = small_review()
    db = tmp_path / "register.sqlite"
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", f"sqlite:///{db}")
    for number in (1, 2):  # two earlier releases from the same training file
        files = review_files(number, candidates=(f"gen{number}",))
        report = json.loads(files["report.json"])
        report["inputs"][0]["sha256"] = review.real.sha256
        files["report.json"] = json.dumps(report, sort_keys=True).encode()
        statement = release_statement(files)
        append_records(
            str(db), records_from_statement(statement, review_id=statement_id(statement))
        )
    lenient = policy_text()  # every rule advisory: the candidates would ship
    report = fake_report(review)

    def decisions(policy):
        with (
            patch.object(ReviewSession, "stored_report", return_value=(report, [])),
            patch.object(ReviewSession, "stale_sections", return_value=[]),
            patch.object(ReviewSession, "plan", return_value=[]),
            patch.object(LiveReview, "candidate_report", return_value=report),
        ):
            at = open_page(review, report, "pages/overview.py", policy=policy).run()
            assert not at.exception, at.exception
            (summary,) = at.session_state[SUMMARY_KEY].values()
            return summary.decisions

    assert decisions(parse_policy(lenient))["cand"].ships  # without a cap it would ship
    capped = decisions(parse_policy(lenient + "[ledger]\nmax_releases = 2\n"))
    assert capped["cand"].outcome == "do_not_release" and capped["cand"].rule == "ledger"
    assert "#1 gen1" in capped["cand"].reason and "#2 gen2" in capped["cand"].reason
    assert capped["other"].outcome == "do_not_release"  # a fourth release is past the cap too
