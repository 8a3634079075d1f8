"""The dashboard's session without Streamlit: a ``ReviewSession`` over a plain dict.

What ``app_state`` used to hold (the stored steps, what is stale, the judged summary, the run's
estimates) lives in ``synthreview.record``; these tests drive it directly, as Run review does.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from synthreview import demo
from synthreview.errors import ConfigError
from synthreview.record.live import needed_sections
from synthreview.record.opened_state import MEETING_DONE_KEY, MEETING_FIELDS, meeting_field_key
from synthreview.record.progress import RunProgress, format_seconds
from synthreview.record.session import OPTIONS_KEY, ReviewSession
from synthreview.record.signoff_state import APPROVALS_KEY, WAIVERS_KEY
from synthreview.record.store import OPEN_ENV


@pytest.fixture(scope="module")
def computed():
    """A small table review, every step run and released as Run review runs them."""
    state: dict = {}
    session = ReviewSession(state)
    review = demo.tables(seed=0, n_train=150, n_holdout=150)
    session.set_review(review)
    options = replace(session.get_options(), embedding="none", n_bootstrap=10, max_attack=60)
    state[OPTIONS_KEY] = options
    steps = session.plan(options)
    planned = list(steps)
    live = session.live()
    for name, section in steps:
        live.run_step(name, section, seed=session.seed(), options=options)
    live.mark_complete(seed=session.seed(), options=options)
    before_release = session.review_summary()
    released = session.release_plan(options)
    report = before_release.report
    terms = session.release_terms(released, options)
    for name in released:
        live.release(report, name, terms[name])
    return session, review, planned, before_release, released


def test_a_run_stores_every_step_once_and_then_judges(computed):
    session, review, planned, before_release, released = computed
    sections = needed_sections(review)
    # candidate by candidate, so the first candidate is judged before the others run
    assert planned == [(n, s) for n in review.candidates for s in sections]
    assert session.plan(session.get_options()) == []  # nothing left to compute
    assert session.status() == dict.fromkeys(sections, "current")
    # the numbers without the audit decide nothing: every decision waits for the release step
    assert released == review.candidates
    assert {d.outcome for d in before_release.decisions.values()} == {"out_of_date"}
    summary = session.review_summary()
    assert summary.current and set(summary.decisions) == set(review.candidates)
    assert session.review_summary() is summary  # built once per result
    assert session.release_plan(session.get_options()) == []
    assert session.record_refusal() is None
    files = session.record_builder()()
    assert {"report.json", "report.html", "manifest.json"} <= set(files)


def test_a_changed_option_makes_its_section_stale_and_the_decisions_wait(computed):
    session, review, *_ = computed
    options = session.get_options()
    session.set_options(replace(options, target="sex"))
    try:
        assert session.stale_sections() == ["utility"]
        assert session.changed_options("utility") == ["target"]
        assert session.status()["utility"] == "stale"
        report, stale = session.stored_report(needed_sections(review))
        assert stale == ["utility"] and report is not None  # the previous run's numbers
        summary = session.review_summary()
        assert not summary.current and summary.changed == ("target",)
        assert {d.outcome for d in summary.decisions.values()} == {"out_of_date"}
        assert "out of date" in session.record_refusal()
    finally:
        session.set_options(options)
    assert session.review_summary().current


def test_run_progress_estimates_from_the_sessions_timings():
    timings = {"fidelity": [2.0]}
    progress = RunProgress([("a", "fidelity"), ("b", "fidelity")], timings)
    assert progress.remaining() == pytest.approx(4.0)
    progress.start(("a", "fidelity"))
    progress.finish(("a", "fidelity"), 6.0, None)
    assert timings["fidelity"] == [2.0, 6.0]  # the session's timings learn every step
    assert progress.remaining() == pytest.approx(4.0)  # one step left, at the mean of 2 and 6
    frame = progress.frame()
    assert list(frame["Fidelity"]) == ["6 s", "waiting"]
    assert "Decision" not in frame  # none reached yet
    progress.decide("a", "RELEASE (pass)")
    frame = progress.frame()
    # the decision beside the name, where the run panel shows it without scrolling sideways
    assert list(frame.columns) == ["candidate", "Decision", "Fidelity"]
    assert list(frame["Decision"]) == ["RELEASE (pass)", ""]
    fraction, sentence = progress.line()
    assert fraction == pytest.approx(0.5) and "1 of 2 steps done" in sentence
    assert format_seconds(185) == "3 min 05 s" and format_seconds(44.6) == "45 s"


def test_the_meeting_countersigns_only_an_open_record_with_a_key():
    state: dict = {}
    with pytest.raises(ConfigError, match="open a record and load the meeting's private key"):
        ReviewSession(state).countersign_meeting(
            "fresh", 0, reviewers="Ann Lee: chair", decision="release", reason=""
        )
    assert MEETING_DONE_KEY not in state  # nothing was signed, nothing is said


def test_what_the_meeting_did_is_said_once_and_blanks_only_that_candidate():
    fields = {meeting_field_key(f, slot): "typed" for f in MEETING_FIELDS for slot in (0, 1)}
    state: dict = {**fields, MEETING_DONE_KEY: (1, "Countersigned fresh; registered.")}
    session = ReviewSession(state)
    assert session.meeting_done(0) is None
    assert session.meeting_done(1) == "Countersigned fresh; registered."
    assert session.meeting_done(1) is None  # said once
    assert set(state) == {meeting_field_key(f, 0) for f in MEETING_FIELDS}
    with pytest.raises(ValueError, match="field must be one of"):
        meeting_field_key("comment", 0)


def test_a_show_record_interrupted_while_opening_is_opened_on_the_next_run(
    demo_record_folder, monkeypatch
):
    """``synthreview show``: a click while the record is still being read stops the script
    mid-open (Streamlit's interrupt, here an exception); the next run opens it instead of
    counting the session as tried and falling back to the demo."""
    record, folder = demo_record_folder
    monkeypatch.setenv(OPEN_ENV, str(folder))
    session = ReviewSession({})
    real_open = ReviewSession.open_record

    class Interrupted(Exception):  # stands for Streamlit's StopException / RerunException
        pass

    def interrupted(self, *args, **kwargs):
        raise Interrupted

    monkeypatch.setattr(ReviewSession, "open_record", interrupted)
    with pytest.raises(Interrupted):
        session.open_from_environment()
    assert session.opened_record() is None
    monkeypatch.setattr(ReviewSession, "open_record", real_open)
    session.open_from_environment()  # the next script run
    assert session.opened_record() is not None
    assert session.opened_record().decisions.keys() == record.decisions.keys()
    assert not session.demo_autoload_pending()


def test_waiver_requests_and_approvals_go_with_the_review_they_were_made_for():
    """A request names a rule, not a candidate: kept across a new load it would be filed, as
    requested, for every candidate of the next review, which no one asked for."""
    state: dict = {}
    session = ReviewSession(state)
    session.set_review(demo.tables(seed=0, n_train=40, n_holdout=40))
    state[WAIVERS_KEY] = [("k_marginal", "a known shortfall", "2026-11-28T10:00:00+00:00")]
    state[APPROVALS_KEY] = []  # approvals of the first review (verified ones in test_waivers)
    assert session.session_waivers()  # requested for the loaded review's candidates
    session.set_review(demo.tables(seed=1, n_train=40, n_holdout=40))
    assert session.session_waivers() == ()
    assert WAIVERS_KEY not in state and APPROVALS_KEY not in state


def test_the_release_terms_read_the_sessions_waivers_once_for_every_candidate(monkeypatch):
    """Each read of the session's waivers checks every approval: the terms of a review's
    candidates read them once, not once per candidate."""
    state: dict = {}
    session = ReviewSession(state)
    review = demo.tables(seed=0, n_train=40, n_holdout=40)
    session.set_review(review)
    state[WAIVERS_KEY] = [("k_marginal", "a known shortfall", "2026-11-28T10:00:00+00:00")]
    reads = []
    original = ReviewSession.session_waivers
    monkeypatch.setattr(
        ReviewSession, "session_waivers", lambda self: reads.append(1) or original(self)
    )
    assert len(review.candidates) > 1
    terms = session.release_terms(review.candidates, session.get_options())
    assert len(reads) == 1
    assert list(terms) == review.candidates
    assert {t.waived for t in terms.values()} == {frozenset({"k_marginal"})}
    reads.clear()
    assert session.curation_errors() == {}  # nothing released yet
    assert len(reads) == 1
