"""A stored review record opened in the dashboard: the Overview states its decisions, no run."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.record.countersign import append_countersignature, countersign, meeting_signoff
from synthreview.record.session import DEMO_AUTOLOADED_KEY, REVIEW_KEY
from synthreview.record.store import OPEN_ENV, open_review, write_record
from synthreview.release.signing import generate_keys, load_private_key
from tests.page_helpers import opened_app

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def _decision_lines(at) -> str:
    bodies = [h.proto.body for h in at.get("html") if 'sr-decisions"' in h.proto.body]
    assert len(bodies) == 1
    return bodies[0]


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [e.value for e in at.error]
    parts += [s.value for s in at.success] + [i.value for i in at.info]
    # Markdown-escaped user text (markdown_text): backslashes and word joiners taken off
    return "\n".join(str(p) for p in parts).replace("\u2060", "").replace("\\", "")


def test_the_overview_states_the_record_decisions_without_a_run(demo_record_folder, monkeypatch):
    record, folder = demo_record_folder
    at = opened_app(monkeypatch, folder)
    lines = _decision_lines(at)
    for name, decision in record.decisions.items():
        assert html.escape(name) in lines
        assert html.escape(decision.reason) in lines
        assert DECISION_STYLE[decision.outcome].label in lines
    assert not at.session_state[REVIEW_KEY]  # nothing loaded, nothing computed
    assert "NOT VERIFIED" in _texts(at)  # the demo record is not signed
    # a page that needs the rows names the input files instead of recomputing
    at.switch_page("pages/fidelity.py").run()
    assert not at.exception
    needed = _texts(at)
    assert "needs the review's input files" in needed
    assert record.inputs[0]["name"] in needed


@pytest.fixture(scope="module")
def signed_folder(demo_record_folder, tmp_path_factory):
    record, _ = demo_record_folder
    root = tmp_path_factory.mktemp("shown")
    keys = generate_keys(root / "keys")
    write_record(record, root / "review", key=load_private_key(keys.private.read_bytes()))
    return root / "review", keys


def test_a_signed_record_says_who_signed_and_a_changed_copy_says_not_verified(
    signed_folder, monkeypatch, tmp_path
):
    folder, keys = signed_folder
    at = opened_app(monkeypatch, folder, keys.public)
    assert f"verified - signed by {keys.keyid}" in _texts(at)
    changed = tmp_path / "changed"
    shutil.copytree(folder, changed)
    data = bytearray((changed / "report.html").read_bytes())
    data[200] ^= 1
    (changed / "report.html").write_bytes(bytes(data))
    at = opened_app(monkeypatch, changed, keys.public)
    texts = _texts(at)
    assert "NOT VERIFIED" in texts and "report.html" in texts
    assert _decision_lines(at)  # still shown, under the red line


def test_a_folder_that_is_no_record_is_named_on_the_page(monkeypatch, tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "report.json").write_text('{"synthreview_version": "0.0.9"}')
    monkeypatch.setenv(OPEN_ENV, str(tmp_path / "old"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    assert "could not be opened" in _texts(at) and "record.json" in _texts(at)


def test_the_data_page_opens_a_review_folder_on_the_server(demo_record_folder, monkeypatch):
    record, folder = demo_record_folder
    monkeypatch.delenv(OPEN_ENV, raising=False)
    # the operator's reviews folder (SYNTHREVIEW_REVIEWS): the page offers its review folders
    monkeypatch.setenv("SYNTHREVIEW_REVIEWS", str(folder.parent))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[DEMO_AUTOLOADED_KEY] = True
    at.run()
    assert not [t for t in at.text_input if t.key == "open_record_folder"]  # no typed path
    assert folder.name in at.selectbox(key="open_record_folder").options
    at.selectbox(key="open_record_folder").set_value(folder.name).run()
    at.button(key="open_record").click().run()
    assert not at.exception, at.exception
    lines = _decision_lines(at)  # switched to the Overview
    assert all(html.escape(d.reason) in lines for d in record.decisions.values())


def test_a_countersigned_record_shows_the_meeting_decisions(signed_folder, monkeypatch, tmp_path):
    folder, keys = signed_folder
    copy = tmp_path / "countersigned"
    shutil.copytree(folder, copy)
    record = open_review(copy, key=keys.public)
    name, stated = next(iter(record.decisions.items()))
    signoff = meeting_signoff(
        record,
        name,
        decision="do_not_release",
        reviewers=[("Ann Lee", "chair")],
        reason="the meeting wants another generator",
    )
    envelope = countersign(record, [signoff], load_private_key(keys.private.read_bytes()))
    append_countersignature(record, envelope, copy)
    texts = _texts(opened_app(monkeypatch, copy, keys.public))
    assert f"verified - signed by {keys.keyid}" in texts
    assert "countersigned decisions" in texts
    assert f"**{name}**: do_not_release (the record: {stated.outcome})" in texts
    assert "Ann Lee (chair)" in texts
