"""Audit, policy and release on real engine output (UCI Adult sample, small and seeded)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

from synthreview import demo, generators
from synthreview.io.tables import align
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.options import ReviewOptions
from synthreview.release.audit import Thresholds, audit_table, holdout_audit, rule_summary
from synthreview.release.curation import curate, evaluate_curated
from synthreview.release.evidence import copy_evidence_for
from synthreview.release.export import curated_csv_bytes, curated_parquet_bytes
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate

pytestmark = pytest.mark.slow
N = 150  # the classifier-seeker attack dominates: ~30 s per candidate at 150 rows
OPTIONS = ReviewOptions(n_bootstrap=20, max_attack=N)


def _rows(table, rows, name, role):
    return replace(table, name=name, role=role, frame=table.frame.iloc[rows].reset_index(drop=True),
                   raw=table.raw.iloc[rows].reset_index(drop=True))  # fmt: skip


@pytest.fixture(scope="module")
def review():
    base = demo.tables(seed=0, n_train=N, n_holdout=2 * N)
    holdout = _rows(base.holdout, slice(0, N), "holdout", "holdout")
    fresh = _rows(base.holdout, slice(N, 2 * N), "fresh", "synthetic")
    memorised = generators.copy_rows(base.real.frame, seed=1)
    return align(base.real, {"memorised": memorised, "fresh": fresh}, holdout=holdout,
                 schema=base.schema)  # fmt: skip


@pytest.fixture(scope="module")
def report(review):
    return evaluate(review, sections=("fidelity", "privacy"), options=OPTIONS, seed=0)


def test_sections_ran(report):
    for candidate in report.candidates.values():
        assert not candidate.errors, candidate.errors


def test_memorising_candidate_fails_fresh_sample_passes(report):
    policy = load_policy()
    content = report.to_dict()["candidates"]
    memorised = apply_policy(policy, content["memorised"])
    fresh = apply_policy(policy, content["fresh"])
    assert memorised.overall == "fail"
    failed = {r.rule for r in memorised.failed}
    assert {"dcr_share", "mia_auc"} & failed, [r.message for r in memorised.rules]
    assert fresh.overall != "fail", [r.message for r in fresh.rules]
    assert not fresh.failed


def test_audit_on_engine_output(review, report):
    memorised = report.candidates["memorised"]
    copies = copy_evidence_for(report, "memorised")
    audit = audit_table(memorised.fidelity, memorised.privacy, copies=copies)
    assert len(audit) == review.synthetic["memorised"].n_rows
    assert audit["exact_copy"].all()  # every row was copied from a training row
    assert audit["removed"].all()
    fresh = report.candidates["fresh"]
    copies = copy_evidence_for(report, "fresh")
    fresh_audit = audit_table(fresh.fidelity, fresh.privacy, copies=copies)
    reference = holdout_audit(fresh.fidelity, fresh.privacy, copies=copies)
    assert len(reference) == review.holdout.n_rows
    summary = rule_summary(fresh_audit, reference)
    # calibrated rules: a fresh real sample loses about what the holdout loses, a few %
    assert summary.loc["any", "share"] <= 0.05
    assert summary.loc["any", "reference_share"] <= 0.05
    assert summary.loc["drop_exact_copy", "share"] < 0.05


def test_round_trip_on_demo_candidate(review, report):
    fresh = report.candidates["fresh"]
    audit = audit_table(fresh.fidelity, fresh.privacy, Thresholds(alpha=0.8))
    table = review.synthetic["fresh"]
    curation = curate(table, audit)
    assert 0 < len(curation.removed_rows) < table.n_rows
    back = pd.concat([curation.kept_raw, curation.removed_raw])
    back.index = np.concatenate([curation.kept_rows, curation.removed_rows])
    pd.testing.assert_frame_equal(back.sort_index(), table.raw)
    csv = pd.read_csv(io.BytesIO(curated_csv_bytes(curation, schema=review.schema)), dtype=str,
                      keep_default_na=False)  # fmt: skip
    pd.testing.assert_frame_equal(csv, curation.kept_raw, check_dtype=False)
    parquet = pd.read_parquet(io.BytesIO(curated_parquet_bytes(curation)))
    assert dict(parquet.dtypes) == dict(table.frame.dtypes)


def test_curated_set_is_re_evaluated_in_the_same_embedding(review, report):
    fresh = report.candidates["fresh"]
    audit = audit_table(fresh.fidelity, fresh.privacy, Thresholds(alpha=0.8))
    curation = curate(review.synthetic["fresh"], audit)
    after = evaluate_curated(review, {"fresh": curation}, context=report.context,
                             sections=report.sections, options=OPTIONS, seed=0)  # fmt: skip
    result = after.candidates["fresh"]
    assert not result.errors
    assert after.candidates.keys() == {"fresh"}
    assert len(result.fidelity.samples.alpha_level) == len(curation.kept_rows)
    # rows outside the 0.8-support are gone, so the curated set sits inside it
    assert np.nanmax(result.fidelity.samples.alpha_level) <= 0.8 + 1e-9


def test_release_exit_code_and_determinism(review, report):
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    first = review_release(review, report, curate=True, timestamp=moment)
    assert first.exit_code == 1
    assert "memorised" in first.failed and "fresh" not in first.failed
    # evaluate() itself is seeded (tests/test_report.py); the release built on it must be too,
    # including the seeded re-evaluation of the curated sets
    second = review_release(review, report, curate=True, timestamp=moment)
    assert first.files == second.files
    content = json.loads(first.files["report.json"])
    assert content["verdicts"]["memorised"]["overall"] == "fail"
    assert set(content["curated"]) == {"memorised", "fresh"}
    assert "memorised/audit.csv" in first.files and "memorised/removed.csv" in first.files
    # only a candidate whose decision ships has a curated file (issue 33, item 6)
    for name, decision in first.decisions.items():
        assert (f"{name}/curated.csv" in first.files) == decision.ships, name
    assert "memorised/curated.csv" not in first.files
    assert set(content["reattack"]) == {"fresh"}  # every memorised row was removed
    assert first.verdicts["memorised"]["audit_copies"].verdict == "fail"
