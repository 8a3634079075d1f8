"""Reviewer options: what a review computes, and which section each choice affects.

:class:`ReviewOptions` is part of every cache key (the dashboard keeps each section per
``section_key``), so two reviews with the same data, seed and options give the same numbers.
Re-exported from :mod:`synthreview.review`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from synthreview.errors import ConfigError
from synthreview.io.schema import Review


@dataclass(frozen=True)
class ReviewOptions:
    """Reviewer choices that change results (part of every cache key).

    Attributes
    ----------
    embedding : {"oneclass", "none"}
        Evaluation embedding for the fidelity metrics (Alaa et al. 2022, appendix).
    target : str or None
        Column for ML efficacy (train on synthetic, test on real).
    sensitive : str or None
        Column for attribute inference.
    groups : tuple of str
        Grouping columns for proportion and mean errors.
    formula : str or None
        Regression for confidence-interval overlap, ``"y ~ a + b"``.
    max_attack : int
        Members and non-members per membership-inference attack set.
    n_bootstrap : int
        Bootstrap resamples for confidence intervals.
    l_diversity : int
        ℓ for the ℓ-diversity of tree leaves.
    motif_length : int
        Glucose motif length τ in steps (GlucoSynth §3.1; 48 = 4 hours of 5-minute steps).
    motif_tolerance : float
        Glucose motif matching tolerance σ in mg/dL per value (GlucoSynth §3.1).
    """

    embedding: str = "oneclass"
    target: str | None = None
    sensitive: str | None = None
    groups: tuple[str, ...] = ()
    formula: str | None = None
    max_attack: int = 10_000
    n_bootstrap: int = 200
    l_diversity: int = 10
    motif_length: int = 48
    motif_tolerance: float = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(self.groups))
        if int(self.motif_length) < 2 or not float(self.motif_tolerance) > 0:
            raise ConfigError(
                "motif_length must be >= 2 steps and motif_tolerance > 0 mg/dL; got "
                f"{self.motif_length!r} and {self.motif_tolerance!r}"
            )
        if self.embedding not in ("oneclass", "none"):
            raise ConfigError(f"embedding must be 'oneclass' or 'none'; got {self.embedding!r}")


#: options each section's numbers depend on (the rest of ReviewOptions does not change them)
SECTION_OPTIONS = {
    "fidelity": ("embedding", "n_bootstrap"),
    "privacy": ("embedding", "sensitive", "l_diversity", "max_attack"),
    "utility": ("target", "groups", "formula"),
    "glucose": ("max_attack", "n_bootstrap", "motif_length", "motif_tolerance"),
}
_TARGET_NAMES = ("income", "target", "label", "class", "outcome", "y", "death", "creditability")


def default_options(review: Review) -> ReviewOptions:
    """Options a reviewer would start from: a conventional target column when one exists.

    The target (and the sensitive column for attribute inference) is the first analysed column
    whose name is a conventional outcome name (``income``, ``target``, ``label``, ...);
    grouping columns are ``race`` and ``sex`` when present (the appendix's example groups).
    """
    analysed = {c.lower(): c for c in review.schema.analysed}
    target = next((analysed[n] for n in _TARGET_NAMES if n in analysed), None)
    groups = tuple(c for c in review.schema.categorical if c.lower() in ("race", "sex"))
    return ReviewOptions(target=target, sensitive=target, groups=groups)


def section_key(section: str, options: ReviewOptions) -> tuple[Any, ...]:
    """The part of ``options`` that ``section``'s results depend on (for caching)."""
    return (section, *(getattr(options, name) for name in SECTION_OPTIONS[section]))
