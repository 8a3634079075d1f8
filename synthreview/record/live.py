"""A review computed step by step, as the dashboard runs it: what is stored, stale and to run.

A :class:`LiveReview` holds every finished (candidate, section) step of one loaded review
(:class:`StepResult`, keyed on the review's full-content digest, the seed and the options the
section reads), the fitted contexts, each candidate's release, and the caches built from them.
Nothing here computes on its own: :meth:`LiveReview.plan` says which steps a run needs,
:meth:`LiveReview.run_plan` adds each candidate's audit and curation steps, candidate by
candidate, :meth:`LiveReview.compute` computes one step, :meth:`LiveReview.decision_so_far`
judges a candidate as soon as its own steps are done (before the other candidates run), and
:meth:`LiveReview.stored_report` reads the stored steps back as a ``Report``
(the current ones, else the last complete run's, naming the stale sections). The dashboard keeps
one in its session; a test drives one without Streamlit.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from synthreview.errors import ConfigError, error_message
from synthreview.io.schema import Review
from synthreview.judgement.decision import CANNOT_FIX, Decision
from synthreview.judgement.policy import LedgerLimits, Policy
from synthreview.judgement.waivers import Waiver, decide_with_waivers
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
    "ReleaseKey",
    "ReleaseTerms",
    "StepResult",
    "initial_options",
    "needed_sections",
    "review_digest",
]

Progress = Callable[[float, str], None]

#: the steps of a run after a candidate's sections: its audit and judgement as submitted, then
#: its curation (re-evaluated and re-attacked when it fails) and the decision after it
RELEASE_STEPS = ("submitted", "release")


@dataclass(frozen=True)
class StepResult:
    """One candidate's result for one section (or its release), or the error it raised;
    ``skipped`` says why a planned step turned out not to be needed (None: it was)."""

    value: Any
    error: str | None
    seconds: float
    skipped: str | None = None


@dataclass(frozen=True)
class ReleaseTerms:
    """What one candidate's release is computed and judged under (besides its numbers): a
    release stored under other terms is never shown or judged under these, unless computing
    it under these would give the same release (fewer waivers, none of which could change it:
    :meth:`LiveReview.stored_release`).

    Attributes
    ----------
    seed : int
    options : ReviewOptions
    policy : Policy
    thresholds : Thresholds
        The candidate's confirmed audit thresholds, else the defaults.
    curate_when : str
        ``"always"`` for a confirmed curation (its curated files are filed), else
        ``"failing"`` (curated only when it fails as submitted).
    waived : frozenset of str
        The rules a waiver has been requested for on this candidate, approved or not (the
        pipeline's ``waived=``): the curated set is evaluated only where curation can change
        the outcome, and a rule that may be waived never decides that it cannot. A waiver
        requested later changes the terms: a release such a rule shortened is computed again
        (:meth:`LiveReview.stored_release`).
    """

    seed: int
    options: ReviewOptions
    policy: Policy
    thresholds: Thresholds = field(default_factory=Thresholds)
    curate_when: str = "failing"
    waived: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        # any collection of rule names is one key, whatever its order or kind
        object.__setattr__(self, "waived", frozenset(self.waived))


@dataclass(frozen=True)
class ReleaseKey:
    """Where :class:`LiveReview` stores a candidate's release: the candidate and its
    :class:`ReleaseTerms`, each term by name (a key read by position would silently compare
    the wrong terms once their order changed). The policy is held as
    ``release.pipeline.policy_key``: what it judges with, and hashable.
    """

    name: str
    seed: int
    options: ReviewOptions
    policy: str
    thresholds: Thresholds
    curate_when: str
    waived: frozenset[str]

    @classmethod
    def of(cls, name: str, terms: ReleaseTerms) -> ReleaseKey:
        """The key of ``name``'s release under ``terms``."""
        return cls(name, terms.seed, terms.options, policy_key(terms.policy), terms.thresholds,
                   terms.curate_when, terms.waived)  # fmt: skip


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
        ``{ReleaseKey: StepResult}`` of each
        :class:`~synthreview.release.pipeline.CandidateRelease` (the candidate and its
        :class:`ReleaseTerms`).
    submitted : dict
        The same keys: each candidate's audit and judgement as submitted (a
        ``CandidateRelease`` without curation), which its release then reuses.
    previews, controls, sampled : dict
        Audit previews, planted-leak controls and the samples statistics are estimated on.
    """

    review: Review
    results: dict[tuple[Any, ...], StepResult] = field(default_factory=dict)
    latest: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    contexts: dict[tuple[Any, ...], Context] = field(default_factory=dict)
    projections: dict[tuple[Any, ...], pd.DataFrame | str] = field(default_factory=dict)
    releases: dict[ReleaseKey, StepResult] = field(default_factory=dict)
    submitted: dict[ReleaseKey, StepResult] = field(default_factory=dict)
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
        """The ``(candidate, section)`` steps a run would compute now, in order: candidate by
        candidate (every section of one, then the next), so the first candidate can be judged
        before the others run. Results are keyed per (candidate, section): the order changes
        no stored result."""
        sections = needed_sections(self.review)
        bases = [(s, self.base(s, seed=seed, options=options)) for s in sections]
        return [
            (n, section)
            for n in self.review.candidates
            for section, base in bases
            if (*base, n) not in self.results
        ]

    def run_plan(
        self,
        steps: Sequence[tuple[str, str]],
        *,
        seed: int,
        options: ReviewOptions,
        releases: Collection[str],
    ) -> list[tuple[str, str]]:
        """Every step of a run, in order, known before the first runs: the encoder and
        embedding (``("all candidates", "prepare")``) when ``steps`` need them, then candidate
        by candidate its steps among ``steps`` (:meth:`plan`'s) and, for each candidate in
        ``releases`` (those whose release is not stored under the present policy and
        thresholds), its :data:`RELEASE_STEPS`."""
        first = [("all candidates", "prepare")]
        if not self.needs_context(steps, seed=seed, options=options):
            first = []
        ordered = []
        for name in self.review.candidates:
            ordered += [step for step in steps if step[0] == name]
            if name in releases:
                ordered += [(name, step) for step in RELEASE_STEPS]
        return first + ordered

    def compute(
        self,
        step: tuple[str, str],
        *,
        seed: int,
        options: ReviewOptions,
        terms: Mapping[str, ReleaseTerms],
        progress: Progress | None = None,
    ) -> StepResult:
        """Compute one step of :meth:`run_plan` and store it.

        Parameters
        ----------
        step : (candidate, section)
            A section, ``"prepare"``, or one of :data:`RELEASE_STEPS`.
        seed : int
        options : ReviewOptions
        terms : mapping of str to ReleaseTerms
            Each candidate's release terms (its confirmed thresholds and curation, the policy,
            its requested waivers), read by the release steps.
        progress : callable, optional
        """
        name, section = step
        if section == "prepare":
            started = time.perf_counter()
            error = self.prepare(seed=seed, options=options, progress=progress)
            return StepResult(None, error, time.perf_counter() - started)
        if section not in RELEASE_STEPS:
            return self.run_step(name, section, seed=seed, options=options, progress=progress)
        report = self.candidate_report(name, seed=seed, options=options)
        if report is None:
            raise ConfigError(
                f"step must follow every section of {name!r} in the run's plan; got {step!r} "
                f"before its sections are stored"
            )
        if section == "submitted":
            return self.judge_submitted(report, name, terms[name], progress=progress)
        step = self.release(report, name, terms[name], progress=progress)
        curated = step.value.curated if step.value is not None else None
        if step.value is not None and curated is None:
            # the pipeline curates only a candidate that fails as submitted (or holds real
            # records): judged as submitted, its decision is already the release's
            step = replace(step, skipped="no curated version")
        elif curated is not None and curated.bounds:
            # cut but not evaluated: its moment of work must not pull down the estimate of
            # the curated evaluations still to run
            rules = ", ".join(b.rule for b in curated.bounds)
            step = replace(step, skipped=f"{CANNOT_FIX}: {rules}")
        return step

    def context_key(self, *, seed: int, options: ReviewOptions) -> tuple[Any, ...]:
        """The key of the fitted context (and its PCA) under ``seed`` and ``options``."""
        return (self.digest, options.embedding, seed)

    def projection(self, *, seed: int, options: ReviewOptions) -> pd.DataFrame | str | None:
        """The stored PCA of the encoded rows (fitted on real only), an error text, or None."""
        return self.projections.get(self.context_key(seed=seed, options=options))

    def candidate_report(self, name: str, *, seed: int, options: ReviewOptions) -> Report | None:
        """Candidate ``name``'s current steps as a one-candidate ``Report`` (what its audit and
        curation read), or None while any of its sections is not stored. Never computes."""
        bases = [self.base(s, seed=seed, options=options) for s in needed_sections(self.review)]
        if any((*base, name) not in self.results for base in bases):
            return None
        return self._report(bases, [name], seed=seed, options=options)

    def _report(
        self,
        bases: Sequence[tuple[Any, ...]],
        names: Sequence[str],
        *,
        seed: int,
        options: ReviewOptions,
    ) -> Report:
        """The ``Report`` of candidates ``names`` from the stored steps under ``bases``."""
        candidates: dict[str, dict[str, Any]] = {n: {"errors": {}} for n in names}
        for base in bases:
            section = base[2][0]
            for name in names:
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
        return Report(
            inputs=describe_inputs(self.review),
            candidates={n: CandidateResult(name=n, **found) for n, found in candidates.items()},
            options=options,
            seed=seed,
            sections=tuple(base[2][0] for base in bases),
            kind=self.review.kind,
            context=self.contexts.get(self.context_key(seed=seed, options=options)),
            notices=tuple(self.review.notices),  # what loading changed travels with the decision
            sampling=self.sample(seed=seed, options=options)[1],
        )

    def stored_report(
        self,
        sections: Sequence[str],
        *,
        seed: int,
        options: ReviewOptions,
    ) -> tuple[Report | None, list[str]]:
        """The stored results of ``sections`` (current, else the last complete run) and the
        sections among them that are stale. Never computes. ``None`` when a section never ran."""
        needed = needed_sections(self.review)
        wanted = [s for s in needed if s in sections] or list(needed)
        stale: list[str] = []
        bases = []
        for section in wanted:
            base = self.base(section, seed=seed, options=options)
            if not self.complete(base):
                base = self.latest_base(section, seed=seed)
                if base is None:
                    return None, []
                stale.append(section)
            bases.append(base)
        report = self._report(bases, self.review.candidates, seed=seed, options=options)
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
    def release_key(self, name: str, terms: ReleaseTerms) -> ReleaseKey:
        """The key of ``name``'s release under ``terms``: the thresholds and the curation are
        the candidate's confirmed ones (a release made before a confirmation is not the
        confirmed one), the waived rules those requested (one made before a request may have
        let a requested rule decide). The review's digest is not in it: a LiveReview holds one."""
        return ReleaseKey.of(name, terms)

    def stored_release(self, name: str, terms: ReleaseTerms) -> StepResult | None:
        """The stored release of ``name`` under ``terms``, or None.

        A release stored under fewer requested waivers (the rest of ``terms`` equal) is
        ``name``'s release under ``terms`` too when no waiver could have changed it: one not
        curated, or whose curated set was evaluated whole (no bound decided it, no section was
        left out). Requesting a waiver only takes rules away from what may decide that a
        curated set need not be evaluated, so computed again under ``terms`` it would be the
        same; only a release that such a rule shortened is out of date.
        """
        key = self.release_key(name, terms)
        step = self.releases.get(key)
        if step is not None:
            return step
        for other, found in reversed(list(self.releases.items())):
            curated = found.value.curated if found.value is not None else None
            if (
                replace(other, waived=key.waived) == key
                and other.waived <= key.waived
                and found.value is not None
                and (curated is None or not (curated.bounds or curated.skipped))
            ):
                return found
        return None

    def previous_release(
        self, name: str, *, seed: int, options: ReviewOptions
    ) -> CandidateRelease | None:
        """A release of ``name`` from the same numbers under other terms (policy, thresholds,
        waivers)."""
        for key, step in reversed(list(self.releases.items())):
            same_numbers = key.name == name and key.seed == seed and key.options == options
            if same_numbers and step.value is not None:
                return step.value
        return None

    def judge_submitted(
        self,
        report: Report,
        name: str,
        terms: ReleaseTerms,
        *,
        progress: Progress | None = None,
    ) -> StepResult:
        """Audit ``name`` and judge it as submitted through the one pipeline (its release
        without curation) and store it; :meth:`release` then reuses the audit, so the decision
        the run draws early is the one the release and the Overview state. ``progress`` is told
        the search stages of an every-row audit (a review estimated on samples)."""
        started = time.perf_counter()
        value, error = None, None
        try:
            value = release_candidate(
                self.review,
                report,
                name,
                policy=terms.policy,
                thresholds=terms.thresholds,
                curate_when="never",
                reuse=self.previous_release(name, seed=terms.seed, options=terms.options),
                progress=progress,
            )
        except Exception as exc:  # recorded, never a silent pass (as in release)
            error = error_message(exc)
        step = StepResult(value, error, time.perf_counter() - started)
        self.submitted[self.release_key(name, terms)] = step
        return step

    def release(
        self,
        report: Report,
        name: str,
        terms: ReleaseTerms,
        *,
        progress: Progress | None = None,
    ) -> StepResult:
        """Release ``name`` through the one pipeline and store it; an exception is stored as
        the step's error (the judgement then reads the audit as not computed, never a pass).

        The audit of :meth:`judge_submitted` under the same terms is reused, unless an earlier
        release of the same numbers under these thresholds holds a curated version to
        re-judge. The pipeline is told the requested waivers (``terms.waived``), so a curated
        version is evaluated only where curation can change the outcome, as the CLI's is.
        """
        started = time.perf_counter()
        key = self.release_key(name, terms)
        reuse = self.previous_release(name, seed=terms.seed, options=terms.options)
        submitted = self.submitted.get(key)
        # an earlier curated version under these thresholds is re-judged, not computed again
        # (the pipeline re-judges only one evaluated whole: what a waiver cannot change)
        rejudge = (
            reuse is not None
            and reuse.curated is not None
            and reuse.audit is not None
            and reuse.audit.thresholds == terms.thresholds
        )
        if submitted is not None and submitted.value is not None and not rejudge:
            reuse = submitted.value
        value, error = None, None
        try:
            value = release_candidate(
                self.review,
                report,
                name,
                policy=terms.policy,
                thresholds=terms.thresholds,
                curate_when=terms.curate_when,  # type: ignore[arg-type]
                reuse=reuse,
                progress=progress,
                waived=terms.waived,
            )
        except Exception as exc:  # recorded, never a silent pass (see the docstring)
            error = error_message(exc)
        step = StepResult(value, error, time.perf_counter() - started)
        self.releases[key] = step
        return step

    def decision_so_far(
        self, name: str, terms: ReleaseTerms, *, waivers: Sequence[Waiver] = ()
    ) -> tuple[Decision, str | None] | None:
        """Candidate ``name``'s decision from its own stored steps, as soon as it has one.

        The judgement is the Overview's (``judgement.waivers.decide_with_waivers`` over the
        pipeline's verdicts, as ``record.summary.summarize`` applies them): after its release
        step the decision it states, after :meth:`judge_submitted` only the decision as
        submitted. Caps of the policy's ``[ledger]`` weigh every candidate together and are
        applied by the summary only.

        Returns
        -------
        (Decision, str or None) or None
            The decision and what may still change it: ``"curation"`` (its curation is still
            to run), ``"ledger"`` (the policy's ledger caps, applied once every candidate is
            decided) or None (final); None before its audit, or when its audit or release
            failed (the summary then states why).
        """
        step = self.stored_release(name, terms)
        if step is not None:
            if step.value is None:
                return None
            curated = step.value.curated
            after = {name: curated.verdicts} if curated is not None else None
            pending = "ledger" if terms.policy.ledger != LedgerLimits() else None
            return decide_with_waivers({name: step.value.verdicts}, after, waivers)[name], pending
        step = self.submitted.get(self.release_key(name, terms))
        if step is None or step.value is None:
            return None
        return decide_with_waivers({name: step.value.verdicts}, None, waivers)[name], "curation"

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
