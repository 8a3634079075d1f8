"""Exceptions with a second approver (issue 37): a requested waiver changes nothing; an approval
signed by a different key leaves its rule out of the decision, and the record shows who asked,
who approved, when and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_policy import candidate

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.judgement.waivers import Waiver, decide_with_waivers
from synthreview.record.live import LiveReview
from synthreview.record.session import SUMMARY_KEY, ReviewSession
from synthreview.release.bundle import build_release
from synthreview.release.register import append_records, history, history_frame, records_of_release
from synthreview.release.signing import generate_keys, key_id, load_private_key, load_public_key
from synthreview.release.waivers import approval_bytes, read_approval, waivers_for

DATA = Path(__file__).resolve().parent / "data"
LEAKY = "d" * 64  # the candidate file's sha256
REASON = "membership signal from duplicated public census rows; checked by hand"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keys")
    requester = generate_keys(folder / "requester")
    approver = generate_keys(folder / "approver")
    return {
        "requester": load_private_key(requester.private.read_bytes()),
        "approver": load_private_key(approver.private.read_bytes()),
        "paths": (requester, approver),
    }


def _ids(keys):
    return key_id(keys["requester"].public_key()), key_id(keys["approver"].public_key())


def _verdicts():
    policy = load_policy().for_access(None)
    return {"leaky": apply_policy(policy, candidate(mia=0.75))}  # mia_auc fails


def test_a_waiver_changes_the_decision_only_once_a_second_key_approves_it(keys):
    requester, approver = _ids(keys)
    verdicts = _verdicts()
    assert verdicts["leaky"]["mia_auc"].verdict == "fail"
    plain = decide_with_waivers(verdicts, None, ())["leaky"]
    assert plain.outcome == "do_not_release" and plain.rule == "mia_auc"
    asked = Waiver("mia_auc", REASON, requester, "2026-11-28T04:00:00+00:00", ("leaky",))
    assert asked.status == "requested"
    assert decide_with_waivers(verdicts, None, (asked,))["leaky"] == plain  # changes nothing
    self_approved = Waiver(**{**asked.__dict__, "approver": requester, "approved_at": "t"})
    assert not self_approved.approved
    assert decide_with_waivers(verdicts, None, (self_approved,))["leaky"] == plain
    granted = Waiver(
        **{**asked.__dict__, "approver": approver, "approved_at": "2026-11-28T05:00:00+00:00"}
    )
    decision = decide_with_waivers(verdicts, None, (granted,))["leaky"]
    assert decision.outcome == "release"
    assert f"mia_auc waived ({REASON}; requested by key {requester[:16]}" in decision.reason
    assert f"approved by key {approver[:16]}" in decision.reason
    # a waiver of another candidate or of another rule changes nothing here
    other = Waiver(**{**granted.__dict__, "candidates": ("other",)})
    assert decide_with_waivers(verdicts, None, (other,))["leaky"] == plain


def test_an_approval_verifies_only_with_the_approvers_key_and_binds_its_terms(keys):
    requester, approver = _ids(keys)
    data = approval_bytes(
        keys["approver"], rule="mia_auc", reason=REASON, requester=requester, candidate_sha256=LEAKY
    )
    approval = read_approval(data, keys["approver"].public_key(), where="approval.json")
    assert (approval.rule, approval.approver, approval.candidate_sha256) == (
        "mia_auc",
        approver,
        LEAKY,
    )
    with pytest.raises(ConfigError, match="no valid signature by the approver key"):
        read_approval(data, keys["requester"].public_key(), where="approval.json")
    forged = data.replace(b'"sig":"', b'"sig":"A')
    with pytest.raises(ConfigError, match=r"approval\.json"):
        read_approval(forged, keys["approver"].public_key(), where="approval.json")
    with pytest.raises(ConfigError, match="not the requester's"):
        approval_bytes(
            keys["requester"], rule="mia_auc", reason=REASON, requester=requester,
            candidate_sha256=LEAKY,
        )  # fmt: skip
    common = {"requester": requester, "requested_at": "t", "approvals": (approval,)}
    (granted,) = waivers_for([("mia_auc", REASON)], candidates={"leaky": LEAKY}, **common)
    assert granted.approved
    # another candidate file, another justification: requested only
    (other,) = waivers_for([("mia_auc", REASON)], candidates={"leaky": "e" * 64}, **common)
    (reworded,) = waivers_for([("mia_auc", "other words")], candidates={"leaky": LEAKY}, **common)
    assert not other.approved and not reworded.approved


def test_the_record_html_and_register_show_the_waiver(keys, tmp_path, capsys):
    requester, approver = _ids(keys)
    policy = load_policy().for_access(None)
    verdicts = _verdicts()
    approval = read_approval(
        approval_bytes(
            keys["approver"], rule="mia_auc", reason=REASON, requester=requester,
            candidate_sha256=LEAKY,
        ),
        keys["approver"].public_key(),
        where="approval",
    )  # fmt: skip
    content = {"candidates": {"leaky": candidate(mia=0.75)}, "inputs": [], "kind": "table"}

    def record(approvals):
        waivers = waivers_for(
            [("mia_auc", REASON)],
            requester=requester,
            requested_at="2026-11-28T04:00:00+00:00",
            candidates={"leaky": LEAKY},
            approvals=approvals,
        )
        return build_release(content, verdicts=verdicts, policy=policy, waivers=waivers, figures=[])

    requested = json.loads(record(())["report.json"])
    assert requested["decisions"]["leaky"]["outcome"] == "do_not_release"
    assert requested["waivers"][0]["status"] == "requested"
    files = record((approval,))
    report = json.loads(files["report.json"])
    assert report["decisions"]["leaky"]["outcome"] == "release"
    assert report["verdicts"]["leaky"]["rules"]["mia_auc"]["verdict"] == "fail"  # as measured
    (waiver,) = report["waivers"]
    assert (waiver["status"], waiver["approver"], waiver["requester"]) == (
        "approved",
        approver,
        requester,
    )
    page = files["report.html"].decode()
    assert 'id="waivers"' in page and "membership signal from duplicated" in page
    assert f"key {approver[:16]}" in page and "2026-11-28T04:00:00+00:00" in page
    db = str(tmp_path / "register.sqlite")
    append_records(db, records_of_release(files, key=keys["requester"]))
    (row,) = history_frame(history(db)).to_dict(orient="records")
    assert row["waivers"].startswith(f"mia_auc approved ({REASON}; requested by key")
    assert f"approved by key {approver[:16]}" in row["waivers"]
    assert main(["history", "--db", db]) == 0
    assert f"waivers: mia_auc approved ({REASON}; requested by key" in capsys.readouterr().out


def test_cli_approve_writes_an_approval_and_review_checks_waivers_before_computing(
    keys, tmp_path, capsys
):
    requester_files, approver_files = keys["paths"]
    requester = key_id(load_public_key(requester_files.public.read_bytes()))
    out = tmp_path / "approval.json"
    data = DATA / "adult_small.csv"
    argv = ["approve", "--key", str(approver_files.private), "--rule", "mia_auc"]
    argv += ["--reason", REASON, "--requested-by", requester, "--candidate", str(data)]
    assert main([*argv, "--out", str(out)]) == 0
    approval = read_approval(out.read_bytes(), keys["approver"].public_key(), where="out")
    assert approval.requester == requester and approval.rule == "mia_auc"
    assert main([*argv, "--out", str(out)]) == 2  # never overwritten
    capsys.readouterr()
    review = ["review", "--real", str(data), "--synthetic", str(data), "--out", str(tmp_path / "o")]
    cases = {
        ("--waive", "mia_auc", "--reason", "x"): "needs --sign",
        ("--waive", "mia_auc"): "needs one --reason each",
        ("--sign", str(requester_files.private), "--waive", "nope", "--reason", "x"): (
            "must name a rule of the policy"
        ),
        (
            "--sign", str(requester_files.private), "--waive", "mia_auc", "--reason", REASON,
            "--approval", str(out),
        ): "needs --approver-key",
        (
            "--sign", str(requester_files.private), "--waive", "mia_auc", "--reason", REASON,
            "--approval", str(out), "--approver-key", str(requester_files.public),
        ): "must be a second reviewer's key",
    }  # fmt: skip
    for extra, message in cases.items():
        assert main([*review, *extra]) == 2, extra
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # refused before anything was computed


@pytest.mark.slow
def test_audit_page_waiver_changes_the_screen_and_the_record_only_once_approved(keys):
    from unittest.mock import patch

    from test_page_audit import fake_report, open_page, small_review

    review = small_review()
    report = fake_report(review)
    after = fake_report(review, mia=0.5)
    requester, _ = _ids(keys)
    _, approver_files = keys["paths"]

    def summary(at):
        (only,) = at.session_state[SUMMARY_KEY].values()
        return only

    with (
        patch.object(ReviewSession, "stored_report", return_value=(report, [])),
        patch.object(ReviewSession, "stale_sections", return_value=[]),
        patch.object(ReviewSession, "plan", return_value=[]),
        patch.object(LiveReview, "candidate_report", return_value=report),
        patch("synthreview.release.pipeline.evaluate_curated", return_value=after),
    ):
        at = open_page(review, None).run()
        at.button(key="audit_curate").click().run()
        at.button(key="audit_confirm").click().run()
        before = summary(at)
        failing = sorted({r.rule for v in before.verdicts.values() for r in v.failed})
        assert failing and before.decisions["cand"].outcome == "do_not_release"
        at.selectbox(key="audit_waiver_rule").select(failing[0])
        at.text_area(key="audit_waiver_reason").input(REASON)
        at.button(key="FormSubmitter:audit_waiver_form-Request the waiver").click().run()
        assert any("load your signing key" in e.value for e in at.error)  # no requester yet
        at.session_state["_signing_key"] = keys["requester"]  # as the Downloads upload does
        for rule in failing:
            at.selectbox(key="audit_waiver_rule").select(rule)
            at.text_area(key="audit_waiver_reason").input(REASON)
            at.button(key="FormSubmitter:audit_waiver_form-Request the waiver").click().run()
        assert not at.exception, at.exception
        assert summary(at).decisions["cand"].outcome == "do_not_release"  # requested only
        assert any("not approved: changes nothing" in t.value for t in at.text)
        for rule in failing:
            approval = approval_bytes(
                keys["approver"], rule=rule, reason=REASON, requester=requester,
                candidate_sha256=review.synthetic["cand"].sha256,
            )  # fmt: skip
            at.file_uploader(key="audit_waiver_approval").upload("approval.json", approval, "")
            at.file_uploader(key="audit_waiver_approver").upload(
                "synthreview.pub", approver_files.public.read_bytes(), ""
            )
            at.run()
            at.button(key="audit_waiver_add").click().run()
        assert not at.exception, at.exception
        decision = summary(at).decisions["cand"]
        assert decision.outcome != "do_not_release" and "waived" in decision.reason
