"""From a CGM export frame to regular windows: columns, times, units, grid and gap filling.

The steps behind :func:`synthreview.io.traces.load_traces`, which documents the rules; the
functions here return plain arrays and frames so that :mod:`synthreview.io.traces` alone builds
:class:`~synthreview.io.traces.Traces`.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.io.schema import Notice
from synthreview.io.textfile import drop_utc_offsets, utc_offsets

ID_NAMES = ("id", "subject", "patient", "subject_id", "ptid", "patient_id", "participant")
TIME_NAMES = ("time", "timestamp", "datetime", "date_time", "time_stamp", "display_time", "date")
GLUCOSE_NAMES = ("gl", "glucose", "sgv", "value", "glucose_mg_dl", "bg", "glucose_value", "cgm")
MG_DL_PER_MMOL_L = 18.016
#: a median glucose below this is read as mmol/L
MMOL_L_MEDIAN_BELOW = 30.0
GLUCOSE_RANGE_MG_DL = (10.0, 1000.0)
_HHMM = re.compile(r"^(\d{1,3}):(\d{2})$")


def build_grid(
    frame: pd.DataFrame,
    *,
    id_col: str | None,
    time_col: str | None,
    glucose_col: str | None,
    fmt: str,
    window: str | int,
    step_minutes: int,
    label: str,
) -> tuple[list, list, np.ndarray, int, list[Notice]]:
    """Recognise the columns and format, then return ids, starts, grid, step and notices.

    ``grid`` has one row per window (long format) or per input row (wide format), NaN where
    no reading fell on a grid point; values are still in the file's unit.
    """
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
    notices: list[Notice] = []
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
                "long format: "
                + (f"id column {id_col!r}, " if id_col else "no id column (one subject), ")
                + f"time column {time_col!r}, glucose column {found_glucose!r}",
            )
        )
        ids, starts, grid, step, grid_notices = _long_grid(
            frame, id_col, time_col, found_glucose, window, step_minutes, label
        )
        notices += grid_notices
    elif fmt == "wide":
        ids, starts, grid, step, wide_notices = _wide_grid(
            frame, id_col, time_col, step_minutes, label
        )
        notices += wide_notices
        notices.append(
            Notice(
                "info",
                label,
                f"wide format: {grid.shape[0]} rows of {grid.shape[1]} steps of {step} min",
            )
        )
    else:
        raise DataError(f"fmt must be 'auto', 'long' or 'wide'; got {fmt!r}")
    return ids, starts, grid, step, notices


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


def _parse_times(s: pd.Series, col: str, label: str) -> tuple[pd.Series, list[Notice]]:
    """Date-times of ``s`` as local wall-clock times (days start at local 00:00), and notices.

    A column that mixes UTC offsets (a daylight-saving change inside the export, or zoned and
    local times) keeps each reading's own wall-clock time, as a single offset does, with a
    notice naming the column and the offsets.
    """
    notices: list[Notice] = []
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
                offsets = utc_offsets(s)
                if len(offsets) > 1:  # pandas refuses mixed offsets: read the local times
                    times = pd.to_datetime(drop_utc_offsets(s), errors="coerce")
                    notices.append(
                        Notice(
                            "warning",
                            label,
                            f"traces {label!r} time column {col!r} mixes UTC offsets "
                            f"{offsets}; each reading keeps its local wall-clock time (days "
                            "start at local 00:00, as with a single offset)",
                            col,
                        )
                    )
                else:
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
    return times.astype("datetime64[ns]"), notices


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
    times, time_notices = _parse_times(frame[time_col], time_col, label)
    glucose = _numeric_glucose(frame[glucose_col], glucose_col, label)
    ids = _id_strings(frame[id_col]) if id_col else pd.Series(label, index=frame.index)
    keep = times.notna().to_numpy() & ~np.isnan(glucose) & ids.notna().to_numpy()
    notices = time_notices
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
    starts, notices = (
        _parse_times(frame[start_col], start_col, label)
        if start_col
        else ([pd.NaT] * len(frame), [])
    )
    return ids, list(starts), frame[value_cols].to_numpy(dtype="float64"), step, notices


def to_mg_dl(grid: np.ndarray, units: str, label: str) -> tuple[np.ndarray, list[Notice]]:
    """Convert mmol/L to mg/dL when asked or when the median says so; refuse values out of range."""
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


def fill_windows(
    grid: np.ndarray,
    ids: list,
    starts: list,
    step: int,
    *,
    max_gap_minutes: float,
    max_missing_share: float,
    label: str,
) -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame, Notice]:
    """Fill gaps in every window; return kept values, their meta, dropped windows, a summary."""
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
    summary = Notice(
        "info",
        label,
        f"{len(kept)} traces of {grid.shape[1]} steps kept, {len(dropped)} "
        f"window(s) dropped; mean filled share {meta['filled_share'].mean():.1%}",
    )
    return np.vstack(kept), meta, dropped, summary
