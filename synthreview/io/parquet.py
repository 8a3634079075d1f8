"""Parquet input: one file's bytes, or a folder of Parquet partition files, as one table.

:func:`synthreview.io.tables.read_table` reads both through this module, so a folder goes
through exactly the checks a single file does (columns, nested and binary types, integers
beyond 2**53, the typed and written frames) and gives the table that a single file holding the
same rows, in the same order, gives.

A folder of partitions
    The Parquet files directly in the folder (names ending in ``.parquet`` or ``.pq``, as
    ``dask.dataframe.to_parquet`` and pyarrow write them) are its partitions; names starting
    with ``_`` or ``.`` (``_metadata``, ``_SUCCESS``, ``.part-0.parquet.crc``) are metadata,
    skipped as dask and pyarrow skip them. Any other file or a sub-folder is refused, naming
    it. The partitions are read in name order with runs of digits compared as numbers
    (``part.2`` before ``part.10``, the order ``dask.dataframe.read_parquet`` uses), their rows
    in file order, and must all hold the same columns with the same Arrow types in the same
    order (text as ``string`` in some partitions and ``large_string`` in others is joined as
    ``large_string``; a column missing on every row of a partition, which its writer stores as
    Arrow's ``null`` type, takes the other partitions' type; a categorical column, stored as
    a dictionary per partition, may list other categories in each: its cells are the single
    file's, and only the written frame's category order is the order of first appearance
    across partitions, which no output depends on, cells being written as text). The
    folder's digest (:func:`folder_sha256`) is the sha256 of the lines
    ``"<sha256 of the file's bytes>  <file name>\\n"``, one per partition in that order:
    ``sha256sum`` run inside the folder on the partitions in that order prints exactly those
    lines, so piping them into ``sha256sum`` again gives the digest.

On a Dask cluster
    :func:`read_parquet_folder` with ``client=`` sends one :func:`read_partition` task per
    partition to the workers, which read and check the files (so the folder must be readable
    at the same path on every worker, as for ``dask.dataframe.read_parquet``), and gathers
    their Arrow tables on the client. Both ways run the same function on every partition and
    turn the gathered Arrow table into frames on the caller's machine, so the table (frames,
    dtypes and digest) does not depend on where the partitions were read.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from synthreview.errors import DataError
from synthreview.io.digest import file_sha256
from synthreview.io.schema import Notice
from synthreview.io.table_rules import check_header, check_width
from synthreview.io.textfile import EXACT_INTEGER_LIMIT, type_text_column

#: the first (and last) four bytes of every Parquet file
PARQUET_MAGIC = b"PAR1"
#: file name endings of Parquet partition files in a folder
PARTITION_SUFFIXES = (".parquet", ".pq")
# the index a writer stored beside the data, never data itself: pandas' non-range indexes
# ("__index_level_<i>__") and dask's unnamed index ("__null_dask_index__", written by
# dask.dataframe.to_parquet unless write_index=False)
_STORED_INDEX = re.compile(r"__index_level_\d+__|__null_dask_index__")
_DIGITS = re.compile(r"(\d+)")
_NAMED = 5  # files a message names before "and N more"


@dataclass(frozen=True)
class ParquetFrames:
    """A Parquet table as the loader hands it on.

    Attributes
    ----------
    raw : pandas.DataFrame
        The columns as stored (Arrow types converted by pyarrow; integers beyond 2**53 as
        text).
    frame : pandas.DataFrame
        The typed values (:mod:`synthreview.io.tables` module docstring).
    notices : tuple of Notice
        Header notices (a column without a name, a name with a line break).
    """

    raw: pd.DataFrame
    frame: pd.DataFrame
    notices: tuple[Notice, ...]


@dataclass(frozen=True)
class Partition:
    """One partition file as read (on a worker or locally), before its rows are joined.

    Attributes
    ----------
    name : str
        The file's name inside its folder.
    sha256 : str
        Digest of the file's bytes.
    size : int
        Bytes read.
    table : pyarrow.Table
        Its data columns (stored indexes dropped), checked as a single file's are.
    """

    name: str
    sha256: str
    size: int
    table: pa.Table


@dataclass(frozen=True)
class ParquetFolder:
    """A folder of Parquet partitions read as one table.

    Attributes
    ----------
    frames : ParquetFrames
        The joined rows, as a single file holding them in the same order gives them.
    sha256 : str
        :func:`folder_sha256` of the partitions.
    partitions : tuple of str
        The partition file names, in the order their rows were joined.
    size : int
        Bytes of all partition files.
    """

    frames: ParquetFrames
    sha256: str
    partitions: tuple[str, ...]
    size: int


def read_parquet(data: bytes, *, what: str, label: str, max_columns: int | None) -> ParquetFrames:
    """The table in the bytes of one Parquet file.

    Parameters
    ----------
    data : bytes
        The file's bytes (starting with :data:`PARQUET_MAGIC`).
    what : str
        How error messages name the source (``"real table 'train'"``).
    label : str
        The table's name, for notices.
    max_columns : int or None
        Tables with more data columns are refused before any row is read (None: no limit).

    Raises
    ------
    DataError
        Unreadable Parquet, too many columns, nested (list, struct, map) or binary columns,
        duplicated column names.
    """
    return parquet_frames(_arrow_table(data, what, max_columns), what=what, label=label)


def parquet_frames(arrow: pa.Table, *, what: str, label: str) -> ParquetFrames:
    """The written and typed frames of a checked Arrow table (one file's or a folder's rows)."""
    import pyarrow.compute as pc

    names = [str(c) for c in arrow.column_names]
    notices = check_header(names, what, label)
    for i, f in enumerate(arrow.schema):
        # int64 beyond 2**53 would round in float64 (the typed dtype): such IDs stay text.
        # Decided on the whole table, so every partition of a folder is typed alike
        if pa.types.is_integer(f.type) and arrow.num_rows:
            bounds = pc.min_max(arrow.column(i))
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            if low is not None and max(abs(low), abs(high)) > EXACT_INTEGER_LIMIT:
                arrow = arrow.set_column(i, f.name, pc.cast(arrow.column(i), pa.string()))
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
            typed[col] = type_text_column(s.astype("str").where(s.notna(), ""))
    frame = pd.DataFrame(typed, index=raw.index)
    return ParquetFrames(raw=raw, frame=frame, notices=tuple(notices))


def _arrow_table(data: bytes, what: str, max_columns: int | None) -> pa.Table:
    """The data columns of one Parquet file's bytes, its schema checked before any row is read."""
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        schema = handle.schema_arrow
    except Exception as exc:  # pyarrow raises several unrelated types for damaged files
        raise DataError(f"{what} cannot be read as Parquet: {exc}") from exc
    # a stored index is not data: a RangeIndex is metadata only, other indexes are columns
    keep = [f for f in schema if not _STORED_INDEX.fullmatch(f.name)]
    check_width(len(keep), what, max_columns)
    for f in keep:
        if pa.types.is_nested(f.type):
            raise DataError(
                f"{what} column {f.name!r} has the nested Parquet type {f.type}; expected one "
                "value per cell (numbers, text, booleans or dates): flatten it first"
            )
        if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type):
            raise DataError(
                f"{what} column {f.name!r} holds raw bytes ({f.type}); expected numbers, text, "
                "booleans or dates"
            )
    try:
        return handle.read(columns=[f.name for f in keep])
    except Exception as exc:
        raise DataError(f"{what} cannot be read as Parquet: {exc}") from exc


# ---------------------------------------------------------------------------------------------
# folders of partitions


def partition_order(name: str) -> tuple[list[int | str], str]:
    """Sort key of a partition file name: runs of digits compared as numbers, then the name."""
    # re.split with a group alternates text and digit runs, so positions compare like with like
    parts = _DIGITS.split(name)
    return [int(p) if i % 2 else p for i, p in enumerate(parts)], name


def partition_files(
    folder: str | os.PathLike[str], *, what: str, max_bytes: int
) -> tuple[Path, ...]:
    """The Parquet partition files of ``folder``, in the order their rows are joined.

    Nothing is read; the folder is listed and its files' sizes summed.

    Raises
    ------
    DataError
        An empty folder (or one holding only metadata files), a sub-folder, a file that is not
        named like a Parquet file (named, the first five), or partitions larger than
        ``max_bytes`` together.
    """
    root = Path(folder)
    try:
        entries = {p.name: p for p in root.iterdir()}
    except OSError as exc:
        raise DataError(f"{what}: the folder {str(root)!r} cannot be listed: {exc}") from exc
    files: list[str] = []
    folders: list[str] = []
    special: list[str] = []
    sizes: dict[str, int] = {}
    for name, path in entries.items():
        try:
            mode = path.stat()  # follows a link: what a reader would open
        except OSError as exc:
            raise DataError(f"{what}: {name!r} in {str(root)!r} cannot be read: {exc}") from exc
        if stat.S_ISDIR(mode.st_mode):
            folders.append(name)
        elif stat.S_ISREG(mode.st_mode):
            files.append(name)
            sizes[name] = mode.st_size
        elif not name.startswith(("_", ".")):
            special.append(name)
    if special:
        # opening a FIFO blocks until a writer comes, a device may never end: refused unread
        raise DataError(
            f"{what}: {str(root)!r} holds {_some(sorted(special, key=partition_order))}, which "
            "is not a regular file (a FIFO, socket or device); expected only Parquet partition "
            "files"
        )
    names = _checked_listing(files, folders, what=what, where=repr(str(root)))
    size = sum(sizes[name] for name in names)
    _check_size(size, len(names), what=what, where=repr(str(root)), max_bytes=max_bytes)
    return tuple(entries[name] for name in names)


def _checked_listing(
    files: Sequence[str], folders: Sequence[str], *, what: str, where: str
) -> list[str]:
    """The partition file names among a folder's ``files`` in join order (module docstring);
    ``folders`` are its sub-folders. ``where`` names the folder in messages."""
    # names starting with "_" or "." are writers' metadata (dask, pyarrow and Spark skip them)
    files = sorted((n for n in files if not n.startswith(("_", "."))), key=partition_order)
    folders = sorted((n for n in folders if not n.startswith(("_", "."))), key=partition_order)
    if folders:
        raise DataError(
            f"{what}: {where} holds the folder(s) {_some(folders)}; expected Parquet "
            f"partition files ({_suffixes()}) directly in the folder (nested or hive-style "
            "partition folders are not read)"
        )
    others = [n for n in files if not n.lower().endswith(PARTITION_SUFFIXES)]
    if others:
        raise DataError(
            f"{what}: {where} is a folder holding files that are not Parquet "
            f"partitions: {_some(others)}; expected only Parquet partition files "
            f"({_suffixes()}; names starting with '_' or '.' are skipped)"
        )
    if not files:
        raise DataError(
            f"{what}: {where} is a folder; expected a CSV, TSV or Parquet file, or a "
            f"folder of Parquet partition files ({_suffixes()}); got an empty folder"
        )
    return files


def _check_size(size: int, count: int, *, what: str, where: str, max_bytes: int) -> None:
    if size > max_bytes:
        raise DataError(
            f"{what}: the {count} partition files in {where} hold {size:,} bytes; "
            f"the limit is {max_bytes:,} bytes"
        )


def read_partition(
    path: str | os.PathLike[str], *, what: str, max_bytes: int, max_columns: int | None
) -> Partition:
    """Read and check one partition file (the task a worker runs; also run locally).

    Parameters
    ----------
    path : str or path
        The partition file, at a path this machine can read.
    what : str
        How error messages name the table; the partition's file name is added.
    max_bytes : int
        The file is refused when larger (it may have grown since the folder was listed).
    max_columns : int or None
        As :func:`read_parquet`.

    Raises
    ------
    DataError
        The file cannot be read here, is too large, does not start with the Parquet magic
        bytes, or fails a check of :func:`read_parquet`; the message names the partition.
    """
    path = Path(path)
    where = f"{what}: partition {path.name!r}"
    try:
        # O_NONBLOCK: a FIFO put there since the listing opens at once instead of waiting for a
        # writer, and is refused by the fstat below without a read
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise DataError(
                    f"{where} is not a regular file (a FIFO, socket or device); expected a "
                    "Parquet partition file"
                )
            data = handle.read()
    except OSError as exc:
        raise DataError(
            f"{where} cannot be read at {str(path)!r} ({exc.strerror or exc}); on a Dask "
            "cluster every worker must see the folder at this path"
        ) from exc
    return _partition(path.name, data, where=where, max_bytes=max_bytes, max_columns=max_columns)


def _partition(
    name: str, data: bytes, *, where: str, max_bytes: int, max_columns: int | None
) -> Partition:
    """One partition's bytes checked and read (a file on disk, or a file of an upload)."""
    if len(data) > max_bytes:
        raise DataError(f"{where} is {len(data):,} bytes; the limit is {max_bytes:,} bytes")
    if data[:4] != PARQUET_MAGIC:
        raise DataError(
            f"{where} is named like a Parquet file but does not start with the Parquet magic "
            "bytes 'PAR1'; the file is damaged or not Parquet"
        )
    table = _arrow_table(data, where, max_columns)
    return Partition(name, hashlib.sha256(data).hexdigest(), len(data), table)


def folder_sha256(partitions: Sequence[tuple[str, str]]) -> str:
    """The digest of a folder of partitions: sha256 of ``"<sha256>  <name>\\n"`` per partition.

    Parameters
    ----------
    partitions : sequence of (name, sha256)
        Every partition's file name and the hex sha256 of its bytes, in the order their rows
        are joined (:func:`partition_order`): what ``sha256sum`` prints for them, in order.
    """
    lines = "".join(f"{digest}  {name}\n" for name, digest in partitions)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def folder_digest(folder: str | os.PathLike[str], *, what: str, max_bytes: int) -> str:
    """:func:`folder_sha256` of the partition files of ``folder``, read here in blocks.

    The digest a review records for a table given as that folder (``synthreview verify
    --inputs`` checks a folder against it); nothing is parsed. Raises as
    :func:`partition_files`.
    """
    found = []
    for path in partition_files(folder, what=what, max_bytes=max_bytes):
        try:
            digest = file_sha256(path)  # in blocks, never the whole file
        except OSError as exc:
            raise DataError(
                f"{what}: partition {path.name!r} cannot be read ({exc.strerror or exc})"
            ) from exc
        found.append((path.name, digest))
    return folder_sha256(found)


def read_parquet_folder(
    folder: str | os.PathLike[str],
    *,
    what: str,
    label: str,
    max_bytes: int,
    max_columns: int | None,
    client: Any = None,
) -> ParquetFolder:
    """Read a folder of Parquet partitions as one table (module docstring).

    Parameters
    ----------
    folder : str or path
        The folder; its partition files are listed on this machine.
    what, label : str
        How messages and notices name the table.
    max_bytes : int
        Limit on the partition files' bytes together.
    max_columns : int or None
        As :func:`read_parquet`.
    client : distributed.Client, optional
        The partitions are read by its workers, one task per partition, at the same path
        (:func:`read_partition`); without one they are read here. The result is the same.

    Returns
    -------
    ParquetFolder

    Raises
    ------
    DataError
        Everything :func:`partition_files` and :func:`read_partition` refuse, and partitions
        whose columns differ (the first differing partition and column named).
    """
    files = partition_files(folder, what=what, max_bytes=max_bytes)
    options = {"what": what, "max_bytes": max_bytes, "max_columns": max_columns}
    if client is None:
        parts = [read_partition(path, **options) for path in files]
    else:
        # pure=False: a file may change between two reads, so equal paths must not share a key
        futures = client.map(read_partition, [str(p) for p in files], pure=False, **options)
        try:
            parts = client.gather(futures)
        finally:
            for future in futures:
                future.release()
    # the files may have grown after they were listed
    size = sum(p.size for p in parts)
    _check_size(size, len(parts), what=what, where=repr(str(folder)), max_bytes=max_bytes)
    return _joined(parts, what=what, label=label)


def _joined(parts: Sequence[Partition], *, what: str, label: str) -> ParquetFolder:
    """The partitions' rows as one table, in their order, under the folder digest."""
    schema = _common_schema(parts, what)
    # pandas metadata differs between partitions (each stores its own row range) and is not
    # read (to_pandas(ignore_metadata=True)): only names and types must agree
    arrow = pa.concat_tables([p.table.cast(schema) for p in parts])
    return ParquetFolder(
        frames=parquet_frames(arrow, what=what, label=label),
        sha256=folder_sha256([(p.name, p.sha256) for p in parts]),
        partitions=tuple(p.name for p in parts),
        size=sum(p.size for p in parts),
    )


@dataclass(frozen=True)
class UploadedFolder:
    """A folder sent as files, as a browser sends a folder upload (the dashboard's).

    Attributes
    ----------
    name : str
        The folder's name (the table's default name, as a folder on disk gives it).
    files : tuple of (str, bytes)
        Each file's path inside the folder (``"part.0.parquet"``; a file of a sub-folder
        ``"sub/part.0.parquet"``) and its bytes.
    """

    name: str
    files: tuple[tuple[str, bytes], ...] = field(repr=False)


def uploaded_folders(
    files: Sequence[tuple[str, bytes]], *, what: str
) -> tuple[UploadedFolder, ...]:
    """Files of a folder upload, as ``(relative path, bytes)``, grouped by their top folder.

    A browser names each file of an uploaded folder by its path from the folder it was picked
    in (``"ctgan/part.0.parquet"``); several folders uploaded into one widget arrive as one
    list. The folders keep the order of their first file.

    Raises
    ------
    DataError
        A file sent on its own, not inside a folder (named).
    """
    grouped: dict[str, list[tuple[str, bytes]]] = {}
    for path, data in files:
        top, sep, inside = path.replace("\\", "/").partition("/")
        if not sep or not top or not inside:
            raise DataError(
                f"{what}: {path!r} was sent as a file, not inside a folder; expected folders "
                f"of Parquet partition files ({_suffixes()})"
            )
        grouped.setdefault(top, []).append((inside, data))
    return tuple(UploadedFolder(name, tuple(found)) for name, found in grouped.items())


def uploaded_folder(files: Sequence[tuple[str, bytes]], *, what: str) -> UploadedFolder:
    """The one folder of a folder upload that must hold one (a real or holdout table).

    Raises
    ------
    DataError
        Files of more than one folder (named), or a file sent on its own.
    """
    found = uploaded_folders(files, what=what)
    if len(found) != 1:
        raise DataError(
            f"{what}: expected one folder of Parquet partitions; got {len(found)} folders: "
            f"{_some([f.name for f in found])}"
        )
    return found[0]


def read_uploaded_folder(
    folder: UploadedFolder, *, what: str, label: str, max_bytes: int, max_columns: int | None
) -> ParquetFolder:
    """An uploaded folder of Parquet partitions as one table: the same checks, order, table
    and digest as :func:`read_parquet_folder` gives for the folder on disk.

    Raises
    ------
    DataError
        As :func:`read_parquet_folder`; a file of a sub-folder counts as that sub-folder.
    """
    where = repr(folder.name)
    sub = {path.split("/", 1)[0] for path, _ in folder.files if "/" in path}
    by_name = {path: data for path, data in folder.files if "/" not in path}
    names = _checked_listing(list(by_name), list(sub), what=what, where=where)
    size = sum(len(by_name[n]) for n in names)
    _check_size(size, len(names), what=what, where=where, max_bytes=max_bytes)
    parts = [
        _partition(
            name,
            by_name[name],
            where=f"{what}: partition {name!r}",
            max_bytes=max_bytes,
            max_columns=max_columns,
        )
        for name in names
    ]
    return _joined(parts, what=what, label=label)


def _common_schema(parts: Sequence[Partition], what: str) -> pa.Schema:
    """The first partition's columns (nullable, no metadata); every partition must match."""
    first = parts[0]
    expected = first.table.schema
    names = expected.names
    for part in parts[1:]:
        got = part.table.schema
        for i in range(max(len(expected), len(got))):
            want = expected.field(i) if i < len(expected) else None
            have = got.field(i) if i < len(got) else None
            if want is not None and have is not None and want.name == have.name:
                if not _joinable(want.type, have.type):
                    raise DataError(
                        f"{what}: partition {part.name!r} column {have.name!r} is "
                        f"{have.type}; expected {want.type} as in partition {first.name!r} "
                        "(every partition must hold the same columns with the same types)"
                    )
                continue
            if have is None or (want is not None and want.name not in got.names):
                assert want is not None  # the longer schema's column is the missing one
                problem = f"lacks column {want.name!r} of partition {first.name!r}"
            elif want is None or have.name not in names:
                problem = f"has column {have.name!r}, which partition {first.name!r} lacks"
            else:  # the same names in another order
                problem = (
                    f"has column {have.name!r} in position {i + 1}, where partition "
                    f"{first.name!r} has {want.name!r}"
                )
            raise DataError(
                f"{what}: partition {part.name!r} {problem}; expected the same columns in the "
                "same order in every partition"
            )
    return pa.schema([pa.field(name, _joined_type(parts, name)) for name in names])


def _joinable(a: pa.DataType, b: pa.DataType) -> bool:
    """Whether partitions typed ``a`` and ``b`` hold one column: the same type, text as string
    in one and large_string in another, or a partition where the column is missing on every row
    (Arrow's ``null`` type: a writer cannot tell its type from no values)."""
    return a == b or pa.types.is_null(a) or pa.types.is_null(b) or _both_text(a, b)


def _joined_type(parts: Sequence[Partition], name: str) -> pa.DataType:
    """The type column ``name`` is joined as: its partitions' type where some value is present;
    text as ``large_string`` if any partition stored it so (it holds any of them)."""
    types = [p.table.schema.field(name).type for p in parts]
    present = [t for t in types if not pa.types.is_null(t)]
    if not present:
        return pa.null()
    if any(pa.types.is_large_string(t) for t in present):
        return pa.large_string()
    return present[0]


def _both_text(a: pa.DataType, b: pa.DataType) -> bool:
    return all(pa.types.is_string(t) or pa.types.is_large_string(t) for t in (a, b))


def _suffixes() -> str:
    return ", ".join(f"*{s}" for s in PARTITION_SUFFIXES)


def _some(names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


__all__ = [
    "PARQUET_MAGIC",
    "PARTITION_SUFFIXES",
    "ParquetFolder",
    "ParquetFrames",
    "Partition",
    "UploadedFolder",
    "folder_digest",
    "folder_sha256",
    "parquet_frames",
    "partition_files",
    "partition_order",
    "read_parquet",
    "read_parquet_folder",
    "read_partition",
    "read_uploaded_folder",
    "uploaded_folder",
    "uploaded_folders",
]
