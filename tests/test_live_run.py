"""Decisions on screen as they are reached (issue 39, item 1), without Streamlit.

A run is planned whole before its first step (``LiveReview.run_plan``: candidate by candidate
its sections, its audit and judgement as submitted, then its curation), so the first candidate
is judged before the second one's sections run, and the time-left estimate never rises by more
than the uncertainty it states. The decisions drawn during the run are the Overview's.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from unittest.mock import patch

import numpy as np
import pytest

from synthreview import demo
from synthreview.judgement.decision import CANNOT_FIX
from synthreview.record import progress as progress_module
from synthreview.record.live import RELEASE_STEPS, initial_options, needed_sections
from synthreview.record.progress import PRIOR_SECONDS, SECTION_LABELS, RunProgress, decision_line
from synthreview.record.session import OPTIONS_KEY, RUN_LOG_KEY, SUMMARY_KEY, ReviewSession
from tests.page_helpers import run_page


def _session() -> tuple[ReviewSession, object]:
    state: dict = {}
    session = ReviewSession(state)
    session.set_review(demo.tables(seed=0, n_train=150, n_holdout=150))
    options = replace(session.get_options(), embedding="none", n_bootstrap=10, max_attack=60)
    state[OPTIONS_KEY] = options
    return session, options


@pytest.fixture(scope="module")
def live_run():
    """A run as ``app_state.execute_pending_run`` drives it, with what it drew after each step."""
    session, options = _session()
    live, seed = session.live(), session.seed()
    names = live.review.candidates
    terms = session.release_terms(names, options)
    steps = live.run_plan(session.plan(options), seed=seed, options=options, releases=names)
    drawn: list[tuple[int, str, object, str | None]] = []
    results = {}
    for i, step in enumerate(steps):
        results[step] = live.compute(step, seed=seed, options=options, terms=terms)
        name, section = step
        if section in RELEASE_STEPS:
            so_far = live.decision_so_far(name, terms[name])
            assert so_far is not None, step
            drawn.append((i, name, *so_far))
    live.mark_complete(seed=seed, options=options)
    return session, options, steps, drawn, results


@pytest.mark.slow  # a whole review
def test_the_plan_holds_every_step_candidate_by_candidate(live_run):
    session, _, steps, _, _ = live_run
    review = session.live().review
    sections = needed_sections(review)
    expected = [("all candidates", "prepare")] if ("all candidates", "prepare") in steps else []
    for name in review.candidates:
        expected += [(name, s) for s in sections] + [(name, s) for s in RELEASE_STEPS]
    assert steps == expected
    assert session.plan(session.get_options()) == []  # every section stored
    assert session.release_plan(session.get_options()) == []  # every release stored


@pytest.mark.slow  # a whole review
def test_the_first_decision_is_drawn_before_the_second_candidate_runs(live_run):
    session, _, steps, drawn, _ = live_run
    first, second = session.live().review.candidates[:2]
    at, name, decision, pending = drawn[0]
    assert name == first and pending == "curation"
    assert steps[at] == (first, "submitted")
    assert all(s[0] != second for s in steps[:at])  # nothing of the second candidate ran yet
    line = decision_line(decision, pending=pending)
    assert line.endswith("its curation still running)")
    assert line.startswith("NOT DECIDED YET")  # never a bare RELEASE before curation


@pytest.mark.slow  # a whole review
def test_the_decisions_drawn_are_the_overviews(live_run):
    session, _, _, drawn, _ = live_run
    summary = session.review_summary()
    assert summary.current
    submitted = {n: (d, p) for _, n, d, p in drawn if p == "curation"}
    final = {n: (d, p) for _, n, d, p in drawn if p != "curation"}
    assert set(submitted) == set(final) == set(summary.decisions)
    outcomes = set()
    for name, decision in summary.decisions.items():
        as_submitted, _ = submitted[name]
        assert as_submitted.verdict == decision.verdict  # the same verdict as submitted
        assert final[name] == (decision, None)  # the same decision, reason and all
        outcomes.add(decision.outcome)
    # the demo has candidates of both kinds: a curation that ran and one that was not needed
    assert "release_after_curation" in outcomes or "do_not_release" in outcomes
    assert any(d.curated_verdict is not None for d in summary.decisions.values())


@pytest.mark.slow  # a whole review
def test_a_release_that_is_not_needed_is_marked_skipped(live_run):
    session, _, _, _, results = live_run
    summary = session.review_summary()
    for name, release in summary.releases.items():
        step = results[(name, "release")]
        curated = release.curated
        # not curated, or cut but not evaluated (a bound decided): no curated evaluation ran
        assert (step.skipped is not None) == (curated is None or bool(curated.bounds)), name
        if curated is not None and curated.bounds:
            assert step.skipped.startswith(f"{CANNOT_FIX}: "), name


@pytest.mark.slow  # a whole review
def test_the_order_changes_no_stored_result(live_run):
    """The earlier run: every section section by section, then each release from the full
    report. The same numbers, verdicts, curated versions and decisions."""
    session, options, *_ = live_run
    other, _ = _session()
    live, seed = other.live(), other.seed()
    sections = needed_sections(live.review)
    steps = [(n, s) for s in sections for n in live.review.candidates]
    if live.needs_context(steps, seed=seed, options=options):
        live.prepare(seed=seed, options=options)
    for name, section in steps:
        live.run_step(name, section, seed=seed, options=options)
    live.mark_complete(seed=seed, options=options)
    report = other.review_summary().report
    plan = other.release_plan(options)
    terms = other.release_terms(plan, options)
    for name in plan:
        live.release(report, name, terms[name])
    before, after = other.review_summary(), session.review_summary()
    assert after.content == before.content
    assert after.verdicts == before.verdicts
    assert after.curated == before.curated
    assert after.decisions == before.decisions


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("seed", range(5))
def test_the_estimate_never_rises_by_more_than_its_stated_spread(monkeypatch, seed):
    """A simulated demo run: every step lasts half to twice its prior, most curations are not
    needed; read the estimate every half second and at each step's start and end."""
    clock = _Clock()
    monkeypatch.setattr(progress_module.time, "perf_counter", clock)
    rng = np.random.default_rng(seed)
    names = [f"c{i}" for i in range(6)]
    sections = ("fidelity", "privacy", "utility")
    steps = [("all candidates", "prepare")] + [
        (n, s) for n in names for s in (*sections, *RELEASE_STEPS)
    ]
    run = RunProgress(steps, {})
    assert [s for s in run.steps if s[1] == "release"] == [(n, "release") for n in names]
    readings = [(run.remaining(), run.spread())]
    upper = run.remaining() + run.spread()
    assert f"at most {progress_module.format_seconds(upper)}" in run.line()[1]  # as stated
    for step in steps:
        seconds = PRIOR_SECONDS[step[1]] * rng.uniform(0.5, 2.0)
        skipped = step[1] == "release" and rng.random() < 0.5
        if skipped:
            seconds = 0.01
        run.start(step)
        readings.append((run.remaining(), run.spread()))
        started = clock.now
        while clock.now - started + 0.5 < seconds:
            clock.now += 0.5
            run.report((clock.now - started) / seconds)  # progress proportional to its time
            readings.append((run.remaining(), run.spread()))
        clock.now = started + seconds
        run.finish(step, seconds, None, skipped="no curated version" if skipped else None)
        readings.append((run.remaining(), run.spread()))
    assert readings[-1][0] == 0.0
    rises = [(after - before, spread) for (before, spread), (after, _) in pairwise(readings)]
    assert all(rise <= spread + 1e-9 for rise, spread in rises), max(rises)
    assert all("skipped" in v or v.endswith("s") for v in run.done.values())


@pytest.mark.slow  # a whole Run review in the dashboard
def test_the_run_panel_draws_the_first_decision_while_the_others_wait():
    review = demo.tables(seed=0, n_train=150, n_holdout=150)
    options = replace(initial_options(review), embedding="none", n_bootstrap=10, max_attack=60)
    drawn = []
    original = RunProgress.frame

    def frame(self):
        table = original(self)
        drawn.append(table.copy())
        return table

    with patch.object(RunProgress, "frame", frame):
        at = run_page("pages/overview.py", review, options=options)
    assert not at.exception, at.exception
    first, *others = review.candidates
    tables = [t.set_index("candidate") for t in drawn if "Decision" in t]
    table = next(t for t in tables if t.loc[first, "Decision"])
    assert table.loc[first, "Decision"].endswith("its curation still running)")
    columns = [SECTION_LABELS[s] for s in (*needed_sections(review), *RELEASE_STEPS)]
    for name in others:  # nothing of the other candidates has run yet
        assert table.loc[name, "Decision"] == ""
        assert set(table.loc[name, columns]) == {"waiting"}
    decided = at.session_state[RUN_LOG_KEY]
    assert list(decided) == list(review.candidates)  # judged in turn, the first first
    assert list(decided.values()) == sorted(decided.values())
    (summary,) = at.session_state[SUMMARY_KEY].values()
    last = drawn[-1].set_index("candidate")["Decision"]
    for name, decision in summary.decisions.items():  # the run's last lines: the Overview's
        assert last[name] == decision_line(decision, pending=None)


def test_the_submitted_step_tells_its_progress_the_audit_stages():
    """An every-row audit (a review estimated on samples) runs in the step that judges a
    candidate as submitted: its search stages reach the run panel's progress, as the CLI's."""
    session, options = _session()
    live = session.live()
    name = live.review.candidates[0]
    terms = session.release_terms([name], options)
    told: list[tuple[float, str]] = []

    def release_candidate(*args, progress=None, **kwargs):
        progress(0.0, f"every-row audit of {name}: encoding")
        return "judged as submitted"

    with (
        patch("synthreview.record.live.release_candidate", release_candidate),
        patch.object(type(live), "candidate_report", lambda *a, **k: object()),
    ):
        step = live.compute((name, "submitted"), seed=session.seed(), options=options,
                            terms=terms, progress=lambda f, m: told.append((f, m)))  # fmt: skip
    assert step.error is None and step.value == "judged as submitted"
    assert told == [(0.0, f"every-row audit of {name}: encoding")]
