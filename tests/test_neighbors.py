"""Exact nearest neighbours against brute force."""

import numpy as np
import pytest

from synthreview.neighbors import nearest


def _brute(q, r):
    return np.sqrt(((q[:, None, :] - r[None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("k", [1, 3])
def test_matches_brute_force(k):
    rng = np.random.default_rng(0)
    ref, query = rng.normal(size=(120, 5)), rng.normal(size=(70, 5))
    got = nearest(query, ref, k=k, chunk_size=16)
    dist = _brute(query, ref)
    np.testing.assert_allclose(got.distances, np.sort(dist, axis=1)[:, :k], atol=1e-5)
    np.testing.assert_array_equal(got.indices[:, 0], dist.argmin(axis=1))


def test_exclude_self_returns_nearest_other_row():
    rng = np.random.default_rng(1)
    ref = rng.normal(size=(50, 3))
    got = nearest(ref, ref, k=2, exclude_self=True)
    dist = _brute(ref, ref)
    np.fill_diagonal(dist, np.inf)
    np.testing.assert_allclose(got.distances, np.sort(dist, axis=1)[:, :2], atol=1e-5)
    assert not (got.indices == np.arange(50)[:, None]).any()


def test_exact_copies_are_exactly_zero_and_duplicates_count():
    ref = np.array([[1e4, 2e4], [1e4, 2e4], [5.0, 5.0]])
    got = nearest(ref, ref, k=1, exclude_self=True)
    assert got.distances[0, 0] == 0.0 and got.indices[0, 0] == 1
    assert nearest(ref[2:], ref).distances[0, 0] == 0.0


def test_ties_resolve_to_lower_index():
    ref = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    got = nearest(np.zeros((1, 2)), ref, k=3)
    np.testing.assert_array_equal(got.indices[0], [0, 1, 2])


def test_rejects_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        nearest(np.array([[np.nan]]), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="features"):
        nearest(np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="k must be"):
        nearest(np.zeros((2, 2)), np.zeros((2, 2)), k=3)
