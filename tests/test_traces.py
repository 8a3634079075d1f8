"""Loading, regularising and aligning glucose traces (synthreview.io.traces)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import DataError
from synthreview.io.cgm_grid import MG_DL_PER_MMOL_L
from synthreview.io.traces import Traces, align_traces, load_traces

DATA = Path(__file__).parent / "data"


def day_readings(
    values_by_minute: dict[int, float], day: str = "2021-05-01", subject: str = "A"
) -> pd.DataFrame:
    """Long-format readings of one subject: minute of the day -> glucose."""
    start = pd.Timestamp(day)
    return pd.DataFrame(
        {
            "id": subject,
            "time": [str(start + pd.Timedelta(minutes=m)) for m in values_by_minute],
            "gl": list(values_by_minute.values()),
        }
    )


def full_day(level: float = 100.0, *, skip: range = range(0), day: str = "2021-05-01"):
    """A complete 5-minute day with a ramp (level + minute / 10), minus the minutes in skip."""
    return day_readings({m: level + m / 10 for m in range(0, 1440, 5) if m not in skip}, day)


def ramp() -> np.ndarray:
    """The values of ``full_day()`` on the 288-point grid."""
    return 100 + np.arange(288) * 5 / 10


# --- long format ------------------------------------------------------------------------------


def test_long_format_multi_subject_day_traces():
    traces = load_traces(DATA / "cgm_long.csv")
    assert traces.values.shape == (3, 288)
    assert traces.values.dtype == np.float64
    assert not np.isnan(traces.values).any()
    assert traces.meta["source_id"].tolist() == ["Subject 2", "Subject 2", "Subject 5"]
    assert (traces.meta["start"] == traces.meta["start"].dt.normalize()).all()
    # the afternoon-only first days are dropped with their reason on record
    assert traces.dropped["start"].dt.strftime("%Y-%m-%d").tolist() == ["2015-02-24", "2015-02-28"]
    assert traces.dropped["reason"].str.contains("missing").all()
    assert any(
        "id column 'id', time column 'time', glucose column 'gl'" in n.message
        for n in traces.notices
    )
    assert traces.name == "cgm_long"


def test_single_subject_without_id_column():
    traces = load_traces(DATA / "cgm_one_subject.csv", name="bokeh")
    assert traces.values.shape == (2, 288)
    assert set(traces.meta["source_id"]) == {"bokeh"}
    assert traces.dropped["start"].tolist() == [pd.Timestamp("2010-03-26")]
    assert any("no id column" in n.message for n in traces.notices)


def test_explicit_column_names():
    frame = full_day().rename(columns={"id": "who", "time": "when", "gl": "mg"})
    traces = load_traces(frame, id_col="who", time_col="when", glucose_col="mg")
    assert traces.values.shape == (1, 288)
    with pytest.raises(DataError, match=r"time_col='stamp' is not a column"):
        load_traces(frame, time_col="stamp")


def test_unrecognised_columns():
    frame = full_day().rename(columns={"gl": "reading"})
    with pytest.raises(DataError, match=r"no glucose_col given and none of the columns"):
        load_traces(frame)


def test_numbers_written_as_text_in_a_dataframe():
    frame = full_day().astype({"gl": str})
    frame.loc[3, "gl"] = "NA"
    traces = load_traces(frame)
    np.testing.assert_allclose(traces.values[0], ramp())
    assert traces.meta["filled_share"].iloc[0] == pytest.approx(1 / 288)


def test_readings_snap_to_nearest_grid_point_and_average():
    frame = day_readings({m: 100.0 for m in range(0, 1440, 5)})
    jitter = pd.to_datetime(frame["time"]) + pd.Timedelta(seconds=70)  # 00:01:10 -> 00:00
    frame["time"] = jitter.astype(str)
    extra = pd.DataFrame({"id": ["A"], "time": ["2021-05-01 12:01:00"], "gl": [140.0]})
    traces = load_traces(pd.concat([frame, extra], ignore_index=True))
    assert traces.values.shape == (1, 288)
    assert traces.values[0, 144] == pytest.approx(120.0)  # 12:00 and 12:01 readings averaged
    assert traces.meta["filled_share"].iloc[0] == 0.0


def test_sparser_sampling_is_interpolated_and_reported():
    every_15 = day_readings({m: 100 + m / 10 for m in range(0, 1440, 15)})
    traces = load_traces(every_15)
    np.testing.assert_allclose(traces.values[0, :-2], ramp()[:-2])
    assert traces.meta["filled_share"].iloc[0] == pytest.approx(2 / 3)
    assert any("every 15 min" in n.message for n in traces.notices)


def test_mmol_per_litre_is_converted():
    mg = pd.read_csv(DATA / "cgm_one_subject.csv")
    mmol = mg.assign(glucose=(mg["glucose"] / MG_DL_PER_MMOL_L).round(2))
    buffer = io.BytesIO(mmol.to_csv(index=False).encode())
    buffer.name = "mmol.csv"
    converted = load_traces(buffer)
    reference = load_traces(DATA / "cgm_one_subject.csv")
    np.testing.assert_allclose(converted.values, reference.values, atol=0.1)
    assert any("mmol/L" in n.message for n in converted.notices)
    assert not any("mmol/L" in n.message for n in reference.notices)


# --- gaps and windows -------------------------------------------------------------------------


def test_short_gap_is_linear_and_long_gap_takes_nearest_value():
    # 4 missing points (20 min) and 12 missing points (60 min)
    traces = load_traces(full_day(skip=range(100, 120)).pipe(lambda f: f.drop(range(116, 128))))
    row, expected = traces.values[0], ramp()
    np.testing.assert_allclose(row[20:24], expected[20:24])  # linear fill restores the ramp
    # the 60-minute gap exceeds max_gap_minutes=30: its first half takes the value before it,
    # its second half the value after it
    np.testing.assert_allclose(row[120:126], expected[119])
    np.testing.assert_allclose(row[126:132], expected[132])
    assert traces.meta["filled_share"].iloc[0] == pytest.approx(16 / 288)


def test_max_gap_minutes_zero_fills_nothing_linearly():
    traces = load_traces(full_day(skip=range(100, 120)), max_gap_minutes=0)
    np.testing.assert_allclose(traces.values[0, 20:22], 100 + 95 / 10)
    np.testing.assert_allclose(traces.values[0, 22:24], 100 + 120 / 10)


def test_windows_with_too_much_missing_are_dropped():
    frame = pd.concat(
        [full_day(day="2021-05-01"), full_day(day="2021-05-02", skip=range(0, 360))]
    )  # 25 % missing
    kept = load_traces(frame)
    assert kept.meta["start"].tolist() == [pd.Timestamp("2021-05-01")]
    assert kept.dropped["start"].tolist() == [pd.Timestamp("2021-05-02")]
    assert "25% of points missing" in kept.dropped["reason"].iloc[0]
    lenient = load_traces(frame, max_missing_share=0.3)
    assert lenient.values.shape == (2, 288)
    assert lenient.meta["filled_share"].iloc[1] == pytest.approx(0.25)


def test_day_without_readings_is_recorded():
    frame = pd.concat([full_day(day="2021-05-01"), full_day(day="2021-05-03")])
    traces = load_traces(frame)
    assert traces.values.shape == (2, 288)
    assert traces.dropped["reason"].tolist() == ["no readings"]
    assert traces.dropped["start"].tolist() == [pd.Timestamp("2021-05-02")]


def test_fixed_length_windows():
    traces = load_traces(full_day(), window=48)
    assert traces.values.shape == (6, 48)
    assert traces.meta["start"].dt.hour.tolist() == [0, 4, 8, 12, 16, 20]
    np.testing.assert_allclose(traces.values.ravel(), ramp())


def test_no_window_with_enough_data():
    with pytest.raises(DataError, match=r"no window has enough data"):
        load_traces(day_readings({0: 100.0, 5: 101.0, 10: 102.0}))


# --- wide format ------------------------------------------------------------------------------


def test_wide_format():
    traces = load_traces(DATA / "cgm_wide.csv")
    raw = pd.read_csv(DATA / "cgm_wide.csv")
    assert traces.values.shape == (3, 24)
    assert traces.meta["source_id"].tolist() == ["p1", "p2", "p3"]
    assert traces.dropped["source_id"].tolist() == ["p4"]
    gap = raw.iloc[1, 1:].to_numpy(dtype=float)
    expected = np.interp(np.arange(24), np.flatnonzero(~np.isnan(gap)), gap[~np.isnan(gap)])
    np.testing.assert_allclose(traces.values[1], expected)
    assert traces.meta["filled_share"].tolist() == [0.0, 3 / 24, 0.0]


def test_wide_round_trip_through_to_frame(tmp_path):
    original = load_traces(DATA / "cgm_long.csv")
    path = tmp_path / "wide.csv"
    original.to_frame().to_csv(path, index=False)
    again = load_traces(path)
    np.testing.assert_allclose(again.values, original.values)
    assert again.meta["source_id"].tolist() == original.meta["source_id"].tolist()
    assert again.meta["start"].tolist() == original.meta["start"].tolist()


def test_wide_with_text_value_column():
    frame = pd.DataFrame({"id": ["a", "b"], "00:00": [100.0, 110.0], "00:05": ["x", "y"]})
    with pytest.raises(DataError, match=r"non-numeric value columns \['00:05'\]"):
        load_traces(frame, fmt="wide")


# --- bad input --------------------------------------------------------------------------------


def test_glucose_out_of_range():
    with pytest.raises(
        DataError,
        match=r"2 glucose values outside 10-1000 mg/dL, "
        r"e.g. \[1500.0, 5.0\]",
    ):
        load_traces(DATA / "glucose_out_of_range.csv")


def test_unparseable_timestamps():
    with pytest.raises(
        DataError,
        match=r"time column 'time' has 2 values that cannot be parsed"
        r".*'yesterday noon'",
    ):
        load_traces(DATA / "bad_timestamps.csv")


def test_text_glucose_values():
    frame = full_day().astype({"gl": str})
    frame.loc[3, "gl"] = "Low"
    with pytest.raises(DataError, match=r"glucose column 'gl' must be numeric.*\['Low'\]"):
        load_traces(frame)


def test_bad_window_argument():
    with pytest.raises(DataError, match=r"window must be 'day' or an int"):
        load_traces(full_day(), window="week")


# --- Traces object and alignment --------------------------------------------------------------


def test_from_array_subset_and_to_frame():
    values = np.linspace(80, 200, 3 * 288).reshape(3, 288)
    traces = Traces.from_array(values, name="gen")
    assert traces.meta["source_id"].tolist() == ["gen_1", "gen_2", "gen_3"]
    assert traces.meta["start"].isna().all()
    assert traces.notices == ()
    sub = traces.subset([2, 0])
    np.testing.assert_array_equal(sub.values, values[[2, 0]])
    assert sub.meta["source_id"].tolist() == ["gen_3", "gen_1"]
    frame = traces.to_frame()
    assert list(frame.columns[:4]) == ["id", "start", "00:00", "00:05"]
    assert frame.columns[-1] == "23:55"
    assert frame.shape == (3, 290)


def test_from_array_rejects_nan_and_flags_out_of_range():
    with pytest.raises(DataError, match=r"1 NaN or infinite"):
        Traces.from_array(np.array([[100.0, np.nan], [100.0, 101.0]]))
    flagged = Traces.from_array(np.array([[100.0, -5.0], [100.0, 101.0]]), name="ar")
    assert "outside 10-1000 mg/dL" in flagged.notices[0].message


def test_align_traces():
    real = load_traces(DATA / "cgm_long.csv")
    generated = Traces.from_array(real.values + 5.0, name="noise")
    review = align_traces(real.subset([0, 1]), [generated, generated], holdout=real.subset([1, 2]))
    assert review.kind == "traces"
    assert review.candidates == ["noise", "noise-2"]
    assert list(review.traces) == ["real", "holdout", "noise", "noise-2"]
    assert review.traces["noise-2"].name == "noise-2"
    assert review.schema.kinds["id"] == "identifier"
    assert review.schema.kinds["start"] == "datetime"
    assert len(review.schema.numeric) == 288
    assert review.real.frame.shape == (2, 290)
    assert review.synthetic["noise"].role == "synthetic"


def test_align_traces_length_mismatch():
    real = load_traces(DATA / "cgm_long.csv")
    short = Traces.from_array(real.values[:, :48], name="short")
    with pytest.raises(
        DataError,
        match=r"synthetic 'short' has traces of 48 steps of 5 min; "
        r"expected 288 steps",
    ):
        align_traces(real, {"short": short})


def test_align_traces_needs_two_traces():
    real = load_traces(DATA / "cgm_long.csv")
    with pytest.raises(DataError, match=r"holdout has 1 trace; at least 2"):
        align_traces(real, real, holdout=real.subset([0]))
