"""The dashboard's only Streamlit-aware helper: session keys and cached engine calls.

Everything a reviewer loads or computes lives in ``st.session_state`` of their own session
(never in a cache shared across sessions), keyed on full-content digests: Streamlit's own
hashing samples large frames and could hand back a stale result (streamlit-notes P1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import streamlit as st

from synthreview.report import Context, Report, ReviewOptions, evaluate, prepare
from synthreview.schema import Review

REVIEW_KEY = "review"
REPORTS_KEY = "_reports"
CONTEXTS_KEY = "_contexts"
SEED_KEY = "seed"
PRESENTATION_KEY = "presentation_mode"


def set_review(review: Review | None) -> None:
    """Store the loaded review (``None`` clears it) and drop results of the previous one."""
    st.session_state[REVIEW_KEY] = review
    st.session_state[REPORTS_KEY] = {}
    st.session_state[CONTEXTS_KEY] = {}


def get_review() -> Review | None:
    """The review loaded on the Data page, or ``None``."""
    return st.session_state.get(REVIEW_KEY)


def require_review() -> Review:
    """Return the loaded review, or explain how to load one and stop the page."""
    review = get_review()
    if review is None:
        st.warning("No data loaded yet. Load the demo or upload your files on the Data page.")
        st.page_link("pages/data.py", label="Go to the Data page", icon="📂")
        st.stop()
    return review


def seed() -> int:
    """The review's seed (set on the Data page)."""
    return int(st.session_state.get(SEED_KEY, 0))


def review_digest(review: Review) -> str:
    """Full-content digest of every input table plus the schema."""
    h = hashlib.sha256()
    tables = [review.real, review.holdout, *review.synthetic.values()]
    for table in tables:
        if table is not None:
            h.update(f"{table.role}:{table.name}:{table.sha256};".encode())
    h.update(repr(sorted(review.schema.kinds.items())).encode())
    h.update(review.kind.encode())
    return h.hexdigest()


def _context(review: Review, options: ReviewOptions, progress) -> Context:
    key = (review_digest(review), options.embedding, seed())
    contexts = st.session_state.setdefault(CONTEXTS_KEY, {})
    if key not in contexts:
        contexts[key] = prepare(review, options=options, seed=seed(), progress=progress)
    return contexts[key]


def get_report(sections: Sequence[str], options: ReviewOptions | None = None) -> Report:
    """Compute (once per session, data, options and seed) and return the requested sections.

    Sections already computed for the same key are reused; missing ones are computed with a
    progress bar and merged in.
    """
    review = require_review()
    options = options or ReviewOptions()
    key = (review_digest(review), options, seed())
    reports = st.session_state.setdefault(REPORTS_KEY, {})
    report: Report | None = reports.get(key)
    wanted = ("glucose",) if review.kind == "traces" else tuple(sections)
    missing = [s for s in wanted if report is None or s not in report.sections]
    if not missing:
        assert report is not None
        return report
    bar = st.progress(0.0, text="Computing " + ", ".join(missing) + " …")

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

    context = None
    if review.kind == "table" and any(s in ("fidelity", "privacy") for s in missing):
        context = _context(review, options, lambda f, m: progress(0.3 * f, m))
    new = evaluate(review, sections=missing, options=options, seed=seed(), progress=progress,
                   context=context)
    bar.empty()
    report = new if report is None else report.merged(new)
    reports[key] = report
    return report


def show_error(message: str, *, what: str = "This metric") -> None:
    """Draw a failed metric's error in place, so the rest of the page still works."""
    st.error(f"{what} could not be computed: {message}")


def presentation_mode() -> bool:
    """Whether the screen-sharing presentation mode is on."""
    return bool(st.session_state.get(PRESENTATION_KEY, False))
