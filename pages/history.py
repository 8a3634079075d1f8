"""History: earlier decisions from the decision register, and which rule verdicts changed."""

from __future__ import annotations

import streamlit as st

import app_state
from synthreview.errors import ConfigError
from synthreview.release.register import changes_frame, default_register, history, history_frame

app_state.page_start()
st.header("History")
st.caption(
    "Every review filed with `synthreview register` (a signed folder is verified first), oldest "
    "decisions included: a generator's regression shows as a rule whose verdict changed since "
    "the previous review of the same candidate name. Records are never changed; a later review "
    "is a new record that follows the earlier one."
)
where = st.text_input(
    "Register",
    value=default_register(),
    key="history_register",
    help="sqlite:///PATH, a file path, or postgresql://USER@HOST:PORT/DB (read only here)",
)
try:
    records = history(where, create=False)
except ConfigError as exc:
    st.info(app_state.escape(str(exc)))
    st.stop()
names = sorted({r.candidate for r in records})
left, right = st.columns(2)
with left:
    candidate = st.selectbox("Candidate", ["all candidates", *names], key="history_candidate")
with right:
    digest = st.text_input(
        "Input sha256",
        key="history_inputs",
        help="Only reviews with an input file of this sha256 (report.json inputs)",
    ).strip()
try:
    shown = history(
        where,
        candidate=None if candidate == "all candidates" else candidate,
        inputs_sha256=digest or None,
        create=False,
    )
except ConfigError as exc:
    st.error(app_state.escape(str(exc)))
    st.stop()
st.subheader(f"{len(shown)} decisions")
st.dataframe(history_frame(shown), hide_index=True, key="history_table")
st.subheader("Rule verdicts that changed since the previous review")
changes = changes_frame(records, candidate=None if candidate == "all candidates" else candidate)
if changes.empty:
    st.caption("No rule verdict changed between two reviews of the same candidate.")
else:
    st.dataframe(changes, hide_index=True, key="history_changes")
