"""AppTest of the Overview page: candidate table, policy lights and upload, presentation mode."""

from __future__ import annotations

from unittest.mock import patch

import pytest

from tests.test_page_audit import fake_report, open_page, small_review


@pytest.fixture
def review():
    review = small_review()
    report = fake_report(review)
    with patch("app_state.get_report", return_value=report):
        yield review


def test_table_has_reference_row_and_verdicts(review):
    at = open_page(review, None, page="pages/overview.py").run()
    assert not at.exception
    table = at.dataframe[-1].value
    assert list(table.index) == ["holdout (reference)", "cand", "other"]
    assert table.loc["cand", "verdict"] == "🟢 pass"
    assert table.loc["holdout (reference)", "IPα"] == "0.95"
    assert table.loc["cand", "MIA AUC (max)"] == "0.55"
    assert len(at.get("plotly_chart")) == 3  # scorecard, α and β curves


def test_uploaded_policy_changes_the_verdict(review):
    at = open_page(review, None, page="pages/overview.py").run()
    strict = b"[policy]\nname = 'strict'\n[rules.mia_auc]\npass = 0.5\nfail = 0.52\n"
    at.file_uploader(key="overview_policy_upload").upload("strict.toml", strict, "text/plain").run()
    assert not at.exception
    table = at.dataframe[-1].value
    assert table.loc["cand", "verdict"] == "🔴 fail"
    assert table.loc["cand", "failed rules"] == "mia_auc"


def test_bad_policy_is_reported_in_place(review):
    at = open_page(review, None, page="pages/overview.py").run()
    bad = b"[rules.mia_auc]\npass = 0.9\nfail = 0.1\n"
    at.file_uploader(key="overview_policy_upload").upload("bad.toml", bad, "text/plain").run()
    assert not at.exception
    assert any("must not be above" in e.value for e in at.error)
    assert at.dataframe[-1].value.loc["cand", "verdict"] == "🟢 pass"  # default policy kept


def test_presentation_mode_hides_controls_and_enlarges(review):
    at = open_page(review, None, page="pages/overview.py").run()
    at.toggle(key="presentation_mode").set_value(True).run()
    assert not at.exception
    assert not at.dataframe  # static, CSS-sized table instead of the grid
    assert at.table[0].value.loc["cand", "verdict"] == "🟢 pass"
    styles = [h.proto.body for h in at.get("html")]
    assert any("stSidebar" in s and "display: none" in s for s in styles)
    assert not any("http" in s for s in styles)  # no fonts or files from the network
    charts = at.get("plotly_chart")
    assert len(charts) == 3
