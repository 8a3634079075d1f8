"""synthreview dashboard entrypoint: page config and navigation only.

The pages and their groups are ``app_state.PAGES`` (presentation mode's page switcher links to
the same list). Navigation icons are Material symbols bundled with Streamlit (no network); the
page icon is an emoji because a Material page icon makes the browser fetch the favicon from a
font CDN (the emoji only names the browser tab; no emoji is drawn inside the app).
"""

import streamlit as st

import app_state
from synthreview.record.session import start_page

st.set_page_config(page_title="synthreview", page_icon="🛡️", layout="wide")
page = st.navigation(
    {
        group: [
            st.Page(path, title=title, icon=icon, default=path == start_page())
            for path, title, icon in pages
        ]
        for group, pages in app_state.PAGES.items()
    }
)
# every page starts with app_state.page_start() (the pending review run, the sidebar status,
# presentation mode's page switcher)
page.run()
