"""Full demo review time and page-switch time of the dashboard (AppTest, no browser).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_pages.py [--rows 5000] [--repeats 3]

Loads the bundled table demo as the Data page does, presses Run review (every section for every
candidate, then the curated versions of the candidates that fail the policy), then switches
between the pages ``--repeats`` times and prints the seconds each page's script took. A page
only reads the stored result, so a switch costs the redraw; the browser adds its own
rendering (``tests/test_browser.py`` measures the switch in Chromium). Not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

import app_state  # noqa: E402
from synthreview import demo  # noqa: E402

PAGES = ("overview", "fidelity", "privacy", "utility", "audit", "data", "glossary")


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    """Run the timings and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=demo.DEMO_TRAIN_ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    review = demo.tables(n_train=args.rows) if args.rows != demo.DEMO_TRAIN_ROWS else demo.tables()
    _say(f"demo: {len(review.candidates)} candidates x {review.real.n_rows} rows")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=3600)
    at.session_state[app_state.REVIEW_KEY] = review
    at.session_state[app_state.DEMO_AUTOLOADED_KEY] = True
    at.run()
    started = time.perf_counter()
    at.button(key="run_review").click().run()
    _say(f"{'full review (Run review)':<32} {time.perf_counter() - started:7.1f} s")
    timings = at.session_state["_step_seconds"]
    for section, seconds in timings.items():
        _say(f"  {section:<30} {sum(seconds):7.1f} s over {len(seconds)} step(s)")
    if at.exception:
        _say(f"exception: {at.exception}")
    switch: dict[str, list[float]] = {p: [] for p in PAGES}
    for _ in range(args.repeats):
        for page in PAGES:
            started = time.perf_counter()
            at.switch_page(f"pages/{page}.py").run()
            switch[page].append(time.perf_counter() - started)
    for page, seconds in switch.items():
        _say(f"{'switch to ' + page:<32} {statistics.median(seconds):7.2f} s (median)")


if __name__ == "__main__":
    main()
