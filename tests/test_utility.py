"""Utility metrics: hand-computed reference values, boundary cases and invariances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import ConfigError, UndefinedMetricWarning
from synthreview.io.schema import Schema
from synthreview.metrics.utility.efficacy import discriminator_auc, ml_efficacy
from synthreview.metrics.utility.kmarginal import k_marginal_score
from synthreview.metrics.utility.marginals import (
    correlation_error,
    mean_errors,
    percentile_errors,
    proportion_errors,
)
from synthreview.metrics.utility.regression import ci_overlap, interval_overlap, parse_formula
from synthreview.metrics.utility.section import evaluate_utility


def _table(n: int, seed: int) -> pd.DataFrame:
    """Mixed table with strong dependence between columns (so shuffling columns breaks it)."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2])
    b = np.where(rng.random(n) < 0.85, np.where(a == "x", "u", "v"), "w")
    c = np.where((a == "x") ^ (rng.random(n) < 0.1), "p", "q")
    u = rng.normal(size=n) + (a == "x") * 2.0
    v = 0.8 * u + rng.normal(scale=0.5, size=n)
    w = rng.exponential(size=n) + 1.0
    return pd.DataFrame({"a": a, "b": b, "c": c, "u": u, "v": v, "w": w})


SCHEMA = Schema({"a": "categorical", "b": "categorical", "c": "categorical",
                 "u": "numeric", "v": "numeric", "w": "numeric"})  # fmt: skip


def _shuffle_columns(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return frame.apply(lambda col: col.to_numpy()[rng.permutation(len(col))])


def test_proportion_errors_hand_values():
    real = pd.DataFrame({"s": ["M", "M", "F", "F"], "g": ["a", "a", "b", "b"]})
    synth = pd.DataFrame({"s": ["M", "M", "M", "F"], "g": ["a", "b", "b", "b"]})
    result = proportion_errors(real, synth, columns=["s"], groups=["g"])
    overall = result.overall.set_index("category")
    assert overall.loc["M", "error"] == pytest.approx(0.25)
    assert overall.loc["F", "error"] == pytest.approx(0.25)
    assert result.mean_error == pytest.approx(0.25)
    by = result.by_group.set_index(["group", "category"])["error"]
    # group a: real M 1.0, synthetic M 1.0; group b: real F 1.0, synthetic M 2/3, F 1/3
    assert by[("a", "M")] == pytest.approx(0.0)
    assert by[("b", "F")] == pytest.approx(2 / 3)
    assert by[("b", "M")] == pytest.approx(2 / 3)


def test_proportion_errors_missing_group_is_nan_with_warning():
    real = pd.DataFrame({"s": ["M", "F"], "g": ["a", "b"]})
    synth = pd.DataFrame({"s": ["M", "F"], "g": ["a", "a"]})
    with pytest.warns(UndefinedMetricWarning, match="no rows in groups"):
        result = proportion_errors(real, synth, columns=["s"], groups=["g"])
    assert result.by_group.query("group == 'b'")["error"].isna().all()


def test_mean_errors_hand_values_and_zero_mean():
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0], "z": [-1.0, 0.0, 1.0], "g": ["a", "a", "b"]})
    synth = pd.DataFrame({"x": [2.0, 3.0, 4.0], "z": [0.0, 1.0, 2.0], "g": ["a", "b", "b"]})
    with pytest.warns(UndefinedMetricWarning, match="real value is 0"):
        result = mean_errors(real, synth, columns=["x", "z"], groups=["g"])
    errors = result.overall.set_index("column")["error"]
    assert errors["x"] == pytest.approx(0.5)  # |3 - 2| / 2
    assert np.isnan(errors["z"])
    by = result.by_group.set_index(["group", "column"])["error"]
    assert by[("a", "x")] == pytest.approx(0.5 / 1.5)  # real 1.5, synthetic 2
    assert by[("b", "x")] == pytest.approx(0.5 / 3)  # real 3, synthetic 3.5


def test_percentile_errors_hand_values():
    real = pd.DataFrame({"x": np.arange(1.0, 12.0)})  # percentiles 0, 10, ..., 100 = 1, ..., 11
    result = percentile_errors(real, real * 2, columns=["x"])
    np.testing.assert_allclose(result.table["real"], np.arange(1.0, 12.0))
    np.testing.assert_allclose(result.table["error"], 1.0)
    assert result.mean_error == pytest.approx(1.0)


def test_k_marginal_tvd_hand_values_where_per_cell_averaging_disagrees():
    real = pd.DataFrame({"x": list("aaaaabbbbbcccccddddd"), "y": list("uv" * 10)})
    s1 = pd.DataFrame({"x": list("a" * 10 + "b" * 10), "y": real["y"]})  # half of x's mass moved
    s2 = pd.DataFrame({"x": real["x"], "y": list("u" * 16 + "v" * 4)})  # 30 % of y's mass moved
    score1 = k_marginal_score(real, s1, columns=["x", "y"], k=[1]).scores[1]
    score2 = k_marginal_score(real, s2, columns=["x", "y"], k=[1]).scores[1]
    # TVD: s1 (0.5 + 0) / 2 -> 750; s2 (0 + 0.3) / 2 -> 850
    assert score1 == pytest.approx(750.0)
    assert score2 == pytest.approx(850.0)
    # averaging |p - q| per cell instead ranks them the other way round:
    # s1: x cells (.25+.25+.25+.25)/4 = .25, y 0 -> 875; s2: x 0, y (.3+.3)/2 = .3 -> 850
    per_cell_1, per_cell_2 = (1 - (0.25 + 0.0) / 2) * 1000, (1 - (0.0 + 0.3) / 2) * 1000
    assert per_cell_1 > per_cell_2 and score1 < score2


def test_k_marginal_two_way_hand_value_and_worst_cells():
    real = pd.DataFrame({"x": ["a", "a", "b", "b"], "y": ["u", "v", "u", "v"]})
    synth = pd.DataFrame({"x": ["a", "a", "b", "b"], "y": ["u", "u", "v", "v"]})
    result = k_marginal_score(real, synth, columns=["x", "y"], k=[1, 2])
    assert result.scores[1] == pytest.approx(1000.0)
    assert result.scores[2] == pytest.approx(500.0)  # TVD ½(.25 · 4) = .5
    worst = result.worst[2][0]
    assert worst.columns == ("x", "y")
    assert worst.cells["difference"].abs().sum() == pytest.approx(1.0)


def test_k_marginal_samples_marginals_with_seed():
    real = _table(200, 0)
    many = pd.concat([real[["a", "b", "c"]].add_suffix(str(i)) for i in range(4)], axis=1)
    kwargs = dict(columns=list(many.columns), k=[3], max_marginals=20)
    first = k_marginal_score(many, many.iloc[::-1], seed=3, **kwargs)
    again = k_marginal_score(many, many.iloc[::-1], seed=3, **kwargs)
    assert first.n_marginals[3] == 20 and first.n_possible[3] == 220 and first.sampled
    pd.testing.assert_frame_equal(first.marginals, again.marginals)


def test_binned_k_marginal_states_its_bins():
    real = _table(300, 0)
    result = k_marginal_score(real, real, columns=["a"], numeric=["u"], n_bins=4, k=[1, 2])
    assert len(result.bins["u"]) == 3  # quartile edges
    assert result.scores == {1: 1000.0, 2: 1000.0}
    with pytest.warns(UndefinedMetricWarning, match="no 3-way marginals"):
        assert np.isnan(k_marginal_score(real, real, columns=["a", "b"], k=[3]).scores[3])


def test_identical_tables_are_perfect():
    real = _table(400, 0)
    km = k_marginal_score(real, real, columns=["a", "b", "c"])
    assert km.scores == {1: 1000.0, 2: 1000.0, 3: 1000.0}
    assert correlation_error(real, real, columns=["u", "v", "w"]).mae == 0.0
    ci = ci_overlap(real, real, formula="v ~ u + w + a + c[p]", schema=SCHEMA)
    np.testing.assert_allclose(ci.coefficients["overlap"], 1.0)


def test_column_shuffle_keeps_one_marginals_but_breaks_dependence():
    real = _table(2000, 0)
    shuffled = _shuffle_columns(real, 1)
    km = k_marginal_score(real, shuffled, columns=["a", "b", "c"])
    assert km.scores[1] == pytest.approx(1000.0)
    assert km.scores[2] < 800 and km.scores[3] < km.scores[2]
    assert correlation_error(real, shuffled, columns=["u", "v", "w"]).mae > 0.2


def test_interval_overlap_known_intervals():
    np.testing.assert_allclose(
        interval_overlap([0, 0, 0, 0, 0], [2, 1, 1, 4, 2], [1, 2, 1, 1, 0], [3, 3, 2, 2, 2]),
        [0.5, -1.0, 0.0, 0.5 * (1 / 4 + 1), 1.0],
    )


@pytest.mark.parametrize(
    ("formula", "match"),
    [
        ("u + v", "must look like"),
        ("u ~ nope", "unknown column 'nope'"),
        ("a ~ u", "categorical with 3 levels"),
        ("u ~ a^2", "needs a numeric column"),
        ("u ~ v[1]", "needs a categorical column"),
        ("u ~ a[none]", "does not occur"),
        ("u ~ v + v", "twice"),
        ("u ~ u", "cannot also be a predictor"),
    ],
)
def test_parse_formula_errors(formula, match):
    with pytest.raises(ConfigError, match=match):
        parse_formula(formula, schema=SCHEMA, real=_table(50, 0))


def test_binary_categorical_target_is_indicator_of_rarer_level():
    real = _table(60, 0).assign(c=["p"] * 40 + ["q"] * 20)
    parsed = parse_formula("c ~ u + a", schema=SCHEMA, real=real)
    assert str(parsed) == "c[q] ~ u + a"


def test_discriminator_auc_fresh_sample_and_different_table():
    real, fresh = _table(1000, 0), _table(1000, 1)
    assert discriminator_auc(real, fresh, schema=SCHEMA).auc == pytest.approx(0.5, abs=0.06)
    other = fresh.assign(u=fresh["u"] + 5.0, a="z")
    assert discriminator_auc(real, other, schema=SCHEMA).auc > 0.97


def test_discriminator_ignores_row_order():
    real, fresh = _table(300, 0), _table(300, 1)
    first = discriminator_auc(real, fresh, schema=SCHEMA, seed=2).auc
    shuffled = discriminator_auc(real.sample(frac=1, random_state=5), fresh, schema=SCHEMA, seed=2)
    assert shuffled.auc == first


def test_ml_efficacy_synthetic_equal_to_real_matches_trtr():
    real, holdout = _table(400, 0), _table(400, 1)
    result = ml_efficacy(real, real.sample(frac=1, random_state=3), holdout, schema=SCHEMA,
                         target="c")  # fmt: skip
    table = result.table()
    assert set(table["model"]) == {"logistic_regression", "random_forest", "adaboost"}
    assert set(table["metric"]) == {"accuracy", "roc_auc", "f1"}
    np.testing.assert_allclose(table["tstr"], table["trtr"])
    assert (table.query("metric == 'accuracy'")["trtr"] > 0.8).all()
    assert result.positive_class == real["c"].value_counts().idxmin()


def test_ml_efficacy_regression_target():
    real, holdout = _table(300, 0), _table(300, 1)
    result = ml_efficacy(real, _shuffle_columns(real, 2), holdout, schema=SCHEMA, target="v")
    table = result.table().set_index(["model", "metric"])
    assert result.task == "regression"
    r2 = table.loc[("linear_regression", "r2")]
    assert r2["trtr"] > 0.7 and r2["tstr"] < r2["trtr"] - 0.3


def test_evaluate_utility_keys_and_holdout_reference():
    real, synth, holdout = _table(300, 0), _table(300, 1), _table(300, 2)
    report = evaluate_utility(real, synth, holdout, schema=SCHEMA, target="c", groups=["a"],
                              formula="v ~ u + a")  # fmt: skip
    out = report.to_dict()
    assert set(out["k_marginal"]) == {"1", "2", "3"}
    for key in ("correlation_mae", "discriminator_auc", "ci_overlap", "proportion_error"):
        assert key in out and key in out["holdout_reference"]
    assert {"model", "metric", "tstr", "trtr"} <= set(out["ml_efficacy"][0])
    assert out["errors"] == {}
    assert out["skipped"] == {"constraints": "no constraints declared (--constraints FILE.toml)."}
    assert out["answer_key"]["keys"][0]["column"] == "c"  # the target is tested for a key


def test_evaluate_utility_without_holdout_states_why():
    real = _table(200, 0)
    report = evaluate_utility(real, _table(200, 1), None, schema=SCHEMA, target="c", formula="")
    assert report.holdout_reference is None and report.ml_efficacy is None
    assert set(report.skipped) == {"holdout_reference", "ml_efficacy", "ci_overlap", "constraints"}
    assert report.to_dict()["holdout_reference"] is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"groups": ["u"]}, "groups must be categorical"), ({"target": "nope"}, "target must be")],
)
def test_evaluate_utility_rejects_bad_options(kwargs, match):
    real = _table(50, 0)
    with pytest.raises(ConfigError, match=match):
        evaluate_utility(real, real, None, schema=SCHEMA, **kwargs)


@pytest.mark.slow
def test_sampled_marginals_are_drawn_without_listing_every_combination():
    """999 columns have 166 million 3-way marginals: the sample is unranked from its indices
    (the same marginals the full list would give) instead of building that list."""
    import itertools
    import math
    import tracemalloc

    from synthreview.metrics.utility.kmarginal import _combination

    for n, k in [(5, 1), (7, 2), (9, 3), (4, 4)]:
        every = list(itertools.combinations(range(n), k))
        assert [_combination(i, n, k) for i in range(len(every))] == every
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({f"c{i}": rng.integers(0, 3, 60).astype(str) for i in range(999)})
    tracemalloc.start()
    shuffled = wide.sample(frac=1.0, random_state=1)
    result = k_marginal_score(wide, shuffled, k=(3,), columns=list(wide), max_marginals=50, seed=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.n_possible[3] == math.comb(999, 3) and result.n_marginals[3] == 50
    assert peak < 200e6, peak  # listing the combinations alone took gigabytes


def test_formula_text_reads_back_with_quoted_names():
    """``str(formula)`` is stored in the options and parsed again: quoted names keep their
    backticks (a column called ``**x**`` or ``hours per week`` used to break the next run)."""
    schema = Schema({"y": "numeric", "**x**": "numeric", "hours per week": "numeric"})
    rng = np.random.default_rng(0)
    real = pd.DataFrame({c: rng.normal(size=30) for c in ("y", "**x**", "hours per week")})
    parsed = parse_formula("y ~ `**x**` + `hours per week`^2", schema=schema, real=real)
    assert str(parsed) == "y ~ `**x**` + `hours per week`^2"
    assert str(parse_formula(str(parsed), schema=schema, real=real)) == str(parsed)
    assert [t.label for t in parsed.terms] == ["**x**", "hours per week^2"]  # tables unchanged
