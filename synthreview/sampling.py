"""Statistics on samples, evidence on every row: the review of tables above a documented size.

An exact k-NN pass over a million real rows against a million others costs about half an
hour of two cores (issue 26), and a review needs several. The population statistics of a
review (α-Precision / β-Recall curves, authenticity, PRDC, marginals, the discriminator and ML
efficacy, attack AUCs and TPR at low FPR, the WP29 risks) are means over rows: a random sample
of :data:`DEFAULT_SAMPLE_ROWS` rows per table estimates them with a standard error well below
the policy's margins, so above that size :func:`sample_review` gives the sections a review of
random samples of every table, and the report says so (:meth:`Sampling.describe`:
"estimated on 50,000 of 1,000,000 rows").

The intervals the judgement uses then hold the sampling error: each section's bootstrap
resamples the *sample*, so an interval is the spread of the estimator at the sample's size,
which is the error of estimating the full tables' value from the sample (the full tables'
own interval would be narrower). Real, holdout and synthetic are sampled to the same size, so
a candidate and its holdout reference are still estimated alike (k-NN statistics depend on
the number of rows).

Per-row decisions are not sampled: the audit (:mod:`synthreview.release.rows`) judges every
synthetic row against every training row (exact copies by row hashes, near copies and the
authenticity ratio through a faiss index whose 1-NN recall is measured on the run).

Measured (``benchmarks/bench_review_scale.py --rows 1000000``: 3 × 1,000,000 rows × 20 mixed
columns as Parquet, 1 % verbatim training rows planted, the CLI with ``--curate``, 2 cores of
an AMD EPYC): 530.6 s wall, 760 CPU-s, peak RSS 5.92 GB; every planted row flagged and the
candidate released after curation. Again on 2026-11-28 (main at bf24e93, beside a full test
suite, load 4.1-6.4): 617.3 s wall, 426.4 CPU-s, peak RSS 6.46 GB, every planted row flagged;
about half of the time is the every-row audit, most of it the IVF index (the benchmark's
docstring has the timeline). After issue 39's reuse of the privacy section's holdout searches
(24e6ed4, load 3.1-5.2): 393.1 s wall, 402.7 CPU-s, 6.58 GB, the same flags and decision.

Sampling is free of row order: rows are drawn by rank in
:func:`synthreview.io.row_hash.value_order`, so a permutation of a file draws the same rows.
A person-level review (``ReviewOptions.person``) samples *people* (issue 34): whole people in a
random order, as many as fit in the sample size (:func:`synthreview.splits.draw_rows`), so no
person's rows are split between the sample and the rest; a candidate whose person column is
empty (a generator that kept no ids) is sampled by row. A trace review is never sampled: a
sample of rows would split days.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np

from synthreview.errors import ConfigError
from synthreview.io.persons import person_ids
from synthreview.io.row_hash import value_order
from synthreview.io.schema import LoadedTable, Review
from synthreview.splits import draw_rows

#: rows per table above which population statistics are estimated on a random sample: the
#: standard error of a share near 0.5 is 0.0022 at this size (the policy's margins are 0.02
#: and wider), SDMetrics caps its reports at the same size, and a review of 100,000-row
#: samples took 310 s of two cores (fidelity 28 s, privacy 128 s, utility 138 s;
#: benchmarks/bench_review_scale.py at 200,000 rows), twice with a curation: too long for
#: the 10 minutes a million-row review with --curate may take
DEFAULT_SAMPLE_ROWS = 50_000
#: smallest sample allowed: below it the holdout quantiles the audit calibrates on at 1 %
#: rest on fewer than ten rows
MIN_SAMPLE_ROWS = 1_000


@dataclass(frozen=True)
class TableSample:
    """The rows of one input table that the population statistics were estimated on.

    Attributes
    ----------
    name, role : str
        As in :class:`~synthreview.io.schema.LoadedTable`.
    rows_used, rows_total : int
    positions : ndarray of int64
        0-based input positions of the sampled rows, ascending (all rows when not sampled).
    """

    name: str
    role: str
    rows_used: int
    rows_total: int
    positions: np.ndarray = field(repr=False, compare=False)

    @property
    def sampled(self) -> bool:
        """Whether fewer rows than the table holds were used."""
        return self.rows_used < self.rows_total

    def describe(self) -> str:
        """``"real: estimated on 100,000 of 1,000,000 rows"`` (or ``"all 300 rows"``)."""
        if not self.sampled:
            return f"{self.name}: all {self.rows_total:,} rows"
        return f"{self.name}: estimated on {self.rows_used:,} of {self.rows_total:,} rows"

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "role": self.role,
            "rows_used": self.rows_used,
            "rows_total": self.rows_total,
        }


@dataclass(frozen=True)
class Sampling:
    """How a review's population statistics were estimated (``Report.sampling``).

    Attributes
    ----------
    max_rows : int
        Rows per table above which a table was sampled.
    seed : int
        The review's seed (it draws the samples).
    tables : tuple of TableSample
        Real, holdout and each candidate, in review order.
    """

    max_rows: int
    seed: int
    tables: tuple[TableSample, ...]

    def table(self, name: str) -> TableSample:
        """The sample of the source ``name`` (``"real"``, ``"holdout"`` or a candidate)."""
        for t in self.tables:
            if (t.name if t.role == "synthetic" else t.role) == name:
                return t
        raise KeyError(f"name must be 'real', 'holdout' or a candidate; got {name!r}")

    def describe(self) -> list[str]:
        """One line per table, as the report and the record print them."""
        return [t.describe() for t in self.tables]

    def sentence(self) -> str:
        """The one line a screen shows: which tables were sampled, and that the audit was not."""
        parts = "; ".join(t.describe() for t in self.tables if t.sampled)
        return (
            f"Population statistics estimated on random samples ({parts}); the audit judges "
            "every synthetic row against every training row."
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "max_rows": self.max_rows,
            "seed": self.seed,
            "tables": [t.to_dict() for t in self.tables],
            "note": (
                "population statistics and their intervals are estimated on random samples of "
                "the tables above; the audit judges every synthetic row"
            ),
        }


def check_sample_rows(value: object) -> int | None:
    """``value`` as a sample size (None: every row), or ConfigError naming the option."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < MIN_SAMPLE_ROWS
    ):
        raise ConfigError(
            f"option sample_rows must be None (every row) or an integer >= {MIN_SAMPLE_ROWS}; "
            f"got {value!r} instead"
        )
    return int(value)


def _tables(review: Review) -> list[LoadedTable]:
    """Real, holdout (when given) and every candidate, in the order the samples are filed."""
    tables = [review.real, *([review.holdout] if review.holdout is not None else [])]
    return tables + list(review.synthetic.values())


def sampled_tables(
    review: Review, max_rows: int | None, *, person: str | None = None
) -> list[LoadedTable]:
    """The tables a review with ``sample_rows=max_rows`` estimates on samples (may be none).

    The one rule :func:`sample_review` and :func:`plan_sentence` share: tables above
    ``max_rows`` rows of a table review (a person-level review's by person: ``person``);
    none of a trace review or with ``max_rows=None``.
    """
    max_rows = check_sample_rows(max_rows)
    if max_rows is None or review.kind != "table":
        return []
    return [t for t in _tables(review) if t.n_rows > max_rows]


def plan_sentence(review: Review, max_rows: int | None, *, person: str | None = None) -> str:
    """What a review of ``review`` with ``sample_rows=max_rows`` will estimate on samples.

    The sentence the dashboard shows beside its control, before anything is computed; after a
    run the report's :meth:`Sampling.sentence` says what was done.
    """
    max_rows = check_sample_rows(max_rows)
    big = sampled_tables(review, max_rows, person=person)
    if big:
        names = ", ".join(t.name if t.role == "synthetic" else t.role for t in big)
        drawn = f"{max_rows:,} rows"
        if person is not None:
            drawn = f"whole people (by {person!r}), up to {max_rows:,} rows"
        return (
            f"Above {max_rows:,} rows a table's population statistics are estimated on a random "
            f"sample of {drawn} ({names}); the audit judges every synthetic row against every "
            "training row."
        )
    # why nothing is sampled
    if review.kind != "table":
        return "Glucose traces are reviewed on every trace (never sampled)."
    if max_rows is None:
        return "Every statistic is estimated on every row (exact; slow above ~200,000 rows)."
    return f"Every table has at most {max_rows:,} rows: every statistic is estimated on every row."


def sample_positions(
    table: LoadedTable, n: int, seed: int, *, person: str | None = None
) -> np.ndarray:
    """``n`` input positions of ``table`` drawn at random by value rank, ascending.

    The ranks are drawn with ``numpy.random.default_rng((seed, role))`` and mapped to rows
    through :func:`~synthreview.io.row_hash.value_order`, so the same rows (by content) are
    drawn from any permutation of the file. With ``person`` (a column of ``table`` that names
    each row's person) whole people are drawn, as many as fit in ``n`` rows; a column with no
    id (a candidate whose generator kept none) is drawn by row.
    """
    if n >= table.n_rows:
        return np.arange(table.n_rows, dtype=np.int64)
    # a stream per role: real and holdout of equal size must not draw the same ranks
    salt = int.from_bytes(hashlib.sha256(table.role.encode()).digest()[:4], "little")
    rng = np.random.default_rng([seed, salt])
    # the value order hashes every column, the person's too: equal rows of two people are
    # ordered by their person, so the people drawn do not depend on the file's order either
    order = value_order(table.frame)
    groups = None
    if person is not None and not table.frame[person].isna().all():
        groups = person_ids(table.frame[person])[order]
    ranks = draw_rows(rng, table.n_rows, n, groups=groups)
    return np.sort(order[ranks]).astype(np.int64)


def cut_table(table: LoadedTable, positions: np.ndarray) -> LoadedTable:
    """The rows of ``table`` at ``positions`` as a table of their own (a sample's digest)."""
    digest = hashlib.sha256(f"{table.sha256}:sample:".encode())
    digest.update(positions.tobytes())
    return replace(
        table,
        frame=table.frame.iloc[positions].reset_index(drop=True),
        raw=table.raw_rows(positions),
        sha256=digest.hexdigest(),
        source_format="memory",
    )


def sample_review(
    review: Review, max_rows: int | None, *, seed: int, person: str | None = None
) -> tuple[Review, Sampling | None]:
    """The review the population statistics are estimated on, and how it was drawn.

    Parameters
    ----------
    review : Review
    max_rows : int or None
        Rows per table above which a table is sampled to this size; None: every row.
    seed : int
    person : str, optional
        The person column of a person-level review: its tables are sampled by person.

    Returns
    -------
    (Review, Sampling or None)
        ``review`` itself and None when no table is sampled (traces, tables at or below
        ``max_rows``, ``max_rows=None``).
    """
    max_rows = check_sample_rows(max_rows)
    if not sampled_tables(review, max_rows, person=person):
        return review, None
    tables = _tables(review)
    positions = [sample_positions(t, max_rows, seed, person=person) for t in tables]
    samples = [
        TableSample(t.name, t.role, len(rows), t.n_rows, rows)
        for t, rows in zip(tables, positions, strict=True)
    ]
    cut = [
        cut_table(t, s.positions) if s.sampled else t for t, s in zip(tables, samples, strict=True)
    ]
    n_base = 1 + (review.holdout is not None)
    sampled = replace(
        review,
        real=cut[0],
        holdout=cut[1] if review.holdout is not None else None,
        synthetic=dict(zip(review.synthetic, cut[n_base:], strict=True)),
    )
    return sampled, Sampling(max_rows=max_rows, seed=seed, tables=tuple(samples))
