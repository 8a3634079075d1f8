"""The demo's review record: the table demo reviewed, released and held as one record.

Tests and benchmarks open a stored record instead of recomputing a review; this builds it the
way ``synthreview review --curate`` does (every section, the default policy, curated candidates).
"""

from __future__ import annotations

from datetime import UTC, datetime

from synthreview import demo
from synthreview.options import ReviewOptions
from synthreview.record.record import ReviewRecord, build_record
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate

__all__ = ["DEMO_RECORD_TIME", "demo_record"]

#: the time a demo record states (fixed, so equal inputs give equal files)
DEMO_RECORD_TIME = datetime(2026, 1, 1, tzinfo=UTC)


def demo_record(
    *,
    n_train: int = 300,
    seed: int = 0,
    options: ReviewOptions | None = None,
    controls: bool = True,
) -> ReviewRecord:
    """The record of the table demo (``demo.tables``) with ``n_train`` training rows.

    Parameters
    ----------
    n_train : int
        Training rows (and holdout rows) of the demo; 300 opens in about a second.
    seed : int
    options : ReviewOptions, optional
        Default: 20 bootstrap draws, attacks on at most ``n_train // 2`` rows.
    controls : bool
        Add the planted-leak control table.
    """
    review = demo.tables(seed=seed, n_train=n_train, n_holdout=n_train)
    chosen = options or ReviewOptions(n_bootstrap=20, max_attack=max(n_train // 2, 20))
    report = evaluate(review, options=chosen, seed=seed)
    release = review_release(
        review, report, curate=True, controls=controls, timestamp=DEMO_RECORD_TIME
    )
    return build_record(release, report)
