"""AppTest of the Privacy page on a small demo review."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import app_state
from synthreview import demo
from synthreview.figures.explain import metric_label
from synthreview.figures.text import markdown_text
from tests.page_helpers import chart_text, run_page, run_page_without_data, with_empty_candidate

#: the judgement rules behind the three summary tiles, in the order they are drawn
SUMMARY_RULES = ("mia_auc", "dcr_share", "audit_copies")


@pytest.fixture(scope="module")
def review():
    return demo.tables(seed=0, n_train=300)


def _privacy_page(review) -> AppTest:
    return run_page("pages/privacy.py", review, timeout=240)


@pytest.mark.slow
def test_privacy_page_shows_roc_dcr_tables_and_closest_pairs(review):
    at = _privacy_page(review)
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
    assert len(at.dataframe) >= 5  # attacks, WP29, vulnerable records, l-diversity, pairs
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
    at = _privacy_page(broken)
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
        lights = shown[start + 1 : start + 4]
        assert all(v.endswith("]") and "-background[" in v for v in lights), lights
        tiles[name] = [v.split("[", 1)[1].rstrip("]").lower() for v in lights]
    return tiles


@pytest.mark.slow
def test_summary_verdicts_are_the_judgement_and_copies_fail(review):
    """The tiles show the judged rules (mia_auc, dcr_share, audit_copies); a candidate holding
    verbatim training rows shows the failing copies verdict, never a PASS beside its count."""
    at = _privacy_page(review)
    assert not at.exception
    (summary,) = at.session_state[app_state.SUMMARY_KEY].values()
    tiles = _summary_tiles(at, review.candidates)
    for name, shown in tiles.items():
        judged = [summary.verdicts[name][rule].verdict for rule in SUMMARY_RULES]
        assert shown == judged, (name, shown, judged)
    copies = summary.report.candidates["fresh_with_copies"].privacy.dcr.exact_copies
    assert copies > 0
    assert tiles["fresh_with_copies"][2] == "fail"
    assert tiles["fresh_sample"][2] != "fail"
    # tables: numbers as the registry writes them (no float noise, no None); labels, not ids
    for frame in at.dataframe[:-1]:  # the last is the closest pairs (a Styler, 3 decimals)
        cells = frame.value.to_numpy().ravel().tolist()
        assert not any(isinstance(c, float) for c in cells), frame.value.dtypes
        assert not any(c is None or c == "None" for c in cells)
    attacks = at.dataframe[0].value["attack"]  # the attack table comes first
    assert not {"nn_seeker", "gan_leaks_cal", "nndr"} & set(attacks)


@pytest.mark.slow
def test_closest_pairs_mask_training_rows_unless_asked_and_never_when_presenting(review):
    """A shared screen shows no raw training row: the pair is masked by default (decile
    intervals), raw only once the reviewer ticks the control, and masked again while
    presenting, whatever the control says."""
    at = _privacy_page(review)
    assert not at.exception
    at.selectbox(key="privacy_pairs_candidate").set_value("fresh_with_copies").run()
    pair = at.dataframe[-1].value  # the chosen pair, drawn last
    numeric = [c for c in review.schema.numeric if c in pair.index]
    training = next(c for c in pair.columns if c.startswith("training #"))
    assert numeric and all(pair.loc[c, training].startswith("[") for c in numeric)
    assert at.checkbox(key=app_state.RAW_ROWS_KEY).value is False
    at.checkbox(key=app_state.RAW_ROWS_KEY).check().run()
    raw = at.dataframe[-1].value  # the chosen pair, drawn last
    assert not any(raw.loc[c, training].startswith("[") for c in numeric)
    at.session_state[app_state.PRESENTATION_KEY] = True
    at.run()
    assert at.checkbox(key=app_state.RAW_ROWS_KEY).disabled
    presented = at.dataframe[-1].value  # the chosen pair, drawn last
    assert all(presented.loc[c, training].startswith("[") for c in numeric)
    # the list of pairs shows positions and counts, never a cell value
    listed = at.dataframe[-2].value  # the list of pairs above it
    assert list(listed.columns) == [
        "synthetic row",
        "nearest training row",
        "DCR",
        "exact copy",
        "equal cells",
    ]
