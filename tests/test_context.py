"""Release context (issue 37): checked at the boundary, filed and signed, and judged under its
access model's thresholds; a review without one is judged under the strictest (fail closed)."""

from __future__ import annotations

import json

import pytest
from test_policy import candidate

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.judgement.context import STRICTEST, load_context, parse_context
from synthreview.judgement.policy import apply_policy, load_policy, parse_policy
from synthreview.record.live import LiveReview
from synthreview.record.session import CONTEXT_KEY, ReviewSession
from synthreview.release.bundle import build_release
from synthreview.release.signing import (
    generate_keys,
    load_private_key,
    load_public_key,
    sign_files,
    verify_files,
)

CONTEXT = {
    "recipient": "Diabetes consortium <WP3>",
    "purpose": "forecasting methods",
    "access": "secure",
    "threat_model": "analysts inside the TRE; no outside linkage data",
}


def test_a_context_file_is_read_with_its_optional_fields(tmp_path):
    path = tmp_path / "context.toml"
    path.write_text(
        'recipient = "R"\npurpose = "P"\naccess = "public"\nthreat_model = "anyone"\n'
        'expires = 2027-06-30\nlegal_basis = "Art. 6(1)(e)"\nsource = "cgm-2025"\n'
    )
    context = load_context(path)
    assert (context.access, context.expires, context.source) == ("public", "2027-06-30", "cgm-2025")
    assert parse_context({**CONTEXT, "expires": "2027-01-02"}).expires == "2027-01-02"
    assert parse_context(CONTEXT).legal_basis is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({**CONTEXT, "access": "open"}, r"'access' must be one of .*got 'open'"),
        ({k: v for k, v in CONTEXT.items() if k != "threat_model"}, "must set threat_model"),
        ({**CONTEXT, "recipient": "  "}, "'recipient' must be a non-empty text"),
        ({**CONTEXT, "expires": "next year"}, r"'expires' must be a date .*got 'next year'"),
        ({**CONTEXT, "audience": "x"}, r"unknown fields \['audience'\]"),
    ],
)
def test_a_bad_context_names_the_field_the_expectation_and_what_it_got(values, message):
    with pytest.raises(ConfigError, match=message):
        parse_context(values)


def test_cli_refuses_a_bad_context_file_with_exit_2_before_computing(tmp_path, capsys):
    bad = tmp_path / "context.toml"
    bad.write_text('recipient = "R"\npurpose = "P"\naccess = "everyone"\nthreat_model = "T"\n')
    argv = ["review", "--real", "no.csv", "--synthetic", "no.csv", "--out", str(tmp_path / "o")]
    assert main([*argv, "--context", str(bad)]) == 2
    assert "field 'access' must be one of" in capsys.readouterr().err
    bad.write_bytes(b"access = [")
    assert main([*argv, "--context", str(bad)]) == 2
    assert "is not valid TOML" in capsys.readouterr().err


def test_public_and_secure_reviews_of_one_candidate_are_judged_under_their_own_thresholds():
    policy = load_policy()
    leaky = candidate(mia=0.63, tpr=0.04)  # AUC 0.63, TPR at 1 % FPR 4x chance
    public = apply_policy(policy.for_access("public"), leaky)
    secure = apply_policy(policy.for_access("secure"), leaky)
    assert public["mia_auc"].verdict == "warn" and secure["mia_auc"].verdict == "pass"
    assert public["mia_tpr_at_fpr_1pct"].verdict == "warn"
    assert secure["mia_tpr_at_fpr_1pct"].verdict == "pass"
    worse = candidate(mia=0.72)
    assert apply_policy(policy.for_access("public"), worse)["mia_auc"].verdict == "fail"
    assert apply_policy(policy.for_access("secure"), worse)["mia_auc"].verdict == "warn"
    # no context: the strictest set, and the record says why
    unknown = policy.for_access(None)
    assert unknown.access == STRICTEST == "public"
    assert "fail closed" in unknown.access_reason and "no release context" in unknown.access_reason
    assert apply_policy(unknown, leaky)["mia_auc"].verdict == "warn"
    assert unknown.to_dict()["access"] == "public"
    # only the thresholds move: a rule the file makes advisory stays advisory under secure
    relaxed = parse_policy("[rules.mia_auc]\nrequired = false\n").for_access("secure")
    assert not relaxed.rules["mia_auc"].required and relaxed.rules["mia_auc"].pass_at == 0.65


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[access.open.rules.mia_auc]\npass = 0.6\nfail = 0.7\n", "not an access model"),
        ("[access.secure.rules.nope]\npass = 0.6\nfail = 0.7\n", "not a rule of this policy"),
        ("[access.secure.rules.mia_auc]\nrequired = false\n", "only 'pass' and 'fail'"),
        ("[access.secure.rules.mia_auc]\npass = 0.8\nfail = 0.7\n", "must not be above"),
    ],
)
def test_bad_access_tables_are_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_policy(text)


def test_context_is_filed_signed_and_shown_right_after_the_decisions(tmp_path):
    context = parse_context({**CONTEXT, "expires": "2027-06-30", "source": "cgm-2025"})
    policy = load_policy().for_access(context.access)
    verdicts = {"a": apply_policy(policy, candidate())}
    files = build_release(
        {"candidates": {"a": candidate()}, "inputs": [], "kind": "table"},
        verdicts=verdicts,
        policy=policy,
        context=context,
        figures=[],
    )
    report = json.loads(files["report.json"])
    assert report["context"] == context.to_dict()
    assert report["policy"]["access"] == "secure"
    keys = generate_keys(tmp_path / "keys")
    signed = sign_files(files, load_private_key(keys.private.read_bytes()))
    verified = verify_files(signed, load_public_key(keys.public.read_bytes()))
    assert verified.ok
    assert verified.statement["predicate"]["context"] == context.to_dict()
    page = files["report.html"].decode()
    # the context section follows the decisions and comes before the sign-off, user text escaped
    assert page.index('id="decision"') < page.index('id="context"') < page.index('id="signoff"')
    assert "Diabetes consortium &lt;WP3&gt;" in page and "2027-06-30" in page
    assert "[access.secure]" in page
    # a changed context no longer verifies
    tampered = dict(signed)
    tampered["report.json"] = files["report.json"].replace(b"secure", b"public")
    assert not verify_files(tampered, load_public_key(keys.public.read_bytes())).ok


def test_a_record_without_context_says_so_and_names_the_strictest_thresholds():
    policy = load_policy().for_access(None)
    files = build_release(
        {"candidates": {"a": candidate()}, "inputs": [], "kind": "table"},
        verdicts={"a": apply_policy(policy, candidate())},
        policy=policy,
        figures=[],
    )
    assert json.loads(files["report.json"])["context"] is None
    page = files["report.html"].decode()
    assert "No release context was given" in page and "fail closed" in page


def test_data_page_form_keeps_a_checked_context_and_the_overview_shows_it():
    from streamlit.testing.v1 import AppTest
    from test_page_data import APP

    at = AppTest.from_file(APP, default_timeout=180).run()  # the bundled demo loads
    assert CONTEXT_KEY not in at.session_state
    at.text_input(key="context_recipient").input("Consortium *WP3*")
    at.text_input(key="context_purpose").input("methods")
    at.selectbox(key="context_access").select("secure")
    at.text_area(key="context_threat_model").input("TRE analysts")
    at.text_input(key="context_expires").input("someday")
    at.button(key="context_keep").click().run()
    assert not at.exception, at.exception
    assert any("field 'expires' must be a date" in e.value.replace("\\", "") for e in at.error)
    assert CONTEXT_KEY not in at.session_state  # nothing kept from a bad form
    at.text_input(key="context_expires").input("2027-06-30")
    at.button(key="context_keep").click().run()
    context = at.session_state[CONTEXT_KEY]
    assert (context.access, context.expires, context.recipient) == (
        "secure",
        "2027-06-30",
        "Consortium *WP3*",
    )


def test_overview_names_the_context_or_says_the_strictest_thresholds_judged():
    from unittest.mock import patch

    from test_page_audit import fake_report, open_page, small_review

    review = small_review()
    report = fake_report(review)
    with (
        patch.object(ReviewSession, "stored_report", return_value=(report, [])),
        patch.object(ReviewSession, "stale_sections", return_value=[]),
        patch.object(ReviewSession, "plan", return_value=[]),
        patch.object(LiveReview, "candidate_report", return_value=report),
    ):
        at = open_page(review, report, "pages/overview.py").run()
        assert not at.exception, at.exception
        assert any("No release context" in c.value for c in at.caption)
        at.session_state[CONTEXT_KEY] = parse_context(CONTEXT)
        at.run()
        assert not at.exception, at.exception
        (line,) = (t.value for t in at.text if t.value.startswith("Release context"))
        assert line.startswith("Release context: secure access for Diabetes consortium <WP3>")


def test_a_reviewers_own_thresholds_are_never_replaced_by_the_shipped_access_tables():
    mine = parse_policy("[rules.mia_auc]\npass = 0.55\nfail = 0.58\n")
    for access in (None, "public", "secure"):
        rule = mine.for_access(access).rules["mia_auc"]
        assert (rule.pass_at, rule.fail_at) == (0.55, 0.58), access
    # rules the file leaves alone keep the shipped access thresholds
    assert mine.for_access("secure").rules["mia_tpr_at_fpr_1pct"].pass_at == 5.0
    # and a file's own access table applies on top of its own base thresholds
    both = parse_policy(
        "[rules.mia_auc]\npass = 0.55\nfail = 0.58\n"
        "[access.secure.rules.mia_auc]\npass = 0.57\nfail = 0.62\n"
    )
    assert both.for_access("secure").rules["mia_auc"].fail_at == 0.62
    assert both.for_access("public").rules["mia_auc"].fail_at == 0.58
