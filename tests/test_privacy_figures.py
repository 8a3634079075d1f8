"""Privacy figures and tables built from real results of the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from synthreview.encoding import TabularEncoder
from synthreview.figures import privacy as fig
from synthreview.io.schema import Schema
from synthreview.metrics.privacy.section import evaluate_privacy

SCHEMA = Schema({"age": "numeric", "sex": "categorical"})


@pytest.fixture(scope="module")
def reports():
    rng = np.random.default_rng(0)

    def table(n):
        return pd.DataFrame(
            {"age": rng.normal(40, 10, n).round(1), "sex": rng.choice(["F", "M"], n)}
        )

    real, holdout, fresh = table(300), table(300), table(300)
    encoder = TabularEncoder(SCHEMA).fit(real)
    kwargs = {"schema": SCHEMA, "encoder": encoder, "sensitive": "sex", "max_attack": 200}
    return real, {
        "copy": evaluate_privacy(real, real.copy(), holdout, **kwargs),
        "fresh": evaluate_privacy(real, fresh, holdout, **kwargs),
    }


def test_roc_overlay_has_chance_line_and_one_curve_per_attack(reports):
    _, by_name = reports
    figure = fig.roc_overlay(by_name["copy"], show_reference=False)
    assert isinstance(figure, go.Figure)
    names = [trace.name for trace in figure.data]
    assert names[0] == "chance"
    assert len(names) == 1 + len(by_name["copy"].membership_inference)
    assert all("AUC" in n and "[" in n for n in names[1:])
    log_view = fig.roc_overlay(by_name["copy"], log_scale=True)
    assert log_view.layout.xaxis.type == "log"
    assert any(t.name.startswith("holdout-only") for t in log_view.data)


def test_dcr_histogram_has_reference_and_candidates(reports):
    _, by_name = reports
    names = [t.name for t in fig.dcr_histogram(by_name).data]
    assert names == ["holdout → train (reference)", "copy → train", "fresh → train"]


def test_tables_have_one_row_per_candidate_and_part(reports):
    _, by_name = reports
    attacks = fig.attack_table(by_name)
    assert len(attacks) == 2 * len(by_name["copy"].membership_inference)
    assert set(attacks.loc[attacks["candidate"] == "copy", "verdict"]) <= {"fail", "warn", "pass"}
    assert len(fig.attribute_inference_table(by_name)) == 2
    assert set(fig.l_diversity_table(by_name)["column"]) == {"age"}


def test_traffic_lights():
    assert fig.traffic_light(0.5, fig.MIA_AUC_LIMITS) == "pass"
    assert fig.traffic_light(0.65, fig.MIA_AUC_LIMITS) == "warn"
    assert fig.traffic_light(0.9, fig.MIA_AUC_LIMITS) == "fail"
    assert fig.traffic_light(float("nan"), fig.MIA_AUC_LIMITS) == "n/a"
    assert fig.copies_light(0.0, 0.0) == "pass"
    assert fig.copies_light(0.5, 0.0) == "fail"


def test_closest_pairs_puts_copies_first_and_highlights_equal_cells(reports):
    real, by_name = reports
    report = by_name["copy"]
    rows = fig.riskiest_rows(report, n=3)
    assert report.dcr.exact_copy[rows].all()
    styler = fig.closest_pairs(real, real, report, rows=rows, columns=["age", "sex"])
    css = styler.to_html().split("</style>")[0]
    assert css.count("_row") == 6 * 2  # every age and sex cell of the three copied pairs
    assert len(styler.data) == 6
