"""The one release pipeline (issue 21): what it computes once, what it reuses, what it refuses.

The dashboard's Run review, the Audit page and the CLI all call
:func:`synthreview.release.pipeline.release_candidate`; these tests pin the pipeline itself on
small hand-made results (the engine is exercised by ``test_dashboard_verdict.py``,
``test_audit_engine.py`` and the browser tests).
"""

from __future__ import annotations

import json
from dataclasses import replace
from unittest.mock import patch

import numpy as np
import pytest

from synthreview.judgement.decision import EXIT_RELEASE_AFTER_CURATION, exit_code
from synthreview.judgement.policy import load_policy
from synthreview.options import ReviewOptions
from synthreview.record.live import LiveReview
from synthreview.record.session import SUMMARY_KEY, ReviewSession
from synthreview.release.audit import Thresholds
from synthreview.release.pipeline import (
    audit_candidate,
    release_candidate,
    release_files,
)
from synthreview.review import CandidateResult, Report
from tests.test_audit import DCR, Privacy
from tests.test_glucose_subjects import _glucose, cohort  # noqa: F401 (fixture)
from tests.test_page_audit import fake_report, open_page, small_review


def test_trace_reviews_are_audited_with_the_trace_rules(cohort):  # noqa: F811
    """The Audit page and the CLI audit a glucose candidate through the same function, so the
    plausibility and memorised-subject rules apply on both (they drifted apart before)."""
    real, holdout, _, memorising = cohort
    values = memorising.values.copy()
    values[0, 10] = 450.0  # outside the sensor range
    glucose = _glucose(real, memorising.__class__.from_array(values, name="bad"), holdout)
    n = len(values)
    privacy = Privacy(DCR(np.ones(n), None, np.zeros(n, bool), np.ones(5)))
    report = Report(
        inputs=[],
        candidates={"bad": CandidateResult(name="bad", privacy=privacy, glucose=glucose)},
        options=ReviewOptions(),
        seed=0,
        sections=("glucose",),
        kind="traces",
    )
    audit = audit_candidate(report, "bad", Thresholds(alpha=None))
    assert audit is not None
    assert {"drop_outside_sensor_range", "drop_memorised_subject"} <= set(audit.audit.columns)
    assert audit.audit["drop_outside_sensor_range"].tolist()[0]
    assert audit.audit["drop_memorised_subject"].to_numpy()[18:].all()
    rules = {p.rule for p in audit.preview()}
    assert {"drop_outside_sensor_range", "drop_memorised_subject", "any"} <= rules
    # a day trace has no quasi-identifiers: that table rule cannot remove a row and has no tile
    assert "drop_qi_unique" not in rules


@pytest.fixture
def small():
    review = small_review()
    report = fake_report(review)
    after = fake_report(review, mia=0.5)
    return review, report, after


def test_release_reuses_the_audit_and_the_curated_evaluation(small):
    review, report, after = small
    policy = load_policy()
    with patch("synthreview.release.pipeline.evaluate_curated", return_value=after) as evaluate:
        first = release_candidate(review, report, "cand", policy=policy, curate_when="always")
        calls = evaluate.call_count
        assert calls == 1 and first.curated is not None
        # same thresholds: nothing is audited or evaluated again, only judged
        again = release_candidate(review, report, "cand", policy=policy, curate_when="always",
                                  reuse=first)  # fmt: skip
        assert evaluate.call_count == calls
        assert again.audit is first.audit and again.curated.report is first.curated.report
        assert again.decision == first.decision
        # other thresholds: a new audit and a new curated evaluation
        other = release_candidate(review, report, "cand", policy=policy, curate_when="always",
                                  thresholds=Thresholds(level=0.05), reuse=first)  # fmt: skip
        assert evaluate.call_count == 2 * calls and other.audit is not first.audit
        # never: no curated version, so a failing candidate is not released after curation
        plain = release_candidate(review, report, "cand", policy=policy, curate_when="never")
        assert plain.curated is None and plain.decision.outcome != "release_after_curation"


def test_the_curated_set_is_evaluated_with_every_section_of_the_review(small):
    review, report, after = small
    report = replace(report, sections=("fidelity", "privacy", "utility"))
    with patch("synthreview.release.pipeline.evaluate_curated", return_value=after) as evaluate:
        release_candidate(review, report, "cand", policy=load_policy(), curate_when="always")
    assert evaluate.call_args.kwargs["sections"] == ("fidelity", "privacy", "utility")
    # given the rules a waiver may leave out, privacy comes last, once the others fail no rule
    with patch("synthreview.release.pipeline.evaluate_curated", return_value=after) as evaluate:
        release_candidate(review, report, "cand", policy=load_policy(), curate_when="always",
                          waived=())  # fmt: skip
    asked = [call.kwargs["sections"] for call in evaluate.call_args_list]
    assert asked == [("fidelity", "utility"), ("privacy",)]


def test_the_curated_set_is_evaluated_with_the_reviews_threads_and_search(small):
    """``--threads 1 --approximate hnsw``: the curated re-evaluation is bounded and searched as
    the submitted review was (it was given neither, so it ran on every core, exactly)."""
    review, report, after = small
    report = replace(report, threads=1, approximate="hnsw")
    with patch("synthreview.release.curation.evaluate", return_value=after) as evaluate:
        release_candidate(review, report, "cand", policy=load_policy(), curate_when="always")
    assert evaluate.call_count >= 1
    for call in evaluate.call_args_list:
        assert (call.kwargs["threads"], call.kwargs["approximate"]) == (1, "hnsw")


def test_record_files_every_candidate_and_states_each_decision(small):
    review, report, after = small
    policy = load_policy()
    with patch("synthreview.release.pipeline.evaluate_curated", return_value=after):
        releases = {n: release_candidate(review, report, n, policy=policy, curate_when="always")
                    for n in report.candidates}  # fmt: skip
    files = release_files(report, releases, policy=policy, review=review)
    content = json.loads(files["report.json"])
    for name, release in releases.items():
        assert content["decisions"][name] == release.decision.to_dict()
        assert content["audit"][name]["thresholds"] == release.audit.thresholds.to_dict()
    with pytest.raises(ValueError, match="missing"):
        release_files(report, {"cand": releases["cand"]}, policy=policy, review=review)


def test_release_after_curation_exits_4():
    assert EXIT_RELEASE_AFTER_CURATION == 4
    assert exit_code({}) == 3


def test_stale_numbers_are_not_decided_and_not_exported(small):
    """An option changed after the run: every decision reads out of date, exports are refused."""
    review, report, after = small
    with (
        patch.object(ReviewSession, "stored_report", return_value=(report, [])),
        patch.object(ReviewSession, "stale_sections", return_value=[]),
        patch.object(ReviewSession, "plan", return_value=[]),
        patch.object(LiveReview, "candidate_report", return_value=report),
        patch("synthreview.release.pipeline.evaluate_curated", return_value=after),
    ):
        at = open_page(review, None, page="pages/overview.py").run()
        assert not at.exception
        summary = next(iter(at.session_state[SUMMARY_KEY].values()))
        assert summary.current and {d.outcome for d in summary.decisions.values()} != {
            "out_of_date"
        }
    with (
        patch.object(ReviewSession, "stored_report", return_value=(report, ["utility"])),
        patch.object(ReviewSession, "changed_options", return_value=["target"]),
        patch.object(ReviewSession, "stale_sections", return_value=["utility"]),
        patch.object(ReviewSession, "plan", return_value=[]),
        patch.object(LiveReview, "candidate_report", return_value=report),
    ):
        options = at.session_state["_options"]
        at.session_state["_options"] = replace(options, target="b")  # changed after the run
        at.run()
        assert not at.exception
        summary = next(iter(at.session_state[SUMMARY_KEY].values()))
        assert not summary.current and summary.changed == ("target",)
        assert {d.outcome for d in summary.decisions.values()} == {"out_of_date"}
        html = " ".join(e.proto.body for e in at.get("html"))
        assert "OUT OF DATE - RE-RUN" in html and "target changed" in html
        at.switch_page("pages/audit.py").run()
        assert not at.exception
        assert not at.download_button
