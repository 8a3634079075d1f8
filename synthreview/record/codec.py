"""Lossless JSON for the review record: every result dataclass, array and table, read back typed.

A review record may come from anyone, so it is read from JSON only (never pickle) and only into
the classes a record can hold. :func:`to_record_json` writes a value as JSON-ready data in which
every value that JSON cannot spell is tagged by one reserved key:

==================  ============================================================================
``__float__``       ``"nan"``, ``"inf"`` or ``"-inf"``
``__tuple__``       a tuple's items (a list stays a list)
``__items__``       a mapping with keys that are not all strings, as ``[key, value]`` pairs
``__datetime__``    ISO 8601
``__ndarray__``     ``dtype``, ``shape`` and the bytes in base64 (object arrays: the items)
``__frame__``       a DataFrame: column labels, index, each column's values and ``attrs``
``__series__``      a Series; ``__index__`` an Index
``__table__``       an :class:`~synthreview.io.schema.LoadedTable` (typed frame and cells)
``__class__``       a dataclass: ``module:QualName`` and its fields
==================  ============================================================================

Columns of pandas' masked dtypes (``Int64``, ``boolean``, ``Float64``) are held as their values
and mask, and text columns (``str``, ``string``) as their lengths and UTF-8 bytes (Arrow's
layout), so that a million-row table is arrays, not a million JSON strings. An array of
:data:`BLOB_BYTES` or more is held once, in a table of blobs named by the sha256 of its bytes
(``{"__root__": value, "__sizes__": [[sha256, bytes], ...], "__blobs__": {sha256: base64}}``,
the table last), wherever and however often it occurs: a curated table and the candidate table
it is cut from share their columns. A reader can find every blob from ``__sizes__`` without
parsing the table (:class:`BlobTable`, ``record.store``).

:func:`from_jsonable` reads it back into ``cls``: a tagged dataclass only when its class is one
that a ``cls`` value can hold (found by walking the dataclass fields' type hints from ``cls``),
with exactly its fields, each checked against its type hint. Numbers come back bit for bit
(arrays as their bytes, floats through ``repr``), so ``to_record_json(from_jsonable(cls,
to_record_json(x))) == to_record_json(x)`` for every recordable value.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import math
import types
import typing
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from synthreview.errors import DataError
from synthreview.io.schema import LoadedTable, Notice

__all__ = [
    "BLOBS",
    "BLOB_BYTES",
    "BlobTable",
    "RecordFormatError",
    "blob_text_size",
    "from_jsonable",
    "recordable_classes",
    "to_record_json",
]

_TAGS = (
    "__float__",
    "__tuple__",
    "__items__",
    "__datetime__",
    "__ndarray__",
    "__frame__",
    "__series__",
    "__index__",
    "__table__",
    "__class__",
)
#: numpy dtype kinds held as raw bytes (bool, integers, floats, complex, text, times)
_BYTE_KINDS = frozenset("biufcUSmM")
#: arrays of at least this many bytes are held once, in the blob table (smaller ones inline)
BLOB_BYTES = 1 << 16
#: the keys of a value that holds blobs: the value, the blobs' sizes, the blobs (last)
ROOT, SIZES, BLOBS = "__root__", "__sizes__", "__blobs__"
#: pandas' masked arrays by the kind of their values' dtype
_MASKED = {
    "b": pd.arrays.BooleanArray,
    "i": pd.arrays.IntegerArray,
    "u": pd.arrays.IntegerArray,
    "f": pd.arrays.FloatingArray,
}


class RecordFormatError(DataError):
    """A record file that is not what a synthreview record writes (message names the place)."""


# --------------------------------------------------------------------------------- writing


def _skipped(field: dataclasses.Field[Any]) -> bool:
    """Fields outside a value's identity that its class rebuilds (a fitted context, a memo)."""
    has_default = (
        field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
    )
    return not field.compare and has_default


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def blob_text_size(n_bytes: int) -> int:
    """Characters of the base64 text of ``n_bytes`` bytes (how a blob is held in the table)."""
    return 4 * ((n_bytes + 2) // 3)


def _unsigned(values: np.ndarray) -> np.ndarray:
    """Non-negative integers in the smallest unsigned dtype that holds them."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.uint64)


class _Writer:
    """:func:`to_record_json`'s state: the blobs met so far, by sha256, in the order met."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def array(self, values: np.ndarray) -> dict[str, Any]:
        if values.dtype.kind in _BYTE_KINDS:
            data = np.ascontiguousarray(values)
            raw = data.tobytes()
            body: dict[str, Any] = {"dtype": data.dtype.str, "shape": list(data.shape)}
            if len(raw) >= BLOB_BYTES:
                digest = hashlib.sha256(raw).hexdigest()
                self.blobs.setdefault(digest, raw)
                body["blob"] = digest
            else:
                body["data"] = _b64(raw)
            return {"__ndarray__": body}
        if values.dtype.kind != "O":
            raise TypeError(f"arrays of dtype {values.dtype} cannot be recorded")
        return {
            "__ndarray__": {
                "dtype": "object",
                "shape": list(values.shape),
                "items": [self.value(v) for v in values.reshape(-1).tolist()],
            }
        }

    def text(self, values: Any, dtype: pd.StringDtype) -> dict[str, Any]:
        """A text column as Arrow lays it out: each cell's byte length, the UTF-8 bytes, and
        which cells are missing (a bitmap, absent when none is)."""
        arrow = pa.array(values, type=pa.large_string(), from_pandas=True)
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        n = len(arrow)
        _, offsets_buffer, data_buffer = arrow.buffers()
        offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[arrow.offset : arrow.offset + n + 1]
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else None
        first, last = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
        text = data[first:last] if data is not None else np.empty(0, dtype=np.uint8)
        missing = None
        if arrow.null_count:
            valid = np.asarray(arrow.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            missing = self.array(np.packbits(valid, bitorder="little"))
        return {
            "dtype": str(dtype),
            "storage": str(dtype.storage),
            "text": {
                "lengths": self.array(_unsigned(np.diff(offsets))),
                "bytes": self.array(text),
                "valid": missing,
            },
        }

    def column(self, values: pd.Series | pd.Index) -> dict[str, Any]:
        """A column's values with its dtype: numpy dtypes as arrays, pandas' own dtypes spelled
        out (masked arrays as values and mask, text as Arrow's layout, others item by item)."""
        dtype = values.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            cat = pd.Categorical(values)
            return {
                "dtype": "category",
                "ordered": bool(dtype.ordered),
                "categories": self.index(pd.Index(dtype.categories)),
                "codes": self.array(np.asarray(cat.codes)),
            }
        if isinstance(dtype, np.dtype):
            return {"dtype": "numpy", "values": self.array(np.asarray(values))}
        array = values.array
        if isinstance(array, tuple(_MASKED.values())):
            numpy_dtype = array.dtype.numpy_dtype
            data = array.to_numpy(dtype=numpy_dtype, na_value=numpy_dtype.type(0))
            mask = np.asarray(array.isna(), dtype=bool)
            return {
                "dtype": str(dtype),
                "masked": {"values": self.array(data), "mask": self.array(mask)},
            }
        if isinstance(dtype, pd.StringDtype):
            return self.text(array, dtype)
        # other extension dtypes: the values and where they are NA
        mask = np.asarray(pd.isna(values), dtype=bool)
        items = [None if m else self.value(v) for v, m in zip(values.tolist(), mask, strict=True)]
        return {"dtype": str(dtype), "items": items}

    def index(self, index: pd.Index) -> dict[str, Any]:
        if isinstance(index, pd.RangeIndex):
            return {
                "__index__": {
                    "range": [index.start, index.stop, index.step],
                    "name": self.value(index.name),
                }
            }
        if isinstance(index, pd.MultiIndex):
            raise TypeError("a MultiIndex cannot be recorded")
        return {"__index__": {"values": self.column(index), "name": self.value(index.name)}}

    def frame(self, frame: pd.DataFrame) -> dict[str, Any]:
        return {
            "__frame__": {
                "columns": self.index(frame.columns),
                "index": self.index(frame.index),
                "data": [self.column(frame.iloc[:, i]) for i in range(frame.shape[1])],
                "attrs": self.value(dict(frame.attrs)),
            }
        }

    def value(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            return _float(float(obj))
        if isinstance(obj, datetime):
            return {"__datetime__": obj.isoformat()}
        if isinstance(obj, np.ndarray):
            return self.array(obj)
        if isinstance(obj, pd.DataFrame):
            return self.frame(obj)
        if isinstance(obj, pd.Series):
            return {
                "__series__": {
                    "values": self.column(obj),
                    "index": self.index(obj.index),
                    "name": self.value(obj.name),
                }
            }
        if isinstance(obj, pd.Index):
            return self.index(obj)
        if isinstance(obj, LoadedTable):
            # the cells as written, not their compact form: a reader rebuilds that from them
            return {
                "__table__": {
                    "name": obj.name,
                    "role": obj.role,
                    "frame": self.frame(obj.frame),
                    "raw": self.frame(obj.raw),
                    "sha256": obj.sha256,
                    "source_format": obj.source_format,
                    "delimiter": obj.delimiter,
                    "encoding": obj.encoding,
                    "notices": self.value(obj.notices),
                }
            }
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            cls = type(obj)
            fields = {
                f.name: self.value(getattr(obj, f.name))
                for f in dataclasses.fields(obj)
                if not _skipped(f)
            }
            return {"__class__": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.value(v) for v in obj]}
        if isinstance(obj, list):
            return [self.value(v) for v in obj]
        if isinstance(obj, Mapping):
            keys = list(obj)
            if all(isinstance(k, str) and not k.startswith("__") for k in keys):
                return {k: self.value(v) for k, v in obj.items()}
            return {"__items__": [[self.value(k), self.value(v)] for k, v in obj.items()]}
        if isinstance(obj, (set, frozenset)):
            raise TypeError("sets cannot be recorded (their order is not defined)")
        raise TypeError(f"a {type(obj).__module__}.{type(obj).__qualname__} cannot be recorded")


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"__float__": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def to_record_json(obj: Any) -> Any:
    """``obj`` as JSON-ready data that :func:`from_jsonable` reads back to an equal value.

    Arrays of :data:`BLOB_BYTES` or more are held once each, in a blob table after the value
    (``{"__root__": ..., "__sizes__": ..., "__blobs__": ...}``); a value without one is
    returned as it is.

    Raises
    ------
    TypeError
        A value the record cannot hold (a fitted model, a MultiIndex, an arbitrary object).
    """
    writer = _Writer()
    value = writer.value(obj)
    if not writer.blobs:
        return value
    return {
        ROOT: value,
        SIZES: [[digest, len(data)] for digest, data in writer.blobs.items()],
        BLOBS: {digest: _b64(data) for digest, data in writer.blobs.items()},
    }


# --------------------------------------------------------------------------------- reading


def _hint_classes(hint: Any, found: dict[str, type]) -> None:
    origin = typing.get_origin(hint)
    if origin is not None:
        for arg in typing.get_args(hint):
            _hint_classes(arg, found)
        return
    if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        return
    name = f"{hint.__module__}:{hint.__qualname__}"
    if name in found:
        return
    found[name] = hint
    hints = _hints(hint)
    for field in dataclasses.fields(hint):
        if not _skipped(field):
            _hint_classes(hints[field.name], found)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@cache
def _classes(root: type) -> dict[str, type]:
    found: dict[str, type] = {}
    _hint_classes(root, found)
    return found


def recordable_classes(root: type) -> dict[str, type]:
    """Every dataclass a ``root`` value can hold (``root`` included), by ``module:QualName``.

    Found by walking the dataclass fields' type hints; these are the only classes
    :func:`from_jsonable` builds from a record of ``root``.
    """
    return dict(_classes(root))


class BlobTable:
    """A record's blob table: each blob's base64 text by sha256, decoded once, on first use.

    Parameters
    ----------
    sizes : sequence of [sha256, bytes] pairs
        The table's ``__sizes__``: every blob and its length once decoded.
    texts : mapping of str to str or bytes-like
        sha256 -> the blob's base64 text (the table's ``__blobs__``, or a reader of it that
        fetches each text from the file when asked, as ``record.store`` does).
    where : str
        Where the table was read from, for messages.

    Every blob is checked when decoded: strict base64, its stated length and its sha256.
    """

    def __init__(self, sizes: Any, texts: Mapping[str, Any], *, where: str = "record") -> None:
        if not isinstance(sizes, list) or not all(
            isinstance(p, list)
            and len(p) == 2
            and isinstance(p[0], str)
            and isinstance(p[1], int)
            and not isinstance(p[1], bool)
            and p[1] >= 0
            for p in sizes
        ):
            shown = repr(sizes)[:77]
            raise RecordFormatError(
                f"record {where} {SIZES} must be [sha256, bytes] pairs; got {shown} instead"
            )
        self.sizes: dict[str, int] = dict(sizes)
        self.texts = texts
        self.where = where
        self._arrays: dict[tuple[str, str, tuple[int, ...]], np.ndarray] = {}

    def array(
        self, digest: Any, dtype: np.dtype, shape: tuple[int, ...], *, shared: bool = False
    ) -> np.ndarray:
        """The blob ``digest`` as an array of ``dtype`` and ``shape``.

        ``shared``: the same array each time it is asked for so (a blob a record holds twice is
        then one array in memory); only for arrays that pandas wraps, whose copy-on-write keeps
        a change to one table out of the other. Otherwise a new array each time.
        """
        key = (str(digest), dtype.str, shape)
        if key in self._arrays:
            return self._arrays[key] if shared else self._arrays[key].copy()
        if digest not in self.sizes:
            raise RecordFormatError(
                f"record {self.where} must hold blob {str(digest)[:64]!r} in its table; it does not"
            )
        try:
            raw = binascii.a2b_base64(self.texts[digest], strict_mode=True)
        except (binascii.Error, TypeError, KeyError) as exc:
            raise RecordFormatError(
                f"record {self.where} blob {digest} must be base64; it could not be read ({exc})"
            ) from None
        if len(raw) != self.sizes[digest] or hashlib.sha256(raw).hexdigest() != digest:
            raise RecordFormatError(
                f"record {self.where} blob {digest} must have that sha256 and "
                f"{self.sizes[digest]} bytes; it has {len(raw)} bytes of another digest"
            )
        # a writable copy, as every array a record gives back (the text and bytes go)
        out = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        if shared:
            self._arrays[key] = out
        return out


class _Reader:
    def __init__(self, root: type, extra: tuple[type, ...], blobs: BlobTable | None = None) -> None:
        self.allowed = dict(_classes(root))
        for cls in extra:
            self.allowed.update(_classes(cls))
        self.blobs = blobs
        #: one Series per shared column array: the tables that hold it are views of it, so
        #: pandas' copy-on-write keeps a change to one table out of the others
        self.bases: dict[int, pd.Series] = {}

    def fail(self, where: str, expected: str, data: Any) -> RecordFormatError:
        shown = repr(data)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return RecordFormatError(f"record {where} must be {expected}; got {shown} instead")

    # untyped values: tags say what they are
    def value(self, data: Any, where: str) -> Any:
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if isinstance(data, list):
            return [self.value(v, f"{where}[{i}]") for i, v in enumerate(data)]
        if not isinstance(data, dict):
            raise self.fail(where, "JSON", data)
        tag = next((t for t in _TAGS if t in data), None)
        if tag is None:
            return {str(k): self.value(v, f"{where}.{k}") for k, v in data.items()}
        if len(data) != (2 if tag == "__class__" else 1):
            raise self.fail(where, f"one {tag} entry", data)
        body = data[tag]
        return (
            getattr(self, tag.strip("_"))(body, where)
            if tag != "__class__"
            else (self.dataclass(data, where, None))
        )

    def float(self, body: Any, where: str) -> float:
        spelled = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
        if body not in spelled:
            raise self.fail(where, "'nan', 'inf' or '-inf'", body)
        return spelled[body]

    def tuple(self, body: Any, where: str) -> tuple[Any, ...]:
        if not isinstance(body, list):
            raise self.fail(where, "a list of tuple items", body)
        return tuple(self.value(v, f"{where}[{i}]") for i, v in enumerate(body))

    def items(self, body: Any, where: str) -> dict[Any, Any]:
        if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2 for p in body):
            raise self.fail(where, "a list of [key, value] pairs", body)
        return {self.value(k, f"{where} key"): self.value(v, f"{where}[{k!r}]") for k, v in body}

    def datetime(self, body: Any, where: str) -> datetime:
        try:
            return datetime.fromisoformat(body)
        except (TypeError, ValueError):
            raise self.fail(where, "an ISO 8601 time", body) from None

    def ndarray(self, body: Any, where: str, *, shared: bool = False) -> np.ndarray:
        if not isinstance(body, dict) or not isinstance(body.get("shape"), list):
            raise self.fail(where, "an array (dtype, shape, data)", body)
        shape = tuple(int(n) for n in body["shape"])
        if body.get("dtype") == "object":
            items = [self.value(v, f"{where}[{i}]") for i, v in enumerate(body.get("items", []))]
            out = np.empty(len(items), dtype=object)
            out[:] = items
            return out.reshape(shape)
        try:
            dtype = np.dtype(str(body["dtype"]))
            if dtype.kind not in _BYTE_KINDS:
                raise TypeError(dtype)
            if "blob" in body:
                if self.blobs is None:
                    raise self.fail(where, "an array inline (no blob table is at hand)", body)
                return self.blobs.array(body["blob"], dtype, shape, shared=shared)
            raw = base64.b64decode(str(body["data"]), validate=True)
            return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        except (TypeError, ValueError, KeyError) as exc:
            raise self.fail(where, f"a readable array ({exc})", body) from None

    def column(self, body: Any, where: str) -> Any:
        if not isinstance(body, dict):
            raise self.fail(where, "a column", body)
        kind = body.get("dtype")
        if kind == "numpy":
            values = body.get("values")
            if isinstance(values, dict) and "__ndarray__" in values:
                return self.ndarray(values["__ndarray__"], where, shared=True)
            return self.value(values, where)
        if kind == "category":
            categories = self.index(body.get("categories", {}).get("__index__"), where)
            codes = self.ndarray(body.get("codes", {}).get("__ndarray__"), where)
            return pd.Categorical.from_codes(
                codes, categories=categories, ordered=bool(body.get("ordered"))
            )
        if "masked" in body:
            return self.masked(kind, body["masked"], where)
        if "text" in body:
            return self.text(kind, body, where)
        items = body.get("items")
        if not isinstance(kind, str) or not isinstance(items, list):
            raise self.fail(where, "a column (dtype and items)", body)
        try:
            return pd.array([self.value(v, where) for v in items], dtype=kind)
        except (TypeError, ValueError) as exc:
            raise self.fail(where, f"a column of dtype {kind} ({exc})", body) from None

    def inner_array(self, data: Any, where: str) -> np.ndarray:
        if not isinstance(data, dict) or "__ndarray__" not in data:
            raise self.fail(where, "an array", data)
        return self.ndarray(data["__ndarray__"], where)

    def masked(self, kind: Any, body: Any, where: str) -> Any:
        if not isinstance(body, dict):
            raise self.fail(where, "a masked column (values and mask)", body)
        values = self.inner_array(body.get("values"), f"{where} values")
        mask = self.inner_array(body.get("mask"), f"{where} mask")
        make = _MASKED.get(values.dtype.kind)
        if make is None or mask.dtype != bool or mask.shape != values.shape:
            raise self.fail(where, "a masked column (values and a mask of their shape)", kind)
        column = make(values, mask)
        if str(column.dtype) != kind:
            raise self.fail(where, f"a column of dtype {column.dtype}", kind)
        return column

    def text(self, kind: Any, body: Any, where: str) -> Any:
        parts = body.get("text")
        storage = body.get("storage")
        if kind not in ("str", "string") or storage not in ("pyarrow", "python"):
            raise self.fail(where, "a text column of dtype str or string", kind)
        if not isinstance(parts, dict):
            raise self.fail(where, "a text column (lengths, bytes, valid)", parts)
        lengths = self.inner_array(parts.get("lengths"), f"{where} lengths")
        data = self.inner_array(parts.get("bytes"), f"{where} bytes")
        if lengths.ndim != 1 or lengths.dtype.kind != "u" or data.dtype != np.uint8:
            raise self.fail(where, "text lengths (unsigned) and bytes (uint8)", parts)
        n = len(lengths)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, dtype=np.int64, out=offsets[1:])
        if offsets[-1] != len(data):
            raise self.fail(where, f"{offsets[-1]} text bytes", f"{len(data)} bytes")
        bitmap, nulls = None, 0
        if parts.get("valid") is not None:
            packed = self.inner_array(parts["valid"], f"{where} valid")
            valid = np.unpackbits(packed, count=n, bitorder="little").astype(bool)
            bitmap, nulls = (
                pa.py_buffer(np.packbits(valid, bitorder="little")),
                int(n - valid.sum()),
            )
        arrow = pa.LargeStringArray.from_buffers(
            n, pa.py_buffer(offsets), pa.py_buffer(data), bitmap, nulls
        )
        arrow.validate(full=True)  # offsets in order, UTF-8 only
        dtype = pd.StringDtype(storage, na_value=np.nan if kind == "str" else pd.NA)
        if storage == "pyarrow":
            return pd.arrays.ArrowStringArray(pa.chunked_array([arrow]), dtype=dtype)
        return pd.array(arrow.to_numpy(zero_copy_only=False), dtype=dtype)

    def index(self, body: Any, where: str) -> pd.Index:
        if not isinstance(body, dict):
            raise self.fail(where, "an index", body)
        name = self.value(body.get("name"), where)
        if "range" in body:
            start, stop, step = (int(v) for v in body["range"])
            return pd.RangeIndex(start, stop, step, name=name)
        values = self.column(body.get("values"), where)
        return pd.Index(values, name=name, dtype=getattr(values, "dtype", None))

    def frame(self, body: Any, where: str) -> pd.DataFrame:
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            raise self.fail(where, "a table (columns, index, data)", body)
        columns = self.index(body.get("columns", {}).get("__index__"), f"{where} columns")
        index = self.index(body.get("index", {}).get("__index__"), f"{where} index")
        data = [self.column(c, f"{where} column {i}") for i, c in enumerate(body["data"])]
        if len(data) != len(columns):
            raise self.fail(where, f"{len(columns)} columns", f"{len(data)} columns")
        # no copy: a column held twice in the record (a curated table and the rows it was cut
        # from) is one array in memory, which a million-row record cannot afford twice
        frame = pd.DataFrame(
            {i: self.shared_column(v, index) for i, v in enumerate(data)}, index=index, copy=False
        )
        frame.columns = columns
        attrs = self.value(body.get("attrs", {}), f"{where} attrs")
        frame.attrs.update(attrs if isinstance(attrs, dict) else {})
        return frame

    def shared_column(self, values: Any, index: pd.Index) -> pd.Series:
        if not isinstance(values, np.ndarray) or values.ndim != 1:
            return pd.Series(values, index=index, copy=False)
        if id(values) not in self.bases:  # the array stays alive in the blob table
            self.bases[id(values)] = pd.Series(values, copy=False)
        return self.bases[id(values)].set_axis(index)

    def series(self, body: Any, where: str) -> pd.Series:
        if not isinstance(body, dict):
            raise self.fail(where, "a series", body)
        index = self.index(body.get("index", {}).get("__index__"), where)
        values = self.column(body.get("values"), where)
        return pd.Series(values, index=index, name=self.value(body.get("name"), where))

    def table(self, body: Any, where: str) -> LoadedTable:
        if not isinstance(body, dict):
            raise self.fail(where, "a loaded table", body)
        notices = self.value(body.get("notices"), where)
        if not isinstance(notices, tuple) or not all(isinstance(n, Notice) for n in notices):
            raise self.fail(where, "a table with a tuple of notices", body.get("notices"))
        return LoadedTable(
            str(body.get("name")),
            str(body.get("role")),
            self.frame(body.get("frame", {}).get("__frame__"), f"{where} frame"),
            raw=self.frame(body.get("raw", {}).get("__frame__"), f"{where} cells"),
            sha256=str(body.get("sha256")),
            source_format=str(body.get("source_format")),
            delimiter=body.get("delimiter"),
            encoding=body.get("encoding"),
            notices=notices,
        )

    def dataclass(self, data: dict[str, Any], where: str, expected: type | None) -> Any:
        name = data.get("__class__")
        cls = self.allowed.get(name) if isinstance(name, str) else None
        if cls is None:
            raise self.fail(where, "a class a review record holds", name)
        if expected is not None and not issubclass(cls, expected):
            raise self.fail(where, f"a {expected.__qualname__}", name)
        given = data.get("fields")
        if not isinstance(given, dict):
            raise self.fail(where, f"the fields of {cls.__qualname__}", given)
        fields = [f for f in dataclasses.fields(cls) if not _skipped(f)]
        known = {f.name for f in fields}
        unknown = sorted(set(given) - known)
        if unknown:
            raise self.fail(f"{where} ({cls.__qualname__})", f"fields of {sorted(known)}", unknown)
        hints = _hints(cls)
        values: dict[str, Any] = {}
        for field in fields:
            at = f"{where}.{field.name}"
            if field.name not in given:
                if field.default is dataclasses.MISSING and (
                    field.default_factory is dataclasses.MISSING
                ):
                    raise self.fail(at, f"given ({cls.__qualname__} needs it)", None)
                continue
            values[field.name] = self.typed(hints[field.name], given[field.name], at)
        init = {k: v for k, v in values.items() if next(f for f in fields if f.name == k).init}
        obj = cls(**init)
        for key, value in values.items():
            if key not in init:
                object.__setattr__(obj, key, value)
        return obj

    # typed values: the hint checks what the tags built
    def typed(self, hint: Any, data: Any, where: str) -> Any:
        if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(data, dict):
            if "__class__" in data:
                return self.dataclass(data, where, hint)
        value = self.value(data, where)
        if not _conforms(value, hint):
            raise self.fail(where, f"of type {_spell(hint)}", data)
        return value


def _spell(hint: Any) -> str:
    return getattr(hint, "__qualname__", None) or str(hint).replace("typing.", "")


def _conforms(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of type ``hint`` (containers checked item by item)."""
    if hint is Any or hint is object:
        return True
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_conforms(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if hint is type(None) or hint is None:
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is None:
        if isinstance(hint, type):
            return isinstance(value, hint)
        return True  # a forward name or type variable: the tags built the value
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_conforms(v, args[0]) for v in value)
        return len(args) == len(value) and all(
            _conforms(v, a) for v, a in zip(value, args, strict=True)
        )
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value[:1000])
    if origin in (dict, Mapping) or (isinstance(origin, type) and issubclass(origin, Mapping)):
        if not isinstance(value, Mapping):
            return False
        if not args:
            return True
        return all(_conforms(k, args[0]) and _conforms(v, args[1]) for k, v in value.items())
    return isinstance(origin, type) and isinstance(value, origin)


def from_jsonable(
    cls: type,
    data: Any,
    *,
    where: str = "",
    extra: tuple[type, ...] = (),
    blobs: BlobTable | None = None,
) -> Any:
    """Read :func:`to_record_json` data back into a ``cls`` value.

    Parameters
    ----------
    cls : type
        A dataclass (or any type hint a record field has).
    data : JSON-ready value
        As :func:`to_record_json` wrote it, e.g. parsed from ``record.json``.
    where : str
        Where ``data`` was read from, for messages.
    extra : tuple of type
        More dataclasses whose classes may appear where a field is typed ``Any``.
    blobs : BlobTable, optional
        The blob table of the record ``data`` is part of (when ``data`` is not the whole
        :func:`to_record_json` value with its table).

    Raises
    ------
    RecordFormatError
        ``data`` is not a ``cls`` value as a record writes it: the message names the place,
        what was expected and what was found. No other class than those
        :func:`recordable_classes` finds from ``cls`` (and ``extra``) is ever built.
    """
    at = where or cls.__qualname__
    if isinstance(data, dict) and ROOT in data and BLOBS in data and blobs is None:
        if set(data) != {ROOT, SIZES, BLOBS} or not isinstance(data[BLOBS], dict):
            raise RecordFormatError(
                f"record {at} must be a value and its blob table; got {sorted(data)} instead"
            )
        blobs = BlobTable(data[SIZES], data[BLOBS], where=at)
        data = data[ROOT]
    reader = _Reader(cls, extra, blobs)
    try:
        return reader.typed(cls, data, at)
    except RecordFormatError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise RecordFormatError(f"record {at} could not be read: {exc}") from None
