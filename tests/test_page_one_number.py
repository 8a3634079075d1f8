"""One number per claim on the pages (issue 38): the Overview, the Privacy tiles and the Audit page
state the value each rule judged and the same copy counts, from the judgement's record and
``release.audit.copy_counts``. One review of the small table demo, three pages read."""

from __future__ import annotations

import pytest

from synthreview.figures.explain import headline_readings, rule_reading
from synthreview.figures.text import markdown_text
from synthreview.record.session import SUMMARY_KEY
from tests.page_helpers import page_after_run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pages(demo_run):
    """The Overview, Privacy and Audit pages of the session's one review of the table demo,
    and the run's summary."""
    at = page_after_run("pages/overview.py", demo_run[1], timeout=600)
    assert not at.exception, at.exception
    stored = at.session_state[SUMMARY_KEY]
    (summary,) = stored.values()
    overview = _texts(at), [t.value for t in at.table]
    at.switch_page("pages/privacy.py").run()
    assert not at.exception, at.exception
    privacy = _texts(at), list(at.metric)
    at.switch_page("pages/audit.py").run()
    assert not at.exception, at.exception
    audit = _texts(at), at.selectbox(key="audit_candidate").value
    return summary, overview, privacy, audit


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [t.value for t in at.text]
    return "\n".join(parts)


def test_overview_key_numbers_carry_the_value_each_rule_judged(pages):
    summary, (texts, tables), _, _ = pages
    cells = {str(c) for table in tables for c in table.to_numpy().ravel()}
    judged = 0
    for name, verdicts in summary.verdicts.items():
        for key, reading in headline_readings(verdicts).items():
            # the key number is the verdict record, written once (figures.explain.rule_reading)
            shown = markdown_text(reading.short)
            assert any(c == shown or c.startswith(f"{shown} (note") for c in cells), (name, key)
            judged += bool(reading.judged)
            if reading.why:  # a point beyond the line beside a PASS carries its sentence
                assert markdown_text(reading.why) in texts
    assert judged  # the demo's membership rules judge their bounds
    # the scorecard states the same cell for the same rule
    mia = {rule_reading(v["mia_auc"]).short for v in summary.verdicts.values()}
    assert {markdown_text(s) for s in mia} <= cells


def test_every_page_counts_copies_one_way(pages):
    summary, (overview, _), (privacy, tiles), (audit, chosen) = pages
    assert summary.releases
    for name, release in summary.releases.items():
        counts = release.audit.counts
        sentence = markdown_text(counts.sentence())
        assert f"**{markdown_text(name)}**: {sentence}" in overview
        # the Privacy tile shows the count its verdict judges, and the verdict's reason says so
        reading = rule_reading(release.verdicts["audit_copies"])
        assert markdown_text(reading.text) in privacy
        assert f"{counts.flagged_as_copies} of {counts.n_rows} rows flagged" in (
            release.verdicts["audit_copies"].reason
        )
        if name == chosen:
            assert sentence in audit
    flagged = [m.value for m in tiles if m.label == "rows flagged as copies"]
    assert flagged == [f"{r.audit.counts.flagged_as_copies:,}" for r in summary.releases.values()]
