"""Utility figures and the traffic-light rule."""

from __future__ import annotations

import json
import math
import warnings

import plotly.graph_objects as go
import pytest

from synthreview.figures import utility as fig
from synthreview.metrics.utility.section import evaluate_utility
from tests.test_utility import SCHEMA, _shuffle_columns, _table


@pytest.fixture(scope="module")
def reports():
    real, holdout = _table(300, 0), _table(300, 1)
    candidates = {"fresh": _table(300, 2), "shuffled": _shuffle_columns(real, 3)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            name: evaluate_utility(
                real,
                synth,
                holdout,
                schema=SCHEMA,
                target="c",
                groups=["a"],
                formula="v ~ u + w + a",
            )
            for name, synth in candidates.items()
        }


@pytest.mark.parametrize(
    ("value", "reference", "metric", "light"),
    [
        (995.0, 990.0, "k_marginal 2", "pass"),  # better than the reference
        (975.0, 990.0, "k_marginal 2", "warn"),  # 15 points worse: within 3 tolerances
        (900.0, 990.0, "k_marginal 2", "fail"),
        (0.45, 0.52, "discriminator_auc", "warn"),  # 0.05 from ideal vs 0.02: excess 0.03
        (0.78, 0.85, "random_forest · accuracy", "fail"),
        (10.5, 10.0, "linear_regression · rmse", "pass"),  # 5 % of TRTR
        (math.nan, 1.0, "ci_overlap", "n/a"),
    ],
)
def test_traffic_light_rule(value, reference, metric, light):
    assert fig.traffic_light(value, reference, metric=metric) == light


def test_summary_has_reference_column_and_lights(reports):
    summary = fig.utility_summary(reports)
    assert list(summary.values.columns) == ["fresh", "shuffled", fig.REFERENCE]
    assert summary.lights.loc["k_marginal 3", "shuffled"] == "fail"
    assert summary.lights.loc["correlation_mae", "shuffled"] == "fail"
    assert summary.lights.loc["k_marginal 1", "shuffled"] == "pass"
    assert "random_forest · f1" in summary.values.index
    summary.styled().to_html()


def test_builders_return_figures(reports):
    report = reports["shuffled"]
    km = report.candidate.k_marginal
    figures = [
        fig.correlation_heatmaps(report.candidate.correlation, name="shuffled"),
        fig.k_marginal_bars(reports),
        fig.marginal_heatmap(km.worst[2][0]),
        fig.marginal_heatmap(km.worst[3][0]),
        fig.marginal_heatmap(km.worst[1][0]),
        fig.percentile_figure(reports, "u"),
        fig.group_error_bars(reports, kind="proportions"),
        fig.group_error_bars(reports, kind="means"),
        fig.efficacy_bars(reports),
        fig.ci_forest(reports),
    ]
    assert all(isinstance(f, go.Figure) and f.data for f in figures)
    heat = figures[0].data[2]
    assert heat.zmid == 0 and heat.colorscale  # difference panel is diverging around 0
    assert len(figures[1].data) == 3  # two candidates and the holdout reference
    assert len(figures[-1].data) == 4  # real, holdout, two candidates


def test_report_to_dict_is_json(reports):
    out = reports["fresh"].to_dict()
    text = json.dumps(out, allow_nan=False)
    assert '"holdout_reference"' in text and out["details"]["k_marginal"]["n_possible"]["3"] == 1
