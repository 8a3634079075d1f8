"""One German-credit split shared by the tests that judge a fresh sample against known leaks.

German credit (``../shared/data``) is shuffled with a seed and cut into disjoint training,
holdout and fresh samples of ``n`` rows each; the fresh sample is what a perfect generator
would release. ``noisy_copy`` is the training rows with 1 %-of-sd noise on every numeric column.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from synthreview.io.schema import LoadedTable, Schema
from synthreview.io.tables import align, read_table

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class CreditSplit:
    """Training, holdout and fresh samples (tables) and their aligned schema."""

    real: LoadedTable
    holdout: LoadedTable
    fresh: LoadedTable
    schema: Schema


def german_credit_split(
    n: int = 300, seed: int = 0, *, n_holdout: int | None = None, n_fresh: int | None = None
) -> CreditSplit:
    """``n`` training, ``n_holdout`` holdout and ``n_fresh`` fresh rows of German credit
    (``n`` each by default), disjoint."""
    table = read_table(DATA / "german_credit.csv", role="real")
    order = np.random.default_rng(seed).permutation(table.n_rows)
    n_holdout = n if n_holdout is None else n_holdout
    n_fresh = n if n_fresh is None else n_fresh

    def rows(part, name, role):
        return replace(table, name=name, role=role,
                       frame=table.frame.iloc[part].reset_index(drop=True),
                       raw=table.raw.iloc[part].reset_index(drop=True))  # fmt: skip

    end = n + n_holdout
    real, holdout = rows(order[:n], "real", "real"), rows(order[n:end], "holdout", "holdout")
    fresh = rows(order[end : end + n_fresh], "fresh", "synthetic")
    schema = align(real, {"fresh": fresh}, holdout=holdout).schema
    return CreditSplit(real, holdout, fresh, schema)


def noisy_copy(frame: pd.DataFrame, numeric, seed: int) -> pd.DataFrame:
    """``frame`` with Gaussian noise of 1 % of each numeric column's sd."""
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for col in numeric:
        values = pd.to_numeric(out[col], errors="coerce").astype(float)
        out[col] = values + rng.normal(0.0, 0.01 * values.std(ddof=0), len(values))
    return out
