"""One number per claim, read from the DOM in Chromium at 1280x720 and 1920x1080 (issue 38).

The table demo's stored review record (``demo_record_folder``: 300 training rows, signed), opened
as ``synthreview show`` opens it: the browser only renders what the record holds (issue 33, item
8: the numbers shown are the subject here, not the run). At both sizes:

- no label, heading, tile or table cell of the Overview, Audit, History and Utility pages is
  clipped (an element whose content is wider than its box: ``scrollWidth > clientWidth``);
- every rule value shown beside a verdict (the Overview's key numbers and scorecard, the
  Privacy tiles) says what the rule judged;
- the copies are counted one way: the Overview's sentence per candidate, the Privacy tile's
  "rows flagged as copies", the Audit page's sentence and the record's report.html agree;
- presentation mode shows every decision on the first screen.

Every problem is collected with its page and size; the test fails once, listing them all.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e_utils import (
    download_keyed,
    load_record_inputs,
    open_page,
    settle_charts,
    wait_for_app_run,
)

pytestmark = pytest.mark.e2e
LONG = 300_000  # ms
SIZES = ((1280, 720), (1920, 1080))
VERDICT_END = re.compile(r"(PASS|WARN|FAIL)\s*(\(note \d+\))?\s*$")
COPIES = re.compile(
    r"([\d,]+) of ([\d,]+) (?:rows|day traces) equal a real record \(([\d,]+) in training, "
    r"([\d,]+) in the holdout\); ([\d,]+) flagged as copies; ([\d,]+) removed by any rule"
)

#: elements whose content must fit their box: what a reader reads as a label
CLIPPED_JS = """
() => {
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden') return false;
    }
    return true;
  };
  const main = document.querySelector('[data-testid=stMain]');
  const labels = [
    '[data-testid=stMetricLabel]', '[data-testid=stMetricLabel] *',
    '[data-testid=stMetricValue]', '[data-testid=stMetricValue] *',
    '[data-testid=stTable] th', '[data-testid=stTable] td',
    '[data-testid=stTable] th *', '[data-testid=stTable] td *',
    '[data-testid=stWidgetLabel] p', '[data-testid=stExpander] summary',
    '[data-testid=stExpander] summary *', '[data-testid=stCaptionContainer]',
    '[data-testid=stMarkdownContainer] p', 'h1', 'h2', 'h3', '.sr-line span',
    '[data-testid=stTab] p',
  ].join(', ');
  const found = [];
  main.querySelectorAll(labels).forEach((el) => {
    if (!shown(el) || el.clientWidth < 1) return;
    if (el.scrollWidth > el.clientWidth + 1) found.push(
      el.tagName.toLowerCase() + ' "' + el.innerText.trim().slice(0, 60) + '" ('
      + el.scrollWidth + ' px in ' + el.clientWidth + ' px)');
  });
  return found;
}
"""
#: every table cell that ends in a verdict, and every tile's column text
VERDICT_CELLS_JS = """
() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stTable] td')]
  .map((td) => td.innerText.trim())
"""
TILES_JS = """
() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMetric]')].map((m) => {
  const column = m.closest('[data-testid=stColumn]');
  return {label: m.querySelector('[data-testid=stMetricLabel]').innerText.trim(),
          value: m.querySelector('[data-testid=stMetricValue]').innerText.trim(),
          column: column ? column.innerText : ''};
})
"""
#: the opened record's Audit page offers its report.html as stored (a key's "." is "-" in its
#: CSS class)
RECORD_HTML_KEY = "audit_record_download_report-html"
DECISIONS_JS = """
() => [...document.querySelectorAll('.sr-line')].map((l) => {
  const r = l.getBoundingClientRect(); return {top: r.top, bottom: r.bottom};
}).concat([{window: window.innerHeight}])
"""


def _open_expanders(page, names: tuple[str, ...]) -> None:
    for name in names:
        summary = page.locator("[data-testid=stExpander] summary").filter(has_text=name)
        for i in range(summary.count()):
            summary.nth(i).click()
    wait_for_app_run(page, LONG)


def _unjudged(cells: list[str]) -> list[str]:
    """Cells that show a number beside a verdict without saying what the rule judged."""
    return [c for c in cells if VERDICT_END.search(c) and re.search(r"\d", c) and "judged" not in c]


#: a label cut to its box, put on the page once: the clipping check must find it (a control)
CUT_LABEL_JS = """
() => { const d = document.createElement('div'); d.id = 'sr-cut-control';
  d.setAttribute('data-testid', 'stMarkdownContainer');
  d.innerHTML = '<p style="width: 40px; overflow: hidden; white-space: nowrap">'
    + 'a label that is cut to its box</p>';
  document.querySelector('[data-testid=stMain]').appendChild(d); }
"""


def _main_text(page) -> str:
    return page.locator("[data-testid=stMain]").inner_text()


def test_numbers_are_judged_counted_once_and_readable(
    table_record_page, table_record_server, tmp_path
):
    page = table_record_page
    # the record's own input files loaded: the Audit page draws its removed rows beside their
    # training rows, as it did after a run in the session
    load_record_inputs(page)
    problems: list[str] = []
    overview_copies: list[tuple[str, ...]] = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        size = f"{width}x{height}"
        # the Overview: key numbers and the scorecard carry the judged value, copies once
        open_page(page, "Overview")
        settle_charts(page, LONG, start_ms=0)
        _open_expanders(page, ("Every rule, per candidate",))
        cells = page.evaluate(VERDICT_CELLS_JS)
        judged = [c for c in cells if VERDICT_END.search(c)]
        if len(judged) < 10:
            problems.append(f"Overview {size}: only {len(judged)} cells beside a verdict")
        problems += [f"Overview {size}: not judged: {c!r}" for c in _unjudged(cells)]
        copies = COPIES.findall(_main_text(page))
        if not copies:
            problems.append(f"Overview {size}: no copy counts")
        if overview_copies and copies != overview_copies:
            problems.append(f"Overview {size}: copies {copies} vs {overview_copies}")
        overview_copies = overview_copies or copies
        problems += [f"Overview {size}: clipped {c}" for c in page.evaluate(CLIPPED_JS)]
        if (width, height) == SIZES[0]:  # the check sees a cut label
            page.evaluate(CUT_LABEL_JS)
            control = page.evaluate(CLIPPED_JS)
            page.evaluate("() => document.getElementById('sr-cut-control').remove()")
            if not any("a label that is cut" in c for c in control):
                problems.append(f"the clipping check missed a cut label: {control}")
        # the Privacy tiles: each verdict with its judged value; the copy tile's count
        open_page(page, "Privacy")
        settle_charts(page, LONG, start_ms=0)
        tiles = page.evaluate(TILES_JS)
        for tile in tiles:
            verdict = re.search(r"\b(PASS|WARN|FAIL)\b", tile["column"])
            if verdict and "judged" not in tile["column"]:
                problems.append(f"Privacy {size}: tile {tile['label']!r} without judged value")
        flagged = [t["value"] for t in tiles if t["label"] == "rows flagged as copies"]
        if flagged != [c[4] for c in overview_copies]:
            problems.append(f"Privacy {size}: flagged {flagged} vs Overview {overview_copies}")
        # the Audit page: the selected (first) candidate's copies as the Overview counts them
        open_page(page, "Audit & export")
        settle_charts(page, LONG, start_ms=0)
        audit = COPIES.findall(page.locator(".st-key-audit_copy_counts").inner_text())
        if not overview_copies or audit != overview_copies[:1]:
            problems.append(f"Audit {size}: copies {audit} vs Overview {overview_copies[:1]}")
        _open_expanders(page, ("Copies, counted once",))
        problems += [f"Audit {size}: clipped {c}" for c in page.evaluate(CLIPPED_JS)]
        for title in ("History", "Utility", "Fidelity"):
            open_page(page, title)
            settle_charts(page, LONG, start_ms=0)
            if title != "Fidelity":
                problems += [f"{title} {size}: clipped {c}" for c in page.evaluate(CLIPPED_JS)]
            # a section page's release rules: each verdict with the value its rule judged
            rules = page.locator(f".st-key-{title.lower()}_rules")
            lines = rules.inner_text().splitlines() if rules.count() else []
            if title != "History" and not any(VERDICT_END.search(x) for x in lines):
                problems.append(f"{title} {size}: no release rule beside a verdict")
            problems += [f"{title} {size}: not judged: {x!r}" for x in _unjudged(lines)]
        # presentation mode: every decision on the first screen
        open_page(page, "Overview")
        page.locator(".st-key-presentation_mode").get_by_text("Presentation mode").click()
        settle_charts(page, LONG)
        page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
        *lines, window = page.evaluate(DECISIONS_JS)
        if not lines:
            problems.append(f"presentation {size}: no decision line")
        for line in lines:
            if line["bottom"] > window["window"] + 1:
                problems.append(f"presentation {size}: a decision ends at {line['bottom']:.0f} px")
        page.locator(".st-key-presentation_leave button").click()
        settle_charts(page, LONG)
    # the record's report.html (downloaded as stored) counts the copies as the pages do
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    open_page(page, "Audit & export")
    settle_charts(page, LONG, start_ms=0)
    downloaded = download_keyed(page, RECORD_HTML_KEY, tmp_path)
    assert downloaded.read_bytes() == (table_record_server.folder / "report.html").read_bytes()
    html = downloaded.read_text("utf-8")
    filed = COPIES.findall(re.sub(r"<[^>]+>", "", html))
    if filed != overview_copies:
        problems.append(f"report.html: copies {filed} vs Overview {overview_copies}")
    if "judged on" not in html:
        problems.append("report.html: no judged value")
    assert not problems, "\n".join(problems)
