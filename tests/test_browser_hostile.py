"""Real browser, hostile files: nothing the data says is fetched, linked, bolded or drawn as HTML.

A reviewer's files are written by someone else. Here the uploaded tables carry Markdown (bold,
a link, an image), HTML (``<b>``, ``<a href>``, ``<img>``) and bare URLs in six column names
and in the cells of a categorical column, the candidates' file names carry Markdown and HTML
(a browser sends only the part of a file name after its last ``/``, so names hold no URL), and
an uploaded glucose file carries them in its subject ids (:mod:`tests.hostile`). Every URL
points at a server this test runs on ``127.0.0.1``.

Both reviews are uploaded, run and shown on every page at 1280x720 in Debian's Chromium. On
each page the DOM must hold no element that links to or loads from that server (``href``,
``src``, ``srcset``, SVG ``xlink:href``), no element whose whole text is a token of a construct
(what ``**ZQXs**`` or ``<b>ZQXb</b>`` become when rendered) and no italic, link or image
element holding one; at the end the server must have received no request at all.
"""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from playwright.sync_api import expect

from tests.e2e_utils import (
    click_keyed,
    open_dashboard,
    open_page,
    settle_charts,
    start_review_run,
    wait_for_app_run,
    wait_for_charts,
)
from tests.hostile import TOKENS, candidate_names, write_tables, write_traces

pytestmark = pytest.mark.e2e
LONG = 300_000  # ms
TABLE_PAGES = ("Overview", "Data", "Fidelity", "Privacy", "Utility", "Audit & export", "Glossary")
TRACE_PAGES = ("Glucose", "Overview", "Data", "Fidelity", "Privacy")

#: every element created from the data: a link to or a load from the trap server, an element
#: whose whole text is a token, a link, italic or image element holding a token (a page may
#: bold a whole candidate name itself, ``**name**``, so <strong> counts only as a bare token)
_FIND_LIVE = """([port, tokens]) => {
  const host = "127.0.0.1:" + port;
  const xlink = "http://www.w3.org/1999/xlink";
  const found = [];
  for (const e of document.querySelectorAll("*")) {
    const refs = [e.getAttribute("href"), e.getAttribute("src"), e.getAttribute("srcset"),
                  e.getAttributeNS(xlink, "href"), e.getAttribute("data"),
                  e.getAttribute("action"), e.getAttribute("poster")];
    if (refs.some(r => r && r.includes(host))) found.push("ref " + e.outerHTML.slice(0, 160));
    const text = (e.textContent || "").trim();
    if (tokens.includes(text)) found.push("token " + e.tagName + " " + e.outerHTML.slice(0, 160));
    if (["A", "EM", "I", "IMG", "U", "DEL", "CODE"].includes(e.tagName) && text.includes("ZQX"))
      found.push("markup " + e.outerHTML.slice(0, 160));
  }
  return found;
}"""


class _Trap(BaseHTTPRequestHandler):
    """Records every request; answers 404."""

    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(f"GET {self.path}")
        self.send_response(404)
        self.end_headers()

    do_POST = do_HEAD = do_GET

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def trap():
    """A server on a free loopback port that records every request made to it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trap)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Trap.hits = []
    yield server.server_address[1], _Trap.hits
    server.shutdown()
    server.server_close()


def _upload(page, key: str, files: list[tuple[str, Path]]) -> None:
    """Upload ``(file name, path)`` pairs: the browser sends the given names."""
    payloads = [
        {"name": name, "mimeType": "text/csv", "buffer": path.read_bytes()} for name, path in files
    ]
    page.locator(f".st-key-{key}").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        payloads
    )
    wait_for_app_run(page)


def _assert_inert(page, port: int, where: str) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)
    # let plotly finish drawing every chart on the page before the DOM is read
    settle_charts(page, LONG, start_ms=0)
    live = page.evaluate(_FIND_LIVE, [port, list(TOKENS)])
    assert not live, f"{where}: elements created from the data:\n" + "\n".join(live)


def _visit(page, port: int, titles: tuple[str, ...], kind: str) -> list[str]:
    """Open each page, scroll it through (lazy content loads) and check its DOM."""
    seen = []
    for title in titles:
        open_page(page, title)
        page.evaluate(
            "async () => { const m = document.querySelector('[data-testid=stMain]');"
            " for (let y = 0; y < m.scrollHeight; y += 600) { m.scrollTo(0, y);"
            " await new Promise(r => setTimeout(r, 60)); } m.scrollTo(0, 0); }"
        )
        _assert_inert(page, port, f"{kind} review, {title} page")
        # the text as read: Markdown shows user text with invisible word joiners (U+2060)
        seen.append(page.locator("[data-testid=stMain]").inner_text().replace("\u2060", ""))
    return seen


def _around(text: str, token: str) -> str:
    """Where ``token`` occurs in ``text`` (for a failure message)."""
    spots = [m.start() for m in re.finditer(re.escape(token), text)][:8]
    return " | ".join(repr(text[max(0, i - 60) : i + 60]) for i in spots) or f"no {token}"


def test_hostile_files_create_no_element_and_no_request(browser, streamlit_url, trap, tmp_path):
    port, hits = trap
    tables = write_tables(tmp_path, port)
    traces_dir = tmp_path / "traces"
    traces_dir.mkdir()
    traces = write_traces(traces_dir, port)
    names = candidate_names(port, slashes=False)

    context, page = open_dashboard(browser, streamlit_url, LONG)

    # 1. tables: hostile column names and cells, hostile candidate file names
    page.get_by_text("Upload tables (CSV, TSV, Parquet)").click()
    wait_for_app_run(page)
    _upload(page, "real_upload", [("real.csv", tables["real"])])
    _upload(page, "holdout_upload", [("holdout.csv", tables["holdout"])])
    _upload(
        page,
        "synthetic_upload",
        [(f"{names[0]}.csv", tables["copula"]), (f"{names[1]}.csv", tables["noisy_copy"])],
    )
    click_keyed(page, "load_files")
    expect(page.get_by_text("2 synthetic candidate(s)")).to_be_visible()
    _assert_inert(page, port, "table review, loaded")
    start_review_run(page, 600_000)
    open_page(page, "Overview")
    expect(page.locator(".sr-line")).to_have_count(2, timeout=600_000)
    shown = _visit(page, port, TABLE_PAGES, "table")
    # the names are on the pages, as written (no backslash, no entity, no lost character)
    seen = "\n".join(shown)
    assert names[0] in seen, _around(seen, "ZQXs")
    assert "[ZQXl](http://127.0.0.1:" in seen, _around(seen, "ZQXl")
    # the record as filed: the downloaded report.html shows the same text inert, fetches nothing
    open_page(page, "Audit & export")
    button = page.locator(".st-key-audit_download_report_html button")
    expect(button).to_be_visible(timeout=LONG)
    with page.expect_download(timeout=LONG) as download:
        button.click()
    record = tmp_path / "report.html"
    download.value.save_as(record)
    filed = context.new_page()
    filed.goto(record.as_uri())
    wait_for_charts(filed, LONG, charts=".plotly-graph-div")
    live = filed.evaluate(_FIND_LIVE, [port, list(TOKENS)])
    assert not live, "report.html: elements created from the data:\n" + "\n".join(live)
    text = filed.locator("body").inner_text()
    assert names[0] in text, _around(text, "ZQXs")
    filed.close()

    # 2. glucose traces: hostile subject ids, one candidate that copies the real days
    open_page(page, "Data")
    page.get_by_text("Upload glucose traces (CSV, TSV, Parquet)").click()
    wait_for_app_run(page)
    _upload(page, "real_upload", [("real.csv", traces["real"])])
    _upload(page, "holdout_upload", [("holdout.csv", traces["holdout"])])
    _upload(page, "synthetic_upload", [(f"{names[1]}.csv", traces["copy"])])
    click_keyed(page, "load_files")
    expect(page.get_by_text("Review loaded: traces")).to_be_visible()
    start_review_run(page, 600_000)
    shown = _visit(page, port, TRACE_PAGES, "traces")
    # the per-person privacy warning names the memorised (hostile) subjects, as text
    seen = "\n".join(shown)
    assert "are reproduced" in seen and "**ZQXs** 0" in seen, _around(seen, "reproduced")
    context.close()

    assert hits == [], f"the browser fetched what the data named: {hits}"
