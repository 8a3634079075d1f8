"""The demos' review records: the table and the glucose demo reviewed, released, held as records.

Tests and benchmarks open a stored record instead of recomputing a review; these build them the
way ``synthreview review --curate`` does (every section, the default policy, curated candidates).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from synthreview import demo
from synthreview.io.traces import Traces, align_traces
from synthreview.options import ReviewOptions
from synthreview.record.live import initial_options
from synthreview.record.record import ReviewRecord, build_record
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate

__all__ = ["DEMO_RECORD_TIME", "demo_glucose_record", "demo_record"]

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
        Default: the dashboard's starting options for the demo
        (:func:`synthreview.record.live.initial_options`: target ``income``, groups, regression
        formula) with 20 bootstrap draws and attacks on at most ``n_train // 2`` rows.
    controls : bool
        Add the planted-leak control table.
    """
    review = demo.tables(seed=seed, n_train=n_train, n_holdout=n_train)
    # the options the dashboard starts the demo from (its target, groups and regression
    # formula), so the stored record states the decisions a reviewer sees after Run review
    chosen = options or replace(
        initial_options(review), n_bootstrap=20, max_attack=max(n_train // 2, 20)
    )
    report = evaluate(review, options=chosen, seed=seed)
    release = review_release(
        review, report, curate=True, controls=controls, timestamp=DEMO_RECORD_TIME
    )
    return build_record(release, report)


def _first_days(traces: Traces, n_days: int) -> Traces:
    """The first ``n_days`` day traces, under the digest of their own values (not the whole
    set's: a record names the files it was computed on)."""
    kept = traces.subset(np.arange(min(n_days, traces.n_traces)))
    values = np.ascontiguousarray(kept.values)
    return replace(kept, sha256=hashlib.sha256(values.tobytes()).hexdigest())


def demo_glucose_record(
    *, n_days: int = 40, seed: int = 0, options: ReviewOptions | None = None
) -> ReviewRecord:
    """The record of the glucose demo (``demo.traces``) cut to ``n_days`` day traces a source.

    Parameters
    ----------
    n_days : int
        Day traces kept of the training, holdout and every candidate's traces (the first ones,
        at least 2); 40 builds in about 15 s on 2 cores.
    seed : int
    options : ReviewOptions, optional
        Default: 20 bootstrap draws, attacks on at most 100 traces.
    """
    if int(n_days) < 2:
        raise ValueError(f"n_days must be at least 2 day traces; got {n_days!r} instead")
    full = demo.traces(seed=seed)
    traces = {name: _first_days(t, int(n_days)) for name, t in (full.traces or {}).items()}
    review = align_traces(
        traces["real"],
        {name: traces[name] for name in full.candidates},
        holdout=traces.get("holdout"),
    )
    chosen = options or ReviewOptions(n_bootstrap=20, max_attack=100)
    report = evaluate(review, options=chosen, seed=seed)
    release = review_release(review, report, curate=True, timestamp=DEMO_RECORD_TIME)
    return build_record(release, report)
