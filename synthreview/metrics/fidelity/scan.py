"""One pass of an evaluated set against the real rows: everything fidelity needs from pairs.

Authenticity needs each evaluated row's nearest real row; β-Recall (Alaa et al. 2022, §4) the
evaluated rows within NND_k of each real row; PRDC (Naeem et al. 2020) the rows inside each
real row's k-ball (precision, density, coverage) and inside each evaluated row's own k-ball
(recall). :func:`tally` gets all of them from one
:meth:`synthreview.grouped_search.GroupedReference.pair_blocks` pass and reduces each block
at once (counts, flags, minima), so memory stays O(n) even when thousands of exact duplicates
fall inside every ball (a categorical-only table).

On a Dask cluster (the review's :class:`~synthreview.engine.Engine` has a client) the real
rows are split into one block per worker (blocks of the radius order, so each block's groups
stay tight); every block tallies its real rows, and the blocks merge exactly: each evaluated
row's nearest real row by (distance, index), ball counts summed, per-real-row results taken
from the block that owns the row.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from synthreview.distributed import map_shards, n_workers, shard_bounds
from synthreview.engine import current_engine
from synthreview.grouped_search import GroupedReference, TopK


@dataclass(frozen=True)
class Tally:
    """Reductions of the pairs (real row i, evaluated row j) of one pass.

    Attributes
    ----------
    nearest_index, nearest_distance : ndarray (n_evaluated,)
        Each evaluated row's nearest real row (ties → lower index) and its distance.
    recall_minima : ndarray (n_real,) or None
        Smallest ``cd_g[j]`` over rows j with d(i, j) ≤ ``recall_radii[i]``; inf if none.
    ball_counts : ndarray (n_evaluated,) or None
        Number of real rows i with d(i, j) < ``ball_radii[i]`` (strict, as in PRDC).
    covered : ndarray of bool (n_real,) or None
        Some evaluated row j with d(i, j) < ``ball_radii[i]``.
    recalled : ndarray of bool (n_real,) or None
        Some evaluated row j with d(i, j) < ``own_radii[j]``.
    """

    nearest_index: np.ndarray
    nearest_distance: np.ndarray
    recall_minima: np.ndarray | None
    ball_counts: np.ndarray | None
    covered: np.ndarray | None
    recalled: np.ndarray | None


def real_index(real: np.ndarray, radii: np.ndarray) -> GroupedReference:
    """Real rows grouped in order of ``radii``, so each group's largest radius is tight."""
    return GroupedReference(real, order=np.argsort(radii, kind="stable"))


def tally(
    index: GroupedReference,
    other: np.ndarray,
    *,
    recall_radii: np.ndarray | None = None,
    cd_g: np.ndarray | None = None,
    ball_radii: np.ndarray | None = None,
    own_radii: np.ndarray | None = None,
) -> Tally:
    """Scan ``other`` against the real rows of ``index`` once and reduce the pairs.

    Parameters
    ----------
    index : GroupedReference
        The real rows (:func:`real_index`).
    other : ndarray of shape (m, d)
        Evaluated rows (synthetic or holdout), float32.
    recall_radii, cd_g : ndarray, optional
        Per real row NND_k and per evaluated row ‖x_g − c_g‖, for β-Recall.
    ball_radii : ndarray, optional
        Per real row NND_k for PRDC precision, density and coverage.
    own_radii : ndarray, optional
        Per evaluated row NND_k (among evaluated rows) for PRDC recall.
    """
    options = {
        "recall_radii": recall_radii,
        "cd_g": cd_g,
        "ball_radii": ball_radii,
        "own_radii": own_radii,
    }
    client = current_engine().client
    if client is None:
        return _tally_local(index, other, **options)
    return _tally_sharded(client, index, other, **options)


def _tally_local(index, other, *, recall_radii, cd_g, ball_radii, own_radii, ids=None) -> Tally:
    """:func:`tally` in this process; ``ids`` renames the real rows for the nearest-row ties
    (a block of a sharded tally ranks ties by the rows' global positions)."""
    n_real, m = len(index.order), len(other)
    widest = np.zeros(n_real)
    for radii in (recall_radii, ball_radii):
        if radii is not None:
            widest = np.maximum(widest, radii)
    near = TopK(m, 1)
    minima = np.full(n_real, np.inf) if recall_radii is not None else None
    counts = np.zeros(m, dtype=np.int64) if ball_radii is not None else None
    covered = np.zeros(n_real, dtype=bool) if ball_radii is not None else None
    recalled = np.zeros(n_real, dtype=bool) if own_radii is not None else None
    blocks = index.pair_blocks(
        other,
        reference_limit=widest**2,
        query_limit=None if own_radii is None else own_radii**2,
        nearest=1,
    )
    for j, i, d in blocks:  # j: evaluated row, i: real row
        near.update(j, i if ids is None else ids[i], d)
        if minima is not None:
            inside = d <= recall_radii[i]
            np.minimum.at(minima, i[inside], cd_g[j[inside]])
        if counts is not None:
            inside = d < ball_radii[i]
            counts += np.bincount(j[inside], minlength=m)
            covered[i[inside]] = True
        if recalled is not None:
            recalled[i[d < own_radii[j]]] = True
    distance, nearest = near.result()
    return Tally(nearest[:, 0], distance[:, 0], minima, counts, covered, recalled)


def _shard_tally(shard, other, cd_g, own_radii) -> Tally:
    """Tally of one block of real rows (in radius order, radii sliced to the block); its
    nearest rows are named by global position."""
    rows, ids, (recall_radii, ball_radii) = shard
    return _tally_local(
        GroupedReference(rows),
        other,
        recall_radii=recall_radii,
        cd_g=cd_g,
        ball_radii=ball_radii,
        own_radii=own_radii,
        ids=ids,
    )


def _tally_sharded(client, index, other, *, recall_radii, cd_g, ball_radii, own_radii) -> Tally:
    n_real, m = len(index.order), len(other)
    bounds = shard_bounds(n_real, n_workers(client))
    shards = []
    for a, b in itertools.pairwise(bounds):
        ids = index.order[a:b]  # real rows of this block, in radius order
        radii = tuple(None if r is None else r[ids] for r in (recall_radii, ball_radii))
        shards.append((index.original[a:b], ids, radii))
    parts = map_shards(client, _shard_tally, shards, other, cd_g, own_radii)
    near = TopK(m, 1)
    minima = np.full(n_real, np.inf) if recall_radii is not None else None
    counts = np.zeros(m, dtype=np.int64) if ball_radii is not None else None
    covered = np.zeros(n_real, dtype=bool) if ball_radii is not None else None
    recalled = np.zeros(n_real, dtype=bool) if own_radii is not None else None
    for (a, b), part in zip(itertools.pairwise(bounds), parts, strict=True):
        ids = index.order[a:b]
        near.update(np.arange(m), part.nearest_index, part.nearest_distance)
        if minima is not None:
            minima[ids] = part.recall_minima
        if counts is not None:
            counts += part.ball_counts
            covered[ids] = part.covered
        if recalled is not None:
            recalled[ids] = part.recalled
    distance, nearest = near.result()
    return Tally(nearest[:, 0], distance[:, 0], minima, counts, covered, recalled)
