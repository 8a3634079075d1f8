"""Row hashes and a row order that depend on the rows' values only, never on their positions.

Exact row matching (a synthetic row that *is* a training or holdout record, a holdout that holds
the training rows) compares one 64-bit hash per row, in O(n). Sorting rows by the same hash gives
an order defined by content alone: an estimate that draws rows by position (attack targets,
subsamples, folds) draws the same records whatever order the file listed them in.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["table_row_hashes", "value_order"]


def table_row_hashes(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """One uint64 per row of ``frame[columns]``; equal rows hash equal.

    Numbers are compared as float64 and every other cell as text, a missing cell as a value of
    its own, so the hash depends on the rows' values only, never on their position.
    """
    norm = {}
    for col in columns:
        values = frame[col]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            norm[col] = pd.to_numeric(values).astype("float64")
        else:
            norm[col] = values.astype("string").fillna("\x00missing")
    return pd.util.hash_pandas_object(pd.DataFrame(norm), index=False).to_numpy()


def value_order(frame: pd.DataFrame) -> np.ndarray:
    """Positions of ``frame``'s rows sorted by their :func:`table_row_hashes` (stable).

    ``frame.iloc[value_order(frame)]`` lists the same rows in the same order for any
    permutation of ``frame``'s rows: equal rows hash equal and are interchangeable, and two
    different rows share a 64-bit hash with negligible probability.
    """
    return np.argsort(table_row_hashes(frame, list(frame.columns)), kind="stable")
