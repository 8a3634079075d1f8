"""Every evidence page renders an opened review record: its numbers, nothing recomputed.

The record is opened as ``synthreview show`` opens it (``SYNTHREVIEW_OPEN``); no test presses
Run review, and the engine's computing entry points are replaced by ones that fail the test, so
a page that recomputed anything could not pass. Views that need the rows say which input files
they need; a changed byte of the folder shows NOT VERIFIED in red on every page.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

import synthreview.release.pipeline as pipeline_module
import synthreview.review as review_module
from synthreview import demo
from synthreview.figures import explain
from synthreview.figures import fidelity as fidelity_fig
from synthreview.figures import glucose as glucose_fig
from synthreview.figures.explain import format_metric, short_reason
from synthreview.figures.text import markdown_text
from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.record.inputs import input_line
from synthreview.record.opened_state import OPENED_KEY
from synthreview.record.session import REVIEW_KEY
from synthreview.record.store import write_record
from synthreview.release.signing import generate_keys, load_private_key
from tests.page_helpers import opened_app

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = ("overview", "data", "fidelity", "privacy", "utility", "glucose")


class Recomputed(AssertionError):
    """A page computed what the record holds."""


@pytest.fixture
def no_computing(monkeypatch):
    """Every module's binding of the engine's computing entry points fails when called."""
    for module, names in (
        (review_module, ("evaluate", "prepare")),
        (pipeline_module, ("release_candidate", "audit_candidate", "review_release")),
    ):
        for name in names:
            original = getattr(module, name)

            def refuse(*args, _name=name, **kwargs):
                raise Recomputed(f"{_name} was called while a record is open")

            for loaded in list(sys.modules.values()):
                if getattr(loaded, name, None) is original:
                    monkeypatch.setattr(loaded, name, refuse)


def _page(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    assert "run_review" not in {b.key for b in at.button}  # an opened record is not run
    return at


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [e.value for e in at.error]
    parts += [s.value for s in at.success] + [i.value for i in at.info]
    parts += [c.value for c in at.caption] + [w.value for w in at.warning]
    # Markdown-escaped user text (markdown_text): backslashes and word joiners taken off
    return "\n".join(str(p) for p in parts).replace("\u2060", "").replace("\\", "")


def _needs_inputs(at, record) -> None:
    text = _texts(at)
    assert "needs the review's input files" in text
    for entry in record.inputs:
        assert input_line(entry).replace("\\", "") in text


def test_overview_states_the_record(demo_record_folder, monkeypatch, no_computing):
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "overview")
    assert not at.session_state[REVIEW_KEY]  # nothing loaded, nothing computed
    body = next(h.proto.body for h in at.get("html") if 'sr-decisions"' in h.proto.body)
    for decision in record.decisions.values():
        assert DECISION_STYLE[decision.outcome].label in body


def test_fidelity_shows_the_record_scores(demo_record_folder, monkeypatch, no_computing):
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "fidelity")
    shown = [m.value for m in at.metric]
    for result in (c.fidelity for c in record.report.candidates.values()):
        for score in fidelity_fig.SCORES:
            assert format_metric(score, getattr(result, score)) in shown
    assert {"fidelity_curves", "fidelity_authenticity"} <= {c.key for c in _charts(at)}
    # the PCA and a column's values need the rows: the input files are named instead
    assert "fidelity_pca" not in {c.key for c in _charts(at)}
    _needs_inputs(at, record)


def _charts(at):
    return list(at.get("plotly_chart"))


def test_privacy_shows_the_record_attacks_and_epsilon(
    demo_record_folder, monkeypatch, no_computing
):
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "privacy")
    shown = [m.value for m in at.metric]
    text = _texts(at)
    for name, candidate in record.report.candidates.items():
        privacy = candidate.privacy
        aucs = [a.auc for a in privacy.membership_inference if a.error is None]
        assert format_metric("mia_auc", max(aucs)) in shown
        share = privacy.dcr.share_closer_to_train
        assert format_metric("dcr_share", share) in shown
        bound = privacy.epsilon_lower_bound
        assert f"**{name}**: ε ≥ {bound.epsilon:.2f}" in text
        counts = record.releases[name].audit.counts
        assert f"{counts.flagged_as_copies:,}" in shown  # the record's audit, counted once
    keys = {c.key for c in _charts(at)}
    assert {f"privacy_roc_{n}" for n in record.candidates} <= keys
    assert "privacy_dcr" in keys and "privacy_authenticity" in keys
    # controls that would change the numbers are shown, disabled, with the record's choices
    assert at.selectbox(key="privacy_sensitive").disabled
    assert at.number_input(key="privacy_claimed_epsilon").disabled
    _needs_inputs(at, record)  # the closest pairs need the training rows


def test_utility_shows_the_record_rules(demo_record_folder, monkeypatch, no_computing):
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "utility")
    text = _texts(at)
    for name, release in record.releases.items():
        rules = explain.readings_markdown(name, release.verdicts, "utility")
        assert rules and rules.replace("\\", "").replace("\u2060", "") in text
    assert at.selectbox(key="utility_target").disabled
    assert at.text_input(key="utility_formula").disabled
    assert at.text_input(key="utility_formula").value == (record.report.options.formula or "")
    keys = {c.key for c in _charts(at)}
    assert {"utility_kmarginal", "utility_ci", "utility_percentiles"} <= keys
    assert at.table  # the summary table


def test_glucose_shows_the_record_tables(demo_glucose_record_folder, monkeypatch, no_computing):
    record, folder = demo_glucose_record_folder
    at = _page(opened_app(monkeypatch, folder), "glucose")
    first = next(iter(record.report.candidates.values())).glucose
    expected = glucose_fig.comparison_table(first.metrics, first.holdout_metrics, alpha=0.05)
    assert at.table[0].value.equals(expected.data)
    keys = {c.key for c in _charts(at)}
    assert {"glucose_variance", "glucose_agp", "glucose_rmse"} <= keys
    assert {f"glucose_clarke_{n}" for n in record.candidates} <= keys
    assert "glucose_heatmaps" not in keys  # the traces themselves are not in the record
    assert at.number_input(key="glucose_motif_length").disabled
    _needs_inputs(at, record)


def test_data_lists_the_record_inputs(demo_record_folder, monkeypatch, no_computing):
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "data")
    listed = _inputs_listed(at)
    assert list(listed["sha256"]) == [i["sha256"] for i in record.inputs]
    assert set(listed["loaded (same sha256)"]) == {"no"}
    assert at.button(key="record_rerun").disabled


#: the Data page's controls that change a review's numbers (their editable keys)
DATA_CONTROLS = (
    "seed", "schema_editor", "apply_schema", "person_column", "apply_person",
    "sample_every_row", "sample_rows", "apply_sample_rows", "quasi_identifiers",
    "label_leak_columns", "constraints_upload", "constraints_clear", "apply_disclosure",
    "context_recipient", "context_purpose", "context_access", "context_threat_model",
    "context_expires", "context_keep", "context_clear",
)  # fmt: skip
CONTEXT = {
    "recipient": "Consortium WP3",
    "purpose": "teaching",
    "access": "licensed",
    "threat_model": "linkage with the census",
    "expires": "2027-01-31",
}


def _keys_drawn(at) -> set[str]:
    kinds = ("button", "selectbox", "checkbox", "number_input", "multiselect", "text_input")
    return {w.key for kind in (*kinds, "text_area", "file_uploader") for w in at.get(kind)}


def _with_choices(record):
    """``record`` as if reviewed with choices other than the defaults (the page only shows
    them): quasi-identifiers, an answer-key column, every row, constraints and a context."""
    options = replace(
        record.report.options,
        quasi_identifiers=("age", "sex"),
        label_leak_columns=("race",),
        sample_rows=None,
        constraints='[[range]]\ncolumn = "age"\nmin = 17\n',
    )
    stated = json.dumps({**record.stated, "context": CONTEXT}).encode()
    return replace(
        record,
        report=replace(record.report, options=options),
        files={**record.files, "report.json": stated},
    )


def test_data_shows_the_record_choices_disabled(demo_record_folder, monkeypatch, no_computing):
    """Issue 33 item 3: the choices that made an opened record's numbers are shown with the
    record's values and cannot be changed; closing the record gives the session's back."""
    record, folder = demo_record_folder
    at = opened_app(monkeypatch, folder)
    at.session_state[REVIEW_KEY] = demo.tables(seed=0, n_train=300, n_holdout=300)
    shown = _with_choices(record)
    at.session_state[OPENED_KEY] = shown
    _page(at, "data")
    assert not set(DATA_CONTROLS) & _keys_drawn(at)  # no editable copy is drawn
    assert at.number_input(key="record_seed").disabled
    assert at.number_input(key="record_seed").value == record.report.seed
    kinds = next(f.value for f in at.dataframe if list(f.value.columns) == ["column", "kind"])
    features = next(iter(record.report.candidates.values())).fidelity.features
    assert kinds.equals(features[["column", "kind"]].reset_index(drop=True))
    person = at.selectbox(key="record_person_column")
    assert person.disabled and person.value == "(each row is a person)"
    assert at.checkbox(key="record_sample_every_row").disabled
    assert at.checkbox(key="record_sample_every_row").value is True
    assert at.number_input(key="record_sample_rows").disabled
    assert "estimated on every row" in _texts(at)
    assert at.multiselect(key="record_quasi_identifiers").value == ["age", "sex"]
    assert at.multiselect(key="record_label_leak_columns").value == ["race"]
    # offered: the columns the record scored, as it states their kinds
    assert at.multiselect(key="record_quasi_identifiers").options == list(features["column"])
    categorical = features.loc[features["kind"] == "categorical", "column"]
    assert at.multiselect(key="record_label_leak_columns").options == list(categorical)
    assert "min = 17" in next(c.value for c in at.code)
    for name, value in CONTEXT.items():
        widget = at.selectbox if name == "access" else at.text_input
        if name == "threat_model":
            widget = at.text_area
        assert widget(key=f"record_context_{name}").value == value
    for key in DATA_CONTROLS[1:]:
        found = [w for kind in ("button", "selectbox", "checkbox", "number_input", "multiselect",
                                "text_input", "text_area", "file_uploader")
                 for w in at.get(kind) if w.key == f"record_{key}"]  # fmt: skip
        assert all(w.disabled for w in found), key
    assert not at.button(key="record_rerun").disabled  # its inputs are loaded: re-run offered
    # closed: the loaded files' own choices, editable, nothing of the record's kept
    at.button(key="close_record").click().run()
    assert not at.exception, at.exception
    assert not {k for k in _keys_drawn(at) if k.startswith("record_")}
    assert not at.selectbox(key="person_column").disabled
    assert at.multiselect(key="quasi_identifiers").value == []
    assert at.text_input(key="context_recipient").value == ""
    assert not at.text_input(key="context_recipient").disabled


def test_data_shows_a_glucose_record_context_disabled(
    demo_glucose_record_folder, monkeypatch, no_computing
):
    _, folder = demo_glucose_record_folder
    at = _page(opened_app(monkeypatch, folder), "data")
    assert not set(DATA_CONTROLS) & _keys_drawn(at)
    assert "record_schema_editor" not in {f.key for f in at.dataframe}  # traces: no schema
    assert at.text_input(key="record_context_recipient").disabled
    assert at.selectbox(key="record_context_access").disabled


def _inputs_listed(at):
    return next(f.value for f in at.dataframe if "loaded (same sha256)" in f.value.columns)


@pytest.fixture(scope="module")
def signed_and_changed(demo_record_folder, tmp_path_factory):
    """The demo record signed, and a copy of it with one byte of ``report.html`` changed."""
    record, _ = demo_record_folder
    root = tmp_path_factory.mktemp("changed")
    keys = generate_keys(root / "keys")
    write_record(record, root / "signed", key=load_private_key(keys.private.read_bytes()))
    shutil.copytree(root / "signed", root / "changed")
    data = bytearray((root / "changed" / "report.html").read_bytes())
    data[200] ^= 1
    (root / "changed" / "report.html").write_bytes(bytes(data))
    return root / "signed", root / "changed", keys


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_who_signed_or_not_verified_in_red(
    signed_and_changed, monkeypatch, no_computing, page
):
    signed, changed, keys = signed_and_changed
    at = _page(opened_app(monkeypatch, signed, keys.public), page)
    assert [s.value for s in at.success if s.value.startswith(f"verified - signed by {keys.keyid}")]
    at = _page(opened_app(monkeypatch, changed, keys.public), page)
    red = [m.value for m in at.markdown if m.value.startswith(":red[**NOT VERIFIED")]
    assert red and "report.html" in red[0].replace("\\", "").replace("\u2060", "")
    assert not at.success


def test_loaded_inputs_equal_to_the_record_draw_the_rows(
    demo_record_folder, monkeypatch, no_computing
):
    """The record's own input files (equal sha256) loaded: the PCA and the closest pairs draw,
    still from the record's numbers, and Re-run with these inputs is offered."""
    _, folder = demo_record_folder
    at = opened_app(monkeypatch, folder)
    at.session_state[REVIEW_KEY] = demo.tables(seed=0, n_train=300, n_holdout=300)
    _page(at, "data")
    assert set(_inputs_listed(at)["loaded (same sha256)"]) == {"yes"}
    assert not at.button(key="record_rerun").disabled
    _page(at, "fidelity")
    assert "fidelity_pca" in {c.key for c in _charts(at)}
    _page(at, "privacy")
    assert "needs the review's input files" not in _texts(at)
    assert any("equal" in frame.value.columns for frame in at.dataframe)  # the pair, side by side


def test_other_files_are_not_taken_for_the_record_inputs(
    demo_record_folder, monkeypatch, no_computing
):
    record, folder = demo_record_folder
    at = opened_app(monkeypatch, folder)
    at.session_state[REVIEW_KEY] = demo.tables(seed=1, n_train=300, n_holdout=300)
    _page(at, "fidelity")
    assert "fidelity_pca" not in {c.key for c in _charts(at)}
    _needs_inputs(at, record)
    assert at.button(key="record_rerun").disabled


@pytest.mark.slow
def test_rerun_with_these_inputs_computes_a_new_review(demo_record_folder, monkeypatch):
    record, folder = demo_record_folder
    at = opened_app(monkeypatch, folder)
    at.session_state[REVIEW_KEY] = demo.tables(seed=0, n_train=300, n_holdout=300)
    at.run()
    at.button(key="record_rerun").click().run()
    assert not at.exception, at.exception
    assert OPENED_KEY not in at.session_state  # the record is closed, not changed
    at.switch_page("pages/overview.py").run()
    body = next(h.proto.body for h in at.get("html") if 'sr-decisions"' in h.proto.body)
    # a new review of the same files, options, seed and policy states the same decisions
    for decision in record.decisions.values():
        assert DECISION_STYLE[decision.outcome].label in body


def test_audit_says_why_a_set_curation_cannot_fix_was_not_evaluated(
    demo_record_folder, monkeypatch, no_computing
):
    """mode_collapse: curation provably cannot bring its k-marginal shortfall under the line,
    so the pipeline cut it without evaluating it again (no curated report); the Audit page
    states that per section instead of showing nothing after curation."""
    record, folder = demo_record_folder
    curated = record.releases["mode_collapse"].curated
    assert curated is not None and curated.report is None  # the bounded, not evaluated set
    at = _page(opened_app(monkeypatch, folder), "audit")
    at.selectbox(key="audit_candidate").set_value("mode_collapse").run()
    assert not at.exception, at.exception
    text = _texts(at)
    assert "after curation" in text and "not evaluated after curation" in text


def _not_json(token: str) -> None:
    raise ValueError(f"{token} is not JSON")


def test_audit_tables_reach_the_browser_as_tables(demo_record_folder, monkeypatch, no_computing):
    """A table travels as Arrow, its frame's ``attrs`` in the metadata as JSON, which the
    browser parses strictly: the audit table's calibration (inf, NaN) turned the record's
    Audit table into an error element with an empty stack, hidden in its collapsed expander.
    Every table the opened record's Audit page sends, for every candidate, parses as JSON."""
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "audit")
    for name in record.candidates:
        at.selectbox(key="audit_candidate").set_value(name).run()
        assert not at.exception, at.exception
        rows = len(record.releases[name].audit.audit)
        assert any(len(table.value) == rows for table in at.dataframe), name  # the audit table
        for table in at.dataframe:
            chunk = table.proto.arrow_data.data or table.proto.lazy_data.initial_chunk
            metadata = pa.ipc.open_stream(chunk).schema.metadata or {}
            for value in metadata.values():
                json.loads(value, parse_constant=_not_json)  # JSON.parse's rules
        assert all(str(error.value).strip() for error in at.error), name


def test_audit_controls_are_a_long_table_in_registry_formats(
    demo_record_folder, monkeypatch, no_computing
):
    """The planted-leak controls read back from report.json: one column per control (one per
    measure ran to 4,951 px at 1280x720), every number in its registry format (shares of rows
    as percentages, AUC and hits with 3 decimals), never a float such as
    0.013333333333333334 or a missing value written None."""
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "audit")
    assert not at.exception, at.exception
    table = next(f.value for f in at.dataframe if "planted rows removed" in f.value.index)
    rows = record.controls.rows
    assert list(table.columns) == [r.name for r in rows]
    for row in rows:
        column = table[row.name]
        assert column["rows removed"] == format_metric("exact_copy_share", row.removed_share)
        assert column["rows removed"].endswith("%")
        attack, values = next(iter(row.attacks.items()))
        cell = next(v for k, v in column.items() if k.endswith(", AUC / hits"))
        assert cell == (
            f"{format_metric('mia_auc', values['auc'])} / "
            f"{format_metric('mia_tpr_at_fpr_1pct', values['tpr_at_fpr_1pct'])}"
        ), attack
    cells = [str(c) for c in table.to_numpy().ravel()]
    assert not [c for c in cells if re.search(r"\d\.\d{5,}|\bNone\b|\bnan\b", c)], cells


def test_presentation_mode_names_a_long_reason_by_its_rule_and_gives_it_below(
    demo_record_folder, monkeypatch, no_computing
):
    """Presentation mode's first screen holds every decision: a long reason is named by its
    deciding rule in the decision line (``figures.explain.short_reason``) and given whole
    right below the decisions, never cut."""
    record, folder = demo_record_folder
    at = _page(opened_app(monkeypatch, folder), "overview")
    at.toggle(key="presentation_mode").set_value(True).run()
    assert not at.exception, at.exception
    body = next(h.proto.body for h in at.get("html") if 'sr-decisions"' in h.proto.body)
    long = {n: d for n, d in record.decisions.items() if short_reason(d) != d.reason}
    assert long, "the demo record has no reason long enough to test"
    text = _texts(at)
    for name, decision in record.decisions.items():
        assert html.escape(short_reason(decision)) in body
        if name in long:
            assert html.escape(decision.reason) not in body
            assert markdown_text(decision.reason).replace("\\", "").replace("\u2060", "") in text
