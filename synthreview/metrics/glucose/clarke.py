"""Clarke error grid: clinical zones of glucose predictions against reference values.

GlucoSynth (Lamp et al. 2023, §7.4 and appendix E) reports the share of forecasts in each
zone of the Clarke error grid (Clarke 2005) using Tsue's Python port of Guevara's
``clarke.m`` (github.com/suetAndTie/ClarkeErrorGrid). :func:`clarke_zones` follows that port
rule for rule, in its order, first match wins (r = reference, p = prediction, mg/dL):

- A: (r <= 70 and p <= 70) or (0.8 r <= p <= 1.2 r)
- E: (r >= 180 and p <= 70) or (r <= 70 and p >= 180)
- C: (70 <= r <= 290 and p >= r + 110) or (130 <= r <= 180 and p <= 1.4 r - 182)
- D: (r >= 240 and 70 <= p <= 180) or (r <= 175/3 and 70 <= p <= 180)
  or (175/3 <= r <= 70 and p >= 1.2 r)
- B: everything else

Zones run from A (clinically accurate) to E (erroneous treatment). The factors 0.8, 1.2 and
1.4 are applied as ``4 r / 5``, ``6 r / 5`` and ``7 r / 5`` so that points exactly on a
boundary (e.g. r = 100, p = 120) land on the side the rule states, not on the side float
rounding picks.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from synthreview.errors import UndefinedMetricWarning

ZONES: tuple[str, ...] = ("A", "B", "C", "D", "E")

#: where the D-zone corner sits on the reference axis (70 / 1.2 mg/dL)
_D_CORNER_MG_DL = 175 / 3


def check_pair(reference: np.ndarray, prediction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(reference, dtype=np.float64).ravel()
    p = np.asarray(prediction, dtype=np.float64).ravel()
    if r.shape != p.shape:
        raise ValueError(
            f"reference and prediction must have the same length; got {r.size} and {p.size}"
        )
    if not (np.isfinite(r).all() and np.isfinite(p).all()):
        raise ValueError("reference and prediction must be finite mg/dL values; got NaN or inf")
    return r, p


def clarke_zones(reference: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """Clarke error grid zone of each (reference, prediction) pair.

    Parameters
    ----------
    reference : array-like of shape (n,)
        Measured glucose, mg/dL.
    prediction : array-like of shape (n,)
        Predicted (or sensor) glucose, mg/dL.

    Returns
    -------
    ndarray of shape (n,), dtype ``<U1``
        ``"A"`` (clinically accurate) ... ``"E"`` (erroneous treatment); A is best.

    Examples
    --------
    >>> clarke_zones([100, 70, 240, 150, 100, 300, 70], [120, 100, 150, 28, 210, 420, 180])
    array(['A', 'D', 'D', 'C', 'C', 'B', 'E'], dtype='<U1')
    """
    r, p = check_pair(reference, prediction)
    zone_a = ((r <= 70) & (p <= 70)) | ((p <= 6 * r / 5) & (p >= 4 * r / 5))
    zone_e = ((r >= 180) & (p <= 70)) | ((r <= 70) & (p >= 180))
    zone_c = ((r >= 70) & (r <= 290) & (p >= r + 110)) | (
        (r >= 130) & (r <= 180) & (p <= 7 * r / 5 - 182)
    )
    zone_d = (
        ((r >= 240) & (p >= 70) & (p <= 180))
        | ((r <= _D_CORNER_MG_DL) & (p >= 70) & (p <= 180))
        | ((r >= _D_CORNER_MG_DL) & (r <= 70) & (p >= 6 * r / 5))
    )
    # np.select takes the first true condition, which is the port's if/elif order
    return np.select([zone_a, zone_e, zone_c, zone_d], ["A", "E", "C", "D"], default="B")


@dataclass(frozen=True)
class ClarkeResult:
    """Zones of a set of predictions and the share of points in each.

    Attributes
    ----------
    reference, prediction : ndarray of shape (n,)
        The pairs graded, mg/dL (kept for the scatter plot).
    zones : ndarray of shape (n,)
        ``"A"`` ... ``"E"`` per pair.
    percent : Mapping[str, float]
        Zone -> percentage of pairs (0-100; the five sum to 100). Higher A (and A+B) is
        better; C, D and E are clinically risky.
    """

    reference: np.ndarray
    prediction: np.ndarray
    zones: np.ndarray
    percent: Mapping[str, float]

    def to_dict(self) -> dict[str, float]:
        """``{"A": %, ..., "E": %}``."""
        return {z: float(self.percent[z]) for z in ZONES}


def clarke_error_grid(reference: np.ndarray, prediction: np.ndarray) -> ClarkeResult:
    """Grade predictions on the Clarke error grid and count the share per zone.

    Parameters
    ----------
    reference, prediction : array-like of shape (n,)
        mg/dL; see :func:`clarke_zones`.

    Returns
    -------
    ClarkeResult
        With ``percent`` in 0-100 (GlucoSynth Table 5 gives the same shares as fractions).
        Empty input warns :class:`~synthreview.errors.UndefinedMetricWarning` and gives NaN.
    """
    r, p = check_pair(reference, prediction)
    zones = clarke_zones(r, p)
    if zones.size == 0:
        warnings.warn(
            "clarke_error_grid got no pairs; zone shares are undefined",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        percent = {z: float("nan") for z in ZONES}
    else:
        percent = {z: float(100.0 * np.mean(zones == z)) for z in ZONES}
    return ClarkeResult(reference=r, prediction=p, zones=zones, percent=percent)
