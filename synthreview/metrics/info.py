"""What a reviewer needs to know about one metric, and the function that computes it.

Every metric the product shows is described once by a :class:`MetricInfo` in its section's
``catalog.py`` (``metrics/<section>/catalog.py``); :mod:`synthreview.metrics.registry` collects
them. As in scikit-learn's scorer registry, each entry *binds* its name to the function that
computes it (``function``, called through :meth:`MetricInfo.compute` with one signature for
every metric), to its direction and format, and to the release-policy rules it feeds
(``rules``; :mod:`synthreview.judgement.policy` checks both sides at load). A metric that cannot
be computed from two tables alone (it reads the release audit, or trains a forecaster on
traces) binds no function and says why (``unbound``).

The release policy takes each rule's direction from here, the pages take their tooltips
(``meaning``) and the glossary its text, and ``tests/test_registry_properties.py`` drives every
bound function (range, identical data, row order) without a list of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Direction = Literal["higher", "lower", "closest"]
DIRECTIONS: tuple[str, ...] = ("higher", "lower", "closest")
SECTIONS: tuple[str, ...] = ("fidelity", "privacy", "utility", "glucose")
#: what a bound function reads: two tables (DataFrames + Schema) or two sets of glucose traces
INPUTS: tuple[str, ...] = ("table", "traces")
#: what a bound function gives when the synthetic data is the real data itself
IDENTICAL: tuple[str, ...] = ("ideal", "worst")
#: ``function(real, synthetic, *, holdout, schema, seed) -> float``
MetricFunction = Callable[..., float]


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
    function : callable or None
        The bound metric: ``function(real, synthetic, *, holdout, schema, seed) -> float``
        (tables: DataFrames and their :class:`~synthreview.io.schema.Schema`; traces:
        :class:`~synthreview.io.traces.Traces` and ``schema=None``). ``None`` only with
        ``unbound``; a catalog entry with neither fails the registry's property test.
    unbound : str
        Why no function binds (the value comes from the release audit, or needs a trained
        forecaster); empty when ``function`` is set.
    inputs : {"table", "traces"}
        What ``function`` reads.
    identical : {"ideal", "worst"}
        What ``function`` gives when the synthetic data *is* the real data: the ideal (a
        fidelity or utility metric), or worse than a fresh sample (a copy or privacy signal:
        identical rows are copies).
    rules : tuple of str
        The release-policy rules (``[rules.NAME]``) that judge this metric.
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
    function: MetricFunction | None = None
    unbound: str = ""
    inputs: str = "table"
    identical: str = "ideal"
    rules: tuple[str, ...] = ()

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
        # an entry without either is caught by tests/test_registry_properties.py, not here:
        # a catalog line added without a binding must not stop the package from importing
        if self.function is not None and self.unbound:
            raise ValueError(
                f"a metric binds a function or says why not (unbound), not both; got "
                f"function={self.function!r} and unbound={self.unbound!r} instead ({self.name})"
            )
        if self.function is not None and not callable(self.function):
            raise ValueError(f"function must be callable; got {self.function!r} ({self.name})")
        if self.inputs not in INPUTS:
            raise ValueError(f"inputs must be one of {INPUTS}; got {self.inputs!r} instead")
        if self.identical not in IDENTICAL:
            raise ValueError(
                f"identical must be one of {IDENTICAL}; got {self.identical!r} instead"
            )
        if isinstance(self.rules, str) or not all(isinstance(r, str) for r in self.rules):
            raise ValueError(f"rules must be a tuple of rule names; got {self.rules!r} instead")

    def compute(
        self,
        real: Any,
        synthetic: Any,
        *,
        holdout: Any = None,
        schema: Any = None,
        seed: int = 0,
    ) -> float:
        """This metric of ``synthetic`` against ``real`` through the bound function.

        Parameters
        ----------
        real, synthetic : DataFrame or Traces
            Training rows and the candidate (:attr:`inputs` says which kind).
        holdout : DataFrame or Traces, optional
            Rows held out of training; metrics that need them raise without.
        schema : Schema, optional
            Column kinds of a table (``None`` for traces).
        seed : int, default=0

        Returns
        -------
        float

        Raises
        ------
        TypeError
            The metric binds no function (the message gives :attr:`unbound`).
        """
        if self.function is None:
            why = self.unbound or "no reason given"
            raise TypeError(f"metric {self.name!r} binds no function: {why}")
        return float(self.function(real, synthetic, holdout=holdout, schema=schema, seed=seed))

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
