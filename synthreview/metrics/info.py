"""What a reviewer needs to know about one metric, in one frozen record.

Every metric the product shows is described once by a :class:`MetricInfo` in its section's
``catalog.py`` (``metrics/<section>/catalog.py``); :mod:`synthreview.metrics.registry` collects
them. The release policy takes each rule's direction from here, the pages take their tooltips
(``meaning``) and the glossary its text, and ``tests/test_registry_properties.py`` checks every
registered metric's range, ideal value and row-order invariance against this record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Direction = Literal["higher", "lower", "closest"]
DIRECTIONS: tuple[str, ...] = ("higher", "lower", "closest")
SECTIONS: tuple[str, ...] = ("fidelity", "privacy", "utility", "glucose")


@dataclass(frozen=True)
class MetricInfo:
    """One metric: where it lives, which way is better, and what it means in one line.

    Attributes
    ----------
    name : str
        Registry key, unique across sections (``"ip_alpha"``, ``"discriminator_auc"``).
    section : {"fidelity", "privacy", "utility", "glucose"}
    label : str
        Short display label (``"IPα"``).
    direction : {"higher", "lower", "closest"}
        Which way is better. ``"closest"``: the best value is ``ideal`` and a distance from it
        in either direction is worse (a discriminator AUC of 0.1 is as suspicious as 0.9).
    range : tuple of float
        Closed interval of possible values; ``math.inf`` for an unbounded side.
    ideal : float
        The value of a perfect candidate (inside ``range``); for ``"lower"`` metrics whose
        chance level is not 0 (a membership-inference AUC) this is the chance level.
    key : str
        Where the value sits in the section's ``to_dict()`` (``"membership_inference[*].auc"``).
    citation : str
        Paper and section the definition follows (see ``shared/papers/README.md``).
    meaning : str
        One plain-language line (tooltip text).
    holdout_meaning : str
        What the same metric computed for the holdout table (the reference) tells the reviewer.
    fmt : str
        ``format()`` spec for display (``".3f"``).
    suspicious_above_holdout : bool
        True where a value *better* than the holdout reference (a fresh real sample) is a sign
        of memorisation rather than an improvement: recall and coverage of the training data
        (IRβ, k-NN recall, coverage, motif coverage) reach beyond a fresh sample's only when
        the candidate reproduces training rows. Screens must not colour such a value as good
        (issue 27 item 4: a copy's IRβ "+0.388 vs holdout" was shown green).
    """

    name: str
    section: str
    label: str
    direction: Direction
    range: tuple[float, float]
    ideal: float
    key: str
    citation: str
    meaning: str
    holdout_meaning: str
    fmt: str = ".3f"
    suspicious_above_holdout: bool = False

    def __post_init__(self) -> None:
        if self.section not in SECTIONS:
            raise ValueError(f"section must be one of {SECTIONS}; got {self.section!r} instead")
        if self.direction not in DIRECTIONS:
            raise ValueError(
                f"direction must be one of {DIRECTIONS}; got {self.direction!r} instead"
            )
        lo, hi = self.range
        if not lo < hi or not lo <= self.ideal <= hi:
            raise ValueError(
                f"range must be (lo, hi) with lo < hi holding ideal; got {self.range!r} and "
                f"ideal {self.ideal!r} instead ({self.name})"
            )
        format(1.0, self.fmt)  # a bad spec fails here, not on a page

    def format(self, value: float | None) -> str:
        """``value`` in this metric's format; ``"n/a"`` for None or NaN."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        return format(value, self.fmt)

    def beyond_holdout(self, value: float, reference: float) -> bool:
        """Whether ``value`` is better than the holdout ``reference`` where that is suspicious.

        False for metrics without :attr:`suspicious_above_holdout`, and when either number is
        missing; the caller decides how much noise to allow (compare interval bounds).
        """
        if not self.suspicious_above_holdout:
            return False
        if any(v is None or not math.isfinite(v) for v in (value, reference)):
            return False
        return self.better(value, reference)

    def better(self, a: float, b: float) -> bool:
        """Whether ``a`` is strictly better than ``b`` for this metric."""
        if self.direction == "higher":
            return a > b
        if self.direction == "lower":
            return a < b
        return abs(a - self.ideal) < abs(b - self.ideal)
