"""Parkes type 1 zones (hand-checked on Pfützner et al. 2013 Table 1 vertices), point accuracy,
the AGP profile and its distance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.metrics.glucose.agp import agp_distance, agp_profile, split_day_night
from synthreview.metrics.glucose.parkes import PARKES_TYPE1_EDGES, parkes_zones, point_accuracy


@pytest.mark.parametrize(
    ("reference", "prediction", "zone"),
    [
        (100, 100, "A"),
        (30, 50, "A"),  # on the A|B edge: stays inside
        (30, 51, "B"),
        (140, 170, "A"),  # a vertex of the A|B upper edge
        (140, 171, "B"),
        (280, 381, "B"),
        (170, 146, "A"),
        (170, 144, "B"),  # below the A|B lower edge at its vertex (170, 145)
        (49, 0.5, "A"),  # left of the A|B lower edge's vertical start at 50
        (50, 29, "B"),
        (70, 111, "C"),  # above the B|C vertex (70, 110)
        (120, 29, "C"),  # right of the B|C lower start at 120, below 30
        (260, 129, "C"),
        (80, 216, "D"),  # above the C|D vertex (80, 215)
        (250, 39, "D"),
        (550, 149, "D"),
        (35, 156, "E"),  # above the D|E vertex (35, 155)
        (10, 151, "D"),  # the D|E edge at 10 is 150 + 5 * 10 / 35 = 151.43
        (10, 152, "E"),
        # extension past the last vertex on the last slope: A|B upper (430, 550) -> slope 17/15
        (580, 550 + 150 * 17 / 15 - 0.01, "A"),
        (580, 550 + 150 * 17 / 15 + 0.01, "B"),
    ],
)
def test_parkes_zone_at_published_vertices(reference: float, prediction: float, zone: str) -> None:
    assert parkes_zones([reference], [prediction]).tolist() == [zone]


def test_parkes_edges_are_table1_of_pfutzner_2013() -> None:
    edges = {(zone, side): vertices for zone, side, vertices in PARKES_TYPE1_EDGES}
    assert edges[("B", "upper")][-1] == (430, 550)
    assert edges[("C", "lower")] == ((120, 0), (120, 30), (260, 130), (550, 250))
    assert edges[("E", "upper")] == ((0, 150), (35, 155), (50, 550))


def test_point_accuracy_by_hand() -> None:
    reference = np.array([50.0, 80.0, 100.0, 200.0])
    prediction = np.array([60.0, 100.0, 110.0, 240.0])
    acc = point_accuracy(reference, prediction)
    assert acc.mard == pytest.approx(100 * np.mean([10 / 50, 20 / 80, 10 / 100, 40 / 200]))
    # within 15 mg/dL below 100: 50->60 yes, 80->100 no; within 15 % at >= 100: 100->110 yes,
    # 200->240 no
    assert acc.within_15 == pytest.approx(50.0)
    assert sum(acc.percent.values()) == pytest.approx(100.0)
    assert acc.to_dict()["n"] == 4


def test_point_accuracy_bad_input() -> None:
    with pytest.raises(ValueError, match="reference must be > 0"):
        point_accuracy([0.0], [10.0])
    with pytest.raises(ValueError, match="same length"):
        point_accuracy([100.0], [10.0, 20.0])
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(point_accuracy([], []).mard)


def test_agp_profile_and_distance() -> None:
    day = np.arange(288.0) + 50  # rises by 1 mg/dL every 5 minutes from midnight
    traces = np.tile(day, (10, 1))
    profile = agp_profile(traces)
    assert profile.minutes.size == 96 and profile.n_readings[0] == 30
    assert profile.percentiles[50][0] == pytest.approx(51.0)  # median of 50, 51, 52
    assert profile.percentiles[5][0] == pytest.approx(50.0)
    assert agp_distance(profile, agp_profile(traces + 40)) == pytest.approx(40.0)
    assert agp_distance(profile, profile) == 0.0


def test_day_night_split() -> None:
    parts = split_day_night(np.arange(288.0)[None, :])
    assert np.isfinite(parts["night"]).sum() == 72  # 00:00-06:00 = 72 five-minute readings
    assert np.isfinite(parts["day"]).sum() == 216


def test_agp_bad_input() -> None:
    with pytest.raises(DataError, match="bin_minutes must be a positive divisor"):
        agp_profile(np.ones((2, 288)), bin_minutes=7)
