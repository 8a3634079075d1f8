"""Gower distance between mixed-type records (Gower 1971; Urban Institute disclosure metrics).

The Urban Institute membership-inference test (``papers/001_*``, "Membership inference test")
measures, for every confidential or holdout record, its Gower distance to the synthetic records.
Gower's distance averages one dissimilarity per feature::

    numeric      |x_k - y_k| / range_k        (range over both inputs together; 0 if range is 0)
    categorical  0 if x_k == y_k else 1

Missing values (our convention; the ``gower`` package instead propagates NaN for numeric
features and treats two missing categorical cells as different):

* a numeric feature missing in either record is skipped, and the average is taken over the
  features that were compared (Gower's original delta_ijk = 0 rule); a pair with nothing left to
  compare gets ``nan``;
* a missing categorical cell is a level of its own: missing equals missing and differs from any
  value, as in ``TabularEncoder`` (its ``__missing__`` level).

Large inputs never build the full matrix: :func:`gower_nearest` uses the identity, exact when
neither record has a missing numeric value, ``p * gower(x, y) = ||phi(x) - phi(y)||_1`` with
``phi`` = [range-scaled numeric | each categorical embedded as a vertex of a cross-polytope
scaled by 1/2]: level ``2i`` -> ``+e_i/2`` and level ``2i+1`` -> ``-e_i/2``, so any two distinct
levels are exactly L1 distance 1 apart with ``ceil(L/2)`` coordinates instead of ``L``. faiss
``IndexFlat(METRIC_L1)`` then finds the exact nearest row by brute force; rows with a missing
numeric value go through the exact chunked formula above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import faiss
import numpy as np
import pandas as pd
from scipy.spatial import distance

from synthreview.grouped_search import TopK
from synthreview.neighbors import exact_knn

_CHUNK_CELLS = 4_000_000  # pair-cells per numpy block in the exact path (~32 MB of float64)


@dataclass(frozen=True)
class _Coded:
    """Both inputs on one scale: range-scaled numeric (NaN kept) and integer categorical codes."""

    a_num: np.ndarray
    b_num: np.ndarray
    a_cat: np.ndarray
    b_cat: np.ndarray
    n_levels: tuple[int, ...]


class GowerReference:
    """A reference table prepared once for many :func:`gower_nearest` searches against it.

    WP29's linkability and inference attacks search the same synthetic table dozens of times
    on different column subsets; each search used to convert and factorize every reference
    column again (most of WP29's time at 50k synthetic rows). Here each column is converted
    (numeric: float64 and its range; categorical: its levels in order of first appearance)
    the first time a search needs it, and :meth:`select` gives column subsets that share
    those conversions. The distances and nearest rows equal those of the plain table: the
    ranges combine as the minimum and maximum over both inputs, and the level codes are the
    ones :func:`pandas.factorize` gives the query's column followed by the reference's.

    A query can be prepared the same way: WP29 scores the same target rows on every column
    subset (linkability and each of up to 20 inference secrets, against the training and the
    control rows), and converting and factorizing those rows, then joining their levels and
    ranges with the reference's, was about a third of each inference search at the demo size
    (1000 targets vs 5,000 rows). A query :class:`GowerReference` keeps, per column, the pair
    conversion with each reference it met (:meth:`paired`); the values are the ones the plain
    tables give, column by column, so every distance and nearest row stays the same.

    Parameters
    ----------
    table : pandas.DataFrame
        The reference rows (never modified).
    """

    def __init__(self, table: pd.DataFrame, *, _cache: dict | None = None) -> None:
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"table must be a pandas DataFrame; got {type(table).__name__}")
        self.table = table
        self.columns = list(table.columns)
        self._cache: dict = {} if _cache is None else _cache

    def __len__(self) -> int:
        return len(self.table)

    def select(self, columns: Sequence[str]) -> GowerReference:
        """The same rows restricted to ``columns`` (in that order), sharing the conversions."""
        missing = [c for c in columns if c not in set(self.columns)]
        if missing:
            raise ValueError(f"columns {missing} are not in the reference; it has {self.columns}")
        return GowerReference(self.table[list(columns)], _cache=self._cache)

    def numeric(self, column: str) -> tuple[np.ndarray, float, float]:
        """The column as float64 (NaN where missing or not a number) and its finite min, max."""
        key = ("numeric", column)
        if key not in self._cache:
            values = _as_float(self.table[column])
            self._cache[key] = (values, *_finite_range(values))
        return self._cache[key]

    def levels(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """``pandas.factorize`` of the column as objects, missing a level of its own."""
        key = ("levels", column)
        if key not in self._cache:
            self._cache[key] = pd.factorize(
                self.table[column].astype("object"), use_na_sentinel=False
            )
        return self._cache[key]

    def paired(self, column: str, other: GowerReference, kind: str) -> tuple:
        """Coded ``column`` of these rows (as query) and of ``other`` (as reference), kept.

        ``kind`` ``"numeric"``: ``(a, b)`` range-scaled over both; ``"categorical"``: ``(a, b,
        n_levels)``, the joined codes (:func:`_code_column`). Kept per reference: an entry holds
        the reference's cache and is used only for that very cache (identity, not equality).
        """
        key = ("paired", kind, column)
        found = self._cache.get(key)
        if found is None or found[0] is not other._cache:
            found = (other._cache, _code_column(self, other, column, kind))
            self._cache[key] = found  # a thread racing here stores the same values
        return found[1]


def _as_float(column: pd.Series) -> np.ndarray:
    return pd.to_numeric(column, errors="coerce").to_numpy("float64", na_value=np.nan)


def _finite_range(values: np.ndarray) -> tuple[float, float]:
    """Smallest and largest non-NaN value (inf and -inf when there is none)."""
    seen = ~np.isnan(values)
    with np.errstate(all="ignore"):
        lo = np.min(values, initial=np.inf, where=seen)
        hi = np.max(values, initial=-np.inf, where=seen)
    return float(lo), float(hi)


def _split_columns(
    a: pd.DataFrame | GowerReference,
    b: pd.DataFrame | GowerReference,
    categorical: Sequence[str] | None,
) -> tuple[list[str], list[str]]:
    kinds = pd.DataFrame | GowerReference
    if not isinstance(a, kinds) or not isinstance(b, kinds):
        raise TypeError(
            f"a and b must be pandas DataFrames; got {type(a).__name__} and {type(b).__name__}"
        )
    a_columns = a.columns if isinstance(a, GowerReference) else list(a.columns)
    b_columns = b.columns if isinstance(b, GowerReference) else list(b.columns)
    if a_columns != b_columns:
        raise ValueError(
            f"a and b must have the same columns in the same order; got {a_columns} and {b_columns}"
        )
    if isinstance(a, GowerReference):
        a = a.table
    if categorical is None:
        # same rule as the gower package: a column is numeric when its dtype is a number type
        categorical = [
            c
            for c in a.columns
            if not (pd.api.types.is_numeric_dtype(a[c]) and not pd.api.types.is_bool_dtype(a[c]))
        ]
    unknown = sorted(set(categorical) - set(a.columns))
    if unknown:
        raise ValueError(f"categorical names columns {unknown} that are not in a")
    cats = [c for c in a.columns if c in set(categorical)]
    nums = [c for c in a.columns if c not in set(categorical)]
    return nums, cats


def _code(
    a: pd.DataFrame | GowerReference,
    b: pd.DataFrame | GowerReference,
    nums: list[str],
    cats: list[str],
) -> _Coded:
    """Both inputs on one scale. Numeric: range over both inputs (the smaller minimum, the
    larger maximum); categorical: the codes ``pandas.factorize`` gives ``a``'s column followed
    by ``b``'s, built from each side's own factorization (``b``'s is kept by a
    :class:`GowerReference`; with ``a`` one too, each column's pair is kept as well)."""
    ref = b if isinstance(b, GowerReference) else GowerReference(b)
    query = a if isinstance(a, GowerReference) else GowerReference(a)
    code = query.paired if isinstance(a, GowerReference) else (
        lambda column, other, kind: _code_column(query, other, column, kind)
    )  # fmt: skip
    a_num = np.zeros((len(query), len(nums)))
    b_num = np.zeros((len(ref), len(nums)))
    for j, c in enumerate(nums):
        a_num[:, j], b_num[:, j] = code(c, ref, "numeric")
    a_cat = np.zeros((len(query), len(cats)), dtype=np.int64)
    b_cat = np.zeros((len(ref), len(cats)), dtype=np.int64)
    n_levels = []
    for j, c in enumerate(cats):
        a_cat[:, j], b_cat[:, j], levels = code(c, ref, "categorical")
        n_levels.append(levels)
    return _Coded(a_num, b_num, a_cat, b_cat, tuple(n_levels))


def _code_column(a: GowerReference, b: GowerReference, column: str, kind: str) -> tuple:
    """One column of :func:`_code`: ``(a, b)`` scaled, or ``(a, b, n_levels)`` codes.

    Column by column, elementwise: the same values a whole-table conversion gives.
    """
    if kind == "numeric":
        a_values, a_lo, a_hi = a.numeric(column)
        b_values, b_lo, b_hi = b.numeric(column)
        lo, hi = min(a_lo, b_lo), max(a_hi, b_hi)
        span = hi - lo
        # a constant (or all-missing) column contributes 0 to every compared pair, as in the
        # package
        if np.isfinite(span) and span > 0:
            offset = lo if np.isfinite(lo) else 0.0
            return (a_values - offset) / span, (b_values - offset) / span
        return (
            np.where(np.isnan(a_values), np.nan, 0.0),
            np.where(np.isnan(b_values), np.nan, 0.0),
        )
    # missing becomes a code of its own (see module docstring); codes in order of first
    # appearance in a's column, then b's: the codes of factorizing them joined
    a_codes, a_levels = a.levels(column)
    b_codes, b_levels = b.levels(column)
    joined, uniques = pd.factorize(
        pd.concat([pd.Series(a_levels, dtype=object), pd.Series(b_levels, dtype=object)],
                  ignore_index=True),
        use_na_sentinel=False,
    )  # fmt: skip
    return joined[: len(a_levels)][a_codes], joined[len(a_levels) :][b_codes], len(uniques)


def _block(coded: _Coded, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Exact Gower distances between a rows and b cols, NaN convention included."""
    a_num, b_num = coded.a_num[rows], coded.b_num[cols]
    total = np.zeros((len(rows), len(cols)))
    count = np.full((len(rows), len(cols)), float(coded.a_cat.shape[1]))
    for k in range(a_num.shape[1]):
        diff = np.abs(a_num[:, k, None] - b_num[None, :, k])
        seen = ~np.isnan(diff)
        total += np.where(seen, diff, 0.0)
        count += seen
    for k in range(coded.a_cat.shape[1]):
        total += coded.a_cat[rows, k, None] != coded.b_cat[None, cols, k]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def _row_blocks(n_rows: int, n_cols: int) -> list[np.ndarray]:
    step = max(1, _CHUNK_CELLS // max(n_cols, 1))
    return [np.arange(s, min(s + step, n_rows)) for s in range(0, n_rows, step)]


def gower_distances(
    a: pd.DataFrame, b: pd.DataFrame, *, categorical: Sequence[str] | None = None
) -> np.ndarray:
    """Gower distance between every row of ``a`` and every row of ``b``.

    For small inputs and tests; use :func:`gower_nearest` on large tables.

    Parameters
    ----------
    a, b : pandas.DataFrame
        Same columns in the same order.
    categorical : sequence of str, optional
        Columns compared by equality. Default: every column whose dtype is not a number type
        (booleans count as categorical), the rule of the ``gower`` package.

    Returns
    -------
    ndarray of shape (len(a), len(b)), float64
        Values in [0, 1]; 0 for identical records. See the module docstring for missing values.

    Examples
    --------
    >>> a = pd.DataFrame({"age": [20.0, 40.0], "sex": ["F", "M"]})
    >>> gower_distances(a, a).round(2).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    nums, cats = _split_columns(a, b, categorical)
    coded = _code(a, b, nums, cats)
    out = np.empty((len(a), len(b)))
    cols = np.arange(len(b))
    for rows in _row_blocks(len(a), len(b)):
        out[rows] = _block(coded, rows, cols)
    return out


def _l1_embedding(num: np.ndarray, cat: np.ndarray, n_levels: Sequence[int]) -> np.ndarray:
    """[num | cross-polytope/2 per categorical]; L1 between rows = p * Gower (no NaN)."""
    widths = [(n + 1) // 2 for n in n_levels]
    out = np.zeros((len(num), num.shape[1] + sum(widths)), dtype=np.float32)
    out[:, : num.shape[1]] = num
    start, rows = num.shape[1], np.arange(len(num))
    for j, width in enumerate(widths):
        codes = cat[:, j]
        out[rows, start + codes // 2] = np.where(codes % 2 == 0, 0.5, -0.5)
        start += width
    return out


def gower_nearest(
    query: pd.DataFrame | GowerReference,
    reference: pd.DataFrame | GowerReference,
    *,
    categorical: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Gower distance from each ``query`` row to its nearest ``reference`` row, exactly.

    Equals ``gower_distances(query, reference).min(axis=1)`` (ranges over both inputs
    together) without building the matrix: memory is O(len(query) + len(reference)) apart from
    the rows with missing numeric values, which are handled in blocks.

    Parameters
    ----------
    query : pandas.DataFrame or GowerReference
        A :class:`GowerReference` query keeps its conversions, and those it shares with a
        :class:`GowerReference` reference, for the next search of the same rows.
    reference : pandas.DataFrame or GowerReference
        Same columns as ``query`` in the same order; a :class:`GowerReference` (use its
        :meth:`~GowerReference.select`) keeps its column conversions for the next search.
    categorical : sequence of str, optional
        As in :func:`gower_distances`.

    Returns
    -------
    distances : ndarray of shape (len(query),), float64
        In [0, 1]; ``nan`` where no feature could be compared with any reference row.
    indices : ndarray of shape (len(query),), int64
        Position in ``reference`` of a nearest row (-1 with a ``nan`` distance).
    """
    nums, cats = _split_columns(query, reference, categorical)
    if len(reference) == 0:
        raise ValueError("reference must have at least one row; got 0")
    coded = _code(query, reference, nums, cats)
    dist = np.full(len(query), np.inf)
    index = np.full(len(query), -1, dtype=np.int64)
    q_full = ~np.isnan(coded.a_num).any(axis=1)
    r_full = ~np.isnan(coded.b_num).any(axis=1)
    n_features = len(nums) + len(cats)

    if q_full.any() and r_full.any() and n_features:
        q_rows, r_all = np.flatnonzero(q_full), np.flatnonzero(r_full)
        # rows whose nearest has (almost) their categorical tuple are settled without brute force
        _, same, certified = same_tuple_nearest(
            coded.a_num[q_rows], coded.b_num[r_all], coded.a_cat[q_rows], coded.b_cat[r_all],
            metric="l1", unit=1.0,
        )  # fmt: skip
        found = np.where(certified, same[:, 0], -1)
        rest = ~certified
        if rest.any():
            qe = _l1_embedding(coded.a_num[q_rows[rest]], coded.a_cat[q_rows[rest]], coded.n_levels)
            re = _l1_embedding(coded.b_num[r_all], coded.b_cat[r_all], coded.n_levels)
            faiss_index = faiss.IndexFlat(re.shape[1], faiss.METRIC_L1)
            faiss_index.add(re)
            found[rest] = faiss_index.search(qe, 1)[1][:, 0]
        r_rows = r_all[found]
        # faiss sums in float32; recompute the chosen pairs exactly in float64
        exact = np.abs(coded.a_num[q_rows] - coded.b_num[r_rows]).sum(axis=1)
        exact += (coded.a_cat[q_rows] != coded.b_cat[r_rows]).sum(axis=1)
        dist[q_rows], index[q_rows] = exact / n_features, r_rows

    # pairs that involve a missing numeric value: exact blocks (query-complete rows only need the
    # incomplete reference rows; incomplete query rows need every reference row)
    for q_sel, r_sel in (
        (np.flatnonzero(q_full), np.flatnonzero(~r_full)),
        (np.flatnonzero(~q_full), np.arange(len(reference))),
    ):
        if len(q_sel) == 0 or len(r_sel) == 0:
            continue
        for block in _row_blocks(len(q_sel), len(r_sel)):
            rows = q_sel[block]
            d = _block(coded, rows, r_sel)
            d = np.where(np.isnan(d), np.inf, d)
            best = np.argmin(d, axis=1)
            best_d = d[np.arange(len(rows)), best]
            better = best_d < dist[rows]
            dist[rows[better]] = best_d[better]
            index[rows[better]] = r_sel[best[better]]
    dist[~np.isfinite(dist)] = np.nan
    return dist, index


def _keys(codes: np.ndarray) -> np.ndarray:
    """One uint64 per row of an integer code matrix (equal rows -> equal keys)."""
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.uint64)
    return pd.util.hash_pandas_object(pd.DataFrame(codes), index=False).to_numpy()


def _pair_cost(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    """Categorical contribution of one column (Gower x p, or squared L2 of one-hot blocks)."""
    differ = a[:, None] != b[None, :]
    if metric == "l1":
        return differ.astype(np.float64)
    unseen = (a[:, None] < 0) | (b[None, :] < 0)  # code -1: an all-zero one-hot block
    return np.where(differ, np.where(unseen, 1.0, 2.0), 0.0)


def same_tuple_nearest(
    query_num: np.ndarray,
    reference_num: np.ndarray,
    query_codes: np.ndarray,
    reference_codes: np.ndarray,
    *,
    k: int = 1,
    metric: str = "l2",
    unit: float,
    max_mismatch: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact k nearest rows for every query row that can be certified from nearby tuples.

    Mixed-type distances split into a numeric part and a categorical part that depends only on
    the two rows' tuples of categorical codes: 0 for equal tuples and at least ``unit`` per
    differing column (Gower x p: 1; squared L2 on one-hot blocks: 2, or 1 with an unseen
    level, code -1). The search looks only at reference rows whose tuple equals the query's
    (and, with ``max_mismatch=1``, differs in exactly one column: grouping on the tuple with
    that column masked). When the k-th best of those is closer than ``(max_mismatch + 1) *
    unit``, which no row with more differing columns can beat, the answer is exact; the caller
    searches the uncertified rows by brute force. Measured on the Adult benchmark (50k x 20k):
    the equal-tuple pass certifies 20-60 % of rows in ~0.2 s; the one-mismatch passes raise
    that to 60-90 % but cost 2-4 s of Python-level grouping, about what they save, so the
    default is 0.

    No Python loop runs per tuple: tuples with at most ``_SMALL_GROUP_PAIRS`` query ×
    reference pairs are measured together, all their pairs in vectorised chunks; the few
    larger ones each get a search of their own (the exact grouped L2 search for float32
    inputs, blocked ``scipy.spatial.distance.cdist`` otherwise), so one tuple holding most rows
    is no longer an O(n²) numpy broadcast.

    Parameters
    ----------
    query_num, reference_num : ndarray of shape (n, d_num), no NaN
        Numeric parts (range-scaled for Gower, standardised for L2).
    query_codes, reference_codes : integer ndarray of shape (n, n_categorical)
    k : int, default=1
    metric : {"l2", "l1"}
        ``"l2"``: Euclidean (``unit`` in squared units); ``"l1"``: p x Gower.
    unit : float
        Smallest categorical contribution of one differing column.
    max_mismatch : {0, 1}, default=0
        Also search reference rows whose tuple differs in one column.

    Returns
    -------
    distances : ndarray (n_query, k), float64
        Full distances (Euclidean, or p x Gower), valid where ``certified``; ties resolve to
        the lower reference index.
    indices : ndarray (n_query, k), int64
    certified : ndarray of bool (n_query,)
    """
    n, n_cat = len(query_num), query_codes.shape[1]
    q_num, r_num = np.asarray(query_num, np.float64), np.asarray(reference_num, np.float64)
    # l2 distances are kept as Euclidean (not squared) so every path ranks the same values
    limit = unit if metric == "l1" else np.sqrt(unit)
    best = TopK(n, k)
    active = np.arange(n)
    for masked in [None, *(range(n_cat) if max_mismatch >= 1 else ())]:
        if masked is not None:
            # rows already closer than one differing column need no one-mismatch pass
            active = active[best.result()[0][active, -1] >= limit]
            if len(active) == 0:
                break
        keep = [j for j in range(n_cat) if j != masked]
        q_rows, q_size, r_rows, r_size = _matched_tuples(
            active, query_codes[:, keep], reference_codes[:, keep]
        )
        small = q_size * r_size <= _SMALL_GROUP_PAIRS
        pairs = _group_pairs(q_rows, q_size, r_rows, r_size, small)
        for q, r in pairs:
            d = _pair_distances(q_num, r_num, q, r, metric)  # l2: squared
            if masked is not None:
                a, b = query_codes[q, masked], reference_codes[r, masked]
                # exactly-one-mismatch rows only; equal tuples were the unmasked pass
                d = np.where(a == b, np.inf, d + _pair_cost_flat(a, b, metric))
            best.update(q, r, d if metric == "l1" else np.sqrt(d))
        q_edges = np.concatenate([[0], np.cumsum(q_size)])
        r_edges = np.concatenate([[0], np.cumsum(r_size)])
        for g in np.flatnonzero(~small):
            rows_q = q_rows[q_edges[g] : q_edges[g + 1]]
            rows_r = r_rows[r_edges[g] : r_edges[g + 1]]
            _large_group(best, q_num, r_num, rows_q, rows_r, k, metric, masked, query_codes,
                         reference_codes)  # fmt: skip
    best_d, best_i = (a.copy() for a in best.result())
    certified = (
        best_d[:, -1] < (min(max_mismatch, 1) + 1) * unit
        if metric == "l1"
        else (best_d[:, -1] < np.sqrt((min(max_mismatch, 1) + 1) * unit))
    )
    best_i[~certified] = -1
    return best_d, best_i, certified


#: tuples with at most this many query × reference pairs are measured in one vectorised
#: pass with the other small tuples; larger ones get a search of their own
_SMALL_GROUP_PAIRS = 1 << 16


def _matched_tuples(active, q_codes, r_codes):
    """Rows of ``active`` query rows and of the reference rows per shared tuple of codes.

    Returns ``(q_rows, q_size, r_rows, r_size)``: the rows of each matched tuple one after the
    other (each group's reference rows ascending) and the group sizes. Groups whose rows do
    not all carry the same codes (a hash collision) are dropped: brute force settles them.
    """
    q_key, r_key = _keys(q_codes[active]), _keys(r_codes)
    q_order = active[np.argsort(q_key, kind="stable")]
    r_order = np.argsort(r_key, kind="stable")
    q_uniq, q_start, q_count = np.unique(np.sort(q_key), return_index=True, return_counts=True)
    r_uniq, r_start, r_count = np.unique(r_key[r_order], return_index=True, return_counts=True)
    _, qi, ri = np.intersect1d(q_uniq, r_uniq, assume_unique=True, return_indices=True)
    q_size, r_size = q_count[qi], r_count[ri]
    q_rows = q_order[_segments(q_start[qi], q_size)]
    r_rows = r_order[_segments(r_start[ri], r_size)]
    # every row of a group must carry the codes of the group's first reference row
    first = r_rows[np.concatenate([[0], np.cumsum(r_size)[:-1]])] if len(r_size) else r_rows
    bad_q = (q_codes[q_rows] != r_codes[np.repeat(first, q_size)]).any(axis=1)
    bad_r = (r_codes[r_rows] != r_codes[np.repeat(first, r_size)]).any(axis=1)
    group_q, group_r = (
        np.repeat(np.arange(len(q_size)), q_size),
        np.repeat(np.arange(len(r_size)), r_size),
    )
    bad = np.zeros(len(q_size), dtype=bool)
    bad[group_q[bad_q]] = True
    bad[group_r[bad_r]] = True
    if bad.any():
        q_rows, r_rows = q_rows[~bad[group_q]], r_rows[~bad[group_r]]
        q_size, r_size = q_size[~bad], r_size[~bad]
    return q_rows, q_size, r_rows, r_size


def _segments(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(start, start + size)`` for every (start, size)."""
    total = int(sizes.sum())
    return np.arange(total) - np.repeat(np.cumsum(sizes) - sizes - starts, sizes)


def _group_pairs(q_rows, q_size, r_rows, r_size, small):
    """Every (query row, reference row) pair of the ``small`` groups, in bounded chunks."""
    q_first = np.concatenate([[0], np.cumsum(q_size)[:-1]]).astype(np.int64)
    r_first = np.concatenate([[0], np.cumsum(r_size)[:-1]]).astype(np.int64)
    groups = np.flatnonzero(small)
    n_pairs = (q_size * r_size)[groups].astype(np.int64)
    chunk = max(_CHUNK_CELLS // 8, int(_SMALL_GROUP_PAIRS))
    ends = np.searchsorted(np.cumsum(n_pairs), np.arange(chunk, n_pairs.sum() + chunk, chunk))
    start = 0
    for end in np.unique(np.minimum(ends + 1, len(groups))):
        part, sizes = groups[start:end], n_pairs[start:end]
        start = end
        if not len(part):
            continue
        g = np.repeat(part, sizes)
        p = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        i, j = np.divmod(p, r_size[g])
        yield q_rows[q_first[g] + i], r_rows[r_first[g] + j]


def _pair_distances(q_num, r_num, q, r, metric) -> np.ndarray:
    """Numeric distance of each pair (L1, or squared L2), float64."""
    diff = q_num[q] - r_num[r]
    if metric == "l1":
        return np.abs(diff).sum(axis=1)
    return np.einsum("ij,ij->i", diff, diff)


def _pair_cost_flat(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    """:func:`_pair_cost` for aligned pairs (one value per pair)."""
    differ = a != b
    if metric == "l1":
        return differ.astype(np.float64)
    unseen = (a < 0) | (b < 0)  # code -1: an all-zero one-hot block
    return np.where(differ, np.where(unseen, 1.0, 2.0), 0.0)


#: extra neighbours the float32 L1 search returns, so the float64 re-check sees every row
#: within the float32 error of the k-th
_L1_EXTRA = 8


def _l1_candidates(best, q_num, r_num, rows_q, rows_r, k) -> np.ndarray:
    """Exact k nearest in L1 through faiss's float32 search plus a float64 re-check.

    faiss ranks in float32; its distances are off by at most ``err`` = (d + 2) float32 units
    of roundoff of ``|q|₁ + |r|₁`` (rounding the inputs, each difference and the sum). Every
    row within the k-th faiss distance + 2·err is re-measured in float64; a query whose last
    returned row is not beyond that bound may have more such rows and is returned for the
    blocked exact pass. Returns those query rows.
    """
    q32 = np.ascontiguousarray(q_num[rows_q], dtype=np.float32)
    r32 = np.ascontiguousarray(r_num[rows_r], dtype=np.float32)
    index = faiss.IndexFlat(r32.shape[1], faiss.METRIC_L1)
    index.add(r32)
    wanted = min(len(rows_r), k + _L1_EXTRA)
    found_d, found_i = index.search(q32, wanted)
    d = r32.shape[1]
    err = (
        (d + 2)
        * np.finfo(np.float32).eps
        * (np.abs(q_num[rows_q]).sum(axis=1) + np.abs(r_num[rows_r]).sum(axis=1).max())
    )
    bound = found_d[:, min(k, wanted) - 1] + 2 * err
    settled = (found_d[:, -1] > bound) | (wanted == len(rows_r))
    inside = (found_d <= bound[:, None]) & settled[:, None]
    hit_q, hit_at = np.nonzero(inside)
    q, r = rows_q[hit_q], rows_r[found_i[hit_q, hit_at]]
    best.update(q, r, np.abs(q_num[q] - r_num[r]).sum(axis=1))
    return rows_q[~settled]


def _large_group(best, q_num, r_num, rows_q, rows_r, k, metric, masked, q_codes, r_codes):
    """k nearest of one large tuple: the exact grouped L2 search, faiss L1 with a float64
    re-check, or blocked cdist."""
    as32 = q_num[rows_q].astype(np.float32), r_num[rows_r].astype(np.float32)
    exact32 = (as32[0] == q_num[rows_q]).all() and (as32[1] == r_num[rows_r]).all()
    if metric == "l2" and masked is None and exact32 and r_num.shape[1]:
        # float64 re-check from float32 coordinates equals the float64 distances here
        dist, idx = exact_knn(as32[1], as32[0], k=min(k, len(rows_r)), exclude_self=False)
        found = np.isfinite(dist)
        q = np.repeat(rows_q, dist.shape[1]).reshape(dist.shape)
        best.update(q[found], rows_r[idx[found]], dist[found])
        return
    if metric == "l1" and masked is None and r_num.shape[1]:
        rows_q = _l1_candidates(best, q_num, r_num, rows_q, rows_r, k)
    kind = "cityblock" if metric == "l1" else "sqeuclidean"
    for block in _row_blocks(len(rows_q), len(rows_r)):
        rq = rows_q[block]
        d = (
            distance.cdist(q_num[rq], r_num[rows_r], kind)
            if q_num.shape[1]
            else (np.zeros((len(rq), len(rows_r))))
        )
        if masked is not None:
            d = d + _pair_cost(q_codes[rq, masked], r_codes[rows_r, masked], metric)
            d[q_codes[rq, masked][:, None] == r_codes[rows_r, masked][None, :]] = np.inf
        if metric == "l2":
            d = np.sqrt(d)
        if d.shape[1] > k:
            cut = np.partition(d, k - 1, axis=1)[:, k - 1 : k]
            hit_q, hit_r = np.nonzero(d <= cut)
        else:
            hit_q, hit_r = np.nonzero(np.isfinite(d))
        best.update(rq[hit_q], rows_r[hit_r], d[hit_q, hit_r])
