"""Issue 39 item 5: the real side is computed once per run, the curated review included.

``evaluate(..., keep_memo=True)`` keeps what the candidates share (real-side neighbours, the
utility holdout reference, the privacy searches of training and holdout rows alone) in the
report's context, so the curated versions of ``review_release`` (the CLI's) compute none of it
again, and their numbers stay the same.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from synthreview import demo
from synthreview.judgement.policy import load_policy
from synthreview.memo import Memo
from synthreview.metrics.fidelity import section as fidelity
from synthreview.metrics.utility import section as utility
from synthreview.options import default_options
from synthreview.release.evidence import copy_evidence
from synthreview.release.pipeline import release_candidate
from synthreview.review import evaluate


@pytest.fixture(scope="module")
def leaky():
    """600 demo rows, one candidate holding planted training rows: curated and evaluated."""
    review = demo.tables(n_train=600)
    return replace(review, synthetic={"leaky": review.synthetic["fresh_with_copies"]})


def _counted(monkeypatch):
    calls = {"fidelity": 0, "utility": 0}

    def spy(module, name, key):
        original = getattr(module, name)

        def counted(*args, **kwargs):
            calls[key] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    spy(fidelity, "_real_side", "fidelity")
    spy(utility, "_distribution_metrics", "utility")
    return calls


def _release(review, *, keep_memo):
    options = default_options(review)
    report = evaluate(review, options=options, seed=0, keep_memo=keep_memo)
    policy = load_policy().for_access(None)
    return report, release_candidate(review, report, "leaky", policy=policy, curate_when="always")


def test_the_curated_review_reuses_the_submitted_reviews_real_side(leaky, monkeypatch):
    calls = _counted(monkeypatch)
    report, kept = _release(leaky, keep_memo=True)
    # one real side and one holdout reference (real vs holdout, then the candidate) for both
    assert calls == {"fidelity": 1, "utility": 1 + 2}
    assert kept.curated is not None and kept.curated.report is not None
    assert len(report.context.memo) > 0  # the caller owns it now
    report.context.memo.clear()

    calls.update(fidelity=0, utility=0)
    _, fresh = _release(leaky, keep_memo=False)
    assert calls == {"fidelity": 2, "utility": 2 + 2}  # computed again after curation
    # the same numbers either way
    assert kept.curated.content == fresh.curated.content
    assert kept.curated.verdicts == fresh.curated.verdicts
    assert kept.decision == fresh.decision


def test_the_privacy_searches_of_training_and_holdout_rows_run_once_per_run(leaky, monkeypatch):
    computed = []
    original = Memo.get

    def get(self, key, compute):
        def counted():
            computed.append(key[0])
            return compute()

        return original(self, key, counted)

    monkeypatch.setattr(Memo, "get", get)
    report, kept = _release(leaky, keep_memo=True)
    assert kept.curated is not None and kept.curated.report is not None
    assert report.candidates["leaky"].privacy is not None
    assert kept.curated.report.candidates["leaky"].privacy is not None
    # the submitted and the curated privacy section ran; each search of the holdout once
    assert sorted(k for k in computed if k.startswith("privacy-")) == [
        "privacy-holdout-to-train",
        "privacy-reference-nn",
        "privacy-reference-radius",
    ]
    # the audit of the submitted and of the curated rows: the training side searched once
    assert computed.count("audit-real-side") == 1
    report.context.memo.clear()


def test_the_memo_is_cleared_by_default(leaky):
    options = default_options(leaky)
    report = evaluate(leaky, sections=("fidelity", "utility"), options=options, seed=0)
    assert len(report.context.memo) == 0


def test_an_audit_through_the_memo_equals_one_without():
    """The curated set's audit reads the distinct training rows and the holdout rows' nearest
    ones from the memo the submitted set's audit filled: the same evidence to the last bit."""
    rng = np.random.default_rng(3)
    real = rng.normal(size=(400, 6)).round(1)
    holdout = rng.normal(size=(300, 6)).round(1)
    synthetic = np.vstack([rng.normal(size=(280, 6)).round(1), real[:20]])
    kept = synthetic[rng.permutation(len(synthetic))[:250]]
    memo = Memo()
    copy_evidence(real, synthetic, holdout, memo=memo)
    assert len(memo) == 1
    again = copy_evidence(real, kept, holdout, memo=memo)
    alone = copy_evidence(real, kept, holdout)
    assert len(memo) == 1
    for field in ("ratio", "nearest_train_row", "train_distance", "holdout_ratio",
                  "holdout_train_distance"):  # fmt: skip
        np.testing.assert_array_equal(getattr(again, field), getattr(alone, field))
    assert again.top_columns == alone.top_columns
