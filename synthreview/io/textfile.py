"""Delimited text behind :func:`synthreview.io.tables.read_table`: decoding, sniffing, parsing,
typing.

The typing rules are shared by every table (and by :mod:`synthreview.io.traces` for in-memory
frames) so that tables compare like with like:

* values are stripped of surrounding whitespace;
* a stripped value in :data:`NA_MARKERS` (including the empty string) is missing;
* a column whose non-missing values all parse as numbers becomes ``float64``, unless one of
  them is a whole number that float64 cannot hold exactly (beyond 2**53, e.g. a 20-digit ID)
  or a zero-padded code (``007``): such a column stays text so that it is never rounded and
  is written back byte-identical;
* every other column stays text (pandas ``str`` dtype, missing as ``NaN``).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import os
import re
import threading
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from synthreview.errors import DataError
from synthreview.io.schema import (
    DerivedCells,
    Notice,
    WrittenCells,
    number_strings,
    str_series,
)

#: stripped cell values read as missing (case-sensitive, as written by R, pandas, Excel, UCI)
NA_MARKERS: frozenset[str] = frozenset(
    {"", *"NA N/A n/a #N/A NaN nan NAN NaT <NA> null NULL Null nil None ? - .".split()}
)
_NA_ARROW = pa.array(sorted(NA_MARKERS))
#: whole numbers beyond this lose digits in float64 (2**53 + 1 reads back as 2**53)
EXACT_INTEGER_LIMIT = 2**53
# a whole number written with a leading zero ("007", "-01"): a code, not a quantity
_ZERO_PADDED = r"^[+-]?0\d+$"
_WHOLE = r"^[+-]?\d+$"
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+([eE][+-]?\d+)?|[+-]?\d+")
#: a time of day followed by its UTC offset ("08:05:00+01:00", "08:05Z", "08:05 -0500")
_TIME_OFFSET = r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?P<offset>Z|[+-]\d{2}(?::?\d{2})?)$"
_OFFSET = r"(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?:Z|[+-]\d{2}(?::?\d{2})?)$"
_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_CHARS = 64 * 1024
_HEAD_CHARS = 1024 * 1024
_CHUNK_BYTES = 16 * 1024 * 1024
#: CSV block size: memory while parsing grows by blocks, never by the whole file (4 MB: the
#: peak of a 100 MB CSV was lowest at 2-4 MB blocks, 16 MB blocks added about 1x its size)
BLOCK_BYTES = 4 * 1024 * 1024
#: most bytes one row of a delimited file may hold (its cells plus the delimiters between them),
#: so also the largest cell: the parser reads by blocks and needs every row inside two of
#: them; rows up to one block always fit, so the limit is one block and is checked on every
#: row, whatever its position in the file
MAX_ROW_BYTES = BLOCK_BYTES
_NEWLINE = b"\n"
#: a column of numbers keeps every cell's text once more than this share of its cells differ
#: from the derived text: a sparse exception costs a position and an offset (16 bytes) more
#: than the cell, a kept text column 8 bytes per cell, so sparse wins up to about half
_EXCEPTION_SHARE = 0.25
_DERIVED_STYLES = ("shortest", "point_zero")


def decode_text(data: bytes, what: str, label: str) -> tuple[bytes, str, str, list[Notice]]:
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
    _check_text(head, what)
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


def _check_text(head: bytes, what: str) -> None:
    # text files never hold NUL bytes; a few other control bytes mean binary content too
    controls = sum(head.count(bytes([b])) for b in (*range(0, 9), 11, 12, *range(14, 32)))
    if b"\x00" in head or controls > 0.01 * len(head):
        raise DataError(f"{what} holds binary (non-text) content; expected CSV, TSV or Parquet")


def scan_text_file(path: str, what: str, label: str) -> tuple[str, str, str, list[Notice]]:
    """Check a text file block by block: sha256, decoded head, encoding and notices.

    The counterpart of :func:`decode_text` for a file on disk that is never read whole: it
    refuses empty and binary files and picks UTF-8 (a BOM is skipped by the parser) or, when
    some byte is not UTF-8, latin-1 with a notice.
    """
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    head, bad, offset, blank = b"", None, 0, True
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK_BYTES):
            digest.update(chunk)
            if not head:
                head = chunk[:_HEAD_CHARS]
                _check_text(head, what)
            blank = blank and not chunk.strip()
            if bad is None:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    bad = offset + exc.start
            offset += len(chunk)
    if bad is None:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            bad = offset + exc.start
    if blank:
        raise DataError(f"{what} is empty; expected a header row and data rows")
    if head[:3] == b"\xef\xbb\xbf":
        head = head[3:]
    if bad is None:
        return digest.hexdigest(), head.decode("utf-8", errors="ignore"), "utf-8", []
    notice = Notice(
        "warning",
        label,
        f"{label!r} is not valid UTF-8 (byte {bad}); it was read as latin-1, check accented "
        "characters",
    )
    return digest.hexdigest(), head.decode("latin-1"), "latin-1", [notice]


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
    try:
        return [len(row) for row in csv.reader(lines, delimiter=delimiter) if row]
    except csv.Error:  # e.g. a field beyond the csv module's limit: not this delimiter's verdict
        return []


def sniff_delimiter(head: str, *, prefer_tab: bool) -> str:
    """Pick the delimiter among ``, ; TAB |`` from the decoded head of a file."""
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


def read_header(head: str, delimiter: str, what: str) -> list[str]:
    """The stripped column names on the first line of the decoded ``head``."""
    # newline="": the csv module sees the line endings as written, so CR-only (old Mac) and
    # CRLF files and quoted line breaks inside a name read as in RFC 4180
    try:
        first = next(csv.reader(io.StringIO(head, newline=""), delimiter=delimiter), None)
    except csv.Error as exc:  # a name longer than the csv module's field limit (128 KiB)
        raise DataError(
            f"{what} has a header row that cannot be read ({exc}); expected column names on "
            f"line 1, each shorter than {csv.field_size_limit():,} characters"
        ) from exc
    if not first or not any(f.strip() for f in first):
        raise DataError(f"{what} has no header row; expected column names on line 1")
    return [f.strip() for f in first]


def parse_delimited(
    source: bytes | str,
    header: list[str],
    delimiter: str,
    what: str,
    *,
    encoding: str = "utf-8",
    block_bytes: int = BLOCK_BYTES,
) -> tuple[WrittenCells, pd.DataFrame]:
    """Parse delimited text (header line skipped) into the cells as written and typed columns.

    ``source`` is UTF-8 bytes or the path of a file in ``encoding`` (``"utf-8"`` with or
    without BOM, or ``"latin-1"``); a path is read block by block, never whole. Returns the
    cells as written and the typed frame (the module's typing rules). Text columns of the typed
    frame share the written column's buffers where no cell needed trimming, so a text column
    costs one copy, not two; a column of numbers keeps its float64 values and only the cells
    whose text differs from the values' derived text (:class:`~synthreview.io.schema.DerivedCells`),
    so its text costs nothing when written consistently.
    """
    # Arrow's default pool (mimalloc) keeps the pages of freed arrays for reuse; parsing frees
    # every block's intermediate arrays, and the kept pages added about 0.5x the file size to
    # the peak (measured: 100 MB CSV, 270 MB -> 220 MB above the interpreter). The system
    # allocator gives large freed blocks back at once. Arrays remember their pool, so the
    # switch is only about where this parse allocates.
    with _SystemPool():
        return _parse_blocks(source, header, delimiter, what, encoding, block_bytes)


class _SystemPool:
    """While inside, Arrow's default pool is the system allocator.

    Parses running at the same time (dashboard threads) share one switch: the first to enter
    switches, the last to leave switches back, so the previous pool is always restored.
    """

    _lock = threading.Lock()
    _inside = 0
    _previous: pa.MemoryPool | None = None

    def __enter__(self) -> None:
        cls = type(self)
        with cls._lock:
            if cls._inside == 0:
                cls._previous = pa.default_memory_pool()
                pa.set_memory_pool(pa.system_memory_pool())
            cls._inside += 1

    def __exit__(self, *exc: object) -> None:
        cls = type(self)
        with cls._lock:
            cls._inside -= 1
            if cls._inside == 0 and cls._previous is not None:
                pa.set_memory_pool(cls._previous)
                cls._previous = None


def _parse_blocks(
    source: bytes | str,
    header: list[str],
    delimiter: str,
    what: str,
    encoding: str,
    block_bytes: int,
) -> tuple[WrittenCells, pd.DataFrame]:
    import pyarrow.csv as pacsv

    bad_rows: list[Any] = []

    def on_bad_row(row: Any) -> str:
        bad_rows.append(row)
        return "error"

    names = [f"c{i}" for i in range(len(header))]
    stream = pa.BufferReader(pa.py_buffer(source)) if isinstance(source, bytes) else source
    columns = [_ColumnBuilder() for _ in names]
    rows = 0
    try:
        reader = pacsv.open_csv(
            stream,
            read_options=pacsv.ReadOptions(
                # after the names, not skip_rows: skip_rows skips a physical line, and a quoted
                # header name may hold a line break (RFC 4180)
                column_names=names,
                skip_rows_after_names=1,
                encoding=encoding,
                block_size=block_bytes,
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter, newlines_in_values=True, invalid_row_handler=on_bad_row
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        for batch in reader:
            check_row_bytes(batch, header, rows, what, limit=block_bytes)
            rows += batch.num_rows
            for builder, chunk in zip(columns, batch.columns, strict=True):
                builder.add(chunk)
            del batch, chunk
            pa.default_memory_pool().release_unused()  # each block's intermediates are freed
    except (pa.ArrowInvalid, UnicodeError) as exc:
        size = len(source) if isinstance(source, bytes) else os.path.getsize(source)
        # a file smaller than a block has no row too long for two blocks: the parser found
        # no line break after the header, i.e. a header line only
        header_only = "straddling" in str(exc) and rows == 0 and size <= block_bytes
        if header_only or "skip initial" in str(exc) or "Empty CSV file" in str(exc):
            raise DataError(
                f"{what} has a header but no data rows; expected at least 2 rows"
            ) from exc
        if "straddling" in str(exc):  # a row longer than a block met a block boundary
            raise DataError(
                f"{what} data row {rows + 1} is longer than {block_bytes:,} bytes, the most "
                "a row (and so a cell) may hold; shorten or drop the long text cells"
            ) from exc
        if bad_rows:
            row = bad_rows[0]
            line = _line_of(source, row.text)
            raise DataError(
                f"{what} has ragged rows: {line} has {row.actual_columns} fields, the "
                f"header has {row.expected_columns} (delimiter {delimiter!r}): {row.text[:80]!r}"
            ) from exc
        raise DataError(f"{what} cannot be parsed as delimited text: {exc}") from exc
    written: dict[str, pd.Series | DerivedCells] = {}
    typed: dict[str, pd.Series] = {}
    for col, builder in zip(header, columns, strict=True):
        written[col], typed[col] = builder.series()
        # the parser's and the number chunks' freed blocks go back to the system, not the pool
        pa.default_memory_pool().release_unused()
    index = pd.RangeIndex(columns[0].rows if columns else 0)
    # copy=False: a dict of float columns would otherwise be copied into one 2-D block
    frame = pd.DataFrame({c: v.array for c, v in typed.items()}, index=index, copy=False)
    return WrittenCells(written, index), frame


def check_row_bytes(
    batch: pa.RecordBatch,
    header: list[str],
    first_row: int,
    what: str,
    *,
    limit: int = MAX_ROW_BYTES,
) -> None:
    """Refuse a row of more than ``limit`` bytes (cells plus delimiters), the parser's block.

    ``first_row`` is the number of data rows before ``batch``; the message names the data row,
    its size, the limit and the row's longest cell. Rows up to the limit always parse; longer
    ones would parse or not depending on where the block boundaries fall, so they are refused
    wherever they are.
    """
    if batch.num_rows == 0 or batch.nbytes <= limit:  # no row can be longer
        return
    lengths = pa.scalar(len(header) - 1, pa.int64())
    for column in batch.columns:
        lengths = pc.add(lengths, pc.cast(pc.binary_length(column), pa.int64()))
    top = pc.max(lengths).as_py()
    if top is None or top <= limit:
        return
    row = pc.index(lengths, top).as_py()
    cells = [pc.binary_length(column)[row].as_py() or 0 for column in batch.columns]
    longest = int(np.argmax(cells))
    raise DataError(
        f"{what} data row {first_row + row + 1} holds {top:,} bytes; a row (and so a cell) may "
        f"hold at most {limit:,} bytes (its longest cell, column {header[longest]!r}, "
        f"holds {cells[longest]:,}); shorten or drop the long text cells"
    )


def _line_of(source: bytes | str, text: str) -> str:
    """``"line N"`` of the first line holding ``text`` (only for error messages)."""
    needle = text.encode("utf-8")
    if isinstance(source, bytes):
        pos = source.find(needle)
        return f"line {source.count(_NEWLINE, 0, pos) + 1}" if pos >= 0 else "a line"
    lines = 0
    tail = b""
    with open(source, "rb") as fh:
        while chunk := fh.read(_CHUNK_BYTES):
            block = tail + chunk
            pos = block.find(needle)
            if pos >= 0:
                return f"line {lines + block.count(_NEWLINE, 0, pos) + 1}"
            keep = len(needle)
            lines += block.count(_NEWLINE, 0, len(block) - keep)
            tail = block[len(block) - keep :]
    return "a line"


class _ColumnBuilder:
    """One column of a CSV read block by block.

    While every value so far is a number, the column keeps its float64 chunks and, per block,
    only the cells whose text differs from the numbers' derived text (row positions and text);
    once too many differ it keeps every cell's text beside the numbers. When a value is not a
    number (or the column must stay text) the earlier blocks' text is rebuilt exactly from the
    numbers and the kept cells, and the column keeps text (and trimmed, NA-masked text) from
    then on.
    """

    def __init__(self) -> None:
        self.raw: list[pa.Array] = []  # text as written: text columns, or dense exceptions
        self.masked: list[pa.Array] = []  # typed text (text columns only)
        self.numbers: list[pa.Array] | None = []  # None once a value is not a number
        self.kept: list[tuple[np.ndarray, pa.Array] | None] = []  # per block while derived
        self.style: str | None = None  # the derived text's style; None once text is kept
        self.derived = True  # text re-derived from the numbers (self.kept) rather than kept
        self.n_kept = 0
        self.sizes: list[int] = []  # rows per block
        self.rows = 0
        self.present = 0

    def add(self, chunk: pa.Array) -> None:
        raw = pc.cast(chunk, pa.large_string())  # pandas' str dtype holds large_string
        masked = _mask_na(raw)
        self.rows += len(raw)
        self.sizes.append(len(raw))
        self.present += len(masked) - masked.null_count
        if self.numbers is not None:
            numbers = _as_numbers(masked)
            if numbers is not None:
                self.numbers.append(numbers)
                if self.derived:
                    self._keep_differences(raw, numbers)
                else:
                    self.raw.append(raw)
                return
            self._to_text()
        self.raw.append(raw)
        self.masked.append(masked)

    def _keep_differences(self, raw: pa.Array, numbers: pa.Array) -> None:
        if self.style is None:  # the first block picks the style most cells are written in
            self.style = min(_DERIVED_STYLES, key=lambda st: _differs(raw, numbers, st)[1])
        differ, n = _differs(raw, numbers, self.style)
        self.kept.append((np.flatnonzero(differ), raw.filter(differ)) if n else None)
        self.n_kept += n
        if self.n_kept > _EXCEPTION_SHARE * self.rows:  # dense: keeping the text is cheaper
            self.raw = [self._block_text(i) for i in range(len(self.kept))]
            self.kept, self.derived = [], False

    def _block_text(self, i: int) -> pa.Array:
        """Block ``i``'s text as written, rebuilt from its numbers and its kept cells."""
        assert self.numbers is not None and self.style is not None
        text = number_strings(self.numbers[i], self.style)
        kept = self.kept[i]
        if kept is None:
            return text
        mask = np.zeros(len(text), dtype=bool)
        mask[kept[0]] = True
        return pc.replace_with_mask(text, pa.array(mask), kept[1])

    def _to_text(self) -> None:
        """Stop reading numbers: earlier blocks keep their text and typed text."""
        if self.derived and self.numbers:
            self.raw = [self._block_text(i) for i in range(len(self.numbers))]
        self.masked = [_mask_na(raw) for raw in self.raw]
        self.numbers, self.kept, self.derived = None, [], False

    def series(self) -> tuple[pd.Series | DerivedCells, pd.Series]:
        """The cells as written and the typed column."""
        if self.numbers is not None and not self.present:
            self._to_text()  # all missing: a text column of NaN, as before
        if self.numbers is None:
            raw, typed = str_series(self.raw), str_series(self.masked)
            self.raw, self.masked = [], []
            return raw, typed
        values = np.empty(self.rows, dtype="float64")
        start = 0
        for i, chunk in enumerate(self.numbers):  # each chunk freed as soon as it is copied
            values[start : start + len(chunk)] = chunk.to_numpy(zero_copy_only=False)
            start += len(chunk)
            self.numbers[i] = None  # type: ignore[call-overload]
        typed = pd.Series(values, dtype="float64", copy=False)
        self.numbers = None
        if not self.derived:
            raw = str_series(self.raw)
            self.raw = []
            return raw, typed
        assert self.style is not None
        positions, texts, start = [], [], 0
        for chunk_rows, kept in zip(self.sizes, self.kept, strict=True):
            if kept is not None:
                positions.append(kept[0] + start)
                texts.append(kept[1])
            start += chunk_rows
        self.kept = []
        cells = DerivedCells(
            typed,
            self.style,
            np.concatenate(positions) if positions else np.empty(0, dtype="int64"),
            pa.concat_arrays(texts) if texts else pa.array([], pa.large_string()),
        )
        return cells, typed


def _mask_na(raw: pa.Array) -> pa.Array:
    """Trimmed text with NA markers as nulls, sharing ``raw``'s buffers where nothing is trimmed."""
    trimmed = pc.utf8_trim_whitespace(raw)
    if pc.all(pc.equal(pc.binary_length(trimmed), pc.binary_length(raw))).as_py() in (True, None):
        trimmed = raw  # nothing to trim: share the raw buffers
    valid = pc.invert(pc.is_in(trimmed, value_set=_NA_ARROW))
    # the same offsets and characters with a validity bitmap: NA markers become nulls
    offsets, data = trimmed.buffers()[1:]
    return pa.Array.from_buffers(
        pa.large_string(),
        len(trimmed),
        [pc.and_(valid, pc.is_valid(trimmed)).buffers()[1], offsets, data],
        offset=trimmed.offset,
    )


def _as_numbers(masked: pa.Array) -> pa.Array | None:
    """``masked`` as float64, or None when a value is not a number or the column must stay text."""
    try:
        numbers = pc.cast(masked, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return None if must_stay_text(masked, numbers) else numbers


def _differs(raw: pa.Array, numbers: pa.Array, style: str) -> tuple[np.ndarray, int]:
    """Which cells' text differs from the numbers' text in ``style``, and how many."""
    differ = pc.not_equal(number_strings(numbers, style), raw)
    n = pc.sum(differ).as_py() or 0
    return (differ.to_numpy(zero_copy_only=False) if n else np.empty(0, dtype=bool)), n


def read_decimal_commas(typed: pd.DataFrame, *, label: str) -> tuple[pd.DataFrame, list[Notice]]:
    """Text columns of a semicolon file written with decimal commas become numbers."""
    notices = []
    # semicolon files are usually written where "1,5" means 1.5 (Excel in most of Europe)
    for col in typed.columns:
        s = typed[col]
        present = s.dropna()
        if (
            s.dtype == "str"
            and len(present)
            and present.str.fullmatch(_DECIMAL_COMMA).all()
            and not present.str.fullmatch(_ZERO_PADDED[1:-1]).any()
        ):
            typed[col] = pd.to_numeric(s.str.replace(",", ".", regex=False)).astype("float64")
            notices.append(
                Notice("info", label, f"column {col!r} read with decimal commas (1,5 = 1.5)", col)
            )
    return typed, notices


def type_text_column(values: pd.Series) -> pd.Series:
    """``float64`` when every non-missing stripped value is a number, else ``str`` with NaN."""
    masked = strip_na(values)
    if masked.null_count < len(masked):
        try:
            numbers = pc.cast(masked, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # some value is not a number: a text column
        else:
            if not must_stay_text(masked, numbers):
                return pd.Series(numbers.to_numpy(zero_copy_only=False), index=values.index)
    return text_series(masked, values.index)


def must_stay_text(text: pa.Array, numbers: pa.Array | None = None) -> bool:
    """Whether a column of number-like ``text`` must stay text to keep its values exact.

    True when a value is zero-padded (``007``: a code whose leading zeros a number drops) or a
    whole number whose magnitude exceeds :data:`EXACT_INTEGER_LIMIT` (float64 rounds it, so
    120 distinct 20-digit IDs would collapse to a few floats). ``numbers`` is ``text`` already
    cast to float64, when the caller has it.
    """
    if pc.any(pc.match_substring_regex(text, _ZERO_PADDED)).as_py():
        return True
    if numbers is None:
        numbers = pc.cast(text, pa.float64())
    big = pc.greater(pc.abs(numbers), EXACT_INTEGER_LIMIT)
    if not pc.any(big).as_py():
        return False
    return bool(pc.any(pc.and_(big, pc.match_substring_regex(text, _WHOLE))).as_py())


def utc_offsets(values: pd.Series) -> list[str]:
    """The distinct UTC offsets written in a column of date-times, ``"none"`` for values without.

    ``"Z"`` counts as ``+00:00`` and ``+0100`` as ``+01:00``. More than one entry means the
    column mixes time zones (or zoned and local times), which pandas refuses to parse as one
    column; the loaders then say what they did, naming the column.
    """
    masked = strip_na(values)
    present = masked.drop_null()
    if not len(present):
        return []
    found = pc.struct_field(pc.extract_regex(present, _TIME_OFFSET), "offset")
    offsets = {_normal_offset(v) for v in pc.unique(found).to_pylist() if v is not None}
    if found.null_count:
        offsets.add("none")
    return sorted(offsets)


def _normal_offset(value: str) -> str:
    if value == "Z":
        return "+00:00"
    digits = value[1:].replace(":", "")
    return f"{value[0]}{digits[:2]}:{(digits[2:] or '00')}"


def drop_utc_offsets(values: pd.Series) -> pd.Series:
    """Date-time text without its UTC offsets: each value's local wall-clock time."""
    return values.str.replace(_OFFSET, r"\1", regex=True)


def text_series(array: pa.Array | pa.ChunkedArray, index: pd.Index) -> pd.Series:
    """An Arrow string array as a pandas ``str`` Series on ``index`` (no Python strings)."""
    out = str_series(array)
    out.index = index  # set, not passed to the constructor, which would realign by label
    return out


def strip_na(values: pd.Series) -> pa.Array:
    """Stripped text with NA markers as nulls, as an Arrow array (vectorised in C++)."""
    text = values if values.dtype == "str" else values.astype("str").where(values.notna())
    stripped = pc.utf8_trim_whitespace(pa.array(text, from_pandas=True))
    return pc.if_else(pc.is_in(stripped, value_set=_NA_ARROW), None, stripped)
