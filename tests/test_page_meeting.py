"""The meeting countersigns an opened record on the Audit page; History opens the evidence again.

AppTests on the stored demo record (``demo_record_folder``), signed here: nothing is recomputed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import app_state
from synthreview.cli import main
from synthreview.record.opened_state import OPENED_KEY
from synthreview.record.store import (
    OPEN_ENV,
    OPEN_KEY_ENV,
    open_review,
    record_files,
    write_record,
)
from synthreview.record.trust import TRUST_ENV
from synthreview.release.bundle import zip_bytes
from synthreview.release.register import history
from synthreview.release.signing import generate_keys, load_private_key

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture(scope="module")
def signed_record(demo_record_folder, tmp_path_factory):
    """The demo record signed by the tool's key; the meeting's key beside it in a trust folder."""
    record, _ = demo_record_folder
    root = tmp_path_factory.mktemp("meeting")
    tool = generate_keys(root / "tool")
    meeting = generate_keys(root / "meeting")
    trust = root / "trust"
    trust.mkdir()
    shutil.copy(meeting.public, trust / "meeting.pub")
    folder = root / "signed"
    write_record(record, folder, key=load_private_key(tool.private.read_bytes()))
    return record, folder, tool, meeting, trust


def _audit(monkeypatch, folder, *, key, trust=None, register=None) -> AppTest:
    """The Audit page as ``synthreview show FOLDER --key KEY`` serves it."""
    monkeypatch.setenv(OPEN_ENV, str(folder))
    monkeypatch.setenv(OPEN_KEY_ENV, str(key))
    if trust is None:
        monkeypatch.delenv(TRUST_ENV, raising=False)
    else:
        monkeypatch.setenv(TRUST_ENV, str(trust))
    if register is not None:
        monkeypatch.setenv("SYNTHREVIEW_REGISTER", str(register))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/audit.py").run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [t.value for t in at.text]
    parts += [e.value for e in at.error] + [s.value for s in at.success]
    return "\n".join(str(p) for p in parts).replace("\u2060", "").replace("\\", "")


def _keys(at, kind: str) -> set[str]:
    return {w.key for w in getattr(at, kind) if w.key}


def test_switching_candidates_never_carries_a_decision_or_reviewer(signed_record, monkeypatch):
    record, folder, tool, _, _ = signed_record
    at = _audit(monkeypatch, folder, key=tool.public)
    first, second = record.candidates[:2]
    at.selectbox(key="audit_candidate").set_value(first).run()
    at.text_area(key="audit_meeting_reviewers_0").input("Ann Lee: chair")
    at.text_area(key="audit_meeting_reason_0").input("the meeting wants a DP generator")
    at.selectbox(key="audit_meeting_decision_0").set_value("do_not_release")
    at.run()
    assert at.selectbox(key="audit_meeting_decision_0").value == "do_not_release"

    at.selectbox(key="audit_candidate").set_value(second).run()
    assert not at.exception, at.exception
    # the second candidate's sign-off starts blank: no decision, no reviewer, no reason
    assert at.selectbox(key="audit_meeting_decision_1").value is None
    assert at.text_area(key="audit_meeting_reviewers_1").value == ""
    assert at.text_area(key="audit_meeting_reason_1").value == ""
    assert not {k for k in _keys(at, "text_area") | _keys(at, "selectbox") if k.endswith("_0")}
    # and back: the first candidate never shows what was chosen for the second
    at.selectbox(key="audit_meeting_decision_1").set_value("release")
    at.text_area(key="audit_meeting_reviewers_1").input("Bo Chen: privacy officer")
    at.run()
    at.selectbox(key="audit_candidate").set_value(first).run()
    assert at.selectbox(key="audit_meeting_decision_0").value != "release"
    assert "Bo Chen" not in (at.text_area(key="audit_meeting_reviewers_0").value or "")


def test_the_audit_page_renders_the_record_without_computing(signed_record, monkeypatch):
    record, folder, tool, _, _ = signed_record

    def refuse(*args, **kwargs):
        raise AssertionError("an opened record is never recomputed")

    # wherever the dashboard reaches them from (app_state binds the names it imports)
    for where in ("synthreview.review.evaluate", "synthreview.release.pipeline.release_candidate",
                  "synthreview.release.pipeline.audit_candidate"):  # fmt: skip
        monkeypatch.setattr(where, refuse)
    for name in ("evaluate", "release_candidate", "audit_candidate"):
        if hasattr(app_state, name):
            monkeypatch.setattr(app_state, name, refuse)
    at = _audit(monkeypatch, folder, key=tool.public)
    for name in record.candidates:
        at.selectbox(key="audit_candidate").set_value(name).run()
        assert not at.exception, at.exception
        text = _texts(at)
        decision = record.decisions[name]
        assert decision.reason in text
        audit = record.releases[name].audit
        if audit is not None:
            assert audit.counts.sentence() in text
            # controls that would change the numbers are shown, disabled
            assert at.button(key="audit_curate").disabled
    assert at.button(key="audit_run_controls").disabled
    # the record's own files, as stored: the ZIP opens again, verified
    keys = {d.key for d in at.get("download_button")}
    assert {"audit_record_download_zip", "audit_record_download_report.html"} <= keys, keys
    shown = at.session_state[OPENED_KEY]
    assert open_review(zip_bytes(record_files(shown)), key=tool.public).verified.ok
    assert record.controls is not None and len(at.dataframe) >= 1


def test_a_record_not_verified_cannot_be_countersigned(signed_record, tmp_path, monkeypatch):
    _, folder, tool, _, trust = signed_record
    copy = tmp_path / "changed"
    shutil.copytree(folder, copy)
    data = bytearray((copy / "report.html").read_bytes())
    data[100] ^= 1
    (copy / "report.html").write_bytes(bytes(data))
    at = _audit(monkeypatch, copy, key=tool.public, trust=trust, register=tmp_path / "r.sqlite")
    assert "NOT VERIFIED" in _texts(at)
    assert not [k for k in _keys(at, "selectbox") if k.startswith("audit_meeting_decision")]
    assert not (copy / "countersign.1.intoto.jsonl").exists()


def test_the_meeting_countersigns_registers_and_history_reopens(
    signed_record, tmp_path, monkeypatch
):
    record, folder, tool, meeting, trust = signed_record
    copy = tmp_path / "review"
    shutil.copytree(folder, copy)
    db = tmp_path / "register.sqlite"
    at = _audit(monkeypatch, copy, key=tool.public, trust=trust, register=db)
    name = record.candidates[0]
    at.selectbox(key="audit_candidate").set_value(name).run()
    # the form asks for the session's key first
    at.session_state["_signing_key"] = load_private_key(meeting.private.read_bytes())
    at.run()
    tool_outcome = record.decisions[name].outcome
    other = "release" if tool_outcome != "release" else "do_not_release"
    at.text_area(key="audit_meeting_reviewers_0").input("Ann Lee: chair\nBo Chen: privacy officer")
    at.selectbox(key="audit_meeting_decision_0").set_value(other)
    at.button(key="audit_meeting_countersign_0").click().run()
    assert not at.exception, at.exception
    # a decision that differs from the record's needs its reason: nothing written
    assert "required" in _texts(at)
    assert not (copy / "countersign.1.intoto.jsonl").exists()
    at.text_area(key="audit_meeting_reason_0").input("the meeting wants a DP generator")
    at.button(key="audit_meeting_countersign_0").click().run()
    assert not at.exception, at.exception
    assert (copy / "countersign.1.intoto.jsonl").is_file()
    rows = history(str(db))
    assert [(r.candidate, r.signed_decision) for r in rows] == [(name, other)]
    assert rows[0].location == str(copy.resolve())
    assert rows[0].reviewer == "Ann Lee (chair); Bo Chen (privacy officer)"
    assert "Countersigned" in _texts(at)
    # the fields are blank again: a second click countersigns nothing twice
    assert at.selectbox(key="audit_meeting_decision_0").value is None
    assert at.text_area(key="audit_meeting_reviewers_0").value == ""
    at.button(key="audit_meeting_countersign_0").click().run()
    assert "must be chosen" in _texts(at)
    assert not (copy / "countersign.2.intoto.jsonl").exists() and len(history(str(db))) == 1
    # the chain verifies, and fails after a change
    monkeypatch.setenv(TRUST_ENV, str(trust))
    assert main(["verify", str(copy), "--key", str(tool.public)]) == 0

    # History opens the register row's folder: the session shows the countersigned record
    at.session_state[OPENED_KEY] = None
    at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    at.selectbox(key="history_evidence_row").set_value(rows[0].seq)
    at.button(key="history_open_evidence").click().run()
    assert not at.exception, at.exception
    opened = at.session_state[OPENED_KEY]
    assert opened is not None and opened.verified.ok, opened.verified
    assert len(opened.countersignatures) == 1
    text = _texts(at)
    assert "The meeting's countersigned decisions" in text and "DP generator" in text

    # moved away: evidence not found at the folder the register states
    copy.rename(tmp_path / "moved")
    at.button(key="history_open_evidence").click().run()
    assert any(
        f"evidence not found at {copy.resolve()}" in e.value.replace("\\", "") for e in at.error
    )


def test_an_untrusted_meeting_key_writes_nothing(signed_record, tmp_path, monkeypatch):
    record, folder, tool, _, _ = signed_record
    copy = tmp_path / "review"
    shutil.copytree(folder, copy)
    stranger = generate_keys(tmp_path / "stranger")
    db = tmp_path / "register.sqlite"
    at = _audit(monkeypatch, copy, key=tool.public, register=db)
    at.session_state["_signing_key"] = load_private_key(stranger.private.read_bytes())
    at.run()
    at.text_area(key="audit_meeting_reviewers_0").input("Ann Lee: chair")
    at.selectbox(key="audit_meeting_decision_0").set_value(
        record.decisions[record.candidates[0]].outcome
    )
    at.button(key="audit_meeting_countersign_0").click().run()
    assert "not one this server trusts" in _texts(at)
    assert not (copy / "countersign.1.intoto.jsonl").exists() and not db.exists()
