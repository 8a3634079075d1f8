"""AppTest of the Utility page on a small demo review."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from synthreview import demo
from synthreview.figures import utility as fig
from synthreview.figures.text import markdown_text
from tests.conftest import RECORD_ROWS
from tests.page_helpers import page_after_run, run_page_without_data


@pytest.fixture(scope="module")
def review():
    """The table demo that ``demo_run`` reviewed (equal data): a test that needs only the
    review does not start the session's run."""
    return demo.tables(seed=0, n_train=RECORD_ROWS)


def _utility_page(demo_run) -> AppTest:
    """The Utility page after the session's one review of the table demo."""
    return page_after_run("pages/utility.py", demo_run[1])


@pytest.mark.slow
def test_utility_page_shows_summary_heatmaps_and_efficacy(review, demo_run):
    at = _utility_page(demo_run)
    assert not at.exception
    assert [h.value for h in at.header] == ["Utility"]
    charts = at.get("plotly_chart")
    assert len(charts) >= 7  # correlations, k-marginal, worst marginal, percentiles, groups, ML, CI
    assert any("heatmap" in chart.proto.spec for chart in charts)
    assert len(at.error) == 0
    _summary_renders(at, review)
    at.radio(key="utility_k").set_value(3).run()
    at.selectbox(key="utility_candidate").set_value("mode_collapse").run()
    assert not at.exception


def _summary_renders(at: AppTest, review) -> None:
    """The Utility summary: text cells only (no tooltip HTML, no None), every candidate a
    column that fits 1280 px, the colours' caption generated from the policy."""
    # a static table (headers and cells wrap at 1280 px), the metric labels as its row labels
    (table,) = [t for t in at.table if fig.BETTER in t.value.columns]
    frame = table.value
    names = [markdown_text(n) for n in review.candidates]
    assert list(frame.columns) == [fig.BETTER, *names, fig.REFERENCE]
    cells = [str(c) for c in frame.to_numpy().ravel()]
    assert not any("<span" in c or "pd-t" in c or c in ("None", "nan", "NULL") for c in cells)
    assert any("Tolerances from the release policy" in c.value for c in at.caption)
    assert any("What each row means" in e.label for e in at.expander)


@pytest.mark.slow
def test_options_change_only_on_input_and_make_utility_stale(demo_run):
    at = _utility_page(demo_run)
    before = at.session_state["_options"]
    at.run()  # re-opening the page never rewrites the options (no recompute loop)
    assert at.session_state["_options"] == before
    assert not any("out of date" in w.value for w in at.warning)
    at.text_input(key="utility_formula").input("income ~ age + nope").run()
    assert not at.exception
    assert any("unknown column" in e.value for e in at.error)
    at.selectbox(key="utility_target").set_value("sex").run()
    assert any("Utility results are out of date" in w.value for w in at.warning)
    assert at.get("plotly_chart")  # the previous numbers stay on screen meanwhile


def test_utility_page_without_data_points_to_the_data_page():
    at = run_page_without_data("pages/utility.py")
    assert not at.exception
    assert any("No data loaded" in w.value for w in at.warning)
