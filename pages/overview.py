"""Overview: the table a release meeting looks at, one row per candidate with policy lights."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import app_state
from synthreview.errors import ConfigError
from synthreview.figures.audit import fidelity_curves, scorecard_table
from synthreview.judgement.policy import (
    HEADLINES,
    apply_policy,
    headline_scores,
    load_policy,
    parse_policy,
)

POLICY_KEY = "release_policy"
SECTIONS = ("fidelity", "privacy", "utility")
LIGHTS = {"pass": "🟢", "warn": "🟡", "fail": "🔴", "n/a": "⚪"}
# local CSS only (no fonts or files from the network): big type, no sidebar or toolbar, and
# each figure block at least one screen high so scrolling moves one figure per screen
PRESENTATION_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
header[data-testid="stHeader"], [data-testid="stToolbar"] { display: none !important; }
[data-testid="stMainBlockContainer"] { font-size: 1.45rem; max-width: 100%; }
[data-testid="stMainBlockContainer"] h1 { font-size: 3rem; }
[data-testid="stMainBlockContainer"] :is(h2, h3) { font-size: 2.2rem; }
[data-testid="stTable"] td, [data-testid="stTable"] th { font-size: 1.45rem; padding: 0.6rem; }
div[class*="st-key-overview_slide_"] { min-height: 92vh; justify-content: center; }
</style>"""


def current_policy():
    """The policy uploaded in this session, or the shipped default."""
    return st.session_state.get(POLICY_KEY) or load_policy()


def _load_uploaded_policy() -> None:
    upload = st.session_state.get("overview_policy_upload")
    st.session_state.pop("_policy_error", None)
    st.session_state[POLICY_KEY] = None
    if upload is not None:
        try:
            st.session_state[POLICY_KEY] = parse_policy(upload.getvalue(), source=upload.name)
        except ConfigError as exc:
            st.session_state["_policy_error"] = str(exc)


def _cell(value: float | None, reference: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" + (f"  (holdout {reference:.3g})" if reference is not None else "")


review = app_state.require_review()
present = st.toggle(
    "Presentation mode",
    key=app_state.PRESENTATION_KEY,
    help="Large type, no sidebar or controls, one figure per screen.",
)
if present:
    st.html(PRESENTATION_CSS)
st.header("Overview")

if not present:  # controls are not drawn at all while presenting
    with st.expander("Release policy", expanded=False):
        st.file_uploader(
            "Policy file (TOML); rules it leaves out keep the defaults",
            type=["toml"],
            key="overview_policy_upload",
            on_change=_load_uploaded_policy,
        )
        if st.session_state.get("_policy_error"):
            st.error(st.session_state["_policy_error"])
        policy = current_policy()
        st.caption(f"Policy in use: **{policy.name}** ({policy.source})")
        st.dataframe(
            pd.DataFrame.from_dict(policy.to_dict()["rules"], orient="index"),
            key="overview_policy_table",
        )
policy = current_policy()

report = app_state.get_report(SECTIONS)
content = report.to_dict()
verdicts = {name: apply_policy(policy, c) for name, c in content["candidates"].items()}

rows = []
references: dict[str, float | None] = {}
for name, candidate in content["candidates"].items():
    scores = headline_scores(candidate)
    for key, (_, ref) in scores.items():
        if ref is not None:
            references.setdefault(key, ref)
    rows.append(
        {
            "candidate": name,
            "verdict": f"{LIGHTS[verdicts[name].overall]} {verdicts[name].overall}",
            **{HEADLINES[k]: _cell(v, None) for k, (v, _) in scores.items()},
            "failed rules": ", ".join(r.rule for r in verdicts[name].failed) or "–",
        }
    )
if references:
    rows.insert(
        0,
        {
            "candidate": "holdout (reference)",
            "verdict": "",
            **{HEADLINES[k]: _cell(references.get(k), None) for k in HEADLINES},
            "failed rules": "",
        },
    )
table = pd.DataFrame(rows).set_index("candidate")

with st.container(key="overview_slide_0"):
    st.subheader("Candidates against the holdout reference")
    if present:
        st.table(table)
    else:
        st.dataframe(table, key="overview_table")
    st.caption(
        "Verdict lights: "
        + ", ".join(f"{LIGHTS[v]} {v}" for v in LIGHTS)
        + f". Policy: {policy.name}. The holdout row shows what a fresh real sample scores."
    )

for name, candidate in report.candidates.items():
    for section, message in candidate.errors.items():
        app_state.show_error(message, what=f"{section.capitalize()} of {name}")

font = {"size": 24} if present else {}
with st.container(key="overview_slide_1"):
    st.subheader("Policy scorecard")
    fig = scorecard_table(verdicts)
    if present:
        fig.update_layout(font=font, height=fig.layout.height * 1.6)
    st.plotly_chart(fig, key="overview_scorecard")
    if not present:
        with st.expander("Rule details"):
            for name, v in verdicts.items():
                st.markdown(f"**{name}**: {LIGHTS[v.overall]} {v.overall}")
                st.text("\n".join(r.message for r in v.rules))

curves = {n: c for n, c in content["candidates"].items() if c.get("fidelity")}
for i, which in enumerate(("alpha", "beta"), start=2):
    if not curves:
        break
    with st.container(key=f"overview_slide_{i}"):
        fig = fidelity_curves(curves, curve=which)
        if present:
            fig.update_layout(font=font, height=720)
        st.plotly_chart(fig, key=f"overview_curve_{which}")
