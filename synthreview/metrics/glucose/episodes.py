"""Hypo- and hyperglycemic episodes (international consensus, Battelino et al. 2019, 2023).

An episode of level ``L`` starts with at least 15 consecutive minutes beyond the threshold
(below 70 / 54 mg/dL, above 180 / 250 mg/dL) and ends with at least 15 consecutive minutes
back on the other side (Danne et al. 2017, *Diabetes Care* 40:1631; Battelino et al. 2019
Table 3; Battelino et al. 2023). Brief returns shorter than the exit time stay inside the
episode, and a second entry before a valid exit is the same episode. Durations count the
readings from the entry to the exit (× step minutes), which is iglu's ``episode_calculation``
(Broll et al. 2021); iglu reports a mean duration of 0 when there is no episode, here it is
NaN (undefined, left out of population means). A missing reading splits a trace: an episode
never runs across a gap.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.metrics.glucose.consensus import trace_matrix

#: episode kind -> (label, side, threshold mg/dL)
EPISODE_KINDS: Mapping[str, tuple[str, str, float]] = {
    "hypo_l1": ("Hypoglycemia level 1 (< 70)", "below", 70.0),
    "hypo_l2": ("Hypoglycemia level 2 (< 54)", "below", 54.0),
    "hyper_l1": ("Hyperglycemia level 1 (> 180)", "above", 180.0),
    "hyper_l2": ("Hyperglycemia level 2 (> 250)", "above", 250.0),
}
#: minutes beyond a threshold that start an episode, and back that end it (consensus)
ENTRY_MINUTES = 15.0
EXIT_MINUTES = 15.0


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start, length and value of every run of equal values in a boolean array."""
    change = np.flatnonzero(np.diff(mask.astype(np.int8))) + 1
    starts = np.concatenate(([0], change))
    lengths = np.diff(np.concatenate((starts, [mask.size])))
    return starts, lengths, mask[starts]


def episode_lengths(beyond: np.ndarray, *, entry_steps: int, exit_steps: int) -> list[int]:
    """Lengths (readings) of the episodes in one gap-free run of ``beyond`` flags."""
    starts, lengths, values = _runs(np.asarray(beyond, dtype=bool))
    out: list[int] = []
    open_at: int | None = None
    for start, length, value in zip(starts, lengths, values, strict=True):
        if value and length >= entry_steps and open_at is None:
            open_at = int(start)
        elif not value and length >= exit_steps and open_at is not None:
            out.append(int(start) - open_at)
            open_at = None
    if open_at is not None:  # still beyond when the data ends
        out.append(int(beyond.size) - open_at)
    return out


def episode_samples(
    traces: object,
    *,
    step_minutes: float = 5.0,
    entry_minutes: float = ENTRY_MINUTES,
    exit_minutes: float = EXIT_MINUTES,
) -> pd.DataFrame:
    """Episodes of each kind in every trace.

    Parameters
    ----------
    traces : Traces or array-like of shape (n_traces, n_steps)
        mg/dL, NaN where missing.
    step_minutes : float, default=5
    entry_minutes, exit_minutes : float, default=15
        Time beyond a threshold that starts an episode and time back that ends it; rounded up
        to whole readings (15 min = 3 readings of 5 minutes).

    Returns
    -------
    pandas.DataFrame
        One row per trace; for each kind in :data:`EPISODE_KINDS`: ``<kind>_count``,
        ``<kind>_per_day`` (episodes per 24 h of valid readings, >= 0, lower is better) and
        ``<kind>_minutes`` (mean duration; NaN without an episode).

    Examples
    --------
    >>> row = [100.0] * 3 + [60.0] * 4 + [100.0] * 5
    >>> episode_samples([row])[["hypo_l1_count", "hypo_l1_minutes"]].to_dict("records")
    [{'hypo_l1_count': 1, 'hypo_l1_minutes': 20.0}]
    """
    g = trace_matrix(traces)
    if not step_minutes > 0:
        raise DataError(f"step_minutes must be > 0; got {step_minutes!r}")
    entry = int(np.ceil(entry_minutes / step_minutes))
    exit_ = int(np.ceil(exit_minutes / step_minutes))
    if entry < 1 or exit_ < 1:
        raise DataError(
            f"entry_minutes and exit_minutes must be > 0; got {entry_minutes!r}, {exit_minutes!r}"
        )
    rows = []
    for row in g:
        valid = np.isfinite(row)
        days = valid.sum() * step_minutes / (24 * 60)
        # gap-free runs of valid readings
        edges = np.flatnonzero(np.diff(np.concatenate(([0], valid.astype(np.int8), [0]))))
        pieces = [row[a:b] for a, b in zip(edges[::2], edges[1::2], strict=True)]
        record: dict[str, float] = {}
        for kind, (_, side, threshold) in EPISODE_KINDS.items():
            lengths: list[int] = []
            for piece in pieces:
                beyond = piece < threshold if side == "below" else piece > threshold
                lengths += episode_lengths(beyond, entry_steps=entry, exit_steps=exit_)
            record[f"{kind}_count"] = len(lengths)
            record[f"{kind}_per_day"] = len(lengths) / days if days > 0 else np.nan
            record[f"{kind}_minutes"] = (
                float(np.mean(lengths)) * step_minutes if lengths else np.nan
            )
        rows.append(record)
    columns = [f"{k}_{s}" for k in EPISODE_KINDS for s in ("count", "per_day", "minutes")]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({f"{k}_count": "int64" for k in EPISODE_KINDS})
