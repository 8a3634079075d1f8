"""The clinical-consensus view of one candidate: consensus metrics, episodes, AGP, day/night.

Each comparison is real vs candidate with the glycemic section's tests (Welch t, Mann-Whitney
beside it; :func:`~synthreview.metrics.glucose.glycemic.compare_glycemic`), and real vs holdout
as the reference a faithful generator can hope to reach. Per-trace metrics compare day traces;
per-subject metrics (``meta.source_id``) are compared when both sides have at least two
subjects with more than one trace each (generated traces usually carry one id per trace).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from synthreview.metrics.glucose.agp import AGPProfile, agp_distance, agp_profile, split_day_night
from synthreview.metrics.glucose.consensus import (
    CONSENSUS_METRICS,
    consensus_samples,
    subject_consensus,
)
from synthreview.metrics.glucose.episodes import EPISODE_KINDS, episode_samples
from synthreview.metrics.glucose.glycemic import GlycemicComparison, compare_glycemic

#: per-trace comparisons leave out MODD: a day trace holds no pair of readings 24 h apart
TRACE_METRICS = tuple(m for m in CONSENSUS_METRICS if m != "modd")
#: metrics split by day (06-24) and night (00-06)
DAY_NIGHT_METRICS = ("mean", "cv", "tbr_54", "tbr_54_69", "tir", "titr", "tar_181_250",
                     "tar_250", "gri")  # fmt: skip
#: episode columns compared between populations
EPISODE_METRICS = tuple(f"{k}_{s}" for k in EPISODE_KINDS for s in ("per_day", "minutes"))
EPISODE_LABELS: Mapping[str, tuple[str, str, str]] = {
    **{f"{k}_per_day": (f"{label}: episodes per day", "1/day", "lower")
       for k, (label, _, _) in EPISODE_KINDS.items()},
    **{f"{k}_minutes": (f"{label}: mean duration", "min", "lower")
       for k, (label, _, _) in EPISODE_KINDS.items()},
}  # fmt: skip


@dataclass(frozen=True, eq=False)
class ClinicalSamples:
    """Per-trace and per-subject samples of one source (real, holdout or a candidate)."""

    consensus: pd.DataFrame = field(repr=False)
    episodes: pd.DataFrame = field(repr=False)
    day: pd.DataFrame = field(repr=False)
    night: pd.DataFrame = field(repr=False)
    subjects: pd.DataFrame | None = field(repr=False)
    agp: AGPProfile = field(repr=False)


def _has_subjects(traces: object) -> bool:
    meta = getattr(traces, "meta", None)
    if meta is None or "source_id" not in meta:
        return False
    counts = meta["source_id"].value_counts()
    return int((counts > 1).sum()) >= 2


def clinical_samples(traces: object, *, default_start: float = 0.0) -> ClinicalSamples:
    """Everything the clinical comparison needs from one source (computed once per source)."""
    step = float(getattr(traces, "step_minutes", 5))
    parts = split_day_night(traces, step_minutes=step, default_start=default_start)
    return ClinicalSamples(
        consensus=consensus_samples(traces, step_minutes=step),
        episodes=episode_samples(traces, step_minutes=step),
        day=consensus_samples(parts["day"], step_minutes=step)[list(DAY_NIGHT_METRICS)],
        night=consensus_samples(parts["night"], step_minutes=step)[list(DAY_NIGHT_METRICS)],
        subjects=subject_consensus(traces) if _has_subjects(traces) else None,
        agp=agp_profile(traces, step_minutes=step, default_start=default_start),
    )


@dataclass(frozen=True)
class ClinicalComparison:
    """Consensus metrics, episodes, AGP and day/night of a source against real traces.

    Attributes
    ----------
    consensus, episodes, day, night : tuple of GlycemicComparison
        Per-trace populations, real vs the source (p < 0.05 = a significant difference).
    subjects : tuple of GlycemicComparison or None
        Per-subject consensus metrics, when both sides have subjects with several traces.
    agp_distance : float
        Mean |difference| of the AGP percentile curves, mg/dL, lower is better.
    """

    consensus: tuple[GlycemicComparison, ...]
    episodes: tuple[GlycemicComparison, ...]
    day: tuple[GlycemicComparison, ...]
    night: tuple[GlycemicComparison, ...]
    subjects: tuple[GlycemicComparison, ...] | None
    agp_distance: float

    def to_dict(self) -> dict[str, Any]:
        """``{consensus, episodes, day_night: {day, night}, subjects, agp_distance}``."""

        def table(rows: tuple[GlycemicComparison, ...] | None) -> dict[str, Any] | None:
            return None if rows is None else {m.metric: m.to_dict() for m in rows}

        return {
            "consensus": table(self.consensus),
            "episodes": table(self.episodes),
            "day_night": {"day": table(self.day), "night": table(self.night)},
            "subjects": table(self.subjects),
            "agp_distance": self.agp_distance,
        }


def compare_clinical(real: ClinicalSamples, other: ClinicalSamples) -> ClinicalComparison:
    """Compare a source's :class:`ClinicalSamples` with real's."""
    subjects = None
    if real.subjects is not None and other.subjects is not None:
        subjects = compare_glycemic(real.subjects, other.subjects, metrics=list(CONSENSUS_METRICS))
    return ClinicalComparison(
        consensus=compare_glycemic(
            real.consensus, other.consensus, metrics=list(CONSENSUS_METRICS)
        ),
        episodes=compare_glycemic(real.episodes, other.episodes, metrics=EPISODE_METRICS),
        day=compare_glycemic(real.day, other.day, metrics=DAY_NIGHT_METRICS),
        night=compare_glycemic(real.night, other.night, metrics=DAY_NIGHT_METRICS),
        subjects=subjects,
        agp_distance=agp_distance(real.agp, other.agp),
    )
