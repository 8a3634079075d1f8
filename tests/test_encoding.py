"""TabularEncoder: fitted on real only, unseen categories, missing values, column groups."""

import numpy as np
import pandas as pd
import pytest

from synthreview.encoding import TabularEncoder
from synthreview.errors import DataError
from synthreview.io.schema import Schema

SCHEMA = Schema({"age": "numeric", "sex": "categorical", "id": "identifier"})
REAL = pd.DataFrame(
    {"age": [20.0, 30.0, 40.0, None], "sex": ["F", "M", "M", None], "id": ["a", "b", "c", "d"]}
)


def test_scales_come_from_real_only():
    enc = TabularEncoder(SCHEMA).fit(REAL)
    synthetic = pd.DataFrame({"age": [1000.0], "sex": ["F"], "id": ["z"]})
    x = enc.transform(synthetic)
    mean, std = 30.0, np.std([20.0, 30.0, 40.0])
    assert x.dtype == np.float32
    assert x[0, 0] == pytest.approx((1000.0 - mean) / std, rel=1e-6)


def test_missing_and_unseen_categories():
    enc = TabularEncoder(SCHEMA).fit(REAL)
    assert enc.feature_names == ["age", "age__missing", "sex=F", "sex=M", "sex=__missing__"]
    x = enc.transform(pd.DataFrame({"age": [None, 30.0], "sex": [None, "X"], "id": ["a", "b"]}))
    np.testing.assert_array_equal(x[0], [0, 1, 0, 0, 1])
    np.testing.assert_array_equal(x[1], [0, 0, 0, 0, 0])  # unseen category matches nothing real


def test_groups_round_trip_to_original_columns():
    enc = TabularEncoder(SCHEMA).fit(REAL)
    assert enc.groups == {"age": [0, 1], "sex": [2, 3, 4]}
    flat = sorted(i for cols in enc.groups.values() for i in cols)
    assert flat == list(range(len(enc.feature_names)))
    assert "id" not in enc.groups


def test_range_scaling_uses_real_min_max():
    enc = TabularEncoder(SCHEMA).fit(REAL)
    got = enc.transform_range(pd.DataFrame({"age": [20.0, 40.0, None], "sex": "F", "id": "a"}))
    np.testing.assert_allclose(got[:, 0], [0.0, 1.0, np.nan])


def test_missing_column_is_named():
    enc = TabularEncoder(SCHEMA).fit(REAL)
    with pytest.raises(DataError, match=r"synthetic is missing columns \['sex'\]"):
        enc.transform(REAL.drop(columns="sex"), name="synthetic")
