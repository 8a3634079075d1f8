"""Stage one of the grouped search (cache-sized tiles) against float64 brute force."""

import itertools

import faiss
import numpy as np
import pytest

from synthreview import grouped_search
from synthreview.engine import blas_threads, limited_threads
from synthreview.grouped_search import GroupedReference, group_minima
from tests.stage_one import PATHS, stage_one_path

#: (tile_queries, tile_groups): one row, uneven tiles, tiles wider than every group, defaults
TILES = [(1, 1), (3, 2), (7, 5), (16, 100), (None, None)]


def _augmented(query, reference, size):
    """``[q, 1]`` and the groups of ``[−2r, |r|²]`` side by side (``size`` rows per group)."""
    q_aug = np.hstack([query, np.ones((len(query), 1))]).astype(np.float32)
    padded = np.vstack([-2.0 * reference.T, (reference**2).sum(axis=1)]).astype(np.float32)
    assert padded.shape[1] % size == 0
    return q_aug, padded


def _brute_minima(query, reference, size):
    """float64 ``min over each group of d² − |q|²``."""
    q, r = query.astype(np.float64), reference.astype(np.float64)
    d2 = ((q[:, None, :] - r[None, :, :]) ** 2).sum(-1) - (q**2).sum(1)[:, None]
    return d2.reshape(len(q), -1, size).min(axis=2)


def test_group_minima_hand_checked():
    # q = (0, 0): group 0 holds (1, 0) at d² 1, group 1 holds (2, 2) at d² 8
    # q = (2, 1), |q|² = 5: group 0 (1, 0) at d² 2 → −3; group 1 (2, 2) at d² 1 → −4
    query = np.array([[0.0, 0.0], [2.0, 1.0]])
    reference = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 2.0], [4.0, 1.0]])
    q_aug, padded = _augmented(query, reference, 2)
    for tile_queries, tile_groups in TILES:
        got = group_minima(q_aug, padded, 2, tile_queries=tile_queries, tile_groups=tile_groups)
        np.testing.assert_array_equal(got, [[1.0, 8.0], [-3.0, -4.0]])


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(("tile_queries", "tile_groups"), TILES)
def test_group_minima_equal_brute_force_with_ties_and_duplicates(
    threads, tile_queries, tile_groups
):
    # small integers: every float32 product and sum is exact, so the minima must be equal,
    # whatever the tile shape (53 queries and 7 groups: no tile size here divides both)
    rng = np.random.default_rng(0)
    reference = rng.integers(-3, 4, size=(7 * 6, 5)).astype(np.float64)
    reference[5] = reference[4]  # a duplicate inside a group
    reference[30] = reference[4]  # and in another group
    query = rng.integers(-3, 4, size=(53, 5)).astype(np.float64)
    query[:3] = reference[4]  # queries at distance 0 from three rows
    q_aug, padded = _augmented(query, reference, 6)
    got = group_minima(
        q_aug, padded, 6, threads=threads, tile_queries=tile_queries, tile_groups=tile_groups
    )
    assert got.dtype == np.float32 and got.shape == (53, 7)
    np.testing.assert_array_equal(got, _brute_minima(query, reference, 6))


def test_group_minima_within_float32_bound_and_same_for_any_thread_count():
    rng = np.random.default_rng(1)
    reference = rng.normal(size=(9 * 11, 4))
    query = rng.normal(size=(301, 4))
    q_aug, padded = _augmented(query, reference, 11)
    want = _brute_minima(query, reference, 11)
    one = group_minima(q_aug, padded, 11, threads=1, tile_queries=13, tile_groups=4)
    # (d + 3) units of roundoff of |q|² + |r|², the bound the search widens its limits by
    bound = 7 * np.finfo(np.float32).eps * ((query**2).sum(1).max() + (reference**2).sum(1).max())
    np.testing.assert_allclose(one, want, rtol=0, atol=2 * bound)
    # the same tiles whichever thread computes them: bit-for-bit equal
    two = group_minima(q_aug, padded, 11, threads=2, tile_queries=13, tile_groups=4)
    np.testing.assert_array_equal(one, two)


def _exact_knn(query, reference, k):
    """float64 brute force, ties → lower index."""
    q, r = query.astype(np.float64), reference.astype(np.float64)
    dist = np.sqrt(((q[:, None, :] - r[None, :, :]) ** 2).sum(-1))
    index = np.broadcast_to(np.arange(len(r)), dist.shape)
    order = np.lexsort((index, dist), axis=1)[:, :k]
    return np.take_along_axis(dist, order, axis=1), order


@pytest.mark.parametrize(("tile_queries", "tile_bytes"), [(5, 64), (17, 4096), (128, 1 << 19)])
def test_knn_equals_brute_force_for_any_tile(monkeypatch, tile_queries, tile_bytes):
    # integer rows: many exact distance ties and duplicates; 233 reference rows in 19 groups
    # of 12-13 (padded), 211 queries: tiles of 5 or 17 rows divide neither
    monkeypatch.setattr(grouped_search, "TILE_QUERIES", tile_queries)
    monkeypatch.setattr(grouped_search, "TILE_BYTES", tile_bytes)
    monkeypatch.setattr(grouped_search, "STAGE_ONE_ROWS", 64)
    rng = np.random.default_rng(2)
    reference = rng.integers(-2, 3, size=(233, 3)).astype(np.float32)
    query = rng.integers(-2, 3, size=(211, 3)).astype(np.float32)
    query[:4] = reference[:4]
    grouped = GroupedReference(reference, n_groups=19)
    for k in (1, 4):
        dist, idx = grouped.knn(query, k, exclude_self=False)
        want_d, want_i = _exact_knn(query, reference, k)
        np.testing.assert_array_equal(idx, want_i)
        np.testing.assert_array_equal(dist, want_d)


def test_stage_one_threads_follow_the_blas_limit():
    with limited_threads(1):
        assert blas_threads() == 1
    with limited_threads(2):
        assert blas_threads() == 2


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("flush_at", [1, 7, 1 << 22])
def test_top_k_equals_one_sort_with_ties(k, flush_at):
    # distances 0-3 only: most candidates tie; a row may see the same pair twice
    rng = np.random.default_rng(3)
    n_query, m = 40, 600
    q = rng.integers(0, n_query - 5, m)  # the last 5 rows get no candidate
    r = rng.integers(0, 50, m)
    d = rng.integers(0, 4, m).astype(np.float64)
    best = grouped_search.TopK(n_query, k, flush_at=flush_at)
    for s in range(0, m, 37):
        best.update(q[s : s + 37], r[s : s + 37], d[s : s + 37])
    dist, idx = best.result()
    for row in range(n_query):
        mine = np.lexsort((r[q == row], d[q == row]))
        want_d = np.full(k, np.inf)
        want_i = np.full(k, np.iinfo(np.int64).max)
        want_d[: min(k, len(mine))] = d[q == row][mine][:k]
        want_i[: min(k, len(mine))] = r[q == row][mine][:k]
        np.testing.assert_array_equal(dist[row], want_d)
        np.testing.assert_array_equal(idx[row], want_i)


def _self_layout(reference, size):
    """``[x, 1, |x|²]`` and the groups of ``[−2r; |r|²; 1]`` (padding columns give PAD)."""
    n_groups = -(-len(reference) // size)
    bounds = np.minimum(np.arange(n_groups + 1) * size, len(reference))
    norms = (reference**2).sum(1)
    rows_aug = np.hstack([reference, np.ones((len(reference), 1)), norms[:, None]])
    padded = np.zeros((reference.shape[1] + 2, n_groups * size))
    padded[-2] = grouped_search.PAD
    padded[:, : len(reference)] = np.vstack([-2.0 * reference.T, norms, np.ones(len(reference))])
    return rows_aug.astype(np.float32), padded.astype(np.float32), bounds


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("tile_groups", [1, 2, 5, None])
def test_self_group_minima_equal_brute_force_both_directions(threads, tile_groups):
    # small integers: exact float32 arithmetic, so the d² minima must equal float64 brute
    # force; 40 rows in groups of 6 (the last group 4 rows, padded), duplicates across groups
    rng = np.random.default_rng(3)
    reference = rng.integers(-3, 4, size=(40, 5)).astype(np.float64)
    reference[[7, 25]] = reference[1]
    rows_aug, padded, bounds = _self_layout(reference, 6)
    got = grouped_search.self_group_minima(
        rows_aug, padded, bounds, 6, threads=threads, tile_groups=tile_groups
    )
    d2 = ((reference[:, None, :] - reference[None, :, :]) ** 2).sum(-1)
    want = np.stack([d2[:, a:b].min(axis=1) for a, b in itertools.pairwise(bounds)], axis=1)
    assert got.shape == (40, 7) and got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("use_self", ["kernel", True, False])
def test_knn_of_a_set_among_itself_equals_brute_force_in_any_order(monkeypatch, use_self):
    # the radii passes: integer rows (ties, duplicates), rows grouped in a shuffled order;
    # with and without the self-minima stage one (register kernel or numpy's tiles) the
    # neighbours are float64 brute force's
    if use_self == "kernel" and grouped_search.KERNEL is None:
        pytest.skip("the stage-one C kernels are not built (pip install -e .)")
    if use_self != "kernel":
        monkeypatch.setattr(grouped_search, "KERNEL", None)
    monkeypatch.setattr(grouped_search, "SELF_MINIMA_BYTES", (1 << 28) if use_self else 0)
    monkeypatch.setattr(grouped_search, "STAGE_ONE_ROWS", 32)
    calls = []
    name = "kernel_self_minima" if use_self == "kernel" else "self_group_minima"
    original = getattr(grouped_search, name)
    monkeypatch.setattr(
        grouped_search, name, lambda *a, **kw: calls.append(1) or original(*a, **kw)
    )
    rng = np.random.default_rng(4)
    reference = rng.integers(-2, 3, size=(257, 3)).astype(np.float32)
    reference[100] = reference[3]
    order = rng.permutation(len(reference))
    with limited_threads(2):
        dist, idx = GroupedReference(reference, n_groups=17, order=order).knn(
            reference, 5, exclude_self=True
        )
    assert bool(calls) == bool(use_self)
    q = reference.astype(np.float64)
    full = np.sqrt(((q[:, None, :] - q[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(full, np.inf)
    index = np.broadcast_to(np.arange(len(q)), full.shape)
    want_i = np.lexsort((index, full), axis=1)[:, :5]
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_array_equal(dist, np.take_along_axis(full, want_i, axis=1))


def test_self_search_needs_the_reference_rows():
    grouped = GroupedReference(np.zeros((10, 2), np.float32), n_groups=2)
    with pytest.raises(ValueError, match="query_is_reference=True needs the reference's 10 rows"):
        next(grouped.pair_blocks(np.zeros((9, 2), np.float32), nearest=1,
                                 query_is_reference=True))  # fmt: skip


@pytest.fixture(params=PATHS)
def stage_one(request, monkeypatch):
    """Stage one through numpy's tiles, through faiss's k = 1 search (small calls, which
    faiss would otherwise run pair by pair, forced onto it) or through the register kernels;
    the teardown checks the path."""
    if request.param == "fused":
        monkeypatch.setattr(grouped_search, "STAGE_ONE_ROWS", 16)
    with stage_one_path(monkeypatch, request.param):
        yield request.param


@pytest.mark.parametrize("d", [3, 20, 40])  # both sides of FUSED_MAX_DIM
def test_fused_group_distances_within_their_float32_bound(monkeypatch, d):
    monkeypatch.setattr(faiss.cvar, "distance_compute_blas_threshold", 0)
    rng = np.random.default_rng(7)
    reference = rng.normal(size=(103, d)).astype(np.float32)
    query = rng.normal(size=(57, d)).astype(np.float32)
    query[:2] = reference[[5, 80]]  # at distance 0 from a row of group 0 and of group 7
    bounds = np.array([0, 10, 11, 25, 40, 41, 60, 77, 103])  # uneven, two of one row
    got = grouped_search.fused_group_distances(query, reference, bounds)
    d2 = ((query[:, None, :].astype(np.float64) - reference[None, :, :]) ** 2).sum(-1)
    want = np.stack([d2[:, a:b].min(axis=1) for a, b in itertools.pairwise(bounds)], axis=1)
    assert got.shape == (57, 8) and got.dtype == np.float32
    # (2d + 4) units of roundoff of |q|² + |r|²: the bound the fused path's margin doubles
    scale = (query**2).sum(1).max() + (reference**2).sum(1).max()
    np.testing.assert_allclose(
        got, want, rtol=0, atol=(2 * d + 4) * np.finfo(np.float32).eps * scale
    )
    assert got[0, 0] <= 1e-4 and got[1, 7] <= 1e-4


def test_fused_rows_reach_faiss_threshold_or_fall_back(monkeypatch):
    monkeypatch.setattr(grouped_search, "STAGE_ONE_ROWS", 100)
    monkeypatch.setattr(faiss.cvar, "distance_compute_blas_threshold", 128_000)
    assert grouped_search.fused_rows(20) == 6401  # 6401 × 20 > 128,000
    assert grouped_search.fused_rows(4) is None  # 32,001 rows: past FUSED_MAX_ROWS
    assert grouped_search.fused_rows(32) == 4001
    assert grouped_search.fused_rows(33) is None  # past FUSED_MAX_DIM: numpy's tiles
    monkeypatch.setattr(faiss.cvar, "distance_compute_blas_threshold", 20)
    assert grouped_search.fused_rows(4) == 100


@pytest.mark.parametrize("offset", [0.0, 300.0])
@pytest.mark.parametrize("threads", [1, 2])
def test_both_stage_ones_give_brute_force_neighbours_and_pairs(stage_one, offset, threads):
    # offset 300: |x|² ~ 1e5, where float32 ranking errs by more than the neighbour gaps and
    # only the margins keep the search exact; integer-rounded rows add ties and duplicates
    rng = np.random.default_rng(8)
    reference = (np.round(rng.normal(size=(611, 4)), 1) + offset).astype(np.float32)
    reference[[40, 300]] = reference[7]
    query = (np.round(rng.normal(size=(203, 4)), 1) + offset).astype(np.float32)
    query[:3] = reference[[7, 8, 9]]
    grouped = GroupedReference(reference, n_groups=23, order=rng.permutation(611))
    with limited_threads(threads):
        for k in (1, 5):
            dist, idx = grouped.knn(query, k, exclude_self=False)
            want_d, want_i = _exact_knn(query, reference, k)
            np.testing.assert_array_equal(idx, want_i)
            np.testing.assert_allclose(dist, want_d, rtol=0, atol=1e-9)
        dist, idx = GroupedReference(reference, n_groups=23).knn(reference, 5, exclude_self=True)
        q = reference.astype(np.float64)
        full = np.sqrt(((q[:, None, :] - q[None, :, :]) ** 2).sum(-1))
        np.fill_diagonal(full, np.inf)
        want_i = np.lexsort((np.broadcast_to(np.arange(len(q)), full.shape), full), axis=1)[:, :5]
        np.testing.assert_array_equal(idx, want_i)
        query_limit = rng.uniform(0.0, 0.3, size=203)
        ref_limit = rng.uniform(0.0, 0.3, size=611)
        blocks = grouped.pair_blocks(
            query, query_limit=query_limit, reference_limit=ref_limit, nearest=1
        )
        pq, pr, pd = (np.concatenate(parts) for parts in zip(*blocks, strict=True))
    full = np.sqrt(((query[:, None, :].astype(np.float64) - reference[None]) ** 2).sum(-1))
    np.testing.assert_allclose(pd, full[pq, pr], rtol=0, atol=1e-9)
    assert len(set(zip(pq.tolist(), pr.tolist(), strict=True))) == len(pq)  # each pair once
    want = (full**2 <= query_limit[:, None]) | (full**2 <= ref_limit[None, :])
    want[np.arange(203), full.argmin(axis=1)] = True  # and each query's nearest row
    got = np.zeros_like(want)
    got[pq, pr] = True
    assert not (want & ~got).any()
