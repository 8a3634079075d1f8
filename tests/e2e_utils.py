"""Helpers for Playwright tests of the Streamlit app."""

from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError


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


def start_review_run(page, timeout_ms: int = 1_500_000) -> None:
    """Press the sidebar's Run review and wait until the run has finished.

    A click that lands while Streamlit redraws the sidebar can be lost (the button is replaced
    under the pointer); the review then never starts and a test would wait for decisions until
    its timeout. So the click is repeated, up to three times, until the run shows (its
    progress panel, or the button disabled while it goes, or decision lines).
    """
    started = (
        "[class*='st-key-review_run_panel'], .sr-line, "
        ".st-key-run_review button:disabled"
    )
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
