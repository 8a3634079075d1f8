"""Keep good data at small sizes (issue 38, item 3): a fresh real sample keeps its rows.

German credit (``../shared/data``, 1,000 rows) cut by rows into 400 training, 400 holdout and a
200-row fresh candidate, five seeds: the audit's default rules (α-support at 0.5 %, authenticity
at 1 %, exact copies) remove at most 1 % of the fresh rows on average, and each rule's stated
loss of a fresh sample is the one measured on this 400-row holdout.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthreview.io.tables import align
from synthreview.options import ReviewOptions
from synthreview.release.pipeline import audit_candidate
from synthreview.review import evaluate
from tests.credit_split import german_credit_split

pytestmark = pytest.mark.slow  # audits of many fresh samples

SEEDS = range(5)


@pytest.fixture(scope="module")
def audits():
    """The fresh candidate's audit for each seed (fidelity and privacy sections)."""
    found = []
    for seed in SEEDS:
        split = german_credit_split(400, seed, n_holdout=400, n_fresh=200)
        review = align(split.real, {"fresh": split.fresh}, holdout=split.holdout,
                       schema=split.schema)  # fmt: skip
        report = evaluate(review, sections=["fidelity", "privacy"],
                          options=ReviewOptions(max_attack=200), seed=seed)  # fmt: skip
        found.append(audit_candidate(report, "fresh"))
    return found


def test_a_200_row_fresh_sample_loses_at_most_1_percent_on_average(audits):
    losses = [float(a.audit["removed"].mean()) for a in audits]
    assert all(len(a.audit) == 200 for a in audits)
    assert np.mean(losses) <= 0.01, losses
    for audited in audits:
        # every removed genuine row is strictly beyond its rule's threshold, never tied with it
        removed = audited.audit.loc[audited.audit["drop_outside_alpha"]]
        threshold = audited.audit.attrs["rules"]["drop_outside_alpha"]["threshold"]
        assert (removed["alpha_level"] > threshold).all()
        removed = audited.audit.loc[audited.audit["drop_unauthentic"]]
        threshold = audited.audit.attrs["rules"]["drop_unauthentic"]["threshold"]
        assert (removed["authenticity_ratio"] < threshold).all()


def test_the_stated_loss_is_the_one_measured_on_the_small_holdout(audits):
    for audited in audits:
        summary = audited.summary()
        for rule in ("drop_outside_alpha", "drop_unauthentic", "any"):
            stated, measured = summary.loc[rule, ["expected_fpr", "reference_share"]]
            assert stated == pytest.approx(measured), rule
        # the Audit page's "a fresh real sample would lose x %"
        preview = {p.rule: p for p in audited.preview()}
        assert preview["any"].real_loss == pytest.approx(summary.loc["any", "reference_share"])
        # no quasi-identifiers in this review: that rule has no tile
        assert "drop_qi_unique" not in preview and "drop_unauthentic" in preview
