"""Exact nearest neighbours against brute force."""

import faiss
import numpy as np
import pytest
import torch

from synthreview import grouped_search, neighbors
from synthreview.engine import Engine, limited_threads, using
from synthreview.errors import ConfigError
from synthreview.grouped_search import GroupedReference, TopK, group_minima_torch
from synthreview.neighbors import approximate_knn, nearest


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


def _exact_knn(q, r, k, exclude_self=False):
    dist = _brute(q.astype(np.float64), r.astype(np.float64))
    if exclude_self:
        np.fill_diagonal(dist, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(len(r)), dist.shape), dist), axis=1)[:, :k]
    return np.take_along_axis(dist, order, axis=1), order


@pytest.mark.parametrize("offset", [0.0, 300.0])
def test_grouped_knn_equals_float64_brute_force(offset):
    # offset 300 makes |x|² ~ 1e6, where float32 |q|² + |x|² − 2 q·x misranks near-ties
    # by far more than the gaps between neighbours; the grouped search must still be exact
    rng = np.random.default_rng(2)
    ref = rng.normal(size=(900, 4)).astype(np.float32) + offset
    ref[10] = ref[11]  # an exact duplicate: both count, the lower index first
    query = rng.normal(size=(300, 4)).astype(np.float32) + offset
    grouped = GroupedReference(ref, n_groups=30)
    for k in (1, 5):
        dist, idx = grouped.knn(query, k, exclude_self=False)
        want_d, want_i = _exact_knn(query, ref, k)
        np.testing.assert_array_equal(idx, want_i)
        np.testing.assert_allclose(dist, want_d, rtol=0, atol=1e-9)
    dist, idx = grouped.knn(ref, 5, exclude_self=True)
    want_d, want_i = _exact_knn(ref, ref, 5, exclude_self=True)
    np.testing.assert_array_equal(idx, want_i)
    assert idx[10, 0] == 11 and dist[10, 0] == 0.0


def test_pair_blocks_hold_every_pair_within_either_limit_once():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(700, 3)).astype(np.float32) + 50.0
    query = rng.normal(size=(200, 3)).astype(np.float32) + 50.0
    query_limit = rng.uniform(0.0, 0.3, size=200)
    ref_limit = rng.uniform(0.0, 0.3, size=700)
    grouped = GroupedReference(ref, n_groups=20, order=rng.permutation(700))
    blocks = list(grouped.pair_blocks(query, query_limit=query_limit, reference_limit=ref_limit))
    q, r, d = (np.concatenate(parts) for parts in zip(*blocks, strict=True))
    dist = _brute(query.astype(np.float64), ref.astype(np.float64))
    np.testing.assert_allclose(d, dist[q, r], rtol=0, atol=1e-9)
    assert len(set(zip(q.tolist(), r.tolist(), strict=True))) == len(q)  # each pair once
    want = (dist**2 <= query_limit[:, None]) | (dist**2 <= ref_limit[None, :])
    got = np.zeros_like(want)
    got[q, r] = True
    assert not (want & ~got).any()


def test_nearest_is_exact_where_float32_ranking_is_not():
    # |x|² ~ 1e6: float32 |q|² + |x|² − 2 q·x misranks neighbours that are 1e-3 apart
    rng = np.random.default_rng(4)
    ref = rng.normal(size=(3000, 3)).astype(np.float32) + 1000.0
    query = rng.normal(size=(200, 3)).astype(np.float32) + 1000.0
    for k in (1, 4):
        got = nearest(query, ref, k=k, chunk_size=37)
        want_d, want_i = _exact_knn(query, ref, k)
        np.testing.assert_array_equal(got.indices, want_i)
        np.testing.assert_allclose(got.distances, want_d, rtol=0, atol=1e-9)


def test_grouped_nearest_with_order_and_ties_equals_brute_force():
    rng = np.random.default_rng(5)
    ref = np.round(rng.normal(size=(600, 2)), 1).astype(np.float32)  # many exact ties
    query = np.round(rng.normal(size=(150, 2)), 1).astype(np.float32)
    grouped = GroupedReference(ref, n_groups=15, order=rng.permutation(600))
    for k in (1, 3):
        dist, idx = grouped.knn(query, k, exclude_self=False)
        want_d, want_i = _exact_knn(query, ref, k)
        np.testing.assert_array_equal(idx, want_i)  # ties → lower index
        np.testing.assert_allclose(dist, want_d, rtol=0, atol=1e-12)


def test_top_k_merges_buffered_blocks_like_one_sort():
    rng = np.random.default_rng(6)
    q = rng.integers(0, 30, size=400)
    r = rng.permutation(400)  # distinct reference rows, so ties break on index
    d = rng.integers(0, 5, size=400).astype(float)  # many equal distances
    small = TopK(30, 3, flush_at=7)  # merges many times along the way
    for s in range(0, 400, 11):
        small.update(q[s : s + 11], r[s : s + 11], d[s : s + 11])
    dist, idx = small.result()
    for row in range(30):
        mine = np.lexsort((r[q == row], d[q == row]))[:3]
        np.testing.assert_array_equal(idx[row], r[q == row][mine])
        np.testing.assert_array_equal(dist[row], d[q == row][mine])


def test_stage_one_tiles_cover_uneven_groups_and_large_batches(monkeypatch):
    # several query batches, several tiles of groups and groups of unequal size (padding)
    monkeypatch.setattr(grouped_search, "QUERY_BATCH", 70)
    monkeypatch.setattr(grouped_search, "STAGE_ONE_ROWS", 32)
    monkeypatch.setattr(grouped_search, "TILE_QUERIES", 16)
    monkeypatch.setattr(grouped_search, "TILE_GROUPS", 3)
    rng = np.random.default_rng(5)
    ref = rng.normal(size=(301, 3)).astype(np.float32)
    query = rng.normal(size=(200, 3)).astype(np.float32)
    dist, idx = GroupedReference(ref, n_groups=13).knn(query, 4, exclude_self=False)
    want_d, want_i = _exact_knn(query, ref, 4)
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_allclose(dist, want_d, rtol=0, atol=1e-9)


def test_group_minima_torch_equals_numpy():
    rng = np.random.default_rng(6)
    q_aug = rng.normal(size=(37, 5)).astype(np.float32)
    padded = rng.normal(size=(5, 4 * 9)).astype(np.float32)
    got = group_minima_torch(torch.from_numpy(q_aug), torch.from_numpy(padded), 9).numpy()
    want = (q_aug.astype(np.float64) @ padded).reshape(37, 4, 9).min(axis=2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_approximate_search_reports_its_measured_recall(kind):
    rng = np.random.default_rng(7)
    ref = rng.normal(size=(3000, 6)).astype(np.float32)
    query = rng.normal(size=(500, 6)).astype(np.float32)
    engine = Engine(approximate=kind)
    with using(engine):
        got = nearest(query, ref, k=2)
        own = nearest(ref, ref, k=1, exclude_self=True)
    exact = nearest(query, ref, k=2)
    exact_own = nearest(ref, ref, k=1, exclude_self=True)
    want = float(np.mean(got.distances[:, 0] <= exact.distances[:, 0]))
    assert [c.checked for c in engine.recall_log] == [500, 3000]
    assert engine.recall_log[0].recall == pytest.approx(want)
    assert engine.recall_log[1].recall == pytest.approx(
        float(np.mean(own.distances[:, 0] <= exact_own.distances[:, 0]))
    )
    assert want > 0.9  # a sane index finds most nearest rows at these sizes
    assert not (own.indices[:, 0] == np.arange(3000)).any()
    assert "1-NN recall" in engine.recall_log[0].describe()


def test_engine_validates_its_settings():
    with pytest.raises(ConfigError, match="threads must be"):
        Engine(threads=0)
    with pytest.raises(ConfigError, match="approximate must be"):
        Engine(approximate="lsh")
    with pytest.raises(ConfigError, match="device must be"):
        Engine(device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="needs CUDA"):
            Engine(device="cuda")


def test_limited_threads_bounds_and_restores():
    before = torch.get_num_threads()
    with limited_threads(1):
        assert torch.get_num_threads() == 1 and faiss.omp_get_max_threads() == 1
    assert torch.get_num_threads() == before


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_search_equals_cpu_search():
    rng = np.random.default_rng(8)
    ref = rng.normal(size=(5000, 20)).astype(np.float32) + 50.0
    ref[7] = ref[8]
    query = rng.normal(size=(3000, 20)).astype(np.float32) + 50.0
    want = nearest(query, ref, k=5)
    want_self = nearest(ref, ref, k=5, exclude_self=True)
    with using(Engine(device="cuda")):
        got = nearest(query, ref, k=5)
        got_self = nearest(ref, ref, k=5, exclude_self=True)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.distances, want.distances, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(got_self.indices, want_self.indices)


def test_approximate_search_below_the_recall_floor_widens_then_falls_back_to_exact(
    monkeypatch,
):
    rng = np.random.default_rng(11)
    ref = rng.normal(size=(3000, 6)).astype(np.float32)
    query = rng.normal(size=(400, 6)).astype(np.float32)
    exact = nearest(query, ref, k=2)
    monkeypatch.setattr(neighbors, "IVF_PROBES", 1)  # one list of 76: recall far below 0.99
    # widened to every list the index is exhaustive: back above the floor
    monkeypatch.setattr(neighbors, "WIDEN", 1000)
    engine = Engine(approximate="ivf")
    dist, idx = approximate_knn(query, ref, 2, exclude_self=False, engine=engine,
                                recall_floor=0.99)  # fmt: skip
    (check,) = engine.recall_log
    assert check.first_recall < 0.99 <= check.recall and check.widened == 1000
    assert not check.exact_fallback and "wider" in check.describe()
    assert check.recall == pytest.approx(float(np.mean(dist[:, 0] <= exact.distances[:, 0])))
    # a floor no approximate search can reach: the exact result, and the report says so
    monkeypatch.setattr(neighbors, "WIDEN", 2)
    engine = Engine(approximate="ivf")
    dist, idx = approximate_knn(query, ref, 2, exclude_self=False, engine=engine,
                                recall_floor=1.01)  # fmt: skip
    (check,) = engine.recall_log
    assert check.exact_fallback and check.recall == 1.0 and check.first_recall < 0.99
    assert "exact search was used" in check.describe()
    np.testing.assert_array_equal(idx, exact.indices)
    np.testing.assert_array_equal(dist, exact.distances)
