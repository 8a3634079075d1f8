"""The dashboard's only Streamlit-aware helper: the session, every page's start, the review run.

A review is computed once, explicitly: **Run review** computes every stale (candidate, section)
step with progress, an estimate of the time left and a Cancel button, storing each step at once;
pages only read what is stored, and a changed option makes the sections that read it *stale*
(shown under a warning until the next run). An opened review record is shown instead, whole,
and nothing is recomputed. The session itself is a
:class:`~synthreview.record.session.ReviewSession` over ``st.session_state`` (never a cache
shared across sessions): its keys, its logic and its results live in the engine
(``synthreview.record``); this module draws.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from synthreview.figures.text import markdown_text
from synthreview.io.schema import Review
from synthreview.options import ReviewOptions
from synthreview.record.countersign import countersigned_decisions
from synthreview.record.live import RELEASE_STEPS, StepResult, needed_sections
from synthreview.record.progress import (
    SECTION_LABELS,
    RunProgress,
    decision_line,
    format_seconds,
)
from synthreview.record.session import PRESENTATION_KEY, ReviewSession
from synthreview.record.summary import ReviewSummary
from synthreview.release.audit import Thresholds
from synthreview.release.controls import PlantedControls
from synthreview.release.pipeline import CandidateRelease
from synthreview.review import Report

#: the run's progress panel, fixed to the top right of the window while a run goes
RUN_PANEL_CSS = (
    "<style>.st-key-review_run_panel{position:fixed;top:4.5rem;right:1.5rem;z-index:1000;"
    "width:min(34rem,60vw);max-height:80vh;overflow:auto;background:#ffffff;"
    "box-shadow:0 2px 12px rgba(0,0,0,.25);}</style>"
)
#: the dashboard's pages by group: (file, title, Material icon bundled with Streamlit). app.py
#: navigates over them; presentation mode's page switcher links to the same pages
PAGES = {
    "Review": (("pages/data.py", "Data", ":material/folder_open:"),
               ("pages/overview.py", "Overview", ":material/traffic:")),
    "Evidence": (("pages/fidelity.py", "Fidelity", ":material/target:"),
                 ("pages/privacy.py", "Privacy", ":material/lock:"),
                 ("pages/utility.py", "Utility", ":material/build:"),
                 ("pages/glucose.py", "Glucose", ":material/monitor_heart:")),
    "Release": (("pages/audit.py", "Audit & export", ":material/inventory_2:"),
                ("pages/history.py", "History", ":material/history:")),
    "Help": (("pages/glossary.py", "Glossary", ":material/menu_book:"),),
}  # fmt: skip
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
#: progress redraws at most this often (each redraw is a websocket message)
REDRAW_SECONDS = 0.25


def session() -> ReviewSession:
    """This browser session's review (``st.session_state``): what every page reads."""
    return ReviewSession(st.session_state)


# --- every page -------------------------------------------------------------------------------
def page_start(*, record_controls: bool = True) -> None:
    """What every page does first: continue a requested review run, then the sidebar status and
    an opened record's banner. Pages call it (through :func:`require_review`), not ``app.py``:
    AppTest runs a page without the entrypoint, and the run must behave the same there.
    ``record_controls``: the banner draws the record's caption and Re-run control (the
    Overview draws them below its decisions, :func:`record_rerun_control`)."""
    if PRESENTATION_KEY in st.session_state:
        # a widget's value is dropped on a page that does not draw it; presentation mode is
        # switched on the Overview and must hold on every page (Streamlit's documented re-set)
        st.session_state[PRESENTATION_KEY] = st.session_state[PRESENTATION_KEY]
    st.html(TABLE_CSS)
    session().open_from_environment()
    if session().presentation_mode():
        page_switcher()
    execute_pending_run()
    if session().run_just_done():
        # a toast floats: the Overview's decision lines keep their place in the first screen
        st.toast("The review is computed: every decision is current. See the Overview.")
    sidebar_status()
    record_banner(controls=record_controls)


def require_review_or_record(*, record_controls: bool = True) -> Review | None:
    """:func:`require_review` for a page that renders an opened record: the loaded review, or
    ``None`` while a record is open (the page reads it through :func:`get_report`).
    ``record_controls`` as :func:`page_start`'s."""
    session().open_from_environment()
    if session().opened_record() is not None:
        page_start(record_controls=record_controls)
        return None
    return require_review()


def require_review() -> Review:
    """Start the page (:func:`page_start`); return the loaded review, or explain how to load
    one and stop the page."""
    page_start()
    review = session().get_review()
    if review is None and session().opened_record() is not None:
        inputs_needed("This page")
        st.stop()
    if review is None:
        st.warning("No data loaded yet. Load the demo or upload your files on the Data page.")
        st.page_link("pages/data.py", label="Go to the Data page", icon=":material/folder_open:")
        st.stop()
    return review


def record_banner(*, controls: bool = True) -> None:
    """Every page, while a record is open: who signed it, or NOT VERIFIED and why, in red;
    with ``controls``, then :func:`record_rerun_control`."""
    here = session()
    if here.open_error():
        st.error(f"The review could not be opened: {here.open_error()}")
    record, match = here.opened_record(), here.record_match()
    if record is None or match is None:
        return
    verified = record.verified
    with st.container(key="record_verification"):
        if verified is not None and verified.ok:
            st.success(verified.line)
        else:
            line = verified.line if verified is not None else "NOT VERIFIED: not checked"
            st.markdown(f":red[**{markdown_text(line)}**]")
        for notice in record.notices:
            st.warning(markdown_text(notice))
        if controls:
            record_rerun_control()
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


def record_rerun_control() -> None:
    """An opened record's caption and *Re-run with these inputs* control (nothing without an
    opened record, or in presentation mode).

    Presentation mode projects the decisions first (every one on the first screen at
    1280x720): the caption and the Re-run control are a reviewer's, not a meeting's. The
    Overview draws them below its decisions, where a live review's *Re-run the review* is:
    above them, with the signature line, they pushed an opened record's decisions 150 px down
    (the table demo's last one to 913 px of a 720 px screen).
    """
    here = session()
    record, match = here.opened_record(), here.record_match()
    if record is None or match is None or here.presentation_mode():
        return
    st.caption(
        f"Opened review record of {markdown_text(record.generated_at)}: evidence, not a "
        "draft. Controls that would change its numbers are disabled; Re-run with these "
        "inputs (load them on the Data page) computes a new record."
    )
    ready = (
        "Its input files are loaded."
        if match.ok
        else ("Load its input files on the Data page first: " + here.record_inputs_needed())
    )
    st.button(
        "Re-run with these inputs", key="record_rerun", on_click=here.rerun_with_inputs,
        disabled=not match.ok, help="Computes a new review of the record's input files "
        "with its options, seed, policy and release context; the record stays as it is. "
        + ready,
    )  # fmt: skip


def shown_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as ``st.dataframe`` may send it: without ``attrs``.

    Streamlit sends a frame as Arrow, whose pandas metadata holds ``attrs`` as JSON; an audit
    table's calibration there holds inf and NaN, written ``Infinity`` and ``NaN``, which the
    browser's JSON parser refuses: the table became an error with its stack, hidden in the
    collapsed expander that held it.
    """
    shown = frame.copy(deep=False)
    shown.attrs = {}
    return shown


def inputs_needed(what: str) -> None:
    """Say that ``what`` (a raw-row view of the open record) needs the record's input files,
    and which of them are not loaded; nothing else is drawn."""
    match = session().record_match()
    st.info(
        markdown_text(
            f"{what} needs the review's input files, which a stored record does not hold: "
            f"{session().record_inputs_needed()}. Load these files on the Data page (they are "
            f"accepted only when their sha256 equals the record's). "
            f"{match.sentence() if match else ''}".strip()
        )
    )


def page_switcher() -> None:
    """Presentation mode's navigation: the sidebar is hidden, so a compact row of links to every
    page (and a way out of presentation mode) opens each page."""
    st.html(PRESENTATION_CSS)
    with st.container(horizontal=True, gap="small", key="presentation_pages"):
        for pages in PAGES.values():
            for path, title, _ in pages:  # words only: the row stays one line at 1280 px
                st.page_link(path, label=title)
        st.button(
            "Leave presentation", key="presentation_leave", on_click=session().end_presentation
        )


def sidebar_status() -> None:
    """Sidebar panel on every page: the Run review button and what is current or stale."""
    here = session()
    if here.get_review() is None or here.opened_record() is not None:  # a record: no run
        return
    with st.sidebar.container(key="review_status"):
        run_button(key="run_review")
        words = {"current": "up to date", "stale": "out of date", "missing": "not computed"}
        for section, state in here.status().items():
            extra = ""
            if state == "stale":
                extra = " (changed: " + ", ".join(here.changed_options(section)) + ")"
            st.caption(f"{SECTION_LABELS[section]}: {words[state]}{extra}")
        if here.run_note():
            st.caption(here.run_note())
            st.page_link("pages/overview.py", label="See the decisions", icon=":material/traffic:")


# --- what a page shows ------------------------------------------------------------------------
def get_report(sections: Sequence[str], options: ReviewOptions | None = None) -> Report:
    """The stored report of ``sections`` for a page (an open record's, whole); never computes.

    When a section has never been computed, the page shows a **Run review** button and stops;
    when it is stale (an option changed), the page shows the previous numbers under a warning
    that names the changed options.
    """
    here = session()
    record = here.opened_record()
    if record is not None:
        return record.report  # evidence: every section as filed, nothing recomputed
    if here.get_review() is None:
        return require_review()  # draws the explanation and stops
    report, stale = here.stored_report(sections, options)
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
        changed = ", ".join(session().changed_options(section, options)) or "inputs"
        st.warning(
            f"{SECTION_LABELS[section]} results are out of date (changed: {changed}); the "
            "numbers below are from the previous run. Press Run review to recompute only the "
            "stale sections."
        )


def get_summary(options: ReviewOptions | None = None) -> ReviewSummary:
    """``ReviewSession.review_summary`` for a page: like :func:`get_report`, explains a missing
    run (and stops the page) or warns about stale sections."""
    here = session()
    if here.opened_record() is not None:
        return here.review_summary()
    review = here.get_review()
    if review is None:
        require_review()  # draws the explanation and stops
    summary = here.review_summary(options)
    if summary is None:
        get_report(needed_sections(review), options)  # draws the Run review prompt and stops
    _warn_stale(summary.stale, options)
    return summary


def section_results(report: Report, section: str, *, what: str | None = None) -> dict[str, Any]:
    """Each candidate's ``section`` result, ``{name: result}`` in order; a candidate whose
    section failed shows its error instead."""
    found: dict[str, Any] = {}
    for name, candidate in report.candidates.items():
        if section in candidate.errors:
            show_error(candidate.errors[section], what=f"{what or section.capitalize()} of {name}")
        elif getattr(candidate, section) is not None:
            found[name] = getattr(candidate, section)
    return found


def show_error(message: str, *, what: str = "This metric") -> None:
    """Draw a failed metric's error in place, so the rest of a page still works; ``what`` and
    ``message`` quote candidate and column names: both are shown as text."""
    st.error(markdown_text(f"{what} could not be computed: {message}"))


# --- the run -------------------------------------------------------------------------------------
def run_button(*, key: str, label: str = "Run review") -> None:
    """A primary button that requests a run of every stale section."""
    here = session()
    pending = bool(here.stale_sections()) or (
        here.live() is not None and bool(here.release_plan(here.get_options()))
    )
    st.button(
        label,
        key=key,
        type="primary",
        on_click=here.request_run,
        disabled=not pending or here.run_requested(),
        help="Computes every stale section for every candidate; pages then read the result.",
    )


Draw = Callable[..., None]


def _tracker(progress: RunProgress) -> Draw:
    """A drawing of ``progress`` (bar, sentence, step table), redrawn at most every
    :data:`REDRAW_SECONDS` unless forced."""
    bar, table, last = st.progress(0.0, text="Starting…"), st.empty(), [0.0]

    def draw(message: str = "", *, force: bool = False) -> None:
        if force or time.perf_counter() - last[0] >= REDRAW_SECONDS:
            last[0] = time.perf_counter()
            overall, text = progress.line(message)
            bar.progress(overall, text=text)
            table.dataframe(progress.frame(), hide_index=True)

    return draw


def _tracked(
    progress: RunProgress,
    draw: Draw,
    step: tuple[str, str],
    compute: Callable[[Callable[[float, str], None]], StepResult],
) -> None:
    """Run ``compute`` (given the step's progress callback) as ``step`` of the run, drawn as
    it goes; its error or the reason it was skipped is drawn in the step table."""
    progress.start(step)
    draw("starting", force=True)

    def report(fraction: float, message: str) -> None:
        progress.report(fraction)
        draw(message)

    result = compute(report)
    progress.finish(step, result.seconds, result.error, skipped=result.skipped)
    draw("done", force=True)


def execute_pending_run() -> None:
    """Run the requested review (every page, before it draws, in the main area).

    Every step is planned before the first runs (``LiveReview.run_plan``): candidate by
    candidate its sections, its audit and judgement as submitted, then its curation. Each step
    is stored as soon as it finishes, and each candidate's decision is drawn in the step table
    as soon as it is reached, labelled with what is still being computed. A click on Cancel, or
    on anything else, interrupts the running step at its next progress report (Streamlit stops
    the script); a page switch keeps the request, so the next script run continues the review.
    """
    here = session()
    live = here.live()
    if not here.run_requested() or live is None or here.opened_record() is not None:
        return
    options, seed = here.get_options(), here.seed()
    terms = here.release_terms(live.review.candidates, options)
    unreleased = [n for n, t in terms.items() if live.stored_release(n, t) is None]
    steps = live.run_plan(here.plan(options), seed=seed, options=options, releases=unreleased)
    waivers = here.session_waivers()
    run_log = here.run_log()
    run_log.clear()
    panel = st.empty()
    # pinned to the window, so the progress stays in view however far the page was scrolled
    st.html(RUN_PANEL_CSS)
    with panel.container(border=True, key="review_run_panel"):
        st.markdown("**Running the review**")
        st.button("Cancel", key="review_cancel", on_click=here.cancel_run)
        progress = RunProgress(steps, here.timings())
        draw = _tracker(progress)
        for step in steps:

            def compute(on, step=step):
                return live.compute(step, seed=seed, options=options, terms=terms, progress=on)

            _tracked(progress, draw, step, compute)
            name, section = step
            if section in RELEASE_STEPS:
                so_far = live.decision_so_far(name, terms[name], waivers=waivers)
                if so_far is not None:
                    progress.decide(name, decision_line(so_far[0], pending=so_far[1]))
                    run_log.setdefault(name, progress.decided_at[name])
                    draw("decided", force=True)
        live.mark_complete(seed=seed, options=options)
        draw("judging the candidates", force=True)
        here.review_summary(options)  # judged once here, so the first page open only reads it
    took = format_seconds(time.perf_counter() - progress.started)
    here.finish_run(f"Review computed in {took}.")
    panel.empty()


def _run_releases(progress: RunProgress, draw: Draw, report: Report, names: list[str]) -> None:
    """Release each candidate through the one pipeline as a tracked step (under its confirmed
    thresholds, reusing what an earlier release of the same numbers computed); an exception is
    the step's error, so the audit reads as not computed, never as a pass. The Audit page's
    confirmed curation (a run plans its release steps in ``LiveReview.run_plan``)."""
    here = session()
    live, options = here.loaded_live(), here.get_options()
    terms = here.release_terms(names, options)
    progress.steps = progress.steps + [(n, "release") for n in names]
    for name in names:

        def compute(on, name=name):
            return live.release(report, name, terms[name], progress=on)

        _tracked(progress, draw, (name, "release"), compute)


def confirmed_release(name: str) -> CandidateRelease | None:
    """The release of a confirmed candidate under its confirmed thresholds, computed on the
    first call after the confirmation (curated, re-evaluated with every section, re-attacked,
    judged) and stored like the run's; ``None`` while out of date."""
    here = session()
    live, summary = here.loaded_live(), here.loaded_summary()
    if not summary.stale and name in here.confirmed_curations():
        terms = here.release_terms([name], here.get_options())[name]
        if live.stored_release(name, terms) is None:
            with st.spinner("Curating, re-evaluating and re-attacking the curated set…"):
                progress = RunProgress([], {})
                _run_releases(progress, _tracker(progress), summary.report, [name])
    return here.candidate_release(name)


def controls_for(thresholds: Thresholds, *, compute: bool = False) -> PlantedControls | None:
    """The planted-leak controls under ``thresholds`` (computed, under a spinner, when
    ``compute``)."""
    found = session().controls_for(thresholds)
    if compute and found is None:
        with st.spinner("Reviewing the planted-leak controls…"):
            found = session().controls_for(thresholds, compute=True)
    return found
