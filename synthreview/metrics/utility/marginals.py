"""General utility on distributions: proportions, means, percentiles, k-marginals, correlations.

Every function compares a synthetic table with the real (training) table column by column, as
defined in the Urban Institute appendix "Metrics Descriptions", *General utility*
(``papers/001``). The same function applied to the holdout table gives the reference value that
sampling noise alone costs. All of them ignore row order.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthreview.encoding import MISSING
from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.results import to_jsonable

#: min, 10th, ..., 90th percentile, max (appendix, "Proportion error in percentiles")
PERCENTILES: tuple[int, ...] = (0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)


def check_columns(frames: dict[str, pd.DataFrame | None], columns: Sequence[str]) -> None:
    """Raise ``DataError`` naming the first table that lacks any of ``columns``."""
    for name, frame in frames.items():
        if frame is None:
            continue
        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"'{name}' must be a pandas DataFrame; got {type(frame).__name__}.")
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise DataError(f"'{name}' is missing columns {missing}; expected the real columns.")


def categorical_values(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Categorical columns as strings with missing values as their own ``__missing__`` level."""
    return pd.DataFrame(
        {c: frame[c].astype("string").fillna(MISSING).astype(object) for c in columns},
        index=frame.index,
    )


def relative_error(real: np.ndarray, synthetic: np.ndarray, *, what: str) -> np.ndarray:
    """``|synthetic - real| / |real|``; ``nan`` (with one warning) where ``real == 0``."""
    real = np.asarray(real, dtype=float)
    synthetic = np.asarray(synthetic, dtype=float)
    zero = real == 0
    if zero.any():
        warnings.warn(
            f"{what}: the proportion error is undefined where the real value is 0 "
            f"({int(zero.sum())} of {zero.size}); those entries are nan.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(zero, np.nan, np.abs(synthetic - real) / np.abs(real))


def _nanmean(values: pd.Series | np.ndarray) -> float:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else math.nan


@dataclass(frozen=True)
class ProportionErrors:
    """Absolute errors of class proportions, overall and within groups.

    Attributes
    ----------
    overall : pandas.DataFrame
        ``column, category, real, synthetic, error`` with ``error = |p_synthetic - p_real|``.
    by_group : pandas.DataFrame
        ``group_by, group, column, category, real, synthetic, error``: proportions within each
        level of each grouping column (levels as in real; nan where synthetic has no such row).
    mean_error, max_error, by_group_mean_error : float
        Summaries in [0, 1]; lower is better.
    """

    overall: pd.DataFrame
    by_group: pd.DataFrame
    mean_error: float
    max_error: float
    by_group_mean_error: float

    def to_dict(self) -> dict:
        """Summaries only (the tables are for display)."""
        return to_jsonable(
            {
                "mean_error": self.mean_error,
                "max_error": self.max_error,
                "by_group_mean_error": self.by_group_mean_error,
            }
        )


def _proportions(values: pd.DataFrame, column: str, by: str | None) -> pd.Series:
    keys = [by, column] if by else [column]
    counts = values.groupby(keys, sort=True).size()
    totals = counts.groupby(level=0).transform("sum") if by else counts.sum()
    return counts / totals


def proportion_errors(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    columns: Sequence[str],
    groups: Sequence[str] = (),
) -> ProportionErrors:
    """Absolute error of class proportions for categorical columns, overall and by group.

    Urban Institute appendix, *General utility*, "Absolute error for proportions" (and "... by
    race/ethnicity"): for each class, ``|p_synthetic - p_real|``. Each grouping column is used
    on its own (not crossed), so a group stays large enough to estimate proportions.

    Returns
    -------
    ProportionErrors
        Errors in [0, 1]; 0 is ideal, lower is better.
    """
    columns, groups = list(columns), list(groups)
    check_columns({"real": real, "synthetic": synthetic}, columns + groups)
    r = categorical_values(real, dict.fromkeys(columns + groups))
    s = categorical_values(synthetic, dict.fromkeys(columns + groups))
    rows = []
    for column in columns:
        both = pd.concat([_proportions(r, column, None), _proportions(s, column, None)], axis=1)
        both = both.fillna(0.0).set_axis(["real", "synthetic"], axis=1)
        both["error"] = (both["synthetic"] - both["real"]).abs()
        rows.append(both.rename_axis("category").reset_index().assign(column=column))
    overall_cols = ["column", "category", "real", "synthetic", "error"]
    overall = (
        pd.concat(rows, ignore_index=True)[overall_cols]
        if rows
        else pd.DataFrame(columns=overall_cols)
    )
    group_rows, absent = [], []
    for by in groups:
        synth_levels = set(s[by])
        for column in (c for c in columns if c != by):
            pr, ps = _proportions(r, column, by), _proportions(s, column, by)
            both = pd.concat([pr, ps], axis=1).set_axis(["real", "synthetic"], axis=1)
            both = both[both.index.get_level_values(0).isin(set(r[by]))].fillna(0.0)
            missing_group = ~both.index.get_level_values(0).isin(synth_levels)
            both.loc[missing_group, "synthetic"] = np.nan
            absent += sorted({f"{by}={g}" for g in both.index.get_level_values(0)[missing_group]})
            both["error"] = (both["synthetic"] - both["real"]).abs()
            both = both.rename_axis(["group", "category"]).reset_index()
            group_rows.append(both.assign(group_by=by, column=column))
    if absent:
        warnings.warn(
            f"synthetic has no rows in groups {sorted(set(absent))}; their proportions are nan.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    group_cols = ["group_by", "group", "column", "category", "real", "synthetic", "error"]
    by_group = (
        pd.concat(group_rows, ignore_index=True)[group_cols]
        if group_rows
        else pd.DataFrame(columns=group_cols)
    )
    return ProportionErrors(
        overall=overall,
        by_group=by_group,
        mean_error=_nanmean(overall["error"]),
        max_error=float(overall["error"].max()) if len(overall) else math.nan,
        by_group_mean_error=_nanmean(by_group["error"]),
    )


@dataclass(frozen=True)
class MeanErrors:
    """Absolute proportion errors of means, overall and within groups.

    Attributes
    ----------
    overall : pandas.DataFrame
        ``column, real, synthetic, error`` with ``error = |mean_s - mean_r| / |mean_r|``.
    by_group : pandas.DataFrame
        ``group_by, group, column, real, synthetic, error``.
    mean_error, by_group_mean_error : float
        Mean of the defined errors, >= 0; lower is better.
    """

    overall: pd.DataFrame
    by_group: pd.DataFrame
    mean_error: float
    by_group_mean_error: float

    def to_dict(self) -> dict:
        """Summaries and the per-column errors."""
        return to_jsonable(
            {
                "mean_error": self.mean_error,
                "by_group_mean_error": self.by_group_mean_error,
                "columns": dict(zip(self.overall["column"], self.overall["error"], strict=True)),
            }
        )


def _numeric(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    return frame[list(columns)].apply(pd.to_numeric, errors="coerce").astype(float)


def mean_errors(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    columns: Sequence[str],
    groups: Sequence[str] = (),
) -> MeanErrors:
    """Absolute proportion error of the mean of each numeric column, overall and by group.

    Urban Institute appendix, *General utility*, "Absolute proportion error for means": we read
    "proportion error" as ``|mean_s - mean_r| / |mean_r|`` (scale-free, so columns in dollars
    and in years are comparable). Undefined (nan, with ``UndefinedMetricWarning``) where the
    real mean is 0. Missing values are skipped.

    Returns
    -------
    MeanErrors
        Errors >= 0; 0 is ideal, lower is better.
    """
    columns, groups = list(columns), list(groups)
    check_columns({"real": real, "synthetic": synthetic}, columns + groups)
    r_num, s_num = _numeric(real, columns), _numeric(synthetic, columns)
    overall = pd.DataFrame(
        {"column": columns, "real": r_num.mean().to_numpy(), "synthetic": s_num.mean().to_numpy()}
    )
    overall["error"] = relative_error(overall["real"], overall["synthetic"], what="mean")
    rows = []
    for by in groups:
        r_g = r_num.groupby(categorical_values(real, [by])[by].to_numpy()).mean()
        s_g = s_num.groupby(categorical_values(synthetic, [by])[by].to_numpy()).mean()
        s_g = s_g.reindex(r_g.index)  # levels absent from synthetic: nan
        both = pd.DataFrame(
            {
                "real": r_g.stack(future_stack=True),
                "synthetic": s_g.stack(future_stack=True),
            }
        )
        both = both.rename_axis(["group", "column"]).reset_index().assign(group_by=by)
        rows.append(both)
    by_cols = ["group_by", "group", "column", "real", "synthetic", "error"]
    if rows:
        by_group = pd.concat(rows, ignore_index=True)
        by_group["error"] = relative_error(
            by_group["real"], by_group["synthetic"], what="mean by group"
        )
        by_group = by_group[by_cols]
    else:
        by_group = pd.DataFrame(columns=by_cols)
    return MeanErrors(
        overall=overall,
        by_group=by_group,
        mean_error=_nanmean(overall["error"]),
        by_group_mean_error=_nanmean(by_group["error"]),
    )


@dataclass(frozen=True)
class PercentileErrors:
    """Proportion errors of the min, 10th ... 90th percentile and max of numeric columns.

    Attributes
    ----------
    table : pandas.DataFrame
        ``column, percentile, real, synthetic, error`` with ``error = |q_s - q_r| / |q_r|``
        (nan where ``q_r == 0``).
    mean_error : float
        Mean of the defined errors, >= 0; lower is better.
    """

    table: pd.DataFrame
    mean_error: float

    def to_dict(self) -> dict:
        """The mean error and the per-column mean error."""
        per_column = self.table.groupby("column", sort=False)["error"].agg(_nanmean)
        return to_jsonable({"mean_error": self.mean_error, "columns": per_column.to_dict()})


def percentile_errors(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    columns: Sequence[str],
    percentiles: Sequence[float] = PERCENTILES,
) -> PercentileErrors:
    """Proportion error at the min, 10th, ..., 90th percentile and max of each numeric column.

    Urban Institute appendix, *General utility*, "Proportion error in percentiles":
    ``|q_s - q_r| / |q_r|`` per percentile (linear interpolation, missing values skipped).
    Undefined (nan, with ``UndefinedMetricWarning``) where the real percentile is 0, which is
    common for zero-inflated columns such as capital gains.

    Returns
    -------
    PercentileErrors
        Errors >= 0; 0 is ideal, lower is better.
    """
    columns = list(columns)
    check_columns({"real": real, "synthetic": synthetic}, columns)
    q = np.asarray(percentiles, dtype=float)
    if q.size == 0 or q.min() < 0 or q.max() > 100:
        raise DataError(f"percentiles must lie in [0, 100]; got {list(percentiles)}.")
    r_num, s_num = _numeric(real, columns), _numeric(synthetic, columns)
    rows = []
    for column in columns:
        r_vals, s_vals = r_num[column].dropna(), s_num[column].dropna()
        nan = np.full(q.size, np.nan)
        rows.append(
            pd.DataFrame(
                {
                    "column": column,
                    "percentile": q,
                    "real": np.percentile(r_vals, q) if len(r_vals) else nan,
                    "synthetic": np.percentile(s_vals, q) if len(s_vals) else nan,
                }
            )
        )
    cols = ["column", "percentile", "real", "synthetic", "error"]
    if not rows:
        return PercentileErrors(table=pd.DataFrame(columns=cols), mean_error=math.nan)
    table = pd.concat(rows, ignore_index=True)
    table["error"] = relative_error(table["real"], table["synthetic"], what="percentile")
    return PercentileErrors(table=table[cols], mean_error=_nanmean(table["error"]))


@dataclass(frozen=True)
class CorrelationError:
    """Mean absolute error between the Pearson correlation matrices of numeric columns.

    Attributes
    ----------
    mae : float
        In [0, 2]; 0 is ideal, lower is better.
    real, synthetic : pandas.DataFrame
        The two correlation matrices (columns x columns).
    """

    mae: float
    real: pd.DataFrame
    synthetic: pd.DataFrame

    @property
    def difference(self) -> pd.DataFrame:
        """Synthetic minus real correlations."""
        return self.synthetic - self.real

    def to_dict(self) -> dict:
        """The MAE only."""
        return to_jsonable({"mae": self.mae})


def correlation_error(
    real: pd.DataFrame, synthetic: pd.DataFrame, *, columns: Sequence[str]
) -> CorrelationError:
    """Mean absolute error in pairwise Pearson correlations of numeric columns.

    Urban Institute appendix, *General utility*, "Mean absolute error in pairwise correlation
    coefficients": difference the lower triangles (diagonal excluded) and average ``|r_s - r_r|``.
    Pairs whose correlation is undefined (a constant column) are left out with a warning; with
    fewer than two numeric columns the result is nan.

    Returns
    -------
    CorrelationError
        ``mae`` in [0, 2]; 0 is ideal, lower is better.
    """
    columns = list(columns)
    check_columns({"real": real, "synthetic": synthetic}, columns)
    r_corr = _numeric(real, columns).corr(method="pearson")
    s_corr = _numeric(synthetic, columns).corr(method="pearson")
    lower = np.tril_indices(len(columns), k=-1)
    diff = np.abs(s_corr.to_numpy() - r_corr.to_numpy())[lower]
    if diff.size == 0:
        warnings.warn(
            f"correlation MAE needs at least two numeric columns; got {columns}.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        return CorrelationError(mae=math.nan, real=r_corr, synthetic=s_corr)
    if not np.isfinite(diff).all():
        warnings.warn(
            f"{int((~np.isfinite(diff)).sum())} of {diff.size} correlations are undefined "
            "(a constant column); they are left out of the MAE.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return CorrelationError(mae=_nanmean(diff), real=r_corr, synthetic=s_corr)
