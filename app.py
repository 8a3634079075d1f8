"""synthreview dashboard entrypoint: page config and navigation only.

Navigation icons are Material symbols bundled with Streamlit (no network); the page icon is an
emoji because a Material page icon makes the browser fetch the favicon from a font CDN.
"""

import streamlit as st

st.set_page_config(page_title="synthreview", page_icon="🛡️", layout="wide")
st.navigation(
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
            st.Page("pages/audit.py", title="Audit & export", icon=":material/inventory_2:")
        ],
    }
).run()
