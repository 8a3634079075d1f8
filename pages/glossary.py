"""Glossary: every metric the dashboard shows, explained from the metric registry."""

from __future__ import annotations

import streamlit as st

import app_state
from synthreview.figures.explain import glossary_frame
from synthreview.figures.text import markdown_text
from synthreview.metrics.info import SECTIONS

app_state.page_start()
st.header("Glossary")
st.caption(
    "Every number in synthreview, in plain words. The same text appears as hover help next to "
    "each number on the pages. The holdout reference is the same metric computed for real rows "
    "the generator never saw: what a perfect generator would score, so compare with it rather "
    "than with the ideal value."
)
choice = st.segmented_control("Section", ["all", *SECTIONS], default="all", key="glossary_section")
frame = glossary_frame(None if choice in (None, "all") else choice)
# text blocks, not a table: long definitions wrap at any width (a table needed horizontal
# scrolling at 1280 px); the registry's words are escaped like any other text
with st.container(key="glossary_entries"):
    for section in SECTIONS:
        entries = frame[frame["section"] == section].to_dict("records")
        if not entries:
            continue
        st.subheader(section.capitalize())
        for entry in entries:
            st.markdown(
                f"**{markdown_text(entry['metric'])}**: {markdown_text(entry['what it means'])}."
            )
            st.caption(
                markdown_text(
                    f"{entry['better'].capitalize()}; range {entry['range']}. "
                    f"Holdout value: {entry['the holdout value']}. Source: {entry['source']}. "
                    f"Name in report.json and policy files: {entry['id']}."
                )
            )
