"""Per-feature baselines and the PCA projection behind the Fidelity page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

from synthreview.io.schema import Schema
from synthreview.metrics.fidelity.features import (
    feature_distances,
    pairwise_unique_combinations,
    pca_projection,
    wasserstein_1d,
)

SCHEMA = Schema({"age": "numeric", "sex": "categorical", "edu": "categorical", "id": "identifier"})


def _frame(age, sex, edu):
    return pd.DataFrame({"age": age, "sex": sex, "edu": edu, "id": range(len(age))})


def test_identical_tables_are_at_distance_zero():
    real = _frame([20.0, 30, 40, 50], ["F", "M", "F", None], ["a", "b", "a", "b"])
    table = feature_distances(real, real.iloc[::-1], schema=SCHEMA)
    assert list(table["column"]) == ["age", "sex", "edu"]
    assert table[["wasserstein", "ks", "rmse"]].iloc[0].tolist() == [0.0, 0.0, 0.0]
    assert table["tvd"].iloc[1:].tolist() == [0.0, 0.0]


def test_hand_computed_distances():
    real = _frame([0.0, 10.0, 0.0, 10.0], ["F", "M", "F", "M"], ["a", "a", "a", "a"])
    synthetic = _frame([2.0, 12.0, 2.0, 12.0], ["F", "F", "F", "M"], ["a", "b", "a", "a"])
    table = feature_distances(real, synthetic, schema=SCHEMA).set_index("column")
    assert table.loc["age", "wasserstein"] == pytest.approx(0.2)  # shift 2 over a range of 10
    assert table.loc["age", "rmse"] == pytest.approx(0.2)
    assert table.loc["age", "ks"] == pytest.approx(0.5)
    assert table.loc["sex", "tvd"] == pytest.approx(0.25)  # |0.5 − 0.75|
    assert table.loc["edu", "tvd"] == pytest.approx(0.25)
    assert np.isnan(table.loc["sex", "wasserstein"]) and np.isnan(table.loc["age", "tvd"])


def test_pairwise_unique_combinations():
    real = _frame([1.0, 2, 3], ["F", "M", "F"], ["a", "b", "a"])
    synthetic = _frame([1.0, 2, 3, 4], ["F", "M", "M", None], ["a", "a", "b", "a"])
    combos = pairwise_unique_combinations(real, synthetic, schema=SCHEMA)
    # one categorical pair (sex, edu): real {F-a, M-b}; synthetic {F-a, M-a, M-b, missing-a}
    assert (combos.real, combos.synthetic, combos.synthetic_not_in_real) == (2, 4, 2)


def test_pca_projection_fits_on_real_and_keeps_row_ids():
    rng = np.random.default_rng(0)
    real = rng.standard_normal((300, 4)) * [5.0, 1.0, 0.5, 0.1]
    others = {"holdout": rng.standard_normal((50, 4)), "gan": rng.standard_normal((500, 4)) + 9}
    frame = pca_projection(real, others, max_points=200, seed=1)
    assert list(frame.columns) == ["source", "row_id", "PC1", "PC2"]
    assert frame["source"].value_counts().to_dict() == {"real": 200, "holdout": 50, "gan": 200}
    gan = frame[frame["source"] == "gan"]
    assert gan["row_id"].is_monotonic_increasing and gan["row_id"].max() < 500
    # PC1 follows real's widest axis, so the real projection spreads most along it
    real_rows = frame[frame["source"] == "real"]
    assert real_rows["PC1"].std() > 3 * real_rows["PC2"].std()
    pd.testing.assert_frame_equal(frame, pca_projection(real, others, max_points=200, seed=1))


@pytest.mark.parametrize("levels", [3, 400])  # bincount path and numpy.unique path
def test_pairwise_unique_combinations_equal_the_set_definition(levels):
    rng = np.random.default_rng(0)
    schema = Schema({f"c{i}": "categorical" for i in range(4)})

    def table(n):
        cols = {f"c{i}": rng.integers(0, levels, n).astype(object) for i in range(4)}
        frame = pd.DataFrame(cols)
        frame.loc[rng.random(n) < 0.1, "c1"] = None  # missing is a level of its own
        frame["c2"] = frame["c2"].astype(str)  # "1" and 1 compare as text, as before
        return frame

    real, synthetic = table(300), table(200)

    def pairs(frame, a, b):
        text = frame[[a, b]].astype("string").fillna("__missing__")
        return set(zip(text[a], text[b], strict=True))

    want = [0, 0, 0]
    for i in range(4):
        for j in range(i + 1, 4):
            r, s = pairs(real, f"c{i}", f"c{j}"), pairs(synthetic, f"c{i}", f"c{j}")
            want = [want[0] + len(r), want[1] + len(s), want[2] + len(s - r)]
    got = pairwise_unique_combinations(real, synthetic, schema=schema)
    assert [got.real, got.synthetic, got.synthetic_not_in_real] == want


def test_wasserstein_equals_scipy_and_does_not_depend_on_blas_threads():
    """The report's Wasserstein distance is SciPy's, and the same bits with one or two BLAS
    threads (SciPy's own BLAS dot rounds differently with the thread count)."""
    rng = np.random.default_rng(0)
    for n, m in ((50_000, 40_000), (7, 3), (1, 1)):
        u, v = rng.normal(size=n), rng.normal(0.05, 1.2, size=m)
        assert wasserstein_1d(u, v) == pytest.approx(stats.wasserstein_distance(u, v), rel=1e-12)
        with threadpool_limits(1):
            one = wasserstein_1d(u, v)
        with threadpool_limits(2):
            two = wasserstein_1d(u, v)
        assert one == two
    # hand computation: {0, 1} against {1, 2} moves every unit of mass by 1
    assert wasserstein_1d(np.array([0.0, 1.0]), np.array([1.0, 2.0])) == 1.0
    assert wasserstein_1d(np.array([3.0, 1.0]), np.array([1.0, 3.0])) == 0.0
