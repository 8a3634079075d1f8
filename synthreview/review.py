"""``evaluate()``: one call that runs every metric section for every candidate.

The dashboard pages and the CLI both call :func:`evaluate`, so a number on screen and the same
number in ``report.json`` come from one code path. The encoder and the evaluation embedding are
fitted once on the real data (the expensive, seeded part) and shared by every candidate; a
section that raises is recorded as that candidate's error and the other sections still run.
"""

from __future__ import annotations

import logging
import traceback
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from synthreview.distributed import ClusterMemo, connect, forget, map_shards
from synthreview.embeddings import fit_embedding
from synthreview.embeddings.base import Embedding
from synthreview.encoding import TabularEncoder, canonical_order
from synthreview.engine import Engine, check_threads, current_engine, using
from synthreview.errors import ConfigError, error_message
from synthreview.io.schema import LoadedTable, Notice, Review
from synthreview.io.traces import Traces
from synthreview.memo import Memo
from synthreview.metrics.fidelity.section import FidelityReport, evaluate_fidelity
from synthreview.metrics.glucose.section import GlucoseReport, evaluate_glucose
from synthreview.metrics.privacy.section import PrivacyReport, evaluate_privacy
from synthreview.metrics.privacy.shadow import ShadowSettings
from synthreview.metrics.utility.section import UtilityReport, evaluate_utility
from synthreview.options import (
    ReviewOptions,
    validate_options,
)
from synthreview.results import to_jsonable
from synthreview.sampling import Sampling, sample_review
from synthreview.version import __version__

log = logging.getLogger(__name__)

SECTIONS = ("fidelity", "privacy", "utility", "glucose")
TABLE_SECTIONS = ("fidelity", "privacy", "utility")
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Context:
    """What one review shares between its candidates, and nothing beyond it.

    The encoder, the evaluation embedding and the embedded sources are fitted once; ``memo``
    keeps what sections compute from real and holdout data alone (real-side neighbours, the
    utility holdout reference, TRTR models, the glucose context). A Context lives as long as
    the review that made it (the dashboard keeps it in the reviewer's session only), so no
    process-wide cache holds a reviewer's data after the session ends.
    """

    encoder: TabularEncoder | None
    embedding: Embedding | None
    encoded: dict[str, np.ndarray]
    embedded: dict[str, np.ndarray]
    memo: Memo = field(default_factory=Memo, repr=False, compare=False)


@dataclass(frozen=True)
class CandidateResult:
    """All section results of one synthetic candidate; a failed section is in ``errors``."""

    name: str
    fidelity: FidelityReport | None = None
    privacy: PrivacyReport | None = None
    utility: UtilityReport | None = None
    glucose: GlucoseReport | None = None
    errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready sections that ran, plus ``errors`` when any failed."""
        out: dict[str, Any] = {}
        for section in SECTIONS:
            value = getattr(self, section)
            if value is not None:
                out[section] = to_jsonable(value)
        if self.errors:
            out["errors"] = dict(sorted(self.errors.items()))
        return out


@dataclass(frozen=True)
class Report:
    """Result of :func:`evaluate`: inputs, per-candidate results and what produced them."""

    inputs: list[dict[str, Any]]
    candidates: dict[str, CandidateResult]
    options: ReviewOptions
    seed: int
    sections: tuple[str, ...]
    kind: str = "table"
    context: Context | None = field(default=None, repr=False, compare=False)
    #: what an approximate neighbour search measured ("1-NN recall 0.998 on 10000 ...")
    search: tuple[str, ...] = ()
    #: what loading changed or found (``Review.notices``: encodings, units, unseen categories,
    #: empty columns, ...): they travel with the decisions into report.json
    notices: tuple[Notice, ...] = ()
    #: how the population statistics were estimated when a table exceeded
    #: ``options.sample_rows`` (:mod:`synthreview.sampling`); None: on every row
    sampling: Sampling | None = None
    #: the ``threads`` and ``approximate`` arguments this report was computed with: its curated
    #: versions and planted-leak controls are evaluated with the same ones (``--threads 1``
    #: bounds them too; an approximate review's curated set is searched the same way)
    threads: int | None = field(default=None, compare=False)
    approximate: str | None = field(default=None, compare=False)

    @property
    def embedded(self) -> dict[str, np.ndarray]:
        """Embedded arrays by source name (``"real"``, ``"holdout"``, candidate names)."""
        return self.context.embedded if self.context else {}

    @property
    def encoder(self) -> TabularEncoder | None:
        """The encoder fitted on real data (tables only)."""
        return self.context.encoder if self.context else None

    def merged(self, other: Report) -> Report:
        """This report with the sections of ``other`` added (same review, seed and options)."""
        candidates = {}
        for name, mine in self.candidates.items():
            theirs = other.candidates.get(name)
            if theirs is None:
                candidates[name] = mine
                continue
            updates = {
                s: getattr(theirs, s) for s in other.sections if getattr(theirs, s) is not None
            }
            errors = {**mine.errors, **theirs.errors}
            candidates[name] = replace(mine, errors=errors, **updates)
        sections = tuple(s for s in SECTIONS if s in self.sections or s in other.sections)
        return replace(
            self, candidates=candidates, sections=sections, context=self.context or other.context
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``report.json`` content (no per-row arrays)."""

        return {
            "synthreview_version": __version__,
            "kind": self.kind,
            "seed": self.seed,
            "sections": list(self.sections),
            "options": to_jsonable(self.options),
            "inputs": self.inputs,
            "notices": notices_to_dict(self.notices),
            "unit": unit_of_judgement(self.options.person, self.kind),
            "candidates": {name: c.to_dict() for name, c in self.candidates.items()},
            # only an approximate search adds this: exact reports keep their exact content
            **({"neighbour_search": list(self.search)} if self.search else {}),
            # only a sampled review adds this: a review on every row keeps its content
            **({"sampling": self.sampling.to_dict()} if self.sampling is not None else {}),
        }


def unit_of_judgement(person: str | None, kind: str = "table") -> dict[str, Any]:
    """Which unit the rules assumed: ``{"unit", "column", "rules"}`` (report.json's ``unit``).

    A person-level review (``--person``) judges people wherever rows are divided or resampled
    (issue 34, :mod:`synthreview.splits`); otherwise every row is taken for its own person.
    """
    if kind != "table":
        rules = "each day trace is a unit; the glucose section also judges subjects"
        return {"unit": "trace", "column": None, "rules": rules}
    if person is None:
        return {
            "unit": "row",
            "column": None,
            "rules": "every rule takes each row for its own person (no person column given)",
        }
    return {
        "unit": "person",
        "column": person,
        "rules": (
            f"rows grouped by {person!r}: person_mia_auc, person_mia_tpr_at_fpr_1pct and "
            "dp_claim judge people; mia_auc and mia_tpr_at_fpr_1pct are shown, not judged; the "
            "TSTR/TRTR ratio's interval resamples people and the discriminator's sample and "
            "folds divide people; WP29 attacks target one row per person"
        ),
    }


def notices_to_dict(notices: Sequence[Notice]) -> list[dict[str, Any]]:
    """Loading notices as JSON-ready ``{"level", "table", "column", "message"}`` entries.

    In the order loading raised them (each table's own notices in input order, then the
    alignment's), which is the same for the same files; ``column`` is None when a notice
    concerns a whole table.
    """
    return [
        {"level": n.level, "table": n.table, "column": n.column, "message": n.message}
        for n in notices
    ]


def describe_inputs(review: Review) -> list[dict[str, Any]]:
    """One entry per input file: name, role, rows, columns, sha256."""
    tables = [review.real, *([review.holdout] if review.holdout is not None else [])]
    tables += list(review.synthetic.values())
    return [
        {
            "name": t.name,
            "role": t.role,
            "rows": int(t.n_rows),
            "columns": int(t.frame.shape[1]),
            "sha256": t.sha256,
        }
        for t in tables
    ]


def scaled_progress(progress: Progress | None, lo: float, hi: float) -> Progress | None:
    """``progress`` for a sub-step that covers ``[lo, hi]`` of the whole (None stays None)."""
    if progress is None:
        return None
    return lambda fraction, message: progress(
        lo + (hi - lo) * min(max(fraction, 0.0), 1.0), message
    )


def prepare(
    review: Review,
    *,
    options: ReviewOptions = ReviewOptions(),
    seed: int = 0,
    device: str = "cpu",
    progress: Progress | None = None,
) -> Context:
    """Fit the encoder and the evaluation embedding on real data and embed every source.

    Above ``options.sample_rows`` rows it does so on the samples :func:`evaluate` estimates
    the population statistics on (:func:`synthreview.sampling.sample_review`).
    """
    if review.kind == "traces":
        return Context(encoder=None, embedding=None, encoded={}, embedded={})
    review, _ = sample_review(review, options.sample_rows, seed=seed, person=options.person)

    encoder = TabularEncoder(review.schema).fit(review.real.frame)
    sources = {"real": review.real.frame}
    if review.holdout is not None:
        sources["holdout"] = review.holdout.frame
    sources.update({name: t.frame for name, t in review.synthetic.items()})
    encoded = {name: encoder.transform(frame, name=name) for name, frame in sources.items()}
    # fit on the real rows in a value-defined order: shuffling the input changes no number
    real_rows = encoded["real"][canonical_order(encoded["real"])]
    embedding = fit_embedding(
        real_rows, method=options.embedding, seed=seed, device=device, progress=progress
    )
    embedded = {name: embedding.transform(x) for name, x in encoded.items()}
    return Context(encoder=encoder, embedding=embedding, encoded=encoded, embedded=embedded)


def fitted_to(context: Context, review: Review) -> Context:
    """``context`` with the encoded and embedded rows of ``review``'s tables.

    A source whose rows are missing or of another length (a context prepared on other rows:
    the samples of a curated candidate, say) is transformed with the context's encoder and
    embedding, which are never refitted; the rest are kept.
    """
    if context.encoder is None or context.embedding is None or review.kind != "table":
        return context
    tables = {"real": review.real, **({"holdout": review.holdout} if review.holdout else {})}
    tables.update(review.synthetic)
    stale = [
        name
        for name, table in tables.items()
        if name not in context.encoded or len(context.encoded[name]) != table.n_rows
    ]
    if not stale:
        return context
    encoded, embedded = dict(context.encoded), dict(context.embedded)
    for name in stale:
        encoded[name] = context.encoder.transform(tables[name].frame, name=name)
        embedded[name] = context.embedding.transform(encoded[name])
    return replace(context, encoded=encoded, embedded=embedded)


def shadow_settings(options: ReviewOptions) -> ShadowSettings | None:
    """The shadow attack the options ask for (None: no generator named)."""
    if options.generator is None:
        return None
    return ShadowSettings(
        options.generator,
        n_shadows=options.shadow_models,
        n_targets=options.shadow_targets,
        time_limit_s=float(options.shadow_time_limit),
    )


def _run_section(
    section: str,
    review: Review,
    name: str,
    ctx: Context,
    options: ReviewOptions,
    seed: int,
    device: str,
    progress: Progress | None,
) -> Any:
    synthetic = review.synthetic[name]
    holdout = review.holdout.frame if review.holdout is not None else None
    if section == "fidelity":
        return evaluate_fidelity(
            ctx.embedded["real"],
            ctx.embedded[name],
            holdout_z=ctx.embedded.get("holdout"),
            center=ctx.embedding.center,
            real=review.real.frame,
            synthetic=synthetic.frame,
            schema=review.schema,
            seed=seed,
            n_bootstrap=options.n_bootstrap,
            memo=ctx.memo,
        )
    if section == "privacy":
        return evaluate_privacy(
            review.real.frame,
            synthetic.frame,
            holdout,
            schema=review.schema,
            encoder=ctx.encoder,
            sensitive=options.sensitive,
            l_diversity=options.l_diversity,
            max_attack=options.max_attack,
            seed=seed,
            progress=progress,
            shadow=shadow_settings(options),
            person=options.person,
            claimed_epsilon=options.claimed_epsilon,
            claimed_delta=options.claimed_delta,
            quasi_identifiers=options.quasi_identifiers,
            groups=options.groups,
            memo=ctx.memo,
        )
    if section == "utility":
        return evaluate_utility(
            review.real.frame,
            synthetic.frame,
            holdout,
            schema=review.schema,
            target=options.target,
            groups=options.groups,
            formula=options.formula,
            seed=seed,
            memo=ctx.memo,
            label_leak_columns=options.label_leak_columns,
            constraints=options.constraints,
            person=options.person,
        )
    if section == "glucose":
        traces = review.traces or {}
        return evaluate_glucose(
            traces["real"],
            traces[name],
            traces.get("holdout"),
            seed=seed,
            device=device,
            progress=progress,
            max_attack=options.max_attack,
            n_bootstrap=options.n_bootstrap,
            memo=ctx.memo,
            motif_length=options.motif_length,
            motif_tolerance_mg_dl=options.motif_tolerance,
        )
    raise ConfigError(f"section must be one of {list(SECTIONS)}; got {section!r}")


def review_candidate(
    review: Review,
    name: str,
    ctx: Context,
    sections: Sequence[str],
    options: ReviewOptions,
    seed: int,
    device: str,
    errors: dict[str, str],
    progress: Progress | None = None,
    steps: Sequence[tuple[str, str]] = (),
) -> CandidateResult:
    """Every requested section of candidate ``name``; a section that raises goes to ``errors``.

    ``errors`` may hold sections that must not run (their preparation failed). ``steps`` (all
    (candidate, section) pairs of the review, in order) places ``progress`` messages.
    """
    results: dict[str, Any] = {}
    for section in sections:
        if section in errors:
            continue
        lo = hi = None
        if progress and (name, section) in steps:
            i = list(steps).index((name, section))
            lo = 0.3 + 0.7 * i / len(steps)
            hi = 0.3 + 0.7 * (i + 1) / len(steps)
            progress(lo, f"{section}: {name}")
        try:
            results[section] = _run_section(
                section,
                review,
                name,
                ctx,
                options,
                seed,
                device,
                None if lo is None else scaled_progress(progress, lo, hi),
            )
        except Exception as exc:
            log.error("%s of %s failed:\n%s", section, name, traceback.format_exc())
            errors[section] = error_message(exc)
    glucose = results.get("glucose")
    if glucose is not None:
        results.setdefault("fidelity", getattr(glucose, "fidelity", None))
        results.setdefault("privacy", getattr(glucose, "privacy", None))
    return CandidateResult(name=name, errors=errors, **results)


@dataclass(frozen=True)
class _Shared:
    """What every candidate task of a cluster review receives once (broadcast): the review
    without its candidates and the fitted context without their rows."""

    review: Review
    encoder: TabularEncoder | None
    embedding: Embedding | None
    encoded: dict[str, np.ndarray]
    embedded: dict[str, np.ndarray]


@dataclass(frozen=True)
class _Part:
    """One candidate's own inputs for its task."""

    name: str
    table: LoadedTable
    traces: Traces | None
    encoded: np.ndarray | None
    embedded: np.ndarray | None


def _candidate_task(
    part: _Part,
    shared: _Shared,
    *,
    sections: tuple[str, ...],
    options: ReviewOptions,
    seed: int,
    device: str,
    threads: int | None,
    errors: dict[str, str],
    prefix: str,
) -> tuple[CandidateResult, list[str]]:
    """A candidate's review on a worker: its searches run in this task; the real side comes
    from the review's :class:`~synthreview.distributed.ClusterMemo`.

    ``threads`` is the review's own bound, kept on the worker; the numbers do not depend on it
    (``tests/test_thread_independence.py``), so the task gives the in-process review's.
    """
    review = shared.review
    traces = None
    if review.traces is not None:
        traces = {**review.traces, part.name: part.traces}
    review = replace(review, synthetic={part.name: part.table}, traces=traces)
    with_part = {} if part.encoded is None else {part.name: part.encoded}
    embedded = {} if part.embedded is None else {part.name: part.embedded}
    memo = ClusterMemo(prefix)
    ctx = Context(
        encoder=shared.encoder,
        embedding=shared.embedding,
        encoded={**shared.encoded, **with_part},
        embedded={**shared.embedded, **embedded},
        memo=memo,
    )
    # the task's searches run here, exact (approximate reviews do not become tasks)
    with using(Engine(threads=threads, device=device)):
        # a copy: an in-process cluster hands every task the same dict
        result = review_candidate(
            review, part.name, ctx, sections, options, seed, device, dict(errors)
        )
    return result, memo.names


def _review_on_cluster(
    engine: Engine,
    review: Review,
    ctx: Context,
    sections: tuple[str, ...],
    options: ReviewOptions,
    seed: int,
    device: str,
    errors_all: dict[str, str],
    progress: Progress | None,
) -> dict[str, CandidateResult]:
    """One task per candidate on ``engine.client``, results in candidate order.

    The real side the candidates share is computed once on the cluster (``ClusterMemo``)
    and dropped from it when the review ends.
    """
    names = review.candidates
    base = ("real", "holdout")
    shared = _Shared(
        review=replace(
            review,
            synthetic={},
            traces=None
            if review.traces is None
            else {k: v for k, v in review.traces.items() if k in base},
        ),
        encoder=ctx.encoder,
        embedding=ctx.embedding,
        encoded={k: v for k, v in ctx.encoded.items() if k in base},
        embedded={k: v for k, v in ctx.embedded.items() if k in base},
    )
    parts = [
        _Part(
            name=name,
            table=review.synthetic[name],
            traces=None if review.traces is None else review.traces.get(name),
            encoded=ctx.encoded.get(name),
            embedded=ctx.embedded.get(name),
        )
        for name in names
    ]
    finished: list[int] = []

    def done(i: int) -> None:
        finished.append(i)
        if progress:
            progress(0.3 + 0.7 * len(finished) / len(names), f"{names[i]}: done on the cluster")

    if progress:
        progress(0.3, f"{len(names)} candidates sent to the cluster")
    prefix = f"synthreview-{uuid.uuid4().hex}"
    outcomes = []
    try:
        outcomes = map_shards(
            engine.client,
            _candidate_task,
            parts,
            shared,
            done=done,
            sections=sections,
            options=options,
            seed=seed,
            device=device,
            threads=engine.task_threads or engine.threads,
            errors={s: m for s, m in errors_all.items() if s in sections},
            prefix=prefix,
        )
    finally:
        forget(engine.client, prefix, [name for _, used in outcomes for name in used])
    return {name: result for name, (result, _) in zip(names, outcomes, strict=True)}


def evaluate(
    review: Review,
    *,
    sections: Sequence[str] | None = None,
    options: ReviewOptions = ReviewOptions(),
    seed: int = 0,
    device: str = "cpu",
    progress: Progress | None = None,
    context: Context | None = None,
    threads: int | None = None,
    scheduler: str | None = None,
    approximate: str | None = None,
    keep_memo: bool = False,
) -> Report:
    """Run the requested metric sections for every synthetic candidate.

    Parameters
    ----------
    review : Review
        From :func:`synthreview.align` or :func:`synthreview.align_traces`.
    sections : sequence of {"fidelity", "privacy", "utility", "glucose"}, optional
        Default: fidelity, privacy and utility for tables; glucose for traces (its result also
        carries fidelity and privacy on the trace embedding, copied into those sections).
    options : ReviewOptions
    seed : int
        Seeds every random step; same inputs and seed give the same numbers.
    device : str
        Torch device for the embeddings (``"cpu"``, ``"cuda"``).
    progress : callable, optional
        ``progress(fraction, message)``, called as work advances.
    context : Context, optional
        A context from :func:`prepare` for this review, options and seed, to skip refitting.
    threads : int, optional
        Bound on BLAS, OpenMP (faiss) and torch threads during the review (default: the cores
        this process may use; see :mod:`synthreview.engine`).
    scheduler : str, optional
        Address of a Dask scheduler (``"tcp://host:8786"``): with two or more candidates each
        candidate's sections run there as one task (the shared real side computed once on the
        cluster); with one, its neighbour searches run there, sharded by blocks of real rows
        and merged exactly (:mod:`synthreview.distributed`). The report equals the in-process
        one. Default: the cluster of an enclosing :func:`synthreview.engine.on_cluster`
        block, else in-process.
    approximate : {None, "ivf", "hnsw"}
        Opt-in approximate k-NN (faiss); its measured 1-NN recall is in ``Report.search``.
    keep_memo : bool
        Keep what the candidates share (real-side neighbours, the utility holdout reference,
        TRTR models: the context's :class:`~synthreview.memo.Memo`) in ``Report.context`` for
        later evaluations of the same review, such as its curated versions
        (``release.pipeline.review_release``), which then compute none of it again. The caller
        owns it and clears it when done (``report.context.memo.clear()``). Default: it is
        cleared when this call returns, unless ``context`` was given (its owner clears it).

    Returns
    -------
    Report
    """
    if sections is None:
        sections = ("glucose",) if review.kind == "traces" else TABLE_SECTIONS
    # every option is checked before anything is fitted: a typo must not silently drop a section
    validate_options(review, options, sections, device, seed=seed)
    inputs = describe_inputs(review)
    # above options.sample_rows the sections see random samples of the tables
    review, sampling = sample_review(review, options.sample_rows, seed=seed, person=options.person)
    if review.kind == "traces":
        # trace fidelity and privacy are computed inside the glucose section on the trace embedding
        sections = ("glucose",) if any(s != "utility" for s in sections) else ()
    sections = tuple(s for s in SECTIONS if s in sections)
    scope = ExitStack()  # closed in the ``finally`` below
    # without a scheduler of its own the review uses the one of an enclosing on_cluster block
    client = (
        current_engine().client if scheduler is None else scope.enter_context(connect(scheduler))
    )
    outer = current_engine()
    engine = Engine(
        threads=check_threads(threads),
        device=device,
        approximate=approximate,
        client=client,
        # the enclosing block's bound on each task (on_local_cluster), for its own cluster only
        task_threads=outer.task_threads if scheduler is None else None,
    )
    scope.enter_context(using(engine))
    context_given = context is not None
    needs_context = any(s in ("fidelity", "privacy") for s in sections)
    errors_all: dict[str, str] = {}
    if context is None and needs_context:
        try:
            context = prepare(
                review,
                options=options,
                seed=seed,
                device=device,
                progress=scaled_progress(progress, 0.0, 0.3),
            )
        except Exception as exc:  # the embedding failing must not hide utility results
            log.error("preparing the review failed:\n%s", traceback.format_exc())
            errors_all = {"fidelity": error_message(exc), "privacy": error_message(exc)}
    if context is not None:  # a context prepared on other rows (samples) is brought up to date
        context = fitted_to(context, review)
    ctx = context or Context(encoder=None, embedding=None, encoded={}, embedded={})
    names = review.candidates
    candidates: dict[str, CandidateResult] = {}
    try:
        # approximate searches stay on the client: which task first computes a shared
        # real-side search would otherwise change the order of the recall lines
        if engine.client is not None and len(names) > 1 and engine.approximate is None:
            candidates = _review_on_cluster(
                engine, review, ctx, sections, options, seed, device, errors_all, progress
            )
        else:
            steps = [(name, s) for name in names for s in sections]
            for name in names:
                errors = {s: m for s, m in errors_all.items() if s in sections}
                candidates[name] = review_candidate(
                    review, name, ctx, sections, options, seed, device, errors, progress, steps
                )
    finally:
        # the memo holds rows derived from this review's real data: drop them when the call
        # ends unless the caller passed the context in to share it (then it owns the lifetime)
        if not context_given and not keep_memo:
            ctx.memo.clear()
        scope.close()
    if progress:
        progress(1.0, "done")
    return Report(
        inputs=inputs,
        candidates=candidates,
        options=options,
        seed=seed,
        sections=sections,
        kind=review.kind,
        context=context,
        search=tuple(check.describe() for check in engine.recall_log),
        notices=tuple(review.notices),
        sampling=sampling,
        threads=threads,
        approximate=approximate,
    )
