"""Real and holdout tables that share their rows: refused when identical, noticed when they overlap.

The holdout is the set of real people the generator never saw: the membership attacks use its
rows as non-members, the WP29 attacks as the control, and every holdout reference stands for a
fresh real sample. A holdout that holds the training rows themselves leaves the attacks without
non-members and every reference equal to the training data, so a leak reads as chance.

Rows are compared on the analysed columns (numbers as float64, everything else as text, missing
as its own value) by a 64-bit row hash (:mod:`synthreview.io.row_hash`), in O(n):

* the same rows with the same counts (the same table, perhaps re-ordered): refused, a
  :class:`~synthreview.errors.DataError` (exit 2) before anything is computed;
* more than :data:`OVERLAP_WARNING` of the holdout rows equal a training row: a warning
  :class:`~synthreview.io.schema.Notice` (some tables repeat rows by coincidence; a holdout cut
  from the training table by mistake shows far more).
"""

from __future__ import annotations

import numpy as np

from synthreview.errors import DataError
from synthreview.io.row_hash import table_row_hashes
from synthreview.io.schema import LoadedTable, Notice, Schema

__all__ = ["OVERLAP_WARNING", "overlap_notices"]

#: share of holdout rows equal to a training row above which the review carries a warning
OVERLAP_WARNING = 0.5


def overlap_notices(real: LoadedTable, holdout: LoadedTable | None, schema: Schema) -> list[Notice]:
    """Refuse a holdout identical to the real table; warn when most of its rows are real rows.

    Parameters
    ----------
    real, holdout : LoadedTable
        The tables as aligned (``holdout`` may be None: nothing to check).
    schema : Schema
        Its analysed columns are compared.

    Returns
    -------
    list of Notice
        One warning when more than :data:`OVERLAP_WARNING` of the holdout rows equal a
        training row; empty otherwise.

    Raises
    ------
    DataError
        The holdout holds the same rows as the real table (same counts, any order).
    """
    columns = schema.analysed
    if holdout is None or not columns or not len(holdout.frame):
        return []
    real_hashes = table_row_hashes(real.frame, columns)
    holdout_hashes = table_row_hashes(holdout.frame, columns)
    if len(real_hashes) == len(holdout_hashes) and np.array_equal(
        np.sort(real_hashes), np.sort(holdout_hashes)
    ):
        raise DataError(
            f"holdout {holdout.name!r} holds the same {len(holdout_hashes)} rows as real "
            f"{real.name!r}; expected real rows the generator did not see (with the training "
            "rows as holdout the privacy attacks have no non-members and every holdout "
            "reference is the training data)"
        )
    share = float(np.isin(holdout_hashes, real_hashes).mean())
    if share <= OVERLAP_WARNING:
        return []
    return [
        Notice(
            "warning",
            holdout.name,
            f"{share:.0%} of the holdout rows equal a row of real {real.name!r}: the holdout "
            "should hold people the generator did not see; the privacy attacks and every "
            "holdout reference treat these rows as non-members, so a leak reads as chance",
        )
    ]
