"""The signed record and the decision register (issue 24) in Chromium at 1280x720.

A reviewer uploads small CSVs (300 training rows, 200 holdout rows, one candidate ``gen`` of
fresh rows), runs the review, curates and confirms on the Audit page, signs off, loads a signing
key into the session, records the decisions in a register and downloads the ZIP, which verifies
offline with the public key. Then ``gen`` comes back changed (half of it training rows) under the
same name: the second review is recorded too, and the History page shows both records and the
rule verdicts that changed between them; its verify panel accepts the first ZIP.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.release.register import changes_frame, history
from synthreview.release.signing import ENVELOPE_NAME, generate_keys, load_public_key, verify_files
from tests.conftest import ARTIFACTS
from tests.e2e_utils import (
    click_keyed,
    download_keyed,
    open_page,
    start_review_run,
    wait_for_app_run,
)
from tests.record_screen import curate_and_confirm

pytestmark = pytest.mark.e2e
LONG = 300_000  # ms
REVIEW_MS = 900_000  # a review of 300 rows on 2 shared cores, with its release step
REVIEWER = "Dr. A. Reviewer"


def _rows(n: int, rng: np.random.Generator) -> pd.DataFrame:
    age = rng.normal(45, 12, n).round(0)
    score = (0.3 * age + rng.normal(0, 5, n)).round(2)
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    return pd.DataFrame({
        "age": age,
        "income": np.exp(rng.normal(10, 0.4, n)).round(0),
        "score": score,
        "group": group,
        "label": (score + (group == "a") * 3 + rng.normal(0, 3, n) > 15).astype(int),
    })  # fmt: skip


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """real.csv, holdout.csv, first/gen.csv (fresh rows) and second/gen.csv (half copies)."""
    folder = tmp_path_factory.mktemp("tables")
    rng = np.random.default_rng(7)
    real, holdout, fresh = _rows(300, rng), _rows(200, rng), _rows(300, rng)
    frames = {
        "real": real,
        "holdout": holdout,
        "first": fresh,
        "second": pd.concat([fresh.iloc[:150], real.iloc[:150]]),  # 150 verbatim training rows
    }
    paths = {}
    for name, frame in frames.items():
        if name in ("first", "second"):
            (folder / name).mkdir()
            paths[name] = folder / name / "gen.csv"  # the same candidate name, changed
        else:
            paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def _upload(page, key: str, path: Path) -> None:
    page.locator(f".st-key-{key}").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        str(path)
    )
    wait_for_app_run(page)


def _type(page, key: str, text: str, *, enter: bool = True) -> None:
    field = page.locator(f".st-key-{key} input")
    field.fill(text)
    if enter:  # inside a form the value is sent with the form's submit button instead
        field.press("Enter")
        wait_for_app_run(page)


def _review(page, tables: dict[str, Path], candidate: Path) -> None:
    """Data page: upload the tables and ``candidate``; Run review until the decisions are up."""
    open_page(page, "Data")
    page.get_by_text("Upload tables (CSV, TSV, Parquet)").click()
    wait_for_app_run(page)
    _upload(page, "real_upload", tables["real"])
    _upload(page, "holdout_upload", tables["holdout"])
    _upload(page, "synthetic_upload", candidate)
    click_keyed(page, "load_files")
    expect(page.get_by_text("Review loaded: table, 1 synthetic candidate(s): gen")).to_be_visible()
    open_page(page, "Overview")
    start_review_run(page, REVIEW_MS)
    expect(page.locator(".sr-line").first).to_be_visible(timeout=REVIEW_MS)
    expect(page.locator(".sr-badge", has_text="OUT OF DATE")).to_have_count(0, timeout=REVIEW_MS)


def _choose(page, key: str, option: str) -> None:
    """Pick ``option`` in the keyed selectbox."""
    wait_for_app_run(page)  # a rerun replaces the widget: locate it once the page settled
    box = page.locator(f".st-key-{key}").get_by_role("combobox")
    expect(box).to_be_visible()
    # scrolled first: a click that has to scroll the page opens the list and the scroll closes it
    box.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_for_app_run(page)


def _file_the_record(page, *, private_key: Path | None, keyid: str, db: Path) -> str:
    """Audit page: pick gen, Curate -> Confirm, sign off, (load the key,) record; the decision."""
    open_page(page, "Audit & export")
    _choose(page, "audit_candidate", "gen")
    decision = curate_and_confirm(page, REVIEW_MS)
    label = decision.locator("strong").first.inner_text().strip()
    assert label in {style.label for style in DECISION_STYLE.values()}, label

    _type(page, "audit_signoff_reviewer_0", REVIEWER, enter=False)  # the sign-off of gen
    _choose(page, "audit_signoff_decision_0", label)
    page.get_by_role("button", name="Record sign-off").click()
    wait_for_app_run(page)
    expect(page.get_by_text(f"Signed off by {REVIEWER}")).to_be_visible()

    if private_key is not None:
        _upload(page, "audit_signing_key", private_key)
    expect(page.get_by_text(f"Signed with key {keyid}")).to_be_visible()
    expect(page.locator(".st-key-audit_download_envelope button")).to_be_visible()
    # the register is the server's (SYNTHREVIEW_REGISTER, tests/conftest.py): shown, not typed
    expect(page.locator(".st-key-audit_register").get_by_text(f"Register: {db}")).to_be_visible()
    click_keyed(page, "audit_register_record")
    expect(page.get_by_text(re.compile(r"Recorded 1 decisions \(signed with key"))).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    return label


def test_signed_record_register_and_history_of_a_changed_candidate(
    meeting, tables, tmp_path, server_register
):
    page = meeting
    keys = generate_keys(tmp_path / "keys")
    db = server_register

    _review(page, tables, tables["first"])
    _file_the_record(page, private_key=keys.private, keyid=keys.keyid, db=db)
    archive = download_keyed(page, "audit_download_zip", tmp_path)
    with zipfile.ZipFile(archive) as opened:
        files = {name: opened.read(name) for name in opened.namelist()}
    assert ENVELOPE_NAME in files and "report.json" in files
    verified = verify_files(files, load_public_key(keys.public.read_bytes()))
    assert verified.ok, verified.problems
    assert verified.statement["predicate"]["signoff"]["gen"]["reviewer"] == REVIEWER

    # the same candidate name, changed: half of it verbatim training rows; the key stays loaded
    _review(page, tables, tables["second"])
    _file_the_record(page, private_key=None, keyid=keys.keyid, db=db)

    records = history(str(db))
    assert [r.candidate for r in records] == ["gen", "gen"]
    assert records[1].previous == records[0].seq
    assert {r.keyid for r in records} == {keys.keyid}
    assert {r.reviewer for r in records} == {REVIEWER}
    assert records[0].review_id == verified.review_id  # the register holds the signed record
    changes = changes_frame(records)
    assert not changes.empty
    changed = dict(zip(changes["rule"], changes["after"], strict=True))
    assert changed.get("audit_copies") == "fail", changed

    open_page(page, "History")
    expect(page.get_by_text(f"Register: {db} (read only)")).to_be_visible()
    expect(page.get_by_text("2 decisions", exact=True)).to_be_visible()
    # the records as a static table (decision, meeting decision, sign-off, signature first),
    # the changed rules as a data grid
    expect(page.locator(".st-key-history_table").get_by_test_id("stTable")).to_have_count(1)
    expect(page.get_by_test_id("stDataFrame")).to_have_count(1)
    expect(page.get_by_text("No rule verdict changed")).to_have_count(0)
    pair = f"gen (#{records[0].seq} → #{records[1].seq}): "
    line = page.locator(".st-key-history_changed").get_by_text(pair)
    expect(line).to_be_visible()
    shown = line.inner_text()
    for rule, row in changes.set_index("rule").iterrows():
        assert f"{rule} {row['before']} → {row['after']}" in shown, shown
    line.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "history_changes.png"))

    # the verify panel: the first review's ZIP with the public key, then a changed ZIP
    _upload(page, "history_verify_zip", archive)
    _upload(page, "history_verify_key", keys.public)
    expect(page.get_by_text("Verified: signed with key")).to_be_visible()
    changed_zip = tmp_path / "changed" / "release.zip"
    changed_zip.parent.mkdir()
    files["report.json"] = files["report.json"].replace(b'"gen"', b'"gen2"', 1)
    with zipfile.ZipFile(changed_zip, "w") as out:
        for name, data in files.items():
            out.writestr(name, data)
    _upload(page, "history_verify_zip", changed_zip)  # a single-file uploader: replaced
    expect(page.get_by_text(re.compile(r"Not verified: \d+ problem"))).to_be_visible()
    expect(page.locator(".st-key-history_verify_result").get_by_text(
        re.compile("report.json: sha256 differs")
    )).to_be_visible()  # fmt: skip
    expect(page.get_by_test_id("stException")).to_have_count(0)
