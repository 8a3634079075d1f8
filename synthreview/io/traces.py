"""Continuous glucose monitoring (CGM) traces: loading, regularising and aligning.

``load_traces`` reads a CGM export and returns :class:`Traces`: equally long windows (by default
day traces of 288 five-minute steps starting at 00:00) in mg/dL, with a record of every window
it dropped and why. The pipeline, in order:

1. **columns** - long format (one reading per row: subject id, timestamp, glucose) or wide
   format (one trace per row, equally spaced value columns); names are recognised when not
   given and the choice is reported in a notice;
2. **units** - a median below 30 means mmol/L (no human lives at 30 mg/dL, nobody reaches
   30 mmol/L in a CGM export); values are multiplied by 18.016;
3. **range** - any value outside 10-1000 mg/dL stops loading (a unit or export error);
4. **grid** - each reading moves to the nearest 5-minute grid point (grid aligned at 00:00);
   readings sharing a grid point are averaged;
5. **windows** - days 00:00-24:00, or consecutive windows of ``window`` steps starting at the
   subject's first reading;
6. **gaps** - a run of ``k`` missing points is filled by linear interpolation when
   ``k * step_minutes <= max_gap_minutes``; a window still missing more than
   ``max_missing_share`` of its points is dropped and recorded in ``dropped``; the few points
   still missing in a kept window (long gaps, window edges) take the nearest valid value, so
   ``values`` holds no NaN. ``meta.filled_share`` is the share of a trace's points that were
   not observed (linear plus nearest filling).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any, Literal

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.io.cgm_grid import (
    GLUCOSE_RANGE_MG_DL,
    build_grid,
    fill_windows,
    to_mg_dl,
)
from synthreview.io.parquet import UploadedFolder
from synthreview.io.schema import LoadedTable, Notice, Review, Schema
from synthreview.io.tables import MAX_BYTES, read_table
from synthreview.io.textfile import type_text_column

#: most columns of a trace file: a wide file of one day of 1-minute steps plus id and date
#: columns (traces are scored per step, not by column combinations as tables are)
MAX_TRACE_COLUMNS = 1_500


def _empty_dropped() -> pd.DataFrame:
    columns = {"source_id": "str", "start": "datetime64[ns]", "reason": "str"}
    return pd.DataFrame({name: pd.Series(dtype=kind) for name, kind in columns.items()})


@dataclass(frozen=True, eq=False)  # arrays have no single truth value: compare by identity
class Traces:
    """Equally long glucose traces in mg/dL.

    Attributes
    ----------
    values : ndarray of shape (n_traces, n_steps), float64
        Glucose in mg/dL on a regular grid of ``step_minutes``; no NaN after ``load_traces``.
    meta : DataFrame
        One row per trace: ``source_id`` (subject), ``start`` (time of the first step, NaT for
        generated traces) and ``filled_share`` (share of points that were not observed).
    step_minutes : int
    notices : tuple of Notice
    dropped : DataFrame
        Windows left out: ``source_id``, ``start``, ``reason``.
    name : str
    sha256 : str
        Digest of the source file's bytes, or of ``values`` for traces built in memory.
    source_format : str
    """

    values: np.ndarray
    meta: pd.DataFrame
    step_minutes: int = 5
    notices: tuple[Notice, ...] = ()
    dropped: pd.DataFrame = field(default_factory=_empty_dropped)
    name: str = "traces"
    sha256: str = ""
    source_format: str = "memory"

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype="float64")
        if values.ndim != 2 or values.shape[1] < 2:
            raise DataError(
                f"traces {self.name!r} must be a 2-D array (n_traces, n_steps) with "
                f"at least 2 steps; got shape {values.shape}"
            )
        missing = {"source_id", "start", "filled_share"} - set(self.meta.columns)
        if missing:
            raise DataError(f"traces {self.name!r} meta lacks columns {sorted(missing)}")
        if len(self.meta) != values.shape[0]:
            raise DataError(
                f"traces {self.name!r} meta has {len(self.meta)} rows; expected one "
                f"per trace ({values.shape[0]})"
            )
        object.__setattr__(self, "values", values)

    @property
    def n_traces(self) -> int:
        """Number of traces."""
        return int(self.values.shape[0])

    @property
    def n_steps(self) -> int:
        """Points per trace."""
        return int(self.values.shape[1])

    @classmethod
    def from_array(
        cls,
        values: np.ndarray,
        *,
        name: str = "generated",
        step_minutes: int = 5,
        source_ids: Sequence[str] | None = None,
    ) -> Traces:
        """Wrap generated traces (mg/dL, no NaN); values outside 10-1000 mg/dL get a notice."""
        array = np.asarray(values, dtype="float64")
        if array.ndim != 2:
            raise DataError(
                f"values must be a 2-D array (n_traces, n_steps); got shape {array.shape}"
            )
        if not np.isfinite(array).all():
            raise DataError(
                f"traces {name!r} hold {int((~np.isfinite(array)).sum())} NaN or "
                "infinite values; expected finite mg/dL values"
            )
        ids = (
            list(source_ids)
            if source_ids is not None
            else [f"{name}_{i + 1}" for i in range(len(array))]
        )
        meta = pd.DataFrame(
            {
                "source_id": pd.Series(ids, dtype="str"),
                "start": pd.Series(pd.NaT, index=range(len(array)), dtype="datetime64[ns]"),
                "filled_share": np.zeros(len(array)),
            }
        )
        low, high = GLUCOSE_RANGE_MG_DL
        out = int(((array < low) | (array > high)).sum())
        notices = (
            (
                Notice(
                    "warning",
                    name,
                    f"{out} values lie outside {low:g}-{high:g} mg/dL "
                    f"(min {array.min():.1f}, max {array.max():.1f})",
                ),
            )
            if out
            else ()
        )
        digest = hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()
        return cls(
            values=array,
            meta=meta,
            step_minutes=step_minutes,
            notices=notices,
            name=name,
            sha256=digest,
        )

    def subset(self, indices: Sequence[int] | np.ndarray) -> Traces:
        """Traces at the given positions (meta re-indexed from 0)."""
        idx = np.asarray(indices, dtype=int)
        return replace(
            self, values=self.values[idx], meta=self.meta.iloc[idx].reset_index(drop=True)
        )

    def step_labels(self) -> list[str]:
        """``"HH:MM"`` offset of every step from the trace start (hours may exceed 23)."""
        minutes = np.arange(self.n_steps) * self.step_minutes
        return [f"{m // 60:02d}:{m % 60:02d}" for m in minutes]

    def to_frame(self) -> pd.DataFrame:
        """Wide frame: ``id``, ``start``, then one ``"HH:MM"`` column per step."""
        steps = pd.DataFrame(self.values, columns=self.step_labels())
        head = pd.DataFrame(
            {
                "id": self.meta["source_id"].astype("str").to_numpy(),
                "start": pd.to_datetime(self.meta["start"]).to_numpy(),
            }
        )
        return pd.concat([head, steps], axis=1)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no values)."""
        return {
            "name": self.name,
            "n_traces": self.n_traces,
            "n_steps": self.n_steps,
            "step_minutes": self.step_minutes,
            "n_dropped": len(self.dropped),
            "sha256": self.sha256,
        }


def load_traces(
    source: str | os.PathLike[str] | IO[bytes] | bytes | UploadedFolder | pd.DataFrame,
    *,
    id_col: str | None = None,
    time_col: str | None = None,
    glucose_col: str | None = None,
    fmt: Literal["auto", "long", "wide"] = "auto",
    window: Literal["day"] | int = "day",
    max_gap_minutes: float = 30,
    max_missing_share: float = 0.2,
    units: Literal["auto", "mg/dL", "mmol/L"] = "auto",
    step_minutes: int = 5,
    name: str | None = None,
    max_bytes: int = MAX_BYTES,
    client: Any = None,
) -> Traces:
    """Load CGM readings into regular, equally long traces in mg/dL.

    Parameters
    ----------
    source : path, binary file-like, bytes, UploadedFolder or DataFrame
        CSV, TSV or Parquet, or a folder of Parquet partitions, on disk or uploaded (see
        :func:`synthreview.io.tables.read_table`).
    id_col, time_col, glucose_col : str, optional
        Column names; recognised from common names when not given (``id``/``subject``/...,
        ``time``/``timestamp``/``datetime``/..., ``gl``/``glucose``/``sgv``/``value``/...).
        A long file without an id column holds one subject.
    fmt : {"auto", "long", "wide"}
        ``"auto"`` is long when a time and a glucose column are found, else wide.
    window : "day" or int
        ``"day"``: traces from 00:00 to 24:00; an int: consecutive windows of that many steps.
        Wide files keep one trace per row.
    max_gap_minutes : float, default 30
        Longest run of missing data filled by linear interpolation.
    max_missing_share : float, default 0.2
        Windows missing more than this share after gap filling are dropped.
    units : {"auto", "mg/dL", "mmol/L"}
    step_minutes : int, default 5
        Grid step; for wide files, taken from ``"HH:MM"`` headers when they have them.
    name : str, optional
        Defaults to the file stem.
    max_bytes : int, default 2 GiB
        Sources larger than this are refused before they are read.
    client : distributed.Client, optional
        A folder's partitions are read by its workers (as :func:`read_table`); the traces are
        the same as when they are read here.

    Returns
    -------
    Traces

    Raises
    ------
    DataError
        Missing or unrecognised columns, unparseable timestamps, non-numeric glucose, glucose
        outside 10-1000 mg/dL, or no window with enough data.
    """
    if window != "day" and not (isinstance(window, int) and window >= 2):
        raise DataError(f"window must be 'day' or an int of at least 2 steps; got {window!r}")
    if not 0 <= max_missing_share <= 1:
        raise DataError(f"max_missing_share must be in [0, 1]; got {max_missing_share!r}")
    if not isinstance(step_minutes, int) or step_minutes < 1 or 1440 % step_minutes:
        raise DataError(f"step_minutes must be a whole divisor of 1440; got {step_minutes!r}")
    if units not in ("auto", "mg/dL", "mmol/L"):
        raise DataError(f"units must be 'auto', 'mg/dL' or 'mmol/L'; got {units!r}")
    if isinstance(source, pd.DataFrame):
        label, source_format = name or "traces", "memory"
        hashed = pd.util.hash_pandas_object(source, index=False).to_numpy()
        digest = hashlib.sha256(hashed.tobytes()).hexdigest()
        # in-memory frames get the typing files get (NA markers, numbers written as text)
        frame = source.apply(
            lambda s: (
                s
                if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_datetime64_any_dtype(s)
                else type_text_column(s)
            )
        )
        notices: list[Notice] = []
    else:
        table = read_table(
            source,
            name=name,
            max_bytes=max_bytes,
            max_columns=MAX_TRACE_COLUMNS,
            describe="traces {name!r}",
            client=client,
        )
        frame, label, digest = table.frame, table.name, table.sha256
        source_format, notices = table.source_format, list(table.notices)
    ids, starts, grid, step, grid_notices = build_grid(
        frame,
        id_col=id_col,
        time_col=time_col,
        glucose_col=glucose_col,
        fmt=fmt,
        window=window,
        step_minutes=step_minutes,
        label=label,
    )
    notices += grid_notices
    grid, unit_notices = to_mg_dl(grid, units, label)
    notices += unit_notices
    values, meta, dropped, summary = fill_windows(
        grid,
        ids,
        starts,
        step,
        max_gap_minutes=max_gap_minutes,
        max_missing_share=max_missing_share,
        label=label,
    )
    notices.append(summary)
    return Traces(
        values=values,
        meta=meta,
        step_minutes=int(step),
        notices=tuple(notices),
        dropped=dropped,
        name=label,
        sha256=digest,
        source_format=source_format,
    )


def align_traces(
    real: Traces,
    synthetic: Traces | Sequence[Traces] | Mapping[str, Traces],
    *,
    holdout: Traces | None = None,
) -> Review:
    """Put real, holdout and synthetic traces into one review (``kind="traces"``).

    The tables are :meth:`Traces.to_frame` (``id`` identifier, ``start`` datetime, steps
    numeric). Every source must have at least 2 traces of real's length and step.
    """
    if isinstance(synthetic, Mapping):
        items = [(str(k), v) for k, v in synthetic.items()]
    elif isinstance(synthetic, Traces):
        items = [(synthetic.name, synthetic)]
    else:
        items = [(t.name, t) for t in synthetic]
    if not items:
        raise DataError("synthetic must hold at least one Traces; got none")
    sources: dict[str, tuple[str, Traces]] = {"real": ("real", real)}
    if holdout is not None:
        sources["holdout"] = ("holdout", holdout)
    candidates: list[str] = []
    for base, traces in items:
        if not isinstance(traces, Traces):
            raise DataError(f"synthetic {base!r} must be Traces; got {type(traces).__name__}")
        cand, n = base, 1
        while cand in sources:
            n += 1
            cand = f"{base}-{n}"
        sources[cand] = ("synthetic", traces)
        candidates.append(cand)
    for key, (role, traces) in sources.items():
        what = key if role != "synthetic" else f"synthetic {key!r}"
        if (traces.n_steps, traces.step_minutes) != (real.n_steps, real.step_minutes):
            raise DataError(
                f"{what} has traces of {traces.n_steps} steps of "
                f"{traces.step_minutes} min; expected {real.n_steps} steps of "
                f"{real.step_minutes} min like real"
            )
        if traces.n_traces < 2:
            raise DataError(f"{what} has {traces.n_traces} trace; at least 2 are needed")
    tables = {k: _trace_table(t, k, role) for k, (role, t) in sources.items()}
    labels = real.step_labels()
    schema = Schema({"id": "identifier", "start": "datetime", **dict.fromkeys(labels, "numeric")})
    # each notice once: day traces cut from one file (real and holdout of one recording) carry
    # that file's loading notices each
    notices = tuple(dict.fromkeys(n for _, t in sources.values() for n in t.notices))
    return Review(
        real=tables["real"],
        synthetic={c: tables[c] for c in candidates},
        holdout=tables.get("holdout"),
        schema=schema,
        notices=notices,
        kind="traces",
        traces={
            k: replace(t, name=k) if k not in ("real", "holdout") else t
            for k, (_, t) in sources.items()
        },
    )


def _trace_table(traces: Traces, key: str, role: str) -> LoadedTable:
    frame = traces.to_frame()
    raw = frame.astype("str").where(frame.notna(), "")
    return LoadedTable(
        name=key,
        role=role,
        frame=frame,
        raw=raw,
        sha256=traces.sha256,
        source_format=traces.source_format,
    )


__all__ = [
    "Traces",
    "align_traces",
    "load_traces",
]
