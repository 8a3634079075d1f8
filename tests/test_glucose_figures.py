"""The glucose figure builders return the traces the page relies on."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from synthreview.figures import glucose as fig
from synthreview.figures.text import markdown_text
from synthreview.metrics.glucose.glycemic import compare_glycemic, glycemic_samples


@pytest.fixture
def traces():
    rng = np.random.default_rng(0)
    walks = np.clip(140 + np.cumsum(rng.normal(0, 5, (150, 288)), axis=1), 40, 400)
    return {"real": walks[:120], "copula": walks[120:] + 5}


def test_heatmaps_share_one_fixed_scale_and_sample_100_rows(traces):
    figure = fig.trace_heatmaps(traces)
    heatmaps = [t for t in figure.data if t.type == "heatmap"]
    assert [len(h.z) for h in heatmaps] == [100, 30]
    assert figure.layout.coloraxis.cmin == 40 and figure.layout.coloraxis.cmax == 400
    assert heatmaps[0].x[0] == "00:00" and heatmaps[0].x[-1] == "23:55"


def test_clarke_grid_draws_points_boundaries_and_zone_labels():
    figure = fig.clarke_grid(np.arange(5000.0) % 400, np.arange(5000.0) % 400, max_points=300)
    names = [t.name for t in figure.data]
    assert names == ["forecasts", "perfect", "zone boundaries"]
    assert len(figure.data[0].x) == 300
    assert sorted({a.text for a in figure.layout.annotations}) == [f"<b>{z}</b>" for z in "ABCDE"]
    assert len([x for x in figure.data[2].x if x is None]) == len(fig.CLARKE_LINES)


def test_variance_pca_rmse_and_zone_bars(traces):
    samples = {k: pd.DataFrame({"variance": v.var(axis=1)}) for k, v in traces.items()}
    assert [t.name for t in fig.variance_distributions(samples).data] == ["real", "copula"]
    assert [t.name for t in fig.trace_pca(traces).data] == ["real", "copula"]
    assert len(fig.forecast_rmse({"copula": 20.0}, trtr_rmse=18.0).data) == 1
    zones = {"TRTR": dict(zip("ABCDE", (80, 15, 1, 4, 0), strict=True))}
    assert [t.name for t in fig.clarke_zone_bars(zones).data] == list("ABCDE")
    with pytest.raises(ValueError, match="real"):
        fig.trace_pca({"copula": traces["copula"]})


# --- tables for st.table -------------------------------------------------------------------------
def _no_float_noise(table: pd.DataFrame) -> None:
    cells = [str(v) for v in [*table.index, *table.columns, *table.to_numpy().ravel()]]
    assert not [c for c in cells if re.search(r"\d\.\d{5,}", c)], cells
    assert not {"True", "False", "nan", "None"} & set(cells)


def test_comparison_table_reads_numbers_words_and_marks_significant_p(traces):
    samples = {k: glycemic_samples(v) for k, v in traces.items()}
    shifted = glycemic_samples(np.clip(traces["copula"] + 60, 40, 400))  # +65 mg/dL in all
    metrics = compare_glycemic(samples["real"], shifted)
    styled = fig.comparison_table(metrics, compare_glycemic(samples["real"], samples["real"]))
    table = styled.data
    _no_float_noise(table)
    assert table.index[0] == markdown_text("Mean glucose (mg/dL)")
    assert re.fullmatch(r"1\d\d\.\d", table.iloc[0, 0]), table.iloc[0, 0]  # 138.3, not 138.25…
    differs = markdown_text("differs from real (p < 0.05)")
    assert set(table[differs]) <= {"yes", "no"} and "yes" in set(table[differs])
    marked = {(table.index[r], table.columns[c]) for (r, c), css in styled._compute().ctx.items()
              if css}  # fmt: skip
    assert {(table.index[0], "Welch p"), (table.index[0], differs)} <= marked  # mean +65
    assert all(table.loc[i, differs] == "yes" for i, c in marked if c == differs)


def test_attack_tables_split_the_columns_and_name_the_trace_seekers():
    attacks = pd.DataFrame([{
        "candidate": "**c**", "attack": "trace_nn_seeker", "AUC": 0.5123456,
        "AUC 95% CI": "[0.481, 0.532]", "TPR @ FPR 1%": 0.01, "TPR @ FPR 0.1%": np.nan,
        "advantage": 0.02, "holdout-only AUC": 0.5, "challenge accuracy": 0.51,
        "verdict": "pass", "error": "",
    }])  # fmt: skip
    main, more = fig.attack_tables(attacks, "**c**")
    assert main.index.tolist() == [markdown_text("Hide-and-Seek NN seeker on traces")]
    assert main.iloc[0].tolist() == ["0.512", "0.481 to 0.532", "0.500", "0.010", "pass"]
    assert more.iloc[0].tolist() == ["n/a", "0.020", "0.510"]
    assert all(t.empty for t in fig.attack_tables(pd.DataFrame(), "c"))


def test_subject_privacy_reading_grows_down_and_escapes_names():
    table = pd.DataFrame([
        {"candidate": "**x**", "subject AUC (max)": 0.51234, "member subjects": 3,
         "memorised subjects": "[a](http://x.org)"},
        {"candidate": "y", "subject AUC (max)": np.nan, "member subjects": 4,
         "memorised subjects": "none"},
    ])  # fmt: skip
    shown = fig.subject_privacy_reading(table)
    assert shown.columns.tolist() == [markdown_text("**x**"), "y"]
    assert shown.index.tolist() == [markdown_text(c) for c in table.columns[1:]]
    assert shown.iloc[:, 0].tolist() == ["0.512", "3", markdown_text("[a](http://x.org)")]
    assert shown.iloc[0, 1] == "n/a"
    assert fig.subject_privacy_reading(pd.DataFrame()).empty


def test_fidelity_and_agp_tables_colour_and_write_numbers():
    scores = pd.DataFrame([
        {"candidate": "x", "score": "IRβ", "value": "0.977", "vs holdout": "+0.705 (suspicious: "
         "beyond a fresh real sample)"},
        {"candidate": "x", "score": "IPα", "value": "0.987", "vs holdout": "-0.460 (worse)"},
        {"candidate": "x", "score": "auth", "value": "0.5", "vs holdout": "+0.02 (within noise)"},
    ])  # fmt: skip
    ctx = fig.fidelity_table(scores)._compute().ctx
    assert ctx[(0, 3)] == [("background-color", "#fef3c7"), ("color", "#713f12")]  # amber
    assert ctx[(1, 3)][0] == ("background-color", "#fee2e2") and not ctx.get((2, 3))
    agp = fig.agp_distance_table({"a_b": 5.123456, "c": 3.0}, 2.5)
    assert agp.index.tolist() == [markdown_text("a_b"), "c", markdown_text("holdout (reference)")]
    assert agp.iloc[:, 0].tolist() == ["5.12", "3.00", "2.50"]
