"""Per-feature baselines and the PCA view of the Fidelity page.

Definitions (Eiring 2022, thesis §2.3 names the metrics; the exact estimators are ours):

* Numeric columns are compared on the real range: ``(x − min_real) / (max_real − min_real)``
  (span 0 → 1), missing values dropped. Then
  - ``wasserstein``: Wasserstein-1 distance of the two empirical distributions (the
    algorithm of ``scipy.stats.wasserstein_distance``, summed independently of the BLAS
    threads: :func:`wasserstein_1d`); 0 is identical, 1 is "everything moved across the
    whole real range";
  - ``ks``: two-sample Kolmogorov–Smirnov statistic (``scipy.stats.ks_2samp``), in [0, 1];
  - ``rmse``: root mean square difference of the two quantile functions at the 100 levels
    0.005, 0.015, …, 0.995. The thesis calls it "the root mean square error between the fake
    and real datasets"; rows of two independent samples have no pairing, so we compare the
    sorted values (quantiles) instead of rows.
* Categorical columns: ``tvd`` = total variation distance of the category proportions,
  ``½ Σ_v |p_real(v) − p_synthetic(v)|`` with missing as its own category, in [0, 1].
* Pairwise unique combinations: for every unordered pair of categorical columns, the number
  of distinct (value, value) combinations present (missing counted as a value), summed over
  pairs; reported for real and synthetic together with the synthetic combinations that never
  occur in real (e.g. "illiterate" with "PhD"). Closer to the real count is better.

Every value is lower-is-better and invariant to row order.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.decomposition import PCA

from synthreview.results import to_jsonable
from synthreview.splits import draw_rows

_QUANTILES = (np.arange(100) + 0.5) / 100


def _scaled(real: pd.Series, synthetic: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    r = pd.to_numeric(real, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    s = pd.to_numeric(synthetic, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    r, s = r[~np.isnan(r)], s[~np.isnan(s)]
    if not len(r):
        return r, s
    lo, span = r.min(), r.max() - r.min()
    span = span if span > 0 else 1.0
    return (r - lo) / span, (s - lo) / span


def _categories(values: pd.Series) -> pd.Series:
    return values.astype("string").fillna("__missing__")


def wasserstein_1d(u: np.ndarray, v: np.ndarray) -> float:
    """Wasserstein-1 distance of two 1-D samples, summed in an order fixed by the data.

    The integral ``∫ |F_u(x) − F_v(x)| dx`` of the two empirical CDFs over the merged sorted
    values, the algorithm of ``scipy.stats.wasserstein_distance``. SciPy (1.17) takes the
    final sum with ``np.vecdot``, a BLAS dot product whose rounding depends on how many BLAS
    threads run (17 of 20 pairs of 50,000 values differed in the last bits between one and
    two threads), so a report changed with ``--threads`` and between a Dask worker and the
    client; numpy's pairwise sum does not depend on threads.

    Parameters
    ----------
    u, v : ndarray of shape (n,) and (m,)
        Finite values, both non-empty.

    Returns
    -------
    float
        ``>= 0``; 0 when the two samples have the same distribution; lower is better.
    """
    u, v = np.sort(u), np.sort(v)
    values = np.sort(np.concatenate([u, v]))
    deltas = np.diff(values)
    u_cdf = np.searchsorted(u, values[:-1], side="right") / u.size
    v_cdf = np.searchsorted(v, values[:-1], side="right") / v.size
    return float(np.sum(np.abs(u_cdf - v_cdf) * deltas))


def feature_distances(real: pd.DataFrame, synthetic: pd.DataFrame, *, schema) -> pd.DataFrame:
    """One row per analysed column: kind, wasserstein, ks, rmse (numeric) or tvd (categorical).

    Parameters
    ----------
    real, synthetic : DataFrame
        Tables with the columns of ``schema.analysed``.
    schema : Schema

    Returns
    -------
    DataFrame
        Columns ``column, kind, wasserstein, ks, rmse, tvd, real_missing, synthetic_missing``;
        lower distances are better; ``nan`` where a measure does not apply or a column has
        no values.
    """
    rows = []
    for col in schema.analysed:
        kind = schema.kinds[col]
        row = {
            "column": col,
            "kind": kind,
            "wasserstein": np.nan,
            "ks": np.nan,
            "rmse": np.nan,
            "tvd": np.nan,
            "real_missing": float(real[col].isna().mean()) if len(real) else np.nan,
            "synthetic_missing": (
                float(synthetic[col].isna().mean()) if len(synthetic) else np.nan
            ),
        }
        if kind == "numeric":
            r, s = _scaled(real[col], synthetic[col])
            if len(r) and len(s):
                row["wasserstein"] = wasserstein_1d(r, s)
                row["ks"] = float(stats.ks_2samp(r, s, method="asymp").statistic)  # p-value unused
                diff = np.quantile(r, _QUANTILES) - np.quantile(s, _QUANTILES)
                row["rmse"] = float(np.sqrt(np.mean(diff**2)))
        else:
            p = _categories(real[col]).value_counts(normalize=True)
            q = _categories(synthetic[col]).value_counts(normalize=True)
            if len(p) and len(q):
                levels = p.index.union(q.index)
                diff = p.reindex(levels, fill_value=0.0) - q.reindex(levels, fill_value=0.0)
                row["tvd"] = float(0.5 * diff.abs().sum())
        rows.append(row)
    columns = [
        "column",
        "kind",
        "wasserstein",
        "ks",
        "rmse",
        "tvd",
        "real_missing",
        "synthetic_missing",
    ]
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True)
class PairwiseCombinations:
    """Distinct value pairs over all pairs of categorical columns (thesis §2.3).

    Attributes
    ----------
    real, synthetic : int
        Number of distinct (column pair, value pair) combinations present in each table.
    synthetic_not_in_real : int
        Synthetic combinations that never occur in real (lower is better).
    """

    real: int
    synthetic: int
    synthetic_not_in_real: int

    def to_dict(self) -> dict[str, int]:
        """JSON-ready counts."""
        return to_jsonable(self.__dict__)


def pairwise_unique_combinations(
    real: pd.DataFrame, synthetic: pd.DataFrame, *, schema
) -> PairwiseCombinations:
    """Count pairwise unique combinations of categorical values in real and synthetic.

    Each categorical column is coded once (real and synthetic together, missing as a level of
    its own, values compared as text); a pair of columns is then one integer per row, and the
    distinct pairs are a ``bincount`` (or ``numpy.unique`` when the pair has more possible
    combinations than rows). Python sets of string tuples took 15.6 s of a CLI fidelity
    section; this takes a fraction of a second (``tests/test_fidelity_features.py`` holds it
    equal to the set definition).
    """
    n = len(real)
    codes, levels = [], []
    for col in schema.categorical:
        joined = pd.concat([_categories(real[col]), _categories(synthetic[col])], ignore_index=True)
        code, uniques = pd.factorize(joined)
        codes.append(code.astype(np.int64))
        levels.append(max(len(uniques), 1))
    n_real = n_synth = n_new = 0
    for a, b in combinations(range(len(codes)), 2):
        key = codes[a] * levels[b] + codes[b]
        size = levels[a] * levels[b]
        if size <= 4 * len(key):
            in_real = np.bincount(key[:n], minlength=size) > 0
            in_synth = np.bincount(key[n:], minlength=size) > 0
            n_real += int(in_real.sum())
            n_synth += int(in_synth.sum())
            n_new += int((in_synth & ~in_real).sum())
        else:
            real_keys, synth_keys = np.unique(key[:n]), np.unique(key[n:])
            n_real += len(real_keys)
            n_synth += len(synth_keys)
            n_new += len(np.setdiff1d(synth_keys, real_keys, assume_unique=True))
    return PairwiseCombinations(n_real, n_synth, n_new)


def pca_projection(
    real_x: np.ndarray,
    others: dict[str, np.ndarray],
    *,
    n_components: int = 2,
    max_points: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Project real and other sources onto principal components fitted on real only.

    Parameters
    ----------
    real_x : ndarray of shape (n, d)
        Encoded (or embedded) real rows; the PCA is fitted on all of them.
    others : dict of str -> ndarray of shape (m, d)
        Other sources (``"holdout"``, candidate names) in the same space.
    n_components : int, default=2
    max_points : int, default=2000
        At most this many rows per source are returned (seeded sample, in row order).
    seed : int, default=0

    Returns
    -------
    DataFrame
        Tidy ``source, row_id, PC1, …`` where ``row_id`` is the row position in its source.
    """
    real_x = np.asarray(real_x, dtype=np.float64)
    n_components = min(n_components, real_x.shape[1], len(real_x))
    pca = PCA(n_components=n_components, svd_solver="full").fit(real_x)
    rng = np.random.default_rng(seed)
    frames = []
    for source, x in {"real": real_x, **others}.items():
        x = np.asarray(x, dtype=np.float64)
        rows = np.arange(len(x))
        if len(x) > max_points:
            rows = draw_rows(rng, len(x), max_points)
        projected = pca.transform(x[rows]) if len(rows) else np.empty((0, n_components))
        frame = pd.DataFrame(projected, columns=[f"PC{i + 1}" for i in range(n_components)])
        frame.insert(0, "row_id", rows)
        frame.insert(0, "source", source)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
