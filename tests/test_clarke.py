"""Clarke error grid zones: a hand-checked table covering every zone and every boundary."""

from __future__ import annotations

import numpy as np
import pytest

from synthreview.errors import UndefinedMetricWarning
from synthreview.metrics.glucose.clarke import ZONES, clarke_error_grid, clarke_zones

# (reference, prediction, zone, why) — each checked by hand against the rule order A, E, C, D, B
CASES = [
    (100, 120, "A", "p = 1.2 r, upper edge of the 20 % band"),
    (100, 80, "A", "p = 0.8 r, lower edge of the 20 % band"),
    (120, 144, "A", "p = 1.2 r exactly (6 r / 5, no float drift)"),
    (65, 78, "A", "p = 1.2 r at low glucose: A is tested before D"),
    (50, 50, "A", "both hypoglycaemic"),
    (70, 70, "A", "both at the 70 edge"),
    (30, 65, "A", "both <= 70 though 117 % off"),
    (175 / 3, 70, "A", "D corner: r <= 70 and p <= 70 wins first"),
    (0, 0, "A", "origin"),
    (100, 79, "B", "just outside the 20 % band, no other zone"),
    (100, 121, "B", "just above the band, below r + 110"),
    (100, 209, "B", "one below the C line p = r + 110"),
    (300, 420, "B", "r > 290: the upper C zone has ended"),
    (291, 401, "B", "r just past 290"),
    (180, 71, "B", "p one above the lower C line (1.4 r - 182 = 70) and above the E limit"),
    (179, 70, "B", "r < 180 so not E; 1.4 r - 182 = 68.6 < 70 so not C"),
    (150, 29, "B", "one above the lower C line (28)"),
    (130, 1, "B", "lower C line is 0 at r = 130"),
    (250, 181, "B", "upper D zone stops at p = 180"),
    (239, 150, "B", "upper D zone starts at r = 240"),
    (100, 210, "C", "p = r + 110 exactly"),
    (290, 400, "C", "r = 290 edge of the upper C zone"),
    (150, 28, "C", "p = 1.4 r - 182 exactly"),
    (130, 0, "C", "r = 130 edge of the lower C zone"),
    (70, 100, "D", "r = 70, p >= 1.2 r"),
    (70, 179, "D", "r = 70, just below the E limit"),
    (60, 75, "D", "175/3 <= r <= 70 and p >= 1.2 r = 72"),
    (65, 79, "D", "one above 1.2 r at low glucose"),
    (50, 100, "D", "r <= 175/3 with 70 <= p <= 180"),
    (58, 71, "D", "r just below the corner, p just inside 70-180"),
    (240, 150, "D", "r >= 240 with p in 70-180"),
    (240, 180, "D", "upper D zone, p = 180 edge"),
    (250, 71, "D", "upper D zone, p just above 70"),
    (70, 180, "E", "r = 70 and p = 180: both E edges"),
    (50, 181, "E", "hypo read as hyper"),
    (58, 180, "E", "E is tested before D"),
    (180, 70, "E", "r = 180 and p = 70: both E edges"),
    (200, 60, "E", "hyper read as hypo"),
    (400, 70, "E", "far hyper read as 70"),
]


@pytest.mark.parametrize(("reference", "prediction", "zone", "why"), CASES)
def test_zone_of_hand_checked_pair(reference, prediction, zone, why):
    assert clarke_zones([reference], [prediction])[0] == zone, why


def test_table_covers_every_zone_and_is_vectorised():
    r = np.array([c[0] for c in CASES], dtype=float)
    p = np.array([c[1] for c in CASES], dtype=float)
    expected = [c[2] for c in CASES]
    assert len(CASES) >= 25
    assert set(expected) == set(ZONES)
    assert clarke_zones(r, p).tolist() == expected


def test_error_grid_percentages_sum_to_100():
    result = clarke_error_grid([100, 100, 70, 150, 70], [120, 79, 100, 28, 180])
    assert result.to_dict() == {"A": 20.0, "B": 20.0, "C": 20.0, "D": 20.0, "E": 20.0}
    assert sum(result.percent.values()) == pytest.approx(100.0)


def test_mismatched_lengths_and_nan_are_rejected():
    with pytest.raises(ValueError, match="same length"):
        clarke_zones([100, 110], [100])
    with pytest.raises(ValueError, match="finite"):
        clarke_zones([np.nan], [100])


def test_empty_input_warns_and_gives_nan():
    with pytest.warns(UndefinedMetricWarning):
        result = clarke_error_grid([], [])
    assert all(np.isnan(v) for v in result.percent.values())
