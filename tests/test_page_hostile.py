"""User text stays text: every page and figure on a review whose names and cells are hostile.

The candidates' names, six column names, the cells of one categorical column and (for traces)
the subject ids carry Markdown (bold, a link, an image), HTML (``<b>``, ``<a href>``,
``<img>``), a bare URL and a plotly template variable (:mod:`tests.hostile`). Each page is
walked with AppTest and every string that Streamlit renders as Markdown (markdown, captions,
alerts, tab, expander, metric and widget labels and help, radio options, column help,
``st.table`` cells) must hold no live construct; every string of every plotly figure must hold
no tag or template variable from the data. Each page must also show the hostile text (escaped),
so the checks look at the strings that matter. The figure builders are checked one by one in
``test_figure_builders_escape_user_text``.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from synthreview.figures import audit as audit_fig
from synthreview.figures import fidelity as fidelity_fig
from synthreview.figures import frontier as frontier_fig
from synthreview.figures import glucose as glucose_fig
from synthreview.figures import privacy as privacy_fig
from synthreview.figures import utility as utility_fig
from synthreview.figures.style import apply_style
from synthreview.figures.text import markdown_text, plot_text
from synthreview.io.tables import align, read_table
from synthreview.io.traces import align_traces, load_traces
from synthreview.options import default_options
from synthreview.review import evaluate
from tests.hostile import (
    HOSTILE_CELLS,
    candidate_names,
    hostile,
    live_markdown,
    live_plot_text,
    write_tables,
    write_traces,
)
from tests.page_helpers import run_page, spec_strings

PORT = 9  # discard port: nothing listens, and AppTest has no browser to fetch anything
#: a regression on a hostile categorical column (its levels become coefficient names)
FORMULA = "hours_per_week ~ capital_gain + `**ZQXs**`"
TABLE_PAGES = (
    "pages/overview.py",
    "pages/data.py",
    "pages/fidelity.py",
    "pages/privacy.py",
    "pages/utility.py",
    "pages/glossary.py",
)


@pytest.fixture(scope="module")
def table_review(tmp_path_factory):
    paths = write_tables(tmp_path_factory.mktemp("hostile_tables"), PORT)
    names = candidate_names(PORT)
    candidates = [
        read_table(paths[file], role="synthetic", name=name)
        for file, name in zip(("copula", "noisy_copy"), names, strict=True)
    ]
    return align(
        read_table(paths["real"], role="real"),
        candidates,
        holdout=read_table(paths["holdout"], role="holdout"),
    )


@pytest.fixture(scope="module")
def trace_review(tmp_path_factory):
    paths = write_traces(tmp_path_factory.mktemp("hostile_traces"), PORT)
    real = load_traces(paths["real"], name="real")
    holdout = load_traces(paths["holdout"], name="holdout")
    copy = load_traces(paths["copy"], name=candidate_names(PORT)[1])
    return align_traces(real, [copy], holdout=holdout)


# --- what a page renders as Markdown, and the strings of its figures ----------------------------
def _markdown_sources(at) -> list[str]:
    """Every string the page hands to Streamlit's Markdown renderer."""
    sources: list[str] = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success", "toast"):
        sources += [str(element.value) for element in at.get(kind)]
    sources += [str(t.label) for t in at.tabs] + [str(e.label) for e in at.expander]
    for metric in at.metric:
        sources += [metric.label, metric.proto.help]
    for kind in (
        "selectbox", "multiselect", "radio", "text_input", "number_input", "slider", "toggle",
        "checkbox", "button", "segmented_control", "file_uploader", "data_editor",
    ):  # fmt: skip
        for widget in at.get(kind):
            sources += [str(getattr(widget, "label", "")), str(getattr(widget.proto, "help", ""))]
    for kind in ("radio", "segmented_control"):  # their options render Markdown too
        for widget in at.get(kind):
            sources += [str(option) for option in widget.options]
    for frame in at.dataframe:
        columns = json.loads(frame.proto.columns or "{}")
        sources += [str(c.get("help", "")) for c in columns.values() if isinstance(c, dict)]
    for table in at.table:  # st.table renders every cell, header and index as Markdown
        value = table.value
        sources += [str(v) for v in [*value.index, *value.columns, *value.to_numpy().ravel()]]
    return sources


def _plot_strings(at) -> list[str]:
    """Every string of every plotly figure on the page, ``customdata`` excepted (data the
    page reads back from a selection, never drawn)."""
    return [
        text
        for chart in at.get("plotly_chart")
        for text in spec_strings(json.loads(chart.proto.spec), skip=("customdata",))
    ]


def _check(at, page: str, *, shows_names: bool = True) -> None:
    assert not at.exception, (page, at.exception)
    sources = _markdown_sources(at)
    live = {s: live_markdown(s) for s in sources if live_markdown(s)}
    assert not live, f"{page}: Markdown renders user text: {live}"
    plots = _plot_strings(at)
    marked = {s: live_plot_text(s) for s in plots if live_plot_text(s)}
    assert not marked, f"{page}: plotly renders user text: {marked}"
    if shows_names:  # the page does show the hostile text, escaped
        assert any("ZQX" in s for s in sources + plots), f"{page} shows no hostile text"


# --- pages ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_table_pages_render_hostile_names_and_cells_as_text(table_review):
    at = run_page("pages/overview.py", table_review, timeout=600)
    _check(at, "pages/overview.py")
    at.toggle(key="presentation_mode").set_value(True).run()  # the slide table is st.table
    assert at.table, "presentation mode shows the key numbers as st.table"
    _check(at, "overview (presentation mode)")
    at.toggle(key="presentation_mode").set_value(False).run()
    for page in TABLE_PAGES[1:]:
        at.switch_page(page).run()
        _check(at, page, shows_names=page != "pages/glossary.py")
    # the drawn per-column figures on the hostile columns and cells
    at.switch_page("pages/fidelity.py").run()
    at.selectbox(key="fidelity_feature_column").set_value(HOSTILE_CELLS).run()
    _check(at, "fidelity (hostile categories)")
    overlay = " ".join(_plot_strings(at))
    assert plot_text(hostile(PORT)["html"]) in overlay, "category cells reach the chart, escaped"
    at.switch_page("pages/utility.py").run()
    at.selectbox(key="utility_percentile_column").set_value(hostile(PORT)["url"]).run()
    _check(at, "utility (hostile numeric column)")


@pytest.mark.slow
def test_glucose_page_renders_hostile_subject_ids_as_text(trace_review):
    at = run_page("pages/glucose.py", trace_review, timeout=600)
    _check(at, "pages/glucose.py")
    warnings = [w.value for w in at.warning]
    # the candidate copies the real days: its memorised subjects are named in a warning
    assert any("reproduced" in w and "ZQX" in w for w in warnings), warnings
    for page in ("pages/overview.py", "pages/data.py", "pages/privacy.py", "pages/fidelity.py"):
        at.switch_page(page).run()
        _check(at, page)


# --- figure builders -----------------------------------------------------------------------------
def _figure_strings(fig: go.Figure) -> list[str]:
    return spec_strings(json.loads(fig.to_json()), skip=("customdata",))


#: builders that draw no user text (attack names and numbers only)
NO_USER_TEXT = {"roc_overlay"}


def _assert_escaped(fig: go.Figure, what: str) -> None:
    strings = _figure_strings(fig)
    marked = {s: live_plot_text(s) for s in strings if live_plot_text(s)}
    assert not marked, f"{what}: {marked}"
    if what not in NO_USER_TEXT:
        assert any("ZQX" in s for s in strings), f"{what} draws none of the hostile names"


def test_plot_text_and_markdown_text_leave_nothing_live():
    for text in [*hostile(PORT).values(), *candidate_names(PORT), "www.example.org a@b.org"]:
        assert not live_plot_text(plot_text(text))
        assert not live_markdown(markdown_text(text))
        assert "<" not in plot_text(text) and "%{" not in plot_text(text)
    assert markdown_text("a\nb") == "a b"
    assert (
        apply_style(go.Figure(), title="<b>ZQXb</b>").layout.title.text == "&lt;b&gt;ZQXb&lt;/b&gt;"
    )


def _builders() -> set[str]:
    """Every public function under ``synthreview/figures`` that returns a figure."""
    modules = (audit_fig, fidelity_fig, frontier_fig, glucose_fig, privacy_fig, utility_fig)
    return {
        name
        for module in modules
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if function.__module__ == module.__name__
        and not name.startswith("_")
        and inspect.signature(function).return_annotation in ("go.Figure", go.Figure)
    }


@pytest.mark.slow
def test_figure_builders_escape_user_text(table_review, trace_review):
    """Every figure builder on results computed from the hostile data (or, for the glucose
    builders, on arrays named after hostile candidates)."""
    h = hostile(PORT)
    options = replace(
        default_options(table_review),
        groups=(h["image"], "sex"),
        quasi_identifiers=(h["image"], "sex"),
        formula=FORMULA,
    )
    report = evaluate(table_review, sections=("fidelity", "privacy", "utility"), options=options)
    names = table_review.candidates
    fidelity = {n: c.fidelity for n, c in report.candidates.items()}
    privacy = {n: c.privacy for n, c in report.candidates.items()}
    utility = {n: c.utility for n, c in report.candidates.items()}
    values = {
        "real": table_review.real.frame[HOSTILE_CELLS],
        names[0]: table_review.synthetic[names[0]].frame[HOSTILE_CELLS],
    }
    detail = utility[names[0]].candidate
    content = {n: c.to_dict() for n, c in report.candidates.items()}
    verdict = {"rules": {h["html"]: {"verdict": "pass", "value": 0.1}}, "overall": "pass"}
    points = [
        frontier_fig.FrontierPoint(names[0], 0.1, 0.9, "candidate", names[0]),
        frontier_fig.FrontierPoint(f"{names[0]} (curated)", 0.05, 0.8, "curated", names[0]),
    ]
    traces = trace_review.traces
    glucose_name = trace_review.candidates[0]
    shown = {"real": traces["real"].values, glucose_name: traces[glucose_name].values}
    variance = pd.DataFrame({"variance": np.arange(5.0)})
    profile = SimpleNamespace(
        minutes=np.arange(0, 1440, 15),
        percentiles={q: np.full(96, 100.0 + q) for q in (5, 25, 50, 75, 95)},
    )
    figures = {
        "precision_recall_curves": fidelity_fig.precision_recall_curves(fidelity),
        "authenticity_histogram": fidelity_fig.authenticity_histogram(fidelity),
        "feature_overlay": fidelity_fig.feature_overlay(
            values, column=h["html"], kind="categorical", candidates=names
        ),
        "pca_scatter": fidelity_fig.pca_scatter(
            pd.DataFrame(
                {
                    "source": [names[0], "real"],
                    "PC1": [0.0, 1.0],
                    "PC2": [1.0, 0.0],
                    "row_id": [0, 1],
                }
            ),
            names,
        ),
        "roc_overlay": privacy_fig.roc_overlay(privacy[names[0]]),
        "dcr_histogram": privacy_fig.dcr_histogram(privacy),
        "qi_risk_histogram": privacy_fig.qi_risk_histogram(privacy),
        "group_tpr_bars": privacy_fig.group_tpr_bars(privacy),
        "correlation_heatmaps": utility_fig.correlation_heatmaps(detail.correlation, name=names[0]),
        "k_marginal_bars": utility_fig.k_marginal_bars(utility),
        "marginal_heatmap": utility_fig.marginal_heatmap(
            next(
                m
                for found in detail.k_marginal.worst.values()
                for m in found
                if any("ZQX" in c or HOSTILE_CELLS in c for c in m.columns)
            )
        ),
        "percentile_figure": utility_fig.percentile_figure(utility, h["url"]),
        "group_error_bars": utility_fig.group_error_bars(utility),
        "efficacy_bars": utility_fig.efficacy_bars(utility),
        "ci_forest": utility_fig.ci_forest(utility),
        "fidelity_curves": audit_fig.fidelity_curves(content),
        "before_after_bars": audit_fig.before_after_bars(content, content),
        "rule_overlap_bars": audit_fig.rule_overlap_bars([{"rules": h["html"], "n_rows": 3}]),
        "scorecard_table": audit_fig.scorecard_table(dict.fromkeys(names, verdict)),
        "privacy_utility_frontier": frontier_fig.privacy_utility_frontier(points),
        "trace_heatmaps": glucose_fig.trace_heatmaps(shown),
        "trace_pca": glucose_fig.trace_pca(shown),
        "variance_distributions": glucose_fig.variance_distributions(
            {"real": variance, glucose_name: variance}
        ),
        "clarke_grid": glucose_fig.clarke_grid(
            np.array([100.0]), np.array([110.0]), title=f"trained on {glucose_name}"
        ),
        "clarke_zone_bars": glucose_fig.clarke_zone_bars(
            {f"{glucose_name} (TSTR)": dict.fromkeys("ABCDE", 20.0)}
        ),
        "forecast_rmse": glucose_fig.forecast_rmse({glucose_name: 20.0}, trtr_rmse=18.0),
        "agp_overlay": glucose_fig.agp_overlay({"real": profile, glucose_name: profile}),
    }
    assert set(figures) == _builders(), "a figure builder is not checked"
    for what, fig in figures.items():
        _assert_escaped(fig, what)
