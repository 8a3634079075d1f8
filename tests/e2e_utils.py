"""Helpers for Playwright tests of the Streamlit app (also used by ``scripts/`` and ``benchmarks/``
that start the dashboard and drive it in Chromium)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

#: the checkout whose ``app.py`` :func:`serving_dashboard` serves
ROOT = Path(__file__).resolve().parents[1]
#: Chromium's flags for the tests, scripts and benchmarks: headless, no sandbox or GPU, nothing
#: fetched of its own (no QUIC, background networking, component updates or sync)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def free_port() -> int:
    """A loopback TCP port free now (the system's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    """Whether the Streamlit server at ``url`` answers its health check (no proxy asked)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_stcore/health", timeout=1) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


@contextmanager
def serving_dashboard(
    log_path: Path, env: dict[str, str], *, port: int | None = None, start_seconds: float = 90
) -> Iterator[tuple[subprocess.Popen, str]]:
    """``streamlit run app.py`` of this checkout, headless, on loopback ``port`` (default a free
    one) with the environment ``env`` (the whole of it) and its output in ``log_path``; yields
    ``(process, url)`` once it answers its health check; always stops it.

    Raises RuntimeError when the server exits, or does not answer within ``start_seconds``
    (it imports torch, faiss and plotly first); the message holds its log.
    """
    port = free_port() if port is None else port
    command = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.headless=true", "--server.address=127.0.0.1", f"--server.port={port}",
        "--browser.gatherUsageStats=false", "--server.fileWatcherType=none",
        "--client.toolbarMode=minimal",
    ]  # fmt: skip
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + start_seconds
            while not healthy(url):
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited early:\n{log_path.read_text()}")
                if time.monotonic() > deadline:
                    waited = f"streamlit not healthy after {start_seconds:.0f} s"
                    raise RuntimeError(f"{waited}:\n{log_path.read_text()}")
                time.sleep(0.2)
            yield proc, url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for_app_run(page, timeout_ms: int = 120_000, *, start_ms: int = 300) -> None:
    """Block until the websocket is up and the script finished its current run.

    ``start_ms`` first lets a just-triggered rerun start (widgets debounce ~200 ms, and the
    page says "running" only once the server answers); 0 where nothing was just triggered.
    """
    if start_ms:
        page.wait_for_timeout(start_ms)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout_ms
    )
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=timeout_ms
    )


def open_dashboard(browser, url: str, timeout_ms: int = 120_000):
    """A new 1280x720 browser context (downloads accepted) on the dashboard at ``url``, its
    first script run finished: ``(context, page)``; the caller closes the context."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    page.goto(url)
    page.get_by_test_id("stAppViewContainer").wait_for()
    wait_for_app_run(page, timeout_ms)
    return context, page


def open_page(page, title: str) -> None:
    """Navigate with the sidebar (keeps the session, unlike a URL change).

    Like Run review's, a click that lands while Streamlit redraws the sidebar can be lost (the
    link is replaced under the pointer): the app stays on the page it showed, and a later step
    waits for something that page never draws (a CI run lost "Overview" this way after a
    Load files rerun). So the click is repeated, up to three times, until the browser's
    address is the link's.
    """
    link = page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True)
    for attempt in range(3):
        # callers have waited for their own runs; a retry follows a click that may start one
        wait_for_app_run(page, start_ms=300 if attempt else 0)
        target = link.get_attribute("href")
        if page.url == target:
            break
        link.click()
        try:
            page.wait_for_url(target, timeout=30_000)
            break
        except PlaywrightTimeoutError:  # the click was lost: click again
            continue
    expect(page).to_have_url(link.get_attribute("href"))
    wait_for_app_run(page)


def start_review_run(page, timeout_ms: int = 1_500_000) -> None:
    """Press the sidebar's Run review and wait until the run has finished.

    A click that lands while Streamlit redraws the sidebar can be lost (the button is replaced
    under the pointer); the review then never starts and a test would wait for decisions until
    its timeout. So the click is repeated, up to three times, until the run shows (its
    progress panel, or the button disabled while it goes, or decision lines).
    """
    started = "[class*='st-key-review_run_panel'], .sr-line, .st-key-run_review button:disabled"
    for _ in range(3):
        button = page.locator(".st-key-run_review button:visible")
        if button.count() == 0 or not button.first.is_enabled():
            break  # already running, or nothing left to compute
        button.first.click()
        try:
            page.locator(started).first.wait_for(state="attached", timeout=30_000)
            break
        except PlaywrightTimeoutError:  # the click was lost: click again
            continue
    wait_for_app_run(page, timeout_ms)


def click_keyed(page, key: str, timeout: int = 300_000) -> None:
    """Click the button with Streamlit key ``key`` once the rerun settled (stale copies of a
    widget linger while a rerun draws), then wait for the run it starts."""
    button = page.locator(f".st-key-{key} button:visible")
    expect(button).to_have_count(1, timeout=timeout)
    button.click()
    wait_for_app_run(page, timeout)


def download_keyed(page, key: str, folder: Path, timeout: int = 300_000) -> Path:
    """Press the download button with key ``key``; the file saved under ``folder``."""
    button = page.locator(f".st-key-{key} button")
    expect(button).to_be_visible(timeout=timeout)
    with page.expect_download(timeout=timeout) as download:
        button.click()
    path = folder / download.value.suggested_filename
    download.value.save_as(path)
    return path


def load_record_inputs(page) -> None:
    """On a server that opens the table demo's stored record with its own demo size
    (``tests.conftest.table_record_server``): *Load the demo* on the Data page, whose files are
    the record's inputs byte for byte, so the views that draw rows (PCA, closest pairs, removed
    rows beside training rows) draw; waits until the record says every input is loaded (its
    Re-run with these inputs is enabled only then)."""
    open_page(page, "Data")
    click_keyed(page, "load_demo")
    rerun = page.locator(".st-key-record_rerun button:visible")
    expect(rerun).to_have_count(1)  # the shown one: the DOM holds a second copy
    expect(rerun).to_be_enabled()


#: true once the plot areas and legends of the page's charts are where they were 250 ms ago
_CHARTS_STILL_JS = """() => {
  const now = performance.now();
  const places = [...document.querySelectorAll('.js-plotly-plot')].map((gd) => {
    const s = gd._fullLayout ? gd._fullLayout._size : {};
    const legend = gd.querySelector('.legend');
    const r = (legend || gd).getBoundingClientRect();
    return [s.l, s.t, s.w, s.h, r.left, r.top, r.width, r.height].join(',');
  }).join('|');
  if (window.__srPlaces !== places) {
    window.__srPlaces = places;
    window.__srSince = now;
    return false;
  }
  return now - window.__srSince >= 250;
}"""


def wait_for_charts(
    page, timeout_ms: int = 300_000, *, charts: str = "[data-testid=stPlotlyChart]"
) -> None:
    """Wait for plotly to finish drawing every chart (``charts``: the selector of a chart's
    container): each drawn, then its plot area and legend still for a quarter second (plotly
    lays a chart out again after its first draw: legend, automargin)."""
    page.wait_for_function(
        "(charts) => [...document.querySelectorAll(charts)].every("
        "(c) => c.querySelector('.main-svg'))",
        arg=charts,
        timeout=timeout_ms,
    )
    # the stillness clock starts with this wait, not with an earlier page's last reading
    page.evaluate("() => { window.__srPlaces = undefined; }")
    page.wait_for_function(_CHARTS_STILL_JS, polling=100, timeout=timeout_ms)


def settle_charts(page, timeout_ms: int = 300_000, *, start_ms: int = 300) -> None:
    """Wait for the script run (:func:`wait_for_app_run`), then for its charts
    (:func:`wait_for_charts`). ``start_ms=0`` right after :func:`open_page`, which has waited
    for the page's run."""
    wait_for_app_run(page, timeout_ms, start_ms=start_ms)
    wait_for_charts(page, timeout_ms)
