"""Utility figures and the traffic lights (read from the policy's [lights.*])."""

from __future__ import annotations

import inspect
import json
import math
import re
import warnings

import pandas as pd
import plotly.graph_objects as go
import pytest

from synthreview.figures import utility as fig
from synthreview.judgement.policy import load_policy
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


@pytest.mark.slow
def test_summary_has_reference_column_and_lights(reports):
    summary = fig.utility_summary(reports)
    assert list(summary.values.columns) == ["fresh", "shuffled", fig.REFERENCE]
    assert summary.lights.loc["k_marginal 3", "shuffled"] == "fail"
    assert summary.lights.loc["correlation_mae", "shuffled"] == "fail"
    assert summary.lights.loc["k_marginal 1", "shuffled"] == "pass"
    assert "random_forest · f1" in summary.values.index
    summary.styled().to_html()
    # the page's static table: metric labels as row labels, each candidate cell tinted by its
    # own light (the tint moves with the column, never onto the direction or the reference)
    reading = summary.reading_styled()
    frame = reading.data
    assert list(frame.columns) == [fig.BETTER, "fresh", "shuffled", fig.REFERENCE]
    tints = reading._compute().ctx
    row = list(summary.values.index).index("k_marginal 3")
    colour = fig.VERDICT_COLORS[summary.lights.loc["k_marginal 3", "shuffled"]]
    assert any(colour in value for value in tints[(row, 2)][0])
    assert (row, 0) not in tints and (row, 3) not in tints


def test_lights_come_from_the_policy_file(tmp_path):
    # the module holds no threshold table: a policy file changes the light
    source = inspect.getsource(fig)
    assert "LIGHT_RULES" not in source and "LIGHT_CAPTION" not in source
    assert fig.traffic_light(975.0, 990.0, metric="k_marginal 2") == "warn"
    path = tmp_path / "loose.toml"
    path.write_text("[lights.k_marginal]\npass = 20\nfail = 40\n")
    loose = load_policy(path)
    assert fig.traffic_light(975.0, 990.0, metric="k_marginal 2", policy=loose) == "pass"
    assert loose.lights["k_marginal"].reason  # the shipped reason is kept
    # a row the policy gives no light is n/a, never a guess
    assert fig.traffic_light(0.5, 0.5, metric="unknown_metric") == "n/a"
    caption = fig.light_caption(loose)
    assert "k-marginal (categorical) 20 (red beyond 40)" in caption
    assert "TSTR rmse 5 % of the reference" in caption


@pytest.mark.slow
def test_every_summary_row_has_a_light_in_the_default_policy(reports):
    policy = load_policy()
    summary = fig.utility_summary(reports, policy=policy)
    for row in summary.values.index:
        assert policy.light(fig.light_name(row)) is not None, row


@pytest.mark.slow
def test_summary_renders_without_html_and_with_registry_formats(reports):
    summary = fig.utility_summary(reports)
    table = summary.table()
    assert list(table.columns) == [fig.METRIC, fig.BETTER, "fresh", "shuffled", fig.REFERENCE]
    cells = table.to_numpy().ravel().tolist()
    assert all(isinstance(c, str) for c in cells)
    assert not any("<" in c or c in ("None", "nan", "NULL") for c in cells)
    row = table[table[fig.METRIC] == "k-marginal (categorical), k = 2"].iloc[0]
    assert re.fullmatch(r"\d+", row["fresh"])  # registry format .0f: no decimals
    # a missing number reads n/a
    values = summary.values.copy()
    values.loc["correlation_mae", "fresh"] = math.nan
    gappy = fig.UtilitySummary(values=values, lights=summary.lights)
    assert gappy.table().set_index(fig.METRIC).loc["correlation MAE", "fresh"] == "n/a"
    html = summary.styled().to_html()
    assert "pd-t" not in html and "<span" not in html  # no tooltip markup to leak into cells
    assert "background-color" in html
    meanings = dict(summary.meanings())
    assert meanings["correlation MAE"].startswith("mean absolute difference")


@pytest.mark.slow
def test_detail_tables_read_without_float_noise(reports):
    coefficients = reports["fresh"].candidate.ci_overlap.coefficients
    shown = fig.number_table(coefficients)
    assert list(shown.columns) == list(coefficients.columns) and len(shown) == len(coefficients)
    cells = shown.to_numpy().ravel().tolist()
    assert all(isinstance(c, str) for c in cells)
    assert not any(c in ("None", "nan", "NULL") for c in cells)
    assert not any(re.fullmatch(r"-?\d+\.\d{5,}", c) for c in cells)  # no 0.5267029240000001
    gaps = fig.number_table(pd.DataFrame({"term": ["a", None], "x": [0.5267029240000001, None]}))
    assert gaps.to_dict("list") == {"term": ["a", "n/a"], "x": ["0.527", "n/a"]}


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 4, 6])
def test_summary_fits_1280_px(reports, n):
    report = next(iter(reports.values()))
    summary = fig.utility_summary({f"candidate number {i}": report for i in range(n)})
    widths = summary.widths()
    assert set(widths) == {fig.METRIC, fig.BETTER, *summary.candidates, fig.REFERENCE}
    assert sum(widths.values()) <= fig.SUMMARY_WIDTH_PX
    assert min(widths.values()) >= fig.VALUE_WIDTH_PX[0]
    # the widest number in the table fits its column (about 8 px a character at 14 px type)
    table = summary.table()
    for column in table.columns.drop(fig.METRIC):
        longest = max(len(c) for c in table[column])
        assert 8 * longest + 16 <= widths[column], (column, longest)


@pytest.mark.slow
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


@pytest.mark.slow
def test_report_to_dict_is_json(reports):
    out = reports["fresh"].to_dict()
    text = json.dumps(out, allow_nan=False)
    assert '"holdout_reference"' in text and out["details"]["k_marginal"]["n_possible"]["3"] == 1
