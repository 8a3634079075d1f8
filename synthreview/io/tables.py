"""Loading tables and aligning real, holdout and synthetic tables for a review.

``read_table`` turns one CSV, TSV or Parquet source (a path or an upload) into a
:class:`~synthreview.io.schema.LoadedTable`, or raises :class:`~synthreview.errors.DataError` before
anything is returned: nothing is ever half-loaded. ``infer_schema`` guesses column kinds on the
real table and ``align`` checks that every table has the real table's columns, casts them to the
real kinds and collects the findings that do not stop a review (unseen categories, empty
columns, missing-value rates) as :class:`~synthreview.io.schema.Notice` objects.

Typing rules (shared by every table so they compare like with like):

* values are stripped of surrounding whitespace; ``written`` (``raw``) keeps them exactly as
  written, without a second copy of the text of columns of numbers (see
  :class:`~synthreview.io.schema.DerivedCells`);
* a stripped value in :data:`NA_MARKERS` (including the empty string) is missing;
* a column whose non-missing values all parse as numbers becomes ``float64`` (integers too:
  one numeric dtype keeps numpy code simple and float64 holds integers exactly up to 2**53);
* every other column stays text (pandas ``str`` dtype, missing as ``NaN``).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tempfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pandas as pd

from synthreview.errors import DataError
from synthreview.io.overlap import overlap_notices
from synthreview.io.parquet import (
    PARQUET_MAGIC,
    ParquetFrames,
    UploadedFolder,
    read_parquet,
    read_parquet_folder,
    read_uploaded_folder,
)
from synthreview.io.schema import LoadedTable, Notice, Review, Schema
from synthreview.io.table_rules import (
    MAX_COLUMNS,
    alignment_notices,
    as_table,
    cast_table,
    check_columns,
    check_finite,
    check_header,
    check_rows,
    check_width,
    infer_kind,
    missing_shares,
    name_candidates,
)
from synthreview.io.textfile import (
    decode_text,
    parse_delimited,
    read_decimal_commas,
    read_header,
    scan_text_file,
    sniff_delimiter,
)

MAX_BYTES = 2 * 1024**3
_ROLES = ("real", "holdout", "synthetic")
_GZIP = b"\x1f\x8b"
_GZIP_MIN_BYTES = 18  # a 10-byte header, an empty deflate block and the 8-byte trailer
_GUNZIP_CHUNK = 1 << 20
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def read_table(
    source: str | os.PathLike[str] | IO[bytes] | bytes | UploadedFolder,
    *,
    name: str | None = None,
    role: str = "real",
    max_bytes: int = MAX_BYTES,
    max_columns: int | None = MAX_COLUMNS,
    describe: str = "{role} table {name!r}",
    client: Any = None,
) -> LoadedTable:
    """Read a CSV, TSV or Parquet table, or a folder of Parquet partitions.

    Parameters
    ----------
    source : str, path, binary file-like, bytes or UploadedFolder
        A binary file-like may be a Streamlit ``UploadedFile``. Parquet is recognised by its
        ``PAR1`` magic bytes, gzip-compressed text by its magic bytes; anything else is read
        as delimited text (delimiter sniffed among ``, ; TAB |``). A path to a folder reads
        the Parquet partition files directly in it (``*.parquet``, ``*.pq``; names starting
        with ``_`` or ``.`` skipped) as one table: partitions in name order with runs of
        digits compared as numbers (``part.2`` before ``part.10``), rows in file order, every
        partition with the same columns and types; the table equals the one a single Parquet
        file holding those rows gives (:mod:`synthreview.io.parquet`). An
        :class:`~synthreview.io.parquet.UploadedFolder` (a browser's folder upload) is read as
        that folder on disk would be, digest included.
    name : str, optional
        Display name; defaults to the file (or folder) stem (``"table"`` when the source has no
        name).
    role : {"real", "holdout", "synthetic"}
    max_bytes : int, default 2 GiB
        Sources larger than this are refused before they are read (a folder: its partition
        files together).
    max_columns : int or None, default :data:`~synthreview.io.table_rules.MAX_COLUMNS`
        Tables with more columns are refused as soon as the header is read (None: no limit).
    describe : str
        How error messages name the source; ``{role}`` and ``{name}`` are filled in.
    client : distributed.Client, optional
        A folder's partitions are read by this client's workers (one task per partition, at
        the same path, so every worker must see the folder there) and gathered here; files
        are always read here. The table, digest included, is the same either way.

    Returns
    -------
    LoadedTable
        ``frame`` holds typed values (see the module docstring), ``written`` (``raw``) the cells
        as written (for Parquet: the columns as stored), ``sha256`` the digest of the source
        bytes; for a folder, the sha256 of the lines ``"<sha256 of the file>  <file name>\\n"``
        of its partitions in the order above (what ``sha256sum`` prints for them), so a
        changed, added, removed or renamed partition changes it
        (:func:`synthreview.io.parquet.folder_sha256`).

    Raises
    ------
    DataError
        Empty, header-only, single-row, too large, too wide, binary, ragged or unparseable
        input, duplicated column names, infinite numbers (column and row named) and nested
        Parquet types (list, struct, map); for a folder also: no partition files, a file that
        is not named like Parquet or a sub-folder (named), and partitions whose columns or
        types differ (the first such partition and column named). The message names the
        table.
    """
    if role not in _ROLES:
        raise ValueError(f"role must be one of {list(_ROLES)}; got {role!r} instead")
    label = name or _stem(source)
    what = describe.format(role=role, name=label)
    if isinstance(source, UploadedFolder):  # a folder sent by a browser: read here
        folder = read_uploaded_folder(
            source, what=what, label=label, max_bytes=max_bytes, max_columns=max_columns
        )
        return _parquet_table(folder.frames, label, role, what, folder.sha256)
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        folder = read_parquet_folder(
            source,
            what=what,
            label=label,
            max_bytes=max_bytes,
            max_columns=max_columns,
            client=client,
        )
        return _parquet_table(folder.frames, label, role, what, folder.sha256)
    suffix = Path(str(getattr(source, "name", source) if not isinstance(source, bytes) else ""))
    suffix_text = "".join(suffix.suffixes[-2:]).lower() if suffix.suffixes else ""
    data = _read_bytes(source, what, max_bytes)
    if data is None or data[:2] != _GZIP:
        return _read_source(source, data, label, role, what, suffix_text, max_columns)
    # gzip: decompressed block by block into a temporary file (the limit checked as it grows),
    # then read like a file on disk; the digest stays the one of the bytes given
    digest = hashlib.sha256(data).hexdigest()
    unzipped = _gunzip(data, what, max_bytes)
    del data
    try:
        return _read_source(
            unzipped,
            _read_bytes(unzipped, what, max_bytes),
            label,
            role,
            what,
            suffix_text,
            max_columns,
            digest=digest,
        )
    finally:
        os.unlink(unzipped)


def _read_source(
    source: Any,
    data: bytes | None,
    label: str,
    role: str,
    what: str,
    suffix_text: str,
    max_columns: int | None,
    *,
    digest: str | None = None,
) -> LoadedTable:
    """The table in ``data`` (bytes), or in the text file at ``source`` when ``data`` is None.

    ``digest`` (sha256) replaces the content's own, for content decompressed from a file.
    """
    if data is None:  # a plain text file on disk: checked and parsed block by block
        scanned, head, encoding, notices = scan_text_file(str(source), what, label)
        digest = digest or scanned
        text: bytes | str = str(source)
        parse_encoding = encoding
    else:
        digest = digest or hashlib.sha256(data).hexdigest()
        if data[:4] == PARQUET_MAGIC:
            parquet = read_parquet(data, what=what, label=label, max_columns=max_columns)
            return _parquet_table(parquet, label, role, what, digest)
        if not data[:4096].strip() and not data.strip():  # full strip only when the head is blank
            raise DataError(f"{what} is empty; expected a header row and data rows")
        text, head, encoding, notices = decode_text(data, what, label)
        del data  # for BOM or latin-1 input only the UTF-8 copy is needed from here
        parse_encoding = "utf-8"
    if suffix_text.endswith((".parquet", ".pq")):
        raise DataError(
            f"{what} is named like a Parquet file but does not start "
            "with the Parquet magic bytes 'PAR1'; the file is damaged or not Parquet"
        )
    prefer_tab = ".tsv" in suffix_text or ".tab" in suffix_text
    delimiter = sniff_delimiter(head, prefer_tab=prefer_tab)
    header = read_header(head, delimiter, what)
    check_width(len(header), what, max_columns)
    notices += check_header(header, what, label)
    written, frame = parse_delimited(text, header, delimiter, what, encoding=parse_encoding)
    del text
    if delimiter == ";":
        frame, comma_notices = read_decimal_commas(frame, label=label)
        notices += comma_notices
    check_rows(frame, what)
    check_finite(frame, what, written)
    return LoadedTable(
        name=label,
        role=role,
        frame=frame,
        raw=written,
        sha256=digest,
        source_format="tsv" if delimiter == "\t" else "csv",
        delimiter=delimiter,
        encoding=encoding,
        notices=tuple(notices),
    )


def _parquet_table(
    parquet: ParquetFrames, label: str, role: str, what: str, digest: str
) -> LoadedTable:
    """A Parquet file's or folder's frames, checked as every table's are, as a LoadedTable."""
    check_rows(parquet.frame, what)
    check_finite(parquet.frame, what, parquet.raw)
    return LoadedTable(
        name=label,
        role=role,
        frame=parquet.frame,
        raw=parquet.raw,
        sha256=digest,
        source_format="parquet",
        notices=parquet.notices,
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
        kinds[str(col)] = infer_kind(str(col), frame[col])
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
    real_t = as_table(real, "real", "real")
    holdout_t = None if holdout is None else as_table(holdout, "holdout", "holdout")
    candidates = name_candidates(synthetic)
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
        check_columns(table.frame, columns, label[key])
    cast = {k: cast_table(t, schema, label[k]) for k, t in tables.items()}
    notices: list[Notice] = [n for t in cast.values() for n in t.notices]
    notices += alignment_notices(cast, schema, label)
    notices += overlap_notices(cast["real"], cast.get("holdout"), schema)
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
        {k: missing_shares(t.frame) for k, t in tables.items()}, index=review.schema.columns
    )


def table_from_frame(frame: pd.DataFrame, *, name: str, role: str = "real") -> LoadedTable:
    """Wrap an in-memory DataFrame as a LoadedTable (``sha256`` of its content hash)."""
    return as_table(frame, name, role)


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


def _read_bytes(source: Any, what: str, max_bytes: int) -> bytes | None:
    """The source's bytes, or None for a plain text file on disk (too big to hold twice)."""
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
        with open(source, "rb") as fh:
            magic = fh.read(4)
        if magic[:2] in (_GZIP, *_UTF16_MARKS) or magic == PARQUET_MAGIC:
            return Path(source).read_bytes()
        return None  # plain text: read_table streams it
    if hasattr(source, "getvalue"):
        data = source.getvalue()
    else:
        source.seek(0)
        data = source.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    return bytes(data)


def _gunzip(data: bytes, what: str, max_bytes: int) -> str:
    """Decompress gzip ``data`` into a temporary file and return its path (the caller removes it).

    The size is checked before anything is decompressed (the gzip trailer's size, a lower bound
    of the content's) and as the content grows, so a small file that expands beyond
    ``max_bytes`` is refused after at most ``max_bytes`` (plus a 1 MiB chunk) were decompressed,
    to disk, never to memory.
    """
    # ISIZE, the last 4 bytes: the last member's size modulo 2**32. The content is at least
    # that large, so a trailer above the limit refuses the file at once; a smaller one proves
    # nothing (several members, or 4 GiB wrap-around), hence the check while decompressing
    trailer = int.from_bytes(data[-4:], "little") if len(data) >= _GZIP_MIN_BYTES else 0
    if trailer > max_bytes:
        raise DataError(
            f"{what} decompresses to {trailer:,} bytes (gzip trailer); the limit is "
            f"{max_bytes:,} bytes"
        )
    handle, path = tempfile.mkstemp(prefix="synthreview-", suffix=".gunzipped")
    size = 0
    try:
        with os.fdopen(handle, "wb") as out, gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            while chunk := fh.read(_GUNZIP_CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise DataError(
                        f"{what} decompresses to more than {max_bytes:,} bytes, the limit "
                        f"(stopped after {size:,} bytes)"
                    )
                out.write(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        os.unlink(path)
        raise DataError(f"{what} looks gzip-compressed but cannot be decompressed: {exc}") from exc
    except BaseException:
        os.unlink(path)
        raise
    return path


__all__ = [
    "align",
    "infer_schema",
    "load_table",
    "missing_rates",
    "read_table",
    "table_from_frame",
]
