"""Sensitive-value replay, named per column: values of one training person that reappear.

A value that occurs once in the training data (a rare amount, a code, a line of free text)
points at the one person who carried it; a candidate that writes it again discloses it,
whatever the rest of the row (Stadler et al. 2022, "Synthetic Data - Anonymisation Groundhog
Day", section 6: outliers stay exposed). :mod:`synthreview.metrics.privacy.rare_values` turns
this into a membership attack over all columns; this module names the columns.

Per analysed column: the synthetic rows whose value is *training-unique* (it occurs in exactly
one training row), against the same share of the holdout rows, what a fresh real sample
reproduces by coincidence (a common-looking amount that one training person happened to
carry), with Newcombe's hybrid score interval of the difference
(:func:`synthreview.metrics.privacy.intervals.newcombe_difference`). Numbers compare as
float64 values, text as text; a missing value is never unique. Shares in [0, 1], the excess in
[-1, 1], lower is better, 0 = what a fresh sample shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthreview.metrics.privacy.intervals import newcombe_difference
from synthreview.results import to_jsonable

__all__ = ["SensitiveValueReplay", "ValueReplay", "sensitive_value_replay"]


@dataclass(frozen=True)
class ValueReplay:
    """One column's training-unique values in the candidate and in the holdout.

    Attributes
    ----------
    column : str
    unique_values : int
        Values that occur in exactly one training row.
    reproduced : int
        How many of them the candidate writes at least once.
    rows, holdout_rows : int
        Synthetic (holdout) rows carrying a training-unique value.
    share, holdout_share : float
        The same as shares (``holdout_share`` NaN without a holdout).
    excess : float
        ``share - holdout_share``.
    excess_ci : tuple of float or None
        Newcombe's 95 % interval of ``excess``.
    """

    column: str
    unique_values: int
    reproduced: int
    rows: int
    share: float
    holdout_rows: int
    holdout_share: float
    excess: float
    excess_ci: tuple[float, float] | None

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return to_jsonable(self.__dict__)


@dataclass(frozen=True)
class SensitiveValueReplay:
    """Every analysed column, highest excess first (the order a reviewer reads them)."""

    columns: tuple[ValueReplay, ...]

    def to_dict(self) -> dict:
        """JSON-ready: ``{"columns": [...]}``."""
        return to_jsonable({"columns": [c.to_dict() for c in self.columns]})


def _values(series: pd.Series, numeric: bool) -> pd.Series:
    if numeric:
        return pd.to_numeric(series, errors="coerce").astype(float)
    return series.astype("string")


def sensitive_value_replay(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    columns: Sequence[str],
    numeric: Sequence[str] = (),
) -> SensitiveValueReplay:
    """Training-unique values reproduced per column, beside the holdout (module text).

    Parameters
    ----------
    real, synthetic : pandas.DataFrame
    holdout : pandas.DataFrame, optional
    columns : sequence of str
        Columns examined (the analysed ones).
    numeric : sequence of str
        Of those, the numeric columns (compared as float64 values).

    Returns
    -------
    SensitiveValueReplay
    """
    found = []
    for column in columns:
        is_num = column in numeric
        train = _values(real[column], is_num).dropna()
        counts = train.value_counts()
        unique = pd.Index(counts.index[counts.to_numpy() == 1])
        synth = _values(synthetic[column], is_num)
        hit = synth.isin(unique).to_numpy() & synth.notna().to_numpy()
        rows, n = int(hit.sum()), len(synth)
        reproduced = int(pd.Series(synth[hit]).nunique())
        held, n_hold, ci = 0, 0, None
        hold_share = math.nan
        if holdout is not None and len(holdout) and n:
            hvals = _values(holdout[column], is_num)
            held = int((hvals.isin(unique).to_numpy() & hvals.notna().to_numpy()).sum())
            n_hold = len(hvals)
            hold_share = held / n_hold
            ci = newcombe_difference(rows, n, held, n_hold)
        share = rows / n if n else math.nan
        found.append(
            ValueReplay(
                column=column,
                unique_values=len(unique),
                reproduced=reproduced,
                rows=rows,
                share=share,
                holdout_rows=held,
                holdout_share=hold_share,
                excess=share - hold_share,
                excess_ci=ci,
            )
        )
    order = np.argsort([-(c.excess if not math.isnan(c.excess) else -2) for c in found],
                       kind="stable")  # fmt: skip
    return SensitiveValueReplay(tuple(found[i] for i in order))
