"""Parkes (consensus) error grid, type 1 diabetes, and point-accuracy figures for forecasts.

The Parkes grid (Parkes et al. 2000, *Diabetes Care* 23:1143) replaced Clarke's as the
consensus of 100 clinicians on the risk of acting on a wrong glucose value. Its zone edges
were published as coordinates only later, in Table 1 of Pfützner et al. 2013 (*J Diabetes Sci
Technol* 7:1275, "Technical aspects of the Parkes error grid"). Type 1 vertices (reference
mg/dL, test mg/dL); each polyline continues past its last vertex on its last segment's slope:

- A|B upper: (0, 50) (30, 50) (140, 170) (280, 380) (430, 550)
- A|B lower: (50, 0) (50, 30) (170, 145) (385, 300) (550, 450)
- B|C upper: (0, 60) (30, 60) (50, 80) (70, 110) (260, 550)
- B|C lower: (120, 0) (120, 30) (260, 130) (550, 250)
- C|D upper: (0, 100) (25, 100) (50, 125) (80, 215) (125, 550)
- C|D lower: (250, 0) (250, 40) (550, 150)
- D|E upper: (0, 150) (35, 155) (50, 550)

A point takes the outermost zone whose edge it lies beyond: above an upper line (test >
line) or right of a lower line's vertical start and below it (test < line). A point exactly on
an edge stays in the inner zone. Zone A: no effect on clinical action; B: altered action, little
or no effect on outcome; C: likely to affect outcome; D: significant medical risk; E: could have
dangerous consequences.

Point accuracy: ``mard`` = mean |p - r| / r · 100 (%, lower is better), and ``within_15`` =
% of predictions within 15 mg/dL of a reference below 100 mg/dL or within 15 % of a reference
at or above 100 mg/dL (the ISO 15197:2013 accuracy criterion).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from synthreview.errors import UndefinedMetricWarning
from synthreview.metrics.glucose.clarke import ZONES, check_pair

#: (outer zone, side, vertices) for every Parkes type 1 edge (Pfützner et al. 2013, Table 1)
PARKES_TYPE1_EDGES: tuple[tuple[str, str, tuple[tuple[float, float], ...]], ...] = (
    ("B", "upper", ((0, 50), (30, 50), (140, 170), (280, 380), (430, 550))),
    ("B", "lower", ((50, 0), (50, 30), (170, 145), (385, 300), (550, 450))),
    ("C", "upper", ((0, 60), (30, 60), (50, 80), (70, 110), (260, 550))),
    ("C", "lower", ((120, 0), (120, 30), (260, 130), (550, 250))),
    ("D", "upper", ((0, 100), (25, 100), (50, 125), (80, 215), (125, 550))),
    ("D", "lower", ((250, 0), (250, 40), (550, 150))),
    ("E", "upper", ((0, 150), (35, 155), (50, 550))),
)


def edge_value(vertices: tuple[tuple[float, float], ...], reference: np.ndarray) -> np.ndarray:
    """Test value of an edge at each reference value (linear between vertices, extended).

    A lower edge starts with a vertical segment: its value is taken from the vertex on top of
    it onwards, and left of it the edge does not exist (NaN).
    """
    xs = np.array([v[0] for v in vertices], dtype=np.float64)
    ys = np.array([v[1] for v in vertices], dtype=np.float64)
    if xs[0] == xs[1]:  # vertical start of a lower edge
        xs, ys = xs[1:], ys[1:]
    out = np.interp(reference, xs, ys)
    slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
    beyond = reference > xs[-1]
    out[beyond] = ys[-1] + slope * (reference[beyond] - xs[-1])
    if vertices[0][0] == vertices[1][0]:
        out[reference < xs[0]] = np.nan
    return out


def parkes_zones(reference: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """Parkes type 1 zone (``"A"``-``"E"``) of each (reference, prediction) pair, mg/dL.

    Examples
    --------
    >>> parkes_zones([100, 100, 100, 300], [100, 130, 185, 100]).tolist()
    ['A', 'B', 'C', 'C']
    """
    r, p = check_pair(reference, prediction)
    rank = np.zeros(r.size, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        for zone, side, vertices in PARKES_TYPE1_EDGES:
            line = edge_value(vertices, r)
            beyond = p > line if side == "upper" else p < line
            rank = np.where(beyond, np.maximum(rank, ZONES.index(zone)), rank)
    return np.asarray(ZONES, dtype=object)[rank].astype(str)


@dataclass(frozen=True)
class PointAccuracy:
    """Parkes zones and point accuracy of predictions against reference values.

    Attributes
    ----------
    percent : Mapping[str, float]
        Zone -> % of pairs (A-E, sum 100; NaN without pairs). A + B high is better.
    mard : float
        Mean absolute relative difference, %, >= 0, lower is better.
    within_15 : float
        % of predictions within 15 mg/dL (< 100) / 15 % (>= 100) of the reference, higher
        is better.
    n : int
    """

    percent: Mapping[str, float]
    mard: float
    within_15: float
    n: int
    zones: np.ndarray = field(repr=False, compare=False, default_factory=lambda: np.empty(0))

    def to_dict(self) -> dict[str, object]:
        """``{parkes: {A..E}, mard, within_15, n}``."""
        return {"parkes": dict(self.percent), "mard": self.mard, "within_15": self.within_15,
                "n": self.n}  # fmt: skip


def point_accuracy(reference: np.ndarray, prediction: np.ndarray) -> PointAccuracy:
    """Parkes type 1 zone shares, MARD and the ISO 15 mg/dL / 15 % share of predictions.

    Parameters
    ----------
    reference, prediction : array-like of shape (n,)
        Measured and predicted glucose, mg/dL, finite; references must be > 0.

    Returns
    -------
    PointAccuracy
        NaN figures (with an :class:`~synthreview.errors.UndefinedMetricWarning`) for no pairs.
    """
    r, p = check_pair(reference, prediction)
    if (r <= 0).any():
        raise ValueError(f"reference must be > 0 mg/dL; got minimum {r.min():g} instead")
    if r.size == 0:
        warnings.warn("no (reference, prediction) pairs; Parkes zones and MARD are undefined",
                      UndefinedMetricWarning, stacklevel=2)  # fmt: skip
        return PointAccuracy({z: float("nan") for z in ZONES}, float("nan"), float("nan"), 0)
    zones = parkes_zones(r, p)
    error = np.abs(p - r)
    within = np.where(r < 100, error <= 15, error <= 0.15 * r)
    return PointAccuracy(
        percent={z: float(100.0 * np.mean(zones == z)) for z in ZONES},
        mard=float(100.0 * np.mean(error / r)),
        within_15=float(100.0 * np.mean(within)),
        n=int(r.size),
        zones=zones,
    )
