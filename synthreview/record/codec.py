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

:func:`from_jsonable` reads it back into ``cls``: a tagged dataclass only when its class is one
that a ``cls`` value can hold (found by walking the dataclass fields' type hints from ``cls``),
with exactly its fields, each checked against its type hint. Numbers come back bit for bit
(arrays as their bytes, floats through ``repr``), so ``to_record_json(from_jsonable(cls,
to_record_json(x))) == to_record_json(x)`` for every recordable value.
"""

from __future__ import annotations

import base64
import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.io.schema import LoadedTable, Notice

__all__ = ["RecordFormatError", "from_jsonable", "recordable_classes", "to_record_json"]

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


class RecordFormatError(DataError):
    """A record file that is not what a synthreview record writes (message names the place)."""


# --------------------------------------------------------------------------------- writing


def _skipped(field: dataclasses.Field[Any]) -> bool:
    """Fields outside a value's identity that its class rebuilds (a fitted context, a memo)."""
    has_default = (
        field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
    )
    return not field.compare and has_default


def _array(values: np.ndarray) -> dict[str, Any]:
    if values.dtype.kind in _BYTE_KINDS:
        data = np.ascontiguousarray(values)
        return {
            "__ndarray__": {
                "dtype": data.dtype.str,
                "shape": list(data.shape),
                "data": base64.b64encode(data.tobytes()).decode("ascii"),
            }
        }
    if values.dtype.kind != "O":
        raise TypeError(f"arrays of dtype {values.dtype} cannot be recorded")
    return {
        "__ndarray__": {
            "dtype": "object",
            "shape": list(values.shape),
            "items": [to_record_json(v) for v in values.reshape(-1).tolist()],
        }
    }


def _column(values: pd.Series | pd.Index) -> dict[str, Any]:
    """A column's values with its dtype: numpy dtypes as arrays, pandas' own dtypes spelled out."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cat = pd.Categorical(values)
        return {
            "dtype": "category",
            "ordered": bool(dtype.ordered),
            "categories": _index(pd.Index(dtype.categories)),
            "codes": _array(np.asarray(cat.codes)),
        }
    if isinstance(dtype, np.dtype):
        return {"dtype": "numpy", "values": _array(np.asarray(values))}
    # extension dtypes (string, Int64, boolean, Float64, ...): the values and where they are NA
    mask = np.asarray(pd.isna(values), dtype=bool)
    items = [None if m else to_record_json(v) for v, m in zip(values.tolist(), mask, strict=True)]
    return {"dtype": str(dtype), "items": items}


def _index(index: pd.Index) -> dict[str, Any]:
    if isinstance(index, pd.RangeIndex):
        return {
            "__index__": {
                "range": [index.start, index.stop, index.step],
                "name": to_record_json(index.name),
            }
        }
    if isinstance(index, pd.MultiIndex):
        raise TypeError("a MultiIndex cannot be recorded")
    return {"__index__": {"values": _column(index), "name": to_record_json(index.name)}}


def _frame(frame: pd.DataFrame) -> dict[str, Any]:
    return {
        "__frame__": {
            "columns": _index(frame.columns),
            "index": _index(frame.index),
            "data": [_column(frame.iloc[:, i]) for i in range(frame.shape[1])],
            "attrs": to_record_json(dict(frame.attrs)),
        }
    }


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"__float__": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def to_record_json(obj: Any) -> Any:
    """``obj`` as JSON-ready data that :func:`from_jsonable` reads back to an equal value.

    Raises
    ------
    TypeError
        A value the record cannot hold (a fitted model, a MultiIndex, an arbitrary object).
    """
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
        return _array(obj)
    if isinstance(obj, pd.DataFrame):
        return _frame(obj)
    if isinstance(obj, pd.Series):
        return {
            "__series__": {
                "values": _column(obj),
                "index": _index(obj.index),
                "name": to_record_json(obj.name),
            }
        }
    if isinstance(obj, pd.Index):
        return _index(obj)
    if isinstance(obj, LoadedTable):
        # the cells as written, not their compact form: a reader rebuilds that from them
        return {
            "__table__": {
                "name": obj.name,
                "role": obj.role,
                "frame": _frame(obj.frame),
                "raw": _frame(obj.raw),
                "sha256": obj.sha256,
                "source_format": obj.source_format,
                "delimiter": obj.delimiter,
                "encoding": obj.encoding,
                "notices": to_record_json(obj.notices),
            }
        }
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        cls = type(obj)
        fields = {
            f.name: to_record_json(getattr(obj, f.name))
            for f in dataclasses.fields(obj)
            if not _skipped(f)
        }
        return {"__class__": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    if isinstance(obj, tuple):
        return {"__tuple__": [to_record_json(v) for v in obj]}
    if isinstance(obj, list):
        return [to_record_json(v) for v in obj]
    if isinstance(obj, Mapping):
        keys = list(obj)
        if all(isinstance(k, str) and not k.startswith("__") for k in keys):
            return {k: to_record_json(v) for k, v in obj.items()}
        return {"__items__": [[to_record_json(k), to_record_json(v)] for k, v in obj.items()]}
    if isinstance(obj, (set, frozenset)):
        raise TypeError("sets cannot be recorded (their order is not defined)")
    raise TypeError(f"a {type(obj).__module__}.{type(obj).__qualname__} cannot be recorded")


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


class _Reader:
    def __init__(self, root: type, extra: tuple[type, ...]) -> None:
        self.allowed = dict(_classes(root))
        for cls in extra:
            self.allowed.update(_classes(cls))

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

    def ndarray(self, body: Any, where: str) -> np.ndarray:
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
            raw = base64.b64decode(str(body["data"]), validate=True)
            return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        except (TypeError, ValueError, KeyError) as exc:
            raise self.fail(where, f"a readable array ({exc})", body) from None

    def column(self, body: Any, where: str) -> Any:
        if not isinstance(body, dict):
            raise self.fail(where, "a column", body)
        kind = body.get("dtype")
        if kind == "numpy":
            return self.value(body.get("values"), where)
        if kind == "category":
            categories = self.index(body.get("categories", {}).get("__index__"), where)
            codes = self.ndarray(body.get("codes", {}).get("__ndarray__"), where)
            return pd.Categorical.from_codes(
                codes, categories=categories, ordered=bool(body.get("ordered"))
            )
        items = body.get("items")
        if not isinstance(kind, str) or not isinstance(items, list):
            raise self.fail(where, "a column (dtype and items)", body)
        try:
            return pd.array([self.value(v, where) for v in items], dtype=kind)
        except (TypeError, ValueError) as exc:
            raise self.fail(where, f"a column of dtype {kind} ({exc})", body) from None

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
        frame = pd.DataFrame(
            {i: pd.Series(v, index=index, copy=False) for i, v in enumerate(data)}, index=index
        )
        frame.columns = columns
        attrs = self.value(body.get("attrs", {}), f"{where} attrs")
        frame.attrs.update(attrs if isinstance(attrs, dict) else {})
        return frame

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


def from_jsonable(cls: type, data: Any, *, where: str = "", extra: tuple[type, ...] = ()) -> Any:
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

    Raises
    ------
    RecordFormatError
        ``data`` is not a ``cls`` value as a record writes it: the message names the place,
        what was expected and what was found. No other class than those
        :func:`recordable_classes` finds from ``cls`` (and ``extra``) is ever built.
    """
    reader = _Reader(cls, extra)
    try:
        return reader.typed(cls, data, where or cls.__qualname__)
    except RecordFormatError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise RecordFormatError(
            f"record {where or cls.__qualname__} could not be read: {exc}"
        ) from None
