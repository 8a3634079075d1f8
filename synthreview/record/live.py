"""A review computed step by step, as the dashboard runs it: what is stored, stale and to run.

A :class:`LiveReview` holds every finished (candidate, section) step of one loaded review
(:class:`StepResult`, keyed on the review's full-content digest, the seed and the options the
section reads), the fitted contexts, each candidate's release, and the caches built from them.
Nothing here computes on its own: :meth:`LiveReview.plan` says which steps a run needs,
:meth:`LiveReview.run_step` / :meth:`LiveReview.release` compute one, and
:meth:`LiveReview.stored_report` reads the stored steps back as a ``Report``
(the current ones, else the last complete run's, naming the stale sections). The dashboard keeps
one in its session; a test drives one without Streamlit.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from synthreview.errors import ConfigError, error_message
from synthreview.io.schema import Review
from synthreview.judgement.policy import Policy
from synthreview.metrics.fidelity.features import pca_projection
from synthreview.metrics.utility.regression import parse_formula, suggest_formula
from synthreview.options import SECTION_OPTIONS, ReviewOptions, default_options, section_key
from synthreview.release.audit import Thresholds
from synthreview.release.controls import PlantedControls, planted_controls
from synthreview.release.curation import curate
from synthreview.release.pipeline import (
    CandidateAudit,
    CandidateRelease,
    audit_candidate,
    policy_key,
    release_candidate,
)
from synthreview.review import (
    TABLE_SECTIONS,
    CandidateResult,
    Context,
    Report,
    describe_inputs,
    evaluate,
    prepare,
)
from synthreview.sampling import Sampling, sample_review

__all__ = [
    "LiveReview",
    "StepResult",
    "initial_options",
    "needed_sections",
    "review_digest",
]

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class StepResult:
    """One candidate's result for one section (or its release), or the error it raised."""

    value: Any
    error: str | None
    seconds: float


def review_digest(review: Review) -> str:
    """Full-content digest of every input table plus the schema (never Streamlit's sampling
    hash of a frame, which could hand back a stale result)."""
    h = hashlib.sha256()
    for table in [review.real, review.holdout, *review.synthetic.values()]:
        if table is not None:
            h.update(f"{table.role}:{table.name}:{table.sha256};".encode())
    h.update(repr(sorted(review.schema.kinds.items())).encode())
    h.update(review.kind.encode())
    return h.hexdigest()


def needed_sections(review: Review) -> tuple[str, ...]:
    """Sections a review of this kind computes (what the release policy reads)."""
    return ("glucose",) if review.kind == "traces" else TABLE_SECTIONS


def initial_options(review: Review) -> ReviewOptions:
    """The engine's :func:`default_options` plus the suggested regression formula, so the
    first run already compares regression coefficients (the Utility page shows the formula and
    lets the reviewer change it; opening the page never changes it)."""
    options = default_options(review)
    suggested = suggest_formula(review.schema) if review.kind == "table" else None
    if suggested:
        try:
            parsed = parse_formula(suggested, schema=review.schema, real=review.real.frame)
            options = replace(options, formula=str(parsed))
        except ConfigError:
            pass  # no usable formula for this data: CI overlap is skipped with a reason
    return options


@dataclass
class LiveReview:
    """The stored steps of one loaded review and what is built from them (mutable: a run adds
    steps one by one, and a step once stored is never changed).

    Attributes
    ----------
    review : Review
    results : dict
        ``{(digest, seed, section_key, candidate): StepResult}``.
    latest : dict
        ``{section: (digest, seed, section_key)}`` of the last complete run of each section.
    contexts : dict
        ``{(digest, embedding, seed): Context}``: the fitted encoder and embedding.
    projections : dict
        ``{(digest, embedding, seed): PCA frame or error text}`` for the Fidelity page.
    releases : dict
        ``{(digest, seed, options, policy key, candidate, thresholds, curate when): StepResult}``
        of each :class:`~synthreview.release.pipeline.CandidateRelease`.
    previews, controls, sampled : dict
        Audit previews, planted-leak controls and the samples statistics are estimated on.
    """

    review: Review
    results: dict[tuple[Any, ...], StepResult] = field(default_factory=dict)
    latest: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    contexts: dict[tuple[Any, ...], Context] = field(default_factory=dict)
    projections: dict[tuple[Any, ...], pd.DataFrame | str] = field(default_factory=dict)
    releases: dict[tuple[Any, ...], StepResult] = field(default_factory=dict)
    previews: dict[tuple[Any, ...], CandidateAudit | None] = field(default_factory=dict)
    controls: dict[tuple[Any, ...], PlantedControls] = field(default_factory=dict)
    sampled: dict[tuple[Any, ...], tuple[Review, Sampling | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.digest = review_digest(self.review)

    # --- what is computed, what is stale ------------------------------------------------------
    def base(self, section: str, *, seed: int, options: ReviewOptions) -> tuple[Any, ...]:
        """The key of ``section``'s steps under ``seed`` and ``options`` (candidate aside)."""
        return (self.digest, seed, section_key(section, options))

    def complete(self, base: tuple[Any, ...]) -> bool:
        """Whether every candidate has a stored step under ``base``."""
        return all((*base, name) in self.results for name in self.review.candidates)

    def stale_sections(self, *, seed: int, options: ReviewOptions) -> list[str]:
        """Needed sections with no complete result for this seed and these options."""
        return [
            s
            for s in needed_sections(self.review)
            if not self.complete(self.base(s, seed=seed, options=options))
        ]

    def latest_base(self, section: str, *, seed: int) -> tuple[Any, ...] | None:
        """Key of the last complete result of ``section`` for this seed (any options)."""
        base = self.latest.get(section)
        if base is None or base[:2] != (self.digest, seed):
            return None
        return base if self.complete(base) else None

    def changed_options(self, section: str, *, seed: int, options: ReviewOptions) -> list[str]:
        """Options that differ between the shown (last complete) result of ``section`` and now."""
        base = self.latest_base(section, seed=seed)
        if base is None:
            return []
        now = section_key(section, options)
        names = SECTION_OPTIONS[section]
        return [n for n, old, new in zip(names, base[2][1:], now[1:], strict=True) if old != new]

    def plan(self, *, seed: int, options: ReviewOptions) -> list[tuple[str, str]]:
        """The ``(candidate, section)`` steps a run would compute now, in order."""
        steps = []
        for section in needed_sections(self.review):
            base = self.base(section, seed=seed, options=options)
            steps += [
                (n, section) for n in self.review.candidates if (*base, n) not in self.results
            ]
        return steps

    def context_key(self, *, seed: int, options: ReviewOptions) -> tuple[Any, ...]:
        """The key of the fitted context (and its PCA) under ``seed`` and ``options``."""
        return (self.digest, options.embedding, seed)

    def projection(self, *, seed: int, options: ReviewOptions) -> pd.DataFrame | str | None:
        """The stored PCA of the encoded rows (fitted on real only), an error text, or None."""
        return self.projections.get(self.context_key(seed=seed, options=options))

    def stored_report(
        self,
        sections: Sequence[str],
        *,
        seed: int,
        options: ReviewOptions,
    ) -> tuple[Report | None, list[str]]:
        """The stored results of ``sections`` (current, else the last complete run) and the
        sections among them that are stale. Never computes. ``None`` when a section never ran."""
        review = self.review
        needed = needed_sections(review)
        wanted = [s for s in needed if s in sections] or list(needed)
        stale: list[str] = []
        candidates: dict[str, dict[str, Any]] = {n: {"errors": {}} for n in review.candidates}
        for section in wanted:
            base = self.base(section, seed=seed, options=options)
            if not self.complete(base):
                base = self.latest_base(section, seed=seed)
                if base is None:
                    return None, []
                stale.append(section)
            for name in review.candidates:
                step = self.results[(*base, name)]
                if step.error is not None:
                    candidates[name]["errors"][section] = step.error
                elif step.value is not None:
                    candidates[name][section] = step.value
        for found in candidates.values():
            glucose = found.get("glucose")
            if glucose is not None:  # trace fidelity and privacy live inside the glucose section
                found.setdefault("fidelity", getattr(glucose, "fidelity", None))
                found.setdefault("privacy", getattr(glucose, "privacy", None))
        report = Report(
            inputs=describe_inputs(review),
            candidates={n: CandidateResult(name=n, **found) for n, found in candidates.items()},
            options=options,
            seed=seed,
            sections=tuple(wanted),
            kind=review.kind,
            context=self.contexts.get(self.context_key(seed=seed, options=options)),
            notices=tuple(review.notices),  # what loading changed travels with the decision
            sampling=self.sample(seed=seed, options=options)[1],
        )
        return report, stale

    def sample(self, *, seed: int, options: ReviewOptions) -> tuple[Review, Sampling | None]:
        """The review the stored statistics are estimated on, and how it was drawn (cached).

        Above ``options.sample_rows`` rows the sections' per-row results (closest pairs) are
        rows of these samples; ``Sampling`` maps them to the files' rows.
        """
        key = (self.digest, seed, options.sample_rows, options.person)
        if key not in self.sampled:
            self.sampled.clear()  # samples of one review at a time
            self.sampled[key] = sample_review(
                self.review, options.sample_rows, seed=seed, person=options.person
            )
        return self.sampled[key]

    # --- the run -------------------------------------------------------------------------------
    def needs_context(
        self, steps: Sequence[tuple[str, str]], *, seed: int, options: ReviewOptions
    ) -> bool:
        """Whether ``steps`` need the encoder and embedding fitted first (a table review)."""
        return (
            self.review.kind == "table"
            and self.context_key(seed=seed, options=options) not in self.contexts
            and any(s in ("fidelity", "privacy") for _, s in steps)
        )

    def prepare(
        self, *, seed: int, options: ReviewOptions, progress: Progress | None = None
    ) -> str | None:
        """Fit and store the context and its PCA view; the error text, or None."""
        key = self.context_key(seed=seed, options=options)
        try:
            self.contexts[key] = prepare(self.review, options=options, seed=seed, progress=progress)
        except Exception as exc:  # fidelity/privacy steps record the error per candidate
            return error_message(exc)
        try:
            encoded = self.contexts[key].encoded or self.contexts[key].embedded
            others = {s: x for s, x in encoded.items() if s != "real"}
            frame: pd.DataFrame | str = pca_projection(
                encoded["real"], others, max_points=1500, seed=seed
            )
        except Exception as exc:  # a failed projection must not stop the review
            frame = error_message(exc)
        self.projections[key] = frame
        return None

    def run_step(
        self,
        name: str,
        section: str,
        *,
        seed: int,
        options: ReviewOptions,
        progress: Progress | None = None,
    ) -> StepResult:
        """Compute and store ``section`` of candidate ``name`` (with the stored context)."""
        started = time.perf_counter()
        one = replace(self.review, synthetic={name: self.review.synthetic[name]})
        report = evaluate(
            one,
            sections=(section,),
            options=options,
            seed=seed,
            context=self.contexts.get(self.context_key(seed=seed, options=options)),
            progress=progress,
        )
        candidate = report.candidates[name]
        step = StepResult(
            getattr(candidate, section),
            candidate.errors.get(section),
            time.perf_counter() - started,
        )
        self.results[(*self.base(section, seed=seed, options=options), name)] = step
        return step

    def mark_complete(self, *, seed: int, options: ReviewOptions) -> None:
        """Remember every complete section as the last complete run (shown while stale)."""
        for section in needed_sections(self.review):
            base = self.base(section, seed=seed, options=options)
            if self.complete(base):
                self.latest[section] = base

    # --- releases ------------------------------------------------------------------------------
    def release_key(
        self,
        name: str,
        *,
        seed: int,
        options: ReviewOptions,
        policy: Policy,
        thresholds: Thresholds,
        curate_when: str,
    ) -> tuple[Any, ...]:
        """The key of ``name``'s release: the thresholds and the curation are the candidate's
        confirmed ones (a release made before a confirmation is not the confirmed one)."""
        return (self.digest, seed, options, policy_key(policy), name, thresholds, curate_when)

    def stored_release(self, name: str, **key: Any) -> StepResult | None:
        """The stored release of ``name`` under :meth:`release_key`'s ``key``, or None."""
        return self.releases.get(self.release_key(name, **key))

    def previous_release(
        self, name: str, *, seed: int, options: ReviewOptions
    ) -> CandidateRelease | None:
        """A release of ``name`` from the same numbers under another policy or thresholds."""
        for key, step in reversed(list(self.releases.items())):
            if (
                key[:3] == (self.digest, seed, options)
                and key[4] == name
                and step.value is not None
            ):
                return step.value
        return None

    def release(
        self,
        report: Report,
        name: str,
        *,
        seed: int,
        options: ReviewOptions,
        policy: Policy,
        thresholds: Thresholds,
        curate_when: str,
        progress: Progress | None = None,
    ) -> StepResult:
        """Release ``name`` through the one pipeline and store it; an exception is stored as
        the step's error (the judgement then reads the audit as not computed, never a pass)."""
        started = time.perf_counter()
        value, error = None, None
        try:
            value = release_candidate(
                self.review,
                report,
                name,
                policy=policy,
                thresholds=thresholds,
                curate_when=curate_when,  # type: ignore[arg-type]
                reuse=self.previous_release(name, seed=seed, options=options),
                progress=progress,
            )
        except Exception as exc:  # recorded, never a silent pass (see the docstring)
            error = error_message(exc)
        step = StepResult(value, error, time.perf_counter() - started)
        key = self.release_key(
            name,
            seed=seed,
            options=options,
            policy=policy,
            thresholds=thresholds,
            curate_when=curate_when,
        )
        self.releases[key] = step
        return step

    def preview_audit(
        self,
        report: Report,
        name: str,
        thresholds: Thresholds,
        *,
        seed: int,
        options: ReviewOptions,
    ) -> CandidateAudit | None:
        """The audit of ``name`` under ``thresholds`` for the Audit page's preview (cached)."""
        key = (self.digest, seed, options, name, thresholds)
        if key not in self.previews:
            self.previews[key] = audit_candidate(report, name, thresholds, review=self.review)
        return self.previews[key]

    def planted_controls(
        self,
        report: Report,
        thresholds: Thresholds,
        *,
        seed: int,
        options: ReviewOptions,
        policy: Policy,
        compute: bool = False,
    ) -> PlantedControls | None:
        """The planted-leak controls under ``thresholds`` (computed when ``compute``)."""
        key = (self.digest, seed, options, policy_key(policy), thresholds)
        if compute and key not in self.controls:
            self.controls[key] = planted_controls(
                self.review, report, policy=policy, thresholds=thresholds
            )
        return self.controls.get(key)

    def removed(self, name: str, audit: CandidateAudit) -> pd.DataFrame:
        """The rows ``audit`` would remove from ``name``, as in the file, with row and reasons."""
        return curate(self.review.synthetic[name], audit.audit).removed_table()
