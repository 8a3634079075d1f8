"""Loading tables and aligning real, holdout and synthetic tables for a review.

``read_table`` turns one CSV, TSV or Parquet source (a path or an upload) into a
:class:`~synthreview.schema.LoadedTable`, or raises :class:`~synthreview.errors.DataError` before
anything is returned: nothing is ever half-loaded. ``infer_schema`` guesses column kinds on the
real table and ``align`` checks that every table has the real table's columns, casts them to the
real kinds and collects the findings that do not stop a review (unseen categories, empty
columns, missing-value rates) as :class:`~synthreview.schema.Notice` objects.

Typing rules (shared by every table so they compare like with like):

* values are stripped of surrounding whitespace; ``raw`` keeps them exactly as written;
* a stripped value in :data:`NA_MARKERS` (including the empty string) is missing;
* a column whose non-missing values all parse as numbers becomes ``float64`` (integers too:
  one numeric dtype keeps numpy code simple and float64 holds integers exactly up to 2**53);
* every other column stays text (pandas ``str`` dtype, missing as ``NaN``).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import os
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from synthreview.errors import DataError
from synthreview.schema import KINDS, LoadedTable, Notice, Review, Schema

#: stripped cell values read as missing (case-sensitive, as written by R, pandas, Excel, UCI)
NA_MARKERS: frozenset[str] = frozenset(
    {"", *"NA N/A n/a #N/A NaN nan NAN NaT <NA> null NULL Null nil None ? - .".split()}
)
_NA_ARROW = pa.array(sorted(NA_MARKERS))
MAX_BYTES = 2 * 1024**3
#: share of values that must parse as dates for a text column to be a datetime column
DATETIME_SHARE = 0.95
#: rows needed before an all-unique text column is taken for an identifier
IDENTIFIER_MIN_ROWS = 20
_ID_NAME = re.compile(r"^(id|uuid|guid|key|index|row_?id|record_?id)$|(^|_)id$|^id_", re.I)
_DATE_LIKE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|^\d{4}-?\d{2}-?\d{2}T|^\d{1,2}:\d{2}")
_ROLES = ("real", "holdout", "synthetic")
_PANDAS_INDEX = re.compile(r"__index_level_\d+__")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+([eE][+-]?\d+)?|[+-]?\d+")


def read_table(
    source: str | os.PathLike[str] | IO[bytes] | bytes,
    *,
    name: str | None = None,
    role: str = "real",
    max_bytes: int = MAX_BYTES,
) -> LoadedTable:
    """Read a CSV, TSV or Parquet table from a path or a file-like object.

    Parameters
    ----------
    source : str, path, binary file-like (e.g. a Streamlit ``UploadedFile``) or bytes
        Parquet is recognised by its ``PAR1`` magic bytes, gzip-compressed text by its magic
        bytes; anything else is read as delimited text (delimiter sniffed among
        ``, ; TAB |``).
    name : str, optional
        Display name; defaults to the file stem (``"table"`` when the source has no name).
    role : {"real", "holdout", "synthetic"}
    max_bytes : int, default 2 GiB
        Sources larger than this are refused before they are read.

    Returns
    -------
    LoadedTable
        ``frame`` holds typed values (see the module docstring), ``raw`` the cells as written
        (for Parquet: the columns as stored), ``sha256`` the digest of the source bytes.

    Raises
    ------
    DataError
        Empty, header-only, single-row, too large, binary, ragged or unparseable input, and
        duplicated column names. The message names the table.
    """
    if role not in _ROLES:
        raise ValueError(f"role must be one of {list(_ROLES)}; got {role!r} instead")
    label = name or _stem(source)
    what = f"{role} table {label!r}"
    data = _read_bytes(source, what, max_bytes)
    digest = hashlib.sha256(data).hexdigest()
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, what, max_bytes)
    suffix = Path(str(getattr(source, "name", source) if not isinstance(source, bytes) else ""))
    suffix_text = "".join(suffix.suffixes[-2:]).lower() if suffix.suffixes else ""
    if data[:4] == b"PAR1":
        raw, frame, notices = _read_parquet(data, what, label)
        source_format, delimiter, encoding = "parquet", None, None
    elif suffix_text.endswith((".parquet", ".pq")):
        raise DataError(
            f"{what} is named like a Parquet file but does not start "
            "with the Parquet magic bytes 'PAR1'; the file is damaged or not Parquet"
        )
    else:
        if not data[:4096].strip() and not data.strip():  # full strip only when the head is blank
            raise DataError(f"{what} is empty; expected a header row and data rows")
        utf8, head, encoding, notices = _decode_text(data, what, label)
        del data  # for BOM or latin-1 input only the UTF-8 copy is needed from here
        prefer_tab = ".tsv" in suffix_text or ".tab" in suffix_text
        delimiter = _sniff_delimiter(head, prefer_tab=prefer_tab)
        header, raw = _parse_delimited(utf8, head, delimiter, what)
        notices += _check_header(header, what, label)
        raw.columns = header
        frame, typing_notices = _typed_frame(raw, decimal_comma=delimiter == ";", label=label)
        notices += typing_notices
        source_format = "tsv" if delimiter == "\t" else "csv"
    _check_rows(frame, what)
    return LoadedTable(
        name=label,
        role=role,
        frame=frame,
        raw=raw,
        sha256=digest,
        source_format=source_format,
        delimiter=delimiter,
        encoding=encoding,
        notices=tuple(notices),
    )


def load_table(
    source: str | os.PathLike[str] | IO[bytes] | bytes, *, name: str | None = None
) -> pd.DataFrame:
    """Read a table and return its typed frame; see :func:`read_table`."""
    return read_table(source, name=name).frame


def infer_schema(frame: pd.DataFrame) -> Schema:
    """Guess the kind of every column of the real table.

    Rules, applied in this order:

    * ``constant``: at most one distinct non-missing value (all-missing included);
    * ``identifier``: name like ``id``/``uuid``/``*_id`` with all non-missing values distinct,
      or a text column of at least 20 rows whose values are all distinct, or an integer column
      of at least 20 rows that is a permutation of a contiguous range (a row number);
    * ``datetime``: datetime dtype, or a text column where at least 95 % of non-missing values
      look like and parse as dates;
    * ``categorical``: other text columns, and numeric columns with exactly two values (flags
      and binary targets are compared as categories);
    * ``numeric``: the remaining numeric columns.

    The reviewer can override any kind with ``Schema.with_kinds``.
    """
    kinds: dict[str, str] = {}
    for col in frame.columns:
        kinds[str(col)] = _infer_kind(str(col), frame[col])
    return Schema(kinds)


def align(
    real: LoadedTable | pd.DataFrame,
    synthetic: LoadedTable
    | pd.DataFrame
    | Sequence[LoadedTable | pd.DataFrame]
    | Mapping[str, LoadedTable | pd.DataFrame],
    *,
    holdout: LoadedTable | pd.DataFrame | None = None,
    schema: Schema | None = None,
) -> Review:
    """Check and cast real, holdout and synthetic tables into one review.

    Parameters
    ----------
    real : LoadedTable or DataFrame
        The training data the generators saw; it fixes the columns, their order and kinds.
    synthetic : table, sequence of tables or mapping name -> table
        Candidates; names default to the table names (file stems), ``synthetic_<i>`` for bare
        DataFrames, and repeated names get a ``-2``, ``-3`` suffix.
    holdout : LoadedTable or DataFrame, optional
        Real rows the generators did not see.
    schema : Schema, optional
        Column kinds; inferred on ``real`` when not given. Its columns must be real's columns.

    Returns
    -------
    Review
        Every table with real's column order and kinds, and notices: each table's loading
        notices, then categories never seen in real, all-missing columns and missing rates.

    Raises
    ------
    DataError
        A table lacks some of real's columns or has extra ones, or a numeric column holds
        text that does not parse as numbers.
    """
    real_t = _as_table(real, "real", "real")
    holdout_t = None if holdout is None else _as_table(holdout, "holdout", "holdout")
    candidates = _name_candidates(synthetic)
    if not candidates:
        raise DataError("synthetic must hold at least one table; got none")
    columns = list(real_t.frame.columns)
    if schema is None:
        schema = infer_schema(real_t.frame)
    elif list(schema.columns) != columns:
        raise DataError(
            f"schema columns {list(schema.columns)} must equal the columns of real "
            f"{columns}, in the same order"
        )
    label = {"real": "real"}
    tables: dict[str, LoadedTable] = {"real": real_t}
    if holdout_t is not None:
        tables["holdout"] = holdout_t
        label["holdout"] = "holdout"
    for cand, table in candidates.items():
        tables[cand] = table
        label[cand] = f"synthetic {cand!r}"
    for key, table in tables.items():
        _check_columns(table.frame, columns, label[key])
    cast = {k: _cast_table(t, schema, label[k]) for k, t in tables.items()}
    notices: list[Notice] = [n for t in cast.values() for n in t.notices]
    notices += _alignment_notices(cast, schema, label)
    return Review(
        real=cast["real"],
        synthetic={c: cast[c] for c in candidates},
        holdout=cast.get("holdout"),
        schema=schema,
        notices=tuple(notices),
    )


def missing_rates(review: Review) -> pd.DataFrame:
    """Share of missing values per column (rows) and table (columns: real, holdout, candidates)."""
    tables = {"real": review.real}
    if review.holdout is not None:
        tables["holdout"] = review.holdout
    tables.update(review.synthetic)
    return pd.DataFrame(
        {k: t.frame.isna().mean() for k, t in tables.items()}, index=review.schema.columns
    )


def table_from_frame(frame: pd.DataFrame, *, name: str, role: str = "real") -> LoadedTable:
    """Wrap an in-memory DataFrame as a LoadedTable (``sha256`` of its content hash)."""
    return _as_table(frame, name, role)


# ---------------------------------------------------------------------------------------------
# reading


def _stem(source: Any) -> str:
    raw_name = (
        getattr(source, "name", None) if not isinstance(source, (str, os.PathLike)) else source
    )
    if not raw_name or isinstance(source, bytes):
        return "table"
    stem = Path(str(raw_name)).name
    for ext in (".gz", ".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
    return stem or "table"


def _read_bytes(source: Any, what: str, max_bytes: int) -> bytes:
    if isinstance(source, bytes):
        size = len(source)
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"{what}: no file at {str(path)!r}")
        size = path.stat().st_size
    elif hasattr(source, "getbuffer"):
        size = source.getbuffer().nbytes
    elif hasattr(source, "seek") and hasattr(source, "tell"):
        start = source.tell()
        size = source.seek(0, io.SEEK_END) - start
        source.seek(start)
    else:
        raise DataError(
            f"{what}: expected a path, bytes or a binary file-like object; "
            f"got {type(source).__name__}"
        )
    if size > max_bytes:
        raise DataError(f"{what} is {size:,} bytes; the limit is {max_bytes:,} bytes")
    if isinstance(source, bytes):
        return source
    if isinstance(source, (str, os.PathLike)):
        return Path(source).read_bytes()
    if hasattr(source, "getvalue"):
        data = source.getvalue()
    else:
        source.seek(0)
        data = source.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    return bytes(data)


def _gunzip(data: bytes, what: str, max_bytes: int) -> bytes:
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            while chunk := fh.read(1 << 20):
                out.write(chunk)
                if out.tell() > max_bytes:
                    raise DataError(
                        f"{what} decompresses to more than {max_bytes:,} bytes, the limit"
                    )
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{what} looks gzip-compressed but cannot be decompressed: {exc}") from exc
    return out.getvalue()


def _read_parquet(
    data: bytes, what: str, label: str
) -> tuple[pd.DataFrame, pd.DataFrame, list[Notice]]:
    import pyarrow.parquet as pq

    try:
        arrow = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises several unrelated types for damaged files
        raise DataError(f"{what} cannot be read as Parquet: {exc}") from exc
    # pandas' stored index is not data: a RangeIndex is metadata only, other indexes are
    # columns named "__index_level_<i>__"
    arrow = arrow.drop_columns([c for c in arrow.column_names if _PANDAS_INDEX.fullmatch(c)])
    names = [str(c) for c in arrow.column_names]
    notices = _check_header(names, what, label)
    raw = arrow.to_pandas(ignore_metadata=True)
    raw.columns = names
    typed: dict[str, pd.Series] = {}
    for col in names:
        s = raw[col]
        if pd.api.types.is_bool_dtype(s):
            typed[col] = s.astype("str").where(s.notna())
        elif pd.api.types.is_numeric_dtype(s):
            typed[col] = s.astype("float64")
        elif pd.api.types.is_datetime64_any_dtype(s):
            typed[col] = s
        else:
            typed[col] = _type_text_column(s.astype("str").where(s.notna(), ""))
    return raw, pd.DataFrame(typed, index=raw.index), notices


_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_CHARS = 64 * 1024
_HEAD_CHARS = 1024 * 1024
_CHUNK_BYTES = 16 * 1024 * 1024
_NEWLINE = b"\n"


def _decode_text(data: bytes, what: str, label: str) -> tuple[bytes, str, str, list[Notice]]:
    """Return the content as UTF-8 bytes (no BOM), a decoded head, the encoding and notices."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{what} starts with a UTF-16 mark but does not decode as UTF-16: {exc}"
            ) from exc
        return text.encode("utf-8"), text[:_HEAD_CHARS], "utf-16", []
    head = data[:_HEAD_CHARS]
    # text files never hold NUL bytes; a few other control bytes mean binary content too
    controls = sum(head.count(bytes([b])) for b in (*range(0, 9), 11, 12, *range(14, 32)))
    if b"\x00" in head or controls > 0.01 * len(head):
        raise DataError(f"{what} holds binary (non-text) content; expected CSV, TSV or Parquet")
    body = data[3:] if data[:3] == b"\xef\xbb\xbf" else data
    bad = _first_invalid_utf8(body)
    if bad is None:
        return body, body[:_HEAD_CHARS].decode("utf-8", errors="ignore"), "utf-8", []
    text = body.decode("latin-1")
    notice = Notice(
        "warning",
        label,
        f"{label!r} is not valid UTF-8 (byte {bad}); it was read as latin-1, check accented "
        "characters",
    )
    return text.encode("utf-8"), text[:_HEAD_CHARS], "latin-1", [notice]


def _first_invalid_utf8(data: bytes) -> int | None:
    # chunked so that a 2 GB upload is never held twice (bytes plus a str copy)
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for start in range(0, len(data), _CHUNK_BYTES):
        try:
            decoder.decode(
                view[start : start + _CHUNK_BYTES], final=start + _CHUNK_BYTES >= len(data)
            )
        except UnicodeDecodeError as exc:
            return start + exc.start
    return None


def _field_counts(lines: list[str], delimiter: str) -> list[int]:
    return [len(row) for row in csv.reader(lines, delimiter=delimiter) if row]


def _sniff_delimiter(head: str, *, prefer_tab: bool) -> str:
    sample = head[:_SNIFF_CHARS]
    if len(sample) == _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    lines = sample.splitlines()[:200]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters="".join(_DELIMITERS)).delimiter
    except csv.Error:
        sniffed = None

    def score(delimiter: str) -> tuple[float, int, bool, bool]:
        counts = _field_counts(lines, delimiter)
        if not counts or counts[0] < 2:
            return 0.0, 0, False, False
        consistent = sum(c == counts[0] for c in counts) / len(counts)
        preferred = prefer_tab and delimiter == "\t"
        return consistent, counts[0], preferred, delimiter == sniffed

    # csv.Sniffer alone picks a delimiter that merely occurs in the text (a "|" inside every
    # name); the header's field count must hold on every sampled line, then more fields win
    best = max(_DELIMITERS, key=score)
    return best if score(best)[1] >= 2 else ","


def _parse_delimited(
    utf8: bytes, head: str, delimiter: str, what: str
) -> tuple[list[str], pd.DataFrame]:
    import pyarrow.csv as pacsv

    first = next(csv.reader(io.StringIO(head), delimiter=delimiter), None)
    if not first or not any(f.strip() for f in first):
        raise DataError(f"{what} has no header row; expected column names on line 1")
    header = [f.strip() for f in first]
    bad_rows: list[Any] = []

    def on_bad_row(row: Any) -> str:
        bad_rows.append(row)
        return "error"

    names = [f"c{i}" for i in range(len(header))]
    try:
        arrow = pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(utf8)),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter, newlines_in_values=True, invalid_row_handler=on_bad_row
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, UnicodeError) as exc:
        if bad_rows:
            row = bad_rows[0]
            pos = utf8.find(row.text.encode("utf-8"))
            line = f"line {utf8.count(_NEWLINE, 0, pos) + 1}" if pos >= 0 else "a line"
            raise DataError(
                f"{what} has ragged rows: {line} has {row.actual_columns} fields, the "
                f"header has {row.expected_columns} (delimiter {delimiter!r}): {row.text[:80]!r}"
            ) from exc
        raise DataError(f"{what} cannot be parsed as delimited text: {exc}") from exc
    raw = arrow.to_pandas()
    raw.columns = header
    return header, raw


def _check_header(header: list[str], what: str, label: str) -> list[Notice]:
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


def _check_rows(frame: pd.DataFrame, what: str) -> None:
    if frame.shape[1] == 0:
        raise DataError(f"{what} has no columns")
    if len(frame) == 0:
        raise DataError(f"{what} has a header but no data rows; expected at least 2 rows")
    if len(frame) == 1:
        raise DataError(f"{what} has only 1 data row; at least 2 rows are needed to review a table")


def _typed_frame(
    raw: pd.DataFrame, *, decimal_comma: bool, label: str
) -> tuple[pd.DataFrame, list[Notice]]:
    typed = {c: _type_text_column(raw[c]) for c in raw.columns}
    notices = []
    if decimal_comma:
        # semicolon files are usually written where "1,5" means 1.5 (Excel in most of Europe)
        for col, s in typed.items():
            present = s.dropna()
            if s.dtype == "str" and len(present) and present.str.fullmatch(_DECIMAL_COMMA).all():
                typed[col] = pd.to_numeric(s.str.replace(",", ".", regex=False)).astype("float64")
                notices.append(
                    Notice(
                        "info", label, f"column {col!r} read with decimal commas (1,5 = 1.5)", col
                    )
                )
    return pd.DataFrame(typed, index=raw.index), notices


def _type_text_column(values: pd.Series) -> pd.Series:
    masked = _strip_na(values)
    if masked.null_count < len(masked):
        try:
            numbers = pc.cast(masked, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # some value is not a number: a text column
        else:
            return pd.Series(numbers.to_numpy(zero_copy_only=False), index=values.index)
    return _text_series(masked, values.index)


def _text_series(array: pa.Array, index: pd.Index) -> pd.Series:
    out = array.to_pandas().astype("str")
    out.index = index  # set, not passed to the constructor, which would realign by label
    return out


def _strip_na(values: pd.Series) -> pa.Array:
    """Stripped text with NA markers as nulls, as an Arrow array (vectorised in C++)."""
    text = values if values.dtype == "str" else values.astype("str").where(values.notna())
    stripped = pc.utf8_trim_whitespace(pa.array(text, from_pandas=True))
    return pc.if_else(pc.is_in(stripped, value_set=_NA_ARROW), None, stripped)


# ---------------------------------------------------------------------------------------------
# schema


def _infer_kind(name: str, s: pd.Series) -> str:
    present = s.dropna()
    n_unique = present.nunique()
    if n_unique <= 1:
        return "constant"
    all_distinct = n_unique == len(present)
    if _ID_NAME.search(name) and all_distinct:
        return "identifier"
    if pd.api.types.is_datetime64_any_dtype(s):
        return "datetime"
    if pd.api.types.is_numeric_dtype(s):
        values = present.to_numpy(dtype="float64")
        integral = bool(np.all(values == np.round(values)))
        if (
            integral
            and all_distinct
            and len(s) >= IDENTIFIER_MIN_ROWS
            and values.max() - values.min() + 1 == len(values)
        ):
            return "identifier"
        return "categorical" if n_unique == 2 else "numeric"
    if _looks_datetime(present):
        return "datetime"
    if all_distinct and len(s) >= IDENTIFIER_MIN_ROWS:
        return "identifier"
    return "categorical"


def _looks_datetime(present: pd.Series) -> bool:
    text = present.astype("str")
    sample = text.iloc[:: max(1, len(text) // 2000)]
    if sample.str.match(_DATE_LIKE).mean() < DATETIME_SHARE:
        return False
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return bool(parsed.notna().mean() >= DATETIME_SHARE)


# ---------------------------------------------------------------------------------------------
# alignment


def _as_table(obj: LoadedTable | pd.DataFrame, name: str, role: str) -> LoadedTable:
    if isinstance(obj, LoadedTable):
        return obj if obj.role == role else replace(obj, role=role)
    if not isinstance(obj, pd.DataFrame):
        raise DataError(
            f"{role} table {name!r} must be a LoadedTable or a pandas DataFrame; got "
            f"{type(obj).__name__}"
        )
    columns = [str(c) for c in obj.columns]
    what = f"{role} table {name!r}"
    _check_header(list(columns), what, name)
    frame = obj.copy()
    frame.columns = columns
    frame = frame.reset_index(drop=True)
    _check_rows(frame, what)
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    digest = hashlib.sha256("\x1f".join(columns).encode() + hashed.tobytes()).hexdigest()
    raw = frame.astype("str").where(frame.notna(), "")
    return LoadedTable(name=name, role=role, frame=frame, raw=raw, sha256=digest)


def _name_candidates(synthetic: Any) -> dict[str, LoadedTable]:
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
        table = _as_table(obj, cand, "synthetic")
        out[cand] = table if table.name == cand else replace(table, name=cand)
    return out


def _check_columns(frame: pd.DataFrame, columns: list[str], label: str) -> None:
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


def _cast_table(table: LoadedTable, schema: Schema, label: str) -> LoadedTable:
    frame = table.frame[schema.columns]
    raw = table.raw[schema.columns] if list(table.raw.columns) != schema.columns else table.raw
    cast = {c: _cast_column(frame[c], kind, label, c) for c, kind in schema.kinds.items()}
    return replace(table, frame=pd.DataFrame(cast, index=frame.index), raw=raw)


def _cast_column(s: pd.Series, kind: str, label: str, col: str) -> pd.Series:
    if kind == "numeric":
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            numbers = _type_text_column(s)
            if numbers.dtype == "float64":
                return numbers
            text = _text_series(_strip_na(s), s.index)
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
        return s.astype("str").where(s.notna())
    return s


def _number_text(s: pd.Series) -> pd.Series:
    # real "1" and synthetic "1.0" must be the same category: whole numbers lose their ".0"
    values = s.to_numpy(dtype="float64", na_value=np.nan)
    whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < 2**53)
    text = values.astype(str).astype(object)
    text[whole] = values[whole].astype(np.int64).astype(str)
    return pd.Series(text, index=s.index, dtype="str").where(s.notna())


def _alignment_notices(
    tables: dict[str, LoadedTable], schema: Schema, label: dict[str, str]
) -> list[Notice]:
    notices: list[Notice] = []
    real = tables["real"].frame
    for col in schema.categorical:
        seen = real[col].dropna().unique()
        for key, table in tables.items():
            if key == "real":
                continue
            values = table.frame[col].dropna()
            unseen = values[~values.isin(seen)]
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
    for key, table in tables.items():
        for col in schema.columns:
            if table.frame[col].isna().all():
                notices.append(
                    Notice("warning", key, f"{label[key]} column {col!r} is all missing", col)
                )
    rates = pd.DataFrame({k: t.frame.isna().mean() for k, t in tables.items()})
    for col, row in rates.iterrows():
        if (row > 0).any():
            parts = ", ".join(f"{label[k]} {v:.1%}" for k, v in row.items())
            notices.append(
                Notice("info", "all", f"column {col!r} has missing values: {parts}", str(col))
            )
    return notices


__all__ = [
    "KINDS",
    "NA_MARKERS",
    "align",
    "infer_schema",
    "load_table",
    "missing_rates",
    "read_table",
    "table_from_frame",
]
