"""Issue 39 item 4: a curated version is evaluated only when curation can change the decision.

A candidate failing a rule that removing the audit's rows provably cannot bring under its fail
line (``release.curation.curation_bounds``) is cut but not evaluated again; its decision must be
the full computation's, and its reason says "curation cannot fix: ..." with the bound.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from synthreview import demo
from synthreview.judgement.decision import CANNOT_FIX
from synthreview.judgement.policy import load_policy
from synthreview.metrics.utility.kmarginal import k_marginal_score
from synthreview.options import default_options
from synthreview.record.codec import from_jsonable, to_record_json
from synthreview.release.curation import curation_bounds, evaluate_curated
from synthreview.release.pipeline import CandidateRelease, release_candidate
from synthreview.review import evaluate


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.choice(list("xyz"), n, p=[0.6, 0.3, 0.1]),
            "b": rng.choice(list("pq"), n),
            "c": rng.normal(size=n).round(2),
        }
    )


@pytest.mark.parametrize("seed", range(6))
def test_removing_rows_moves_the_k_marginal_score_by_at_most_1000_r_over_n(seed):
    """The bound the shortcut rests on, checked on the removals that move the score most:
    rows of the over-represented cells (a greedy attempt to raise the score), and at random."""
    real, synthetic = _table(400, seed), _table(300, seed + 100)
    synthetic.loc[:120, "a"] = "z"  # far from real: a large shortfall to lower
    options = {"columns": ["a", "b"], "numeric": ["c"], "k": (2,), "seed": 0}
    before = k_marginal_score(real, synthetic, **options).scores[2]
    rng = np.random.default_rng(seed)
    for r in (1, 5, 30, 90):
        over = synthetic.index[synthetic["a"] == "z"].to_numpy()
        for removed in (over[:r], rng.choice(len(synthetic), r, replace=False)):
            after = k_marginal_score(real, synthetic.drop(index=removed), **options).scores[2]
            assert after <= before + 1000 * r / len(synthetic) + 1e-9


@pytest.fixture(scope="module")
def collapsed():
    """The demo's mode-collapsed candidate at 800 rows: it fails k_marginal by a wide margin."""
    review = demo.tables(n_train=800)
    review = replace(review, synthetic={"mode_collapse": review.synthetic["mode_collapse"]})
    options = default_options(review)
    report = evaluate(review, options=options, seed=0)
    return review, report


def test_a_candidate_curation_cannot_fix_is_not_evaluated_and_its_decision_is_the_full_ones(
    collapsed,
):
    review, report = collapsed
    policy = load_policy().for_access(None)
    quick = release_candidate(review, report, "mode_collapse", policy=policy, waived=())
    # without knowing which rules a waiver may leave out, nothing is skipped: the full computation
    full = release_candidate(review, report, "mode_collapse", policy=policy)
    assert quick.verdicts == full.verdicts  # as submitted: the same judgement
    assert quick.curated is not None and full.curated is not None
    assert quick.curated.bounds and quick.curated.report is None  # not evaluated
    assert not full.curated.bounds and full.curated.report is not None
    assert quick.decision.outcome == full.decision.outcome == "do_not_release"
    assert f"; {CANNOT_FIX}: k-marginal shortfall" in quick.decision.reason
    # the bound holds against what the evaluation measures
    bound = quick.curated.bounds[0]
    measured = full.curated.verdicts["k_marginal"]
    assert measured.verdict == "fail" and measured.value >= bound.least > bound.fail_at
    assert quick.curated.verdicts["k_marginal"].value == bound.least
    # the curated rows are the same: the files a confirmed curation writes do not change
    assert np.array_equal(quick.curated.curation.kept_rows, full.curated.curation.kept_rows)
    # a record files the bound and reads it back
    again = from_jsonable(CandidateRelease, json.loads(json.dumps(to_record_json(quick))))
    assert again.curated.bounds == quick.curated.bounds
    assert again.decision == quick.decision


def test_no_bound_where_the_removed_rows_could_close_the_gap(collapsed):
    _, report = collapsed
    verdicts = release_candidate(
        collapsed[0], report, "mode_collapse", policy=load_policy(), curate_when="never"
    ).verdicts
    shortfall = verdicts["k_marginal"].value
    n = 800
    # enough rows removed to lift the score past the fail line: no proof, evaluate
    r = int(np.ceil((shortfall - verdicts["k_marginal"].fail_at) * n / 1000)) + 1
    assert curation_bounds(verdicts, n_removed=r, n_rows=n) == ()
    assert curation_bounds(verdicts, n_removed=0, n_rows=n)
    assert curation_bounds(verdicts, n_removed=0, n_rows=n, waived={"k_marginal"}) == ()


def test_bound_arguments_are_checked(collapsed):
    review, report = collapsed
    verdicts = release_candidate(
        review, report, "mode_collapse", policy=load_policy(), curate_when="never"
    ).verdicts
    with pytest.raises(ValueError, match="n_removed must be in"):
        curation_bounds(verdicts, n_removed=5, n_rows=3)


def test_privacy_is_not_evaluated_after_curation_when_the_other_sections_already_fail(
    collapsed,
):
    """Without the k_marginal bound (waived), the curated set's fidelity and utility already
    fail a required rule: its privacy section is not computed, and the decision is the full
    computation's (waivers unknown, so nothing is skipped)."""
    review, report = collapsed
    policy = load_policy().for_access(None)
    staged = release_candidate(
        review, report, "mode_collapse", policy=policy, waived={"k_marginal"}
    )
    full = release_candidate(review, report, "mode_collapse", policy=policy)
    assert staged.curated.skipped == ("privacy",) and not full.curated.skipped
    assert full.curated.report.candidates["mode_collapse"].privacy is not None
    assert staged.curated.report.candidates["mode_collapse"].privacy is None
    assert "not evaluated after curation" in staged.curated.content["errors"]["privacy"]
    assert staged.decision == full.decision
    assert staged.curated.verdicts.overall == full.curated.verdicts.overall == "fail"
    computed = {r.rule: r for r in staged.curated.verdicts.rules if r.value is not None}
    assert computed and all(full.curated.verdicts[rule] == r for rule, r in computed.items())


def test_sections_evaluated_in_two_steps_equal_one_evaluation():
    """A curated set that passes without privacy gets privacy next; the merged result is the
    one-call evaluation of every section."""
    review = demo.tables(n_train=600)
    review = replace(review, synthetic={"leaky": review.synthetic["fresh_with_copies"]})
    report = evaluate(review, options=default_options(review), seed=0)
    policy = load_policy().for_access(None)
    release = release_candidate(
        review, report, "leaky", policy=policy, curate_when="always", waived=()
    )
    curated = release.curated
    assert curated is not None and not curated.skipped and not curated.bounds
    once = evaluate_curated(
        review,
        {"leaky": curated.curation},
        context=report.context,
        sections=report.sections,
        options=report.options,
        seed=report.seed,
    )
    assert curated.content == once.candidates["leaky"].to_dict()
