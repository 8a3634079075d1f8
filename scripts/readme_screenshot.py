"""Take the README's screenshot: the Overview of the shipped table demo at 1280x720.

Usage::

    python scripts/readme_screenshot.py [--out docs/screens/demo_overview.png]

Starts ``streamlit run app.py`` on a free loopback port exactly as a new user gets it (the
bundled demo at its shipped size, 5,000 training rows and six candidates: no
``SYNTHREVIEW_DEMO_ROWS``, which the browser tests set to shrink it), opens it in headless
Chromium (Debian's ``/usr/bin/chromium``, or ``--chromium``) at 1280x720, presses Run review,
waits until the run is finished and every chart is drawn, dismisses the run's notice and saves
the first screen of the Overview. The review takes minutes on two cores, so this is a script and
not a test; ``tests/test_browser_meeting.py`` writes the shrunken test demo's screens to
``docs/screens/table_*.png`` instead, which is why the README's image has its own name.
Nothing leaves the machine: the server listens on 127.0.0.1 and its register is a temporary
file.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

# the browser tests' waits: the run finished, a click that Streamlit's redraw lost repeated
from tests.e2e_utils import (  # noqa: E402
    CHROMIUM_ARGS,
    open_page,
    serving_dashboard,
    start_review_run,
    wait_for_app_run,
)

SIZE = {"width": 1280, "height": 720}
#: the longest a run of the shipped demo may take here (2 shared cores: several minutes)
RUN_MS = 1_800_000


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _shoot(url: str, out: Path, chromium: str) -> int:
    """Run the demo's review in the browser and save the Overview; the decisions shown."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=SIZE).new_page()
        page.set_default_timeout(RUN_MS)
        page.goto(url)
        page.get_by_test_id("stAppViewContainer").wait_for()
        wait_for_app_run(page, RUN_MS)
        page.get_by_text("Review loaded: table").wait_for()
        started = time.perf_counter()
        start_review_run(page, RUN_MS)
        _say(f"review run in the browser: {time.perf_counter() - started:.0f} s")
        open_page(page, "Overview")
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')].every("
            "(c) => c.querySelector('.js-plotly-plot .main-svg'))",
            timeout=RUN_MS,
        )
        errors = page.get_by_test_id("stException")
        if errors.count():
            raise RuntimeError(f"the Overview shows an error: {errors.first.inner_text()[:400]}")
        decisions = page.locator(".sr-line").count()
        if decisions == 0:
            raise RuntimeError("the Overview shows no decision after the run")
        for button in page.locator("[data-testid=stToast] button").all():
            if button.is_visible():
                button.click()
        page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
        page.wait_for_timeout(800)  # plotly's relayout after the first draw, the toast's exit
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()
    return decisions


def main(argv: list[str] | None = None) -> int:
    """Save the screenshot; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screens" / "demo_overview.png")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        # the server's environment without the caller's SYNTHREVIEW_ settings (the shipped
        # demo, as the README shows it), its register a scratch file
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYNTHREVIEW_")}
        env["SYNTHREVIEW_REGISTER"] = str(Path(scratch) / "register.sqlite")
        log_path = Path(scratch) / "server.log"
        with serving_dashboard(log_path, env, start_seconds=120) as (_, url):
            decisions = _shoot(url, args.out, args.chromium)
    _say(f"{args.out}: the Overview at 1280x720 with {decisions} decisions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
