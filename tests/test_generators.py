"""Baseline generators: seeded, shaped like real, and failing in the way each one is meant to."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthreview import generators as g
from synthreview.encoding import TabularEncoder
from synthreview.errors import DataError
from synthreview.generators.traces import GLUCOSE_MAX_MG_DL, GLUCOSE_MIN_MG_DL
from synthreview.io.schema import Schema
from synthreview.neighbors import nearest

SCHEMA = Schema(
    {
        "row_id": "identifier",
        "age": "numeric",
        "income": "numeric",
        "score": "numeric",
        "group": "categorical",
        "city": "categorical",
        "visit": "datetime",
    }
)


@pytest.fixture(scope="module")
def real() -> pd.DataFrame:
    rng = np.random.default_rng(42)
    n = 400
    age = rng.integers(18, 80, size=n)
    income = np.exp(8 + 0.03 * age + rng.normal(0, 0.3, size=n))
    score = np.where(rng.random(n) < 0.1, np.nan, rng.normal(50, 10, size=n))
    group = np.where(age > 50, "senior", "junior")
    city = pd.Series(rng.choice(["Oslo", "Lima", "Pune"], size=n), dtype="str")
    city[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "row_id": pd.Series([f"r{i}" for i in range(n)], dtype="str"),
            "age": age.astype("int64"),
            "income": income,
            "score": score,
            "group": pd.Series(group, dtype="str"),
            "city": city,
            "visit": pd.Series([f"2020-01-{1 + i % 28:02d}" for i in range(n)], dtype="str"),
        }
    )


def _encode(real: pd.DataFrame, *others: pd.DataFrame) -> list[np.ndarray]:
    encoder = TabularEncoder(SCHEMA).fit(real)
    return [encoder.transform(real), *(encoder.transform(o) for o in others)]


TABLE_GENERATORS = {
    "independent_marginals": g.independent_marginals,
    "gaussian_copula": g.gaussian_copula,
    "add_noise": g.add_noise,
    "mode_collapse": g.mode_collapse,
    "copy_rows": lambda real, *, schema, **kw: g.copy_rows(real, **kw),
}


@pytest.mark.parametrize("name", sorted(TABLE_GENERATORS))
def test_table_generator_is_seeded(name, real):
    make = TABLE_GENERATORS[name]
    first = make(real, schema=SCHEMA, seed=3)
    pd.testing.assert_frame_equal(first, make(real, schema=SCHEMA, seed=3))
    assert not first.equals(make(real, schema=SCHEMA, seed=4))


@pytest.mark.parametrize("name", sorted(TABLE_GENERATORS))
@pytest.mark.parametrize("n", [None, 57, 1000])
def test_table_generator_keeps_columns_dtypes_and_row_count(name, n, real):
    out = TABLE_GENERATORS[name](real, schema=SCHEMA, n=n, seed=0)
    assert list(out.columns) == list(real.columns)
    pd.testing.assert_series_equal(out.dtypes, real.dtypes)
    assert len(out) == (len(real) if n is None else n)
    assert isinstance(out.index, pd.RangeIndex)
    assert out["age"].between(real["age"].min(), real["age"].max()).all()
    assert set(out["city"].dropna()) <= set(real["city"].dropna())


@pytest.mark.parametrize("name", sorted(TABLE_GENERATORS))
def test_table_generator_rejects_bad_n(name, real):
    with pytest.raises(ValueError, match="n must be a positive integer"):
        TABLE_GENERATORS[name](real, schema=SCHEMA, n=0)


def test_missing_schema_column_is_a_data_error(real):
    with pytest.raises(DataError, match=r"missing schema columns \['age'\]"):
        g.gaussian_copula(real.drop(columns="age"), schema=SCHEMA)


def test_marginals_keep_each_column_and_drop_the_dependence(real):
    out = g.independent_marginals(real, schema=SCHEMA, n=20_000, seed=1)
    for col in ("age", "income"):
        assert stats.ks_2samp(out[col], real[col]).statistic < 0.05
    for col in ("group", "city"):
        expected = real[col].value_counts(normalize=True, dropna=False)
        got = out[col].value_counts(normalize=True, dropna=False)
        assert (got.reindex(expected.index) - expected).abs().max() < 0.02
    assert out["score"].isna().mean() == pytest.approx(real["score"].isna().mean(), abs=0.01)
    assert stats.spearmanr(real["age"], real["income"]).statistic > 0.6
    assert abs(stats.spearmanr(out["age"], out["income"]).statistic) < 0.05
    assert (out.loc[out["age"] > 50, "group"] == "junior").mean() > 0.3


def test_copula_keeps_marginals_and_rank_correlation(real):
    out = g.gaussian_copula(real, schema=SCHEMA, n=5_000, seed=2)
    real_rho = stats.spearmanr(real["age"], real["income"]).statistic
    assert stats.spearmanr(out["age"], out["income"]).statistic == pytest.approx(real_rho, abs=0.1)
    assert stats.ks_2samp(out["income"], real["income"]).statistic < 0.05
    assert set(out["income"]) <= set(real["income"])  # values come from the empirical quantiles
    # the categorical follows its numeric parent far more often than by chance (0.5)
    assert ((out["age"] > 50) == (out["group"] == "senior")).mean() > 0.75
    assert out["score"].isna().mean() == pytest.approx(real["score"].isna().mean(), abs=0.02)


def test_add_noise_with_zero_sigma_returns_the_training_rows(real):
    pd.testing.assert_frame_equal(g.add_noise(real, schema=SCHEMA, sigma=0.0), real)


def test_add_noise_stays_close_to_its_source_rows(real):
    noisy = g.add_noise(real, schema=SCHEMA, sigma=0.1, seed=0)
    independent = g.independent_marginals(real, schema=SCHEMA, seed=0)
    x_real, x_noisy, x_indep = _encode(real, noisy, independent)
    to_source = np.linalg.norm(x_noisy - x_real, axis=1)  # row i comes from real row i
    assert np.median(to_source) < 0.2 * np.median(nearest(x_indep, x_real).distances)
    assert (nearest(x_noisy, x_real).indices[:, 0] == np.arange(len(real))).mean() > 0.8
    for col in ("row_id", "group", "city", "visit"):
        pd.testing.assert_series_equal(noisy[col], real[col])
    assert noisy["score"].isna().equals(real["score"].isna())
    assert (noisy["age"] != real["age"]).any()


def test_add_noise_distance_grows_with_sigma(real):
    x_real = _encode(real)[0]
    medians = [
        np.median(
            np.linalg.norm(
                _encode(real, g.add_noise(real, schema=SCHEMA, sigma=s))[1] - x_real, axis=1
            )
        )
        for s in (0.05, 0.2, 0.5)
    ]
    assert medians[0] < medians[1] < medians[2]


def test_add_noise_rejects_negative_sigma(real):
    with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
        g.add_noise(real, schema=SCHEMA, sigma=-0.1)


def test_mode_collapse_generates_from_a_single_cluster():
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [20, 0], [0, 20], [20, 20]])
    label = np.repeat(["a", "b", "c", "d"], [160, 80, 80, 80])
    xy = centres[np.repeat(np.arange(4), [160, 80, 80, 80])] + rng.normal(0, 1, size=(400, 2))
    blobs = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "blob": pd.Series(label, dtype="str")})
    schema = Schema({"x": "numeric", "y": "numeric", "blob": "categorical"})
    out = g.mode_collapse(blobs, schema=schema, n_clusters=4, seed=0)
    assert set(out["blob"]) == {"a"}  # the largest blob, and only it
    assert out["x"].between(-5, 5).all() and out["y"].between(-5, 5).all()
    # new rows, not copies: x and y come from the same real row only by chance (~1/160)
    assert len(out.merge(blobs, how="inner")) < 0.05 * len(out)


def test_copy_rows_only_returns_training_rows(real):
    out = g.copy_rows(real, n=1000, seed=0)
    assert out["row_id"].isin(real["row_id"]).all()
    merged = out.merge(real, on="row_id", suffixes=("", "_real"))
    assert (merged["income"] == merged["income_real"]).all()


# ---------------------------------------------------------------------------------------------
# traces


@pytest.fixture(scope="module")
def days() -> np.ndarray:
    """30 day traces: a daily rhythm plus a smooth random walk, mg/dL."""
    rng = np.random.default_rng(7)
    t = np.arange(288)
    rhythm = 130 + 30 * np.sin(2 * np.pi * (t - 96) / 288)
    walk = np.cumsum(rng.normal(0, 2.0, size=(30, 288)), axis=1)
    values = np.clip(rhythm + walk - walk.mean(axis=1, keepdims=True), 40, 400)
    values[3, 100:110] = np.nan
    return values


TRACE_GENERATORS = {
    "traces_add_noise": g.traces_add_noise,
    "traces_motif_shuffle": g.traces_motif_shuffle,
    "traces_autoregressive": g.traces_autoregressive,
}


@pytest.mark.parametrize("name", sorted(TRACE_GENERATORS))
def test_trace_generator_is_seeded_shaped_and_in_range(name, days):
    make = TRACE_GENERATORS[name]
    out = make(days, seed=5)
    np.testing.assert_array_equal(out, make(days, seed=5))
    assert not np.array_equal(out, make(days, seed=6), equal_nan=True)
    assert out.shape == days.shape and out.dtype == np.float64
    observed = out[np.isfinite(out)]
    assert observed.size > 0.95 * out.size
    assert observed.min() >= GLUCOSE_MIN_MG_DL and observed.max() <= GLUCOSE_MAX_MG_DL


def test_traces_add_noise_has_the_requested_noise(days):
    out = g.traces_add_noise(days, sigma=5.0, seed=0)
    assert np.nanstd(out - days) == pytest.approx(5.0, rel=0.05)
    assert np.isnan(out[3, 100:110]).all()


def test_motif_shuffle_is_made_of_real_chunks_at_their_time_of_day(days):
    out = g.traces_motif_shuffle(days, chunk=48, n=50, smooth_steps=0, seed=0)
    assert out.shape == (50, 288)
    for k in range(6):
        part = slice(48 * k, 48 * (k + 1))
        for row in out[:, part]:
            assert any(np.array_equal(row, real, equal_nan=True) for real in days[:, part])
    # days are mixed: some generated day takes its chunks from more than one real day
    whole_day = [any(np.array_equal(row, r, equal_nan=True) for r in days) for row in out]
    assert not all(whole_day)


def test_motif_shuffle_smooths_the_seams_only(days):
    rough = g.traces_motif_shuffle(days, smooth_steps=0, seed=1)
    smooth = g.traces_motif_shuffle(days, smooth_steps=6, seed=1)
    seams = np.arange(48, 288, 48)
    assert np.nanmean(np.abs(smooth[:, seams] - smooth[:, seams - 1])) < np.nanmean(
        np.abs(rough[:, seams] - rough[:, seams - 1])
    )
    after = np.concatenate([np.arange(s + 6, s + 48) for s in seams])
    np.testing.assert_array_equal(smooth[:, after], rough[:, after])


def test_motif_shuffle_rejects_a_chunk_that_does_not_divide_the_day(days):
    with pytest.raises(ValueError, match="chunk must divide n_steps=288"):
        g.traces_motif_shuffle(days, chunk=50)


def test_autoregressive_keeps_level_variability_and_smoothness(days):
    out = g.traces_autoregressive(days, n=200, order=2, seed=0)
    assert out.shape == (200, 288) and np.isfinite(out).all()
    assert out.mean() == pytest.approx(np.nanmean(days), rel=0.1)
    assert np.std(np.diff(out, axis=1)) == pytest.approx(np.nanstd(np.diff(days, axis=1)), rel=0.2)
    lag1 = np.corrcoef(out[:, :-1].ravel(), out[:, 1:].ravel())[0, 1]
    assert lag1 > 0.9
    assert not any(np.allclose(row, real) for row in out[:20] for real in days)


def test_trace_generators_reject_a_flat_array():
    with pytest.raises(ValueError, match="values must be a 2-d array"):
        g.traces_add_noise(np.arange(10.0))
