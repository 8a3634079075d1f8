"""One number per claim on the glucose demo, read from the DOM in Chromium (issue 38).

The table demo's checks (``tests/test_browser_numbers.py``) on the glucose (CGM) demo's stored
review record (``demo_glucose_record_folder``: the first 40 day traces of each source, three
candidates, signed), opened as ``synthreview show`` opens it: the browser only renders what the
record holds (issue 33, item 8). At 1280x720 and 1920x1080:

- every rule value shown beside a verdict says what the rule judged: the Overview's key numbers
  and scorecard, the Privacy tiles and the Glucose page's release rules;
- the copies are counted one way: the Overview's sentence per candidate, the Privacy tile's
  "day traces flagged as copies", the Audit page's sentence and the record's report.html
  agree;
- no label, heading, tile or table cell of the Overview, Audit, History and Utility pages is
  clipped (``CLIPPED_JS``: content wider than its box);
- presentation mode shows every candidate's decision on the first screen.

Every problem is collected with its page and size; the test fails once, listing them all.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e_utils import download_keyed, open_page, settle_charts, wait_for_app_run
from tests.test_browser_numbers import (
    CLIPPED_JS,
    COPIES,
    DECISIONS_JS,
    LONG,
    RECORD_HTML_KEY,
    SIZES,
    TILES_JS,
    VERDICT_CELLS_JS,
    VERDICT_END,
)

pytestmark = pytest.mark.e2e
#: the glucose demo's candidates (``synthreview.demo.traces``)
CANDIDATES = ("motif_shuffle", "autoregressive", "noisy_copy")


def open_expanders(page, name: str) -> None:
    """Open every expander whose title holds ``name`` (what it hides is checked too)."""
    summary = page.locator("[data-testid=stExpander] summary").filter(has_text=name)
    for i in range(summary.count()):
        summary.nth(i).click()
    wait_for_app_run(page, LONG)


def unjudged(texts: list[str]) -> list[str]:
    """Texts that end in a verdict after a number without saying what the rule judged."""
    return [t for t in texts if VERDICT_END.search(t) and re.search(r"\d", t) and "judged" not in t]


def clipped(page, where: str) -> list[str]:
    return [f"{where}: clipped {c}" for c in page.evaluate(CLIPPED_JS)]


def test_glucose_numbers_are_judged_counted_once_and_readable(
    glucose_record_page, glucose_record_server, tmp_path
):
    page = glucose_record_page
    assert tuple(glucose_record_server.record.candidates) == CANDIDATES
    problems: list[str] = []
    overview_copies: list[tuple[str, ...]] = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        size = f"{width}x{height}"
        # the Overview: key numbers and scorecard with their judged values, copies once
        open_page(page, "Overview")
        settle_charts(page, LONG, start_ms=0)
        open_expanders(page, "Every rule, per candidate")
        cells = page.evaluate(VERDICT_CELLS_JS)
        beside = [c for c in cells if VERDICT_END.search(c)]
        if len(beside) < 3 * len(CANDIDATES):
            problems.append(f"Overview {size}: only {len(beside)} cells beside a verdict")
        problems += [f"Overview {size}: not judged: {c!r}" for c in unjudged(cells)]
        copies = COPIES.findall(page.locator("[data-testid=stMain]").inner_text())
        if len(copies) != len(CANDIDATES):
            problems.append(f"Overview {size}: copy counts for {len(copies)} candidates: {copies}")
        if overview_copies and copies != overview_copies:
            problems.append(f"Overview {size}: copies {copies} vs {overview_copies}")
        overview_copies = overview_copies or copies
        problems += clipped(page, f"Overview {size}")
        # the Glucose page's release rules: each verdict with the value its rule judged
        open_page(page, "Glucose")
        settle_charts(page, LONG, start_ms=0)
        lines = page.locator(".st-key-glucose_rules").inner_text().splitlines()
        if sum(bool(VERDICT_END.search(x)) for x in lines) < len(CANDIDATES):
            problems.append(f"Glucose {size}: release rules beside a verdict: {lines[:6]}")
        problems += [f"Glucose {size}: not judged: {x!r}" for x in unjudged(lines)]
        # the Privacy tiles: each verdict with its judged value; the copy tile's count
        open_page(page, "Privacy")
        settle_charts(page, LONG, start_ms=0)
        tiles = page.evaluate(TILES_JS)
        for tile in tiles:
            verdict = re.search(r"\b(PASS|WARN|FAIL)\b", tile["column"])
            if verdict and "judged" not in tile["column"]:
                problems.append(f"Privacy {size}: tile {tile['label']!r} without judged value")
        flagged = [t["value"] for t in tiles if t["label"] == "day traces flagged as copies"]
        if flagged != [c[4] for c in overview_copies]:
            problems.append(f"Privacy {size}: flagged {flagged} vs Overview {overview_copies}")
        # the Audit page: the selected (first) candidate's copies as the Overview counts them
        open_page(page, "Audit & export")
        settle_charts(page, LONG, start_ms=0)
        audit = COPIES.findall(page.locator(".st-key-audit_copy_counts").inner_text())
        if not overview_copies or audit != overview_copies[:1]:
            problems.append(f"Audit {size}: copies {audit} vs Overview {overview_copies[:1]}")
        open_expanders(page, "Copies, counted once")
        problems += clipped(page, f"Audit {size}")
        for title in ("History", "Utility"):
            open_page(page, title)
            settle_charts(page, LONG, start_ms=0)
            problems += clipped(page, f"{title} {size}")
        # presentation mode: every candidate's decision whole on the first screen
        open_page(page, "Overview")
        page.locator(".st-key-presentation_mode").get_by_text("Presentation mode").click()
        settle_charts(page, LONG)
        page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
        *shown, window = page.evaluate(DECISIONS_JS)
        if len(shown) != len(CANDIDATES):
            problems.append(f"presentation {size}: {len(shown)} decision lines")
        for line in shown:
            if line["top"] < 0 or line["bottom"] > window["window"] + 1:
                problems.append(
                    f"presentation {size}: a decision spans {line['top']:.0f}-"
                    f"{line['bottom']:.0f} px of {window['window']} px"
                )
        page.locator(".st-key-presentation_leave button").click()
        settle_charts(page, LONG)
    # the record's report.html (downloaded as stored): the judged values, and the copies
    # counted as the pages count them
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    open_page(page, "Audit & export")
    settle_charts(page, LONG, start_ms=0)
    downloaded = download_keyed(page, RECORD_HTML_KEY, tmp_path)
    assert downloaded.read_bytes() == (glucose_record_server.folder / "report.html").read_bytes()
    html = downloaded.read_text("utf-8")
    text = re.sub(r"<[^>]+>", "", html)
    filed = COPIES.findall(text)
    if filed != overview_copies:
        problems.append(f"report.html: copies {filed} vs Overview {overview_copies}")
    if "judged on" not in text:
        problems.append("report.html: no judged value")
    assert not problems, "\n".join(problems)
