"""AppTest helpers shared by the page tests: open a page on a given review, or on no data."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

import app_state

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def run_page(page: str, review, *, timeout: float = 180) -> AppTest:
    """Run the app with ``review`` loaded, switch to ``page`` and run it."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state[app_state.REVIEW_KEY] = review
    at.run()
    return at.switch_page(page).run()


def run_page_without_data(page: str, *, timeout: float = 180) -> AppTest:
    """Run ``page`` with no review loaded (the demo auto-load already spent)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state["_demo_autoloaded"] = True
    at.session_state[app_state.REVIEW_KEY] = None
    at.run()
    return at.switch_page(page).run()
