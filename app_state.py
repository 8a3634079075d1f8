"""The dashboard's only Streamlit-aware helper: session keys and cached engine calls.

Everything a reviewer loads or computes lives in ``st.session_state`` of their own session
(never in a cache shared across sessions), keyed on full-content digests: Streamlit's own
hashing samples large frames and could hand back a stale result (streamlit-notes P1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import streamlit as st

from synthreview.io.schema import Review
from synthreview.options import ReviewOptions, default_options, section_key
from synthreview.review import Context, Report, evaluate, prepare, scaled_progress

REVIEW_KEY = "review"
REPORTS_KEY = "_reports"
CONTEXTS_KEY = "_contexts"
OPTIONS_KEY = "_options"
SEED_KEY = "seed"
PRESENTATION_KEY = "presentation_mode"


def set_review(review: Review | None) -> None:
    """Store the loaded review (``None`` clears it) and drop results of the previous one."""
    st.session_state[REVIEW_KEY] = review
    st.session_state[REPORTS_KEY] = {}
    st.session_state[CONTEXTS_KEY] = {}
    st.session_state[OPTIONS_KEY] = default_options(review) if review is not None else None


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


def get_options() -> ReviewOptions:
    """The session's review options (target, sensitive column, groups, formula, ...)."""
    options = st.session_state.get(OPTIONS_KEY)
    if options is None:
        review = get_review()
        options = default_options(review) if review is not None else ReviewOptions()
        st.session_state[OPTIONS_KEY] = options
    return options


def set_options(options: ReviewOptions) -> None:
    """Replace the session's review options; every page then reports with them."""
    st.session_state[OPTIONS_KEY] = options


def get_report(sections: Sequence[str], options: ReviewOptions | None = None) -> Report:
    """Compute (once per session, data, seed and relevant options) and return ``sections``.

    Each section is cached on its own key (the data digest, the seed and only the options that
    section depends on), so changing the ML target does not retrain the fidelity embedding.
    Missing sections are computed with a progress bar and merged into one Report.
    """
    review = require_review()
    options = options or get_options()
    wanted = ("glucose",) if review.kind == "traces" else tuple(sections)
    cache = st.session_state.setdefault(REPORTS_KEY, {})
    keys = {s: (review_digest(review), seed(), section_key(s, options)) for s in wanted}
    missing = [s for s in wanted if keys[s] not in cache]
    if missing:
        bar = st.progress(0.0, text="Computing " + ", ".join(missing) + " …")

        def progress(fraction: float, message: str) -> None:
            bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

        context = None
        if review.kind == "table" and any(s in ("fidelity", "privacy") for s in missing):
            context = _context(review, options, scaled_progress(progress, 0.0, 0.3))
        for i, section in enumerate(missing):
            lo, hi = i / len(missing), (i + 1) / len(missing)
            cache[keys[section]] = evaluate(
                review,
                sections=(section,),
                options=options,
                seed=seed(),
                context=context,
                progress=scaled_progress(progress, lo, hi),
            )
        bar.empty()
    report = cache[keys[wanted[0]]]
    for section in wanted[1:]:
        report = report.merged(cache[keys[section]])
    return report


def section_results(report: Report, section: str, *, what: str | None = None) -> dict[str, Any]:
    """Each candidate's ``section`` result; a candidate whose section failed shows its error.

    Returns ``{candidate name: result}`` for the candidates that have one, in order.
    """
    label = what or section.capitalize()
    found: dict[str, Any] = {}
    for name, candidate in report.candidates.items():
        if section in candidate.errors:
            show_error(candidate.errors[section], what=f"{label} of {name}")
        elif getattr(candidate, section) is not None:
            found[name] = getattr(candidate, section)
    return found


def show_error(message: str, *, what: str = "This metric") -> None:
    """Draw a failed metric's error in place, so the rest of the page still works."""
    st.error(f"{what} could not be computed: {message}")


def presentation_mode() -> bool:
    """Whether the screen-sharing presentation mode is on."""
    return bool(st.session_state.get(PRESENTATION_KEY, False))
