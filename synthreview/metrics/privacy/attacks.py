"""No-box membership-inference attacks: the attacker holds synthetic rows and a reference sample.

Threat model (Stadler et al. 2022 "no-box"; DOMIAS, van Breugel et al. 2023): the attacker
never touches the generator. It sees the released synthetic rows ``S`` and a *reference*
sample ``R`` of the same population (our holdout), and scores target records ``x``; higher =
"x was a training record". Every score here is a function of ``(x, S, R)`` only.

Reference rows that are also scored (holdout rows in the attack set) must not help score
themselves: a non-member would then sit on its own reference row and look *less* like a
member. Wherever ``R`` enters a score, an attack row's own position in ``R`` (``own >= 0``) is
left out: leave-one-out for nearest rows and kernel densities, cross-fitting for fitted models.
With several rows per person (``groups`` / ``reference_groups``: a person-level review's
row-level attacks) every row of the scored row's person is left out instead, for the same
reason: a non-member's *other* rows in ``R`` would sit next to it (issue 34).

Attacks (score, source):

* ``dcr_difference``  d_R(x) - d_S(x), nearest-row L2 distances (Synth-MIA "DCR-Diff";
  GAN-Leaks calibration, Chen et al. 2020, with reference data instead of a reference model).
* ``gan_leaks_cal``  d_R(x)^2 - d_S(x)^2 (DOMIAS baselines' calibrated GAN-Leaks, which takes
  squared distances; plain GAN-Leaks, -d_S(x)^2, ranks like the ``nn_seeker`` and is that one).
* ``nndr``  -d1_S(x) / d2_S(x): nearest-neighbour distance ratio to the synthetic rows.
* ``domias_kde``  log p_S(x) - log p_R(x), Gaussian KDEs (DOMIAS eq. 2). Default bandwidth:
  one round kernel for both densities, chosen by leave-one-out likelihood cross-validation on
  the synthetic rows (Silverman 1986, section 3.4.4); ``bandwidth="scott"`` is the ``domias``
  package's ``scipy.stats.gaussian_kde`` (Scott's rule), kept for the reference comparison.
  Scott's rule assumes one Gaussian blob; on mixed-type rows that cluster by category it
  smooths over the point mass a copied row adds (Adult memoriser, 10k rows: DOMIAS AUC 0.60
  with Scott's rule in 10 components on 5000 rows, the previous default, 0.85 now; LOGAN KDE
  0.54 vs 0.95).
* ``logan_kde``  log p_S(x) (DOMIAS eq. 1; the KDE variant of LOGAN, Hayes et al. 2019), same
  kernel.
* ``mc``  share of synthetic rows within eps of x, eps = median nearest-synthetic distance of
  the scored rows (Monte-Carlo counting, Hilprecht et al. 2019, eq. 4 median heuristic).
* ``local_neighbourhood``  share of synthetic rows within a radius r (Synth-MIA "Local
  Neighborhood"), r = the ``radius_quantile`` quantile of the reference rows' own
  nearest-reference distances: "closer than the population usually comes to itself".
* ``logan_classifier``  P(synthetic | x) of a classifier trained on synthetic vs reference rows
  (LOGAN D1 as in DOMIAS' baselines; fully grown Extra-Trees, :func:`forest_classifier`,
  instead of their MLP: both interpolate their training rows), 2-fold cross-fitted over the
  attack rows that are reference rows.

Distances and densities live in the encoded space (``TabularEncoder``: standardised numbers,
one-hot levels); KDEs in the principal components that keep 95 % of the synthetic rows' variance
(``n_dims``), fitted on the synthetic rows (attacker's data only).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.ensemble import ExtraTreesClassifier

from synthreview.encoding import canonical_order
from synthreview.engine import current_engine, single_threaded, thread_map
from synthreview.grouped_search import GroupedReference
from synthreview.memo import Memo, array_digest, remember
from synthreview.metrics.privacy.gower import same_tuple_nearest
from synthreview.neighbors import nearest
from synthreview.splits import draw_rows, random_folds

__all__ = [
    "NO_BOX_ATTACKS",
    "NoBoxInputs",
    "category_codes",
    "encoded_nearest",
    "forest_classifier",
    "gaussian_kde_logpdf",
    "isotropic_kde_logpdf",
    "likelihood_cv_bandwidth",
    "native_categories",
    "no_box_scores",
    "radius_counts",
]

NO_BOX_ATTACKS = (
    "dcr_difference",
    "gan_leaks_cal",
    "nndr",
    "domias_kde",
    "logan_kde",
    "mc",
    "local_neighbourhood",
    "logan_classifier",
)


def category_codes(x: np.ndarray, blocks: Sequence[Sequence[int]]) -> np.ndarray:
    """Level code of every one-hot block (-1 for an all-zero block: an unseen level)."""
    out = np.empty((len(x), len(blocks)), dtype=np.int64)
    for j, pos in enumerate(blocks):
        block = x[:, list(pos)]
        out[:, j] = np.where(block.max(axis=1) > 0, block.argmax(axis=1), -1)
    return out


def native_categories(
    x: np.ndarray, blocks: Sequence[Sequence[int]], *, max_levels: int = 254
) -> tuple[np.ndarray, np.ndarray]:
    """One-hot blocks of up to ``max_levels`` levels as one code column each (NaN = unseen).

    A tree model then splits on one feature per column (a gradient boosting natively as a
    category), with several times fewer features to bin and scan than the one-hot columns.
    Returns the matrix and its ``categorical_features`` mask.
    """
    small = [list(pos) for pos in blocks if len(pos) <= max_levels]
    folded = {p for pos in small for p in pos}
    rest = [i for i in range(x.shape[1]) if i not in folded]
    codes = category_codes(x, small).astype(np.float64)
    codes[codes < 0] = np.nan
    out = np.hstack([x[:, rest].astype(np.float64), codes])
    return out, np.r_[np.zeros(len(rest), bool), np.ones(len(small), bool)]


def encoded_nearest(
    query: np.ndarray,
    reference: np.ndarray,
    *,
    k: int = 1,
    categorical_blocks: Sequence[Sequence[int]] | None = None,
    max_mismatch: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest rows (L2) in the encoded space: ``nearest`` plus a same-tuple pre-pass.

    With ``categorical_blocks`` (the one-hot positions of each categorical column, e.g.
    ``encoder.groups``), rows whose k nearest provably share their categorical tuple are
    settled by :func:`~synthreview.metrics.privacy.gower.same_tuple_nearest` on the numeric
    positions
    alone; only the rest go through the brute-force :func:`synthreview.neighbors.nearest`.
    Results equal ``nearest(query, reference, k=k)`` up to the choice among exactly tied rows.
    ``max_mismatch`` as in ``same_tuple_nearest``.

    Returns
    -------
    distances, indices : ndarray of shape (len(query), k)
    """
    query, reference = np.asarray(query, np.float32), np.asarray(reference, np.float32)
    if not categorical_blocks or len(reference) < k:
        found = nearest(query, reference, k=k)
        return found.distances, found.indices

    cat_dims = sorted({p for pos in categorical_blocks for p in pos})
    num_dims = [i for i in range(query.shape[1]) if i not in set(cat_dims)]
    q_codes, r_codes = (
        category_codes(query, categorical_blocks),
        category_codes(reference, categorical_blocks),
    )
    # two different seen levels are sqrt(2) apart; an unseen level (all-zero block) only 1
    unit = 1.0 if (q_codes < 0).any() or (r_codes < 0).any() else 2.0
    dist, index, certified = same_tuple_nearest(
        query[:, num_dims],
        reference[:, num_dims],
        q_codes,
        r_codes,
        k=k,
        unit=unit,
        max_mismatch=max_mismatch,
    )
    if not certified.all():
        rest = nearest(query[~certified], reference, k=k)
        dist[~certified], index[~certified] = rest.distances, rest.indices
    return dist, index


_KDE_BLOCK = 256  # query rows per block: block x data float32 stays near the CPU caches
#: rows of a block taken through the elementwise steps at a time (16 x 10k float32 = 640 KB:
#: each step finds the previous one's output in the core's cache, not in memory)
_KDE_ROWS = 16


def _log_kernel_sums(
    white_query: np.ndarray, white_data: np.ndarray, own: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """log sum_j exp(-|q - x_j|^2 / 2) per query row (whitened units) and the rows summed.

    ``own[i] >= 0`` leaves data row ``own[i]`` out of query ``i``'s sum; ``own`` of shape
    (n_query, m) leaves up to ``m`` rows out (-1 pads). The sum runs in log space (no
    underflow far from the data).
    """
    # float32 BLAS and exp: in whitened units the rounding of -|q - x|^2 / 2 stays far below
    # the differences that rank rows (measured against scipy: < 1e-4 in log density)
    wd = np.ascontiguousarray(white_data, np.float32)
    half_data_sq = 0.5 * np.einsum("ij,ij->i", wd, wd)
    n = len(wd)
    out = np.empty(len(white_query))
    own = np.full(len(white_query), -1) if own is None else np.asarray(own)
    own = own.reshape(len(white_query), -1)  # one column: leave-one-out

    def finish(logk: np.ndarray, half_q_sq: np.ndarray, mine: np.ndarray, at: int) -> None:
        """The elementwise steps of some rows of a block's product, in place (every step is
        per row, so any split of the rows gives the same values)."""
        logk -= half_data_sq[None, :]
        logk -= half_q_sq[:, None]
        np.minimum(logk, 0.0, out=logk)
        for column in mine.T:
            rows = np.flatnonzero(column >= 0)
            logk[rows, column[rows]] = -np.inf
        top = logk.max(axis=1)
        logk -= top[:, None]
        np.exp(logk, out=logk)
        out[at : at + len(logk)] = top + np.log(logk.sum(axis=1, dtype=np.float64))

    def block(start: int) -> None:
        q = np.asarray(white_query[start : start + _KDE_BLOCK], np.float32)
        # one BLAS thread per 256-row block (thread_map), the blocks side by side: a product
        # split across BLAS threads rounded differently with the thread count, so the KDE
        # attacks' scores (and the report's bytes) changed with --threads
        logk = q @ wd.T  # -|q - x|^2 / 2 = q.x - |q|^2 / 2 - |x|^2 / 2
        half_q_sq = 0.5 * np.einsum("ij,ij->i", q, q)
        mine = own[start : start + _KDE_BLOCK]
        for lo in range(0, len(q), _KDE_ROWS):
            finish(logk[lo : lo + _KDE_ROWS], half_q_sq[lo : lo + _KDE_ROWS],
                   mine[lo : lo + _KDE_ROWS], start + lo)  # fmt: skip

    thread_map(block, range(0, len(white_query), _KDE_BLOCK))
    return out, n - (own >= 0).sum(axis=1)


def gaussian_kde_logpdf(
    query: np.ndarray, data: np.ndarray, *, own: np.ndarray | None = None
) -> np.ndarray:
    """Log density of a Gaussian KDE with Scott's bandwidth, as ``scipy.stats.gaussian_kde``.

    Kernel covariance = covariance of ``data`` (ddof 1) times ``n ** (-2 / (d + 4))`` (Scott
    1992; the estimator of the ``domias`` package's KDE baselines). ``own[i] >= 0`` leaves data
    row ``own[i]`` out of query ``i``'s sum (leave-one-out with ``n - 1`` in the normaliser);
    ``own`` of shape (n_query, m) leaves up to ``m`` rows out (-1 pads).

    Returns
    -------
    ndarray of shape (len(query),)
    """
    data = np.asarray(data, np.float64)
    query = np.asarray(query, np.float64)
    n, d = data.shape
    factor = n ** (-1.0 / (d + 4))
    # one BLAS/LAPACK thread: the covariance product and the solves round differently when
    # split across threads, and the scores must not depend on the thread count
    with single_threaded():
        cov = np.atleast_2d(np.cov(data, rowvar=False)) * factor**2
        # a constant direction (e.g. a level never seen) would make the kernel singular
        cov = cov + np.eye(d) * 1e-10 * max(np.trace(cov) / d, 1e-12)
        chol = np.linalg.cholesky(cov)
        white_data = np.linalg.solve(chol, data.T).T
        white_query = np.linalg.solve(chol, query.T).T
    log_norm = -0.5 * d * np.log(2 * np.pi) - np.log(np.diag(chol)).sum()
    log_sum, count = _log_kernel_sums(white_query, white_data, own)
    return log_sum - np.log(count) + log_norm


def isotropic_kde_logpdf(
    query: np.ndarray, data: np.ndarray, *, bandwidth: float, own: np.ndarray | None = None
) -> np.ndarray:
    """Log density of a Gaussian KDE with kernel covariance ``bandwidth**2 * I``.

    The kernel is round in the given coordinates (for the attacks: principal components of the
    encoded rows, i.e. the L2 geometry of the distance attacks). ``own`` as in
    :func:`gaussian_kde_logpdf`.

    Returns
    -------
    ndarray of shape (len(query),)
    """
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be > 0; got {bandwidth} instead")
    data = np.asarray(data, np.float64)
    d = data.shape[1]
    log_sum, count = _log_kernel_sums(np.asarray(query) / bandwidth, data / bandwidth, own)
    return log_sum - np.log(count) - d * np.log(bandwidth) - 0.5 * d * np.log(2 * np.pi)


def likelihood_cv_bandwidth(data: np.ndarray, *, max_rows: int = 500, seed: int = 0) -> float:
    """Bandwidth of :func:`isotropic_kde_logpdf` by leave-one-out likelihood cross-validation.

    Maximises the mean leave-one-out log density of up to ``max_rows`` seeded rows of
    ``data``, each against all other rows (Silverman 1986, section 3.4.4; Duin 1976), over
    ``[h0 / 100, 2 h0]`` with ``h0`` the isotropic Scott bandwidth ``sigma * n ** (-1 / (d +
    4))`` (``sigma`` the root mean variance). Unlike a rule of thumb it adapts to data that
    cluster (rows sharing a category tuple): the bandwidth follows the spacing of the rows, so
    a density ratio can see a point mass such as a copied row.

    Returns
    -------
    float
    """
    data = np.asarray(data, np.float64)
    n, d = data.shape
    if n < 3:
        raise ValueError(f"likelihood cross-validation needs >= 3 rows; got {n}")
    sigma = float(np.sqrt(data.var(axis=0).mean()))
    if not sigma > 0:
        raise ValueError("likelihood cross-validation needs rows that are not all equal")
    h0 = sigma * n ** (-1.0 / (d + 4))
    rows = np.arange(n)
    if n > max_rows:
        rows = draw_rows(np.random.default_rng([seed, 5]), n, max_rows)
    # squared distances of the held-out rows to every other row, once, relative to each row's
    # nearest: every trial h then costs one exp pass, exp(-(d2 - d_min^2) / 2h^2) <= 1
    sq = np.einsum("ij,ij->i", data, data)
    d2 = sq[rows][:, None] + sq[None, :] - 2.0 * data[rows] @ data.T
    np.maximum(d2, 0.0, out=d2)
    d2[np.arange(len(rows)), rows] = np.inf  # leave the row itself out
    nearest_sq = d2.min(axis=1)
    excess = (d2 - nearest_sq[:, None]).astype(np.float32)
    del d2

    def minus_loglik(log_h: float) -> float:
        inv = np.float32(-0.5 * np.exp(-2.0 * log_h))
        log_sum = np.log(np.exp(excess * inv).sum(axis=1, dtype=np.float64))
        return -float(np.mean(log_sum + nearest_sq * float(inv) - d * log_h))

    found = minimize_scalar(
        minus_loglik, bounds=(np.log(h0 / 100), np.log(2 * h0)), method="bounded",
        options={"xatol": 0.01},
    )  # fmt: skip
    return float(np.exp(found.x))


def radius_counts(query: np.ndarray, reference: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Number of ``reference`` rows within L2 ``radius[i]`` (inclusive) of each query row.

    ``radius`` of shape (n_query,) gives counts of shape (n_query,); of shape (n_query, m),
    counts for m radii per row from one pass over the pairs within the largest. Exact
    (float64 re-check of the grouped search's candidate pairs); memory stays one block.
    """
    grouped = GroupedReference(np.asarray(reference, np.float32))
    radius = np.asarray(radius, np.float64)
    radii = radius.reshape(len(query), -1)
    counts = np.zeros(radii.shape, dtype=np.int64)
    limit = radii.max(axis=1) ** 2
    for q, _, dist in grouped.pair_blocks(np.asarray(query, np.float32), query_limit=limit):
        for j in range(radii.shape[1]):
            keep = dist <= radii[q, j]
            counts[:, j] += np.bincount(q[keep], minlength=len(query))
    return counts.reshape(radius.shape)


#: NoBoxInputs attributes a subset copies from its parent (the data and the options)
_SETTINGS = frozenset({"synthetic_x", "reference_x", "blocks", "n_dims", "max_density_rows",
                       "bandwidth", "radius_quantile", "seed", "reference_groups",
                       "memo"})  # fmt: skip


class NoBoxInputs:
    """What the no-box attacks share for one attack set: searches and densities, computed once.

    Parameters
    ----------
    attack_x : ndarray (n, d)
        Encoded rows to score.
    synthetic_x, reference_x : ndarray
        The attacker's data.
    own : ndarray of int (n,)
        Position of each attack row in ``reference_x``, -1 if it is not a reference row.
    categorical_blocks : sequence of sequence of int, optional
        One-hot positions per categorical column: native categorical splits for the
        classifier.
    n_dims : int or float, default=0.95
        Principal components for the KDEs, fitted on the synthetic rows: a count (no
        projection when the data has at most that many columns) or the share of variance to
        keep (0.95: Adult 33 of 109 encoded columns, German credit 32 of 64). Copies stay at
        distance 0 in any projection while other rows move apart as components are added, so
        the KDEs need most of the variance, not the 10 components that once bounded their
        cost (Adult memoriser, 10k rows, LOGAN KDE AUC 0.80 with 10 components, 0.96 with 40).
    max_density_rows : int, default=10_000
        Synthetic / reference rows behind each KDE and the LOGAN classifier (seeded
        subsample) to bound the cost (each KDE costs n_attack x max_density_rows kernel
        terms, about 6 ns each on one core); a copied row left out of the subsample is
        invisible to these attacks, so above 10k synthetic rows they see a sample of the
        copies while the distance attacks see all of them.
    bandwidth : {"cv", "scott"}, default="cv"
        ``"cv"``: round Gaussian kernel in the principal components, one bandwidth for both
        densities chosen by :func:`likelihood_cv_bandwidth` on the synthetic rows. ``"scott"``:
        ``scipy.stats.gaussian_kde`` per density (Scott's rule, kernel shaped by the data's
        covariance), the definition of the ``domias`` package's KDE baselines, kept for the
        reference comparison (``tests/test_privacy_reference.py``).
    radius_quantile : float, default=0.05
    groups : ndarray, optional
        Person of every attack row; with ``reference_groups`` (the person of every reference
        row, labelled alike) every reference row of a scored row's person is left out of its
        score, and the classifier's folds divide people.
    reference_groups : ndarray, optional
    seed : int, default=0
    memo : Memo, optional
        The review's :class:`~synthreview.memo.Memo`: the searches that read no synthetic row
        (each attack row's nearest other reference row, the reference rows' nearest other
        reference row behind the local-neighbourhood radius) are computed once per review,
        for every candidate and its curated version, keyed on the rows' full contents.
    """

    def __init__(
        self,
        attack_x: np.ndarray,
        synthetic_x: np.ndarray,
        reference_x: np.ndarray,
        own: np.ndarray,
        *,
        categorical_blocks: Sequence[Sequence[int]] | None = None,
        n_dims: int | float = 0.95,
        max_density_rows: int = 10_000,
        bandwidth: str = "cv",
        radius_quantile: float = 0.05,
        groups: np.ndarray | None = None,
        reference_groups: np.ndarray | None = None,
        seed: int = 0,
        memo: Memo | None = None,
    ):
        if bandwidth not in ("cv", "scott"):
            raise ValueError(f"bandwidth must be 'cv' or 'scott'; got {bandwidth!r} instead")
        self.attack_x = np.asarray(attack_x, np.float32)
        synthetic_x = np.asarray(synthetic_x, np.float32)
        # the subsamples, the projection and the forests then do not depend on the order the
        # synthetic rows came in (distances never did)
        self.synthetic_x = synthetic_x[canonical_order(synthetic_x)]
        self.reference_x = np.asarray(reference_x, np.float32)
        self.own = np.asarray(own, np.int64)
        if len(self.reference_x) < 3 or len(self.synthetic_x) < 2:
            raise ValueError(
                "no-box attacks need >= 3 reference and >= 2 synthetic rows; got "
                f"{len(self.reference_x)} and {len(self.synthetic_x)}"
            )
        self.blocks = categorical_blocks
        self.n_dims = n_dims
        self.max_density_rows = max_density_rows
        self.bandwidth = bandwidth
        self.radius_quantile = radius_quantile
        self.seed = seed
        self.memo = memo
        if (groups is None) != (reference_groups is None):
            raise ValueError("groups and reference_groups must be given together; got one")
        self.groups = None if groups is None else np.asarray(groups).astype(str)
        self.reference_groups = (
            None if reference_groups is None else np.asarray(reference_groups).astype(str)
        )
        self._parent: NoBoxInputs | None = None
        self._rows = np.arange(len(self.attack_x))

    def subset(self, rows: np.ndarray) -> NoBoxInputs:
        """The inputs of attack rows ``rows`` only, sharing every search and density.

        Per-row values (nearest distances, log densities) are computed once, on this object's
        rows, and sliced; set-level choices (the Monte-Carlo radius, the classifier's folds)
        are made on the subset. The main and the sanity run score many of the same holdout
        rows: one pooled object serves both.
        """
        rows = np.asarray(rows, np.int64)
        child = NoBoxInputs.__new__(NoBoxInputs)
        child.__dict__.update({k: v for k, v in vars(self).items() if k in _SETTINGS})
        child.attack_x, child.own = self.attack_x[rows], self.own[rows]
        child.groups = None if self.groups is None else self.groups[rows]
        child._parent, child._rows = self, rows
        return child

    def _shared(self, name: str, *, per_row: bool = True) -> Any:
        """The parent's ``name``, sliced to this subset's rows when ``per_row``."""
        value = getattr(self._parent, name)
        return value[self._rows] if per_row else value

    @cached_property
    def synthetic_knn(self) -> np.ndarray:
        """Distances (n, 2) to the two nearest synthetic rows."""
        if self._parent is not None:
            return self._shared("synthetic_knn")
        return encoded_nearest(
            self.attack_x, self.synthetic_x, k=2, categorical_blocks=self.blocks
        )[0]

    @cached_property
    def reference_nn(self) -> np.ndarray:
        """Distance to the nearest reference row other than the row itself."""
        if self._parent is not None:
            return self._shared("reference_nn")

        def compute() -> np.ndarray:
            if self.groups is not None:
                return self._nearest_other_person(self.attack_x, self.groups)
            dist, index = encoded_nearest(
                self.attack_x, self.reference_x, k=2, categorical_blocks=self.blocks
            )
            # own row first (distance 0) unless an exact duplicate took its place: either way
            # the nearest *other* row is the second when the own row is among the two, else
            # the first
            own_first = (index == self.own[:, None]).any(axis=1)
            return np.where(own_first & (self.own >= 0), dist[:, 1], dist[:, 0])

        # attack rows and reference rows are training and holdout rows: no synthetic row
        key = ("privacy-reference-nn", array_digest(self.attack_x), array_digest(self.own),
               array_digest(self.groups), *self._reference_key())  # fmt: skip
        return remember(self.memo, key, compute)

    def _reference_key(self) -> tuple:
        """What a search of the reference rows depends on besides its query rows."""
        # the engine's search kind too: an approximate search's result is not the exact one's
        return (array_digest(self.reference_x), array_digest(self.reference_groups),
                repr(self.blocks), current_engine().search_kind)  # fmt: skip

    def _nearest_other_person(self, query: np.ndarray, people: np.ndarray) -> np.ndarray:
        """Distance from each query row to the nearest reference row of another person.

        The ``1 + (largest person's rows)`` nearest reference rows always hold one of another
        person (when the reference holds two people).
        """
        sizes = np.unique(self.reference_groups, return_counts=True)[1]
        k = int(min(len(self.reference_x), 1 + sizes.max()))
        dist, index = encoded_nearest(query, self.reference_x, k=k, categorical_blocks=self.blocks)
        other = self.reference_groups[index] != people[:, None]
        first = np.argmax(other, axis=1)  # the nearest neighbour of another person
        return np.where(other.any(axis=1), dist[np.arange(len(query)), first], np.inf)

    @cached_property
    def _own_rows(self) -> np.ndarray:
        """Reference positions left out of each attack row's score (n, m), -1 padded.

        The row itself (``own``), or with people every reference row of the row's person.
        """
        if self.groups is None:
            return self.own[:, None]
        rows_of = pd.Series(np.arange(len(self.reference_groups))).groupby(
            self.reference_groups, sort=False
        ).indices  # fmt: skip
        found = [rows_of.get(g, ()) for g in self.groups]
        out = np.full((len(found), max(1, max(map(len, found), default=0))), -1, np.int64)
        for i, rows in enumerate(found):
            out[i, : len(rows)] = rows
        return out

    def _sample(self, x: np.ndarray, salt: int) -> tuple[np.ndarray, np.ndarray]:
        """Seeded subsample of at most ``max_density_rows`` rows and their positions."""
        if len(x) <= self.max_density_rows:
            return x, np.arange(len(x))
        rng = np.random.default_rng([self.seed, salt])
        rows = draw_rows(rng, len(x), self.max_density_rows)
        return x[rows], rows

    @cached_property
    def _projection(self) -> PCA | None:
        if self._parent is not None:
            return self._shared("_projection", per_row=False)
        d = self.synthetic_x.shape[1]
        if isinstance(self.n_dims, int) and d <= self.n_dims:
            return None
        # full SVD: a fractional n_dims (share of variance) needs every singular value
        pca = PCA(n_components=self.n_dims, svd_solver="full", random_state=self.seed)
        with single_threaded():  # LAPACK's rounding depends on its threads
            return pca.fit(self._sample(self.synthetic_x, 1)[0])

    def _project(self, x: np.ndarray) -> np.ndarray:
        if self._projection is None:
            return x
        with single_threaded():  # a product split across threads rounds otherwise
            return self._projection.transform(x)

    @cached_property
    def _density_data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Projected synthetic rows, projected reference rows and each reference row's position."""
        if self._parent is not None:
            return self._shared("_density_data", per_row=False)
        synthetic, _ = self._sample(self.synthetic_x, 1)
        reference, rows = self._sample(self.reference_x, 2)
        return self._project(synthetic), self._project(reference), rows

    @cached_property
    def kde_bandwidth(self) -> float | None:
        """The ``"cv"`` bandwidth (likelihood cross-validation on the synthetic rows), else None.

        One kernel for both densities: the smoothing bias then cancels in DOMIAS' ratio, and
        the choice uses the attacker's generated rows only.
        """
        if self.bandwidth == "scott":
            return None
        if self._parent is not None:
            return self._parent.kde_bandwidth
        return likelihood_cv_bandwidth(self._density_data[0], seed=self.seed)

    def _kde(self, data: np.ndarray, own: np.ndarray | None = None) -> np.ndarray:
        query = self._project(self.attack_x)
        if self.kde_bandwidth is None:
            return gaussian_kde_logpdf(query, data, own=own)
        return isotropic_kde_logpdf(query, data, bandwidth=self.kde_bandwidth, own=own)

    @cached_property
    def log_p_synthetic(self) -> np.ndarray:
        if self._parent is not None:
            return self._shared("log_p_synthetic")
        return self._kde(self._density_data[0])

    @cached_property
    def log_p_reference(self) -> np.ndarray:
        if self._parent is not None:
            return self._shared("log_p_reference")
        _, data, rows = self._density_data
        where = np.full(len(self.reference_x), -1)
        where[rows] = np.arange(len(rows))
        own = self._own_rows
        own = np.where(own >= 0, where[np.maximum(own, 0)], -1)
        return self._kde(data, own=own if self.groups is not None else own[:, 0])

    @cached_property
    def _radius_counts(self) -> np.ndarray:
        """Synthetic rows within the MC radius and the local-neighbourhood radius (n, 2).

        MC (Hilprecht et al. 2019, eq. 4 median heuristic): eps = median nearest-synthetic
        distance of the rows this object was built on (for the membership runs: the pooled rows
        of the main and the sanity run, one radius for both). Local neighbourhood: the
        ``radius_quantile`` quantile of the reference rows' nearest-reference distances. One
        pass over the pairs counts both.
        """
        if self._parent is not None:
            return self._shared("_radius_counts")
        eps = np.median(self.synthetic_knn[:, 0])

        def reference_radius() -> float:
            if self.reference_groups is not None:
                # how close the population comes to *another* person
                self_nn = self._nearest_other_person(self.reference_x, self.reference_groups)
            else:
                # nearest *other* reference row: the row itself (distance 0) is one of the two
                # nearest, or an exact duplicate is, and then the other one is at distance 0
                self_nn = encoded_nearest(
                    self.reference_x, self.reference_x, k=2, categorical_blocks=self.blocks
                )[0][:, 1]
            return np.quantile(self_nn, self.radius_quantile)

        # the reference rows alone: the same for every candidate of a review
        key = ("privacy-reference-radius", self.radius_quantile, *self._reference_key())
        r = remember(self.memo, key, reference_radius)
        radii = np.tile([eps, r], (len(self.attack_x), 1))
        return radius_counts(self.attack_x, self.synthetic_x, radii)

    def mc(self) -> np.ndarray:
        return self._radius_counts[:, 0] / len(self.synthetic_x)

    def local_neighbourhood(self) -> np.ndarray:
        return self._radius_counts[:, 1] / len(self.synthetic_x)

    def logan_classifier(self, estimator: Any = None, n_folds: int = 2) -> np.ndarray:
        """Cross-fitted P(synthetic | x) of a synthetic-vs-reference classifier.

        Default model :func:`forest_classifier` on native category codes; at most
        ``max_density_rows`` synthetic rows (seeded subsample) train it.
        """
        attack, synthetic, reference = self.attack_x, self.synthetic_x, self.reference_x
        if estimator is None:
            if self.blocks:
                attack = native_categories(attack, self.blocks)[0]
                synthetic = native_categories(synthetic, self.blocks)[0]
                reference = native_categories(reference, self.blocks)[0]
            estimator = forest_classifier(seed=self.seed)
        synthetic, _ = self._sample(synthetic, 3)
        rng = np.random.default_rng([self.seed, 4])
        fold = random_folds(rng, len(attack), n_folds, groups=self.groups)
        scores = np.empty(len(attack))

        def fit_fold(k: int) -> np.ndarray | None:
            keep = np.ones(len(reference), bool)
            keep[self.own[(fold == k) & (self.own >= 0)]] = False
            if self.groups is not None:  # and every reference row of the fold's people
                keep[np.isin(self.reference_groups, self.groups[fold == k])] = False
            x = np.vstack([synthetic, reference[keep]])
            y = np.r_[np.ones(len(synthetic)), np.zeros(int(keep.sum()))]
            # classes weighted equally: the prior odds must not depend on the set sizes
            weight = np.where(y == 1, 0.5 / len(synthetic), 0.5 / keep.sum()) * len(y)
            model = clone(estimator).fit(x, y, sample_weight=weight)
            if (fold == k).any():
                return model.predict_proba(attack[fold == k])[:, 1]
            return None

        # the folds' fits are independent (the tree builder releases the GIL): one per
        # thread, each single-threaded as before, so the scores do not change
        for k, found in enumerate(thread_map(fit_fold, range(n_folds))):
            if found is not None:
                scores[fold == k] = found
        return scores


def forest_classifier(*, n_estimators: int = 30, seed: int = 0) -> ExtraTreesClassifier:
    """Default model of the classifier attacks: fully grown extremely randomised trees.

    Extra-Trees (Geurts, Ernst & Wehenkel 2006), no bootstrap, leaves down to one row: each
    tree interpolates its training rows, as the over-fitted discriminators that LOGAN (Hayes et
    al. 2019, section 4) and the Hide-and-Seek binary predictor rely on. A row the generator
    copied sits, with the synthetic label, in a pure leaf of every tree, while a row the
    classifier never saw is judged by its neighbourhood, so copies stand out without any
    distance computed. A gradient boosting with early stopping (the previous default) smooths
    copies away: Adult memoriser, 3k rows, AUC 0.58 / 0.63 vs 0.996 / 1.000 with this model;
    a fresh sample stays at 0.50 with either (cross-fitting: no scored row was a training row).
    Categories enter as native level codes (NaN for a level the encoder never saw). 30 trees:
    a copy scores 1 in every tree whatever their number, so more trees only refine the
    scores of unseen rows (each tree costs about 0.05 s at 20k + 20k rows on one core).
    """
    return ExtraTreesClassifier(
        n_estimators=n_estimators, min_samples_leaf=1, max_features="sqrt", bootstrap=False,
        n_jobs=1, random_state=seed,
    )  # fmt: skip


def no_box_scores(attack: str, inputs: NoBoxInputs) -> np.ndarray:
    """Per-row scores (higher = member) of one of ``NO_BOX_ATTACKS``; see the module text."""
    if attack == "dcr_difference":
        return inputs.reference_nn - inputs.synthetic_knn[:, 0]
    if attack == "gan_leaks_cal":
        return inputs.reference_nn**2 - inputs.synthetic_knn[:, 0] ** 2
    if attack == "nndr":
        d1, d2 = inputs.synthetic_knn[:, 0], inputs.synthetic_knn[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return -np.where(d2 > 0, d1 / d2, 0.0)  # d2 == 0: on duplicated synthetic rows
    if attack == "domias_kde":
        return inputs.log_p_synthetic - inputs.log_p_reference
    if attack == "logan_kde":
        return inputs.log_p_synthetic
    if attack == "mc":
        return inputs.mc()
    if attack == "local_neighbourhood":
        return inputs.local_neighbourhood()
    if attack == "logan_classifier":
        return inputs.logan_classifier()
    raise ValueError(f"attack must be one of {list(NO_BOX_ATTACKS)}; got {attack!r}")
