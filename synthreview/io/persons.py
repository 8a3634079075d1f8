"""The person column of a table with several rows per person: checks and grouping.

A person-level review (``--person COLUMN``, :attr:`synthreview.options.ReviewOptions.person`)
judges membership by person: the training table's people are the members, the holdout's people
the non-members. The column is an identifier, never a feature: :func:`with_person` re-aligns the
review with the column's kind set to ``identifier`` (so no encoder, attack or metric reads it),
and :func:`check_person_column` refuses, before anything is computed, a column that is missing,
has missing ids, holds fractional numbers, or names a person on both the training and the
holdout side.

The synthetic table carries the column too (every table has real's columns); when the generator
did not keep ids the column is empty there, and the audit then curates rows one by one
(:func:`synthetic_person_ids`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from synthreview.errors import ConfigError, DataError
from synthreview.io.schema import Notice, Review
from synthreview.io.tables import align

__all__ = [
    "check_person_column",
    "person_ids",
    "person_key_columns",
    "person_key_notices",
    "synthetic_person_ids",
    "with_person",
]

#: a person key has at least this many distinct values, and its values repeat on average
#: at least this often (rows per value)
_MIN_PEOPLE, _MIN_ROWS_PER_PERSON = 10, 2.0
#: share of rows in a value that repeats, and share of repeated values within which another
#: column is constant, for a column to read as a person key
_MIN_REPEATED_ROWS, _MIN_CONSTANT_SHARE = 0.9, 0.95
#: the most frequent value holds at most this many times the median rows per value
_MAX_LARGEST_PERSON = 10
#: another column counts only when two random rows differ on it often enough (a column with
#: one dominant value is constant within most pairs of rows by chance)
_MAX_CHANCE_CONSTANT = 0.8

#: person ids quoted in a message at most
_SHOWN = 5


def person_ids(values: pd.Series) -> np.ndarray:
    """Person ids as text (``7.0`` and ``7`` are the same person when read as numbers)."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        numbers = pd.to_numeric(values).astype("float64")
        return np.array([f"{v:.0f}" if float(v).is_integer() else repr(float(v)) for v in numbers])
    return values.astype("string").to_numpy(dtype=object).astype(str)


def _check_ids(values: pd.Series, table: str, column: str) -> None:
    missing = int(values.isna().sum())
    if missing:
        raise DataError(
            f"option person: column {column!r} of {table} must name a person on every row; "
            f"got {missing} missing id(s) of {len(values)} instead"
        )
    if pd.api.types.is_float_dtype(values):
        fractional = values[(values % 1) != 0]
        if len(fractional):
            raise DataError(
                f"option person: column {column!r} of {table} must hold ids (text or whole "
                f"numbers); got fractional numbers such as {fractional.iloc[0]!r} instead"
            )


def synthetic_person_ids(review: Review, name: str, column: str) -> np.ndarray | None:
    """The person ids of candidate ``name``'s rows, or None when its column is empty.

    A generator that kept the person column gives each synthetic row the id of a synthetic
    person (who may copy a real one): the audit then flags and curates a person's rows together.
    """
    values = review.synthetic[name].frame[column]
    if values.isna().all():
        return None
    return person_ids(values)


def check_person_column(review: Review, column: str) -> None:
    """Raise unless ``column`` can group ``review``'s rows by person.

    Checks: a table review; the column exists and is an ``identifier`` (not analysed; see
    :func:`with_person`); no missing id in real or holdout; ids are text or whole numbers; no
    person on both the training and the holdout side; a candidate's column is either complete
    or empty (a generator that did not keep ids).

    Raises
    ------
    ConfigError
        The option does not fit the review (kind, unknown column, analysed column).
    DataError
        The ids do not allow a person-level review.
    """
    if review.kind != "table":
        raise ConfigError(
            "option person must be empty for glucose traces (the glucose section already "
            f"judges each subject); got {column!r} instead"
        )
    if not isinstance(column, str) or column not in review.schema.columns:
        raise ConfigError(
            f"option person must be one of the columns {review.schema.columns}; got "
            f"{column!r} instead"
        )
    kind = review.schema.kinds[column]
    if kind != "identifier":
        raise ConfigError(
            f"option person: column {column!r} must be an identifier column (not a feature); "
            f"got kind {kind!r} instead (synthreview.io.persons.with_person sets it)"
        )
    _check_ids(review.real.frame[column], "real", column)
    if review.holdout is not None:
        _check_ids(review.holdout.frame[column], "holdout", column)
        both = np.intersect1d(
            person_ids(review.real.frame[column]), person_ids(review.holdout.frame[column])
        )
        if len(both):
            shown = ", ".join(repr(str(p)) for p in both[:_SHOWN])
            raise DataError(
                f"option person: each person must be in the training table or the holdout, not "
                f"both (membership is judged by person); got {len(both)} person(s) in both, "
                f"e.g. {shown}"
            )
    for name, table in review.synthetic.items():
        values = table.frame[column]
        if values.isna().all():
            continue
        if values.isna().any():
            raise DataError(
                f"option person: column {column!r} of synthetic {name!r} must be complete "
                "(the generator kept person ids) or empty (it did not); got "
                f"{int(values.isna().sum())} missing of {len(values)} instead"
            )


def person_key_columns(frame: pd.DataFrame, columns: list[str] | None = None) -> list[str]:
    """Columns of ``frame`` that look like a person key: values repeat, other columns follow.

    A column qualifies when it has at least 10 distinct values, 2 or more rows per value on
    average, 90 % of its rows in values that repeat, no value with more than 10 times the
    median rows per value (a zero that most rows hold is not a person), and some *other*
    column that is constant within 95 % of its repeated values, on which two random rows of
    the table differ at least 20 % of the time (a column constant almost everywhere does not
    count) and which has fewer distinct values than the candidate (a one-to-one recoding,
    ``exper`` and ``expersq``, is not a person and its attributes). Fractional
    numbers never qualify (a measurement, not an id). Person-year panels (one row per person
    and year, a person's sex or schooling constant over the years) are what this finds.

    Parameters
    ----------
    frame : DataFrame
    columns : list of str, optional
        Columns to consider as keys (default: every column).

    Returns
    -------
    list of str
        In column order.
    """
    n = len(frame)
    found: list[str] = []
    if n < _MIN_PEOPLE * _MIN_ROWS_PER_PERSON:
        return found
    chance = {}
    for other in frame.columns:
        shares = frame[other].value_counts(normalize=True, dropna=False).to_numpy()
        chance[other] = float(np.sum(shares**2))
    for column in columns if columns is not None else list(frame.columns):
        values = frame[column]
        if values.isna().any():
            continue
        if pd.api.types.is_float_dtype(values) and not (values % 1 == 0).all():
            continue
        counts = values.value_counts()
        if len(counts) < _MIN_PEOPLE or n / len(counts) < _MIN_ROWS_PER_PERSON:
            continue
        if counts[counts > 1].sum() < _MIN_REPEATED_ROWS * n:
            continue
        if counts.iloc[0] > _MAX_LARGEST_PERSON * counts.median():
            continue  # one value holds most rows: a measurement with a common value, not ids
        repeated = frame[values.isin(counts.index[counts > 1])]
        grouped = repeated.groupby(values[repeated.index], sort=False, dropna=False)
        for other in frame.columns:
            if other == column or chance[other] > _MAX_CHANCE_CONSTANT:
                continue
            if frame[other].nunique(dropna=False) >= len(counts):
                continue
            constant = grouped[other].nunique(dropna=False) <= 1
            if constant.mean() >= _MIN_CONSTANT_SHARE:
                found.append(column)
                break
    return found


def person_key_notices(review: Review, *, person: str | None = None) -> tuple[Notice, ...]:
    """A warning for every column of real that looks like a person key, unless it is ``person``.

    Without ``--person`` every rule treats rows as independent people: the membership attacks
    then see a person's other rows on both sides and may fail a generator of fresh people, and
    ML efficacy and the discriminator judge rows (issue 34). The notice names the column and
    suggests ``--person`` (:func:`person_key_columns` says what "looks like" means).
    """
    if review.kind != "table" or review.real is None:
        return ()
    keys = [c for c in person_key_columns(review.real.frame) if c != person]
    return tuple(
        Notice(
            "warning",
            review.real.name,
            f"column {c!r} looks like a person key (its values repeat and other columns are "
            "constant within them): rows of one person are judged as if they were independent "
            f"people. If each value is one person, review with --person {c} (the Data page's "
            "person control), so that every rule and split treats the person as the unit.",
            column=c,
        )
        for c in keys
    )


def with_person_key_notices(review: Review, *, person: str | None = None) -> Review:
    """``review`` with :func:`person_key_notices` added to its notices."""
    found = person_key_notices(review, person=person)
    return replace(review, notices=(*review.notices, *found)) if found else review


def with_person(review: Review, column: str) -> Review:
    """``review`` re-aligned with ``column`` as an identifier, checked for a person review.

    The column is then read by no encoder, attack or metric; only the person-level review and
    the audit group rows by it.

    Raises
    ------
    ConfigError, DataError
        As :func:`check_person_column`.
    """
    if review.kind != "table" or column not in review.schema.columns:
        check_person_column(review, column)  # raises the option's message
    _check_ids(review.real.frame[column], "real", column)
    if review.holdout is not None:
        _check_ids(review.holdout.frame[column], "holdout", column)
    if review.schema.kinds[column] != "identifier":
        review = align(
            review.real,
            review.synthetic,
            holdout=review.holdout,
            schema=review.schema.with_kinds({column: "identifier"}),
        )
    check_person_column(review, column)
    return review
