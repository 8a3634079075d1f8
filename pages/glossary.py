"""Glossary: every metric the dashboard shows, explained from the metric registry."""

from __future__ import annotations

import streamlit as st

import app_state
from synthreview.figures.explain import glossary_frame
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
st.dataframe(
    frame,
    hide_index=True,
    key="glossary_table",
    column_config={
        "metric": st.column_config.TextColumn("metric", help="Label used on the pages"),
        "what it means": st.column_config.TextColumn(
            "what it means", help="One-line meaning", width="large"
        ),
        "better": st.column_config.TextColumn("better", help="Which direction is better"),
        "range": st.column_config.TextColumn("range", help="Possible values"),
        "the holdout value": st.column_config.TextColumn(
            "the holdout value",
            help="What the same metric computed on the holdout table tells you",
            width="large",
        ),
        "source": st.column_config.TextColumn("source", help="Paper and section"),
        "id": st.column_config.TextColumn("id", help="Name in report.json and policy files"),
    },
)
