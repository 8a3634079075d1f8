"""Precision, recall, density and coverage (Naeem et al. 2020), without an n × n matrix.

Baselines for the fidelity section (Alaa et al. 2022, §5 and appendix "density and
coverage", k = 5). With B(x, r) a ball and NND_k(x) the distance from x to its k-th nearest
*other* row of its own set,

* precision = share of synthetic j with ‖j − i‖ < NND_k(i) for some real i;
* recall    = share of real i with ‖i − j‖ < NND_k(j) for some synthetic j;
* density   = 1/(k m) Σ_j #{real i : ‖j − i‖ < NND_k(i)};
* coverage  = share of real i whose nearest synthetic row is closer than NND_k(i).

These equal ``prdc.compute_prdc`` (the authors' package; its radius is the (k+1)-th smallest
entry of a distance row that includes the zero self-distance, i.e. the k-th other neighbour,
and every comparison is strict), checked to 1e-9 in the tests.

Algorithm and its measurement (50k × 50k × 25 float32 on the shared 2-core machine, load
5–11 from other jobs, faiss at 1 OpenMP thread): the reference package materialises three
n × n matrices (~30 GB at 50k). Here every quantity comes from ``synthreview.neighbors.nearest``
(exact, O(n·k) memory). faiss answers k = 1 through a dedicated arg-min (2–4 s here; 0.8 s on
an idle machine) but any k > 1 through a heap whose cost barely depends on k (k = 6: 10 s,
k = 16: 9.5 s; 20k rows: k = 1 0.8 s, k = 16 2.7 s, and 2.5× slower with 2 threads under
load); faiss range search costs the same per distance as the heap, and a tiled torch
``addmm`` + threshold pass took 46–85 s. Hence:

* radii NND_k: one k-NN search per set (unavoidable; at scale through per-group 1-NN minima,
  :mod:`synthreview._grouped_search`, which sidesteps the heap);
* density, precision, coverage: :func:`pairs_within` real → synthetic with the real radii
  (at scale: the per-group minima name the few groups that can hold a pair; small sets: one
  k = 16 search, then k = 128 for the few rows whose 16th neighbour is still inside);
* recall (a per-*synthetic* radius): :func:`any_within`, one lifted 1-NN search on the fast
  path instead of a second pair search.

:func:`synthreview.metrics.fidelity.evaluate_fidelity` does not call :func:`prdc`: it passes
pairs and recall flags from its single grouped scan to :func:`prdc_from_pairs`; the tests
check that both routes give the same four values.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from synthreview._grouped_search import GroupedReference
from synthreview._results import to_jsonable
from synthreview.errors import UndefinedMetricWarning
from synthreview.neighbors import GROUPED_MIN_ROWS, as_float32, nearest


@dataclass(frozen=True)
class Pairs:
    """Pairs (query row, reference row) closer than a per-query radius, sorted by query.

    Attributes
    ----------
    query, reference : ndarray of int64
        Row positions.
    distance : ndarray of float64
        Euclidean distance of each pair.
    """

    query: np.ndarray
    reference: np.ndarray
    distance: np.ndarray


def pairs_within(
    query: np.ndarray,
    reference: np.ndarray,
    radius: np.ndarray,
    *,
    inclusive: bool = False,
    k0: int = 16,
    prefilter: bool = False,
) -> Pairs:
    """Every reference row within ``radius[q]`` of query row ``q`` (exact, O(pairs) memory).

    Parameters
    ----------
    query : ndarray of shape (n_query, d)
    reference : ndarray of shape (n_reference, d)
    radius : ndarray of shape (n_query,)
    inclusive : bool, default=False
        ``d <= radius`` instead of ``d < radius``.
    k0 : int, default=16
        Neighbours asked for in the first k-NN pass; rows whose ``k``-th neighbour is still
        inside their radius are searched again with 8× as many. Small references only: from
        ``GROUPED_MIN_ROWS`` rows the search goes through per-group minima instead
        (:class:`synthreview._grouped_search.GroupedReference`, measured 2.6× faster at 50k).
    prefilter : bool, default=False
        Small references only: run a 1-NN pass first (faiss's fast path) and drop rows whose
        nearest reference row is already outside the radius; pays off when most rows have no
        pair.

    Returns
    -------
    Pairs
    """
    radius = np.asarray(radius, dtype=np.float64)
    if len(reference) >= GROUPED_MIN_ROWS:
        grouped = GroupedReference(as_float32(reference, "reference"))
        return Pairs(*grouped.within(as_float32(query, "query"), radius, inclusive=inclusive))
    inside = np.less_equal if inclusive else np.less
    rows = np.arange(len(query))
    if prefilter:
        rows = rows[inside(nearest(query, reference, k=1).distances[:, 0], radius)]
    k = min(k0, len(reference))
    found_q, found_r, found_d = [np.empty(0, np.int64)], [np.empty(0, np.int64)], [np.empty(0)]
    while len(rows):
        nn = nearest(query[rows], reference, k=k)
        keep = inside(nn.distances, radius[rows, None])
        # a row is finished when its farthest neighbour fetched is outside its radius
        done = ~keep[:, -1] | (k == len(reference))
        hit_q, hit_k = np.nonzero(keep & done[:, None])
        found_q.append(rows[hit_q])
        found_r.append(nn.indices[hit_q, hit_k])
        found_d.append(nn.distances[hit_q, hit_k])
        rows = rows[~done]
        k = min(8 * k, len(reference))
    q = np.concatenate(found_q)
    order = np.argsort(q, kind="stable")
    return Pairs(q[order], np.concatenate(found_r)[order], np.concatenate(found_d)[order])


def any_within(query: np.ndarray, reference: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """For every query row: is some reference row r closer than ``radius[r]``? (strict).

    A per-*reference* radius is turned into one 1-NN search (faiss's fast path) by lifting
    each reference row to ``(r, sqrt(R² − radius_r²))`` and each query row to ``(q, 0)`` with
    R = max radius: the lifted squared distance is ``‖q − r‖² − radius_r² + R²``, so the
    nearest lifted row minimises ``‖q − r‖² − radius_r²`` and the test is exact for it.
    """
    radius = np.asarray(radius, dtype=np.float64)
    top = float(radius.max()) if len(radius) else 0.0
    lift = np.sqrt(np.maximum(top**2 - radius**2, 0.0))
    q = np.hstack([np.asarray(query, np.float64), np.zeros((len(query), 1))])
    r = np.hstack([np.asarray(reference, np.float64), lift[:, None]])
    best = nearest(q, r, k=1).indices[:, 0]
    diff = np.asarray(query, np.float64) - np.asarray(reference, np.float64)[best]
    return np.sqrt(np.einsum("ij,ij->i", diff, diff)) < radius[best]


def neighbour_radii(x: np.ndarray, *, k: int = 5) -> np.ndarray:
    """NND_k: distance from every row of ``x`` to its k-th nearest other row of ``x``."""
    return nearest(x, x, k=k, exclude_self=True).distances[:, k - 1]


@dataclass(frozen=True)
class PRDC:
    """Precision, recall, density and coverage (Naeem et al. 2020).

    Attributes
    ----------
    precision, recall, coverage : float
        In [0, 1]; higher is better.
    density : float
        In [0, m/k·…]; about 1 when the distributions match, above 1 when synthetic rows crowd
        the dense regions of real.
    k : int
    """

    precision: float
    recall: float
    density: float
    coverage: float
    k: int = 5

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-ready values."""
        return to_jsonable(
            {
                "precision": self.precision,
                "recall": self.recall,
                "density": self.density,
                "coverage": self.coverage,
                "k": self.k,
            }
        )


def _as_array(x: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array (n, d); got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; encode missing values first")
    return arr


def prdc_from_pairs(
    real: np.ndarray,
    synthetic: np.ndarray,
    real_radii: np.ndarray,
    synthetic_radii: np.ndarray,
    real_to_synthetic: Pairs,
    *,
    k: int,
    recalled: np.ndarray | None = None,
) -> PRDC:
    """PRDC from precomputed radii and real→synthetic pairs (lets evaluation share searches).

    ``real_to_synthetic`` must hold every pair with ``d < real_radii[i]`` (query = real);
    extra pairs at larger distances are allowed and filtered here. ``recalled`` (bool per
    real row: some synthetic row j within ``synthetic_radii[j]``, strict) is computed here
    when not given.
    """
    n, m = len(real_radii), len(synthetic_radii)
    rs = real_to_synthetic
    in_real_ball = rs.distance < real_radii[rs.query]
    counts = np.bincount(rs.reference[in_real_ball], minlength=m)
    covered = np.zeros(n, dtype=bool)
    covered[rs.query[in_real_ball]] = True
    return PRDC(
        precision=float((counts > 0).mean()),
        recall=float(
            (any_within(real, synthetic, synthetic_radii) if recalled is None else recalled).mean()
        ),
        density=float(counts.sum() / (k * m)),
        # the nearest synthetic row is inside the ball iff any synthetic row is
        coverage=float(covered.mean()),
        k=k,
    )


def prdc(real: np.ndarray, synthetic: np.ndarray, *, k: int = 5) -> PRDC:
    """Precision, recall, density and coverage of ``synthetic`` against ``real``.

    Parameters
    ----------
    real : ndarray of shape (n, d)
    synthetic : ndarray of shape (m, d)
        Any sizes; rows in any order (every value is invariant to row order).
    k : int, default=5
        Neighbourhood size (Naeem et al. 2020; Alaa et al. 2022 appendix use 5).

    Returns
    -------
    PRDC
        All four ``nan`` with an :class:`UndefinedMetricWarning` when either set has ≤ k rows.
    """
    real_x, synth_x = _as_array(real, "real"), _as_array(synthetic, "synthetic")
    if real_x.shape[1] != synth_x.shape[1]:
        raise ValueError(
            f"synthetic has {synth_x.shape[1]} features; expected {real_x.shape[1]} like real"
        )
    if k < 1:
        raise ValueError(f"k must be a positive integer; got {k}")
    if len(real_x) <= k or len(synth_x) <= k:
        warnings.warn(
            f"PRDC with k={k} needs more than {k} real and synthetic rows; got "
            f"{len(real_x)} and {len(synth_x)}",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return PRDC(np.nan, np.nan, np.nan, np.nan, k=k)
    real_radii = neighbour_radii(real_x, k=k)
    synth_radii = neighbour_radii(synth_x, k=k)
    return prdc_from_pairs(
        real_x, synth_x, real_radii, synth_radii, pairs_within(real_x, synth_x, real_radii), k=k
    )
