"""report.html opens in headless Chromium with the network cut off, and every figure renders."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from synthreview import demo
from synthreview.options import ReviewOptions
from synthreview.release.bundle import write_files
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate
from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def report_html(tmp_path_factory):
    review = demo.tables(seed=2, n_train=300, n_holdout=300)
    review = review.__class__(
        **{
            **review.__dict__,
            "synthetic": {n: review.synthetic[n] for n in ("copula", "noisy_copy")},
        }
    )
    report = evaluate(review, options=ReviewOptions(max_attack=300, n_bootstrap=20), seed=0)
    release = review_release(review, report, curate=True)
    out = tmp_path_factory.mktemp("release")
    write_files(out, release.files)
    return out / "report.html"


def test_report_html_renders_offline(page, report_html):
    outside: list[str] = []

    def block(route):
        outside.append(route.request.url)
        route.abort()

    page.route("http://**/*", block)
    page.route("https://**/*", block)
    page.set_default_timeout(60_000)
    page.goto(report_html.as_uri())
    graphs = page.locator(".plotly-graph-div")
    expect(graphs.first).to_be_visible()
    n_graphs = graphs.count()
    assert n_graphs >= 3  # scorecard, α and β curves at least
    for i in range(n_graphs):
        expect(graphs.nth(i).locator(".main-svg").first).to_be_attached()
    assert outside == []  # nothing was fetched from the network
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1300, "height": 2400})
    page.screenshot(path=str(ARTIFACTS / "report_html.png"), full_page=True)
    text = page.locator("body").inner_text()
    assert "noisy_copy" in text and "copula" in text
