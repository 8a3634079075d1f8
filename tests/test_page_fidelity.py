"""AppTest of the Fidelity page on a small demo review."""

from __future__ import annotations

import re

import pytest
from streamlit.proto.Metric_pb2 import Metric
from streamlit.testing.v1 import AppTest

from synthreview import demo
from tests.conftest import RECORD_ROWS
from tests.page_helpers import (
    chart_text,
    page_after_run,
    run_page,
    run_page_without_data,
    with_empty_candidate,
)


@pytest.fixture(scope="module")
def review():
    """The table demo that ``demo_run`` reviewed (equal data): a test that needs only the
    review does not start the session's run."""
    return demo.tables(seed=0, n_train=RECORD_ROWS)


def _fidelity_page(demo_run) -> AppTest:
    """The Fidelity page after the session's one review of the table demo."""
    return page_after_run("pages/fidelity.py", demo_run[1])


@pytest.mark.slow
def test_fidelity_page_shows_scores_curves_and_tables(review, demo_run):
    at = _fidelity_page(demo_run)
    assert not at.exception
    assert [h.value for h in at.header] == ["Fidelity"]
    assert len(at.error) == 0
    labels = [m.label for m in at.metric]
    assert labels.count("IPα") == len(review.candidates)
    assert all("higher is better" in m.help.lower() for m in at.metric)  # metric registry
    charts = at.get("plotly_chart")
    assert len(charts) == 4  # curves, authenticity histogram, PCA, feature overlay
    assert any("α-Precision" in chart_text(chart) for chart in charts)
    assert any("holdout reference" in chart_text(chart) for chart in charts)
    # PRDC in a data grid (header help), per-feature distances in a static table that wraps
    assert len(at.dataframe) >= 1 and len(at.table) >= 1
    # numbers as text in the registry's format: no float noise in either
    for grid in (at.dataframe[0], at.table[-1]):
        numbers = grid.value.drop(columns=["candidate", "k", "column", "kind"], errors="ignore")
        cells = numbers.to_numpy().ravel()
        assert all(re.fullmatch(r"n/a|-?[\d,]+(\.\d{1,3})?", c) for c in cells), numbers
    column = review.schema.numeric[0]
    at.selectbox(key="fidelity_feature_column").set_value(column).run()
    assert not at.exception
    at.selectbox(key="fidelity_feature_candidate").set_value(review.candidates[-1]).run()
    assert not at.exception


@pytest.mark.slow
def test_a_failed_candidate_shows_its_error_and_the_rest_renders(review):
    broken, name = with_empty_candidate(review)
    at = run_page("pages/fidelity.py", broken)
    assert not at.exception
    assert any(name in e.value for e in at.error)
    assert len([m for m in at.metric if m.label == "IPα"]) == len(review.candidates) - 1


def test_fidelity_page_without_data_points_to_the_data_page():
    at = run_page_without_data("pages/fidelity.py")
    assert not at.exception
    assert any("No data loaded" in w.value for w in at.warning)


@pytest.mark.slow
def test_recall_beyond_the_holdout_is_amber_never_green(review, demo_run):
    """A candidate holding copies of training rows recalls more of them than a fresh real
    sample: its IRβ delta is amber with a warning, never the green of an improvement."""
    at = _fidelity_page(demo_run)
    assert not at.exception
    irb = [m for m in at.metric if m.label == "IRβ"]
    assert len(irb) == len(review.candidates)
    colours = [Metric.MetricColor.Name(m.proto.color) for m in irb]
    assert "GREEN" not in colours, colours
    assert "ORANGE" in colours, [(m.value, m.delta) for m in irb]
    warning = next(w.value for w in at.warning if "Beyond a fresh real sample" in w.value)
    assert "IRβ of" in warning and "memorisation" in warning
    amber = [m for m in irb if Metric.MetricColor.Name(m.proto.color) == "ORANGE"]
    assert all(m.delta.startswith("+") for m in amber)
