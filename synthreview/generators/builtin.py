"""Built-in generators with the plugin signature ``fit_sample(train, n, seed) -> DataFrame``.

Name them like any other generator (:func:`synthreview.generators.plugin.load_generator`):

=========================================  ===================================================
``synthreview.generators.builtin:memorise``  releases its training rows: every shadow attack
                                            must catch it
``synthreview.generators.builtin:copula``    :func:`~synthreview.generators.tables.
                                            gaussian_copula` with the kinds inferred from the
                                            training table: a fair baseline
=========================================  ===================================================

They are the two ends a shadow-model attack is checked against
(:mod:`synthreview.metrics.privacy.shadow`): a generator that leaks every record, and one whose
output is drawn from a smooth model of the population.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthreview.generators.tables import gaussian_copula
from synthreview.io.tables import infer_schema

__all__ = ["copula", "memorise"]


def _check(train: pd.DataFrame, n: int, seed: int, *, min_rows: int = 1) -> None:
    if not isinstance(train, pd.DataFrame):
        raise TypeError(f"train must be a pandas DataFrame; got {type(train).__name__} instead")
    if len(train) < min_rows:
        raise ValueError(f"train must have at least {min_rows} rows; got {len(train)} instead")
    for name, value in (("n", n), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0; got {value!r} instead")
    if n < 1:
        raise ValueError(f"n must be an integer >= 1; got {n!r} instead")


def memorise(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Release training rows verbatim, each at most once until all have been used.

    The rows of ``train`` in a seeded random order: ``n <= len(train)`` gives ``n`` distinct
    training rows, a larger ``n`` every training row at least once (then again in a new order).
    Deliberately the worst generator there is: with ``n >= len(train)`` every training record
    is in the output, so a membership attack that can run the generator wins every time.

    Parameters
    ----------
    train : pandas.DataFrame
    n : int
        Rows to return, >= 1.
    seed : int

    Returns
    -------
    pandas.DataFrame
        ``n`` rows of ``train`` with its columns, index reset.
    """
    _check(train, n, seed)
    rng = np.random.default_rng(seed)
    rounds = -(-n // len(train))
    order = np.concatenate([rng.permutation(len(train)) for _ in range(rounds)])[:n]
    return train.iloc[order].reset_index(drop=True)


def copula(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Gaussian copula with empirical marginals, column kinds inferred from ``train``.

    :func:`synthreview.generators.tables.gaussian_copula` with the schema of
    :func:`synthreview.io.tables.infer_schema`: normal scores of each column's ranks, their
    correlation matrix, new rows mapped back through each column's empirical quantiles.

    Parameters
    ----------
    train : pandas.DataFrame
        At least two rows.
    n : int
        Rows to return, >= 1.
    seed : int

    Returns
    -------
    pandas.DataFrame
        ``n`` new rows with the columns and dtypes of ``train``.
    """
    _check(train, n, seed, min_rows=2)
    return gaussian_copula(train, schema=infer_schema(train), n=n, seed=seed)
