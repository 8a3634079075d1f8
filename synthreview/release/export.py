"""Release files: curated CSV / Parquet, audit.csv, report.json, report.html and manifest.json.

The CLI (``--out DIR``) and the dashboard's download buttons both call these builders, so the
files a reviewer downloads and the files a pipeline writes are the same bytes. Putting a whole
release together (``review_release``, ``build_release``) lives in :mod:`synthreview.release.bundle`.

CSV cells that a spreadsheet would run as a formula (leading ``=``, ``+``, ``-``, ``@``, tab or
carriage return) in text columns get a leading single quote, as the OWASP "CSV Injection" page
recommends; numeric columns, cells that are plain numbers (``-3.5``) and missing-value markers
(``-``, see :data:`synthreview.io.textfile.NA_MARKERS`) are never changed, and
Parquet files are never escaped (they are typed, not parsed by spreadsheets as formulas).

``curated.csv`` and ``removed.csv`` given the candidate's input file (``sources=``, matched by
its sha256) hold every row as that file's own bytes: line ends (LF, CRLF or CR), quoting,
delimiter, encoding and a UTF-8 BOM are kept, a quoted cell with a line break inside stays one
row. Escaping and byte-exactness meet in one place: a row holding a cell that must be escaped is
re-written in the input's dialect (same delimiter, encoding and line end; only cells that need
quotes are quoted), so exactly those rows differ from the input, by the added quote, and
:data:`ESCAPE_STATEMENT` (in ``report.json`` and the manifest) says so. ``removed.csv`` puts its
row number and reasons before the input's bytes. A last input row without a line end gets the
file's line end when another row follows it. Without the input file (Parquet, a folder of
Parquet partitions, UTF-16, an in-memory table) the rows are written from their cells as
written (UTF-8, commas, LF).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import platform
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.io.digest import file_sha256
from synthreview.io.schema import Schema
from synthreview.io.textfile import NA_MARKERS
from synthreview.release.curation import CurationResult
from synthreview.results import to_jsonable
from synthreview.version import __version__

__all__ = [
    "ESCAPE_STATEMENT",
    "FORMULA_TRIGGERS",
    "VERSIONED",
    "InputRecords",
    "audit_csv_bytes",
    "curated_csv_bytes",
    "curated_parquet_bytes",
    "dumps",
    "escape_formulas",
    "input_records",
    "manifest",
    "removed_csv_bytes",
    "safe_name",
    "source_index",
    "versions",
]

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
#: distributions whose versions the manifest records (streamlit only when installed)
VERSIONED = (
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "torch",
    "plotly",
    "pyarrow",
    "faiss-cpu",
    "streamlit",
)
ESCAPE_STATEMENT = (
    "CSV cells in text columns that begin with =, +, -, @, tab or carriage return were prefixed "
    "with a single quote (OWASP CSV injection guidance); numeric values and missing-value "
    "markers such as '-' were not altered; "
    "Parquet files are not escaped. "
    "curated.csv and removed.csv rows are the input file's bytes (line ends, quoting, delimiter "
    "and encoding kept) except rows holding an escaped cell, which are re-written in the "
    "input's delimiter, encoding and line end and so differ from the input by the added quote."
)
#: bytes that start a UTF-8 file with a byte-order mark
_BOM = b"\xef\xbb\xbf"
#: encodings in which delimiter, quote and line ends are single ASCII bytes
_BYTE_SCANNABLE = ("utf-8", "latin-1")


def _escape_cell(value: object) -> object:
    if not isinstance(value, str) or not value.startswith(FORMULA_TRIGGERS):
        return value
    if value.strip() in NA_MARKERS:  # a missing-value marker ("-") is no formula: keep it
        return value
    if _PLAIN_NUMBER.match(value):  # "-3.5" is a number to a spreadsheet, never a formula
        return value
    return "'" + value


def escape_formulas(frame: pd.DataFrame, *, schema: Schema | None = None) -> pd.DataFrame:
    """Copy of ``frame`` with formula-like text cells prefixed by ``'``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Typed or raw (all-string) rows.
    schema : Schema, optional
        Columns of kind ``"numeric"`` are left untouched even when ``frame`` holds them as
        strings (so ``-3`` in a raw numeric column stays ``-3``). Without a schema, columns with
        a numeric, boolean or datetime dtype are skipped.

    Returns
    -------
    pandas.DataFrame
        Same shape, columns and index. Header names are escaped the same way.
    """
    numeric = set(schema.numeric) if schema is not None else set()
    out = frame.copy()
    for col in out.columns:
        series = out[col]
        if col in numeric or not _is_text(series):
            continue
        # a cell's escape depends on its value alone: escape each distinct value once (a
        # million-row audit or curated file called _escape_cell ~10 million times)
        escaped = {v: e for v in _distinct(series) if (e := _escape_cell(v)) is not v}
        if escaped:
            rows = series.isin(list(escaped)).to_numpy()
            column = series.copy()
            column[rows] = series[rows].map(escaped).to_numpy()
            out[col] = column.astype(series.dtype)
    out.columns = [_escape_cell(c) for c in out.columns]
    return out


def _is_text(series: pd.Series) -> bool:
    return pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)


def _distinct(series: pd.Series) -> Iterable[object]:
    """The distinct non-missing values of a text column (each once)."""
    values = series.dropna()
    try:
        return pd.unique(values)
    except TypeError:  # an unhashable cell (a list in an object column): every cell then
        return values


def _has_cr(frame: pd.DataFrame) -> bool:
    if any("\r" in str(c) for c in frame.columns):
        return True
    return any(
        isinstance(v, str) and "\r" in v
        for col in frame.columns
        if _is_text(frame[col])
        for v in _distinct(frame[col])
    )


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    # the csv module quotes only characters of the line terminator ("\n"), so a bare "\r" inside
    # a cell would split the row on reading; quote every cell in that rare case instead
    quoting = csv.QUOTE_ALL if _has_cr(frame) else csv.QUOTE_MINIMAL
    return frame.to_csv(index=False, lineterminator="\n", quoting=quoting).encode("utf-8")


@dataclass(frozen=True)
class InputRecords:
    """The records of a delimited text file as byte spans (line ends included).

    Attributes
    ----------
    data : bytes
        The file's content (decompressed).
    header : tuple of int
        ``(start, stop)`` of the header record, its line end included.
    starts, stops : ndarray of int64
        Byte spans of the data records in file order, empty lines left out (the loader skips
        them too), so data record ``i`` is row ``i`` of the loaded table.
    line_end : bytes
        The header's line end (``b"\\n"`` when it has none): what a row without one gets.
    """

    data: bytes = field(repr=False)
    header: tuple[int, int]
    starts: np.ndarray = field(repr=False)
    stops: np.ndarray = field(repr=False)
    line_end: bytes

    def row(self, i: int, *, last: bool = False) -> bytes:
        """Data record ``i`` as in the file; one without a line end gets the file's unless
        ``last`` (nothing follows it)."""
        chunk = self.data[self.starts[i] : self.stops[i]]
        return chunk if last or chunk.endswith((b"\n", b"\r")) else chunk + self.line_end


def _line_end(line: bytes) -> int:
    if line.endswith(b"\r\n"):
        return 2
    return 1 if line.endswith((b"\n", b"\r")) else 0


def input_records(data: bytes, *, delimiter: str) -> InputRecords:
    """Split delimited text into records as the loader does: quoted line breaks stay inside.

    A field is quoted when it starts with ``"``; inside it ``""`` is a quote and a line break
    belongs to the cell (RFC 4180, and Arrow's CSV parser with ``newlines_in_values``). Lines
    without a quote outside a quoted field end their record at once, so a file with few quotes
    is split at the speed of :meth:`bytes.splitlines`.

    Parameters
    ----------
    data : bytes
        The file's content, in an encoding where ``delimiter``, ``"``, CR and LF are single
        ASCII bytes (UTF-8 with or without BOM, latin-1).
    delimiter : str
        One character.

    Returns
    -------
    InputRecords
    """
    if len(delimiter) != 1 or ord(delimiter) > 127:
        raise ValueError(f"delimiter must be one ASCII character; got {delimiter!r} instead")
    sep, quote = ord(delimiter), ord('"')
    spans: list[tuple[int, int, bool]] = []  # (start, stop, empty)
    offset, start = 0, 0
    in_quotes = pending = False
    for line in data.splitlines(keepends=True):
        end = len(line) - _line_end(line)
        if in_quotes or quote in line:
            field_start = not in_quotes
            for b in line[:end]:
                if in_quotes:
                    if pending:
                        pending = False
                        if b == quote:  # "" inside quotes: a literal quote
                            continue
                        in_quotes = False
                    elif b == quote:
                        pending = True
                        continue
                    else:
                        continue
                if b == sep:
                    field_start = True
                elif b == quote and field_start:
                    in_quotes, field_start = True, False
                else:
                    field_start = False
            if pending:  # the line's last character closed the quoted field
                in_quotes = pending = False
        offset += len(line)
        if in_quotes:  # the line break belongs to a quoted cell: the record goes on
            continue
        spans.append((start, offset, offset - start == len(line) and end == 0))
        start = offset
    if start < len(data):  # an unterminated quote runs to the end of the file
        spans.append((start, len(data), False))
    records = [(a, b) for a, b, empty in spans if not empty]
    if not records:
        raise DataError("the input file holds no header record")
    header = records[0]
    first = data[header[0] : header[1]]
    line_end = first[len(first) - _line_end(first) :] or b"\n"
    body = np.array(records[1:], dtype=np.int64).reshape(-1, 2)
    return InputRecords(data, header, body[:, 0], body[:, 1], line_end)


def _source_bytes(source: str | os.PathLike[str] | bytes) -> bytes:
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def source_index(
    sources: Iterable[str | os.PathLike[str] | bytes],
) -> dict[str, str | os.PathLike[str] | bytes]:
    """Each input file among ``sources`` under the sha256 of its bytes as stored.

    That digest is the one a loaded table records (``LoadedTable.sha256``, a curation's
    ``source_sha256``), so a release that writes several candidates hashes every source once
    and hands each candidate its own file, instead of every candidate hashing them all. Files
    are hashed in blocks, never held in memory. A folder (of Parquet partitions) is skipped:
    its digest is not one file's, and Parquet rows are written from their cells, never copied.
    """
    index: dict[str, str | os.PathLike[str] | bytes] = {}
    for source in sources:
        digest = _file_sha256(source)
        if digest is not None:
            index.setdefault(digest, source)
    return index


def _file_sha256(source: str | os.PathLike[str] | bytes) -> str | None:
    """sha256 of a source's bytes as stored; None for a folder."""
    if isinstance(source, bytes):
        return hashlib.sha256(source).hexdigest()
    if Path(source).is_dir():
        return None
    return file_sha256(source)


def _find_source(sha256: str, sources: Iterable[str | os.PathLike[str] | bytes]) -> bytes | None:
    """The decompressed content of the source whose file digest is ``sha256``, if any (folders
    skipped, as in :func:`source_index`)."""
    if not sha256:
        return None
    for source in sources:
        if _file_sha256(source) == sha256:
            return _source_bytes(source)
    return None


def _quote_cell(cell: str, delimiter: str) -> str:
    if any(c in cell for c in (delimiter, '"', "\r", "\n")):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def _record(cells: Sequence[object], delimiter: str, line_end: bytes, encoding: str) -> bytes:
    """One record in the input's dialect: only cells that need quotes are quoted."""
    text = delimiter.join(_quote_cell("" if pd.isna(c) else str(c), delimiter) for c in cells)
    return text.encode(encoding, errors="replace") + line_end


def _input_dialect(curation: CurationResult) -> tuple[str, str] | None:
    table = curation.table
    if table.delimiter is None or (table.encoding or "") not in _BYTE_SCANNABLE:
        return None
    return table.delimiter, str(table.encoding)


def _exact_rows(
    curation: CurationResult,
    cells: pd.DataFrame,
    rows: np.ndarray,
    sources: Iterable[str | os.PathLike[str] | bytes],
    schema: Schema | None,
    prefix: pd.DataFrame | None = None,
) -> bytes | None:
    """Header and ``rows`` as the input file's bytes (escaped rows re-written); None without it.

    ``cells`` holds the same rows' cells as written (for the escape check); ``prefix`` adds
    leading columns (``removed.csv``'s row number and reasons), written in the input's dialect.
    """
    dialect = _input_dialect(curation)
    data = None if dialect is None else _find_source(curation.source_sha256, sources)
    if data is None or dialect is None:
        return None
    delimiter, encoding = dialect
    records = input_records(data, delimiter=delimiter)
    if len(records.starts) != curation.n_input:
        raise DataError(
            f"the input file of '{curation.name}' splits into {len(records.starts)} records; "
            f"expected its {curation.n_input} rows"
        )
    escaped = escape_formulas(cells, schema=schema)
    changed = (escaped.astype(object) != cells.astype(object)) & cells.notna().to_numpy()
    rewrite = changed.to_numpy(dtype=bool).any(axis=1)
    line_end = records.line_end
    head = data[records.header[0] : records.header[1]]
    names = [str(c) for c in cells.columns]
    if list(escaped.columns) != names:  # a column name that must be escaped
        bom = _BOM if head.startswith(_BOM) else b""
        head = bom + _record(list(escaped.columns), delimiter, line_end, encoding)
    elif not head.endswith((b"\n", b"\r")):
        head += line_end
    out = []
    if prefix is not None:
        bom = _BOM if head.startswith(_BOM) else b""
        lead = _record(list(prefix.columns), delimiter, b"", encoding) + delimiter.encode()
        head = bom + lead + head[len(bom) :]
        prefix = escape_formulas(prefix)
    out.append(head)
    for i, row in enumerate(rows):
        lead = b""
        if prefix is not None:
            lead = _record(prefix.iloc[i].tolist(), delimiter, b"", encoding)
            lead += delimiter.encode()
        if rewrite[i]:
            out.append(lead + _record(escaped.iloc[i].tolist(), delimiter, line_end, encoding))
        else:
            out.append(lead + records.row(int(row), last=i == len(rows) - 1))
    return b"".join(out)


def curated_csv_bytes(
    curation: CurationResult,
    *,
    schema: Schema | None = None,
    sources: Iterable[str | os.PathLike[str] | bytes] = (),
) -> bytes:
    """The kept rows as written in the input file, formula-escaped.

    Parameters
    ----------
    curation : CurationResult
    schema : Schema, optional
        Numeric columns are never escaped (:func:`escape_formulas`).
    sources : iterable of path or bytes, optional
        Input files (e.g. every ``--synthetic`` path, or uploaded bytes); the one whose sha256
        is the candidate's gives the rows' bytes: each kept row is then the input file's bytes
        (module docstring), a row with an escaped cell re-written in the input's dialect.

    Returns
    -------
    bytes
        Without a matching CSV source: the kept rows' cells as written, UTF-8, comma-separated,
        LF line ends (reading it back with ``dtype=str, keep_default_na=False`` gives the kept
        rows' strings unchanged).
    """
    sources = tuple(sources)
    if sources:
        exact = _exact_rows(curation, curation.kept_raw, curation.kept_rows, sources, schema)
        if exact is not None:
            return exact
    return _csv_bytes(escape_formulas(curation.kept_raw, schema=schema))


def curated_parquet_bytes(curation: CurationResult) -> bytes:
    """The kept rows of the typed frame as Parquet (dtypes kept, nothing escaped)."""
    buf = io.BytesIO()
    curation.kept_frame.to_parquet(buf, index=False)
    return buf.getvalue()


def audit_csv_bytes(audit: pd.DataFrame) -> bytes:
    """The audit table (one row per synthetic row, with reasons) as formula-escaped CSV."""
    return _csv_bytes(escape_formulas(audit))


def removed_csv_bytes(
    curation: CurationResult,
    *,
    schema: Schema | None = None,
    sources: Iterable[str | os.PathLike[str] | bytes] = (),
) -> bytes:
    """Removed rows as in the input file, preceded by their row number and reasons.

    With the input file among ``sources`` each removed row is its bytes after the two added
    cells (as :func:`curated_csv_bytes`); otherwise cells as written, UTF-8, commas, LF.
    """
    table = curation.removed_table()
    sources = tuple(sources)
    if sources:
        prefix = table.iloc[:, :2].copy()
        prefix.iloc[:, 1] = [_plain(r, curation.table.encoding) for r in prefix.iloc[:, 1]]
        exact = _exact_rows(
            curation, curation.removed_raw, curation.removed_rows, sources, schema, prefix=prefix
        )
        if exact is not None:
            return exact
    return _csv_bytes(escape_formulas(table, schema=schema))


def _plain(text: str, encoding: str | None) -> str:
    """Reasons in the input's encoding: Greek letters spelled out where it has none."""
    if (encoding or "utf-8") == "utf-8":
        return text
    return text.replace("α", "alpha").replace("β", "beta")


def dumps(content: Mapping[str, object]) -> bytes:
    """Canonical JSON bytes: sorted keys, 2-space indent, NaN as null, trailing newline."""
    text = json.dumps(
        to_jsonable(content), indent=2, sort_keys=True, allow_nan=False, ensure_ascii=False
    )
    return (text + "\n").encode("utf-8")


def versions() -> dict[str, str]:
    """Versions of Python, synthreview and its main dependencies that are installed."""

    found = {"python": platform.python_version(), "synthreview": __version__}
    for dist in VERSIONED:
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


def _input_digests(inputs: Mapping[str, bytes | str] | Sequence[Mapping[str, object]]) -> dict:
    if isinstance(inputs, Mapping):
        return {
            name: {"sha256": hashlib.sha256(v).hexdigest() if isinstance(v, bytes) else str(v)}
            for name, v in inputs.items()
        }
    return {f"{i.get('role', 'input')}:{i['name']}": dict(i) for i in inputs}


def manifest(
    inputs: Mapping[str, bytes | str] | Sequence[Mapping[str, object]],
    outputs: Mapping[str, bytes],
    params: Mapping[str, object],
    seed: int,
    *,
    timestamp: datetime | None = None,
) -> dict[str, object]:
    """Provenance of a release: digests, parameters, seed, versions, time, escaping statement.

    Parameters
    ----------
    inputs : mapping or sequence
        ``{name: file bytes or sha256 hex}``, or ``Report.to_dict()["inputs"]`` (entries with
        ``name``, ``role`` and ``sha256``).
    outputs : mapping of str to bytes
        Release file name -> content (the manifest itself excluded).
    params : mapping
        Options, thresholds and policy that produced the release.
    seed : int
    timestamp : datetime, optional
        Defaults to now (UTC).
    """
    moment = timestamp or datetime.now(UTC)
    return to_jsonable(
        {
            "generated_at": moment.astimezone(UTC).isoformat(timespec="seconds"),
            "seed": int(seed),
            "parameters": params,
            "inputs": _input_digests(inputs),
            "outputs": {
                name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
                for name, data in sorted(outputs.items())
            },
            "versions": versions(),
            "csv_formula_escaping": ESCAPE_STATEMENT,
        }
    )


def safe_name(name: str, taken: Iterable[str] = ()) -> str:
    """A folder name for a candidate: unsafe characters replaced, unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "candidate"
    taken = set(taken)
    candidate, i = base, 2
    while candidate in taken:
        candidate, i = f"{base}_{i}", i + 1
    return candidate
