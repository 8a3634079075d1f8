"""Issue 33's done-when in Chromium at 1280x720: a signed CLI review shown, countersigned, reopened.

The table demo's stored record signed and registered as ``synthreview review --sign --register``
does -> ``synthreview show`` -> the Overview
states every decision of ``report.json``; a copy with one changed byte, shown the same way,
says NOT VERIFIED; the meeting countersigns on the Audit page -> the server's register ->
History -> the evidence reopened in another session (the changed copy's) shows the countersigned
decisions;
``synthreview verify`` passes the chain and fails it after a change.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.record.store import register_record, write_record
from synthreview.record.trust import TRUST_ENV
from synthreview.release.register import history
from synthreview.release.signing import generate_keys, load_private_key
from tests.conftest import ROOT
from tests.e2e_utils import click_keyed, free_port, healthy, open_page, wait_for_app_run

pytestmark = pytest.mark.e2e
CANDIDATES = ("fresh_with_copies", "copula")
REVIEWERS = "Ann Lee: chair\nBo Chen: privacy officer"
REASON = "thirty training records copied verbatim"


def _cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synthreview", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def signed_review(tmp_path_factory, demo_record_folder):
    """The table demo's stored record (``demo_record_folder``: reviewed and curated as
    ``synthreview review --curate`` does) signed and registered as ``synthreview review --sign
    --register`` writes and registers it (``write_record`` with the key, then
    ``register_record``): the subject here is what follows the review, and a review of its
    own would recompute that record (``--sign --register`` itself: test_record).
    ``(root, env, candidates)``: the folder holding ``review`` and its changed copy, the CLI's
    environment, the record's candidates in review order."""
    record, _ = demo_record_folder
    root = tmp_path_factory.mktemp("show")
    tool, meeting = generate_keys(root / "tool"), generate_keys(root / "meeting")
    trust = root / "trust"
    trust.mkdir()
    shutil.copy(meeting.public, trust / "meeting.pub")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        TRUST_ENV: str(trust),
        "SYNTHREVIEW_REGISTER": str(root / "register.sqlite"),
    }
    key = load_private_key(tool.private.read_bytes())
    signed = write_record(record, root / "review", key=key)
    register_record(signed, env["SYNTHREVIEW_REGISTER"], key=key, location=root / "review")
    changed = root / "changed"
    shutil.copytree(root / "review", changed)
    data = bytearray((changed / "report.html").read_bytes())
    data[len(data) // 2] ^= 1  # one byte of the evidence
    (changed / "report.html").write_bytes(bytes(data))
    return root, env, signed.candidates


@pytest.fixture(scope="module")
def servers(signed_review):
    """``synthreview show`` on the review and on its changed copy, with the tool's key."""
    root, env, _ = signed_review
    started = {}
    for name in ("review", "changed"):
        port = free_port()
        log = open(root / f"{name}.log", "w")  # closed with the server
        key = str(root / "tool" / "synthreview.pub")
        command = [sys.executable, "-m", "synthreview", "show", str(root / name),
                   "--key", key, "--port", str(port)]  # fmt: skip
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        started[name] = (proc, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + 90
    for name, (proc, url, _) in started.items():
        while not healthy(url):
            assert proc.poll() is None, (root / f"{name}.log").read_text()
            assert time.monotonic() < deadline, (root / f"{name}.log").read_text()
            time.sleep(0.2)
    yield {name: url for name, (_, url, _) in started.items()}
    for proc, _, log in started.values():
        proc.terminate()  # show stops its server too
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _page(browser, url: str):
    context = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(url)
    page.get_by_test_id("stAppViewContainer").wait_for()
    wait_for_app_run(page)
    return context, page


def _choose(page, key: str, option: str) -> None:
    wait_for_app_run(page)
    box = page.locator(f".st-key-{key}").get_by_role("combobox")
    box.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_for_app_run(page)


def _type(page, key: str, text: str) -> None:
    field = page.locator(f".st-key-{key} textarea")
    field.fill(text)
    field.press("Control+Enter")  # a text area sends its value on Ctrl+Enter (or on blur)
    wait_for_app_run(page)


def _banner(page) -> str:
    banner = page.locator(".st-key-record_verification")
    expect(banner).to_be_visible()
    # user text reaches Markdown with word joiners (figures.text): read without them
    return " ".join(banner.inner_text().replace("\u2060", "").split())


def test_show_countersign_register_reopen_verify(browser, servers, signed_review, tmp_path):
    root, env, candidates = signed_review
    report = json.loads((root / "review" / "report.json").read_text())
    decisions = report["decisions"]
    assert set(CANDIDATES) <= set(decisions), sorted(decisions)

    # the Overview states every decision of report.json, without a click, verified
    context, page = _page(browser, servers["review"])
    for name, decision in decisions.items():
        line = page.locator(".sr-line").filter(
            has=page.locator(".sr-name", has_text=re.compile(f"^{re.escape(name)}$"))
        )
        expect(line).to_have_count(1)
        assert line.locator(".sr-badge").inner_text().strip() == (
            DECISION_STYLE[decision["outcome"]].label
        )
        assert line.locator(".sr-reason").inner_text().strip() == decision["reason"]
    assert "verified - signed by" in _banner(page)
    page.screenshot(path=str(tmp_path / "show_overview.png"))

    # one changed byte: NOT VERIFIED, naming the file, and no countersigning
    other, changed = _page(browser, servers["changed"])
    text = _banner(changed)
    assert "NOT VERIFIED" in text and "report.html" in text, text
    open_page(changed, "Audit & export")
    expect(changed.locator(".st-key-audit_countersign_refused")).to_be_visible()
    expect(changed.locator("[class*='st-key-audit_meeting_countersign_']")).to_have_count(0)
    other.close()

    # the meeting countersigns fresh_with_copies with its key
    name = CANDIDATES[0]
    slot = candidates.index(name)  # the Audit page keys a candidate's sign-off by its place
    tool = DECISION_STYLE[decisions[name]["outcome"]].label
    open_page(page, "Audit & export")
    _choose(page, "audit_candidate", name)
    page.locator(".st-key-audit_signing_key").get_by_test_id(
        "stFileUploaderDropzoneInput"
    ).set_input_files(str(root / "meeting" / "synthreview.key"))
    wait_for_app_run(page)
    _type(page, f"audit_meeting_reviewers_{slot}", REVIEWERS)
    _choose(page, f"audit_meeting_decision_{slot}", tool)
    _type(page, f"audit_meeting_reason_{slot}", REASON)
    click_keyed(page, f"audit_meeting_countersign_{slot}")
    expect(page.locator(".st-key-audit_countersign_done")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "show_countersigned.png"))
    assert (root / "review" / "countersign.1.intoto.jsonl").is_file()
    context.close()

    # the register holds the prepared record and the meeting's row, each with its folder
    rows = history(env["SYNTHREVIEW_REGISTER"])
    meeting_rows = [r for r in rows if r.signed_decision is not None]
    assert [(r.candidate, r.signed_reason) for r in meeting_rows] == [(name, REASON)]
    assert {r.location for r in rows} == {str((root / "review").resolve())}

    # a new session on the server that shows the changed copy: its History opens the meeting's
    # row from the register, and every page then shows that record, verified, countersigned
    context, page = _page(browser, servers["changed"])
    assert "NOT VERIFIED" in _banner(page)
    open_page(page, "History")
    _choose(page, "history_evidence_row", f"#{meeting_rows[0].seq} {name}: "
            f"{meeting_rows[0].outcome} ({meeting_rows[0].generated_at})")  # fmt: skip
    click_keyed(page, "history_open_evidence")
    expect(page.locator(".st-key-history_evidence_opened")).to_be_visible()
    for title in ("History", "Overview"):
        open_page(page, title)
        text = _banner(page)
        assert "verified - signed by" in text and "countersigned decisions" in text, text
        assert REASON in text and "Ann Lee (chair)" in text, text
    page.screenshot(path=str(tmp_path / "show_reopened.png"))
    context.close()

    # verify checks the chain (the meeting's key in the trust folder), and fails it after a change
    pub = str(root / "tool" / "synthreview.pub")
    checked = _cli("verify", "review", "--key", pub, env=env, cwd=root)
    assert checked.returncode == 0 and "1 countersignatures chained" in checked.stdout, checked
    countersigned = root / "review" / "countersign.1.intoto.jsonl"
    data = bytearray(countersigned.read_bytes())
    data[40] ^= 1
    countersigned.write_bytes(bytes(data))
    failed = _cli("verify", "review", "--key", pub, env=env, cwd=root)
    assert failed.returncode == 1 and "countersign.1.intoto.jsonl" in failed.stderr, failed
