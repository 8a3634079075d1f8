"""Consensus CGM metrics and episodes: parity with iglu-python, hand-computed values, bad input.

The reference numbers come from ``tests/reference/iglu_consensus.py`` (iglu-python 0.4.3, its
Python day grid) on ``tests/reference/iglu_input.csv`` (the shipped example traces, loaded as
day traces, plus a 0.55-scaled copy of each for hypoglycemia).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.io.traces import Traces
from synthreview.metrics.glucose.consensus import (
    RISK_SCALE,
    consensus_samples,
    subject_consensus,
    subject_timelines,
)
from synthreview.metrics.glucose.episodes import episode_samples

REFERENCE = Path(__file__).parent / "reference"
IGLU = json.loads((REFERENCE / "iglu_consensus.json").read_text())
#: iglu's ADRR uses 22.77 for Kovatchev's 10 · 1.509² = 22.7708; we follow the paper
ADRR_RTOL = 22.77081 / 22.77 - 1 + 1e-9
#: iglu keeps one interpolated reading inside a dropped day; we leave the whole day empty
SUBJECTS_WITH_A_DROPPED_DAY = {"cgm_one_subject", "cgm_one_subject low"}


@pytest.fixture(scope="module")
def example() -> Traces:
    raw = pd.read_csv(REFERENCE / "iglu_input.csv", parse_dates=["time"])
    names = list(dict.fromkeys(raw["trace"]))
    values = np.stack([raw.loc[raw["trace"] == t, "gl"].to_numpy() for t in names])
    first = raw.groupby("trace", sort=False).first().loc[names]
    meta = pd.DataFrame(
        {"source_id": first["subject"].to_numpy(), "start": first["time"].to_numpy(),
         "filled_share": 0.0}
    )  # fmt: skip
    return Traces(values=values, meta=meta, name="iglu example")


def _iglu_view(frame: pd.DataFrame) -> pd.DataFrame:
    """Our columns under iglu's names (iglu reports cumulative bands)."""
    out = pd.DataFrame(index=frame.index)
    for ours, theirs in {"mean": "mean", "gmi": "gmi", "cv": "cv", "tbr_54": "below_54",
                         "tar_250": "above_250", "tir": "in_range_70_180",
                         "titr": "in_range_70_140", "gri": "gri", "lbgi": "lbgi", "hbgi": "hbgi",
                         "adrr": "adrr", "j_index": "j_index", "mage": "mage",
                         "conga_1": "conga_1", "conga_2": "conga_2", "conga_4": "conga_4",
                         "modd": "modd"}.items():  # fmt: skip
        if ours in frame:
            out[theirs] = frame[ours]
    if "tbr_54" in frame:
        out["below_70"] = frame["tbr_54"] + frame["tbr_54_69"]
        out["above_180"] = frame["tar_181_250"] + frame["tar_250"]
    for column in frame.columns:
        if column.startswith(("hypo_", "hyper_")):
            out[column] = frame[column]
    return out


def _compare(ours: pd.DataFrame, level: str, skip: set[str] = frozenset()) -> int:
    checked = 0
    for metric, by_id in IGLU[level].items():
        for key, expected in by_id.items():
            if key in skip and metric not in ("mean", "gmi", "cv") and "_count" not in metric:
                continue
            got = float(ours.loc[key, metric])
            if metric.endswith("_minutes") and expected == 0.0:
                # iglu reports 0 minutes when there is no episode; the mean is undefined
                assert math.isnan(got), (level, metric, key)
                continue
            if expected is None:
                assert math.isnan(got), (level, metric, key, got)
                continue
            rtol = ADRR_RTOL if metric == "adrr" else 1e-9
            assert got == pytest.approx(expected, rel=rtol, abs=1e-6), (level, metric, key)
            checked += 1
    return checked


def test_per_trace_metrics_match_iglu(example: Traces) -> None:
    ours = pd.concat([consensus_samples(example), episode_samples(example)], axis=1)
    meta = example.meta
    ours.index = [
        f"{s} {t:%Y-%m-%d}" for s, t in zip(meta["source_id"], meta["start"], strict=True)
    ]
    assert _compare(_iglu_view(ours), "per_trace") > 250


def test_per_subject_metrics_match_iglu(example: Traces) -> None:
    names, lines, _ = subject_timelines(example)
    ours = pd.concat(
        [subject_consensus(example), episode_samples(lines).set_index(pd.Index(names))], axis=1
    )
    assert _compare(_iglu_view(ours), "per_subject", SUBJECTS_WITH_A_DROPPED_DAY) > 120


def test_adrr_follows_kovatchev_constant() -> None:
    # one day: lowest 40 mg/dL and highest 400 mg/dL give the two risks of that day
    day = np.full(288, 120.0)
    day[10], day[100] = 40.0, 400.0
    f = 1.509 * (np.log([40.0, 400.0]) ** 1.084 - 5.381)
    expected = RISK_SCALE * (f**2).sum()
    assert consensus_samples(day)["adrr"].item() == pytest.approx(expected, rel=1e-12)


def test_bands_sum_to_100_and_gri_by_hand() -> None:
    row = [40.0, 60.0, 100.0, 150.0, 200.0, 300.0, 120.0, 130.0, 170.0, 65.0]
    frame = consensus_samples([row])
    bands = frame[["tbr_54", "tbr_54_69", "tir", "tar_181_250", "tar_250"]].iloc[0]
    assert bands.tolist() == pytest.approx([10, 20, 50, 10, 10])
    assert frame["titr"].item() == pytest.approx(30.0)  # 100, 120 and 130 lie in 70-140
    # GRI = 3.0 * VLow + 2.4 * Low + 1.6 * VHigh + 0.8 * High
    # = 102 here, capped at 100
    assert frame["gri"].item() == 100.0
    row[5] = 120.0  # no time above 250: 3.0 * 10 + 2.4 * 20 + 0.8 * 10 = 86
    assert consensus_samples([row])["gri"].item() == pytest.approx(86.0)
    assert frame["gri_hypo"].item() == pytest.approx(10 + 0.8 * 20)
    assert frame["gri_hyper"].item() == pytest.approx(10 + 0.5 * 10)


def test_conga_and_modd_by_hand() -> None:
    # 1-hour lag on 5-minute steps = 12 readings; a ramp of +1 per step differs by 12
    ramp = np.arange(40.0) + 100
    ramp[-5:] += np.array([1, 0, 2, 0, 1])
    d = ramp[12:] - ramp[:-12]
    assert consensus_samples(ramp)["conga_1"].item() == pytest.approx(np.std(d, ddof=1))
    two_days = np.concatenate([np.full(288, 100.0), np.full(288, 130.0)])
    assert consensus_samples(two_days)["modd"].item() == pytest.approx(30.0)


def test_mage_of_a_square_wave() -> None:
    # excursions of 100 mg/dL every 2 hours: MAGE is their height
    wave = np.tile(np.r_[np.full(24, 100.0), np.full(24, 200.0)], 6)
    assert consensus_samples(wave)["mage"].item() == pytest.approx(100.0)


def test_active_from_filled_share() -> None:
    traces = Traces.from_array(np.full((2, 288), 120.0))
    traces.meta["filled_share"] = [0.0, 0.25]
    assert consensus_samples(traces)["active"].tolist() == pytest.approx([100.0, 75.0])


def test_episode_exit_needs_fifteen_minutes() -> None:
    # 20 minutes low, 10 minutes back (too short to end), 15 minutes low, then 25 minutes back
    row = [100.0] * 3 + [60.0] * 4 + [100.0] * 2 + [60.0] * 3 + [100.0] * 5
    frame = episode_samples([row])
    assert frame["hypo_l1_count"].item() == 1
    assert frame["hypo_l1_minutes"].item() == pytest.approx(45.0)
    # ten minutes low is no episode
    assert episode_samples([[100.0] * 3 + [60.0] * 2 + [100.0] * 5])["hypo_l1_count"].item() == 0


def test_episodes_do_not_cross_gaps() -> None:
    row = [60.0] * 2 + [np.nan] + [60.0] * 2 + [100.0] * 3
    assert episode_samples([row])["hypo_l1_count"].item() == 0


def test_bad_input() -> None:
    with pytest.raises(DataError, match="finite glucose"):
        consensus_samples([[100.0, np.inf]])
    with pytest.raises(DataError, match="step_minutes must be > 0"):
        consensus_samples([[100.0, 110.0]], step_minutes=0)
    with pytest.raises(DataError, match="observed_share must have one value"):
        consensus_samples([[100.0, 110.0]], observed_share=[1.0, 1.0])
    with pytest.raises(DataError, match="entry_minutes and exit_minutes must be > 0"):
        episode_samples([[100.0]], entry_minutes=0)
    with pytest.warns(UndefinedMetricWarning, match="no valid reading"):
        frame = consensus_samples([[np.nan, np.nan], [100.0, 110.0]])
    assert math.isnan(frame["mean"].iloc[0]) and frame["mean"].iloc[1] == 105.0
