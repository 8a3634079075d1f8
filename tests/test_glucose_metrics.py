"""Per-trace glycemic metrics and their population comparison (GlucoSynth §7.2, appendix C.2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.io.cgm_grid import MG_DL_PER_MMOL_L
from synthreview.metrics.glucose.glycemic import (
    GLYCEMIC_METRICS,
    compare_glycemic,
    glycemic_samples,
    glycemic_table,
)


@pytest.fixture
def random_traces():
    rng = np.random.default_rng(0)
    return np.clip(140 + np.cumsum(rng.normal(0, 6, (50, 288)), axis=1), 40, 400)


def test_gvi_hand_checks():
    assert glycemic_samples([[120.0] * 288])["gvi"].iloc[0] == pytest.approx(1.0)
    # L = 2 sqrt(5^2 + 10^2) = 22.3607, L0 = sqrt(10^2 + 0^2) = 10
    assert glycemic_samples([[100.0, 110.0, 100.0]])["gvi"].iloc[0] == pytest.approx(
        2.2361, abs=1e-4
    )


def test_gvi_drops_pairs_with_a_gap_from_both_sums():
    # only (100, 110) survives: L = sqrt(125), L0 = sqrt(5^2 + 10^2) -> 1
    gvi = glycemic_samples([[100.0, 110.0, np.nan, 300.0]])["gvi"].iloc[0]
    assert gvi == pytest.approx(1.0)


def test_pgs_is_zero_whenever_tir_is_100():
    wiggly = 125 + 50 * np.sin(np.linspace(0, 20, 288))  # 75-175: always in range
    out = glycemic_samples(np.vstack([wiggly, np.full(288, 100.0)]))
    assert (out["tir"] == 100).all()
    assert out["gvi"].iloc[0] > 1.1
    assert (out["pgs"] == 0).all()


def test_pgs_combines_gvi_mean_and_time_out_of_range():
    out = glycemic_samples([[60.0, 60.0, 200.0, 200.0]])
    expected = out["gvi"].iloc[0] * 130.0 * (1 - 0.0)
    assert out["pgs"].iloc[0] == pytest.approx(expected)


def test_ranges_sum_to_100_with_inclusive_edges(random_traces):
    out = glycemic_samples(random_traces)
    assert np.allclose(out["tir"] + out["tbr"] + out["tar"], 100.0)
    edges = glycemic_samples([[70.0, 180.0, 69.9, 180.1, 54.0, 250.0, 53.9, 250.1]]).iloc[0]
    assert edges["tir"] == 25.0 and edges["tbr"] == 37.5 and edges["tar"] == 37.5
    assert edges["tbr_54"] == 12.5 and edges["tar_250"] == 12.5


def test_mmol_per_l_input_is_converted(random_traces):
    in_mmol = glycemic_samples(random_traces / MG_DL_PER_MMOL_L, units="mmol/L")
    pd.testing.assert_frame_equal(in_mmol, glycemic_samples(random_traces), rtol=1e-9)
    with pytest.raises(DataError, match="units"):
        glycemic_samples(random_traces, units="g/L")


def test_moments_gmi_and_risk_indices_hand_values():
    row = glycemic_samples([[100.0, 110.0, 100.0]]).iloc[0]
    assert row["variance"] == pytest.approx(100 / 3)  # ddof=1
    assert row["sd"] == pytest.approx(np.sqrt(100 / 3))
    assert row["cv"] == pytest.approx(100 * np.sqrt(100 / 3) / (310 / 3))
    assert glycemic_samples([[154.0] * 4])["gmi"].iloc[0] == pytest.approx(3.31 + 0.02392 * 154)
    # Kovatchev's risk function crosses zero at 112.5 mg/dL; both indices vanish there
    flat = glycemic_samples([[112.5] * 10]).iloc[0]
    assert flat["lbgi"] < 0.01 and flat["hbgi"] < 0.01
    low, high = glycemic_samples([[50.0] * 10, [300.0] * 10]).itertuples(index=False)
    assert low.lbgi > 10 and low.hbgi == 0 and high.hbgi > 10 and high.lbgi == 0


def test_missing_readings_are_ignored_and_empty_traces_warn():
    out = glycemic_samples([[100.0, np.nan, 200.0]])
    assert out["mean"].iloc[0] == 150.0 and out["tar"].iloc[0] == 50.0
    with pytest.warns(UndefinedMetricWarning, match="no valid reading"):
        empty = glycemic_samples([[np.nan, np.nan, np.nan]])
    assert empty.isna().all(axis=None)


def test_comparison_p_values(random_traces):
    real = glycemic_samples(random_traces[:25])
    same = compare_glycemic(real, real)
    assert [c.metric for c in same] == list(GLYCEMIC_METRICS)
    assert all(c.p_value == pytest.approx(1.0) for c in same if np.isfinite(c.p_value))
    shifted = compare_glycemic(real, glycemic_samples(random_traces[:25] + 60))
    mean = next(c for c in shifted if c.metric == "mean")
    assert mean.synthetic_mean == pytest.approx(mean.real_mean + 60)
    assert mean.welch_p < 0.01 and mean.mannwhitney_p < 0.01
    assert mean.to_dict()["test"] == "welch_t" and mean.to_dict()["p_value"] == mean.welch_p


def test_identical_constant_metric_gives_p_one_and_tiny_samples_warn():
    a = glycemic_samples(np.full((5, 10), 100.0))
    by_metric = {c.metric: c for c in compare_glycemic(a, a)}
    assert by_metric["tbr_54"].welch_p == 1.0 and by_metric["tbr_54"].mannwhitney_p == 1.0
    with pytest.warns(UndefinedMetricWarning, match="at least 2"):
        compare_glycemic(a.iloc[:1], a)


def test_shuffling_traces_does_not_change_the_comparison(random_traces):
    rng = np.random.default_rng(1)
    real = glycemic_samples(random_traces[:25])
    synth = glycemic_samples(random_traces[25:])
    shuffled = glycemic_samples(random_traces[25:][rng.permutation(25)])
    a, b = compare_glycemic(real, synth), compare_glycemic(real, shuffled)
    for x, y in zip(a, b, strict=True):
        assert x.welch_p == pytest.approx(y.welch_p) and x.mannwhitney_p == pytest.approx(
            y.mannwhitney_p
        )


def test_table_marks_significant_rows(random_traces):
    real = glycemic_samples(random_traces[:25])
    synth = glycemic_samples(random_traces[:25] + 60)
    table = glycemic_table(compare_glycemic(real, synth), compare_glycemic(real, real))
    assert list(table.columns[:7]) == [
        "metric",
        "unit",
        "real",
        "synthetic",
        "p_value",
        "mannwhitney_p",
        "significant",
    ]
    assert table.loc[table["metric"] == "Mean glucose", "significant"].item()
    assert "holdout_p_value" in table
