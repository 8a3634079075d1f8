"""Real-browser tests: streamlit run + Playwright driving Debian's headless chromium.

One journey through the dashboard as a reviewer takes it: the demo opens, small CSVs are
uploaded, the review is run once, every evidence page draws its charts, a threshold is set, the
curation is confirmed and the curated CSV is downloaded; then the glucose demo is loaded and its
page drawn. A second test is the release meeting: the demo's stored review record is opened (as
``synthreview show`` opens it) and its Overview must show every decision in the first screen at
1280x720 and 1920x1080 without scrolling sideways (the README's screenshot is of the shipped
demo size: scripts/readme_screenshot.py).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import expect

from synthreview import demo
from synthreview.judgement.verdicts import DECISION_STYLE
from tests.conftest import ARTIFACTS, ROOT
from tests.e2e_utils import open_page, start_review_run, wait_for_app_run

pytestmark = pytest.mark.e2e
LONG = 300_000  # ms; first computations train torch models on 2 cores


@pytest.fixture
def app(page, streamlit_url):
    page.set_default_timeout(LONG)
    page.goto(streamlit_url)
    page.get_by_test_id("stAppViewContainer").wait_for()
    wait_for_app_run(page, LONG)
    return page


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, Path]:
    """A small Adult review written as CSV files, as a reviewer would upload them."""
    folder = tmp_path_factory.mktemp("upload")
    review = demo.tables(seed=1, n_train=400, n_holdout=400)
    tables = {
        "real": review.real,
        "holdout": review.holdout,
        "copula": review.synthetic["copula"],
        "noisy_copy": review.synthetic["noisy_copy"],
    }
    paths = {}
    for name, table in tables.items():
        paths[name] = folder / f"{name}.csv"
        table.raw.to_csv(paths[name], index=False)
    return paths


def _no_exception(page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def _shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def _chart(page, key: str):
    """The plotly chart with Streamlit key ``key``, once drawn."""
    chart = page.locator(f".st-key-{key}").get_by_test_id("stPlotlyChart")
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=LONG)
    return chart


def _click(page, key: str) -> None:
    """Click the keyed button once the rerun has settled (stale copies linger during reruns)."""
    button = page.locator(f".st-key-{key} button:visible")
    expect(button).to_have_count(1, timeout=LONG)
    button.click()
    wait_for_app_run(page, LONG)


def _upload(page, key: str, *paths: Path) -> None:
    page.locator(f".st-key-{key}").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        [str(p) for p in paths]
    )
    wait_for_app_run(page)


def test_reviewer_journey(app, small_files):
    page = app
    # 1. the dashboard opens on the bundled demo
    expect(page.get_by_text("Review loaded: table")).to_be_visible()
    expect(page.get_by_text("Schema", exact=True)).to_be_visible()
    _no_exception(page)
    _shot(page, "data_demo")

    # 2. upload the reviewer's own files
    page.get_by_text("Upload tables (CSV, TSV, Parquet)").click()
    wait_for_app_run(page)
    _upload(page, "real_upload", small_files["real"])
    _upload(page, "holdout_upload", small_files["holdout"])
    _upload(page, "synthetic_upload", small_files["copula"], small_files["noisy_copy"])
    _click(page, "load_files")
    expect(page.get_by_text("2 synthetic candidate(s): copula, noisy_copy")).to_be_visible()
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    _no_exception(page)

    # 3. run the review once; the evidence pages then draw their charts from the stored result
    start_review_run(page)
    open_page(page, "Overview")
    expect(page.locator(".sr-line")).to_have_count(2, timeout=LONG)
    _shot(page, "overview")
    open_page(page, "Fidelity")
    _chart(page, "fidelity_curves")
    _chart(page, "fidelity_pca")
    _shot(page, "fidelity")
    open_page(page, "Privacy")
    _chart(page, "privacy_roc_copula")  # the first candidate tab is the one shown
    _chart(page, "privacy_dcr")
    _shot(page, "privacy")
    open_page(page, "Utility")
    _chart(page, "utility_correlation")
    _shot(page, "utility")
    _no_exception(page)

    # 4. audit: pick the noisy copy, set a threshold, confirm, download the curated CSV
    open_page(page, "Audit & export")
    page.locator(".st-key-audit_candidate").get_by_role("combobox").click()
    page.get_by_role("option", name="noisy_copy").click()
    wait_for_app_run(page, LONG)
    # the holdout-calibrated rules are on by default: the authenticity-ratio rule is checked
    expect(page.locator(".st-key-audit_drop_unauthentic input")).to_be_checked()
    removed_text = page.get_by_text(re.compile(r"Removed rows \(\d+\)")).inner_text()
    n_removed = int(re.search(r"\((\d+)\)", removed_text).group(1))
    _click(page, "audit_curate")
    _click(page, "audit_confirm")
    wait_for_app_run(page, LONG)
    # the noisy copy is not released: its removed rows are evidence, no curated file ships
    download_button = page.locator(".st-key-audit_download_removed button")
    expect(download_button).to_be_visible(timeout=LONG)
    expect(page.locator(".st-key-audit_download_csv")).to_have_count(0)
    with page.expect_download() as download:
        download_button.click()
    removed = pd.read_csv(download.value.path(), dtype=str, keep_default_na=False)
    n_input = len(pd.read_csv(small_files["noisy_copy"], dtype=str))
    assert len(removed) == n_removed
    assert 0 < n_removed < n_input  # the noisy copy has rows worth removing, not all of them
    _shot(page, "audit")
    _no_exception(page)

    # 5. glucose traces: load the trace demo, see the heatmap and the Clarke grid
    open_page(page, "Data")
    page.get_by_text("Demo: glucose (CGM) day traces").click()
    wait_for_app_run(page)
    _click(page, "load_demo")
    expect(page.get_by_text("Review loaded: traces")).to_be_visible()
    # pages read the stored review: compute it once (loading a demo may already have queued
    # the run, which disables the button until it is done)
    start_review_run(page)
    open_page(page, "Glucose")
    _chart(page, "glucose_heatmaps")
    # the Clarke grids (one tab per candidate) are checked by the Glucose AppTest
    _shot(page, "glucose")
    _no_exception(page)


EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f]")
#: screenshots go to a temporary folder, so a test run never rewrites tracked files; set
#: SYNTHREVIEW_SCREENSHOTS=docs to refresh the README's images in docs/ on purpose
DOCS = ROOT / "docs" if os.environ.get("SYNTHREVIEW_SCREENSHOTS") == "docs" else None


def _decisions_in_first_screen(page, n_candidates: int) -> str:
    """Every decision line (badge and reason) lies inside the first screen, nothing scrolls
    sideways and no emoji is drawn; returns the decision text."""
    lines = page.locator(".sr-line")
    expect(lines).to_have_count(n_candidates, timeout=LONG)
    viewport = page.viewport_size
    for i in range(n_candidates):
        for part in (".sr-badge", ".sr-name", ".sr-reason"):
            element = lines.nth(i).locator(part)
            expect(element).to_be_visible()
            box = element.bounding_box()
            assert box is not None and box["y"] >= 0 and box["x"] >= 0, (i, part, box)
            assert box["y"] + box["height"] <= viewport["height"], (i, part, box, viewport)
            assert box["x"] + box["width"] <= viewport["width"], (i, part, box, viewport)
        # the reason is the text itself, not a cut-off fragment of it
        # (the reason runs inline in its line, so the line is the box that could hide a part)
        assert lines.nth(i).evaluate(
            "e => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight + 1"
        )
    widths = page.evaluate(
        "() => { const d = document.scrollingElement;"
        " const m = document.querySelector('[data-testid=stMain]');"
        " return [d.scrollWidth, d.clientWidth, m.scrollWidth, m.clientWidth]; }"
    )
    assert widths[0] <= widths[1] and widths[2] <= widths[3], widths  # no horizontal scroll
    text = page.locator(".sr-decisions").inner_text()
    assert re.search(r"RELEASE|DO NOT RELEASE|INCOMPLETE", text), text
    shown = page.locator("[data-testid=stAppViewContainer]").inner_text()
    assert not EMOJI.search(shown), EMOJI.findall(shown)
    return text


def _timed_switch(page, title: str, ready) -> float:
    started = time.perf_counter()
    open_page(page, title)
    expect(ready()).to_be_visible(timeout=LONG)
    return time.perf_counter() - started


def _to_top(page) -> None:
    page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")


def test_meeting_overview_at_1280_and_1920(table_record_page, table_record_server, tmp_path):
    """The table demo's stored record, opened as ``synthreview show`` opens it (signed, curated:
    its reasons carry the curation's words): every decision with its reason in the first
    screen at 1280x720 and 1920x1080, the signature line above them; screenshots go to a
    temporary folder (docs/ with SYNTHREVIEW_SCREENSHOTS=docs). The run itself is
    test_reviewer_journey's and test_browser_meeting's subject."""
    shots = DOCS or tmp_path
    page = table_record_page
    decisions = table_record_server.record.decisions
    n_candidates = len(decisions)
    open_page(page, "Overview")
    expect(page.locator(".sr-line")).to_have_count(n_candidates, timeout=LONG)
    expect(page.locator(".st-key-record_verification")).to_contain_text("verified - signed by")
    _no_exception(page)
    _to_top(page)
    _decisions_in_first_screen(page, n_candidates)
    # each line is the record's decision: its label and its reason, word for word
    for i in range(n_candidates):
        line = page.locator(".sr-line").nth(i)
        name = line.locator(".sr-name").inner_text().strip()
        badge = line.locator(".sr-badge").inner_text().strip()
        assert badge == DECISION_STYLE[decisions[name].outcome].label, (name, badge)
        assert line.locator(".sr-reason").inner_text().strip() == decisions[name].reason
        assert len(line.locator(".sr-reason").inner_text().split()) >= 4
    page.screenshot(path=str(shots / "overview_1280x720.png"))

    # page switches read the stored result: time them as a reviewer feels them
    switches = {
        "Fidelity": _timed_switch(
            page, "Fidelity", lambda: page.locator(".st-key-fidelity_curves .main-svg").first
        ),
        # keyed plotly charts carry a .st-key-* class; a keyed st.dataframe does not
        "Utility": _timed_switch(
            page, "Utility", lambda: page.locator(".st-key-utility_kmarginal .main-svg").first
        ),
        "Glossary": _timed_switch(
            page, "Glossary", lambda: page.get_by_role("heading", name="Glossary")
        ),
        "Overview": _timed_switch(page, "Overview", lambda: page.locator(".sr-line").first),
    }
    _no_exception(page)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "meeting_timings.json").write_text(
        json.dumps({"switch_seconds": switches}, indent=2)
    )
    # speed is measured, not asserted: a timed unit test fails on a busy shared machine, so the
    # figures go to the JSON above and benchmarks/bench_pages.py times the switches properly

    # presentation mode: no sidebar, larger type, decisions still first
    page.locator(".st-key-presentation_mode").get_by_text("Presentation mode").click()
    wait_for_app_run(page, LONG)
    expect(page.get_by_test_id("stSidebar")).to_be_hidden()
    _to_top(page)
    _decisions_in_first_screen(page, n_candidates)
    page.screenshot(path=str(ARTIFACTS / "overview_presentation_1280x720.png"))
    page.locator(".st-key-presentation_mode").get_by_text("Presentation mode").click()
    wait_for_app_run(page, LONG)

    page.set_viewport_size({"width": 1920, "height": 1080})
    wait_for_app_run(page, LONG)
    _to_top(page)
    _decisions_in_first_screen(page, n_candidates)
    page.screenshot(path=str(shots / "overview_1920x1080.png"))
