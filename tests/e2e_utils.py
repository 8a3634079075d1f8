"""Helpers for Playwright tests of the Streamlit app."""

from __future__ import annotations


def wait_for_app_run(page, timeout_ms: int = 120_000) -> None:
    """Block until the websocket is up and the script finished its current run."""
    page.wait_for_timeout(300)  # let a just-triggered rerun start (widgets debounce ~200 ms)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout_ms
    )
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=timeout_ms
    )


def open_page(page, title: str) -> None:
    """Navigate with the sidebar (keeps the session, unlike a URL change)."""
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    wait_for_app_run(page)
