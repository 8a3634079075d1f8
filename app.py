"""synthreview dashboard entrypoint: page config and navigation only."""

import streamlit as st

st.set_page_config(page_title="synthreview", page_icon="🛡️", layout="wide")
st.navigation(
    {
        "Review": [
            st.Page("pages/data.py", title="Data", icon="📂", default=True),
            st.Page("pages/overview.py", title="Overview", icon="🚦"),
        ],
        "Evidence": [
            st.Page("pages/fidelity.py", title="Fidelity", icon="🎯"),
            st.Page("pages/privacy.py", title="Privacy", icon="🔒"),
            st.Page("pages/utility.py", title="Utility", icon="🧰"),
            st.Page("pages/glucose.py", title="Glucose", icon="🩸"),
        ],
        "Release": [st.Page("pages/audit.py", title="Audit & export", icon="📦")],
    }
).run()
