"""The dashboard evaluates a curated set only where curation can change the outcome (issue 39
item 4), told the waivers requested so far, as the CLI is.

Run review passes the requested waivers to the one release pipeline (``waived=``): a candidate
failing a rule that removing its flagged rows provably cannot fix is cut, not evaluated again.
The requested rules are part of the release's terms (``record.live.ReleaseTerms``), so a
waiver requested later makes the release that such a rule shortened out of date, and the next
run computes it again; a release no waiver could change is kept.
"""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview import demo
from synthreview.judgement.decision import CANNOT_FIX
from synthreview.judgement.policy import load_policy
from synthreview.record.live import LiveReview, ReleaseTerms, StepResult, initial_options
from synthreview.record.session import LIVE_KEY, SUMMARY_KEY, TIMINGS_KEY, ReviewSession
from synthreview.record.signoff_state import SIGNING_KEY
from synthreview.release import pipeline
from synthreview.release.audit import Thresholds
from synthreview.release.pipeline import release_candidate
from tests.page_helpers import run_page

REASON = "the marginals are not what this release is for"
REQUEST = "FormSubmitter:audit_waiver_form-Request the waiver"


class _Spy:
    """``evaluate_curated`` as it is, recording the candidate each call evaluates."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.original = pipeline.evaluate_curated

    def __call__(self, review, curations, **kwargs):
        self.names += list(curations)
        return self.original(review, curations, **kwargs)


def _summary(at):
    (only,) = at.session_state[SUMMARY_KEY].values()
    return only


@pytest.fixture(scope="module")
def review():
    """The demo's mode-collapsed candidate (fails k_marginal far beyond what removing its
    flagged rows can lift) and the one with planted copies (curation fixes it)."""
    full = demo.tables(seed=0, n_train=800)
    names = ("mode_collapse", "fresh_with_copies")
    return replace(full, synthetic={n: full.synthetic[n] for n in names})


def test_a_release_is_kept_under_more_waivers_only_where_none_could_change_it(review):
    live = LiveReview(review)
    plain = ReleaseTerms(seed=0, options=initial_options(review), policy=load_policy())
    asked = replace(plain, waived={"k_marginal"})
    assert replace(plain, waived=["b", "a"]) == replace(plain, waived=frozenset("ab"))

    def store(name, terms, curated):
        step = StepResult(SimpleNamespace(curated=curated), None, 0.0)
        live.releases[live.release_key(name, terms)] = step
        return step

    whole = SimpleNamespace(bounds=(), skipped=())
    cut = SimpleNamespace(bounds=("a bound",), skipped=())
    partly = SimpleNamespace(bounds=(), skipped=("privacy",))
    for name, curated in (("passes", None), ("whole", whole), ("cut", cut), ("partly", partly)):
        step = store(name, plain, curated)
        assert live.stored_release(name, plain) is step
        # not curated, or evaluated whole: a waiver changes nothing the pipeline computed
        kept = curated is None or curated is whole
        assert live.stored_release(name, asked) is (step if kept else None), name
    # computed under more waivers than now: a rule it let go may decide now
    store("later", asked, whole)
    assert live.stored_release("later", plain) is None
    # any other term differs: never
    assert live.stored_release("whole", replace(asked, curate_when="always")) is None
    for other in (
        replace(asked, seed=1),
        replace(asked, thresholds=Thresholds(mode="strict")),
        replace(asked, policy=load_policy().for_access("secure")),
        replace(asked, options=replace(asked.options, n_bootstrap=7)),
    ):
        assert live.stored_release("whole", other) is None, other
    assert live.stored_release("another", asked) is None  # nor another candidate's
    failed = StepResult(None, "an error", 0.0)
    live.releases[live.release_key("failed", plain)] = failed
    assert live.stored_release("failed", asked) is None  # an error is computed again


@pytest.mark.slow  # a whole Run review, twice
def test_a_curated_set_is_evaluated_only_where_the_requested_waivers_let_it_decide(
    review, monkeypatch
):
    options = replace(initial_options(review), embedding="none", n_bootstrap=10, max_attack=60)
    spy = _Spy()
    monkeypatch.setattr(pipeline, "evaluate_curated", spy)
    at = run_page("pages/overview.py", review, options=options, timeout=600)
    first = _summary(at)
    collapse, copies = first.releases["mode_collapse"], first.releases["fresh_with_copies"]
    # no waiver requested: the bound decides, the curated set is cut but never evaluated
    assert collapse.curated is not None and collapse.curated.report is None
    assert [b.rule for b in collapse.curated.bounds] == ["k_marginal"]
    assert "mode_collapse" not in spy.names and "fresh_with_copies" in spy.names
    # its moment of work is not timed as a curated evaluation (the estimates' base)
    assert len(at.session_state[TIMINGS_KEY]["release"]) == 1
    decision = first.decisions["mode_collapse"]
    assert decision.outcome == "do_not_release" and f"{CANNOT_FIX}: k-marginal" in decision.reason
    assert any(CANNOT_FIX in h.proto.body for h in at.get("html"))  # on the Overview
    # curation fixes the copies: evaluated whole, which no waiver can change
    assert copies.curated is not None and copies.curated.report is not None
    assert not (copies.curated.bounds or copies.curated.skipped)

    # the full computation (waivers unknown: every section evaluated) decides the same
    policy = load_policy().for_access(None)
    full = release_candidate(review, first.report, "mode_collapse", policy=policy)
    assert full.verdicts == collapse.verdicts and full.decision.outcome == decision.outcome
    bound = collapse.curated.bounds[0]
    assert full.curated.verdicts["k_marginal"].value >= bound.least > bound.fail_at

    # a waiver of that rule requested later: the bound may no longer decide
    at.session_state[SIGNING_KEY] = Ed25519PrivateKey.generate()  # as the Downloads upload does
    at.switch_page("pages/audit.py").run()
    at.selectbox(key="audit_waiver_rule").select("k_marginal")
    at.text_area(key="audit_waiver_reason").input(REASON)
    at.button(key=REQUEST).click().run()
    assert not at.exception, at.exception
    at.switch_page("pages/overview.py").run()
    stale = _summary(at)
    assert not stale.current and "requested waivers" in stale.changed[0]
    assert {d.outcome for d in stale.decisions.values()} == {"out_of_date"}
    live: LiveReview = at.session_state[LIVE_KEY]
    kept = ReleaseTerms(seed=first.report.seed, options=options, policy=policy,
                        waived={"k_marginal"})  # fmt: skip
    assert live.stored_release("fresh_with_copies", kept).value is copies  # no waiver changes it
    assert live.stored_release("mode_collapse", kept) is None

    spy.names.clear()
    at.button(key="run_review").click().run()
    assert not at.exception, at.exception
    again = _summary(at)
    assert again.current and spy.names and set(spy.names) == {"mode_collapse"}
    assert again.releases["fresh_with_copies"] is copies
    redone = again.releases["mode_collapse"].curated
    assert not redone.bounds and redone.report is not None  # evaluated now
    # requested, not approved: the decision is the full computation's, reason and all
    assert again.decisions["mode_collapse"] == full.decision
    assert again.decisions["fresh_with_copies"] == first.decisions["fresh_with_copies"]

    # the record files what the screen shows, the requested waiver with it
    at.switch_page("pages/audit.py").run()
    assert not at.exception, at.exception
    report = json.loads(_record(at)["report.json"])
    assert {n: d["reason"] for n, d in report["decisions"].items()} == {
        n: d.reason for n, d in again.decisions.items()
    }
    assert {w["rule"] for w in report["waivers"]} == {"k_marginal"}
    assert {w["status"] for w in report["waivers"]} == {"requested"}


def _record(at) -> dict[str, bytes]:
    """Every file of the record the Audit page's downloads build (on a copy of the state)."""
    return ReviewSession(dict(at.session_state.to_dict())).record_builder()()
