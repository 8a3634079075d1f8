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
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any, Literal

import numpy as np
import pandas as pd

from synthreview.data import MAX_BYTES, _type_text_column, read_table
from synthreview.errors import DataError
from synthreview.schema import LoadedTable, Notice, Review, Schema

ID_NAMES = ("id", "subject", "patient", "subject_id", "ptid", "patient_id", "participant")
TIME_NAMES = ("time", "timestamp", "datetime", "date_time", "time_stamp", "display_time", "date")
GLUCOSE_NAMES = ("gl", "glucose", "sgv", "value", "glucose_mg_dl", "bg", "glucose_value", "cgm")
MG_DL_PER_MMOL_L = 18.016
#: a median glucose below this is read as mmol/L
MMOL_L_MEDIAN_BELOW = 30.0
GLUCOSE_RANGE_MG_DL = (10.0, 1000.0)
_HHMM = re.compile(r"^(\d{1,3}):(\d{2})$")


def _empty_dropped() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source_id": pd.Series(dtype="str"),
            "start": pd.Series(dtype="datetime64[ns]"),
            "reason": pd.Series(dtype="str"),
        }
    )


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
    source: str | os.PathLike[str] | IO[bytes] | bytes | pd.DataFrame,
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
) -> Traces:
    """Load CGM readings into regular, equally long traces in mg/dL.

    Parameters
    ----------
    source : path, binary file-like, bytes or DataFrame
        CSV, TSV or Parquet (see :func:`synthreview.data.read_table`).
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
                else _type_text_column(s)
            )
        )
        notices: list[Notice] = []
    else:
        table = read_table(source, name=name, max_bytes=max_bytes)
        frame, label, digest = table.frame, table.name, table.sha256
        source_format, notices = table.source_format, list(table.notices)
    columns = list(frame.columns)
    id_col = _resolve(id_col, columns, ID_NAMES, "id_col", label, required=False)
    time_col = _resolve(time_col, columns, TIME_NAMES, "time_col", label, required=False)
    found_glucose = _resolve(
        glucose_col, columns, GLUCOSE_NAMES, "glucose_col", label, required=False
    )
    if fmt == "auto":
        # "HH:MM" step headers mean wide even when a column is called "date"
        fmt = (
            "wide"
            if sum(bool(_HHMM.match(str(c))) for c in columns) >= 2 or not time_col
            else "long"
        )
    if fmt == "long":
        for arg, col, names in (
            ("time_col", time_col, TIME_NAMES),
            ("glucose_col", found_glucose, GLUCOSE_NAMES),
        ):
            if col is None:
                raise DataError(
                    f"traces {label!r}: no {arg} given and none of the columns "
                    f"{columns} is named like {list(names)}; pass {arg}="
                )
        notices.append(
            Notice(
                "info",
                label,
                f"long format: id column {id_col!r}, time column {time_col!r}, glucose column "
                f"{found_glucose!r}" + ("" if id_col else " (no id column: one subject)"),
            )
        )
        ids, starts, grid, step, grid_notices = _long_grid(
            frame, id_col, time_col, found_glucose, window, step_minutes, label
        )
        notices += grid_notices
    elif fmt == "wide":
        ids, starts, grid, step = _wide_grid(frame, id_col, time_col, step_minutes, label)
        notices.append(
            Notice(
                "info",
                label,
                f"wide format: {grid.shape[0]} rows of {grid.shape[1]} steps of {step} min",
            )
        )
    else:
        raise DataError(f"fmt must be 'auto', 'long' or 'wide'; got {fmt!r}")
    grid, unit_notices = _to_mg_dl(grid, units, label)
    notices += unit_notices
    return _finish(
        grid,
        ids,
        starts,
        step,
        max_gap_minutes,
        max_missing_share,
        label,
        digest,
        source_format,
        notices,
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
    notices = tuple(n for _, t in sources.values() for n in t.notices)
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


# ---------------------------------------------------------------------------------------------


def _norm(name: str) -> str:
    return re.sub(r"[\s.\-()/]+", "_", name.strip().lower()).strip("_")


def _resolve(
    given: str | None,
    columns: list[str],
    names: tuple[str, ...],
    arg: str,
    label: str,
    *,
    required: bool,
) -> str | None:
    if given is not None:
        if given not in columns:
            raise DataError(
                f"{arg}={given!r} is not a column of traces {label!r}; the columns are {columns}"
            )
        return given
    by_norm = {_norm(c): c for c in columns}
    for candidate in names:
        if candidate in by_norm:
            return by_norm[candidate]
    if required:
        raise DataError(
            f"traces {label!r}: none of the columns {columns} is named like "
            f"{list(names)}; pass {arg}="
        )
    return None


def _parse_times(s: pd.Series, col: str, label: str) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(s):
        times = s
    elif pd.api.types.is_numeric_dtype(s):
        raise DataError(
            f"traces {label!r} time column {col!r} holds numbers; expected date-times "
            "such as '2020-01-31 08:05'"
        )
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "could not infer format": we retry
            try:
                times = pd.to_datetime(s, errors="coerce")
            except (ValueError, TypeError):
                times = pd.to_datetime(s, errors="coerce", utc=True)
            retry = s.notna() & times.isna()
            if retry.any():
                times = times.copy()
                times[retry] = pd.to_datetime(s[retry], errors="coerce", format="mixed")
        bad = s[s.notna() & times.isna()]
        if len(bad):
            examples = list(dict.fromkeys(bad.astype("str").tolist()))[:5]
            raise DataError(
                f"traces {label!r} time column {col!r} has {len(bad)} values that "
                f"cannot be parsed as date-times, e.g. {examples}"
            )
    if getattr(times.dt, "tz", None) is not None:
        times = times.dt.tz_localize(None)  # keep wall-clock time: days start at local 00:00
    return times.astype("datetime64[ns]")


def _numeric_glucose(s: pd.Series, col: str, label: str) -> np.ndarray:
    if not pd.api.types.is_numeric_dtype(s):
        numbers = pd.to_numeric(s, errors="coerce")
        bad = s[s.notna() & numbers.isna()]
        examples = list(dict.fromkeys(bad.astype("str").tolist()))[:5]
        raise DataError(
            f"traces {label!r} glucose column {col!r} must be numeric; found "
            f"{len(bad)} values that are not numbers, e.g. {examples}"
        )
    return s.to_numpy(dtype="float64")


def _long_grid(
    frame: pd.DataFrame,
    id_col: str | None,
    time_col: str,
    glucose_col: str,
    window: str | int,
    step: int,
    label: str,
):
    times = _parse_times(frame[time_col], time_col, label)
    glucose = _numeric_glucose(frame[glucose_col], glucose_col, label)
    ids = _id_strings(frame[id_col]) if id_col else pd.Series(label, index=frame.index)
    keep = times.notna().to_numpy() & ~np.isnan(glucose) & ids.notna().to_numpy()
    notices = []
    if not keep.all():
        notices.append(
            Notice(
                "info",
                label,
                f"{int((~keep).sum())} rows without an id, a time or a glucose value were skipped",
            )
        )
    readings = pd.DataFrame(
        {
            "id": ids[keep].to_numpy(),
            "slot": times[keep].dt.round(f"{step}min"),
            "gl": glucose[keep],
        }
    )
    per_slot = readings.groupby(["id", "slot"], sort=True)["gl"].mean()
    slots = per_slot.index.to_frame(index=False)
    interval = slots.groupby("id")["slot"].diff().median()
    if pd.notna(interval) and interval > pd.Timedelta(minutes=1.5 * step):
        notices.append(
            Notice(
                "warning",
                label,
                f"readings come every {interval.total_seconds() / 60:g} min (median), not every "
                f"{step} min; the grid points between readings are filled like gaps",
            )
        )
    step_td = pd.Timedelta(minutes=step)
    n_steps = 1440 // step if window == "day" else int(window)
    out_ids, out_starts, rows = [], [], []
    for subject, series in per_slot.groupby(level="id", sort=False):
        series = series.droplevel("id")
        first, last = series.index.min(), series.index.max()
        origin = first.normalize() if window == "day" else first
        n_windows = int((last - origin) // (step_td * n_steps)) + 1
        index = origin + step_td * np.arange(n_windows * n_steps)
        values = series.reindex(index).to_numpy().reshape(n_windows, n_steps)
        rows.append(values)
        out_ids += [subject] * n_windows
        out_starts += list(origin + step_td * n_steps * np.arange(n_windows))
    if not rows:
        raise DataError(f"traces {label!r} has no readings with both a time and a glucose value")
    return out_ids, out_starts, np.vstack(rows), step, notices


def _id_strings(s: pd.Series) -> pd.Series:
    if pd.api.types.is_numeric_dtype(s):
        return s.map(lambda x: str(int(x)) if float(x).is_integer() else str(x), na_action="ignore")
    return s.astype("str")


def _wide_grid(
    frame: pd.DataFrame, id_col: str | None, time_col: str | None, step: int, label: str
):
    start_col = time_col or next((c for c in frame.columns if _norm(c) == "start"), None)
    if id_col is None:
        text = [
            c
            for c in frame.columns
            if c != start_col
            and not pd.api.types.is_numeric_dtype(frame[c])
            and not _HHMM.match(str(c))
        ]
        id_col = text[0] if text else None
    value_cols = [c for c in frame.columns if c not in (id_col, start_col)]
    bad = [c for c in value_cols if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise DataError(
            f"traces {label!r} (wide format) has non-numeric value columns {bad}; "
            "expected one id column, an optional start column and numeric steps"
        )
    if len(value_cols) < 2:
        raise DataError(
            f"traces {label!r} (wide format) has {len(value_cols)} value columns; "
            "expected at least 2 equally spaced steps"
        )
    offsets = [_HHMM.match(str(c)) for c in value_cols]
    if all(offsets):
        minutes = np.array([int(m[1]) * 60 + int(m[2]) for m in offsets])  # type: ignore[index]
        diffs = np.unique(np.diff(minutes))
        if len(diffs) != 1 or diffs[0] <= 0:
            raise DataError(
                f"traces {label!r} (wide format) step columns are not equally "
                f"spaced: {value_cols[:4]}..."
            )
        step = int(diffs[0])
    ids = (
        _id_strings(frame[id_col]).tolist()
        if id_col
        else [f"row_{i + 1}" for i in range(len(frame))]
    )
    starts = (
        list(_parse_times(frame[start_col], start_col, label))
        if start_col
        else [pd.NaT] * len(frame)
    )
    return ids, starts, frame[value_cols].to_numpy(dtype="float64"), step


def _to_mg_dl(grid: np.ndarray, units: str, label: str) -> tuple[np.ndarray, list[Notice]]:
    observed = grid[~np.isnan(grid)]
    if observed.size == 0:
        raise DataError(f"traces {label!r} has no glucose values")
    notices = []
    median = float(np.median(observed))
    if units == "mmol/L" or (units == "auto" and median < MMOL_L_MEDIAN_BELOW):
        grid = grid * MG_DL_PER_MMOL_L
        why = "as requested" if units == "mmol/L" else f"median {median:.1f} < 30"
        notices.append(
            Notice(
                "warning",
                label,
                f"glucose read as mmol/L ({why}) and converted to mg/dL (x {MG_DL_PER_MMOL_L})",
            )
        )
        observed = observed * MG_DL_PER_MMOL_L
    low, high = GLUCOSE_RANGE_MG_DL
    out = observed[(observed < low) | (observed > high)]
    if out.size:
        examples = [round(float(v), 1) for v in out[:5]]
        raise DataError(
            f"traces {label!r} has {out.size} glucose values outside {low:g}-"
            f"{high:g} mg/dL, e.g. {examples}; check the unit and the export"
        )
    return grid, notices


def _fill_short_gaps(row: np.ndarray, max_gap_steps: int) -> np.ndarray:
    missing = np.isnan(row)
    if not missing.any() or missing.all():
        return row
    observed = np.flatnonzero(~missing)
    line = np.interp(np.arange(row.size), observed, row[observed])
    edges = np.diff(np.concatenate([[0], missing.astype(np.int8), [0]]))
    out = row.copy()
    for start, stop in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        if start > 0 and stop < row.size and stop - start <= max_gap_steps:
            out[start:stop] = line[start:stop]
    return out


def _fill_nearest(row: np.ndarray) -> np.ndarray:
    missing = np.flatnonzero(np.isnan(row))
    if missing.size == 0:
        return row
    valid = np.flatnonzero(~np.isnan(row))
    right = np.clip(np.searchsorted(valid, missing), 0, valid.size - 1)
    left = np.clip(right - 1, 0, valid.size - 1)
    # equal distance: take the earlier reading, so the result does not depend on the future
    take = np.where(missing - valid[left] <= valid[right] - missing, valid[left], valid[right])
    out = row.copy()
    out[missing] = row[take]
    return out


def _finish(
    grid,
    ids,
    starts,
    step,
    max_gap_minutes,
    max_missing_share,
    label,
    digest,
    source_format,
    notices,
) -> Traces:
    max_gap_steps = int(max_gap_minutes // step)
    kept, meta_rows, dropped_rows = [], [], []
    for row, subject, start in zip(grid, ids, starts, strict=True):
        observed_share = float(np.mean(~np.isnan(row)))
        if observed_share == 0:
            dropped_rows.append((subject, start, "no readings"))
            continue
        filled = _fill_short_gaps(row, max_gap_steps)
        missing = float(np.mean(np.isnan(filled)))
        if missing > max_missing_share:
            dropped_rows.append(
                (
                    subject,
                    start,
                    f"{missing:.0%} of points missing after "
                    f"filling gaps up to {max_gap_minutes:g} min (limit "
                    f"{max_missing_share:.0%})",
                )
            )
            continue
        kept.append(_fill_nearest(filled))
        meta_rows.append((subject, start, 1.0 - observed_share))
    dropped = pd.DataFrame(dropped_rows, columns=["source_id", "start", "reason"])
    dropped = dropped.astype({"source_id": "str", "start": "datetime64[ns]", "reason": "str"})
    if not kept:
        reasons = dropped["reason"].value_counts().head(3).to_dict()
        raise DataError(
            f"traces {label!r}: no window has enough data; all {len(dropped)} were "
            f"dropped ({reasons})"
        )
    meta = pd.DataFrame(meta_rows, columns=["source_id", "start", "filled_share"])
    meta = meta.astype({"source_id": "str", "start": "datetime64[ns]", "filled_share": "float64"})
    notices = [
        *notices,
        Notice(
            "info",
            label,
            f"{len(kept)} traces of {grid.shape[1]} steps kept, {len(dropped)} "
            f"window(s) dropped; mean filled share {meta['filled_share'].mean():.1%}",
        ),
    ]
    return Traces(
        values=np.vstack(kept),
        meta=meta,
        step_minutes=int(step),
        notices=tuple(notices),
        dropped=dropped,
        name=label,
        sha256=digest,
        source_format=source_format,
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
    "GLUCOSE_NAMES",
    "ID_NAMES",
    "MG_DL_PER_MMOL_L",
    "TIME_NAMES",
    "Traces",
    "align_traces",
    "load_traces",
]
