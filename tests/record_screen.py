"""One release, one record: the checks that the decision a review shows on the Overview, on the
Audit page, in the downloaded ``report.json`` and in ``report.html`` are the same words (issue 21).

Used by test_browser_record (the demos' stored records) and test_browser_meeting (German credit
uploaded and run in the browser, whose run both its projector walk and its record read).
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from playwright.sync_api import expect

from synthreview.judgement.verdicts import DECISION_STYLE
from tests.e2e_utils import click_keyed, download_keyed, open_page, wait_for_app_run

LONG = 300_000  # ms
REVIEW_MS = 1_500_000  # a whole review on 2 shared cores


def overview_line(page, candidate: str) -> tuple[str, str]:
    open_page(page, "Overview")
    line = page.locator(".sr-line").filter(
        has=page.locator(".sr-name", has_text=re.compile(f"^{re.escape(candidate)}$"))
    )
    expect(line).to_have_count(1, timeout=LONG)
    return (
        line.locator(".sr-badge").inner_text().strip(),
        line.locator(".sr-reason").inner_text().strip(),
    )


def curate_and_confirm(page, timeout: int):
    """Audit page, its candidate chosen: Curate -> Confirm; the decision's locator once the
    confirmed release is computed (within ``timeout`` ms)."""
    click_keyed(page, "audit_curate")
    click_keyed(page, "audit_confirm", timeout)
    # the removed rows (and, where the decision ships, the curated files) appear once the
    # confirmed release is computed (the record could be downloaded before, stating the
    # decision as the run computed it)
    expect(page.locator(".st-key-audit_download_removed button")).to_be_visible(timeout=timeout)
    wait_for_app_run(page, timeout)
    decision = page.locator(".st-key-audit_decision")
    expect(decision).to_be_visible(timeout=timeout)
    return decision


def curate_and_export(page, candidate: str, folder: Path) -> tuple[str, dict, str]:
    """Audit page: pick the candidate, Curate -> Confirm; its decision text, report.json and
    report.html as downloaded."""
    open_page(page, "Audit & export")
    choose_candidate(page, candidate)
    decision = curate_and_confirm(page, REVIEW_MS)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    report = json.loads(download_keyed(page, "audit_download_report_json", folder).read_text())
    html = download_keyed(page, "audit_download_report_html", folder).read_text(encoding="utf-8")
    return decision.inner_text(), report, html


def html_text(html: str) -> str:
    body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())


def record_export(page, candidate: str, folder: Path, stored: Path) -> tuple[str, dict, str]:
    """Audit page of an opened record: pick the candidate (its curation is the record's, Curate
    is disabled); its decision text, and report.json and report.html as downloaded, each the
    stored file byte for byte."""
    open_page(page, "Audit & export")
    choose_candidate(page, candidate)
    curate = page.locator(".st-key-audit_curate button:visible")
    expect(curate).to_have_count(1)  # the shown one: the DOM holds a second copy
    expect(curate).to_be_disabled()
    decision = page.locator(".st-key-audit_decision")
    expect(decision).to_be_visible(timeout=LONG)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    # a table the browser could not read (its Arrow metadata not JSON) is an error with its
    # stack, even inside a collapsed expander
    expect(page.get_by_test_id("stErrorElementStack")).to_have_count(0)
    files = {}
    for name in ("report.json", "report.html"):
        # a Streamlit key's "." is "-" in its CSS class
        key = f"audit_record_download_{name.replace('.', '-')}"
        files[name] = download_keyed(page, key, folder).read_bytes()
        assert files[name] == (stored / name).read_bytes(), name
    return (
        decision.inner_text(),
        json.loads(files["report.json"]),
        files["report.html"].decode("utf-8"),
    )


def choose_candidate(page, candidate: str) -> None:
    page.locator(".st-key-audit_candidate").get_by_role("combobox").click()
    page.get_by_role("option", name=candidate, exact=True).click()
    wait_for_app_run(page, LONG)


def assert_one_record(page, candidate: str, folder: Path, sections: set[str], export) -> dict:
    """The Overview's line, then ``export(page, candidate, folder)``'s decision text,
    report.json and report.html for ``candidate`` state one decision; the curated set has
    ``sections``."""
    badge, reason = overview_line(page, candidate)
    shown, report, html = export(page, candidate, folder)
    page.screenshot(path=str(folder / f"audit_{candidate}.png"))
    filed = report["decisions"][candidate]
    assert DECISION_STYLE[filed["outcome"]].label == badge, (filed, badge)
    assert filed["reason"] == reason
    assert badge in shown and reason in " ".join(shown.split())
    text = html_text(html)
    # the HTML record states the decision and its reason before any evidence
    where = text.find(" ".join(reason.split()))
    assert where >= 0 and badge in text[: where + len(reason) + 200], text[:2000]
    # the curated set was re-evaluated with every section the policy reads
    assert sections <= set(report["curated"][candidate]), sorted(report["curated"][candidate])
    # the Overview still says the same after the confirmation
    assert overview_line(page, candidate) == (badge, reason)
    return report
