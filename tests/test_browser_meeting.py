"""A release meeting on a projector (issue 23, Done-when), in Chromium at 1280x720 and 1920x1080.

Every page of the table demo's and the glucose demo's stored review records (opened as
``synthreview show`` opens them: the browser only renders; the table record with its input
files loaded, so the views that draw rows draw too) and of an uploaded German-credit review is
opened at both sizes and read from the DOM and plotly's own layout (``gd._fullLayout``, the
bounding boxes of ``.legend``, titles and annotations). The runs themselves are the subject of
their own test: the table demo and the glucose demo run in one session, and the glucose
review's pages whose views draw rows (which its stored record cannot supply) are read too.
German credit's upload and run, the suite's only one, also carries the one-release-one-record
checks of test_browser_record (``tests.record_screen``) and the CLI's path on the same files.

- no chart legend meets the chart's title, an axis title or an annotation's text, and no two
  annotation texts meet (the Overview scatter's names also stay inside its plot area);
- no table is wider than its container (nothing scrolls sideways), nor the page;
- no visible ``<span``, ``None``, ``NULL`` or float written with 5 or more decimals;
- no release-rule id (the default policy's rule names) on the Overview;
- the run's progress panel lies inside the window while the review runs, the finished run
  points to the decisions, and after new data is loaded the sidebar says "not computed"
  (the tests that run a review: the demos' runs and German credit's).

Every problem found is collected with its page, size and element, and the test fails once at
the end listing them all. With ``SYNTHREVIEW_SCREENSHOTS=docs`` the 1280x720 screen of every
page is written to ``docs/screens/<dataset>_<page>.png`` (the README's image is one of them);
otherwise screenshots go to a temporary folder, so a test run never rewrites tracked files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from synthreview.io.tables import align, read_table
from synthreview.judgement.policy import load_policy
from synthreview.options import ReviewOptions
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate
from tests.conftest import ARTIFACTS, ROOT
from tests.e2e_utils import (
    click_keyed,
    load_record_inputs,
    open_page,
    settle_charts,
    wait_for_app_run,
)
from tests.record_screen import assert_one_record, curate_and_export

pytestmark = pytest.mark.e2e
LONG = 300_000  # ms
REVIEW_MS = 1_500_000  # a whole review on 2 shared cores
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SIZES = ((1280, 720), (1920, 1080))
PAGES = (
    "Data", "Overview", "Fidelity", "Privacy", "Utility", "Glucose", "Audit & export", "History",
    "Glossary",
)  # fmt: skip
#: the pages whose views draw the rows of a review (PCA, closest pairs, trace heatmaps, removed
#: rows beside training rows): a stored record without its input files draws none of them
ROW_PAGES = ("Fidelity", "Privacy", "Glucose", "Audit & export")
SHOTS = ROOT / "docs" / "screens" if os.environ.get("SYNTHREVIEW_SCREENSHOTS") == "docs" else None
#: text a reader must never see: markup, Python/SQL missing values, float noise
BAD_TEXT = {
    "raw HTML": re.compile(r"<span"),
    "None": re.compile(r"\bNone\b"),
    "NULL": re.compile(r"\bNULL\b"),
    # (an arXiv identifier such as 2505.01524 is a name, not a number)
    "float noise": re.compile(r"(?<![\w.])(?<!arXiv )-?\d+\.\d{5,}(?![\w.])"),
}
RULE_IDS = sorted(load_policy().to_dict()["rules"])
#: the registry's formats write at most 3 significant digits (``.3g``, ``.2f``, ``.2e``) and
#: percentages with 2 decimals; 5 decimals and 5 significant digits is float noise
MAX_SIGNIFICANT = 4


def _significant_digits(number: str) -> int:
    """Digits of ``number`` from its first non-zero one: ``0.00166`` has 3, ``0.0716666`` 6."""
    return len(number.lstrip("-").replace(".", "").lstrip("0"))


#: reads one page: charts (legend vs titles and annotations), tables (sideways scrolling), text
INSPECT_JS = """
() => {
  const found = [];
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden') return false;
    }
    return true;
  };
  const box = (el) => { const r = el.getBoundingClientRect();
    return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
  const meet = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1;
  const where = (el) => {
    const keyed = el.closest('[class*="st-key-"]');
    const key = keyed ? [...keyed.classList].find((c) => c.startsWith('st-key-')) : null;
    const head = [...document.querySelectorAll('[data-testid=stMain] h1, [data-testid=stMain] h2,'
      + ' [data-testid=stMain] h3')].filter((h) => h.compareDocumentPosition(el)
      & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    return (key || '') + (head ? ' under "' + head.innerText.trim() + '"' : '');
  };
  const charts = [];
  document.querySelectorAll('.js-plotly-plot').forEach((gd) => {
    if (!shown(gd) || !gd._fullLayout) return;
    const name = where(gd) + (gd._fullLayout.title && gd._fullLayout.title.text
      ? ' "' + gd._fullLayout.title.text + '"' : '');
    const texts = [];
    gd.querySelectorAll('.infolayer text[class*="title"]').forEach((t) => {
      if (t.closest('.legend') || !t.textContent.trim() || !shown(t)) return;
      texts.push({what: t.getAttribute('class') + ' "' + t.textContent.trim() + '"', box: box(t)});
    });
    const notes = [];
    gd.querySelectorAll('.annotation').forEach((a) => {
      const t = a.querySelector('.annotation-text-g text');
      if (!t || !t.textContent.trim() || !shown(t)) return;
      notes.push({what: 'annotation "' + t.textContent.trim() + '"', box: box(t)});
    });
    const legend = gd.querySelector('.legend');
    if (legend && shown(legend) && legend.querySelector('.traces')) {
      const lb = box(legend.querySelector('.bg') || legend);
      [...texts, ...notes].forEach((t) => { if (meet(lb, t.box))
        found.push({kind: 'legend meets text', where: name, what: t.what}); });
    }
    for (let i = 0; i < notes.length; i++) for (let j = i + 1; j < notes.length; j++)
      if (meet(notes[i].box, notes[j].box)) found.push({kind: 'annotations meet', where: name,
        what: notes[i].what + ' / ' + notes[j].what});
    const s = gd._fullLayout._size, g = gd.getBoundingClientRect();
    const plot = {l: g.left + s.l, t: g.top + s.t, r: g.left + s.l + s.w, b: g.top + s.t + s.h};
    charts.push({name, plot, notes: notes.map((n) => n.box)});
  });
  const tables = document.querySelectorAll('[data-testid=stDataFrame], [data-testid=stTable]');
  tables.forEach((t) => {
    if (!shown(t)) return;
    // what a reader can scroll sideways: a scrolling box (the data grid's scroller included)
    // whose content is wider than its window
    const scrollers = [t, ...t.querySelectorAll('*')].filter((e) =>
      ['auto', 'scroll'].includes(getComputedStyle(e).overflowX));
    const worst = scrollers.map((e) => [e.scrollWidth - e.clientWidth, e])
      .sort((a, b) => b[0] - a[0])[0];
    if (worst && worst[0] > 1) found.push({kind: 'table scrolls sideways', where: where(t),
      what: t.getAttribute('data-testid') + ' ' + worst[1].scrollWidth + ' px of content in '
        + worst[1].clientWidth + ' px'});
    const parent = t.parentElement.getBoundingClientRect();
    if (t.getBoundingClientRect().right > parent.right + 1) found.push({
      kind: 'table wider than its container', where: where(t), what: ''});
  });
  const main = document.querySelector('[data-testid=stMain]');
  if (main.scrollWidth > main.clientWidth + 1) found.push({kind: 'page scrolls sideways',
    where: 'stMain', what: main.scrollWidth + ' px in ' + main.clientWidth + ' px'});
  const words = [];
  const take = (root) => { if (root) words.push(root.innerText); };
  take(main);
  take(document.querySelector('[data-testid=stSidebar]'));
  document.querySelectorAll('.js-plotly-plot').forEach((gd) => { if (shown(gd))
    gd.querySelectorAll('.main-svg text').forEach((t) => words.push(t.textContent)); });
  // a data grid draws its cells on a canvas; its accessibility table holds the shown cells
  document.querySelectorAll('[data-testid=stDataFrame]').forEach((t) => { if (shown(t))
    t.querySelectorAll('td, th').forEach((c) => words.push(c.textContent)); });
  return {found, charts, text: words.join('\\n'), main: main.innerText};
}
"""


def _inspect(page, label: str, *, overview: bool = False) -> list[str]:
    """Problems on the page shown now, each as ``label: kind: where: what``."""
    seen = page.evaluate(INSPECT_JS)
    problems = [f"{label}: {p['kind']}: {p['where']}: {p['what']}" for p in seen["found"]]
    for kind, pattern in BAD_TEXT.items():
        matches = [m for m in pattern.finditer(seen["text"]) if kind != "float noise"
                   or _significant_digits(m.group()) > MAX_SIGNIFICANT]  # fmt: skip
        if matches:  # one line per kind and page: the first place and how many
            start = max(matches[0].start() - 60, 0)
            context = " ".join(seen["text"][start : matches[0].end() + 60].split())
            problems.append(f"{label}: {kind} ({len(matches)}x), first: {context!r}")
    if overview:
        for rule in RULE_IDS:
            if re.search(rf"(?<![\w-]){re.escape(rule)}(?![\w-])", seen["main"]):
                problems.append(f"{label}: rule id {rule!r} in the Overview's text")
        for chart in seen["charts"]:
            plot = chart["plot"]
            for note in chart["notes"]:
                inside = (
                    note["l"] >= plot["l"] - 1
                    and note["r"] <= plot["r"] + 1
                    and note["t"] >= plot["t"] - 1
                    and note["b"] <= plot["b"] + 1
                )
                if not inside and "overview_frontier" in chart["name"]:
                    problems.append(f"{label}: scatter label outside the plot: {note}")
    return problems


def _close_toasts(page) -> None:
    """Dismiss the run's toast so a screenshot shows the page itself."""
    toasts = page.get_by_test_id("stToast")
    for button in toasts.locator("button").all():
        if button.is_visible():
            button.click()
    expect(toasts).to_have_count(0)


def _to_top(page) -> None:
    page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")


def _walk(page, dataset: str, folder: Path, pages: tuple[str, ...] = PAGES) -> list[str]:
    """Every page of ``pages`` at both sizes: the problems found; the 1280x720 screens saved."""
    problems: list[str] = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for title in pages:
            open_page(page, title)
            settle_charts(page, LONG, start_ms=0)
            for error in page.get_by_test_id("stException").all():
                text = " ".join(error.inner_text().split())[:400]
                problems.append(f"{dataset} {title} {width}x{height}: exception: {text}")
            label = f"{dataset} {title} {width}x{height}"
            problems += _inspect(page, label, overview=title == "Overview")
            if (width, height) == SIZES[0]:
                _to_top(page)
                _close_toasts(page)
                stem = re.sub(r"\W+", "_", title.lower()).strip("_")
                page.screenshot(path=str(folder / f"{dataset}_{stem}.png"))
                if title == "Overview":  # the scatter lies below the first screen
                    ARTIFACTS.mkdir(exist_ok=True)
                    frontier = page.locator(".st-key-overview_frontier")
                    if frontier.count():
                        frontier.screenshot(path=str(ARTIFACTS / f"{dataset}_frontier.png"))
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    return problems


def _sidebar_status(page) -> str:
    return page.locator(".st-key-review_status").inner_text()


def _assert_not_computed(page, what: str) -> None:
    """The sidebar describes the data loaded now: nothing computed yet, no earlier run's time."""
    expect(page.locator(".st-key-review_status")).to_contain_text("not computed")
    # read once the script run is over: while it runs, Streamlit keeps the previous run's
    # elements on screen until they are redrawn (under load a reading caught the table
    # review's "Privacy: up to date" beside the glucose demo's first line)
    wait_for_app_run(page)
    status = _sidebar_status(page)
    assert "up to date" not in status and "computed in" not in status, (what, status)


#: installed before Run review: sets ``window.__decisionInView`` once the run panel's table,
#: not scrolled sideways, has its Decision header among the cells it keeps (those in view)
DECISION_IN_VIEW_JS = """() => {
  window.__decisionInView = false;
  const look = () => {
    const panel = document.querySelector("[class*='st-key-review_run_panel']");
    const grid = panel && panel.querySelector('.dvn-scroller');
    if (!grid || grid.scrollLeft !== 0) return;
    const heads = [...panel.querySelectorAll('table[role=grid] th')];
    if (heads.some((h) => h.textContent === 'Decision')) window.__decisionInView = true;
  };
  new MutationObserver(look).observe(document.body, {childList: true, subtree: true});
}"""


def _run_watching_the_panel(page) -> list[str]:
    """Press Run review with the page scrolled to its end (where a meeting's reader often is)
    and read the progress panel's place while the run goes; wait for the run to end."""
    problems = []
    page.evaluate(
        "() => { const m = document.querySelector('[data-testid=stMain]');"
        " m.scrollTo(0, m.scrollHeight); }"
    )
    button = page.locator(".st-key-run_review button:visible")
    expect(button).to_be_enabled(timeout=LONG)
    # the step table draws on a canvas and keeps only the cells in view in its accessibility
    # table: a decision reached is on screen when the Decision header is there, inside the
    # table's window (at 1280x720 a last column lay right of it, to be scrolled to)
    page.evaluate(DECISION_IN_VIEW_JS)
    panel = page.locator("[class*='st-key-review_run_panel']")
    for _ in range(3):  # a click landing while the sidebar redraws is lost: click again
        button.click()
        try:
            panel.first.wait_for(state="visible", timeout=30_000)
            break
        except PlaywrightTimeoutError:
            if not button.is_enabled():
                break
    panel.first.wait_for(state="visible", timeout=30_000)
    page.wait_for_timeout(1500)  # the table of steps has drawn
    viewport = page.viewport_size
    for _ in range(3):
        if not panel.count():
            break  # the run ended
        box = panel.first.bounding_box()
        if box is None:
            break
        inside = (
            box["x"] >= 0
            and box["y"] >= 0
            and box["x"] + box["width"] <= viewport["width"]
            and box["y"] + box["height"] <= viewport["height"]
        )
        if not inside:
            problems.append(f"progress panel outside the {viewport} window: {box}")
        page.wait_for_timeout(2000)
    wait_for_app_run(page, REVIEW_MS)
    expect(page.locator(".st-key-review_status")).to_contain_text("up to date", timeout=REVIEW_MS)
    if not page.evaluate("() => window.__decisionInView === true"):
        problems.append(f"no decision in view in the run panel's table at {viewport}")
    # the finished run points to the decisions (the toast and the sidebar link)
    expect(page.get_by_role("link", name="See the decisions")).to_be_visible(timeout=LONG)
    return problems


def _folder(tmp_path: Path) -> Path:
    folder = SHOTS or tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _load_glucose_demo(page) -> None:
    open_page(page, "Data")
    page.get_by_text("Demo: glucose (CGM) day traces").click()
    wait_for_app_run(page)
    click_keyed(page, "load_demo")
    expect(page.get_by_text("Review loaded: traces")).to_be_visible()


def test_table_and_glucose_records_on_a_projector(table_record_page, glucose_record_page, tmp_path):
    """The table demo's stored record (its input files loaded on the Data page) and the glucose
    demo's, each in its own session: every page read at both sizes; nothing is computed."""
    folder = _folder(tmp_path)
    problems = []
    for dataset, page in (("table", table_record_page), ("glucose", glucose_record_page)):
        expect(page.locator(".st-key-record_verification")).to_contain_text("verified - signed by")
        if dataset == "table":
            load_record_inputs(page)
        problems += _walk(page, dataset, folder)
        # an opened record is never run: no Run review anywhere, nothing computed on the way
        expect(page.locator(".st-key-run_review button")).to_have_count(0)
    assert not problems, "\n".join(problems)


def test_table_and_glucose_runs_on_a_projector(meeting, tmp_path):
    """The runs themselves: the table demo, then the glucose demo in the same session (the
    sidebar must forget the table review), each run once with its progress panel watched; then
    the glucose review's pages whose views draw rows at both sizes (its stored record, read by
    the test above, has not its input files). Runs after that test, so with
    ``SYNTHREVIEW_SCREENSHOTS=docs`` those pages' screens show the rows drawn."""
    page = meeting
    folder = _folder(tmp_path)
    expect(page.get_by_text("Review loaded: table")).to_be_visible()
    _assert_not_computed(page, "the demo on arrival")
    problems = [f"table run: {p}" for p in _run_watching_the_panel(page)]

    _load_glucose_demo(page)
    _assert_not_computed(page, "the glucose demo loaded after the table review")
    problems += [f"glucose run: {p}" for p in _run_watching_the_panel(page)]
    problems += _walk(page, "glucose", folder, ROW_PAGES)
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def german_files(tmp_path_factory) -> dict[str, Path]:
    """German credit as a reviewer uploads it: training and holdout splits, a fresh sample and
    a candidate holding 10 % verbatim training rows (tests may read ../shared; the app may not)."""
    if not (SHARED / "german_credit.csv").is_file():
        pytest.skip("needs ../shared/data/german_credit.csv")
    folder = tmp_path_factory.mktemp("german")
    german = pd.read_csv(SHARED / "german_credit.csv").sample(frac=1.0, random_state=4)
    german = german.reset_index(drop=True)
    train, holdout, fresh = german.iloc[:300], german.iloc[300:500], german.iloc[500:800]
    frames = {
        "real": train,
        "holdout": holdout,
        "fresh_sample": fresh.iloc[270:],
        "with_copies": pd.concat([fresh.iloc[:270], train.iloc[:30]]),
    }
    paths = {}
    for name, frame in frames.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def test_uploaded_german_credit_on_a_projector(meeting, german_files, tmp_path):
    """German credit uploaded and run (the progress panel watched), every page read at both
    sizes, presentation mode; then the run's record equals the screen and the CLI's decision
    (one upload and run serves both: each costs a whole review on 2 cores)."""
    page = meeting
    folder = _folder(tmp_path)
    open_page(page, "Data")
    page.get_by_text("Upload tables (CSV, TSV, Parquet)").click()
    wait_for_app_run(page)
    uploads = (
        ("real_upload", ["real"]),
        ("holdout_upload", ["holdout"]),
        ("synthetic_upload", ["fresh_sample", "with_copies"]),
    )
    for key, names in uploads:
        page.locator(f".st-key-{key}").get_by_test_id(
            "stFileUploaderDropzoneInput"
        ).set_input_files([str(german_files[n]) for n in names])
        wait_for_app_run(page)
    click_keyed(page, "load_files")
    expect(page.get_by_text("2 synthetic candidate(s): fresh_sample, with_copies")).to_be_visible()
    _assert_not_computed(page, "uploaded German credit")
    problems = [f"german run: {p}" for p in _run_watching_the_panel(page)]
    problems += _walk(page, "german", folder)
    problems += _presentation_switcher(page)
    assert not problems, "\n".join(problems)
    _german_record_equals_the_screen_and_the_cli(page, german_files, tmp_path)


def _german_record_equals_the_screen_and_the_cli(page, german_files, tmp_path: Path) -> None:
    """One release, one record (issue 21) on the run just made: the Overview's decision for
    ``with_copies`` (10 % verbatim training rows), the Audit page's after *Curate -> Confirm*,
    the downloaded ``report.json`` and ``report.html`` state the same decision; the CLI's path
    (``evaluate`` + ``review_release(curate=True)``) on the same files, options and seed
    states it too. Read after the projector walk, which reads the run as it finished."""
    open_page(page, "Overview")  # every decision current: none left out of date by the walk
    expect(page.locator(".sr-line").first).to_be_visible(timeout=REVIEW_MS)
    expect(page.locator(".sr-badge", has_text="OUT OF DATE")).to_have_count(0, timeout=REVIEW_MS)
    name = "with_copies"
    report = assert_one_record(
        page, name, tmp_path, {"fidelity", "privacy", "utility"}, curate_and_export
    )
    # the CLI's path on the same files (both candidates, as uploaded), options and seed
    review = align(
        read_table(german_files["real"], role="real"),
        [read_table(german_files[n], role="synthetic") for n in ("fresh_sample", "with_copies")],
        holdout=read_table(german_files["holdout"], role="holdout"),
    )
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in report["options"].items()}
    cli = review_release(
        review,
        evaluate(review, options=ReviewOptions(**options), seed=report["seed"]),
        curate=True,
    )
    expected = cli.decisions[name]
    assert (expected.outcome, expected.reason) == (
        report["decisions"][name]["outcome"],
        report["decisions"][name]["reason"],
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "audit_record_german.png"))


def _presentation_switcher(page) -> list[str]:
    """Presentation mode keeps navigation: the sidebar is hidden, a row of links in the window
    opens each page in presentation mode, and *Leave presentation* brings the sidebar back."""
    problems = []
    open_page(page, "Overview")
    page.locator(".st-key-presentation_mode").get_by_text("Presentation mode").click()
    wait_for_app_run(page, LONG)
    expect(page.get_by_test_id("stSidebar")).to_be_hidden()
    row = page.locator(".st-key-presentation_pages")
    expect(row).to_be_visible()
    viewport = page.viewport_size
    for link in row.get_by_test_id("stPageLink").all():
        box = link.bounding_box()
        if box is None or box["x"] + box["width"] > viewport["width"] or box["y"] < 0:
            problems.append(f"presentation: page link outside the window: {box}")
    for title in ("Privacy", "Utility", "Overview"):
        row.get_by_text(title, exact=True).click()
        settle_charts(page, LONG)
        expect(page.get_by_test_id("stSidebar")).to_be_hidden()
        expect(page.locator(".st-key-presentation_pages")).to_be_visible()
        problems += _inspect(page, f"presentation {title}", overview=title == "Overview")
    page.locator(".st-key-presentation_leave button").click()
    wait_for_app_run(page, LONG)
    expect(page.get_by_test_id("stSidebar")).to_be_visible()
    return problems
