"""Gower distance: agreement with the ``gower`` package and our missing-value convention."""

from __future__ import annotations

import gower
import numpy as np
import pandas as pd
import pytest

from synthreview.metrics.privacy.gower import gower_distances, gower_nearest


def _mixed(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "income": rng.lognormal(10, 1, n),
            "age": rng.integers(18, 90, n).astype(float),
            "sex": rng.choice(["F", "M"], n),
            "const_num": np.full(n, 7.0),
            "city": rng.choice(["a", "b", "c", "d", "e"], n),
            "const_cat": np.full(n, "x"),
        }
    )


def _package(a: pd.DataFrame, b: pd.DataFrame, categorical: list[str]) -> np.ndarray:
    # the package cannot read pandas' string dtype; give it object columns and explicit kinds
    cast = {c: object for c in categorical}
    flags = [c in categorical for c in a.columns]
    return gower.gower_matrix(a.astype(cast), b.astype(cast), cat_features=flags)


@pytest.mark.parametrize("sizes", [(30, 45), (50, 7)])
def test_matches_gower_package_on_mixed_types_and_constant_columns(sizes):
    a, b = _mixed(sizes[0], 0), _mixed(sizes[1], 1)
    expected = _package(a, b, ["sex", "city", "const_cat"])
    mine = gower_distances(a, b)
    assert mine.shape == sizes and mine.dtype == np.float64
    np.testing.assert_allclose(mine, expected, atol=1e-5)


def test_matches_gower_package_numeric_only_and_categorical_only():
    a, b = _mixed(20, 2), _mixed(33, 3)
    num = ["income", "age"]
    expected = _package(a[num], b[num], [])
    np.testing.assert_allclose(gower_distances(a[num], b[num]), expected, atol=1e-5)
    cat = ["sex", "city"]
    expected = _package(a[cat], b[cat], cat)
    np.testing.assert_allclose(gower_distances(a[cat], b[cat]), expected, atol=1e-5)


def test_ranges_are_taken_over_both_inputs():
    a = pd.DataFrame({"x": [0.0, 1.0]})
    b = pd.DataFrame({"x": [10.0]})
    # range 10 over a and b together, not 1 over a alone
    np.testing.assert_allclose(gower_distances(a, b)[:, 0], [1.0, 0.9])


def test_missing_numeric_is_skipped_and_average_taken_over_compared_features():
    a = pd.DataFrame({"x": [np.nan, 0.0], "y": [0.0, 0.0], "c": ["u", "u"]})
    b = pd.DataFrame({"x": [4.0, 0.0], "y": [2.0, 1.0], "c": ["u", "v"]})
    d = gower_distances(a, b)
    # row 0 vs row 0: x skipped, y |0-2|/2 = 1, c match 0 -> 1/2
    assert d[0, 0] == pytest.approx(0.5)
    # row 0 vs row 1: x skipped, y 1/2, c mismatch 1 -> 1.5/2
    assert d[0, 1] == pytest.approx(0.75)
    # row 1 vs row 0: x 4/4 = 1, y 1, c 0 -> 2/3
    assert d[1, 0] == pytest.approx(2 / 3)


def test_missing_categorical_is_a_level_of_its_own():
    a = pd.DataFrame({"c": [None, None, "u"]}, dtype="object")
    b = pd.DataFrame({"c": [None, "u"]}, dtype="object")
    np.testing.assert_array_equal(gower_distances(a, b), [[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])


def test_pair_without_comparable_feature_is_nan():
    a = pd.DataFrame({"x": [np.nan, 1.0]})
    b = pd.DataFrame({"x": [2.0, 3.0]})
    d = gower_distances(a, b)
    assert np.isnan(d[0]).all() and np.isfinite(d[1]).all()
    dist, idx = gower_nearest(a, b)
    assert np.isnan(dist[0]) and idx[0] == -1 and dist[1] == pytest.approx(0.5)


def test_identical_rows_are_zero_and_matrix_is_symmetric():
    a = _mixed(25, 4)
    d = gower_distances(a, a)
    np.testing.assert_allclose(np.diag(d), 0.0)
    np.testing.assert_allclose(d, d.T)
    assert d.min() >= 0 and d.max() <= 1


@pytest.mark.parametrize("with_missing", [False, True])
def test_nearest_equals_min_of_full_matrix(with_missing):
    query, reference = _mixed(120, 5), _mixed(90, 6)
    if with_missing:
        rng = np.random.default_rng(7)
        query.loc[rng.random(120) < 0.2, "age"] = np.nan
        reference.loc[rng.random(90) < 0.2, "income"] = np.nan
        reference.loc[rng.random(90) < 0.2, "city"] = None
    full = gower_distances(query, reference)
    dist, idx = gower_nearest(query, reference)
    np.testing.assert_allclose(dist, full.min(axis=1), atol=1e-12)
    np.testing.assert_allclose(full[np.arange(len(query)), idx], dist, atol=1e-12)


def test_nearest_of_a_copy_is_zero():
    reference = _mixed(200, 8)
    query = reference.iloc[::3].reset_index(drop=True)
    dist, idx = gower_nearest(query, reference)
    np.testing.assert_array_equal(dist, 0.0)
    np.testing.assert_array_equal(idx, np.arange(0, 200, 3))


def test_explicit_categorical_overrides_dtype():
    a = pd.DataFrame({"code": [1, 2, 3]})
    d = gower_distances(a, a, categorical=["code"])
    np.testing.assert_array_equal(d, 1 - np.eye(3))


def test_rejects_mismatched_columns():
    with pytest.raises(ValueError, match="same columns"):
        gower_distances(pd.DataFrame({"a": [1]}), pd.DataFrame({"b": [1]}))
    with pytest.raises(TypeError, match="DataFrames"):
        gower_distances(np.zeros((2, 2)), pd.DataFrame({"b": [1]}))


def test_one_mismatch_prepass_matches_brute_force_gower():
    from synthreview.metrics.privacy.gower import _code, same_tuple_nearest

    query, reference = _mixed(150, 9), _mixed(120, 10)
    cats = ["sex", "city", "const_cat"]
    nums = [c for c in query.columns if c not in cats]
    coded = _code(query, reference, nums, cats)
    dist, index, certified = same_tuple_nearest(
        coded.a_num, coded.b_num, coded.a_cat, coded.b_cat, metric="l1", unit=1.0, max_mismatch=1
    )
    full = gower_distances(query, reference) * len(query.columns)
    assert certified.mean() > 0.9
    np.testing.assert_allclose(dist[certified, 0], full.min(axis=1)[certified], atol=1e-9)
    np.testing.assert_allclose(
        full[np.flatnonzero(certified), index[certified, 0]], dist[certified, 0]
    )


@pytest.mark.parametrize("small_pairs", [1 << 16, 60])  # all tuples small; some searched alone
@pytest.mark.parametrize("metric", ["l2", "l1"])
@pytest.mark.parametrize("max_mismatch", [0, 1])
def test_same_tuple_nearest_equals_brute_force(monkeypatch, small_pairs, metric, max_mismatch):
    from synthreview.metrics.privacy import gower

    monkeypatch.setattr(gower, "_SMALL_GROUP_PAIRS", small_pairs)
    rng = np.random.default_rng(4)
    q_num = rng.normal(size=(150, 2)).astype(np.float32).astype(np.float64) * 1.5
    r_num = rng.normal(size=(220, 2)).astype(np.float32).astype(np.float64) * 1.5
    q_codes = np.column_stack([rng.integers(0, 2, 150), rng.integers(0, 6, 150)])
    r_codes = np.column_stack([rng.integers(0, 2, 220), rng.integers(0, 6, 220)])
    unit, k = (2.0, 3) if metric == "l2" else (1.0, 2)
    dist, index, certified = gower.same_tuple_nearest(
        q_num, r_num, q_codes, r_codes, k=k, metric=metric, unit=unit, max_mismatch=max_mismatch
    )
    diff = q_num[:, None, :] - r_num[None, :, :]
    mismatches = (q_codes[:, None, :] != r_codes[None, :, :]).sum(-1)
    if metric == "l2":
        full = np.sqrt((diff**2).sum(-1) + unit * mismatches)
    else:
        full = np.abs(diff).sum(-1) + unit * mismatches
    order = np.lexsort((np.broadcast_to(np.arange(220), full.shape), full), axis=1)[:, :k]
    want_d = np.take_along_axis(full, order, axis=1)
    np.testing.assert_array_equal(index[certified], order[certified])
    np.testing.assert_allclose(dist[certified], want_d[certified], rtol=0, atol=1e-12)
    # certified exactly when the k-th nearest among rows with at most max_mismatch differing
    # columns is closer than (max_mismatch + 1) differing columns could be
    near = np.where(mismatches <= max_mismatch, full, np.inf)
    kth = np.sort(near, axis=1)[:, k - 1]
    bound = (max_mismatch + 1) * unit
    np.testing.assert_array_equal(certified, kth < (np.sqrt(bound) if metric == "l2" else bound))
    assert certified.any() and not certified.all()
    assert (index[~certified] == -1).all()
