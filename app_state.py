"""The dashboard's only Streamlit-aware helper: every session key, the review run, stored results.

A review is computed once, explicitly: the reviewer presses **Run review**, every section the
policy needs is computed for every candidate (progress per candidate and section, an estimate
of the time left, a Cancel button), and each finished (candidate, section) step is stored at
once. Pages only read what is stored (:func:`get_report` never computes), so switching pages
costs a redraw. Changing an option makes the sections that depend on it *stale*: the pages keep
showing the previous numbers under a warning, and the next run recomputes only those sections.

Everything lives in ``st.session_state`` of the reviewer's own session (never in a cache shared
across sessions), keyed on full-content digests: Streamlit's own hashing samples large frames
and could hand back a stale result (streamlit-notes P1). This module owns every session key;
pages call the functions below instead of touching ``st.session_state``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError, DataError, error_message
from synthreview.figures.explain import MISSING, format_number
from synthreview.figures.privacy import attack_label
from synthreview.figures.text import markdown_text
from synthreview.generators.plugin import installed_generators, load_generator
from synthreview.io.schema import Review
from synthreview.judgement.context import ReleaseContext, parse_context
from synthreview.judgement.decision import Decision, decide, out_of_date
from synthreview.judgement.ledger import PriorRelease, cap_decisions
from synthreview.judgement.policy import (
    LedgerLimits,
    Policy,
    Verdicts,
    apply_policy,
    load_policy,
    parse_policy,
)
from synthreview.judgement.waivers import Waiver, decide_with_waivers
from synthreview.metrics.fidelity.features import pca_projection
from synthreview.metrics.registry import get as metric_info
from synthreview.metrics.utility.regression import parse_formula, suggest_formula
from synthreview.options import SECTION_OPTIONS, ReviewOptions, default_options, section_key
from synthreview.record.countersign import (
    countersign_folder,
    countersigned_decisions,
    meeting_signoff,
    reviewers_from_text,
)
from synthreview.record.evidence import open_evidence
from synthreview.record.inputs import (
    InputMatch,
    encoded_projection,
    has_holdout,
    input_line,
    inputs_frame,
    match_inputs,
    recorded_review,
)
from synthreview.record.record import ReviewRecord
from synthreview.record.store import OPEN_ENV, OPEN_KEY_ENV, open_review, read_review_zip
from synthreview.record.trust import trusted_keys
from synthreview.release.audit import CopyCounts, Thresholds
from synthreview.release.bundle import folder_names, zip_bytes
from synthreview.release.controls import PlantedControls, control_table, planted_controls
from synthreview.release.curation import curate
from synthreview.release.export import ESCAPE_STATEMENT
from synthreview.release.pipeline import (
    CandidateAudit,
    CandidateRelease,
    audit_candidate,
    policy_key,
    release_candidate,
    release_files,
)
from synthreview.release.reattack import Reattack
from synthreview.release.register import (
    AppendResult,
    ChainCheck,
    append_records,
    check_chain,
    default_register,
    history,
    ledger,
    parse_register_url,
    prior_releases,
    records_of_release,
)
from synthreview.release.register import Record as RegisterRecord
from synthreview.release.signing import (
    ENVELOPE_NAME,
    Verification,
    key_id,
    load_private_key,
    load_public_key,
    sign_files,
    verify_files,
)
from synthreview.release.signoff import SignOff, sign_off
from synthreview.release.waivers import read_approval, waivers_for
from synthreview.review import (
    TABLE_SECTIONS,
    CandidateResult,
    Context,
    Report,
    describe_inputs,
    evaluate,
    prepare,
)
from synthreview.sampling import Sampling, sample_review
from synthreview.serving import ServerSettings, server_settings

T = TypeVar("T")

# --- session keys (the only place they are spelled) -------------------------------------------
REVIEW_KEY = "review"
SAMPLED_REVIEW_KEY = "sampled_review"
SEED_KEY = "seed"
PRESENTATION_KEY = "presentation_mode"  # the Overview's toggle; kept on every page (page_start)
RAW_ROWS_KEY = "show_raw_rows"  # a page's "Show training rows" checkbox (off: rows masked)
DEMO_AUTOLOADED_KEY = "_demo_autoloaded"
LOAD_ERROR_KEY = "_load_error"
LOADED_TABLES_KEY = "_loaded_tables"
SOURCES_KEY = "_candidate_sources"  # the uploaded candidate files as sent (curated bytes)
POLICY_KEY = "release_policy"
CONTEXT_KEY = "_release_context"  # the Data page's release context (ReleaseContext or None)
WAIVERS_KEY = "_waiver_requests"  # [(rule, reason, requested at)]: the Audit page's requests
APPROVALS_KEY = "_waiver_approvals"  # [Approval]: second-key approvals verified on upload
POLICY_ERROR_KEY = "_policy_error"
POLICY_UPLOAD_KEY = "overview_policy_upload"
AUDIT_DIALOG_KEY = "audit_dialog_open"
AUDIT_CONFIRMED_KEY = "audit_confirmed"
AUDIT_PREVIEW_KEY = "_audit_preview"  # {(digest, seed, options, candidate, thresholds): audit}
AUDIT_CONTROLS_KEY = "_audit_controls"  # {(review digest, seed, thresholds, sections): controls}
SIGNOFF_KEY = "_signoff"  # {candidate: SignOff} of the loaded review
AUDIT_CANDIDATE_KEY = "_audit_candidate"  # the Audit page's candidate, kept across page visits
LOADED_SOURCE_KEY = "_loaded_source"  # the Data page's Source of the loaded review
SIGNING_UPLOAD_KEY = "audit_signing_key"  # the private key file uploader (Audit page)
SIGNING_PASSPHRASE_KEY = "audit_signing_passphrase"
_SIGNING_KEY = "_signing_key"  # the loaded Ed25519PrivateKey: this session only, never disk
_SIGNING_ERROR_KEY = "_signing_error"
_RUN_TIME_KEY = "_run_time"  # when the last run finished (the record's time)
_OPTIONS_KEY = "_options"
_RESULTS_KEY = "_results"  # {(digest, seed, section_key, candidate): StepResult}
_LATEST_KEY = "_latest"  # {section: (digest, seed, section_key)} of the last complete run
_CONTEXTS_KEY = "_contexts"  # {(digest, embedding, seed): Context}
_PROJECTIONS_KEY = "_projections"  # {(digest, embedding, seed): PCA frame or error text}
_RUN_KEY = "_run_requested"
_RUN_NOTE_KEY = "_run_note"
_RUN_DONE_KEY = "_run_done"  # a run just finished: the next page shows "See the decisions"
TIMINGS_KEY = "_step_seconds"  # {section: [seconds per candidate step]}
#: {(digest, seed, options, policy key, candidate, thresholds): StepResult of CandidateRelease}
_RELEASES_KEY = "_releases"
#: {(digest, seed, options, policy, sections, n results, n curated): ReviewSummary}; results are
#: only ever added, so a new step (or a new policy) makes a new key and the summary is rebuilt
SUMMARY_KEY = "_summary"
_VIEWS_KEY = "_views"  # {(name, *key): figure or table} built from the current summary
#: keys holding a loaded and computed review (benchmarks save and reload them to time pages)
STORED_KEYS = (
    REVIEW_KEY, SEED_KEY, _OPTIONS_KEY, _RESULTS_KEY, _LATEST_KEY, _CONTEXTS_KEY,
    _PROJECTIONS_KEY, TIMINGS_KEY, _RELEASES_KEY, _RUN_TIME_KEY,
)  # fmt: skip

SECTION_LABELS = {
    "prepare": "Encoder and embedding",
    "fidelity": "Fidelity",
    "privacy": "Privacy",
    "utility": "Utility",
    "glucose": "Glucose",
    "release": "Audit, curation and decision",
}
#: relative cost of one step before this session has timed any (demo, 2 cores: prepare 7 s,
#: fidelity 3 s, privacy 8-40 s, utility 5-10 s per candidate); only shapes the first estimate
_PRIOR_SECONDS = {
    "prepare": 7.0, "fidelity": 3.0, "privacy": 20.0, "utility": 8.0, "glucose": 60.0,
    "release": 20.0,
}  # fmt: skip
#: the run's progress panel, fixed to the top right of the window while a run goes
RUN_PANEL_CSS = (
    "<style>.st-key-review_run_panel{position:fixed;top:4.5rem;right:1.5rem;z-index:1000;"
    "width:min(34rem,60vw);max-height:80vh;overflow:auto;background:#ffffff;"
    "box-shadow:0 2px 12px rgba(0,0,0,.25);}</style>"
)
#: the dashboard's pages by group: (file, title, Material icon bundled with Streamlit). app.py
#: navigates over them; presentation mode's page switcher links to the same pages
PAGES = {
    "Review": (
        ("pages/data.py", "Data", ":material/folder_open:"),
        ("pages/overview.py", "Overview", ":material/traffic:"),
    ),
    "Evidence": (
        ("pages/fidelity.py", "Fidelity", ":material/target:"),
        ("pages/privacy.py", "Privacy", ":material/lock:"),
        ("pages/utility.py", "Utility", ":material/build:"),
        ("pages/glucose.py", "Glucose", ":material/monitor_heart:"),
    ),
    "Release": (
        ("pages/audit.py", "Audit & export", ":material/inventory_2:"),
        ("pages/history.py", "History", ":material/history:"),
    ),
    "Help": (("pages/glossary.py", "Glossary", ":material/menu_book:"),),
}
#: presentation mode on every page: no sidebar, header or toolbar, larger type (local CSS only:
#: no fonts or files from the network); the page switcher takes the sidebar's place
PRESENTATION_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
header[data-testid="stHeader"], [data-testid="stToolbar"] { display: none !important; }
[data-testid="stMainBlockContainer"] { font-size: 1.45rem; max-width: 100%; padding-top: 1rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 3rem; }
[data-testid="stMainBlockContainer"] :is(h2, h3) { font-size: 1.9rem; }
[data-testid="stTable"] td, [data-testid="stTable"] th { font-size: 1.45rem; padding: 0.6rem; }
.st-key-presentation_pages p { font-size: 1rem; }
</style>"""
#: progress redraws at most this often (each redraw is a websocket message)
_REDRAW_SECONDS = 0.25


@dataclass(frozen=True)
class StepResult:
    """One candidate's result for one section, or the error that section raised."""

    value: Any
    error: str | None
    seconds: float


# --- the loaded review -------------------------------------------------------------------------
def set_review(review: Review | None) -> None:
    """Store the loaded review (``None`` clears it) and drop results of the previous one."""
    # an opened record stays open: loaded files are the inputs its raw-row views draw
    st.session_state[REVIEW_KEY] = review
    for key in (
        _RESULTS_KEY, _LATEST_KEY, _CONTEXTS_KEY, _PROJECTIONS_KEY, _RELEASES_KEY, SUMMARY_KEY,
        AUDIT_PREVIEW_KEY, AUDIT_CONTROLS_KEY, _VIEWS_KEY, SIGNOFF_KEY, SAMPLED_REVIEW_KEY,
    ):  # fmt: skip
        st.session_state[key] = {}
    st.session_state[AUDIT_CONFIRMED_KEY] = {}
    st.session_state[_RUN_KEY] = False
    st.session_state.pop(_RUN_NOTE_KEY, None)
    st.session_state.pop(_RUN_TIME_KEY, None)
    st.session_state.pop(LOADED_SOURCE_KEY, None)
    st.session_state[_OPTIONS_KEY] = initial_options(review) if review is not None else None


def set_loaded_source(source: str) -> None:
    """Remember which Data page source (demo or upload) the loaded review came from."""
    st.session_state[LOADED_SOURCE_KEY] = source


def loaded_source() -> str | None:
    """The Data page source of the loaded review (``None`` when it was loaded otherwise)."""
    return st.session_state.get(LOADED_SOURCE_KEY)


def initial_options(review: Review) -> ReviewOptions:
    """The engine's :func:`default_options` plus the suggested regression formula, so the
    first run already compares regression coefficients (the Utility page shows the formula and
    lets the reviewer change it; opening the page never changes it)."""
    options = default_options(review)
    suggested = suggest_formula(review.schema) if review.kind == "table" else None
    if suggested:
        try:
            parsed = parse_formula(suggested, schema=review.schema, real=review.real.frame)
            options = replace(options, formula=str(parsed))
        except ConfigError:
            pass  # no usable formula for this data: CI overlap is skipped with a reason
    return options


def get_review() -> Review | None:
    """The review loaded on the Data page, or ``None``."""
    return st.session_state.get(REVIEW_KEY)


OPENED_KEY = "_opened_record"  # the ReviewRecord opened from a folder or ZIP: evidence
_OPEN_TRIED_KEY = "_open_tried"
_OPEN_ERROR_KEY = "_open_error"
_RECORD_SUMMARY_KEY = "_record_summary"


def start_page() -> str:
    """The page a session opens on: the Overview when ``synthreview show`` opened a record."""
    return "pages/overview.py" if os.environ.get(OPEN_ENV) else "pages/data.py"


def opened_record() -> ReviewRecord | None:
    """The review record opened in this session (``open_record``), or ``None``."""
    return st.session_state.get(OPENED_KEY)


def open_record(
    source: str | os.PathLike[str] | bytes | ReviewRecord, *, key: Any = None
) -> ReviewRecord:
    """Open a stored review (folder, ZIP path or ZIP bytes, or a record already opened: History's
    evidence) for every page; nothing recomputed.

    The loaded data and its results are dropped: the session shows the record alone.

    Raises
    ------
    DataError, ConfigError
        ``record.store.open_review``'s refusals (not a review, written before records, an
        unreadable key).
    """
    record = source if isinstance(source, ReviewRecord) else open_review(source, key=key)
    set_review(None)
    st.session_state[OPENED_KEY] = record
    st.session_state[DEMO_AUTOLOADED_KEY] = True
    st.session_state.pop(_RECORD_SUMMARY_KEY, None)
    st.session_state.pop(_OPEN_ERROR_KEY, None)
    return record


def stored_reviews() -> list[str]:
    """The review folders the Data page offers: those directly inside the operator's
    ``reviews`` folder (:mod:`synthreview.serving`) that hold a completion marker, by name.
    A browser picks among them; it never names a path on the server (docs/security.md)."""
    root = settings().reviews
    if root is None or not Path(root).is_dir():
        return []
    return sorted(
        entry.name
        for entry in Path(root).iterdir()
        if entry.is_dir() and not entry.is_symlink() and (entry / "COMPLETE.json").is_file()
    )


def open_stored_review(name: str, *, key: Any = None) -> ReviewRecord:
    """Open the stored review ``name`` (one of :func:`stored_reviews`) for every page.

    Raises
    ------
    ConfigError
        ``name`` is not one of the offered review folders (nothing is read then).
    DataError
        ``record.store.open_review``'s refusals.
    """
    offered = stored_reviews()
    if name not in offered:
        raise ConfigError(
            f"the review to open must be one of the folders this server offers ({len(offered)}); "
            f"got {name!r} instead"
        )
    return open_record(Path(settings().reviews or "") / name, key=key)


def _open_from_environment() -> None:
    if st.session_state.get(_OPEN_TRIED_KEY):
        return
    st.session_state[_OPEN_TRIED_KEY] = True
    path = os.environ.get(OPEN_ENV)
    if not path:
        return
    try:
        open_record(path, key=os.environ.get(OPEN_KEY_ENV) or None)
    except (DataError, ConfigError) as exc:
        st.session_state[_OPEN_ERROR_KEY] = str(exc)


def record_banner() -> None:
    """Every page, while a record is open: who signed it, or NOT VERIFIED and why, in red."""
    error = st.session_state.get(_OPEN_ERROR_KEY)
    if error:
        st.error(f"The review could not be opened: {error}")
    record = opened_record()
    if record is None:
        return
    verified = record.verified
    with st.container(key="record_verification"):
        if verified is not None and verified.ok:
            st.success(verified.line)
        else:
            line = verified.line if verified is not None else "NOT VERIFIED: not checked"
            st.markdown(f":red[**{markdown_text(line)}**]")
        st.caption(
            f"Opened review record of {markdown_text(record.generated_at)}: evidence, not a "
            "draft. Controls that would change its numbers are disabled; Re-run with these "
            "inputs (load them on the Data page) computes a new record."
        )
        for notice in record.notices:
            st.warning(markdown_text(notice))
        match = record_match()
        st.button(
            "Re-run with these inputs",
            key="record_rerun",
            on_click=rerun_with_inputs,
            disabled=match is None or not match.ok,
            help="Computes a new review of the record's input files with its options, seed, "
            "policy and release context; the record itself stays as it is. "
            + ("Its input files are loaded." if match is not None and match.ok else
               "Load its input files on the Data page first: " + record_inputs_needed()),
        )  # fmt: skip
        signed = countersigned_decisions(record)
        if signed:
            lines = [
                f"- **{markdown_text(name)}**: {markdown_text(entry.get('decision'))} "
                f"(the record: {markdown_text(entry.get('tool_decision'))})"
                + (f"; {markdown_text(entry.get('reason'))}" if entry.get("reason") else "")
                + " - "
                + markdown_text(
                    ", ".join(f"{p.get('name')} ({p.get('role')})" for p in entry["reviewers"])
                )
                for name, entry in signed.items()
            ]
            st.markdown("**The meeting's countersigned decisions**\n\n" + "\n".join(lines))


def record_inputs_needed() -> str:
    """Which input files a raw-row view of the open record needs (name, role, sha256)."""
    record = opened_record()
    return "" if record is None else "; ".join(input_line(i) for i in record.inputs)


def record_match() -> InputMatch | None:
    """How the files loaded on the Data page supply the open record's inputs (None: no record)."""
    record = opened_record()
    return None if record is None else match_inputs(record.inputs, get_review())


def record_rows() -> Review | None:
    """The rows a raw-row view draws: the loaded review, or for an open record the loaded files
    named as the record names them, only when every one has the record's sha256 (else None)."""
    match = record_match()
    if match is None:
        return get_review()
    review = get_review()
    return recorded_review(review, match) if review is not None and match.ok else None


def inputs_needed(what: str) -> None:
    """Say which input files ``what`` (a raw-row view of the open record) needs, and which of
    them are not loaded: it draws nothing else."""
    match = record_match()
    missing = match.sentence() if match is not None else ""
    st.info(
        markdown_text(
            f"{what} needs the review's input files, which a stored record does not hold: "
            f"{record_inputs_needed()}. Load these files on the Data page (they are accepted "
            f"only when their sha256 equals the record's). {missing}".strip()
        )
    )


def record_inputs_frame() -> pd.DataFrame:
    """The open record's input files, each with whether the loaded files supply it."""
    record, match = opened_record(), record_match()
    if record is None or match is None:
        return pd.DataFrame()
    return inputs_frame(record.inputs, match)


def locked() -> bool:
    """Whether the page shows an opened record: controls that would change numbers are disabled
    (the record is evidence; :func:`rerun_with_inputs` computes a new one)."""
    return opened_record() is not None


def holdout_given() -> bool:
    """Whether the shown review (an open record, else the loaded one) has a holdout table."""
    record, review = opened_record(), get_review()
    if record is not None:
        return has_holdout(record.inputs)
    return review is not None and review.holdout is not None


def review_kind() -> str | None:
    """``"table"`` or ``"traces"``: the open record's kind, else the loaded review's (None)."""
    record, review = opened_record(), get_review()
    if record is not None:
        return record.report.kind
    return None if review is None else review.kind


def close_record() -> None:
    """``on_click`` of *Close the record*: the session shows the loaded files (if any) again."""
    st.session_state.pop(OPENED_KEY, None)
    st.session_state.pop(_RECORD_SUMMARY_KEY, None)
    st.session_state[_VIEWS_KEY] = {}


def rerun_with_inputs() -> None:
    """``on_click`` of *Re-run with these inputs*: close the open record and compute a new
    review of the loaded files (the record's own, by sha256) with the record's options, seed,
    policy and release context. The record itself is never changed."""
    record = opened_record()
    rows = record_rows()
    if record is None or rows is None:
        return
    context = record_context(record)
    policy = None
    if record.policy_text is not None:
        policy = parse_policy(record.policy_text, source=record.policy.source)
    close_record()
    set_review(rows)
    st.session_state[_OPTIONS_KEY] = record.report.options
    st.session_state[SEED_KEY] = int(record.report.seed)
    st.session_state[POLICY_KEY] = policy
    st.session_state[CONTEXT_KEY] = context
    request_run()


def record_context(record: ReviewRecord) -> ReleaseContext | None:
    """The release context ``report.json`` of ``record`` states (None: none, or unreadable)."""
    stated = record.stated.get("context")
    if not isinstance(stated, Mapping):
        return None
    try:
        return parse_context(
            {k: v for k, v in stated.items() if v is not None}, where="the record's context"
        )
    except ConfigError:
        return None


def record_projection() -> pd.DataFrame | str | None:
    """The PCA view of the open record's rows when its input files are loaded (None: not)."""
    record, rows = opened_record(), record_rows()
    if record is None or rows is None or rows.kind != "table":
        return None
    cache = st.session_state.setdefault(_PROJECTIONS_KEY, {})
    key = ("record", hashlib.sha256(record.files.get("report.json", b"")).hexdigest(),
           review_digest(rows))  # fmt: skip
    if key not in cache:
        try:
            cache[key] = encoded_projection(
                rows, options=record.report.options, seed=record.report.seed
            )
        except Exception as exc:  # a failed view must not stop the page
            cache[key] = error_message(exc)
    return cache[key]


def _record_summary(record: ReviewRecord) -> ReviewSummary:
    """The open record as the summary a live run stores: its report, releases and decisions."""
    cached = st.session_state.get(_RECORD_SUMMARY_KEY)
    if cached is not None and cached[0] is record:
        return cached[1]
    releases = dict(record.releases)
    summary = ReviewSummary(
        report=record.report,
        stale=(),
        content=record.report.to_dict()["candidates"],
        releases=releases,
        verdicts={n: r.verdicts for n, r in releases.items()},
        curated={n: dict(r.curated.content) for n, r in releases.items() if r.curated},
        decisions=record.decisions,  # as report.json states them
    )
    st.session_state[_RECORD_SUMMARY_KEY] = (record, summary)
    return summary


#: every page: a static table's cells wrap, so a wide table fits the window instead of scrolling
#: sideways (tables for reading go through ``figures.explain.reading_table`` and ``st.table``),
#: and a tile's label and value wrap instead of ending in "..." in a narrow column
TABLE_CSS = """<style>
[data-testid="stTable"] :is(td, th), [data-testid="stTable"] :is(td, th) * {
  white-space: normal !important; overflow-wrap: anywhere !important; }
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] *,
[data-testid="stMetricValue"], [data-testid="stMetricValue"] * {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  overflow-wrap: anywhere; }
</style>"""


def page_start() -> None:
    """What every page does first: continue a requested review run, then draw the sidebar
    status. Pages call it (through :func:`require_review`), not ``app.py``: Streamlit's
    AppTest runs a page without the entrypoint once a ``pages/`` folder exists, and the run
    and its status must behave the same there as in the browser."""
    if PRESENTATION_KEY in st.session_state:
        # a widget's value is dropped on a page that does not draw it; presentation mode is
        # switched on the Overview and must hold on every page (Streamlit's documented re-set)
        st.session_state[PRESENTATION_KEY] = st.session_state[PRESENTATION_KEY]
    st.html(TABLE_CSS)
    _open_from_environment()
    if presentation_mode():
        page_switcher()
    execute_pending_run()
    if st.session_state.pop(_RUN_DONE_KEY, False):
        # a toast floats: the Overview's decision lines keep their place in the first screen
        st.toast("The review is computed: every decision is current. See the Overview.")
    sidebar_status()
    record_banner()


def require_review_or_record() -> Review | None:
    """:func:`require_review` for a page that renders an opened record: the loaded review, or
    ``None`` while a record is open (the page reads the record through :func:`get_report` and
    :func:`get_summary`, and raw rows through :func:`record_rows`)."""
    _open_from_environment()
    if opened_record() is not None:
        page_start()
        return None
    return require_review()


def require_review() -> Review:
    """Start the page (:func:`page_start`); return the loaded review, or explain how to load
    one and stop the page."""
    page_start()
    review = get_review()
    if review is None and opened_record() is not None:
        st.info(
            "This page needs the review's input files, which a stored record does not hold: "
            f"{markdown_text(record_inputs_needed())}. The Overview shows the record's "
            "decisions; load these files on the Data page to re-run with these inputs."
        )
        st.stop()
    if review is None:
        st.warning("No data loaded yet. Load the demo or upload your files on the Data page.")
        st.page_link("pages/data.py", label="Go to the Data page", icon=":material/folder_open:")
        st.stop()
    return review


#: environment variable that shrinks the bundled table demo (training rows, e.g. 600), for the
#: real-browser tests: the decisions shown are still the engine's, on fewer rows
DEMO_ROWS_ENV = "SYNTHREVIEW_DEMO_ROWS"


def demo_rows() -> int | None:
    """Training rows of the bundled table demo: ``$SYNTHREVIEW_DEMO_ROWS`` if set, else the
    demo's default (``None``)."""
    value = os.environ.get(DEMO_ROWS_ENV, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ConfigError(
            f"{DEMO_ROWS_ENV} must be a whole number of rows; got {value!r} instead"
        ) from None


def demo_autoload_pending() -> bool:
    """True once per session: a fresh session opens on the bundled demo."""
    if (
        st.session_state.get(DEMO_AUTOLOADED_KEY)
        or get_review() is not None
        or opened_record() is not None
    ):
        return False
    st.session_state[DEMO_AUTOLOADED_KEY] = True
    return True


def set_load_error(message: str | None) -> None:
    """Remember (or clear) the message of a failed load, shown on the Data page."""
    if message is None:
        st.session_state.pop(LOAD_ERROR_KEY, None)
    else:
        st.session_state[LOAD_ERROR_KEY] = message


def load_error() -> str | None:
    """The message of the last failed load, if any."""
    return st.session_state.get(LOAD_ERROR_KEY)


def set_loaded_tables(tables: Any) -> None:
    """Keep the uploaded tables as read (before alignment), for re-validation."""
    st.session_state[LOADED_TABLES_KEY] = tables


def set_candidate_sources(files: Sequence[bytes]) -> None:
    """Keep the uploaded candidate files' bytes (this session only) for the curated exports."""
    st.session_state[SOURCES_KEY] = tuple(files)


def candidate_sources() -> tuple[bytes, ...]:
    """The uploaded candidate files' bytes (empty for the demo)."""
    return st.session_state.get(SOURCES_KEY, ())


def seed() -> int:
    """The review's seed (set on the Data page; an open record's own)."""
    record = opened_record()
    if record is not None:
        return int(record.report.seed)
    return int(st.session_state.get(SEED_KEY, 0))


def review_digest(review: Review) -> str:
    """Full-content digest of every input table plus the schema."""
    h = hashlib.sha256()
    tables = [review.real, review.holdout, *review.synthetic.values()]
    for table in tables:
        if table is not None:
            h.update(f"{table.role}:{table.name}:{table.sha256};".encode())
    h.update(repr(sorted(review.schema.kinds.items())).encode())
    h.update(review.kind.encode())
    return h.hexdigest()


# --- options and policy ------------------------------------------------------------------------
def get_options() -> ReviewOptions:
    """The session's review options (target, sensitive column, groups, formula, ...); an open
    record's own options while one is open."""
    record = opened_record()
    if record is not None:
        return record.report.options
    options = st.session_state.get(_OPTIONS_KEY)
    if options is None:
        review = get_review()
        options = initial_options(review) if review is not None else ReviewOptions()
        st.session_state[_OPTIONS_KEY] = options
    return options


def set_options(options: ReviewOptions) -> None:
    """Replace the session's options. Sections that depend on a changed option become stale;
    nothing is recomputed until the reviewer runs the review again.

    Raises
    ------
    ConfigError
        ``options.generator`` is not a generator this server allows (:func:`allowed_generator`),
        or a record is open; the session's options are left as they were.
    """
    if opened_record() is not None:
        raise ConfigError(
            "an opened record keeps the options it was computed with; Re-run with these inputs "
            "to review them with other options"
        )
    allowed_generator(options.generator)
    st.session_state[_OPTIONS_KEY] = options


@functools.cache
def _default_policy() -> Policy:
    # parsed once per process: the shipped file never changes while the app runs
    return load_policy()


def get_policy() -> Policy:
    """The policy uploaded in this session, or the shipped default, with the thresholds of the
    release context's access model (without a context: the strictest set, fail closed)."""
    record = opened_record()
    if record is not None:
        return record.policy  # the policy the record was judged by
    context = get_context()
    base = st.session_state.get(POLICY_KEY) or _default_policy()
    return base.for_access(context.access if context is not None else None)


def get_context() -> ReleaseContext | None:
    """The release context given on the Data page (None: not given); an open record's own."""
    record = opened_record()
    if record is not None:
        return record_context(record)
    return st.session_state.get(CONTEXT_KEY)


def set_context(values: Mapping[str, object] | None) -> ReleaseContext | None:
    """Check and keep the Data page's release context (None clears it).

    A change of access model changes the policy's thresholds, so the decisions then read *out
    of date - re-run* as after any policy change.

    Raises
    ------
    ConfigError
        A field missing or not as expected (``judgement.context.parse_context``); the context
        kept before is left as it was.
    """
    context = None if values is None else parse_context(values, where="the release context")
    st.session_state[CONTEXT_KEY] = context
    return context


def load_uploaded_policy() -> None:
    """``on_change`` of the policy uploader: parse it, or keep the default and the error."""
    upload = st.session_state.get(POLICY_UPLOAD_KEY)
    st.session_state.pop(POLICY_ERROR_KEY, None)
    st.session_state[POLICY_KEY] = None
    if upload is not None:
        try:
            st.session_state[POLICY_KEY] = parse_policy(upload.getvalue(), source=upload.name)
        except ConfigError as exc:
            st.session_state[POLICY_ERROR_KEY] = str(exc)


def policy_error() -> str | None:
    """Why the uploaded policy was rejected, if it was."""
    return st.session_state.get(POLICY_ERROR_KEY)


def escape(text: object) -> str:
    """User text (file, candidate or column names, cell values) made inert for Markdown.

    ``synthreview.figures.text.markdown_text``: every ASCII punctuation escaped, newlines as
    spaces and no auto-linked URL, host or address; the reader sees the text as written.
    """
    return markdown_text(text)


def presentation_mode() -> bool:
    """Whether the screen-sharing presentation mode is on."""
    return bool(st.session_state.get(PRESENTATION_KEY, False))


def end_presentation() -> None:
    """``on_click`` of the page switcher's *Leave presentation*."""
    st.session_state[PRESENTATION_KEY] = False


def page_switcher() -> None:
    """Presentation mode's navigation: the sidebar is hidden, so a compact row of links to every
    page (and a way out of presentation mode) opens each page."""
    st.html(PRESENTATION_CSS)
    with st.container(horizontal=True, gap="small", key="presentation_pages"):
        for pages in PAGES.values():
            for path, title, _ in pages:  # words only: the row stays one line at 1280 px
                st.page_link(path, label=title)
        st.button("Leave presentation", key="presentation_leave", on_click=end_presentation)


def show_raw_rows() -> bool:
    """Whether a page may draw raw training rows (exact values of real people).

    Only when the reviewer ticked the page's *Show training rows* checkbox (key
    :data:`RAW_ROWS_KEY`, off by default) and presentation mode is off: a shared screen never
    shows them, whatever the checkbox says.
    """
    return bool(st.session_state.get(RAW_ROWS_KEY, False)) and not presentation_mode()


# --- the audit page's confirmations (kept here so every key has one owner) --------------------
def audit_thresholds(**choices: Any) -> Thresholds:
    """The audit thresholds of the Audit page's controls (``release.audit.Thresholds``)."""
    return Thresholds(**choices)


def audit_dialog_open() -> bool:
    """Whether the curation confirmation dialog is open."""
    return bool(st.session_state.get(AUDIT_DIALOG_KEY))


def set_audit_dialog(open_: bool) -> None:
    """Open or close the curation confirmation dialog."""
    st.session_state[AUDIT_DIALOG_KEY] = bool(open_)


def confirmed_curations() -> dict[str, tuple[Thresholds, datetime]]:
    """``{candidate: (thresholds, time)}`` confirmed for release in this session.

    A confirmed candidate is released with these thresholds everywhere: the Overview, the Audit
    page and the record show the release the reviewer confirmed.
    """
    return st.session_state.setdefault(AUDIT_CONFIRMED_KEY, {})


def confirm_curation(name: str, thresholds: Thresholds) -> None:
    """Record the reviewer's confirmation of ``name``'s curation under ``thresholds``."""
    confirmed_curations()[name] = (thresholds, datetime.now(UTC))


# --- what is computed, what is stale -----------------------------------------------------------
def needed_sections(review: Review) -> tuple[str, ...]:
    """Sections a review of this kind computes (what the release policy reads)."""
    return ("glucose",) if review.kind == "traces" else TABLE_SECTIONS


def _base(review: Review, section: str, options: ReviewOptions) -> tuple[Any, ...]:
    return (review_digest(review), seed(), section_key(section, options))


def _results() -> dict[tuple[Any, ...], StepResult]:
    return st.session_state.setdefault(_RESULTS_KEY, {})


def _complete(review: Review, base: tuple[Any, ...]) -> bool:
    results = _results()
    return all((*base, name) in results for name in review.candidates)


def stale_sections(options: ReviewOptions | None = None) -> list[str]:
    """Needed sections with no complete result for the current data, seed and options."""
    review = get_review()
    if review is None:
        return []
    options = options or get_options()
    return [s for s in needed_sections(review) if not _complete(review, _base(review, s, options))]


def _latest_base(review: Review, section: str) -> tuple[Any, ...] | None:
    """Key of the last complete result of ``section`` for this data and seed (any options)."""
    base = st.session_state.setdefault(_LATEST_KEY, {}).get(section)
    if base is None or base[:2] != (review_digest(review), seed()):
        return None
    return base if _complete(review, base) else None


def changed_options(section: str, options: ReviewOptions | None = None) -> list[str]:
    """Options that differ between the shown (last complete) result of ``section`` and now."""
    review = get_review()
    base = _latest_base(review, section) if review is not None else None
    if base is None:
        return []
    now = section_key(section, options or get_options())
    names = SECTION_OPTIONS[section]
    return [n for n, old, new in zip(names, base[2][1:], now[1:], strict=True) if old != new]


def status() -> dict[str, str]:
    """``{section: "current" | "stale" | "missing"}`` for the loaded review."""
    review = get_review()
    if review is None:
        return {}
    stale = set(stale_sections())
    return {
        s: "current"
        if s not in stale
        else ("stale" if _latest_base(review, s) is not None else "missing")
        for s in needed_sections(review)
    }


def _context_key(review: Review, options: ReviewOptions) -> tuple[Any, ...]:
    return (review_digest(review), options.embedding, seed())


def _stored_context(review: Review, options: ReviewOptions) -> Context | None:
    return st.session_state.setdefault(_CONTEXTS_KEY, {}).get(_context_key(review, options))


def projection() -> pd.DataFrame | str | None:
    """The stored PCA of the encoded rows (fitted on real only), an error text, or ``None``."""
    review = get_review()
    if review is None:
        return None
    key = _context_key(review, get_options())
    return st.session_state.setdefault(_PROJECTIONS_KEY, {}).get(key)


def stored_report(
    sections: Sequence[str], options: ReviewOptions | None = None
) -> tuple[Report | None, list[str]]:
    """The stored results of ``sections`` (current, else the last complete run) and the
    sections among them that are stale. Never computes. ``None`` when a section never ran."""
    review = get_review()
    if review is None:
        return None, []
    options = options or get_options()
    wanted = [s for s in needed_sections(review) if s in sections] or list(needed_sections(review))
    results = _results()
    stale: list[str] = []
    candidates: dict[str, dict[str, Any]] = {n: {"errors": {}} for n in review.candidates}
    for section in wanted:
        base = _base(review, section, options)
        if not _complete(review, base):
            base = _latest_base(review, section)
            if base is None:
                return None, []
            stale.append(section)
        for name in review.candidates:
            step = results[(*base, name)]
            if step.error is not None:
                candidates[name]["errors"][section] = step.error
            elif step.value is not None:
                candidates[name][section] = step.value
    for found in candidates.values():
        glucose = found.get("glucose")
        if glucose is not None:  # trace fidelity and privacy live inside the glucose section
            found.setdefault("fidelity", getattr(glucose, "fidelity", None))
            found.setdefault("privacy", getattr(glucose, "privacy", None))
    report = Report(
        inputs=describe_inputs(review),
        candidates={n: CandidateResult(name=n, **found) for n, found in candidates.items()},
        options=options,
        seed=seed(),
        sections=tuple(wanted),
        kind=review.kind,
        context=_stored_context(review, options),
        notices=tuple(review.notices),  # what loading changed travels with the decision
        sampling=sampled_review(options)[1],
    )
    return report, stale


def get_report(sections: Sequence[str], options: ReviewOptions | None = None) -> Report:
    """The stored report of ``sections`` for a page; never computes.

    When a section has never been computed, the page shows a **Run review** button and stops;
    when it is stale (an option changed), the page shows the previous numbers under a warning
    that names the changed options.
    """
    record = opened_record()
    if record is not None:
        return record.report  # evidence: every section as filed, nothing recomputed
    review = get_review()
    if review is None:
        return require_review()  # draws the explanation and stops
    report, stale = stored_report(sections, options)
    if report is None:
        st.info(
            "The review has not been computed yet. Press **Run review** to compute every "
            "section once; every page then reads the stored result."
        )
        run_button(key="run_review_page")
        st.stop()
    _warn_stale(stale, options)
    return report


def _warn_stale(stale: Sequence[str], options: ReviewOptions | None) -> None:
    for section in stale:
        changed = ", ".join(changed_options(section, options)) or "inputs"
        st.warning(
            f"{SECTION_LABELS[section]} results are out of date (changed: {changed}); the "
            "numbers below are from the previous run. Press Run review to recompute only the "
            "stale sections."
        )


@dataclass(frozen=True)
class ReviewSummary:
    """What the Overview, the sidebar, the Audit page and the record read: built once per result.

    Serialising the report (``to_dict``) and judging every candidate takes about a second on
    the demo; doing it on every page open made each switch slow. The summary is stored in the
    session beside the results it was built from and rebuilt only when a step, the options, the
    policy or a confirmation change.

    Attributes
    ----------
    report : Report
        The stored report (never recomputed).
    stale : tuple of str
        Sections shown from a previous run because an option changed.
    content : dict
        ``report.to_dict()["candidates"]``: what the policy judges and the figures read.
    releases : dict of str -> CandidateRelease
        Each candidate's release from the one pipeline (``release.pipeline.release_candidate``),
        under the thresholds the reviewer confirmed (default ones otherwise); only when
        ``current``.
    verdicts : dict of str -> Verdicts
        The policy applied to each candidate as submitted (audit rules included).
    curated : dict
        ``to_dict()`` of the curated versions (candidates that were curated).
    decisions : dict of str -> Decision
        One decision per candidate: the release's, or *out of date* when the numbers are older
        than the options, the policy or the confirmations (never a judgement on a mix).
    changed : tuple of str
        What made the decisions out of date (empty when ``current``).
    """

    report: Report
    stale: tuple[str, ...]
    content: dict[str, dict[str, Any]]
    releases: dict[str, CandidateRelease]
    verdicts: dict[str, Verdicts]
    curated: dict[str, dict[str, Any]]
    decisions: dict[str, Decision]
    changed: tuple[str, ...] = ()

    @property
    def current(self) -> bool:
        """Whether every decision rests on numbers computed for the present choices."""
        return not self.changed


def _release_key(
    review: Review, options: ReviewOptions, policy: Policy, name: str
) -> tuple[Any, ...]:
    # the thresholds and the curation are the candidate's confirmed ones: a release made
    # before a confirmation (default rules, curated only if failing) is not the confirmed one
    return (review_digest(review), seed(), options, policy_key(policy), name,
            release_thresholds(name), _curate_when(name))  # fmt: skip


def _releases() -> dict[tuple[Any, ...], StepResult]:
    return st.session_state.setdefault(_RELEASES_KEY, {})


def release_thresholds(name: str) -> Thresholds:
    """The audit thresholds ``name`` is released under: the confirmed ones, else the default."""
    confirmed = confirmed_curations().get(name)
    return confirmed[0] if confirmed is not None else Thresholds()


def _stored_release(review: Review, options: ReviewOptions, name: str) -> StepResult | None:
    key = _release_key(review, options, get_policy(), name)
    return _releases().get(key)


def _previous_release(review: Review, options: ReviewOptions, name: str) -> CandidateRelease | None:
    """A release of ``name`` from the same numbers under another policy or thresholds (reuse)."""
    digest = review_digest(review)
    for key, step in reversed(list(_releases().items())):
        if key[:3] == (digest, seed(), options) and key[4] == name and step.value is not None:
            return step.value
    return None


def _judged_without_release(
    policy: Policy, name: str, content: dict[str, Any], error: str, kind: str
) -> tuple[Verdicts, Decision]:
    """A candidate whose release failed: its audit rules read as not computed, never a pass."""
    verdicts = apply_policy(policy, {**content, "audit": {}}, kind=kind)
    decision = decide(name, verdicts)
    if decision.outcome == "incomplete" or decision.outcome == "release":
        decision = replace(
            decision,
            outcome="incomplete",
            reason=f"the audit and curation could not be computed: {error}",
        )
    return verdicts, decision


def review_summary(options: ReviewOptions | None = None) -> ReviewSummary | None:
    """The stored summary of every needed section, built at most once per result; never
    computes a metric. ``None`` when a needed section never ran."""
    record = opened_record()
    if record is not None:
        return _record_summary(record)
    review = get_review()
    if review is None:
        return None
    options = options or get_options()
    policy = get_policy()
    releases = _releases()
    confirmed = tuple(sorted((n, t) for n, (t, _) in confirmed_curations().items()))
    waivers = session_waivers()
    prior = ledger_prior() if policy.ledger != LedgerLimits() else ()
    key = (review_digest(review), seed(), options, policy_key(policy), len(_results()),
           len(releases), confirmed, waivers, prior)  # fmt: skip
    store = st.session_state.setdefault(SUMMARY_KEY, {})
    if key in store:
        return store[key]
    report, stale = stored_report(needed_sections(review), options)
    if report is None:
        return None
    content = report.to_dict()["candidates"]
    found: dict[str, CandidateRelease] = {}
    verdicts: dict[str, Verdicts] = {}
    decisions: dict[str, Decision] = {}
    changed: list[str] = []
    for section in stale:
        changed += [o for o in changed_options(section, options) if o not in changed]
    if stale and not changed:
        changed = ["inputs"]
    for name, candidate in content.items():
        step = None if stale else _stored_release(review, options, name)
        if step is None:
            # out of date: the rules are shown on the stored numbers, no decision is taken
            verdicts[name] = apply_policy(policy, candidate, kind=report.kind)
            if not changed:
                changed = ["policy or audit thresholds" if _previous_release(
                    review, options, name) is not None else "the audit (not run yet)"]  # fmt: skip
            continue
        if step.value is None:
            verdicts[name], decisions[name] = _judged_without_release(
                policy, name, candidate, step.error or "unknown error", report.kind
            )
            continue
        found[name] = step.value
        verdicts[name] = step.value.verdicts
        decisions[name] = step.value.decision
        if waivers:  # an approved waiver leaves its rule out, as the record will
            curated = step.value.curated
            decisions[name] = decide_with_waivers(
                {name: step.value.verdicts},
                {name: curated.verdicts} if curated is not None else None,
                waivers,
            )[name]
    if changed:
        decisions = {n: out_of_date(n, changed) for n in content}
    elif policy.ledger != LedgerLimits():  # the policy caps releases per source
        decisions.update(
            cap_decisions(
                {n: decisions[n] for n in found},
                prior,
                policy.ledger,
                claimed_epsilon=options.claimed_epsilon,
            )
        )
    summary = ReviewSummary(
        report=report,
        stale=tuple(stale),
        content=content,
        releases=found,
        verdicts=verdicts,
        curated={n: dict(r.curated.content) for n, r in found.items() if r.curated},
        decisions=decisions,
        changed=tuple(changed),
    )
    store.clear()  # one summary per session: older ones are never shown again
    store[key] = summary
    st.session_state[_VIEWS_KEY] = {}  # figures and tables of the previous results
    return summary


def view(name: str, build: Callable[[], T], *key: Hashable) -> T:
    """A figure or table built from the stored results once, then reused on every page open.

    ``name`` and ``key`` (the widget choices it depends on) identify it; every view is
    dropped when the stored results, the options or the policy change. Building the
    figures of a page took most of a page switch.
    """
    if review_summary() is None:  # nothing stored yet: nothing to keep
        return build()
    views = st.session_state.setdefault(_VIEWS_KEY, {})
    if (name, *key) not in views:
        views[(name, *key)] = build()
    return views[(name, *key)]


def get_summary(options: ReviewOptions | None = None) -> ReviewSummary:
    """:func:`review_summary` for a page: like :func:`get_report`, explains a missing run
    (and stops the page) or warns about stale sections."""
    if opened_record() is not None:
        return _record_summary(opened_record())
    review = get_review()
    if review is None:
        require_review()  # draws the explanation and stops
    summary = review_summary(options)
    if summary is None:
        get_report(needed_sections(review), options)  # draws the Run review prompt and stops
    _warn_stale(summary.stale, options)
    return summary


def section_results(report: Report, section: str, *, what: str | None = None) -> dict[str, Any]:
    """Each candidate's ``section`` result; a candidate whose section failed shows its error.

    Returns ``{candidate name: result}`` for the candidates that have one, in order.
    """
    label = what or section.capitalize()
    found: dict[str, Any] = {}
    for name, candidate in report.candidates.items():
        if section in candidate.errors:
            show_error(candidate.errors[section], what=f"{label} of {name}")
        elif getattr(candidate, section) is not None:
            found[name] = getattr(candidate, section)
    return found


def show_error(message: str, *, what: str = "This metric") -> None:
    """Draw a failed metric's error in place, so the rest of a page still works.

    ``what`` and ``message`` quote candidate and column names: both are shown as text.
    """
    st.error(markdown_text(f"{what} could not be computed: {message}"))


# --- the run -------------------------------------------------------------------------------------
def request_run() -> None:
    """``on_click`` of every Run review button."""
    st.session_state[_RUN_KEY] = True
    st.session_state.pop(_RUN_NOTE_KEY, None)


def cancel_run() -> None:
    """``on_click`` of Cancel: the click's rerun interrupts the running step; finished steps
    stay stored, so the next run continues from there."""
    st.session_state[_RUN_KEY] = False
    st.session_state[_RUN_NOTE_KEY] = "Review cancelled; finished steps are kept."


def run_requested() -> bool:
    """Whether a run is pending (requested and not finished or cancelled)."""
    return bool(st.session_state.get(_RUN_KEY))


def run_note() -> str | None:
    """A one-off note about the last run (cancelled, finished)."""
    return st.session_state.get(_RUN_NOTE_KEY)


def run_button(*, key: str, label: str = "Run review") -> None:
    """A primary button that requests a run of every stale section."""
    review = get_review()
    pending = bool(stale_sections()) or (
        review is not None and bool(_release_plan(review, get_options()))
    )
    st.button(
        label,
        key=key,
        type="primary",
        on_click=request_run,
        disabled=not pending or run_requested(),
        help="Computes every stale section for every candidate; pages then read the result.",
    )


def plan(review: Review, options: ReviewOptions) -> list[tuple[str, str]]:
    """The ``(candidate, section)`` steps a run would compute now, in order."""
    results = _results()
    steps = []
    for section in needed_sections(review):
        base = _base(review, section, options)
        steps += [(n, section) for n in review.candidates if (*base, n) not in results]
    return steps


def _estimate(section: str, timings: dict[str, list[float]]) -> float:
    seen = timings.get(section)
    return sum(seen) / len(seen) if seen else _PRIOR_SECONDS.get(section, 10.0)


def format_seconds(seconds: float) -> str:
    """``"45 s"``, ``"3 min 05 s"``."""
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class _Tracker:
    """Draws overall progress, the step table and the time-left estimate; throttled."""

    def __init__(self, steps: list[tuple[str, str]], timings: dict[str, list[float]]):
        self.steps = steps
        self.timings = timings
        self.done: dict[tuple[str, str], str] = {}
        self.current: tuple[str, str] | None = None
        self.fraction = 0.0
        self.started = time.perf_counter()
        self.step_started = self.started
        self.last_draw = 0.0
        self.bar = st.progress(0.0, text="Starting…")
        self.table = st.empty()

    def _remaining(self) -> float:
        left = [s for s in self.steps if s not in self.done and s != self.current]
        rest = sum(_estimate(section, self.timings) for _, section in left)
        if self.current is not None:
            expected = _estimate(self.current[1], self.timings)
            elapsed = time.perf_counter() - self.step_started
            if self.fraction > 0.1:  # the step's own progress says more than the average
                expected = elapsed / self.fraction
            rest += max(expected - elapsed, 0.0)
        return rest

    def draw(self, message: str = "", *, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last_draw < _REDRAW_SECONDS:
            return
        self.last_draw = now
        total = sum(_estimate(s, self.timings) for _, s in self.steps) or 1.0
        left = self._remaining()
        overall = min(max(1.0 - left / total, 0.0), 1.0)
        where = ""
        if self.current is not None:
            name, section = self.current
            where = markdown_text(f"{SECTION_LABELS[section]} of {name}: {message}") + " · "
        self.bar.progress(
            overall,
            text=f"{where}{len(self.done)} of {len(self.steps)} steps done · about "
            f"{format_seconds(left)} left (elapsed {format_seconds(now - self.started)})",
        )
        self.table.dataframe(self._frame(), hide_index=True)

    def _frame(self) -> pd.DataFrame:
        names = list(dict.fromkeys(n for n, _ in self.steps))
        sections = list(dict.fromkeys(s for _, s in self.steps))
        rows = []
        for name in names:
            row = {"candidate": name}
            for section in sections:
                step = (name, section)
                if step in self.done:
                    row[SECTION_LABELS[section]] = self.done[step]
                elif step == self.current:
                    row[SECTION_LABELS[section]] = f"running {self.fraction:.0%}"
                elif step in self.steps:
                    row[SECTION_LABELS[section]] = "waiting"
                else:
                    row[SECTION_LABELS[section]] = "stored"
            rows.append(row)
        return pd.DataFrame(rows)

    def start(self, step: tuple[str, str]) -> None:
        self.current, self.fraction = step, 0.0
        self.step_started = time.perf_counter()
        self.draw("starting", force=True)

    def finish(self, step: tuple[str, str], seconds: float, error: str | None) -> None:
        self.done[step] = (
            f"failed ({format_seconds(seconds)})" if error else format_seconds(seconds)
        )
        self.current = None
        self.timings.setdefault(step[1], []).append(seconds)
        self.draw("done", force=True)

    def progress(self, fraction: float, message: str) -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        self.draw(message)


def execute_pending_run() -> None:
    """Run the requested review (called by ``app.py`` before the page, in the main area).

    Each (candidate, section) step is stored as soon as it finishes. A click on Cancel, or on
    anything else, interrupts the running step at its next progress report (Streamlit stops
    the script); a page switch keeps the request, so the next script run continues the review.
    """
    review = get_review()
    if not run_requested() or review is None or opened_record() is not None:
        return
    options = get_options()
    steps = plan(review, options)
    context_key = _context_key(review, options)
    contexts = st.session_state.setdefault(_CONTEXTS_KEY, {})
    needs_context = (
        review.kind == "table"
        and context_key not in contexts
        and any(s in ("fidelity", "privacy") for _, s in steps)
    )
    timings = st.session_state.setdefault(TIMINGS_KEY, {})
    panel = st.empty()
    # pinned to the window, so the progress stays in view however far the page was scrolled
    # when Run review was pressed (at 1280x720 it used to sit above the viewport)
    st.html(RUN_PANEL_CSS)
    with panel.container(border=True, key="review_run_panel"):
        st.markdown("**Running the review**")
        st.button("Cancel", key="review_cancel", on_click=cancel_run)
        all_steps = ([("all candidates", "prepare")] if needs_context else []) + steps
        tracker = _Tracker(all_steps, timings)
        if needs_context:
            step = ("all candidates", "prepare")
            tracker.start(step)
            started = time.perf_counter()
            error = None
            try:
                contexts[context_key] = prepare(
                    review, options=options, seed=seed(), progress=tracker.progress
                )
            except Exception as exc:  # fidelity/privacy steps record the error per candidate
                error = error_message(exc)
            tracker.finish(step, time.perf_counter() - started, error)
            _store_projection(review, options, contexts.get(context_key))
        context = contexts.get(context_key)
        results = _results()
        for name, section in steps:
            tracker.start((name, section))
            started = time.perf_counter()
            one = replace(review, synthetic={name: review.synthetic[name]})
            report = evaluate(
                one,
                sections=(section,),
                options=options,
                seed=seed(),
                context=context,
                progress=tracker.progress,
            )
            candidate = report.candidates[name]
            error = candidate.errors.get(section)
            seconds = time.perf_counter() - started
            value = getattr(candidate, section)
            results[(*_base(review, section, options), name)] = StepResult(value, error, seconds)
            tracker.finish((name, section), seconds, error)
        for section in needed_sections(review):
            base = _base(review, section, options)
            if _complete(review, base):
                st.session_state.setdefault(_LATEST_KEY, {})[section] = base
        to_release = _release_plan(review, options)
        if to_release:
            _run_releases(tracker, review_summary(options).report, to_release)
        tracker.draw("judging the candidates", force=True)
        review_summary(options)  # judged once here, so the first page open only reads it
    st.session_state[_RUN_KEY] = False
    st.session_state[_RUN_TIME_KEY] = datetime.now(UTC)
    st.session_state[_RUN_DONE_KEY] = True
    st.session_state[_RUN_NOTE_KEY] = (
        f"Review computed in {format_seconds(time.perf_counter() - tracker.started)}."
    )
    panel.empty()


def _run_releases(tracker: _Tracker, report: Report, names: list[str]) -> None:
    """Release each candidate through the one pipeline as a tracked step, storing a StepResult.

    Each is released under its confirmed thresholds (default ones otherwise), curated when
    confirmed or failing, re-using what an earlier release of the same numbers computed. An
    exception is stored as the step's error: the judgement then reads the audit as not
    computed (incomplete), never as a pass.
    """
    review = get_review()
    options = get_options()
    policy = get_policy()
    tracker.steps = tracker.steps + [(n, "release") for n in names]
    stored = _releases()
    for name in names:
        tracker.start((name, "release"))
        started = time.perf_counter()
        value, error = None, None
        try:
            value = release_candidate(
                review,
                report,
                name,
                policy=policy,
                thresholds=release_thresholds(name),
                curate_when=_curate_when(name),
                reuse=_previous_release(review, options, name),
                progress=tracker.progress,
            )
        except Exception as exc:  # recorded, never a silent pass (see the docstring)
            error = error_message(exc)
        seconds = time.perf_counter() - started
        stored[_release_key(review, options, policy, name)] = StepResult(value, error, seconds)
        tracker.finish((name, "release"), seconds, error)


def _curate_when(name: str) -> str:
    """A confirmed candidate is curated whatever its verdict (its curated files are filed);
    otherwise only a candidate that fails as submitted (what its decision needs)."""
    return "always" if name in confirmed_curations() else "failing"


def _release_plan(review: Review, options: ReviewOptions) -> list[str]:
    """Candidates whose release the run has not computed for the present numbers, policy and
    confirmed thresholds (needs every section complete)."""
    if stale_sections(options):
        return []
    return [n for n in review.candidates if _stored_release(review, options, n) is None]


def curation_errors() -> dict[str, str]:
    """Why a candidate's audit or curation could not be computed, by candidate."""
    review = get_review()
    if review is None:
        return {}
    options = get_options()
    found = {}
    for name in review.candidates:
        step = _stored_release(review, options, name)
        if step is not None and step.error:
            found[name] = step.error
    return found


def sampled_review(options: ReviewOptions | None = None) -> tuple[Review, Sampling | None]:
    """The review the stored statistics are estimated on, and how it was drawn (cached).

    Above ``options.sample_rows`` rows the sections' per-row results (closest pairs) are rows
    of these samples; ``Sampling`` maps them to the files' rows. Below it: the loaded review.
    """
    review = record_rows()  # an open record's input files, named as the record names them
    if review is None:
        raise ConfigError("no review is loaded, or not the open record's input files")
    options = options or get_options()
    cache = st.session_state.setdefault(SAMPLED_REVIEW_KEY, {})
    key = (review_digest(review), seed(), options.sample_rows, options.person)
    if key not in cache:
        cache.clear()  # samples of one review at a time
        cache[key] = sample_review(review, options.sample_rows, seed=seed(), person=options.person)
    return cache[key]


def _loaded_review() -> Review:
    review = get_review()
    if review is None:
        raise ConfigError("no review is loaded")
    return review


def _loaded_summary() -> ReviewSummary:
    summary = review_summary()
    if summary is None:
        raise ConfigError("the review has not been computed; press Run review")
    return summary


def candidate_release(name: str) -> CandidateRelease | None:
    """The current release of ``name`` (``None`` when out of date or not computed)."""
    summary = review_summary()
    return None if summary is None else summary.releases.get(name)


def rule_verdicts(report: Report) -> dict[str, Verdicts]:
    """Each candidate's rule verdicts for a section page: the stored run's (what the Overview
    decides on), else the policy applied to ``report``'s numbers before a run."""
    summary = review_summary()
    if summary is not None:
        return summary.verdicts
    content = report.to_dict()["candidates"]
    return {n: apply_policy(get_policy(), c, kind=report.kind) for n, c in content.items()}


def copy_counts(name: str) -> CopyCounts | None:
    """The copies of ``name`` counted once (``release.audit.copy_counts`` on its current
    release's audit): the Overview, the Privacy tiles and the record state these numbers.
    ``None`` when out of date or the candidate was not audited."""
    release = candidate_release(name)
    return None if release is None or release.audit is None else release.audit.counts


def preview_audit(name: str, thresholds: Thresholds) -> CandidateAudit | None:
    """The audit of ``name`` under ``thresholds`` for the Audit page's preview (cached).

    Under the thresholds of the candidate's current release, it is that release's audit.
    """
    current = candidate_release(name)
    if current is not None and current.audit is not None and current.audit.thresholds == thresholds:
        return current.audit
    review = _loaded_review()
    summary = _loaded_summary()
    cache = st.session_state.setdefault(AUDIT_PREVIEW_KEY, {})
    key = (review_digest(review), seed(), get_options(), name, thresholds)
    if key not in cache:
        cache[key] = audit_candidate(summary.report, name, thresholds, review=review)
    return cache[key]


def removed_preview(name: str, audit: CandidateAudit) -> pd.DataFrame:
    """The rows ``audit`` would remove from ``name``, as in the file, with row and reasons."""
    review = _loaded_review()
    return curate(review.synthetic[name], audit.audit).removed_table()


def rule_labels(rules: Sequence[str]) -> list[str]:
    """Registry words for policy rule ids (the id itself for a rule the policy lacks)."""
    policy = get_policy()
    return [metric_info(policy.rules[r].spec.metric).label if r in policy.rules else r
            for r in rules]  # fmt: skip


def reattack_frame(reattack: Reattack) -> pd.DataFrame:
    """The re-attack table: one row per attack (registry words), AUC and TPR before/after."""
    frame = pd.DataFrame([a.to_dict() for a in reattack.attacks])
    frame["attack"] = [attack_label(a) for a in frame["attack"]]
    # numbers as a reviewer reads them (no float noise such as 0.5267029240000001), "–" missing
    for column in frame.columns.drop("attack"):
        if column != "worse":
            frame[column] = [_number_text(v) for v in frame[column]]
    return frame.set_index("attack")


#: an interval whose ends were not computed (never "n/a to n/a")
NO_INTERVAL = "no 95 % interval computed"


def _number_text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        ends = [format_number(v, ".3f") for v in value]
        if all(end == MISSING for end in ends):  # none at all, or both ends missing
            return NO_INTERVAL
        return " to ".join(ends)
    return format_number(value, ".3f")


def confirmed_release(name: str) -> CandidateRelease | None:
    """The release of a confirmed candidate under its confirmed thresholds, computed on the
    first call after the confirmation (curated, re-evaluated with every section, re-attacked,
    judged) through the one pipeline and stored like the run's; ``None`` while out of date."""
    review = _loaded_review()
    summary = _loaded_summary()
    if not summary.stale and name in confirmed_curations():
        options = get_options()
        if _stored_release(review, options, name) is None:
            with st.spinner("Curating, re-evaluating and re-attacking the curated set…"):
                _run_releases(_Tracker([], {}), summary.report, [name])
    return candidate_release(name)


def controls_for(thresholds: Thresholds, *, compute: bool = False) -> PlantedControls | None:
    """The planted-leak controls under ``thresholds`` (computed when ``compute``)."""
    review = _loaded_review()
    summary = _loaded_summary()
    cache = st.session_state.setdefault(AUDIT_CONTROLS_KEY, {})
    key = (review_digest(review), seed(), get_options(), policy_key(get_policy()), thresholds)
    if compute and key not in cache:
        with st.spinner("Reviewing the planted-leak controls…"):
            cache[key] = planted_controls(
                review, summary.report, policy=get_policy(), thresholds=thresholds
            )
    return cache.get(key)


def controls_frame(controls: PlantedControls) -> pd.DataFrame:
    """The controls as the Audit page's table."""
    return control_table(controls.to_dict())


def controls_possible() -> bool:
    """Whether planted-leak controls apply (a table review with a holdout of ≥ 20 rows)."""
    review = get_review()
    return (
        review is not None and review.kind == "table" and review.holdout is not None
        and review.holdout.n_rows >= 20
    )  # fmt: skip


# --- the meeting's sign-off and the record ------------------------------------------------------
def signoffs() -> dict[str, SignOff]:
    """``{candidate: SignOff}`` entered on the Audit page for the loaded review."""
    return st.session_state.setdefault(SIGNOFF_KEY, {})


def audit_candidate_index(candidates: Sequence[str]) -> int:
    """Position in ``candidates`` of the Audit page's last chosen candidate (0 when none)."""
    chosen = st.session_state.get(AUDIT_CANDIDATE_KEY)
    return list(candidates).index(chosen) if chosen in candidates else 0


def remember_audit_candidate(name: str) -> None:
    """Keep the Audit page's candidate choice (its selectbox's state ends with the page)."""
    st.session_state[AUDIT_CANDIDATE_KEY] = name


def request_waiver(rule: str, reason: str) -> str | None:
    """File a waiver request of ``rule`` with its justification; the session's signing key is
    the requester. Returns why it was refused (None: filed). It changes no decision until an
    approval signed by another key is added (:func:`add_approval`)."""
    requester = signing_key_id()
    if requester is None:
        return "load your signing key below first: the signing key is the waiver's requester"
    if rule not in get_policy().rules:
        return f"the waived rule must be a rule of the policy; got {rule!r}"
    if not reason.strip():
        return "a waiver needs its justification; got an empty reason"
    moment = datetime.now(UTC).isoformat(timespec="seconds")
    st.session_state.setdefault(WAIVERS_KEY, []).append((rule, reason.strip(), moment))
    return None


def add_approval(approval: bytes, public_key: bytes) -> str | None:
    """Verify an approval (``synthreview approve``) with the approver's public key and keep it.
    Returns why it was refused (None: kept)."""
    try:
        approver = load_public_key(public_key)
        if key_id(approver) == signing_key_id():
            return "the approval must be verified with a second reviewer's key, not yours"
        found = read_approval(approval, approver, where="the approval")
    except ConfigError as exc:
        return str(exc)
    st.session_state.setdefault(APPROVALS_KEY, []).append(found)
    return None


def ledger_prior() -> tuple[PriorRelease, ...]:
    """The server register's earlier records from this review's training data (its sha256, or
    the release context's source id), for the policy's ``[ledger]`` caps; read only. No register
    yet means no earlier release; a register that exists and cannot be read gives an *unknown*
    history (``PriorRelease.unreadable``), which a capping policy refuses (fail closed)."""
    review = get_review()
    if review is None:
        return ()
    context = get_context()
    try:
        records = ledger(
            register_location(),
            sha256=getattr(review.real, "sha256", None),
            source=context.source if context is not None else None,
        )
    except ConfigError as exc:  # no register yet is no earlier release (ledger returns none)
        return (PriorRelease.unreadable(str(exc)),)
    return prior_releases(records)


def session_waivers() -> tuple[Waiver, ...]:
    """The waivers requested in this session, each approved where an approval matches."""
    requester = signing_key_id() or ""
    review = get_review()
    candidates = {
        n: t.sha256 for n, t in (review.synthetic.items() if review else ()) if hasattr(t, "sha256")
    }
    approvals = tuple(st.session_state.get(APPROVALS_KEY, ()))
    return tuple(
        waiver
        for rule, reason, moment in st.session_state.get(WAIVERS_KEY, ())
        for waiver in waivers_for(
            [(rule, reason)],
            requester=requester,
            requested_at=moment,
            candidates=candidates,
            approvals=approvals,
        )
    )


def record_signoff(
    name: str, *, reviewer: str, decision: str | None, reason: str, comment: str
) -> str | None:
    """Validate and store the meeting's sign-off of ``name``; the error text, or ``None``.

    ``decision`` is ``None`` until the meeting chooses one: nothing is stored then.
    """
    if decision is None:
        return "choose the meeting's decision first (it is blank until the meeting chooses)"
    summary = _loaded_summary()
    tool = summary.decisions[name].outcome
    try:
        signoffs()[name] = sign_off(
            reviewer, decision, tool_decision=tool, reason=reason, comment=comment
        )
    except ConfigError as exc:
        return str(exc)
    return None


def record_refusal() -> str | None:
    """Why the record cannot be exported now, or ``None`` when it can.

    Exports are refused while any decision is out of date or a release step failed to run: the
    record files exactly the decisions the screen shows.
    """
    review = get_review()
    if review is None:
        return "no review is loaded"
    summary = review_summary()
    if summary is None:
        return "the review has not been computed; press Run review"
    if not summary.current:
        return (
            "the decisions are out of date (" + ", ".join(summary.changed) + " changed); press "
            "Run review before exporting"
        )
    missing = [n for n in review.candidates if n not in summary.releases]
    if missing:
        return "the audit of " + ", ".join(missing) + " could not be computed; see its error"
    return None


def record_builder(
    thresholds: Thresholds | None = None, *, key: Ed25519PrivateKey | None = None
) -> Callable[[], dict[str, bytes]]:
    """A function that builds every release file of the current review (once, then reuses it).

    Everything the record needs is read here, on the script thread; the returned function may
    run off it (a download button's ``data=`` callable) and touches no session state. The
    record's time is the latest of the run, the confirmations and the sign-offs, so the same
    state always gives the same bytes. With ``key`` (:func:`signing_key`) the files are those of
    ``signing.sign_files``: the same files plus the signed statement ``release.intoto.jsonl``
    (Ed25519 signatures are deterministic, so the bytes stay equal too). Raises ``ConfigError``
    when :func:`record_refusal` gives a reason.
    """
    refusal = record_refusal()
    if refusal is not None:
        raise ConfigError(f"the record cannot be exported: {refusal}")
    review = _loaded_review()
    summary = _loaded_summary()
    policy = get_policy()
    moments = [st.session_state.get(_RUN_TIME_KEY) or datetime(1970, 1, 1, tzinfo=UTC)]
    moments += [t for _, t in confirmed_curations().values()]
    moments += [s.time for s in signoffs().values()]
    controls = controls_for(thresholds) if thresholds is not None else None
    sources = candidate_sources()
    signed = {n: s for n, s in signoffs().items() if n in summary.releases}
    context = get_context()
    waivers = session_waivers()
    prior = ledger_prior() if policy.ledger != LedgerLimits() else ()

    @functools.cache
    def build() -> dict[str, bytes]:
        files = release_files(
            summary.report,
            summary.releases,
            policy=policy,
            review=review,
            controls=controls,
            signoff=signed,
            sources=sources,
            context=context,
            waivers=waivers,
            prior=prior,
            timestamp=max(moments),
        )
        return files if key is None else sign_files(files, key)

    return build


def record_folders() -> dict[str, str]:
    """``{candidate: folder of its files in the record}``."""
    review = _loaded_review()
    return folder_names(review.candidates)


def escaping_statement() -> str:
    """What the CSV exports do to cells a spreadsheet would run as formulas."""
    return ESCAPE_STATEMENT


def zip_record(files: dict[str, bytes]) -> bytes:
    """The record's files in one ZIP (``release.bundle.zip_bytes``)."""
    return zip_bytes(files)


def load_signing_key() -> None:
    """``on_change`` of the signing key uploader and its passphrase: load the key, or the error.

    The key is parsed from the uploaded bytes in memory and kept in this session only (never
    written to disk); a key that cannot be loaded leaves the session without one, so the
    downloads stay unsigned and :func:`signing_error` says why.
    """
    upload = st.session_state.get(SIGNING_UPLOAD_KEY)
    passphrase = st.session_state.get(SIGNING_PASSPHRASE_KEY) or ""
    st.session_state.pop(_SIGNING_ERROR_KEY, None)
    st.session_state.pop(_SIGNING_KEY, None)
    if upload is None:
        return
    try:
        st.session_state[_SIGNING_KEY] = load_private_key(
            _key_bytes(upload.getvalue(), what="the signing key"),
            passphrase=passphrase.encode("utf-8") or None,
        )
    except ConfigError as exc:
        st.session_state[_SIGNING_ERROR_KEY] = f"{upload.name}: {exc}; the downloads stay unsigned"


#: the most bytes a PEM key file may have (an Ed25519 PEM key is a few hundred bytes)
MAX_KEY_BYTES = 64 * 1024


def _key_bytes(data: bytes, *, what: str) -> bytes:
    if len(data) > MAX_KEY_BYTES:
        raise ConfigError(
            f"{what} must be a PEM key file of at most {MAX_KEY_BYTES} bytes; got {len(data)} "
            "bytes instead"
        )
    return data


def forget_signing_key() -> None:
    """Drop the session's signing key (the downloads are unsigned again)."""
    st.session_state.pop(_SIGNING_KEY, None)
    st.session_state.pop(_SIGNING_ERROR_KEY, None)


def signing_key() -> Ed25519PrivateKey | None:
    """The Ed25519 private key loaded in this session, or ``None``."""
    return st.session_state.get(_SIGNING_KEY)


def signing_key_id() -> str | None:
    """``signing.key_id`` of the session's signing key (what ``verify`` names), or ``None``."""
    key = signing_key()
    return None if key is None else key_id(key.public_key())


def signature_file_name() -> str:
    """The signed statement's file in a signed record (``release.intoto.jsonl``)."""
    return ENVELOPE_NAME


def signing_error() -> str | None:
    """Why the uploaded signing key was refused, if it was."""
    return st.session_state.get(_SIGNING_ERROR_KEY)


def settings() -> ServerSettings:
    """The server's settings (:mod:`synthreview.serving`): read on each call, never from the
    session, so nothing a browser sends can change them."""
    return server_settings()


def register_location() -> str:
    """The decision register this server records in and reads: the operator's setting
    (``SYNTHREVIEW_REGISTER`` or ``.streamlit/synthreview.toml``), else the default location;
    shown on the pages, never taken from the browser."""
    return settings().register or default_register()


def register_shown() -> str:
    """:func:`register_location` as the pages show it (credentials redacted)."""
    try:
        return parse_register_url(register_location()).shown
    except ConfigError as exc:
        return f"(not usable: {exc})"


def record_in_register(
    files: dict[str, bytes], *, key: Ed25519PrivateKey | None = None
) -> AppendResult:
    """Append the decisions of the record ``files`` (:func:`record_builder`) to the server's
    register (:func:`register_location`).

    Parameters
    ----------
    files : dict of str to bytes
        The record as built in this session, signed or not.
    key : Ed25519PrivateKey, optional
        The key that signed ``files``: the records carry its key id.

    Raises
    ------
    ConfigError
        The register cannot be opened, created or written (locked, corrupt, refused, newer, or
        a file that is not a synthreview register).
    """
    return append_records(register_location(), records_of_release(files, key=key))


def register_history(
    *, candidate: str | None = None, inputs_sha256: str | None = None
) -> list[RegisterRecord]:
    """The server's register, read only (:func:`register_location`; nothing created or changed).

    Raises
    ------
    ConfigError
        No register yet, a file that is not a synthreview register, or a refused connection.
    """
    return history(register_location(), candidate=candidate, inputs_sha256=inputs_sha256)


def register_chain_check() -> ChainCheck:
    """The server's register's hash chain recomputed, read only (``history --check``).

    Raises
    ------
    ConfigError
        As :func:`register_history`.
    """
    return check_chain(register_location())


def allowed_generator(spec: str | None) -> None:
    """Refuse a generator this server does not allow (:mod:`synthreview.serving`): only the
    installed ones unless the operator opted in to free ``module:function`` names. Nothing is
    imported for a refused name.

    Raises
    ------
    ConfigError
        ``spec`` is not installed (and free names are not allowed), or cannot be loaded.
    """
    if spec is not None:
        load_generator(spec, allow_paths=settings().allow_generator_paths)


def generator_choices() -> list[str]:
    """The generators the Privacy page offers: the installed ones, by name."""
    return list(installed_generators())


def verify_review_zip(data: bytes, public_key: bytes) -> Verification:
    """``signing.verify_files`` on the files of an uploaded review ZIP, with a PEM public key.

    Raises
    ------
    ConfigError
        The ZIP (:func:`read_review_zip`) or the public key cannot be read.
    """
    key = load_public_key(_key_bytes(public_key, what="the public key"))
    return verify_files(read_review_zip(data), key)


def _store_projection(review: Review, options: ReviewOptions, context: Context | None) -> None:
    """PCA of the encoded rows for the Fidelity page, computed with the context (not on open)."""
    if context is None:
        return
    try:
        encoded = context.encoded or context.embedded
        others = {s: x for s, x in encoded.items() if s != "real"}
        frame: pd.DataFrame | str = pca_projection(
            encoded["real"], others, max_points=1500, seed=seed()
        )
    except Exception as exc:  # a failed projection must not stop the review
        frame = error_message(exc)
    st.session_state.setdefault(_PROJECTIONS_KEY, {})[_context_key(review, options)] = frame


def sidebar_status() -> None:
    """Sidebar panel on every page: the Run review button and what is current or stale."""
    review = get_review()
    if review is None or opened_record() is not None:  # a record is evidence: nothing to run
        return
    with st.sidebar.container(key="review_status"):
        run_button(key="run_review")
        states = status()
        words = {"current": "up to date", "stale": "out of date", "missing": "not computed"}
        for section, state in states.items():
            extra = ""
            if state == "stale":
                extra = " (changed: " + ", ".join(changed_options(section)) + ")"
            st.caption(f"{SECTION_LABELS[section]}: {words[state]}{extra}")
        note = run_note()
        if note:
            st.caption(note)
            st.page_link("pages/overview.py", label="See the decisions", icon=":material/traffic:")


# --- meeting countersign ---
def server_trusted_keys() -> dict[str, Any]:
    """The keys this server trusts: ``synthreview show``'s key and ``$SYNTHREVIEW_TRUST``'s."""
    return trusted_keys(os.environ.get(OPEN_KEY_ENV) or None)


def meeting_countersign(name: str, *, reviewers: str, decision: str | None, reason: str) -> Any:
    """Countersign ``name`` of the opened record with the session's key, beside the record on the
    server, into the server's register (``record.countersign.countersign_folder``); every page
    then shows the countersigned record. Raises ``ConfigError`` with why it was refused."""
    record, key = opened_record(), signing_key()
    if record is None or key is None:
        raise ConfigError("open a record and load the meeting's private key (above) first")
    if decision is None:
        raise ConfigError("choose the meeting's decision first (blank until the meeting chooses)")
    signoff = meeting_signoff(record, name, decision=decision, reason=reason,
                              reviewers=reviewers_from_text(reviewers))  # fmt: skip
    done = countersign_folder(record, [signoff], key, register=register_location(),
                              trusted=server_trusted_keys())  # fmt: skip
    st.session_state[OPENED_KEY] = done.record
    st.session_state.pop(_RECORD_SUMMARY_KEY, None)
    return done


def open_register_row(seq: int) -> ReviewRecord:
    """Open the evidence of register record ``seq`` (the folder the register states, never one
    named by the browser) for every page; ``EvidenceNotFound`` says why not."""
    row = next((r for r in register_history() if r.seq == seq), None)
    if row is None:
        raise ConfigError(f"the register holds no record #{seq}")
    return open_record(open_evidence(row, key=os.environ.get(OPEN_KEY_ENV) or None))
