"""AppTest of the Privacy page on a small demo review."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from synthreview import demo
from synthreview.figures.explain import format_metric, metric_help, metric_label
from synthreview.figures.text import WORD_JOINER, markdown_text
from synthreview.io.persons import with_person
from synthreview.io.tables import align
from synthreview.record.live import initial_options
from synthreview.record.session import PRESENTATION_KEY, RAW_ROWS_KEY, SUMMARY_KEY
from tests.conftest import RECORD_ROWS
from tests.page_helpers import (
    chart_text,
    page_after_run,
    run_page,
    run_page_without_data,
    with_empty_candidate,
)
from tests.test_person_level import load_person_table

#: five or more decimals: a number written with float noise (``0.9663333333333334``)
FLOAT_NOISE = re.compile(r"\d\.\d{5,}")
#: the judgement rules behind the three summary tiles, in the order they are drawn
SUMMARY_RULES = ("mia_auc", "dcr_share", "audit_copies")


def _unescaped(cell: object) -> str:
    """A table cell as the reader sees it (no Markdown escapes, no word joiners)."""
    return str(cell).replace("\\", "").replace(WORD_JOINER, "")


@pytest.fixture(scope="module")
def review():
    """The table demo that ``demo_run`` reviewed (equal data): a test that needs only the
    review does not start the session's run."""
    return demo.tables(seed=0, n_train=RECORD_ROWS)


def _privacy_page(demo_run) -> AppTest:
    """The Privacy page after the session's one review of the table demo."""
    return page_after_run("pages/privacy.py", demo_run[1], timeout=240)


@pytest.mark.slow
def test_privacy_page_shows_roc_dcr_tables_and_closest_pairs(review, demo_run):
    at = _privacy_page(demo_run)
    assert not at.exception
    assert [h.value for h in at.header] == ["Privacy"]
    assert len(at.error) == 0
    labels = [m.label for m in at.metric]
    assert labels.count(metric_label("dcr_share")) == len(review.candidates)
    # the DCR caveat once on the page, not once per candidate
    shown = [c.value for c in at.caption] + [m.value for m in at.markdown]
    assert sum("DCR Delusion" in text for text in shown) == 1
    specs = [chart_text(chart) for chart in at.get("plotly_chart")]
    assert sum("chance" in spec for spec in specs) == 2 * len(review.candidates)  # ROC + log view
    assert any("AUC" in spec for spec in specs)
    assert any("holdout → train" in spec for spec in specs)
    # static tables whose cells wrap (they fit 1280 px): attacks per candidate, WP29, most
    # exposed records, disclosure risk, the list of closest pairs; a data grid: the chosen pair
    assert len(at.table) >= 2 * len(review.candidates) + 3
    assert len(at.dataframe) == 1
    at.selectbox(key="privacy_pairs_candidate").set_value(review.candidates[-1]).run()
    assert not at.exception
    column = review.schema.numeric[0]
    at.selectbox(key="privacy_sensitive").set_value(column).run()
    assert not at.exception
    assert at.selectbox(key="privacy_sensitive").value == column
    assert any("ε ≥" in m.value for m in at.markdown)


@pytest.mark.slow
def test_a_failed_candidate_shows_its_error_and_the_rest_renders(review):
    broken, name = with_empty_candidate(review)
    at = run_page("pages/privacy.py", broken, timeout=240)
    assert not at.exception
    assert any(name in e.value for e in at.error)
    dcr = metric_label("dcr_share")
    assert [m.label for m in at.metric].count(dcr) >= len(review.candidates) - 1


def test_privacy_page_without_data_points_to_the_data_page():
    at = run_page_without_data("pages/privacy.py")
    assert not at.exception
    assert any("No data loaded" in w.value for w in at.warning)


def _summary_tiles(at, names) -> dict[str, list[str]]:
    """Each candidate's three summary verdicts as shown (AUC, DCR share, copies), in order."""
    shown = [m.value for m in at.markdown]
    tiles = {}
    for name in names:
        start = shown.index(f"**{markdown_text(name)}**")
        # each light is followed by its rule's reading: the value it judged, line and verdict
        following = shown[start + 1 : start + 7]
        lights = [v for v in following if v.endswith("]") and "-background[" in v]
        assert len(lights) == 3, following
        readings = [v for v in following if v not in lights]
        assert len(readings) == 3 and all("judged" in v for v in readings), readings
        tiles[name] = [v.split("[", 1)[1].rstrip("]").lower() for v in lights]
    return tiles


@pytest.mark.slow
def test_summary_verdicts_are_the_judgement_and_copies_fail(review, demo_run):
    """The tiles show the judged rules (mia_auc, dcr_share, audit_copies); a candidate holding
    verbatim training rows shows the failing copies verdict, never a PASS beside its count."""
    at = _privacy_page(demo_run)
    assert not at.exception
    (summary,) = at.session_state[SUMMARY_KEY].values()
    tiles = _summary_tiles(at, review.candidates)
    for name, shown in tiles.items():
        judged = [summary.verdicts[name][rule].verdict for rule in SUMMARY_RULES]
        assert shown == judged, (name, shown, judged)
    copies = summary.report.candidates["fresh_with_copies"].privacy.dcr.exact_copies
    assert copies > 0
    assert tiles["fresh_with_copies"][2] == "fail"
    assert tiles["fresh_sample"][2] != "fail"
    # tables: numbers as the registry writes them (no float noise, no None); labels, not ids
    frames = [t.value for t in at.table] + [at.dataframe[0].value]  # not the pair (a Styler)
    for frame in frames:
        cells = frame.to_numpy().ravel().tolist()
        assert not any(isinstance(c, float) for c in cells), frame.dtypes
        assert not any(c is None or c in ("None", "nan") for c in cells)
        assert not any(FLOAT_NOISE.search(_unescaped(c)) for c in cells), frame
    # the attack table (after the tiles' copy breakdowns), one row per attack
    auc = markdown_text("AUC (95 % CI)")
    attacks = next(t.value for t in at.table if auc in t.value.columns)
    assert not {"nn_seeker", "gan_leaks_cal", "nndr"} & set(attacks.index)
    # the most exposed records: one column per record, fields as rows, numbers masked as the
    # training column's decile interval (escaped: st.table renders Markdown)
    exposed = [t.value for t in at.table if str([*t.value.columns, ""][0]).startswith("row ")]
    assert len(exposed) == len(review.candidates)  # 5 records: one table per candidate
    for frame in exposed:
        assert len(frame.columns) == 5
        assert list(frame.index[:2]) == [markdown_text("p-value"), "attack"]
        masked = [c for c in map(markdown_text, review.schema.numeric) if c in frame.index]
        assert masked
        for column in masked:
            cells = frame.loc[column]
            assert all(c.startswith("\\[") or c.startswith("\\(") for c in cells), cells


@pytest.mark.slow
def test_closest_pairs_mask_training_rows_unless_asked_and_never_when_presenting(review, demo_run):
    """A shared screen shows no raw training row: the pair is masked by default (decile
    intervals), raw only once the reviewer ticks the control, and masked again while
    presenting, whatever the control says."""
    at = _privacy_page(demo_run)
    assert not at.exception
    at.selectbox(key="privacy_pairs_candidate").set_value("fresh_with_copies").run()
    pair = at.dataframe[-1].value  # the chosen pair, drawn last
    numeric = [c for c in review.schema.numeric if c in pair.index]
    training = next(c for c in pair.columns if c.startswith("training #"))
    assert numeric and all(pair.loc[c, training].startswith("[") for c in numeric)
    assert at.checkbox(key=RAW_ROWS_KEY).value is False
    at.checkbox(key=RAW_ROWS_KEY).check().run()
    raw = at.dataframe[-1].value  # the chosen pair, drawn last
    assert not any(raw.loc[c, training].startswith("[") for c in numeric)
    at.session_state[PRESENTATION_KEY] = True
    at.run()
    assert at.checkbox(key=RAW_ROWS_KEY).disabled
    presented = at.dataframe[-1].value  # the chosen pair, drawn last
    assert all(presented.loc[c, training].startswith("[") for c in numeric)
    # the list of pairs shows positions and counts, never a cell value
    listed = at.table[-1].value  # the list of pairs above the chosen pair, a static table
    assert listed.index.name == "synthetic row"
    assert list(listed.columns) == ["nearest training row", "DCR", "exact copy", "equal cells"]


# --- a claimed (ε, δ) guarantee and membership by person -----------------------------------------

CLAIM = "Claimed privacy guarantee"
PERSONS = "Membership by person"


def _verdict(at, rule: str, name: str) -> str:
    """The judgement's verdict of ``rule`` for candidate ``name`` (the stored summary's)."""
    (summary,) = at.session_state[SUMMARY_KEY].values()
    return summary.verdicts[name][rule].verdict


@pytest.mark.slow
def test_a_claimed_guarantee_shows_claim_certified_bound_and_phantom_share():
    """Two candidates of 200 Adult rows (a near copy, a fresh sample), no embedding: each shows
    the claim as entered, the ε the attacks certify, the phantom share (registry label and
    tooltip) and the judgement's dp_claim verdict; no person column, no person section."""
    full = demo.tables(seed=0, n_train=200)
    review = replace(full, synthetic={n: full.synthetic[n] for n in ("noisy_copy", "fresh_sample")})
    options = replace(initial_options(review), embedding="none",
                      claimed_epsilon=1.0, claimed_delta=1e-5)  # fmt: skip
    at = run_page("pages/privacy.py", review, options=options, timeout=240)
    assert not at.exception and not at.error
    headings = [h.value for h in at.subheader]
    assert CLAIM in headings and PERSONS not in headings
    assert at.number_input(key="privacy_claimed_epsilon").value == 1.0
    (summary,) = at.session_state[SUMMARY_KEY].values()
    tiles = [(m.label, m.value, m.help) for m in at.metric]
    shown = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for name in review.candidates:
        claim = summary.report.candidates[name].privacy.dp_claim
        assert claim is not None and claim.claimed_delta == 1e-5
        assert ("claimed guarantee", "ε = 1, δ = 1e-05") in [t[:2] for t in tiles]
        assert ("ε certified by the attacks", f"ε ≥ {claim.certified_epsilon:.2f}") in [
            t[:2] for t in tiles
        ]
        phantom = format_metric("phantom_share", claim.phantom_share)
        assert phantom != "None"
        assert (metric_label("phantom_share"), phantom, metric_help("phantom_share")) in tiles
        verdict = _verdict(at, "dp_claim", name)
        assert verdict in ("pass", "fail")
        assert f":{'green' if verdict == 'pass' else 'red'}-background[{verdict.upper()}]" in shown
    assert sum(t[0] == "claimed guarantee" for t in tiles) == len(review.candidates)
    assert any("Amin et al., arXiv 2606.16952" in text for text in shown)
    assert sum(text.startswith("Operating point of the ") for text in shown) == 2
    # the near copy contradicts ε = 1 (its verdict reason says so); a fresh sample does not
    assert _verdict(at, "dp_claim", "noisy_copy") == "fail"
    assert _verdict(at, "dp_claim", "fresh_sample") == "pass"
    assert any("the evidence contradicts the claim" in text for text in shown)


def test_the_claim_is_entered_on_the_page_and_delta_needs_an_epsilon(review):
    """The expander sets the review's claimed (ε, δ); δ is disabled until an ε is entered (the
    options refuse a δ alone). Nothing is computed: the page stops before the results."""
    at = run_page("pages/privacy.py", review, run_review=False)
    assert not at.exception
    epsilon, delta = (at.number_input(key=k) for k in ("privacy_claimed_epsilon",
                                                       "privacy_claimed_delta"))  # fmt: skip
    assert epsilon.value is None and delta.disabled
    assert at.session_state["_options"].claimed_epsilon is None
    epsilon.set_value(2.0).run()
    at.number_input(key="privacy_claimed_delta").set_value(1e-6).run()
    options = at.session_state["_options"]
    assert (options.claimed_epsilon, options.claimed_delta) == (2.0, 1e-6)
    assert not at.exception and not at.number_input(key="privacy_claimed_delta").disabled


@pytest.mark.slow
def test_membership_by_person_shows_person_auc_and_tpr_beside_the_row_level():
    """120 people of the coded hourly CGM table (tests/test_person_level.py), their first three
    hours each (three attack rounds keep the review fast): training, holdout and fresh people,
    and a candidate of the fresh people plus 6 copied training people. The person section shows
    each attack's person-level AUC and TPR at 1 % FPR as the engine computed them; no claim was
    made, so no claim section."""
    table = load_person_table().groupby("person").head(3).reset_index(drop=True)
    people = np.array(sorted(table["person"].unique()))
    np.random.default_rng(0).shuffle(people)
    train, hold, fresh = people[:48], people[48:84], people[84:120]

    def rows(who):
        return table[table["person"].isin(who)].reset_index(drop=True)

    copied = pd.concat([rows(fresh), rows(train[:6])], ignore_index=True)
    review = with_person(align(rows(train), {"copy6": copied}, holdout=rows(hold)), "person")
    options = replace(initial_options(review), embedding="none", person="person")
    at = run_page("pages/privacy.py", review, options=options, timeout=240)
    assert not at.exception and not at.error
    headings = [h.value for h in at.subheader]
    assert PERSONS in headings and CLAIM not in headings
    (summary,) = at.session_state[SUMMARY_KEY].values()
    tables = [t.value for t in at.table if "person AUC" in t.value.columns]
    assert len(tables) == len(review.candidates)  # one per candidate, in review order
    for name, shown in zip(review.candidates, tables, strict=True):
        person = summary.report.candidates[name].privacy.person_level
        ran = [a for a in person.attacks if a.error is None]
        assert ran and len(shown) == len(person.attacks)
        assert list(shown["person AUC"]) == [
            format_metric("person_mia_auc", a.auc) for a in person.attacks
        ]
        assert list(shown[markdown_text("person TPR @1% FPR")]) == [
            format_metric("person_mia_tpr_at_fpr_1pct", a.tpr_at_fpr_1pct) for a in person.attacks
        ]
        cells = shown.to_numpy().ravel().tolist()
        assert not any(c is None or c == "None" or isinstance(c, float) for c in cells)
    text = " ".join(m.value for m in at.markdown)
    assert "rows grouped by `person`" in text and "48 training and 36 holdout people" in text
