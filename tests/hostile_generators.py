"""Generators that misbehave, named by ``tests.hostile_generators:NAME`` in the shadow-attack
tests: each runs in the generator's child process (``synthreview.generators.runner``)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from synthreview.generators.builtin import memorise

#: what :func:`chatty` prints before each row, so a test can look for it in captured output
MARK = "HOSTILE-GENERATOR-PRINTED"


def hang(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Never returns (a call the time limit must kill)."""
    while True:
        time.sleep(3600)


def spawn_and_hang(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Starts a long ``sleep`` (its pid written to ``$HOSTILE_PID_FILE``), then never returns."""
    sleeper = subprocess.Popen(["sleep", "600"])
    Path(os.environ["HOSTILE_PID_FILE"]).write_text(str(sleeper.pid))
    return hang(train, n, seed)


def chatty(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Prints and logs its training rows, then memorises them."""
    for row in train.head(20).itertuples():
        print(MARK, row)  # noqa: T201 - the behaviour under test
        print(MARK, row, file=sys.stderr)  # noqa: T201
    logging.getLogger("hostile").error("%s %s", MARK, train.head(5).to_dict())
    return memorise(train, n, seed)


def not_a_table(train: pd.DataFrame, n: int, seed: int) -> str:
    """Returns text instead of a table."""
    return "not a table"


def all_missing(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Returns ``n`` rows with the training columns, every value missing."""
    return pd.DataFrame({c: np.full(n, np.nan, dtype=object) for c in train.columns})


def no_rows(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Returns the training columns and no rows."""
    return train.iloc[:0]


def needs_every_column(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Memorises, but fails unless it gets the column ``race`` (left out of the analysis)."""
    if "race" not in train.columns:
        raise ValueError(f"the generator got only {list(train.columns)}")
    return memorise(train, n, seed)
