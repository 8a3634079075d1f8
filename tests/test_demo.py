"""The bundled demo: data shipped in the package, seeded splits, candidates, files on disk."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from synthreview import demo
from synthreview.io.schema import Review
from synthreview.io.tables import read_table
from synthreview.io.traces import load_traces

DATASETS = resources.files("synthreview") / "datasets"


def _rows(frame: pd.DataFrame) -> set[tuple]:
    return set(frame.astype("str").itertuples(index=False, name=None))


def test_bundled_files_are_in_the_package_with_attribution():
    adult = pd.read_csv(DATASETS / demo.ADULT_FILE, dtype="str", keep_default_na=False)
    assert adult.shape == (48_842, 15) and adult["income"].isin(["<=50K", ">50K"]).all()
    with gzip.open(DATASETS / demo.CGM_FILE, "rt") as f:
        assert f.readline().strip() == "datetime,glucose"
        assert sum(1 for _ in f) == 52_281
    readme = (DATASETS / "README.md").read_text()
    for needle in ("CC BY 4.0", "Becker", "Kohavi", "Public domain", "Bokeh"):
        assert needle in readme


def test_split_is_disjoint_sorted_and_sized():
    first, second = demo._split(100, 30, 20, np.random.default_rng(0))
    assert len(first) == 30 and len(second) == 20
    assert not set(first) & set(second)
    assert np.all(np.diff(first) > 0) and np.all(np.diff(second) > 0)


@pytest.fixture(scope="module")
def small_tables() -> Review:
    return demo.tables(seed=0, n_train=400)


def test_tables_review_has_the_expected_candidates(small_tables):
    review = small_tables
    assert review.kind == "table"
    assert review.candidates == [
        "copula",
        "noisy_copy",
        "mode_collapse",
        "fresh_sample",
        "fresh_with_copies",
    ]
    assert review.real.n_rows == 400 and review.holdout.n_rows == 400
    assert all(t.n_rows == 400 for t in review.synthetic.values())
    assert review.schema.kinds["income"] == "categorical"
    assert review.schema.kinds["age"] == "numeric"
    assert not _rows(review.real.raw) & _rows(review.holdout.raw)
    for table in (review.real, review.holdout, *review.synthetic.values()):
        assert list(table.frame.columns) == review.schema.columns
        assert list(table.raw.columns) == review.schema.columns


def test_tables_are_deterministic_for_a_seed(small_tables):
    again = demo.tables(seed=0, n_train=400)
    other = demo.tables(seed=1, n_train=400)
    assert again.real.sha256 == small_tables.real.sha256 != other.real.sha256
    for name in small_tables.candidates:
        pd.testing.assert_frame_equal(
            again.synthetic[name].frame, small_tables.synthetic[name].frame
        )
        assert again.synthetic[name].sha256 != other.synthetic[name].sha256


def test_fresh_candidates_are_unseen_real_rows_and_planted_copies(small_tables):
    # the "perfect generator" candidate shares no row with training or holdout; its leaky twin
    # holds exactly the leaked share of training rows, the rest unchanged
    key = lambda frame: set(map(tuple, frame.astype(str).to_numpy()))  # noqa: E731
    fresh = small_tables.synthetic["fresh_sample"].frame
    leaky = small_tables.synthetic["fresh_with_copies"].frame
    train, holdout = key(small_tables.real.frame), key(small_tables.holdout.frame)
    assert not key(fresh) & train and not key(fresh) & holdout
    copies = [row for row in map(tuple, leaky.astype(str).to_numpy()) if row in train]
    assert len(copies) == round(demo.LEAKED_SHARE * len(leaky))
    kept = [row for row in map(tuple, leaky.astype(str).to_numpy()) if row not in train]
    assert set(kept) <= key(fresh)


def test_noisy_copy_is_the_train_table_plus_noise(small_tables):
    real = small_tables.real.frame
    noisy = small_tables.synthetic["noisy_copy"].frame
    categorical = small_tables.schema.categorical
    pd.testing.assert_frame_equal(noisy[categorical], real[categorical])
    assert (noisy["age"] - real["age"]).abs().median() <= 2


def test_tables_reject_an_impossible_size():
    with pytest.raises(ValueError, match="n_train must be in"):
        demo.tables(n_train=48_842)
    with pytest.raises(ValueError, match="n_holdout must be in"):
        demo.tables(n_train=40_000, n_holdout=10_000)


@pytest.fixture(scope="module")
def trace_review() -> Review:
    return demo.traces(seed=0)


def test_traces_review_splits_days_and_has_the_expected_candidates(trace_review):
    review = trace_review
    assert review.kind == "traces"
    assert review.candidates == ["motif_shuffle", "autoregressive", "noisy_copy"]
    real, holdout = review.traces["real"], review.traces["holdout"]
    assert real.n_steps == 288 and real.n_traces + holdout.n_traces > 150
    assert holdout.n_traces == round(demo.TRACE_HOLDOUT_SHARE * (real.n_traces + holdout.n_traces))
    assert not set(real.meta["start"]) & set(holdout.meta["start"])
    for name in review.candidates:
        values = review.traces[name].values
        assert values.shape == real.values.shape
        assert np.isfinite(values).all() and values.min() >= 40 and values.max() <= 400
    noise = review.traces["noisy_copy"].values - real.values
    assert np.std(noise) == pytest.approx(demo.NOISY_TRACE_SIGMA_MG_DL, rel=0.1)


@pytest.mark.slow
def test_traces_are_deterministic_for_a_seed(trace_review):
    again = demo.traces(seed=0)
    other = demo.traces(seed=1)
    for name in ("real", *trace_review.candidates):
        np.testing.assert_array_equal(again.traces[name].values, trace_review.traces[name].values)
    assert not np.array_equal(other.traces["real"].values, trace_review.traces["real"].values)


@pytest.mark.slow
def test_trace_demo_files_load_back_exactly(tmp_path, trace_review):
    files = demo.demo_files(tmp_path, kind="traces", seed=0)
    assert files.real.name == "cgm_train.csv" and files.holdout.name == "cgm_holdout.csv"
    assert sorted(files.synthetic) == sorted(trace_review.candidates)
    for key, path in [("real", files.real), ("holdout", files.holdout), *files.synthetic.items()]:
        loaded = load_traces(path)
        expected = trace_review.traces[key]
        np.testing.assert_array_equal(loaded.values, expected.values)
        assert loaded.sha256 == expected.sha256


def test_ctgan_sample_is_offered_only_for_its_own_training_table(small_tables):
    assert "ctgan" not in small_tables.candidates
    assert demo._ctgan_for(small_tables.real.sha256) is None
    record = json.loads((DATASETS / demo.CTGAN_RECORD).read_text())
    ctgan = demo._ctgan_for(record["train_sha256"])
    assert ctgan is not None and ctgan.n_rows == record["rows"]
    assert list(ctgan.frame.columns) == small_tables.schema.columns


@pytest.mark.slow
def test_table_demo_files_load_back_exactly(tmp_path):
    files = demo.demo_files(tmp_path, kind="tables", seed=0)
    review = demo.tables(seed=0)
    # the default demo is the split the shipped CTGAN model was trained on
    assert review.candidates[-1] == "ctgan"
    assert (
        review.real.sha256 == json.loads((DATASETS / demo.CTGAN_RECORD).read_text())["train_sha256"]
    )
    tables = {"real": review.real, "holdout": review.holdout, **review.synthetic}
    paths = {"real": files.real, "holdout": files.holdout, **files.synthetic}
    assert paths.keys() == tables.keys()
    for key, path in paths.items():
        loaded = read_table(path)
        assert loaded.sha256 == tables[key].sha256, key
        pd.testing.assert_frame_equal(loaded.frame, tables[key].frame)
        pd.testing.assert_frame_equal(loaded.raw, tables[key].raw)


def test_demo_files_reject_an_unknown_kind(tmp_path):
    with pytest.raises(ValueError, match="kind must be 'tables' or 'traces'"):
        demo.demo_files(tmp_path, kind="images")
