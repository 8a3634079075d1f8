"""Curation: cut the audited rows out of a candidate and measure what is left.

Alaa et al. (2022), §5.1 ("Improving synthetic data via model auditing"): the rows that
``audit.apply_thresholds`` marks ``removed`` are discarded and the curated data set is evaluated
again, so a reviewer sees the metrics "before" and "after" curation side by side.

``curate`` never edits a value: it cuts whole rows out of ``LoadedTable.raw`` (the strings exactly
as written in the input file) and records the input file's digest, so
:func:`synthreview.release.export.curated_csv_bytes`, given the input file, writes the kept rows
back as the file's own bytes (line ends, quoting, delimiter and encoding included).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from synthreview.errors import ConfigError, DataError
from synthreview.io.schema import LoadedTable, Review
from synthreview.io.traces import Traces
from synthreview.judgement.decision import CANNOT_FIX
from synthreview.judgement.policy import RuleVerdict, Verdicts
from synthreview.options import ReviewOptions
from synthreview.release.audit import Thresholds, apply_thresholds
from synthreview.results import to_jsonable
from synthreview.review import Context, Progress, Report, evaluate
from synthreview.sampling import Sampling, TableSample, cut_table, sample_review

if TYPE_CHECKING:
    from synthreview.release.audit import Thresholds


@dataclass(frozen=True)
class CurationResult:
    """A candidate with the audited rows removed.

    Attributes
    ----------
    name : str
        Candidate name.
    kept_raw : pandas.DataFrame
        Kept rows of ``LoadedTable.raw``: the input file's strings, columns and order unchanged.
    kept_frame : pandas.DataFrame
        The same rows of ``LoadedTable.frame`` (typed), for re-evaluation and Parquet export.
    kept_rows, removed_rows : ndarray of int64
        0-based positions in the input file.
    removed_raw : pandas.DataFrame
        Removed rows of ``LoadedTable.raw``.
    reasons : tuple of str
        Reasons of each removed row, aligned with ``removed_rows``.
    thresholds : Thresholds
    table : LoadedTable
        The curated candidate as a table (new ``sha256``), ready to replace the original.
    source_sha256 : str
        Digest of the input file the rows were cut from (the candidate's ``sha256``): the CSV
        builders of :mod:`synthreview.release.export` copy the kept rows' bytes from the file
        with this digest.
    """

    name: str
    kept_raw: pd.DataFrame
    kept_frame: pd.DataFrame
    kept_rows: np.ndarray
    removed_rows: np.ndarray
    removed_raw: pd.DataFrame
    reasons: tuple[str, ...]
    thresholds: Thresholds
    table: LoadedTable
    source_sha256: str = ""

    @property
    def n_input(self) -> int:
        """Rows before curation."""
        return len(self.kept_rows) + len(self.removed_rows)

    def removed_table(self) -> pd.DataFrame:
        """Removed rows as in the file, preceded by their input ``row`` number and ``reasons``.

        The two added columns are named ``__row__`` / ``__reasons__`` when the input already has
        a ``row`` or ``reasons`` column, so no input column is shadowed.
        """
        row_col, reason_col = ("row", "reasons")
        if {"row", "reasons"} & set(map(str, self.removed_raw.columns)):
            row_col, reason_col = ("__row__", "__reasons__")
        out = self.removed_raw.copy()
        out.insert(0, reason_col, list(self.reasons))
        out.insert(0, row_col, self.removed_rows)
        return out

    def to_dict(self) -> dict[str, object]:
        """JSON-ready summary (counts and thresholds; rows are in the CSV exports)."""
        return to_jsonable(
            {
                "name": self.name,
                "n_input": self.n_input,
                "n_kept": len(self.kept_rows),
                "n_removed": len(self.removed_rows),
                "thresholds": self.thresholds.to_dict(),
                "sha256": self.table.sha256,
            }
        )


def curate(
    table: LoadedTable, audit: pd.DataFrame, thresholds: Thresholds | None = None
) -> CurationResult:
    """Cut the rows marked ``removed`` in ``audit`` out of ``table``; change nothing else.

    Parameters
    ----------
    table : LoadedTable
        The candidate as loaded; ``raw`` gives the strings of the input file.
    audit : pandas.DataFrame
        Output of ``audit_table`` / ``apply_thresholds`` for this candidate.
    thresholds : Thresholds, optional
        When given, the audit's rule columns are recomputed with it; otherwise the thresholds the
        audit was built with (kept in ``audit.attrs``) are recorded.
    """
    # synthreview.release.audit re-exports this module, so its names are imported at call time

    if thresholds is not None:
        audit = apply_thresholds(audit, thresholds)
    elif "thresholds" in audit.attrs:
        thresholds = Thresholds(**audit.attrs["thresholds"])
    else:
        raise ConfigError("curate needs 'thresholds' for an audit table not built by audit_table")
    if len(audit) != table.n_rows or len(table.written.index) != table.n_rows:
        raise DataError(
            f"audit of '{table.name}' must have one row per input row ({table.n_rows}); "
            f"got {len(audit)} audit rows and {len(table.written.index)} raw rows"
        )
    removed = np.zeros(table.n_rows, dtype=bool)
    removed[audit["row"].to_numpy(dtype=np.int64)] = audit["removed"].to_numpy(dtype=bool)
    kept_rows = np.flatnonzero(~removed).astype(np.int64)
    removed_rows = np.flatnonzero(removed).astype(np.int64)
    reasons_by_row = dict(zip(audit["row"].to_numpy(dtype=np.int64), audit["reasons"], strict=True))
    kept_raw = table.raw_rows(kept_rows)  # only these rows' cells are built as text
    kept_frame = table.frame.iloc[kept_rows].reset_index(drop=True)
    digest = hashlib.sha256(f"{table.sha256}:curated:".encode())
    digest.update(kept_rows.tobytes())
    curated = replace(
        table,
        frame=kept_frame,
        raw=kept_raw,
        sha256=digest.hexdigest(),
        source_format="memory",
    )
    return CurationResult(
        name=table.name,
        kept_raw=kept_raw,
        kept_frame=kept_frame,
        kept_rows=kept_rows,
        removed_rows=removed_rows,
        removed_raw=table.raw_rows(removed_rows),
        reasons=tuple(str(reasons_by_row[r]) for r in removed_rows),
        thresholds=thresholds,
        table=curated,
        source_sha256=table.sha256,
    )


def curated_review(review: Review, curations: Mapping[str, CurationResult]) -> Review:
    """A review whose candidates are the curated versions in ``curations`` (and only those).

    Real, holdout and schema are unchanged, so ``report.evaluate`` on it (same seed) gives the
    "after curation" metrics of each curated candidate under the same candidate names. For
    trace reviews the candidate's traces are cut to the kept rows as well.
    """
    unknown = sorted(set(curations) - set(review.synthetic))
    if unknown:
        raise DataError(f"curations name candidates {unknown}; the review has {review.candidates}")
    synthetic = {name: curations[name].table for name in review.synthetic if name in curations}
    traces = review.traces
    if traces is not None:
        traces = dict(traces)
        for name in synthetic:
            if name in traces:
                curation = curations[name]
                traces[name] = _cut_traces(traces[name], curation.kept_rows, curation.table.sha256)
    return replace(review, synthetic=synthetic, traces=traces)


def _cut_traces(traces: Traces, rows: np.ndarray, sha256: str) -> Traces:
    cut = traces.subset(rows)
    return replace(cut, sha256=sha256) if hasattr(cut, "sha256") else cut


def curated_context(
    context: Context | None, curations: Mapping[str, CurationResult]
) -> Context | None:
    """The fitted context of the original review, with curated candidates' rows cut.

    Re-using the encoder and the embedding fitted on real data (instead of refitting them) keeps
    "before" and "after" numbers in the same embedding space, so they differ only by the rows
    removed, and skips the most expensive step.
    """
    if context is None:
        return None
    encoded, embedded = dict(context.encoded), dict(context.embedded)
    for name, curation in curations.items():
        rows = len(curation.kept_rows) + len(curation.removed_rows)
        for arrays in (encoded, embedded):
            if name in arrays and len(arrays[name]) == rows:
                arrays[name] = np.asarray(arrays[name])[curation.kept_rows]
            else:  # rows of a sample (a review above options.sample_rows): evaluate redraws
                arrays.pop(name, None)
    return replace(context, encoded=encoded, embedded=embedded)


def evaluate_curated(
    review: Review,
    curations: Mapping[str, CurationResult],
    *,
    context: Context | None = None,
    sections: Sequence[str] | None = None,
    options: ReviewOptions | None = None,
    seed: int = 0,
    device: str = "cpu",
    progress: Progress | None = None,
    threads: int | None = None,
    approximate: str | None = None,
) -> Report:
    """Re-run ``report.evaluate`` on the curated candidates ("after curation" metrics).

    Parameters
    ----------
    review : Review
        The original review.
    curations : mapping of str to CurationResult
    context : report.Context, optional
        The original report's context (``Report.context``); passed on with rows cut so the
        embedding is not refitted.
    sections, options, seed, device, progress, threads, approximate
        As for ``report.evaluate``; use the original report's values so numbers are comparable
        (``Report.threads`` and ``Report.approximate`` hold the last two).

    Returns
    -------
    report.Report
        Candidates under their original names, holding the curated results. A curation that
        removed every row is left out (there is nothing to measure).
    """

    curations = {n: c for n, c in curations.items() if len(c.kept_rows)}
    options = options if options is not None else ReviewOptions()
    curated = curated_review(review, curations)
    _, sampling = sample_review(review, options.sample_rows, seed=seed, person=options.person)
    if sampling is not None:
        curated, drawn = _kept_of_sample(curated, curations, sampling)
    after = evaluate(
        curated,
        sections=sections,
        options=options,
        seed=seed,
        device=device,
        progress=progress,
        context=curated_context(context, curations),
        threads=threads,
        approximate=approximate,
    )
    if sampling is not None and after.sampling is not None:
        # the candidates' rows were drawn here: the kept rows of the submitted sample
        tables = tuple(drawn.get(t.name, t) if t.role == "synthetic" else t
                       for t in after.sampling.tables)  # fmt: skip
        after = replace(after, sampling=replace(after.sampling, tables=tables))
    return after


def _kept_of_sample(
    curated: Review, curations: Mapping[str, CurationResult], sampling: Sampling
) -> tuple[Review, dict[str, TableSample]]:
    """The curated candidates cut to the kept rows of the samples the submitted statistics
    used (a review above ``options.sample_rows``).

    "After curation" is then the submitted sample less the removed rows, as on the exact path
    (the curated set less the removed rows): an independent new sample would add its own
    sampling noise to every before/after difference (the re-attack read a classifier attack
    at 100,000 rows as worse after curation).
    """
    synthetic, drawn = {}, {}
    for name, curation in curations.items():
        sample = sampling.table(name).positions  # input positions of the submitted sample
        kept = sample[np.isin(sample, curation.kept_rows)]
        at = np.searchsorted(curation.kept_rows, kept)  # their positions in the curated file
        synthetic[name] = cut_table(curated.synthetic[name], at)
        drawn[name] = TableSample(name, "synthetic", len(at), len(curation.kept_rows), at)
    return replace(curated, synthetic={**curated.synthetic, **synthetic}), drawn


# --- what curation cannot change -----------------------------------------------------------------


@dataclass(frozen=True)
class CurationBound:
    """A failing rule that removing the audit's rows provably cannot bring under its fail line.

    Curation only removes rows, so some judged quantities can move by a bounded amount only: the
    least value the rule can judge after removing ``n_removed`` of ``n_rows`` rows is still
    beyond its fail line, and evaluating the curated set again could not change the decision.

    Attributes
    ----------
    rule : str
        The policy rule.
    value : float
        Its judged value as submitted.
    least : float
        The least judged value any removal of ``n_removed`` of the ``n_rows`` rows can give
        (the rule's thresholds are lower-is-better), strictly beyond ``fail_at``.
    fail_at : float
        The rule's fail line.
    n_removed, n_rows : int
        Rows the curation removes of the rows the rule's statistic was computed on.
    why : str
        The bound in words, with its argument.
    """

    rule: str
    value: float
    least: float
    fail_at: float
    n_removed: int
    n_rows: int
    why: str

    @property
    def reason(self) -> str:
        """``"curation cannot fix: ..."``: what a decision says of this rule."""
        return f"{CANNOT_FIX}: {self.why}"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields and the reason."""
        return to_jsonable({**self.__dict__, "reason": self.reason})


#: room for floating-point rounding in a judged value computed as a mean of many terms
_ROUNDING = 1e-9


def _k_marginal_least(verdict: RuleVerdict, n_removed: int, n_rows: int) -> tuple[float, str]:
    """Least k-marginal shortfall after removing ``n_removed`` of ``n_rows`` synthetic rows.

    The score is ``(1 - mean TVD) x 1000`` over marginals whose cells and bins are fixed by the
    real data and the seed (:mod:`synthreview.metrics.utility.kmarginal`). With ``f = r / n``
    the candidate's cell proportions are ``q = (1 - f) q' + f q_removed``, so
    ``TVD(q, q') = f TVD(q_removed, q') <= f`` and, by the triangle inequality, each marginal's
    TVD to the real data falls by at most ``f``: the score rises by at most ``1000 f`` points and
    the shortfall (holdout reference less the score) falls by at most as much.
    """
    rise = 1000.0 * n_removed / n_rows
    least = float(verdict.value) - rise - _ROUNDING * 1000.0
    why = (
        f"k-marginal shortfall {verdict.value:.1f}; removing {n_removed:,} of {n_rows:,} rows "
        f"raises the score by at most {rise:.1f} (1000 x {n_removed:,}/{n_rows:,}), leaving at "
        f"least {least:.1f}, above the fail line {verdict.fail_at:g}"
    )
    return least, why


#: rules whose judged value has a proven least value after removing rows
_LEAST_AFTER_REMOVAL: dict[str, Callable[[RuleVerdict, int, int], tuple[float, str]]] = {
    "k_marginal": _k_marginal_least,
}


def curation_bounds(
    verdicts: Verdicts,
    *,
    n_removed: int,
    n_rows: int,
    waived: Collection[str] = (),
) -> tuple[CurationBound, ...]:
    """The failing rules that removing ``n_removed`` of ``n_rows`` rows cannot bring under
    their fail line.

    Only required rules that fail as submitted and have a proven bound are considered
    (``k_marginal``: see :func:`_k_marginal_least`); a rule in ``waived`` is never used,
    since an approved waiver leaves it out of the decision and the other rules then decide.

    Parameters
    ----------
    verdicts : Verdicts
        The candidate's verdicts as submitted.
    n_removed, n_rows : int
        Rows the curation removes of the rows the statistics were computed on (the candidate's
        sample on a review estimated on samples).
    waived : collection of str
        Rules a waiver may leave out of the decision.

    Returns
    -------
    tuple of CurationBound
        Empty when curation might fix every failing rule.
    """
    if not 0 <= n_removed <= n_rows or n_rows < 1:
        raise ValueError(
            f"n_removed must be in [0, n_rows] with n_rows >= 1; got {n_removed} of {n_rows}"
        )
    found = []
    for verdict in verdicts.failed:
        least_of = _LEAST_AFTER_REMOVAL.get(verdict.rule)
        usable = (
            least_of is not None
            and verdict.required
            and verdict.rule not in waived
            and verdict.direction == "lower"
            and verdict.value is not None
            and math.isfinite(verdict.value)
        )
        if not usable:
            continue
        least, why = least_of(verdict, n_removed, n_rows)
        if least > verdict.fail_at:
            value = float(verdict.value)
            found.append(
                CurationBound(verdict.rule, value, least, verdict.fail_at, n_removed, n_rows, why)
            )
    return tuple(found)


def bounded_verdicts(verdicts: Verdicts, bounds: Sequence[CurationBound]) -> Verdicts:
    """The curated set's verdicts where it was not evaluated because of ``bounds``.

    ``verdicts`` judges a curated content that holds no section (each says why it was not
    evaluated), so its rules are missing; each bounded rule then fails on its least value
    (``value``), with the bound and its argument as the reason.
    """
    by_rule = {b.rule: b for b in bounds}
    rules = tuple(
        replace(
            r,
            verdict="fail",
            value=by_rule[r.rule].least,
            measured=None,
            point=None,
            bound=None,
            bound_text=f"at least {by_rule[r.rule].least:.1f} after curation (a proven bound)",
            reason=by_rule[r.rule].reason,
            note="not evaluated after curation: the bound already decides",
        )
        if r.rule in by_rule
        else r
        for r in verdicts.rules
    )
    return replace(verdicts, rules=rules, overall="fail")
