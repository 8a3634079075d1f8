"""Figure builders of the fidelity section return the traces the page relies on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from synthreview.figures import fidelity as fig
from synthreview.figures.explain import format_metric, holdout_gap
from synthreview.judgement.verdicts import VERDICT_STYLE
from synthreview.metrics.fidelity.features import pca_projection
from synthreview.metrics.fidelity.section import evaluate_fidelity


def _reports():
    rng = np.random.default_rng(0)
    real, holdout = rng.standard_normal((120, 3)), rng.standard_normal((100, 3))
    return {
        "good": evaluate_fidelity(real, rng.standard_normal((90, 3)), holdout_z=holdout,
                                  n_bootstrap=5),
        "copy": evaluate_fidelity(real, real + 0.01, holdout_z=holdout, n_bootstrap=5),
    }  # fmt: skip


def test_curves_have_diagonal_holdout_and_one_colour_per_candidate():
    figure = fig.precision_recall_curves(_reports())
    names = [t.name for t in figure.data]
    assert names.count("ideal (same as real)") == 2 and names.count(fig.REFERENCE) == 2
    assert names.count("good") == 2 and names.count("copy") == 2
    colours = {t.name: t.line.color for t in figure.data}
    assert colours["good"] != colours["copy"]


def test_pca_scatter_carries_source_and_row_id():
    rng = np.random.default_rng(1)
    frame = pca_projection(rng.standard_normal((50, 3)), {"gan": rng.standard_normal((30, 3))})
    figure = fig.pca_scatter(frame, ["gan"])
    assert [t.name for t in figure.data] == ["real", "gan"]
    assert list(figure.data[1].customdata[0]) == ["gan", 0]
    assert figure.layout.dragmode == "lasso"


def test_tables_and_histograms():
    reports = _reports()
    scores = fig.score_table(reports)
    assert len(scores) == 6 and (scores["holdout reference"] != "n/a").all()
    assert set(scores["score"]) == {"IPα", "IRβ", "authenticity"}  # labels, not ids
    assert list(fig.prdc_table(reports)["candidate"]) == ["good", "copy"]
    # the page's PRDC grid: scores as text in the registry's format, never float noise
    prdc, shown = fig.prdc_table(reports), fig.prdc_text_table(reports)
    for score in fig.PRDC_SCORES:
        assert list(shown[score]) == [format_metric(f"prdc_{score}", v) for v in prdc[score]]
        assert all(len(v.split(".")[-1]) <= 3 for v in shown[score])
    features = pd.DataFrame(
        {
            "column": ["x", "y"],
            "kind": ["numeric", "categorical"],
            "wasserstein": [0.0123456789, np.nan],
            "tvd": [np.nan, 1 / 3],
        }
    )
    shown = fig.feature_text_table(features)
    assert list(shown.index) == ["x", "y"]
    assert shown.to_dict("list") == {
        "kind": ["numeric", "categorical"],
        "wasserstein": ["0.012", "n/a"],
        "tvd": ["n/a", "0.333"],
    }
    histogram = fig.authenticity_histogram(reports)
    assert [t.name for t in histogram.data] == [fig.REFERENCE, "good", "copy"]
    overlay = fig.feature_overlay(
        {"real": pd.Series(["a", "b"]), "good": pd.Series(["a", None])},
        column="c", kind="categorical", candidates=["good"],
    )  # fmt: skip
    assert isinstance(overlay, go.Figure) and len(overlay.data) == 2


def test_recall_beyond_the_holdout_reads_suspicious_not_better():
    """A copy's IRβ above a fresh real sample is amber ("suspicious"), never green; a value
    within the gap's noise is neither."""
    reports = _reports()
    scores = fig.score_table(reports).set_index(["candidate", "score"])["vs holdout"]
    assert scores["copy", "IRβ"].endswith("(suspicious: beyond a fresh real sample)")
    assert scores["copy", "authenticity"].endswith("(worse)")
    assert scores["good", "IRβ"].endswith("(within noise)")
    css = fig.styled_score_table(reports).to_html().split("</style>")[0]
    amber = VERDICT_STYLE["warn"].background
    assert css.count(amber) == 1 and "row4_col5" in css.split(amber)[0].rsplit("}", 1)[-1]
    assert VERDICT_STYLE["pass"].background not in css.split("row4_col5")[1].split("}")[0]


def test_holdout_gap_follows_the_registry():
    assert holdout_gap("ir_beta", 0.93, 0.55, interval=(0.9, 0.96)).color == "orange"
    assert holdout_gap("prdc_coverage", 0.99, 0.9).suspicious  # no interval: any gap counts
    assert holdout_gap("ip_alpha", 0.93, 0.55, interval=(0.9, 0.96)).color == "green"
    assert holdout_gap("ir_beta", 0.30, 0.55, interval=(0.28, 0.33)).color == "red"
    assert holdout_gap("ir_beta", 0.56, 0.55, interval=(0.5, 0.6)).color == "gray"
    assert holdout_gap("mia_auc", 0.7, 0.5).color == "red"  # lower is better
    assert holdout_gap("ir_beta", None, 0.5) is None
    assert holdout_gap("ir_beta", 0.93, 0.55).text == "+0.380 vs holdout"
