"""Table checks, column-kind inference and alignment helpers behind :mod:`synthreview.io.tables`.

:mod:`synthreview.io.tables` holds the public functions (``read_table``, ``infer_schema``,
``align``); this module holds the rules they apply to every table: header and row checks, the
kind of one column, wrapping DataFrames as tables, casting to the real table's kinds and the
notices that alignment reports.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.io.schema import DerivedCells, LoadedTable, Notice, Schema, WrittenCells
from synthreview.io.textfile import strip_na, text_series, type_text_column, utc_offsets

#: share of values that must parse as dates for a text column to be a datetime column
DATETIME_SHARE = 0.95
#: rows needed before an all-unique text column is taken for an identifier
IDENTIFIER_MIN_ROWS = 20
#: most columns a table may have: the privacy and utility sections scan column combinations
#: (ℓ-diversity ran past 300 s on 140 rows x 10,000 columns), so wider tables are refused at load
MAX_COLUMNS = 999
_ID_NAME = re.compile(r"^(id|uuid|guid|key|index|row_?id|record_?id)$|(^|_)id$|^id_", re.I)
_NONE_OFFSET = " ('none': some values are written without an offset)"
_DATE_LIKE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|^\d{4}-?\d{2}-?\d{2}T|^\d{1,2}:\d{2}")

# ---------------------------------------------------------------------------------------------
# checks


def check_header(header: list[str], what: str, label: str) -> list[Notice]:
    """Refuse duplicated names; rename empty names in place to ``unnamed_<i>`` with a notice.

    A name holding a line break (a quoted header cell, valid CSV) is kept as written, with a
    notice: the other tables are matched to it by name.
    """
    seen: dict[str, int] = {}
    for col in header:
        seen[col] = seen.get(col, 0) + 1
    dupes = sorted(c for c, n in seen.items() if n > 1)
    if dupes:
        raise DataError(
            f"{what} has duplicated column names {dupes}; expected every column name once"
        )
    notices = []
    for i, col in enumerate(header):
        if "\n" in col or "\r" in col:  # valid (a quoted name, RFC 4180) but easy to miss
            notices.append(
                Notice(
                    "info",
                    label,
                    f"column {i + 1} has a line break in its name, {col!r}; the name is kept as "
                    "written, so the other tables must name it the same way",
                    col,
                )
            )
        if col == "":
            header[i] = f"unnamed_{i + 1}"
            notices.append(
                Notice(
                    "warning",
                    label,
                    f"column {i + 1} has no name; it is called {header[i]!r}",
                    header[i],
                )
            )
    return notices


def check_width(n_columns: int, what: str, max_columns: int | None = MAX_COLUMNS) -> None:
    """Refuse more than ``max_columns`` columns (None: no limit), before the rows are parsed."""
    if max_columns is not None and n_columns > max_columns:
        raise DataError(
            f"{what} has {n_columns:,} columns; at most {max_columns:,} are supported "
            "(select the columns to review, or transpose a wide file)"
        )


def check_finite(
    frame: pd.DataFrame, what: str, raw: pd.DataFrame | WrittenCells | None = None
) -> None:
    """Refuse infinite numbers (``inf``, ``-Infinity``, ``1e400``), naming column and row.

    An infinite value is an export or overflow error, never a measurement; it would turn every
    mean, distance and embedding of its column into inf or NaN. ``raw``, when given, supplies
    the cell as written for the message.
    """
    cells = WrittenCells.of_frame(raw) if isinstance(raw, pd.DataFrame) else raw
    for col in frame.columns:
        s = frame[col]
        if not pd.api.types.is_float_dtype(s):
            continue
        infinite = np.isinf(s.to_numpy(dtype="float64", na_value=np.nan))
        if infinite.any():
            first = int(np.argmax(infinite))
            cell = (
                cells.cell(col, first)
                if cells is not None and col in cells.columns
                else s.iloc[first]
            )
            raise DataError(
                f"{what} column {col!r} holds {int(infinite.sum())} infinite value(s), the "
                f"first in data row {first + 1} ({str(cell).strip()!r}); expected finite numbers "
                "(leave missing values empty)"
            )


def check_rows(frame: pd.DataFrame, what: str) -> None:
    """Refuse a table without columns or with fewer than 2 rows."""
    if frame.shape[1] == 0:
        raise DataError(f"{what} has no columns")
    if len(frame) == 0:
        raise DataError(f"{what} has a header but no data rows; expected at least 2 rows")
    if len(frame) == 1:
        raise DataError(f"{what} has only 1 data row; at least 2 rows are needed to review a table")


# ---------------------------------------------------------------------------------------------
# schema


def infer_kind(name: str, s: pd.Series) -> str:
    """Kind of one column; the rules are listed in :func:`synthreview.io.tables.infer_schema`."""
    # no copy of the column's present values: counting them is enough for most rules (a
    # dropna() copy of a text column cost about 30 bytes a row at load, measured on 100 MB)
    n_unique = s.nunique()
    if n_unique <= 1:
        return "constant"
    n_present = int(s.count())
    all_distinct = n_unique == n_present
    if _ID_NAME.search(name) and all_distinct:
        return "identifier"
    if pd.api.types.is_datetime64_any_dtype(s):
        return "datetime"
    if pd.api.types.is_numeric_dtype(s):
        if all_distinct and len(s) >= IDENTIFIER_MIN_ROWS:
            values = s.dropna().to_numpy(dtype="float64")
            integral = bool(np.all(values == np.round(values)))
            if integral and values.max() - values.min() + 1 == len(values):
                return "identifier"
        return "categorical" if n_unique == 2 else "numeric"
    if _looks_datetime(s, n_present):
        return "datetime"
    if all_distinct and len(s) >= IDENTIFIER_MIN_ROWS:
        return "identifier"
    return "categorical"


def _looks_datetime(s: pd.Series, n_present: int) -> bool:
    sample = _present_sample(s, max(1, n_present // 2000)).astype("str")
    if sample.str.match(_DATE_LIKE).mean() < DATETIME_SHARE:
        return False
    # utc=True: values with different UTC offsets are one instant each (pandas refuses to
    # parse mixed offsets otherwise); alignment_notices names such a column
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed", utc=True)
    return bool(parsed.notna().mean() >= DATETIME_SHARE)


def _present_sample(s: pd.Series, k: int) -> pd.Series:
    """The 1st, (k+1)-th, (2k+1)-th ... non-missing values of ``s``.

    Taken a million rows at a time: the positions of every present value of a long column cost
    8 bytes a row, and taking from a text column of many Arrow chunks joins the chunks first
    (a full copy of the column), so each slice is joined on its own.
    """
    parts, seen, step = [], 0, 1 << 20
    for start in range(0, len(s), step):
        part = s.iloc[start : start + step]
        present = np.flatnonzero(part.notna().to_numpy())
        parts.append(part.iloc[present[(-seen) % k :: k]])
        seen += len(present)
    return pd.concat(parts) if len(parts) > 1 else (parts[0] if parts else s.iloc[:0])


# ---------------------------------------------------------------------------------------------
# alignment


def as_table(obj: LoadedTable | pd.DataFrame, name: str, role: str) -> LoadedTable:
    """A LoadedTable with ``role``; DataFrames are checked and hashed by content."""
    if isinstance(obj, LoadedTable):
        return obj if obj.role == role else replace(obj, role=role)
    if not isinstance(obj, pd.DataFrame):
        raise DataError(
            f"{role} table {name!r} must be a LoadedTable or a pandas DataFrame; got "
            f"{type(obj).__name__}"
        )
    columns = [str(c) for c in obj.columns]
    what = f"{role} table {name!r}"
    check_width(len(columns), what)
    check_header(list(columns), what, name)
    frame = obj.copy()
    frame.columns = columns
    frame = frame.reset_index(drop=True)
    check_rows(frame, what)
    check_finite(frame, what)
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    digest = hashlib.sha256("\x1f".join(columns).encode() + hashed.tobytes()).hexdigest()
    # the cells of an in-memory table are its values as pandas writes them, derived on demand
    cells = {c: DerivedCells(frame[c], "astype") for c in columns}
    return LoadedTable(name, role, frame, WrittenCells(cells, frame.index), digest)


def name_candidates(synthetic: Any) -> dict[str, LoadedTable]:
    """Synthetic tables by unique candidate name (never ``real`` or ``holdout``)."""
    if isinstance(synthetic, Mapping):
        items = [(str(k), v) for k, v in synthetic.items()]
    elif isinstance(synthetic, (LoadedTable, pd.DataFrame)):
        items = [(None, synthetic)]
    else:
        items = [(None, v) for v in synthetic]
    out: dict[str, LoadedTable] = {}
    for i, (key, obj) in enumerate(items, start=1):
        base = key or (obj.name if isinstance(obj, LoadedTable) else f"synthetic_{i}")
        cand, n = base, 1
        while cand in out or cand in ("real", "holdout"):
            n += 1
            cand = f"{base}-{n}"
        table = as_table(obj, cand, "synthetic")
        out[cand] = table if table.name == cand else replace(table, name=cand)
    return out


def check_columns(frame: pd.DataFrame, columns: list[str], label: str) -> None:
    """Refuse a table whose columns are not exactly ``columns`` (in any order)."""
    have = list(frame.columns)
    missing = [c for c in columns if c not in have]
    extra = [c for c in have if c not in columns]
    if missing and extra:
        raise DataError(
            f"{label} is missing columns {missing} and has extra columns {extra}; "
            "expected the columns of real"
        )
    if missing:
        raise DataError(f"{label} is missing columns {missing}; expected the columns of real")
    if extra:
        raise DataError(f"{label} has extra columns {extra}; expected the columns of real")


def cast_table(table: LoadedTable, schema: Schema, label: str) -> LoadedTable:
    """The table with the schema's column order and every column cast to its kind."""
    frame = table.frame[schema.columns]
    written = table.written
    if written.names != schema.columns:
        written = written.select(schema.columns)
    cast = {c: _cast_column(frame[c], kind, label, c) for c, kind in schema.kinds.items()}
    for col, kind in schema.kinds.items():
        if kind == "identifier" and pd.api.types.is_numeric_dtype(cast[col]):
            # an identifier is a label: keep it as written (no "7.0" for "7") in every export
            cast[col] = text_series(strip_na(written.column(col)), frame.index)
    out = pd.DataFrame(cast, index=frame.index, copy=False)
    check_finite(out[schema.numeric], label)
    return replace(table, frame=out, written=written)


def _cast_column(s: pd.Series, kind: str, label: str, col: str) -> pd.Series:
    if kind == "numeric":
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            numbers = type_text_column(s)
            if numbers.dtype == "float64":
                return numbers
            text = text_series(strip_na(s), s.index)
            bad = text[text.notna() & pd.to_numeric(text, errors="coerce").isna()]
            if len(bad):
                examples = list(dict.fromkeys(bad.tolist()))[:5]
                raise DataError(
                    f"{label} column {col!r} must be numeric (its kind in the schema); found "
                    f"{len(bad)} values that are not numbers, e.g. {examples}"
                )
        return s.astype("float64")
    if kind == "categorical":
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            return _number_text(s)
        if s.dtype == "str":  # already text with NaN for missing: no copy of the column
            return s
        return s.astype("str").where(s.notna())
    return s


def number_text(values: np.ndarray) -> np.ndarray:
    """Numbers as a CSV holds them: whole numbers without ``.0``, others in shortest repr.

    Returns an object array of the same shape; NaN becomes ``None``. One rule for every place
    that turns numbers into text (category matching, demo files), so "1" and "1.0" never differ.
    """
    values = np.asarray(values, dtype="float64")
    whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2**53)
    text = values.astype(str).astype(object)
    text[whole] = values[whole].astype(np.int64).astype(str)
    text[np.isnan(values)] = None
    return text


def _number_text(s: pd.Series) -> pd.Series:
    # real "1" and synthetic "1.0" must be the same category: whole numbers lose their ".0"
    text = number_text(s.to_numpy(dtype="float64", na_value=np.nan))
    return pd.Series(text, index=s.index, dtype="str").where(s.notna())


def missing_shares(frame: pd.DataFrame) -> pd.Series:
    """Share of missing values per column, one column at a time (``frame.isna()`` would hold a
    boolean copy of the whole table)."""
    return pd.Series(
        {c: float(frame[c].isna().mean()) for c in frame.columns}, index=frame.columns, dtype=float
    )


def alignment_notices(
    tables: dict[str, LoadedTable], schema: Schema, label: dict[str, str]
) -> list[Notice]:
    """Unseen categories, all-missing columns, mixed UTC offsets and missing rates across the
    cast tables."""
    notices: list[Notice] = []
    for col, kind in schema.kinds.items():
        if kind != "datetime":
            continue
        for key, table in tables.items():
            offsets = utc_offsets(table.frame[col])
            if len(offsets) > 1:
                notices.append(
                    Notice(
                        "warning",
                        key,
                        f"{label[key]} column {col!r} mixes UTC offsets {offsets}"
                        f"{_NONE_OFFSET if 'none' in offsets else ''}; its date-times are read "
                        "as UTC instants and its cells kept as written (date-time columns are "
                        "carried, not scored)",
                        col,
                    )
                )
    real = tables["real"].frame
    for col in schema.categorical:
        seen = pd.Series(real[col].unique()).dropna()  # a dropna() copy of the column costs more
        for key, table in tables.items():
            if key == "real":
                continue
            values = table.frame[col]
            unseen = values[values.notna() & ~values.isin(seen)]  # no copy of the column
            if len(unseen):
                examples = list(dict.fromkeys(unseen.tolist()))[:5]
                notices.append(
                    Notice(
                        "warning",
                        key,
                        f"{label[key]} column {col!r} has {unseen.nunique()} categories never "
                        f"seen in real ({len(unseen)} rows), e.g. {examples}",
                        col,
                    )
                )
    rates = pd.DataFrame({k: missing_shares(t.frame) for k, t in tables.items()})
    for key in tables:
        for col in schema.columns:
            if rates.at[col, key] == 1.0:  # a mean of booleans is exactly 1 when all are True
                notices.append(
                    Notice("warning", key, f"{label[key]} column {col!r} is all missing", col)
                )
    for col, row in rates.iterrows():
        if (row > 0).any():
            parts = ", ".join(f"{label[k]} {v:.1%}" for k, v in row.items())
            notices.append(
                Notice("info", "all", f"column {col!r} has missing values: {parts}", str(col))
            )
    return notices
