"""Score intervals of a proportion and of the difference of two independent proportions.

Wilson (1927) gives the interval of one rate; Newcombe (1998, "Interval estimation for the
difference between independent proportions: comparison of eleven methods", Statistics in
Medicine 17: 873-890, method 10, the *hybrid score* interval) combines the two rates' Wilson
limits into an interval of their difference. Unlike a first-order (Wald) interval around the
observed rates it keeps its coverage near 0 and 1, where a candidate that repeats no rare
combination at all and a control that repeats many sit.
"""

from __future__ import annotations

import math

from scipy.stats import norm

__all__ = ["newcombe_difference", "wilson_interval"]


def _check(k: int, n: int, name: str) -> None:
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"n_{name} must be an integer >= 1; got {n!r} instead")
    if not 0 <= k <= n:
        raise ValueError(f"k_{name} must be a count in [0, n_{name}={n}]; got {k!r} instead")


def wilson_interval(k: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Wilson score interval of the rate ``k / n``.

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials, ``>= 1``.
    confidence : float, default=0.95
        Two-sided coverage.

    Returns
    -------
    tuple of float
        ``(lower, upper)`` inside [0, 1].
    """
    _check(k, n, "1")
    z = float(norm.ppf(0.5 * (1 + confidence)))
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


def newcombe_difference(
    k1: int, n1: int, k2: int, n2: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``k1 / n1 - k2 / n2`` (independent samples).

    With Wilson limits ``(l1, u1)`` and ``(l2, u2)`` of the two rates and ``d = p1 - p2``:
    ``lower = d - sqrt((p1 - l1)**2 + (u2 - p2)**2)``,
    ``upper = d + sqrt((u1 - p1)**2 + (p2 - l2)**2)`` (Newcombe 1998, method 10).

    Returns
    -------
    tuple of float
        ``(lower, upper)`` inside [-1, 1].
    """
    _check(k1, n1, "1")
    _check(k2, n2, "2")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, confidence=confidence)
    l2, u2 = wilson_interval(k2, n2, confidence=confidence)
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lower), min(1.0, upper)
