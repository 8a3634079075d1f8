"""Overview: the decision a release meeting reads first, one line per candidate, then the why.

Widgets and layout only: decisions, reasons and colours come from ``synthreview.judgement``,
explanations from the metric registry, the frontier from ``synthreview.figures.frontier``.
Badges are CSS (no emoji: they render as empty boxes without an emoji font).
"""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

import app_state
from synthreview.figures.audit import fidelity_curves, scorecard_frame
from synthreview.figures.explain import (
    MISSING,
    format_metric,
    headline_readings,
    metric_help,
    rule_reading,
    short_reason,
)
from synthreview.figures.frontier import UTILITY_AXES, frontier_points, privacy_utility_frontier
from synthreview.figures.style import FONT_SIZE
from synthreview.figures.text import markdown_text
from synthreview.judgement.decision import rule_label
from synthreview.judgement.policy import HEADLINES, headline_scores
from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.record.session import POLICY_UPLOAD_KEY, PRESENTATION_KEY

session = app_state.session()  # this browser session's review

# local CSS only (no fonts or files from the network). A decision line is one paragraph: the
# badge and the name open it and the reason runs on after them, wrapping under the badge, so
# nothing scrolls sideways and no width is left empty. Beside them as a flex item (in 24 rem of
# a 1280x720 screen) or below them on a row of its own, a curated review's five reasons (the
# table demo's, live or opened) took 17 to 19 lines and ran the last decision below the screen.
DECISION_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.5rem; }
.sr-decisions { display: flex; flex-direction: column; gap: 0.35rem; margin: 0.2rem 0 0.6rem; }
.sr-line { display: block; line-height: 1.45; padding: 0.3rem 0.6rem; border-radius: 0.4rem;
  background: #fafafa; border: 1px solid #d1d5db; }
.sr-badge { display: inline-block; min-width: 13.5rem; text-align: center; font-weight: 700;
  letter-spacing: 0.02em; padding: 0.05rem 0.5rem; border-radius: 0.3rem; font-size: 0.95rem;
  margin-right: 0.8rem; }
.sr-name { font-weight: 700; font-size: 1.05rem; overflow-wrap: anywhere; margin-right: 0.8rem; }
.sr-reason { font-size: 1rem; overflow-wrap: anywhere; }
.st-key-overview_slide_2 [data-testid="stTable"] :is(td, th) { overflow-wrap: anywhere; }
</style>"""
#: the Overview's own sizes in presentation mode (app_state.PRESENTATION_CSS hides the sidebar
#: and enlarges the type of every page)
PRESENTATION_CSS = """<style>
.sr-decisions { gap: 0.25rem; }
.sr-line { padding: 0.2rem 0.6rem; }
.sr-badge { font-size: 1.2rem; min-width: 17rem; }
.sr-name { font-size: 1.35rem; } .sr-reason { font-size: 1.2rem; line-height: 1.35; }
div[class*="st-key-overview_slide_"] { min-height: 92vh; justify-content: center; }
/* the decisions open the first screen: at the top, never centred below empty space */
div.st-key-overview_slide_0 { min-height: 0; justify-content: flex-start; }
.st-key-overview_slide_0 h3 { padding-top: 0; }
</style>"""


def decision_html(decisions, *, short: bool = False) -> str:
    """The decision lines as HTML; every user-supplied string is escaped. ``short``: each
    long reason as :func:`short_reason` (presentation mode's first screen)."""
    lines = []
    for name, decision in decisions.items():
        look = DECISION_STYLE[decision.outcome]
        reason = short_reason(decision) if short else decision.reason
        lines.append(
            f'<div class="sr-line"><span class="sr-badge" style="{look.css()}">'
            f'{html.escape(look.label)}</span><span class="sr-name">{html.escape(name)}</span>'
            f'<span class="sr-reason">{html.escape(reason)}</span></div>'
        )
    return '<div class="sr-decisions">' + "".join(lines) + "</div>"


def key_numbers(candidates, verdicts, decisions) -> tuple[pd.DataFrame, list[str]]:
    """The headline numbers, one row per measure and one column per candidate after the holdout
    reference: a meeting has more measures than candidates, so the table grows down, not
    sideways. Each judged cell is the rule's verdict record written by
    ``figures.explain.rule_reading`` (the point, the value the rule judged, the verdict), so the
    key numbers and the scorecard cannot disagree; a cell whose point alone is beyond the line
    its verdict is within points to a note (returned, in order). Names and labels are
    Markdown-escaped (``st.table`` renders its cells)."""
    columns: dict[str, list[str]] = {}
    references: dict[str, float | None] = {}
    notes: list[str] = []
    for name, candidate in candidates.items():
        scores = headline_scores(candidate)
        readings = headline_readings(verdicts.get(name))
        for key, (_, ref) in scores.items():
            if ref is not None:
                references.setdefault(key, ref)
        cells = [DECISION_STYLE[decisions[name].outcome].label]
        for key, label in HEADLINES.items():
            reading = readings.get(key)
            if reading is None:  # the policy does not judge it: the point alone
                cells.append(format_metric(key, scores[key][0]) if key in scores else MISSING)
                continue
            cell = reading.short
            if reading.why:
                notes.append(f"{name}, {label}: {reading.why}")
                cell += f" (note {len(notes)})"
            cells.append(markdown_text(cell))
        columns[markdown_text(name)] = cells
    if references:
        reference = [""] + [format_metric(key, references.get(key)) for key in HEADLINES]
        columns = {"holdout (reference)": reference, **columns}
    measures = ["decision", *(markdown_text(label) for label in HEADLINES.values())]
    return pd.DataFrame(columns, index=pd.Index(measures, name="measure")), notes


def copies_line(name: str) -> None:
    """The candidate's copies counted once (``session.copy_counts``), the breakdown one
    click away."""
    counts = session.copy_counts(name)
    if counts is None:
        return
    st.markdown(f"**{markdown_text(name)}**: {markdown_text(counts.sentence())}")
    with st.expander(f"Copies in {markdown_text(name)}, counted once"):
        st.table(pd.DataFrame(counts.rows(), columns=["rows", "count"]).set_index("rows"))


# an opened record needs no data; its Re-run control goes below the decisions (as a live
# review's Re-run the review does), so the banner above them is its signature line only
review = app_state.require_review_or_record(record_controls=False)
present = st.toggle(
    "Presentation mode",
    key=PRESENTATION_KEY,
    help="Large type, no sidebar or controls, one figure per screen; a row of links at the "
    "top of every page opens the other pages.",
)
st.html(DECISION_CSS)
if present:
    st.html(PRESENTATION_CSS)

policy = session.get_policy()
# serialised, judged and decided once per stored result (app_state), not on every page open
summary = app_state.get_summary()
report = summary.report
candidates = summary.content
verdicts = summary.verdicts
curated = summary.curated
decisions = summary.decisions

with st.container(key="overview_slide_0"):
    st.subheader("Release decisions")
    st.html(decision_html(decisions, short=present))
    shortened = [n for n, d in decisions.items() if present and short_reason(d) != d.reason]
    if shortened:
        st.markdown(
            "\n".join(
                f"- **{markdown_text(n)}**: {markdown_text(decisions[n].reason)}" for n in shortened
            ),
            help="The whole reason of each decision named by its rule above.",
        )
    if not summary.current:
        app_state.run_button(key="run_review_overview", label="Re-run the review")
    app_state.record_rerun_control()
    st.caption(
        f"Policy: {markdown_text(policy.name)}. Each line gives the decision and the reason "
        "that decided it; the evidence is below and on the Fidelity, Privacy and Utility pages."
    )
    if report.sampling is not None:
        st.caption(markdown_text(report.sampling.sentence()))
    context = session.get_context()
    with st.container(key="overview_context"):
        if context is None:
            st.caption(
                "No release context (Data page): judged under the strictest thresholds, "
                "public access (fail closed)."
            )
        else:
            st.text(
                f"Release context: {context.access} access for {context.recipient}; purpose: "
                f"{context.purpose}; threat model: {context.threat_model}"
                + (f"; expires {context.expires}" if context.expires else "")
            )

for name, candidate in report.candidates.items():
    for section, message in candidate.errors.items():
        app_state.show_error(message, what=f"{section.capitalize()} of {name}")
for name, message in session.curation_errors().items():
    app_state.show_error(message, what=f"The curated version of {name}")

with st.container(key="overview_slide_1"):
    st.subheader("Privacy against utility")
    axis = "tstr_trtr_ratio"
    if not present:
        axis = st.radio(
            "Utility axis",
            list(UTILITY_AXES),
            format_func=lambda a: "TSTR / TRTR" if a == "tstr_trtr_ratio" else "2-way marginals",
            horizontal=True,
            key="overview_frontier_axis",
            help=metric_help("tstr_trtr_ratio") + " / " + metric_help("k_marginal"),
        )
    points = session.view(
        "overview_frontier_points",
        lambda: frontier_points(candidates, curated=curated, utility=axis),
        axis,
    )

    def frontier_figure():
        # names are placed for the text size drawn (collision-free at every screen width)
        size = 22 if present else FONT_SIZE
        figure = privacy_utility_frontier(
            points, utility=axis, height=720 if present else 420, font_size=size
        )
        if present:
            figure.update_layout(font={"size": size})
        return figure

    fig = session.view("overview_frontier", frontier_figure, axis, present)
    st.plotly_chart(fig, key="overview_frontier")
    missing = [n for n in candidates if n not in {p.candidate for p in points}]
    st.caption(
        "Up and to the left is better. Privacy risk: the share of training rows the strongest "
        "membership-inference attack finds at 1 % false alarms (an attacker without advantage "
        "finds 1 %). Utility: the worst model's TSTR / TRTR ratio (1 = as useful as real data) "
        "or the 2-way marginal score (of 1000). The grey diamond is real data."
        + (
            f" Not drawn (a number is missing): {markdown_text(', '.join(missing))}."
            if missing
            else ""
        )
    )

with st.container(key="overview_slide_2"):
    st.subheader("Key numbers beside the holdout reference")
    # a static table whose cells wrap: it fits the page at 1280 px however many candidates
    numbers, notes = key_numbers(candidates, verdicts, decisions)
    st.table(numbers)
    for i, note in enumerate(notes, start=1):
        st.caption(f"Note {i}. {markdown_text(note)}")
    # "see the errors above" only when the page shows errors
    shown_errors = any(c.errors for c in report.candidates.values())
    shown_errors = shown_errors or bool(session.curation_errors())
    why_missing = "see the errors above or the section's page"
    if not shown_errors:
        why_missing = "its section's page says why"
    st.caption(
        f"{MISSING} means not measured ({why_missing}). Each number is the point estimate, then "
        "the value the release rule judged and its verdict. The "
        "holdout column is what a fresh real sample scores: the level a perfect generator "
        "reaches. The Glossary page explains every measure."
    )
    if any(session.copy_counts(n) is not None for n in candidates):
        st.subheader("Copies of real records")
        for name in candidates:
            copies_line(name)

if not present:  # controls are not drawn at all while presenting
    with st.expander("Every rule, per candidate"):
        # a static table whose cells wrap: no label is cut at 1280 px
        with st.container(key="overview_scorecard"):
            st.table(session.view("overview_scorecard", lambda: scorecard_frame(verdicts)))
        for name, verdict in verdicts.items():
            # wrapped lines (a preformatted block scrolls sideways at 1280 px)
            st.markdown(f"**{markdown_text(name)}**\n\n" + "\n".join(
                f"- {markdown_text(rule_label(r.rule))}: {markdown_text(rule_reading(r).text)} "
                f"({markdown_text(r.reason)})"
                for r in verdict.rules
            ))  # fmt: skip
    with st.expander("Release policy", expanded=False):
        st.file_uploader(
            "Policy file (TOML); rules it leaves out keep the defaults",
            type=["toml"],
            key=POLICY_UPLOAD_KEY,
            on_change=session.load_uploaded_policy,
            disabled=session.opened_record() is not None,
            help="An opened record keeps the policy it was judged by: Re-run with these inputs "
            "to judge under another."
            if session.opened_record() is not None
            else None,
        )
        if session.policy_error():
            st.error(markdown_text(session.policy_error()))
        st.caption(f"Policy in use: {markdown_text(policy.name)} ({markdown_text(policy.source)})")
        st.dataframe(
            pd.DataFrame.from_dict(policy.to_dict()["rules"], orient="index"),
            key="overview_policy_table",
        )

curves = {n: c for n, c in candidates.items() if c.get("fidelity")}
for i, which in enumerate(("alpha", "beta"), start=3):
    if not curves:
        break
    with st.container(key=f"overview_slide_{i}"):

        def curve_figure(which=which):
            figure = fidelity_curves(curves, curve=which)
            if present:
                figure.update_layout(font={"size": 24}, height=720)
            return figure

        fig = session.view("overview_curve", curve_figure, which, present)
        st.plotly_chart(fig, key=f"overview_curve_{which}")
