"""Mixed-type encoder fitted on the real table only.

The same fitted encoder is applied to real, holdout and synthetic rows, so every source lives
in one feature space whose scale is set by the real data. Nothing about the synthetic table
leaks into the scaling: a generator cannot move the yardstick it is measured with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.io.schema import Schema

MISSING = "__missing__"


@dataclass
class TabularEncoder:
    """Standardise numeric columns and one-hot encode categorical columns.

    Numeric columns: ``(x - mean_real) / std_real`` (std 0 -> 1); a missing value becomes 0 and
    sets the column's missing indicator, which exists only when the real column has missing
    values. Categorical columns: one-hot over the real categories plus a ``__missing__`` level
    when the real column has missing values; a category never seen in real encodes as an
    all-zero block (it matches nothing real). Identifier, datetime and constant columns are
    not encoded.

    Parameters
    ----------
    schema : Schema
        Column kinds; only ``schema.analysed`` columns are encoded.

    Attributes
    ----------
    feature_names : list of str
        Encoded feature names (``"age"``, ``"age__missing"``, ``"sex=Male"``, ...).
    groups : dict of str -> list of int
        Encoded column positions that belong to each original column.
    """

    schema: Schema
    feature_names: list[str] = field(default_factory=list, init=False)
    groups: dict[str, list[int]] = field(default_factory=dict, init=False)
    _mean: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _std: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _min: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _max: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _has_missing: dict[str, bool] = field(default_factory=dict, init=False, repr=False)
    _levels: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)
    _fitted: bool = field(default=False, init=False, repr=False)

    def fit(self, real: pd.DataFrame) -> TabularEncoder:
        """Learn scales and categories from ``real``; returns ``self``."""
        self._check_columns(real, "real")
        names: list[str] = []
        groups: dict[str, list[int]] = {}
        for col in self.schema.analysed:
            start = len(names)
            missing = bool(real[col].isna().any())
            self._has_missing[col] = missing
            if self.schema.kinds[col] == "numeric":
                values = pd.to_numeric(real[col], errors="coerce").astype("float64")
                mean = float(values.mean()) if values.notna().any() else 0.0
                std = float(values.std(ddof=0)) if values.notna().sum() > 1 else 0.0
                self._mean[col], self._std[col] = mean, (std if std > 0 else 1.0)
                self._min[col] = float(values.min()) if values.notna().any() else 0.0
                self._max[col] = float(values.max()) if values.notna().any() else 0.0
                names.append(col)
                if missing:
                    names.append(f"{col}__missing")
            else:
                levels = sorted(real[col].dropna().astype(str).unique().tolist())
                if missing:
                    levels.append(MISSING)
                self._levels[col] = levels
                names.extend(f"{col}={level}" for level in levels)
            groups[col] = list(range(start, len(names)))
        self.feature_names, self.groups, self._fitted = names, groups, True
        return self

    def _check_columns(self, df: pd.DataFrame, name: str) -> None:
        missing = [c for c in self.schema.analysed if c not in df.columns]
        if missing:
            raise DataError(f"{name} is missing columns {missing}; expected the columns of real")

    def _numeric(self, df: pd.DataFrame, col: str) -> np.ndarray:
        return pd.to_numeric(df[col], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)

    def transform(self, df: pd.DataFrame, *, name: str = "table") -> np.ndarray:
        """Encode ``df`` into an ``(n, len(feature_names))`` float32 array."""
        if not self._fitted:
            raise RuntimeError("TabularEncoder.transform called before fit")
        self._check_columns(df, name)
        out = np.zeros((len(df), len(self.feature_names)), dtype=np.float32)
        for col, positions in self.groups.items():
            if self.schema.kinds[col] == "numeric":
                values = self._numeric(df, col)
                isna = np.isnan(values)
                out[:, positions[0]] = np.where(
                    isna, 0.0, (values - self._mean[col]) / self._std[col]
                )
                if self._has_missing[col]:
                    out[:, positions[1]] = isna
            else:
                values = df[col].astype("string").fillna(MISSING).to_numpy(dtype=object)
                lookup = dict(zip(self._levels[col], positions, strict=True))
                rows = np.arange(len(df))
                # one dictionary look-up per distinct value, not per cell (same positions)
                codes, uniques = pd.factorize(values)
                cols = np.array([lookup.get(v, -1) for v in uniques], dtype=np.int64)[codes]
                seen = cols >= 0
                out[rows[seen], cols[seen]] = 1.0
        return out

    def transform_range(self, df: pd.DataFrame, *, name: str = "table") -> np.ndarray:
        """Numeric columns min-max scaled on the real range, shape ``(n, n_numeric)`` float64.

        Missing values stay ``NaN``; values outside the real range fall outside [0, 1].
        """
        if not self._fitted:
            raise RuntimeError("TabularEncoder.transform_range called before fit")
        self._check_columns(df, name)
        cols = self.schema.numeric
        out = np.empty((len(df), len(cols)), dtype=np.float64)
        for j, col in enumerate(cols):
            span = self._max[col] - self._min[col]
            out[:, j] = (self._numeric(df, col) - self._min[col]) / (span if span > 0 else 1.0)
        return out


def canonical_order(x: np.ndarray) -> np.ndarray:
    """Row order that depends only on the rows' values: lexicographic over the columns.

    Fitting a model on ``x[canonical_order(x)]`` makes the fit independent of the order rows
    arrived in (mini-batch order is seeded over positions, so a shuffled input would otherwise
    give another model). Equal rows are interchangeable, so their relative order is immaterial.
    """
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"x must be a 2-d array; got {arr.ndim} dimensions instead")
    if arr.shape[1] == 0:
        return np.arange(len(arr))
    # np.lexsort sorts by the last key first: reverse so the first column leads
    return np.lexsort(arr.T[::-1])
