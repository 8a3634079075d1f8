"""AppTest of the Glucose page on the bundled glucose demo."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from synthreview import demo
from synthreview.figures.text import markdown_text
from tests.page_helpers import chart_text, page_after_run, run_page


@pytest.fixture(scope="module")
def review():
    return demo.traces(seed=0)


def _glucose_page(review) -> AppTest:
    return run_page("pages/glucose.py", review, timeout=300)


@pytest.mark.slow
def test_glucose_page_shows_heatmaps_tables_and_clarke_grid(review):
    at = _glucose_page(review)
    assert not at.exception
    assert [h.value for h in at.header] == ["Glucose traces"]
    specs = [chart_text(chart) for chart in at.get("plotly_chart")]
    assert any("heatmap" in s for s in specs)
    assert sum("Clarke error grid" in s for s in specs) == len(review.candidates)
    assert any("zone boundaries" in s for s in specs)
    # static tables (cells wrap, nothing scrolls sideways at 1280 px): per candidate glycemic,
    # consensus, episodes, day, night and two attack tables; plus AGP distances, fidelity
    # scores, per-person privacy. Data grids: Clarke zones per candidate; motifs, point
    # accuracy, per-subject rows, plausibility
    n = len(review.candidates)
    subheaders = [h.value for h in at.subheader]
    assert len(at.table) == 7 * n + 3
    assert len(at.dataframe) == n + 4
    shown = [str(v) for t in at.table for v in [*t.value.index, *t.value.to_numpy().ravel()]]
    noise = [v for v in shown if re.search(r"\d\.\d{5,}", v)]
    assert not noise, noise[:5]
    assert not {"True", "False", "true", "false", "nan", "None"} & set(shown)
    glycemic = at.table[0].value
    assert glycemic.index[0] == markdown_text("Mean glucose (mg/dL)")
    assert set(glycemic[markdown_text("differs from real (p < 0.05)")]) <= {"yes", "no"}
    assert re.fullmatch(r"\d+\.\d", glycemic.iloc[0, 0]), glycemic.iloc[0, 0]  # 138.3
    # per person: one row per measure, one column per candidate
    per_person = at.table[-1].value
    assert list(per_person.columns) == [markdown_text(c) for c in review.candidates]
    assert "Privacy per person" in subheaders and "Plausibility of the traces" in subheaders
    assert "Clinical consensus: time in ranges, variability, risk" in subheaders
    assert "Ambulatory glucose profile" in subheaders
    assert any("Ambulatory glucose profile" in s for s in specs), "AGP chart"
    assert any("Parkes zones (type 1)" in s for s in specs), "Parkes chart"
    # tab labels are Markdown: names are shown as text (escaped)
    labels = [markdown_text(n) for n in review.candidates]
    assert [t.label for t in at.tabs][: len(review.candidates)] == labels
    assert not at.error, [e.value for e in at.error]


@pytest.mark.slow
def test_glucose_page_points_table_reviews_to_the_data_page(demo_run):
    at = page_after_run("pages/glucose.py", demo_run[1], timeout=120)
    assert not at.exception
    assert any("glucose" in info.value for info in at.info)
    assert not at.get("plotly_chart")


@pytest.mark.slow
def test_a_failing_candidate_shows_an_error_and_the_rest_renders(review):
    broken = dict(review.traces)
    name = review.candidates[0]
    broken[name] = broken[name].subset([0])  # a single trace cannot be reviewed
    at = _glucose_page(replace(review, traces=broken))
    assert not at.exception
    assert any(markdown_text(name) in e.value for e in at.error)
    assert [t.label for t in at.tabs][:2] == [markdown_text(n) for n in review.candidates[1:]]
    assert len(at.get("plotly_chart")) > 5
