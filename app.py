"""synthreview dashboard entrypoint: page config and navigation only.

Navigation icons are Material symbols bundled with Streamlit (no network); the page icon is an
emoji because a Material page icon makes the browser fetch the favicon from a font CDN (the
emoji only names the browser tab; no emoji is drawn inside the app).
"""

import streamlit as st

st.set_page_config(page_title="synthreview", page_icon="🛡️", layout="wide")
page = st.navigation(
    {
        "Review": [
            st.Page("pages/data.py", title="Data", icon=":material/folder_open:", default=True),
            st.Page("pages/overview.py", title="Overview", icon=":material/traffic:"),
        ],
        "Evidence": [
            st.Page("pages/fidelity.py", title="Fidelity", icon=":material/target:"),
            st.Page("pages/privacy.py", title="Privacy", icon=":material/lock:"),
            st.Page("pages/utility.py", title="Utility", icon=":material/build:"),
            st.Page("pages/glucose.py", title="Glucose", icon=":material/monitor_heart:"),
        ],
        "Release": [
            st.Page("pages/audit.py", title="Audit & export", icon=":material/inventory_2:"),
            st.Page("pages/history.py", title="History", icon=":material/history:"),
        ],
        "Help": [st.Page("pages/glossary.py", title="Glossary", icon=":material/menu_book:")],
    }
)
# every page starts with app_state.page_start() (the pending review run, the sidebar status)
page.run()
