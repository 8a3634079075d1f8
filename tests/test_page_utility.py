"""AppTest of the Utility page on a small demo review."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from synthreview import demo
from tests.page_helpers import run_page, run_page_without_data


@pytest.fixture(scope="module")
def review():
    return demo.tables(seed=0, n_train=400)


def _utility_page(review) -> AppTest:
    return run_page("pages/utility.py", review)


@pytest.mark.slow
def test_utility_page_shows_summary_heatmaps_and_efficacy(review):
    at = _utility_page(review)
    assert not at.exception
    assert [h.value for h in at.header] == ["Utility"]
    charts = at.get("plotly_chart")
    assert len(charts) >= 7  # correlations, k-marginal, worst marginal, percentiles, groups, ML, CI
    assert any("heatmap" in chart.proto.spec for chart in charts)
    assert len(at.error) == 0
    at.radio(key="utility_k").set_value(3).run()
    at.selectbox(key="utility_candidate").set_value("marginals").run()
    assert not at.exception


@pytest.mark.slow
def test_utility_page_explains_a_bad_formula_and_still_renders(review):
    at = _utility_page(review)
    at.text_input(key="utility_formula").input("income ~ age + nope").run()
    assert not at.exception
    assert any("unknown column 'nope'" in e.value for e in at.error)
    assert any("No regression formula" in i.value for i in at.info)


def test_utility_page_without_data_points_to_the_data_page():
    at = run_page_without_data("pages/utility.py")
    assert not at.exception
    assert any("No data loaded" in w.value for w in at.warning)
