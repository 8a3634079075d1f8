"""Exact nearest-neighbour search shared by fidelity, privacy and audit.

Backend chosen by measurement on the 2-core reference machine (50k x 50k x 25 float32): faiss
``IndexFlatL2`` 1-NN 0.8-0.9 s but 5-NN 3.0-4.7 s (its k > 1 heap costs 3-4x its arg-min per
distance); scikit-learn ``NearestNeighbors`` 5-NN 5.6 s; chunked torch ``addmm`` + ``min`` 8.4
s; chunked numpy 10 s. Every search therefore goes through
:class:`synthreview.grouped_search.GroupedReference`: the distance from every query to the
nearest row of every group of ~400 rows (one faiss 1-NN call per group, product and minimum
fused in faiss, on each of the engine's threads, about one faiss 1-NN pass in all at 50k;
numpy's BLAS tiles, 1.3-2.8x that, for batches too small for faiss's BLAS path), then only the
groups that can hold a neighbour. Memory stays O(n*k) plus one batch.

Exact, unlike faiss alone: faiss ranks by float32 ``|q|^2 + |x|^2 - 2 q.x``, whose rounding
exceeds the gap between near-tied neighbours (its 5-NN on a 50k embedding named the wrong
5th neighbour for 203 rows). Here rows are centred, every candidate within twice the float32
error bound is kept, distances are re-measured in float64 from the caller's coordinates and
neighbours sorted by (distance, index), so ties resolve to the lower index on every run.

Where the search runs follows the review's :class:`~synthreview.engine.Engine`: threads
bounded, stage one on a GPU (``device="cuda"``), shards of reference rows on a Dask cluster
(:mod:`synthreview.distributed`), or, opt-in, an approximate faiss index (IVF or HNSW) whose
1-NN recall is measured on a sample of the queries and logged on the engine
(:class:`~synthreview.engine.RecallCheck`), so the report says what approximation was made;
below :data:`RECALL_FLOOR` the index searches :data:`WIDEN` times wider, and if that is still
below, the exact result is returned (and the report says so).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import faiss
import numpy as np

from synthreview.distributed import map_shards, n_workers, shard_bounds
from synthreview.engine import Engine, RecallCheck, current_engine
from synthreview.grouped_search import GROUP_ROWS, GroupedReference, TopK
from synthreview.memo import array_digest

#: queries whose approximate nearest row is checked against the exact search
RECALL_SAMPLE = 10_000
#: IVF: lists probed per query (of about 4·sqrt(n)); HNSW: neighbours per node and search width
IVF_PROBES = 16
HNSW_NEIGHBORS, HNSW_SEARCH = 32, 128
#: measured 1-NN recall below which the approximate search is widened, then replaced by the
#: exact one: per-row flags (near copies, authenticity) should miss at most 1 row in 200
RECALL_FLOOR = 0.995
#: how much wider (probed lists, search width) the second approximate attempt searches
WIDEN = 4


@dataclass(frozen=True)
class Neighbors:
    """The k nearest reference rows of each query row.

    Attributes
    ----------
    distances : ndarray of shape (n_query, k), float64
        Euclidean distances, ascending along each row.
    indices : ndarray of shape (n_query, k), int64
        Row positions in ``reference``.
    """

    distances: np.ndarray
    indices: np.ndarray


def as_float32(x: np.ndarray, name: str) -> np.ndarray:
    """``x`` as a C-contiguous float32 (n, d) array; ``name`` appears in the error."""
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array (n, d); got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; encode missing values first")
    return arr


def nearest(
    query: np.ndarray,
    reference: np.ndarray,
    *,
    k: int = 1,
    exclude_self: bool = False,
    chunk_size: int | None = None,
) -> Neighbors:
    """Find the ``k`` nearest rows of ``reference`` for every row of ``query`` (exact, L2).

    Parameters
    ----------
    query : array-like of shape (n_query, d)
    reference : array-like of shape (n_reference, d)
    k : int, default=1
        Number of neighbours; must be smaller than ``n_reference`` (``n_reference - 1`` with
        ``exclude_self``).
    exclude_self : bool, default=False
        ``query`` and ``reference`` are the same rows; skip each row's own position so the
        result is the nearest *other* row (duplicated rows still count as neighbours at 0).
    chunk_size : int, optional
        Query rows per block of the second search stage; bounds the working memory (default
        ``_grouped_search.BLOCK_ROWS``).

    Returns
    -------
    Neighbors
    """
    q = as_float32(query, "query")
    r = as_float32(reference, "reference")
    if q.shape[1] != r.shape[1]:
        raise ValueError(
            f"query has {q.shape[1]} features but reference has {r.shape[1]}; expected equal"
        )
    need = k + 1 if exclude_self else k
    if k < 1 or need > len(r):
        raise ValueError(f"k must be in [1, {len(r) - int(exclude_self)}]; got {k}")
    if exclude_self and len(q) != len(r):
        raise ValueError("exclude_self=True requires query and reference to be the same rows")
    engine = current_engine()
    if engine.approximate is not None:
        dist, idx = approximate_knn(q, r, k, exclude_self=exclude_self, engine=engine)
    elif engine.client is not None:
        engine.stage(f"exact search of {len(q):,} rows among {len(r):,} on the cluster")
        dist, idx = _sharded_knn(engine.client, q, r, k, exclude_self)
    else:
        engine.stage(f"exact search of {len(q):,} rows among {len(r):,}")
        dist, idx = exact_knn(r, q, k=k, exclude_self=exclude_self, block_rows=chunk_size)
    return Neighbors(distances=dist, indices=idx)


def exact_knn(
    reference: np.ndarray,
    query: np.ndarray,
    *,
    k: int,
    exclude_self: bool,
    offset: int = 0,
    block_rows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The grouped exact k-NN of float32 rows (``exclude_self``: query row i is reference row
    ``i - offset``; a shard of the reference starts at ``offset``)."""
    need = min(len(reference), k + 1 if exclude_self else k)
    grouped = GroupedReference(reference, n_groups=max(need, len(reference) // GROUP_ROWS))
    best = TopK(len(query), k)
    own = exclude_self and offset == 0 and len(query) == len(reference)  # a set among itself
    blocks = grouped.pair_blocks(query, nearest=need, block_rows=block_rows, query_is_reference=own)
    for qi, ri, d in blocks:
        if exclude_self:
            keep = qi != ri + offset
            qi, ri, d = qi[keep], ri[keep], d[keep]
        best.update(qi, ri + offset, d)
    return best.result()


def _shard_knn(shard_and_offset, query, *, k, exclude_self):
    shard, offset = shard_and_offset
    return exact_knn(shard, query, k=k, exclude_self=exclude_self, offset=offset)


def _sharded_knn(client, q, r, k, exclude_self):
    """Exact k-NN with the reference split into one block per Dask worker, merged exactly."""
    need = k + 1 if exclude_self else k
    bounds = shard_bounds(len(r), min(n_workers(client), len(r) // need))
    shards = [(r[a:b], int(a)) for a, b in itertools.pairwise(bounds)]
    parts = map_shards(client, _shard_knn, shards, q, k=k, exclude_self=exclude_self)
    best = TopK(len(q), k)
    rows = np.repeat(np.arange(len(q)), k)
    for dist, idx in parts:
        found = np.isfinite(dist.ravel())
        best.update(rows[found], idx.ravel()[found], dist.ravel()[found])
    return best.result()


def approximate_knn(
    query: np.ndarray,
    reference: np.ndarray,
    k: int,
    *,
    exclude_self: bool,
    engine: Engine,
    recall_floor: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """k-NN through a faiss IVF or HNSW index; the 1-NN recall goes to ``engine.recall_log``.

    Distances of the returned rows are re-measured in float64 and sorted by (distance,
    index). Up to :data:`RECALL_SAMPLE` queries (seeded sample) are searched exactly as well;
    a query counts as recalled when its approximate nearest row is at the exact minimum
    distance (a tie with another row counts). Below ``recall_floor`` (default
    :data:`RECALL_FLOOR`) the search is repeated :data:`WIDEN` times wider (probed lists or
    search width), and if it is still below, the exact search's result is returned (unless
    ``engine.exact_fallback`` is False: then the widened result is kept); the
    :class:`~synthreview.engine.RecallCheck` says which. ``engine.recall_sample`` replaces
    :data:`RECALL_SAMPLE` when set.
    """
    floor = RECALL_FLOOR if recall_floor is None else recall_floor
    need = k + 1 if exclude_self else k
    index = _index(engine, reference)
    rng = np.random.default_rng(0)
    checked = RECALL_SAMPLE if engine.recall_sample is None else engine.recall_sample
    sample = np.sort(rng.choice(len(query), min(len(query), checked), replace=False))
    kind = str(engine.approximate).upper()
    engine.stage(f"checking the {kind} index's recall: exact search of {len(sample):,} rows")
    # the exact nearest other row of each sampled query: the 2 nearest, minus the row itself
    exact_d, exact_i = exact_knn(reference, query[sample], k=need, exclude_self=False)
    if exclude_self:
        exact_d = np.where(exact_i[:, 0] == sample, exact_d[:, 1], exact_d[:, 0])
    else:
        exact_d = exact_d[:, 0]

    def recall_of(dist: np.ndarray) -> float:
        return float(np.mean(dist[sample, 0] <= exact_d)) if len(sample) else float("nan")

    first = None
    factor = WIDEN if engine.widen is None else engine.widen
    for widen in dict.fromkeys((1, factor)):  # (1,) when the engine does not widen
        if engine.approximate == "ivf":
            index.nprobe = min(IVF_PROBES * widen, index.nlist)
        else:
            index.hnsw.efSearch = max(HNSW_SEARCH * widen, need)
        wider = "" if widen == 1 else f", {widen} times wider (recall {first:.3f})"
        engine.stage(f"searching {len(query):,} rows in the {kind} index{wider}")
        dist, found = _approximate_search(index, query, reference, k, need, exclude_self)
        recall = recall_of(dist)
        first = recall if first is None else first
        if not recall < floor:  # nan (no query) passes
            engine.recall_log.append(
                RecallCheck(engine.approximate, len(sample), recall, first, widen, False, floor)
            )
            return dist, found
    if not engine.exact_fallback:
        engine.recall_log.append(
            RecallCheck(engine.approximate, len(sample), recall, first, factor, False, floor, True)
        )
        return dist, found
    engine.stage(f"exact search of {len(query):,} rows among {len(reference):,} (recall "
                 f"{recall:.3f} below {floor:.3f})")  # fmt: skip
    dist, found = exact_knn(reference, query, k=k, exclude_self=exclude_self)
    engine.recall_log.append(
        RecallCheck(engine.approximate, len(sample), recall_of(dist), first, WIDEN, True, floor)
    )
    return dist, found


def _index(engine: Engine, reference: np.ndarray):
    """The engine's faiss index of ``reference`` (built and kept on first use)."""
    key = (engine.approximate, array_digest(reference))
    if key in engine.indexes:
        return engine.indexes[key]
    d = reference.shape[1]
    kind = str(engine.approximate).upper()
    if engine.approximate == "ivf":
        n_lists = max(1, min(len(reference) // 39, int(4 * np.sqrt(len(reference)))))
        index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, n_lists)
        rng = np.random.default_rng(0)
        train = reference[
            np.sort(rng.choice(len(reference), min(len(reference), 64 * n_lists), replace=False))
        ]
        engine.stage(f"training the {kind} index ({n_lists:,} lists) on {len(train):,} of "
                     f"{len(reference):,} rows")  # fmt: skip
        index.train(train)
    else:
        index = faiss.IndexHNSWFlat(d, HNSW_NEIGHBORS)
    engine.stage(f"adding {len(reference):,} rows to the {kind} index")
    index.add(reference)
    engine.indexes[key] = index
    return index


def _approximate_search(index, query, reference, k, need, exclude_self):
    """The index's ``need`` candidates per query, re-measured in float64, best ``k`` kept."""
    _, found = index.search(query, need)
    # a row without enough neighbours in its probed lists gets -1: it points at row 0, whose
    # re-measured distance is then an honest (too large) upper bound
    found = np.where(found < 0, 0, found)
    rows = np.repeat(np.arange(len(query)), need)
    dist = _measured(query, reference, rows, found.ravel()).reshape(len(query), need)
    if exclude_self:
        dist = np.where(found == np.arange(len(query))[:, None], np.inf, dist)
    order = np.lexsort((found, dist), axis=1)[:, :k]
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(found, order, axis=1)


def _measured(query, reference, q, r) -> np.ndarray:
    """Float64 ‖query[q] − reference[r]‖."""
    diff = query[q].astype(np.float64) - reference[r]
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))
