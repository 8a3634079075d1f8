"""AppTest of the Privacy page on a small demo review."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from synthreview import demo
from tests.page_helpers import chart_text, run_page, run_page_without_data, with_empty_candidate


@pytest.fixture(scope="module")
def review():
    return demo.tables(seed=0, n_train=300)


def _privacy_page(review) -> AppTest:
    return run_page("pages/privacy.py", review, timeout=240)


@pytest.mark.slow
def test_privacy_page_shows_roc_dcr_tables_and_closest_pairs(review):
    at = _privacy_page(review)
    assert not at.exception
    assert [h.value for h in at.header] == ["Privacy"]
    assert len(at.error) == 0
    labels = [m.label for m in at.metric]
    assert labels.count("DCR share") == len(review.candidates)
    specs = [chart_text(chart) for chart in at.get("plotly_chart")]
    assert sum("chance" in spec for spec in specs) == 2 * len(review.candidates)  # ROC + log view
    assert any("AUC" in spec for spec in specs)
    assert any("holdout → train" in spec for spec in specs)
    assert len(at.dataframe) >= 5  # attacks, WP29, vulnerable records, l-diversity, pairs
    at.selectbox(key="privacy_pairs_candidate").set_value(review.candidates[-1]).run()
    assert not at.exception
    column = review.schema.numeric[0]
    at.selectbox(key="privacy_sensitive").set_value(column).run()
    assert not at.exception
    assert at.selectbox(key="privacy_sensitive").value == column
    assert any("ε ≥" in m.value for m in at.markdown)


@pytest.mark.slow
def test_a_failed_candidate_shows_its_error_and_the_rest_renders(review):
    broken, name = with_empty_candidate(review)
    at = _privacy_page(broken)
    assert not at.exception
    assert any(name in e.value for e in at.error)
    assert [m.label for m in at.metric].count("DCR share") >= len(review.candidates) - 1


def test_privacy_page_without_data_points_to_the_data_page():
    at = run_page_without_data("pages/privacy.py")
    assert not at.exception
    assert any("No data loaded" in w.value for w in at.warning)
