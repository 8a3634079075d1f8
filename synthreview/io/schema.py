"""Column kinds, the review container and the notices attached to loaded data.

These small types are shared by every layer: ``data`` builds them, ``encoding`` and the
metrics read them, ``report`` and the dashboard pages display them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:  # pragma: no cover
    from synthreview.io.traces import Traces

Kind = Literal["numeric", "categorical", "datetime", "identifier", "constant"]
KINDS: tuple[str, ...] = ("numeric", "categorical", "datetime", "identifier", "constant")
#: kinds that take part in metrics; identifiers, constants and datetimes are carried but not scored
ANALYSED_KINDS: tuple[str, ...] = ("numeric", "categorical")


@dataclass(frozen=True)
class Notice:
    """A non-fatal finding about the loaded data, shown to the reviewer.

    Attributes
    ----------
    level : {"info", "warning"}
    table : str
        Name of the table or trace file the notice is about.
    message : str
        A full sentence that a reviewer can act on.
    column : str or None
        The column concerned, when there is one.
    """

    level: Literal["info", "warning"]
    table: str
    message: str
    column: str | None = None


@dataclass(frozen=True)
class Schema:
    """The kind of every column, inferred on the real table and overridable by the reviewer.

    Attributes
    ----------
    kinds : Mapping[str, str]
        Column name -> one of ``KINDS``, in the review's column order.
    """

    kinds: Mapping[str, str]

    def __post_init__(self) -> None:
        bad = {c: k for c, k in self.kinds.items() if k not in KINDS}
        if bad:
            raise ValueError(f"schema kinds must be one of {list(KINDS)}; got {bad}")
        object.__setattr__(self, "kinds", MappingProxyType(dict(self.kinds)))

    def __reduce__(self):
        # a mappingproxy does not pickle; a schema pickles as its kinds, so a review, a report
        # or a record holding one can cross a process boundary (a Dask worker, a test worker)
        return (type(self), (dict(self.kinds),))

    @property
    def columns(self) -> list[str]:
        """All columns, in order."""
        return list(self.kinds)

    @property
    def numeric(self) -> list[str]:
        """Numeric columns, in order."""
        return [c for c, k in self.kinds.items() if k == "numeric"]

    @property
    def categorical(self) -> list[str]:
        """Categorical columns, in order."""
        return [c for c, k in self.kinds.items() if k == "categorical"]

    @property
    def analysed(self) -> list[str]:
        """Columns used by the metrics (numeric and categorical), in order."""
        return [c for c, k in self.kinds.items() if k in ANALYSED_KINDS]

    def with_kinds(self, overrides: Mapping[str, str]) -> Schema:
        """Return a copy with some kinds overridden; unknown columns raise ``KeyError``."""
        unknown = sorted(set(overrides) - set(self.kinds))
        if unknown:
            raise KeyError(f"schema has no columns {unknown}")
        return replace(self, kinds={**self.kinds, **overrides})

    def to_dict(self) -> dict[str, str]:
        """JSON-ready ``{column: kind}``."""
        return dict(self.kinds)


#: how a column of numbers is written when its cells are re-derived from the typed values:
#: ``shortest`` is the shortest text that reads back as the same float (``79``, ``38.7``),
#: ``point_zero`` the same with ``.0`` after whole numbers (``79.0``, as pandas writes floats),
#: ``astype`` is pandas' ``astype("str")`` (in-memory tables, whose cells were never text)
NUMBER_STYLES: tuple[str, ...] = ("shortest", "point_zero", "astype")
_STR_DTYPE = pd.StringDtype("pyarrow", na_value=float("nan"))
_POINT_ZERO = pa.scalar(".0", pa.large_string())
_NOTHING = pa.scalar("", pa.large_string())


def number_strings(values: pa.Array | pa.ChunkedArray, style: str) -> pa.Array | pa.ChunkedArray:
    """Float64 values as text in ``style`` (``shortest`` or ``point_zero``); NaN and null as ``""``.

    The one formatting rule behind :class:`DerivedCells`: the loader compares it with the cells
    as written and keeps only the cells that differ, so it must give the same text at load time
    and when the cells are asked for.
    """
    text = pc.cast(values, pa.large_string())
    if style == "point_zero":
        whole = pc.match_substring_regex(text, r"^-?\d+$")
        point_zero = pc.binary_join_element_wise(text, _POINT_ZERO, _NOTHING)
        text = pc.if_else(whole, point_zero, text)
    elif style != "shortest":
        raise ValueError(f"style must be 'shortest' or 'point_zero'; got {style!r} instead")
    return pc.fill_null(pc.if_else(pc.is_nan(values), None, text), "")


def str_series(chunks: pa.Array | pa.ChunkedArray | Sequence[pa.Array]) -> pd.Series:
    """Arrow text as a pandas ``str`` Series on a RangeIndex, sharing the Arrow buffers."""
    if isinstance(chunks, pa.ChunkedArray):
        array = chunks.cast(pa.large_string())
    elif isinstance(chunks, pa.Array):
        array = pa.chunked_array([chunks.cast(pa.large_string())])
    else:
        array = pa.chunked_array(list(chunks), type=pa.large_string())
    return pd.Series(pd.arrays.ArrowStringArray(array, dtype=_STR_DTYPE), copy=False)


@dataclass(frozen=True)
class DerivedCells:
    """A column whose cells as written are re-derived from its typed values when asked for.

    A column of numbers written in one consistent way (``79``, ``38.7``) needs no copy of its
    text: the text follows from the float64 values the review holds anyway. Only the cells whose
    text differs from that rule (``1.50``, ``NA``, `` 5``) are kept, as sorted row positions
    and their text. Keeping every cell's text cost about 2.2x the file size of a CSV in memory.

    Attributes
    ----------
    values : pandas.Series
        The typed values (the same buffers as the typed frame's column, never a copy).
    style : str
        One of :data:`NUMBER_STYLES`.
    positions : numpy.ndarray
        Sorted int64 row positions whose written text differs from ``style``'s.
    texts : pyarrow.Array
        Their text as written (``large_string``), in the order of ``positions``.
    """

    values: pd.Series
    style: str
    positions: np.ndarray = field(default_factory=lambda: np.empty(0, dtype="int64"))
    texts: pa.Array = field(default_factory=lambda: pa.array([], pa.large_string()))

    def take(self, rows: np.ndarray | None = None) -> pd.Series:
        """The cells as written at row positions ``rows`` (all rows when None), RangeIndex."""
        values = self.values if rows is None else self.values.iloc[rows]
        if self.style == "astype":
            return values.astype("str").where(values.notna(), "").reset_index(drop=True)
        array = pa.array(values.to_numpy(dtype="float64", na_value=np.nan), from_pandas=True)
        text = number_strings(array, self.style)
        if len(self.positions):
            if rows is None:
                mask = np.zeros(len(values), dtype=bool)
                mask[self.positions] = True
                text = pc.replace_with_mask(text, pa.array(mask), self.texts)
            else:
                rows = np.asarray(rows, dtype="int64")
                where = np.minimum(np.searchsorted(self.positions, rows), len(self.positions) - 1)
                hit = self.positions[where] == rows
                if hit.any():
                    text = pc.replace_with_mask(
                        text, pa.array(hit), self.texts.take(pa.array(where[hit]))
                    )
        return str_series(text)


@dataclass(frozen=True)
class WrittenCells:
    """The cells of a table as written in its source, held without a full text copy.

    Text columns are kept as they are (the typed frame shares their buffers); columns of
    numbers are :class:`DerivedCells`. :meth:`frame` and :meth:`rows` build the cells as
    strings on demand, so only exports and row views pay for them.

    Attributes
    ----------
    columns : Mapping[str, pandas.Series or DerivedCells]
        Column name -> cells, in the table's column order.
    index : pandas.Index
        Row labels of :meth:`frame`.
    """

    columns: Mapping[str, pd.Series | DerivedCells]
    index: pd.Index

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> WrittenCells:
        """Cells held as the columns of ``frame`` (no copy)."""
        return cls({str(c): frame[c] for c in frame.columns}, frame.index)

    @property
    def names(self) -> list[str]:
        """Column names, in order."""
        return list(self.columns)

    def column(self, name: str) -> pd.Series:
        """One column's cells, on :attr:`index`."""
        cells = self.columns[name]
        if isinstance(cells, DerivedCells):
            out = cells.take()
            out.index = self.index
            return out
        return cells

    def cell(self, name: str, row: int) -> Any:
        """The cell at column ``name`` and row position ``row``."""
        cells = self.columns[name]
        if isinstance(cells, DerivedCells):
            return cells.take(np.array([row])).iloc[0]
        return cells.iloc[row]

    def frame(self) -> pd.DataFrame:
        """Every cell, as a DataFrame on :attr:`index` (built on demand, never cached)."""
        data = {name: self.column(name).array for name in self.columns}
        return pd.DataFrame(data, index=self.index, copy=False)

    def rows(self, positions: Sequence[int] | np.ndarray) -> pd.DataFrame:
        """The cells of rows at ``positions``, as a DataFrame on a RangeIndex."""
        rows = np.asarray(positions, dtype="int64").reshape(-1)
        # increasing rows (a curation's kept rows) are a mask: Arrow filters a column of many
        # chunks chunk by chunk, while taking positions joins its chunks first (a full copy)
        mask = None
        if len(rows) > 1 and bool(np.all(np.diff(rows) > 0)):
            mask = np.zeros(len(self.index), dtype=bool)
            mask[rows] = True
        data: dict[str, Any] = {}
        for name, cells in self.columns.items():
            if isinstance(cells, DerivedCells):
                data[name] = cells.take(rows).array
            elif mask is not None:
                data[name] = cells.array[mask]
            else:
                data[name] = cells.iloc[rows].array
        return pd.DataFrame(data, index=pd.RangeIndex(len(rows)), copy=False)

    def select(self, names: Sequence[str]) -> WrittenCells:
        """The same cells with the columns ``names``, in that order."""
        return WrittenCells({n: self.columns[n] for n in names}, self.index)

    def derived_share(self) -> float:
        """Share of the numbers' cells kept as text (the exceptions), 0 when none is derived."""
        derived = [c for c in self.columns.values() if isinstance(c, DerivedCells)]
        cells = sum(len(c.values) for c in derived)
        return sum(len(c.positions) for c in derived) / cells if cells else 0.0


@dataclass(frozen=True, init=False)
class LoadedTable:
    """One input file as loaded: the typed frame, the cells as written and provenance.

    Attributes
    ----------
    name : str
        Display name (default: the file stem).
    role : {"real", "holdout", "synthetic"}
    frame : pandas.DataFrame
        Typed values (numeric columns as float/int, the rest as strings with ``NA``).
    written : WrittenCells
        The same rows' cells exactly as written in the file (no NA conversion), held compactly;
        :attr:`raw` gives them as a DataFrame. The curated export is cut from them so kept rows
        are written back unchanged.
    sha256 : str
        Digest of the file's bytes (or of the frame when built in memory; for a folder of
        Parquet partitions, :func:`synthreview.io.parquet.folder_sha256` of its files).
    source_format : str
        ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"memory"``.
    delimiter : str or None
        Delimiter of text files.
    encoding : str or None
        Text encoding used to decode the file.
    notices : tuple of Notice

    Notes
    -----
    The constructor takes the cells as ``raw`` (a DataFrame of strings, or a
    :class:`WrittenCells`), so ``LoadedTable(name, role, frame, raw, sha256)`` and
    ``dataclasses.replace(table, raw=...)`` keep working; ``raw`` wins over ``written``.
    """

    name: str
    role: str
    frame: pd.DataFrame
    written: WrittenCells
    sha256: str
    source_format: str = "memory"
    delimiter: str | None = None
    encoding: str | None = None
    notices: tuple[Notice, ...] = ()

    def __init__(
        self,
        name: str,
        role: str,
        frame: pd.DataFrame,
        raw: pd.DataFrame | WrittenCells | None = None,
        sha256: str | None = None,
        source_format: str = "memory",
        delimiter: str | None = None,
        encoding: str | None = None,
        notices: tuple[Notice, ...] = (),
        *,
        written: WrittenCells | None = None,
    ) -> None:
        cells = written if raw is None else raw
        if cells is None or sha256 is None:
            raise TypeError("LoadedTable needs the cells as written (raw=) and sha256=")
        if isinstance(cells, pd.DataFrame):
            cells = WrittenCells.of_frame(cells)
        for key, value in (
            ("name", name),
            ("role", role),
            ("frame", frame),
            ("written", cells),
            ("sha256", sha256),
            ("source_format", source_format),
            ("delimiter", delimiter),
            ("encoding", encoding),
            ("notices", tuple(notices)),
        ):
            object.__setattr__(self, key, value)

    @property
    def raw(self) -> pd.DataFrame:
        """Every cell as written, as a DataFrame (built on demand: prefer :meth:`raw_rows`)."""
        return self.written.frame()

    def raw_rows(self, positions: Sequence[int] | np.ndarray) -> pd.DataFrame:
        """The cells as written of the rows at ``positions``, on a RangeIndex."""
        return self.written.rows(positions)

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return len(self.frame)


@dataclass(frozen=True)
class Review:
    """Everything a review compares: real (training), holdout and named synthetic candidates.

    Tables share one column order (``schema.columns``). For glucose reviews ``traces`` holds
    the day traces and the table fields hold one summary row per trace.

    Attributes
    ----------
    real : LoadedTable
    synthetic : Mapping[str, LoadedTable]
        Candidate name -> table, in the order given.
    holdout : LoadedTable or None
    schema : Schema
    notices : tuple of Notice
        Findings of validation that did not stop the review.
    kind : {"table", "traces"}
    traces : Mapping[str, Traces] or None
        For ``kind == "traces"``: ``"real"``, ``"holdout"`` and each candidate name -> Traces.
    """

    real: LoadedTable
    synthetic: Mapping[str, LoadedTable]
    holdout: LoadedTable | None
    schema: Schema
    notices: tuple[Notice, ...] = ()
    kind: Literal["table", "traces"] = "table"
    traces: Mapping[str, Traces] | None = field(default=None)

    @property
    def candidates(self) -> list[str]:
        """Names of the synthetic candidates, in order."""
        return list(self.synthetic)
