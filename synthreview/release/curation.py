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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from synthreview.errors import ConfigError, DataError
from synthreview.io.schema import LoadedTable, Review
from synthreview.io.traces import Traces
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
    sections, options, seed, device, progress
        As for ``report.evaluate``; use the original report's values so numbers are comparable.

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
