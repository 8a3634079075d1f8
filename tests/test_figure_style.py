"""Every figure builder follows the shared-screen style of :mod:`synthreview.figures.style`.

On results computed from a small demo review (and small glucose arrays): the legend sits below
the plot area in a bottom margin large enough for its rows (or beside the plot, right of the
axes), the title at the top, so the two never meet; tick, axis-title and legend text is at
least 16 px and dark; no axis or colour bar writes SI suffixes ("600µ"). The ROC figure lists
every attack by its registry label.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from synthreview import demo
from synthreview.figures import audit as audit_fig
from synthreview.figures import fidelity as fidelity_fig
from synthreview.figures import frontier as frontier_fig
from synthreview.figures import glucose as glucose_fig
from synthreview.figures import privacy as privacy_fig
from synthreview.figures import utility as utility_fig
from synthreview.figures.style import (
    AXIS_SPACE_PX,
    FONT_SIZE,
    LEGEND_ROW_PX,
    apply_style,
    legend_entries,
    legend_rows,
)
from synthreview.figures.text import plot_text
from synthreview.metrics.privacy.membership import ATTACK_LABELS
from synthreview.options import default_options
from synthreview.review import evaluate

MODULES = (audit_fig, fidelity_fig, frontier_fig, glucose_fig, privacy_fig, utility_fig)
#: the smallest text a projected chart may use (presentation and normal mode alike)
MIN_FONT_PX = 16
#: Streamlit's chart-theme grey that a projector washes out
STREAMLIT_GREY = "#808495"
#: the widest a legend entry may be drawn and still fit a full-width chart at 1280 px
MAX_ENTRY_PX = 800


def _builders() -> set[str]:
    """Every public function under ``synthreview/figures`` that returns a figure."""
    return {
        name
        for module in MODULES
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if function.__module__ == module.__name__
        and not name.startswith("_")
        and inspect.signature(function).return_annotation in ("go.Figure", go.Figure)
    }


@pytest.fixture(scope="module")
def report():
    review = demo.tables(seed=0, n_train=200)
    # quasi-identifiers named, so the disclosure figures have data (groups: race and sex)
    options = replace(default_options(review), quasi_identifiers=("age", "sex", "race"))
    result = evaluate(review, sections=("fidelity", "privacy", "utility"), options=options)
    return review, result


@pytest.fixture(scope="module")
def figures(report) -> dict[str, go.Figure]:
    review, result = report
    names = review.candidates
    fidelity = {n: c.fidelity for n, c in result.candidates.items()}
    privacy = {n: c.privacy for n, c in result.candidates.items()}
    utility = {n: c.utility for n, c in result.candidates.items()}
    column = review.schema.categorical[0]
    values = {"real": review.real.frame[column], names[0]: review.synthetic[names[0]].frame[column]}
    detail = utility[names[1]].candidate
    content = {n: c.to_dict() for n, c in result.candidates.items()}
    verdict = {"rules": {"mia_auc": {"verdict": "pass", "value": 0.1}}, "overall": "pass"}
    points = [
        frontier_fig.FrontierPoint(names[0], 0.1, 0.9, "candidate", names[0]),
        frontier_fig.FrontierPoint(f"{names[0]} (curated)", 0.05, 0.8, "curated", names[0]),
        frontier_fig.FrontierPoint(names[1], 0.3, 0.95, "candidate", names[1]),
    ]
    rng = np.random.default_rng(0)
    traces = {source: 120 + 30 * rng.standard_normal((40, 288)) for source in ("real", "gan")}
    variance = {s: pd.DataFrame({"variance": 1e-4 * rng.random(30)}) for s in traces}
    profile = SimpleNamespace(
        minutes=np.arange(0, 1440, 15),
        percentiles={q: np.full(96, 100.0 + q) for q in (5, 25, 50, 75, 95)},
    )
    reference = 40 + 300 * rng.random(200)
    return {
        "precision_recall_curves": fidelity_fig.precision_recall_curves(fidelity),
        "authenticity_histogram": fidelity_fig.authenticity_histogram(fidelity),
        "feature_overlay": fidelity_fig.feature_overlay(
            values, column=column, kind="categorical", candidates=names
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
        "roc_overlay": privacy_fig.roc_overlay(privacy[names[1]]),
        "dcr_histogram": privacy_fig.dcr_histogram(privacy),
        "qi_risk_histogram": privacy_fig.qi_risk_histogram(privacy),
        "group_tpr_bars": privacy_fig.group_tpr_bars(privacy),
        "correlation_heatmaps": utility_fig.correlation_heatmaps(detail.correlation, name=names[1]),
        "k_marginal_bars": utility_fig.k_marginal_bars(utility),
        "marginal_heatmap": utility_fig.marginal_heatmap(detail.k_marginal.worst[2][0]),
        "percentile_figure": utility_fig.percentile_figure(utility, review.schema.numeric[0]),
        "group_error_bars": utility_fig.group_error_bars(utility),
        "efficacy_bars": utility_fig.efficacy_bars(utility),
        "ci_forest": utility_fig.ci_forest(utility),
        "fidelity_curves": audit_fig.fidelity_curves(content),
        "before_after_bars": audit_fig.before_after_bars(content, content),
        "rule_overlap_bars": audit_fig.rule_overlap_bars(
            [{"rules": "drop_exact_copy", "n_rows": 3}]
        ),
        "scorecard_table": audit_fig.scorecard_table(dict.fromkeys(names, verdict)),
        "privacy_utility_frontier": frontier_fig.privacy_utility_frontier(points),
        "trace_heatmaps": glucose_fig.trace_heatmaps(traces),
        "trace_pca": glucose_fig.trace_pca(traces),
        "variance_distributions": glucose_fig.variance_distributions(variance),
        "clarke_grid": glucose_fig.clarke_grid(
            reference, reference + 20 * rng.standard_normal(200)
        ),
        "clarke_zone_bars": glucose_fig.clarke_zone_bars(
            {
                "gan (TSTR)": dict.fromkeys("ABCDE", 20.0),
                "real (TRTR)": dict.fromkeys("ABCDE", 20.0),
            }
        ),
        "forecast_rmse": glucose_fig.forecast_rmse({"gan": 20.0}, trtr_rmse=18.0),
        "agp_overlay": glucose_fig.agp_overlay({"real": profile, "gan": profile}),
    }


def _axes(fig: go.Figure) -> list:
    layout = fig.layout
    return [layout[key] for key in layout if key.startswith(("xaxis", "yaxis"))]


def _dark(color: str | None) -> bool:
    """Whether a ``#rrggbb`` colour is dark enough for text on white (luminance < 0.25)."""
    if color is None or not color.startswith("#") or len(color) != 7:
        return False
    r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.25


@pytest.mark.slow
def test_every_builder_is_checked(figures):
    assert set(figures) == _builders(), "a figure builder is not checked"


@pytest.mark.slow
def test_legends_never_meet_titles(figures):
    for what, fig in figures.items():
        entries = legend_entries(fig)
        if not entries:
            continue
        legend, margin = fig.layout.legend, fig.layout.margin
        beside = legend.x is not None and legend.x >= 1 and legend.xanchor == "left"
        if beside:
            # right of the axes, in a right margin wide enough for the entries
            assert legend.orientation == "v" and margin.r >= 200, what
            continue
        # below the plot area, the title at the top of the figure
        assert legend.yref == "container" and legend.y == 0 and legend.yanchor == "bottom", what
        assert margin.b >= AXIS_SPACE_PX + LEGEND_ROW_PX * legend_rows(entries), what
        title = fig.layout.title
        if title.text:
            assert title.yref == "container" and title.y == 1 and title.yanchor == "top", what
            assert margin.t >= 60, what


@pytest.mark.slow
def test_fonts_are_large_and_dark(figures):
    for what, fig in figures.items():
        assert fig.layout.legend.font.size >= MIN_FONT_PX, what
        assert _dark(fig.layout.legend.font.color), what
        for axis in _axes(fig):
            assert axis.tickfont.size >= MIN_FONT_PX, (what, axis.tickfont)
            assert _dark(axis.tickfont.color), (what, axis.tickfont)
            assert axis.tickfont.color.lower() != STREAMLIT_GREY


@pytest.mark.slow
def test_numbers_have_no_si_suffixes(figures):
    for what, fig in figures.items():
        for axis in _axes(fig):
            assert axis.exponentformat == "none", (what, axis.exponentformat)
        for trace in fig.data:
            if "colorbar" in trace and trace.showscale is not False:
                assert trace.colorbar.exponentformat == "none", what


@pytest.mark.slow
def test_roc_legend_lists_every_attack_by_its_label(report, figures):
    _, result = report
    attacks = [
        a for a in result.candidates["noisy_copy"].privacy.membership_inference if a.error is None
    ]
    assert len(attacks) == len(ATTACK_LABELS)  # the demo runs every attack
    for fig in (
        figures["roc_overlay"],
        privacy_fig.roc_overlay(result.candidates["noisy_copy"].privacy, log_scale=True),
    ):
        entries = legend_entries(fig)
        for attack in attacks:
            label = plot_text(ATTACK_LABELS[attack.attack])
            assert any(e.startswith(f"{label}: AUC ") for e in entries), label
            # no attack id ("nn_seeker", "gan_leaks_cal", "nndr") where the room reads
            names = [e.split(": AUC ")[0] for e in entries]
            assert attack.attack not in names, names
            assert not any(attack.attack in n for n in names if "_" in attack.attack), names
        assert "chance" in entries
        assert all(40 + 0.6 * FONT_SIZE * len(e) <= MAX_ENTRY_PX for e in entries), entries
        # the plot keeps its height: the legend rows are added below it
        rows = legend_rows(entries)
        assert rows >= len(attacks) // 2
        assert fig.layout.height >= 480 + LEGEND_ROW_PX * rows


def test_legend_rows_pack_entries_like_a_horizontal_legend():
    assert legend_rows([]) == 0
    assert legend_rows(["a", "b", "c"]) == 1
    assert legend_rows(["x" * 60]) == 1  # one wide entry: one row
    assert legend_rows(["x" * 60] * 5) == 5
    assert legend_rows(["abcdefghij"] * 4, width=4 * (40 + 0.6 * FONT_SIZE * 10)) == 1
    assert legend_rows(["abcdefghij"] * 5, width=4 * (40 + 0.6 * FONT_SIZE * 10)) == 2


def test_apply_style_sizes_the_figure_for_its_legend():
    fig = go.Figure([go.Scatter(x=[0], y=[0], name=f"trace {i}") for i in range(12)])
    apply_style(fig, title="t", height=400)
    rows = legend_rows(legend_entries(fig))
    assert rows > 1
    assert fig.layout.height == 400 + LEGEND_ROW_PX * rows + 10
    alone = apply_style(go.Figure([go.Scatter(x=[0], y=[0], name="only")]), height=400)
    assert legend_entries(alone) == [] and alone.layout.height == 400


#: plot-area widths of the Overview's scatter: 1280x720 with the sidebar open (680 px measured
#: in Chromium), 1280x720 presenting (no sidebar), 1920x1080 with and without the sidebar
SCATTER_PLOT_WIDTHS = (680, 1100, 1500, 1800)


def _label_boxes(fig: go.Figure, plot_width: float) -> list[tuple[float, float, float, float]]:
    """Pixel boxes (left, top, right, bottom) of the scatter's name labels, read from the
    figure spec alone with a plain text-width estimate (0.6 em per character)."""
    layout = fig.layout
    plot_height = layout.height - layout.margin.t - layout.margin.b
    (x0, x1), (y0, y1) = layout.xaxis.range, layout.yaxis.range
    boxes = []
    for note in layout.annotations:
        if not note.text:
            continue  # the curated arrows carry no text
        size = note.font.size or FONT_SIZE
        x = (note.x - x0) / (x1 - x0) * plot_width + note.ax
        y = (1 - (note.y - y0) / (y1 - y0)) * plot_height + note.ay
        half_w, half_h = 0.6 * size * len(note.text) / 2, 0.65 * size
        boxes.append((x - half_w, y - half_h, x + half_w, y + half_h))
    return boxes


def _crowded_points(n: int) -> list:
    names = ["copula", "ctgan_long_candidate_name", "noisy_copy", "fresh_with_copies", "tvae"]
    points = []
    for i in range(n):
        name = f"{names[i % len(names)]}_{i}"
        # a cluster at no risk (the left axis) and a pair at the same place
        risk, value = (0.0 + 0.002 * (i % 3), 0.9 + 0.003 * i) if i < n - 2 else (0.3, 0.95)
        points.append(frontier_fig.FrontierPoint(name, risk, value, "candidate", name))
    points.append(frontier_fig.FrontierPoint(f"{points[0].name} (curated)", 0.0, 0.88,
                                             "curated", points[0].name))  # fmt: skip
    points.append(frontier_fig.FrontierPoint("real data (reference)", 0.01, 1.0, "reference", ""))
    return points


@pytest.mark.parametrize("n", [3, 6, 25])
@pytest.mark.parametrize("height", [420, 720])
def test_scatter_labels_never_overprint_or_clip(n, height):
    """The Overview's privacy-utility names: no two label boxes meet and none leaves the plot
    area, at 1280x720 and 1920x1080; too many to name and the markers are numbered instead,
    with the names in the legend."""
    points = _crowded_points(n)
    fig = frontier_fig.privacy_utility_frontier(points, height=height)
    texts = [a.text for a in fig.layout.annotations if a.text]
    numbered = bool(fig.layout.showlegend)
    if numbered:
        assert set(texts) <= {str(i) for i in range(1, len(points) + 1)}
        assert legend_entries(fig) == [f"{i}: {plot_text(p.name)}" for i, p in
                                       enumerate(points, start=1)]  # fmt: skip
    else:
        assert texts == [plot_text(p.name) for p in points]
    for width in SCATTER_PLOT_WIDTHS:
        boxes = _label_boxes(fig, width)
        plot_height = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        for i, a in enumerate(boxes):
            assert a[0] >= 0 and a[1] >= 0 and a[2] <= width and a[3] <= plot_height, (i, a)
            for b in boxes[i + 1 :]:
                assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    if n <= 6:
        assert not numbered  # a meeting's handful of candidates is named on the chart


def test_place_labels_checks_its_arguments():
    with pytest.raises(ValueError, match="same length"):
        frontier_fig.place_labels([(0.5, 0.5)], [], height=300)
    # a label wider than the narrowest plot has no place
    assert frontier_fig.place_labels([(0.5, 0.5)], [(700.0, 20.0)], height=300) is None
