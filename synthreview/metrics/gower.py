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

_CHUNK_CELLS = 4_000_000  # pair-cells per numpy block in the exact path (~32 MB of float64)


@dataclass(frozen=True)
class _Coded:
    """Both inputs on one scale: range-scaled numeric (NaN kept) and integer categorical codes."""

    a_num: np.ndarray
    b_num: np.ndarray
    a_cat: np.ndarray
    b_cat: np.ndarray
    n_levels: tuple[int, ...]


def _split_columns(
    a: pd.DataFrame, b: pd.DataFrame, categorical: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    if not isinstance(a, pd.DataFrame) or not isinstance(b, pd.DataFrame):
        raise TypeError(
            f"a and b must be pandas DataFrames; got {type(a).__name__} and {type(b).__name__}"
        )
    if list(a.columns) != list(b.columns):
        raise ValueError(
            f"a and b must have the same columns in the same order; got {list(a.columns)} "
            f"and {list(b.columns)}"
        )
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


def _code(a: pd.DataFrame, b: pd.DataFrame, nums: list[str], cats: list[str]) -> _Coded:
    def numeric(df: pd.DataFrame) -> np.ndarray:
        if not nums:
            return np.zeros((len(df), 0))
        return np.column_stack(
            [
                pd.to_numeric(df[c], errors="coerce").to_numpy("float64", na_value=np.nan)
                for c in nums
            ]
        )

    a_num, b_num = numeric(a), numeric(b)
    both = np.vstack([a_num, b_num])
    with np.errstate(all="ignore"):
        lo = np.nanmin(both, axis=0, initial=np.inf, where=~np.isnan(both))
        hi = np.nanmax(both, axis=0, initial=-np.inf, where=~np.isnan(both))
    span = hi - lo
    # a constant (or all-missing) column contributes 0 to every compared pair, as in the package
    ok = np.isfinite(span) & (span > 0)
    scale = np.where(ok, span, 1.0)
    offset = np.where(np.isfinite(lo), lo, 0.0)
    a_num = np.where(ok, (a_num - offset) / scale, np.where(np.isnan(a_num), np.nan, 0.0))
    b_num = np.where(ok, (b_num - offset) / scale, np.where(np.isnan(b_num), np.nan, 0.0))

    a_cat = np.zeros((len(a), len(cats)), dtype=np.int64)
    b_cat = np.zeros((len(b), len(cats)), dtype=np.int64)
    n_levels = []
    for j, c in enumerate(cats):
        # missing becomes a code of its own (see module docstring)
        joined = pd.concat([a[c], b[c]], ignore_index=True).astype("object")
        codes, uniques = pd.factorize(joined, use_na_sentinel=False)
        a_cat[:, j], b_cat[:, j] = codes[: len(a)], codes[len(a) :]
        n_levels.append(len(uniques))
    return _Coded(a_num, b_num, a_cat, b_cat, tuple(n_levels))


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
    query: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    categorical: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Gower distance from each ``query`` row to its nearest ``reference`` row, exactly.

    Equals ``gower_distances(query, reference).min(axis=1)`` (ranges over both inputs
    together) without building the matrix: memory is O(len(query) + len(reference)) apart from
    the rows with missing numeric values, which are handled in blocks.

    Parameters
    ----------
    query, reference : pandas.DataFrame
        Same columns in the same order.
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
        qe = _l1_embedding(coded.a_num[q_full], coded.a_cat[q_full], coded.n_levels)
        re = _l1_embedding(coded.b_num[r_full], coded.b_cat[r_full], coded.n_levels)
        faiss_index = faiss.IndexFlat(re.shape[1], faiss.METRIC_L1)
        faiss_index.add(re)
        _, found = faiss_index.search(qe, 1)
        q_rows = np.flatnonzero(q_full)
        r_rows = np.flatnonzero(r_full)[found[:, 0]]
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
