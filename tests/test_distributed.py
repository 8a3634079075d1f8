"""A review on a Dask cluster equals the in-process review (exact sharded searches)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import synthreview as sr
from synthreview.engine import Engine, using
from synthreview.errors import ConfigError
from synthreview.metrics.fidelity.scan import real_index, tally
from synthreview.neighbors import nearest
from synthreview.options import ReviewOptions
from synthreview.review import evaluate


@pytest.fixture(scope="module")
def cluster():
    # two single-threaded workers in this process: the shards really split, nothing forks
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as local:
        yield local


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "hours": rng.normal(40, 8, n).round(1),
            "sex": rng.choice(["F", "M"], n),
        }
    )


def test_review_on_a_cluster_equals_the_in_process_review(cluster):
    real = _frame(300, 0)
    review = sr.align(
        real, {"fresh": _frame(250, 2), "copy": real.iloc[:200]}, holdout=_frame(280, 1)
    )
    options = ReviewOptions(max_attack=100, n_bootstrap=20)
    sections = ("fidelity", "privacy")
    local = evaluate(review, sections=sections, options=options, seed=3)
    remote = evaluate(
        review, sections=sections, options=options, seed=3, scheduler=cluster.scheduler_address
    )
    for candidate in remote.candidates.values():
        assert candidate.errors == {}
    assert json.dumps(remote.to_dict(), sort_keys=True) == json.dumps(
        local.to_dict(), sort_keys=True
    )


def test_sharded_searches_equal_local_ones_with_ties(cluster):
    rng = np.random.default_rng(0)
    real = rng.normal(size=(500, 4)).astype(np.float32)
    real[300:] = real[:200]  # exact duplicates across the two shards: ties by global index
    other = np.vstack([real[:50], rng.normal(size=(200, 4)).astype(np.float32)])
    radii = nearest(real, real, k=5, exclude_self=True).distances[:, -1]
    options = {
        "recall_radii": radii,
        "cd_g": np.linalg.norm(other, axis=1),
        "ball_radii": radii,
        "own_radii": nearest(other, other, k=5, exclude_self=True).distances[:, -1],
    }
    want_knn = nearest(other, real, k=3)
    want_self = nearest(real, real, k=2, exclude_self=True)
    want = tally(real_index(real, radii), other, **options)
    with Client(cluster.scheduler_address) as client, using(Engine(client=client)):
        got_knn = nearest(other, real, k=3)
        got_self = nearest(real, real, k=2, exclude_self=True)
        got = tally(real_index(real, radii), other, **options)
    np.testing.assert_array_equal(got_knn.indices, want_knn.indices)
    np.testing.assert_array_equal(got_knn.distances, want_knn.distances)
    np.testing.assert_array_equal(got_self.indices, want_self.indices)
    for field in want.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))


def test_a_bad_scheduler_address_is_a_config_error():
    review = sr.align(_frame(50, 0), {"a": _frame(50, 1)})
    with pytest.raises(ConfigError, match="scheduler must be"):
        evaluate(review, sections=("fidelity",), scheduler="localhost")
