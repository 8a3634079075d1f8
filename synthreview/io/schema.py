"""Column kinds, the review container and the notices attached to loaded data.

These small types are shared by every layer: ``data`` builds them, ``encoding`` and the
metrics read them, ``report`` and the dashboard pages display them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

import pandas as pd

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


@dataclass(frozen=True)
class LoadedTable:
    """One input file as loaded: the typed frame, the raw text frame and provenance.

    Attributes
    ----------
    name : str
        Display name (default: the file stem).
    role : {"real", "holdout", "synthetic"}
    frame : pandas.DataFrame
        Typed values (numeric columns as float/int, the rest as strings with ``NA``).
    raw : pandas.DataFrame
        The same rows as strings exactly as written in the file (no NA conversion); the curated
        export is cut from this so kept rows are written back unchanged.
    sha256 : str
        Digest of the file's bytes (or of the frame when built in memory).
    source_format : str
        ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"memory"``.
    delimiter : str or None
        Delimiter of text files.
    encoding : str or None
        Text encoding used to decode the file.
    notices : tuple of Notice
    """

    name: str
    role: str
    frame: pd.DataFrame
    raw: pd.DataFrame
    sha256: str
    source_format: str = "memory"
    delimiter: str | None = None
    encoding: str | None = None
    notices: tuple[Notice, ...] = ()

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
