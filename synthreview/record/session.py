"""One dashboard session's review: the loaded files or an opened record, and all that hangs on it.

A :class:`ReviewSession` reads and writes a mapping (Streamlit's ``st.session_state`` in the
dashboard, a plain ``dict`` in a test) under the keys below, the only place they are spelled:
the loaded review and its :class:`~synthreview.record.live.LiveReview` (every stored step and
release), or an opened :class:`~synthreview.record.record.ReviewRecord` (shown whole, nothing
recomputed); the options, seed, policy and release context; the audit confirmations; and the
record's files (filed in the register of ``record.server``). Two parts live in their own
modules with their keys: an opened record's views and the meeting's countersignature of it
(:class:`~synthreview.record.opened_state.OpenedRecordState`), and the meeting's sign-off,
waivers, approvals and the signing key
(:class:`~synthreview.record.signoff_state.SignoffState`). It never draws and never imports
Streamlit: ``app_state`` holds one per session and does the drawing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Hashable, Iterable, Mapping, MutableMapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import pandas as pd
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError
from synthreview.io.schema import Review
from synthreview.judgement.context import ReleaseContext, parse_context
from synthreview.judgement.ledger import PriorRelease
from synthreview.judgement.policy import (
    LedgerLimits,
    Policy,
    Verdicts,
    apply_policy,
    load_policy,
    parse_policy,
)
from synthreview.options import ReviewOptions
from synthreview.record import server
from synthreview.record.inputs import (
    has_holdout,
)
from synthreview.record.live import LiveReview, ReleaseTerms, initial_options, needed_sections
from synthreview.record.opened_state import OpenedRecordState
from synthreview.record.record import ReviewRecord
from synthreview.record.signoff_state import (
    APPROVALS_KEY,
    SIGNOFF_KEY,
    WAIVERS_KEY,
    SignoffState,
)
from synthreview.record.store import OPEN_ENV, open_review
from synthreview.record.summary import ReviewSummary, stated_context, summarize
from synthreview.release.audit import CopyCounts, Thresholds
from synthreview.release.bundle import folder_names, zip_bytes
from synthreview.release.controls import PlantedControls
from synthreview.release.export import ESCAPE_STATEMENT
from synthreview.release.pipeline import CandidateAudit, CandidateRelease, policy_key, release_files
from synthreview.release.register import ledger, prior_releases
from synthreview.release.signing import sign_files
from synthreview.review import Report
from synthreview.sampling import Sampling

__all__ = ["ReviewSession", "demo_rows", "start_page"]

T = TypeVar("T")

REVIEW_KEY = "review"
LIVE_KEY = "_live"  # the LiveReview of the loaded review: every stored step and release
SEED_KEY = "seed"
PRESENTATION_KEY = "presentation_mode"  # the Overview's toggle; kept on every page
RAW_ROWS_KEY = "show_raw_rows"  # a page's "Show training rows" checkbox (off: rows masked)
DEMO_AUTOLOADED_KEY = "_demo_autoloaded"
LOAD_ERROR_KEY = "_load_error"
LOADED_TABLES_KEY = "_loaded_tables"
SOURCES_KEY = "_candidate_sources"  # the uploaded candidate files as sent (curated bytes)
POLICY_KEY = "release_policy"
CONTEXT_KEY = "_release_context"  # the Data page's release context (ReleaseContext or None)
POLICY_ERROR_KEY = "_policy_error"
POLICY_UPLOAD_KEY = "overview_policy_upload"
AUDIT_DIALOG_KEY = "audit_dialog_open"
AUDIT_CONFIRMED_KEY = "audit_confirmed"  # {candidate: (thresholds, time)} confirmed
AUDIT_CANDIDATE_KEY = "_audit_candidate"  # the Audit page's candidate, kept across page visits
LOADED_SOURCE_KEY = "_loaded_source"  # the Data page's Source of the loaded review
RUN_TIME_KEY = "_run_time"  # when the last run finished (the record's time)
OPTIONS_KEY = "_options"
RUN_KEY = "_run_requested"
RUN_NOTE_KEY = "_run_note"
RUN_DONE_KEY = "_run_done"  # a run just finished: the next page says so once
TIMINGS_KEY = "_step_seconds"  # {section: [seconds per candidate step]}
RUN_LOG_KEY = "_run_decided_at"  # {candidate: seconds from the run's start to its first decision}
#: {(digest, seed, options, policy, results, releases, confirmed, waivers, prior): ReviewSummary}
SUMMARY_KEY = "_summary"
VIEWS_KEY = "_views"  # {(name, *key): figure or table} built from the current summary
#: keys holding a loaded and computed review (benchmarks save and reload them to time pages)
STORED_KEYS = (REVIEW_KEY, SEED_KEY, OPTIONS_KEY, LIVE_KEY, TIMINGS_KEY, RUN_TIME_KEY)
#: environment variable that shrinks the bundled table demo (training rows, e.g. 600), for the
#: real-browser tests: the decisions shown are still the engine's, on fewer rows
DEMO_ROWS_ENV = "SYNTHREVIEW_DEMO_ROWS"


def start_page() -> str:
    """The page a session opens on: the Overview when ``synthreview show`` opened a record."""
    return "pages/overview.py" if os.environ.get(OPEN_ENV) else "pages/data.py"


def demo_rows() -> int | None:
    """Training rows of the bundled table demo: ``$SYNTHREVIEW_DEMO_ROWS`` if set, else the
    demo's default (``None``)."""
    value = os.environ.get(DEMO_ROWS_ENV, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ConfigError(
            f"{DEMO_ROWS_ENV} must be a whole number of rows; got {value!r} instead"
        ) from None


@functools.cache
def _default_policy() -> Policy:
    return load_policy()  # parsed once per process: the shipped file never changes


class ReviewSession(OpenedRecordState, SignoffState):
    """One session's review, read from and written to ``state`` (see the module docstring);
    an opened record's views and countersignature are :class:`OpenedRecordState`'s, the
    meeting's sign-off, waivers, approvals and signing key :class:`SignoffState`'s.

    Parameters
    ----------
    state : mutable mapping of str
        Where the session lives: ``st.session_state``, or a ``dict``.
    """

    def __init__(self, state: MutableMapping[str, Any]) -> None:
        self.state = state

    # --- the loaded review ---------------------------------------------------------------------
    def set_review(self, review: Review | None) -> None:
        """Store the loaded review (``None`` clears it) and drop results of the previous one; an
        opened record stays open (loaded files are the inputs its raw-row views draw). The
        waiver requests and approvals go with the previous review: a request was made for its
        candidates and must be made again (and approved again) for another review's."""
        self.state[REVIEW_KEY] = review
        self.state[LIVE_KEY] = LiveReview(review) if review is not None else None
        for key in (SUMMARY_KEY, VIEWS_KEY, SIGNOFF_KEY, AUDIT_CONFIRMED_KEY):
            self.state[key] = {}
        for key in (WAIVERS_KEY, APPROVALS_KEY):
            self.state.pop(key, None)
        self.state[RUN_KEY] = False
        for key in (RUN_NOTE_KEY, RUN_TIME_KEY, LOADED_SOURCE_KEY):
            self.state.pop(key, None)
        self.state[OPTIONS_KEY] = initial_options(review) if review is not None else None

    def get_review(self) -> Review | None:
        """The review loaded on the Data page, or ``None``."""
        return self.state.get(REVIEW_KEY)

    def live(self) -> LiveReview | None:
        """The stored steps of the loaded review (``None``: nothing loaded)."""
        review, live = self.get_review(), self.state.get(LIVE_KEY)
        if review is not None and (live is None or live.review is not review):
            live = self.state[LIVE_KEY] = LiveReview(review)  # a review set without set_review
        return live if review is not None else None

    def loaded_live(self) -> LiveReview:
        """:meth:`live`, or ``ConfigError`` when no review is loaded."""
        live = self.live()
        if live is None:
            raise ConfigError("no review is loaded")
        return live

    def set_loaded_source(self, source: str) -> None:
        """Remember which Data page source (demo or upload) the loaded review came from."""
        self.state[LOADED_SOURCE_KEY] = source

    def loaded_source(self) -> str | None:
        """The Data page source of the loaded review (``None`` when it was loaded otherwise)."""
        return self.state.get(LOADED_SOURCE_KEY)

    def demo_autoload_pending(self) -> bool:
        """True once per session: a fresh session opens on the bundled demo."""
        if self.state.get(DEMO_AUTOLOADED_KEY) or self.get_review() is not None:
            return False
        if self.opened_record() is not None:
            return False
        self.state[DEMO_AUTOLOADED_KEY] = True
        return True

    def set_load_error(self, message: str | None) -> None:
        """Remember (or clear, ``None``) the message of a failed load, shown on the Data page."""
        self.state[LOAD_ERROR_KEY] = message

    def load_error(self) -> str | None:
        """The message of the last failed load, if any."""
        return self.state.get(LOAD_ERROR_KEY)

    def set_loaded_tables(self, tables: Any) -> None:
        """Keep the uploaded tables as read (before alignment), for re-validation."""
        self.state[LOADED_TABLES_KEY] = tables

    def set_candidate_sources(self, files: Sequence[bytes]) -> None:
        """Keep the uploaded candidate files' bytes (this session only) for the curated files."""
        self.state[SOURCES_KEY] = tuple(files)

    def candidate_sources(self) -> tuple[bytes, ...]:
        """The uploaded candidate files' bytes (empty for the demo)."""
        return self.state.get(SOURCES_KEY, ())

    def seed(self) -> int:
        """The review's seed (set on the Data page; an open record's own)."""
        record = self.opened_record()
        return int(record.report.seed if record else self.state.get(SEED_KEY, 0))

    # --- the opened record ---------------------------------------------------------------------
    def open_record(
        self, source: str | os.PathLike[str] | bytes | ReviewRecord, *, key: Any = None
    ) -> ReviewRecord:
        """Open a stored review (folder, ZIP path or bytes, or a record already opened: History's
        evidence) for every page; the loaded data and its results are dropped: the session
        shows the record alone.

        Raises
        ------
        DataError, ConfigError
            ``record.store.open_review``'s refusals.
        """
        record = source if isinstance(source, ReviewRecord) else open_review(source, key=key)
        self.set_review(None)
        self._set_opened(record)
        self.state[DEMO_AUTOLOADED_KEY] = True
        return record

    def close_record(self) -> None:
        """``on_click`` of *Close the record*: the loaded files (if any) are shown again."""
        self._clear_opened()
        self.state[VIEWS_KEY] = {}

    def holdout_given(self) -> bool:
        """Whether the shown review (an open record, else the loaded one) has a holdout."""
        record, review = self.opened_record(), self.get_review()
        if record is not None:
            return has_holdout(record.inputs)
        return review is not None and review.holdout is not None

    def review_kind(self) -> str | None:
        """``"table"`` or ``"traces"``: the open record's kind, else the loaded review's."""
        record, review = self.opened_record(), self.get_review()
        return record.report.kind if record is not None else getattr(review, "kind", None)

    def rerun_with_inputs(self) -> None:
        """``on_click`` of *Re-run with these inputs*: close the record (never changed) and
        request a new review of its loaded input files with its options, seed, policy and
        release context."""
        record, rows = self.opened_record(), self.record_rows()
        if record is None or rows is None:
            return
        text = record.policy_text
        policy = None if text is None else parse_policy(text, source=record.policy.source)
        self.close_record()
        self.set_review(rows)
        self.state[OPTIONS_KEY] = record.report.options
        self.state[SEED_KEY] = int(record.report.seed)
        self.state[POLICY_KEY] = policy
        self.state[CONTEXT_KEY] = stated_context(record)
        self.request_run()

    # --- options, policy, context --------------------------------------------------------------
    def get_options(self) -> ReviewOptions:
        """The session's review options; an open record's own while one is open."""
        record = self.opened_record()
        if record is not None:
            return record.report.options
        if self.state.get(OPTIONS_KEY) is None:
            review = self.get_review()
            self.state[OPTIONS_KEY] = initial_options(review) if review else ReviewOptions()
        return self.state[OPTIONS_KEY]

    def set_options(self, options: ReviewOptions) -> None:
        """Replace the session's options; sections that read a changed one become stale.

        Raises
        ------
        ConfigError
            A generator this server does not allow, or a record is open; nothing changes.
        """
        if self.opened_record() is not None:
            raise ConfigError(
                "an opened record keeps the options it was computed with; Re-run with these "
                "inputs to review them with other options"
            )
        server.allowed_generator(options.generator)
        self.state[OPTIONS_KEY] = options

    def get_policy(self) -> Policy:
        """The open record's policy; else the uploaded one (or the shipped default) under the
        release context's access model (no context: the strictest thresholds, fail closed)."""
        record, context = self.opened_record(), self.get_context()
        if record is not None:
            return record.policy  # the policy the record was judged by
        base = self.state.get(POLICY_KEY) or _default_policy()
        return base.for_access(context.access if context is not None else None)

    def get_context(self) -> ReleaseContext | None:
        """The release context given on the Data page (None: not given); a record's own."""
        record = self.opened_record()
        return stated_context(record) if record is not None else self.state.get(CONTEXT_KEY)

    def set_context(self, values: Mapping[str, object] | None) -> ReleaseContext | None:
        """Check and keep the Data page's release context (None clears it); a change of access
        model makes the decisions out of date.

        Raises
        ------
        ConfigError
            A field missing or not as expected (``parse_context``); the kept one stays.
        """
        context = None if values is None else parse_context(values, where="the release context")
        self.state[CONTEXT_KEY] = context
        return context

    def load_uploaded_policy(self) -> None:
        """``on_change`` of the policy uploader: parse it, or keep the default and the error."""
        upload = self.state.get(POLICY_UPLOAD_KEY)
        self.state.pop(POLICY_ERROR_KEY, None)
        self.state[POLICY_KEY] = None
        if upload is not None:
            try:
                self.state[POLICY_KEY] = parse_policy(upload.getvalue(), source=upload.name)
            except ConfigError as exc:
                self.state[POLICY_ERROR_KEY] = str(exc)

    def policy_error(self) -> str | None:
        """Why the uploaded policy was rejected, if it was."""
        return self.state.get(POLICY_ERROR_KEY)

    def presentation_mode(self) -> bool:
        """Whether the screen-sharing presentation mode is on."""
        return bool(self.state.get(PRESENTATION_KEY, False))

    def end_presentation(self) -> None:
        """``on_click`` of the page switcher's *Leave presentation*."""
        self.state[PRESENTATION_KEY] = False

    def show_raw_rows(self) -> bool:
        """Whether a page may draw raw training rows (exact values of real people): only when
        its *Show training rows* box is ticked and presentation mode is off."""
        return bool(self.state.get(RAW_ROWS_KEY, False)) and not self.presentation_mode()

    # --- the audit page's confirmations --------------------------------------------------------
    @staticmethod
    def audit_thresholds(**choices: Any) -> Thresholds:
        """The audit thresholds of the Audit page's controls (``release.audit.Thresholds``)."""
        return Thresholds(**choices)

    def audit_dialog_open(self) -> bool:
        """Whether the curation confirmation dialog is open."""
        return bool(self.state.get(AUDIT_DIALOG_KEY))

    def set_audit_dialog(self, open_: bool) -> None:
        """Open or close the curation confirmation dialog."""
        self.state[AUDIT_DIALOG_KEY] = bool(open_)

    def confirmed_curations(self) -> dict[str, tuple[Thresholds, datetime]]:
        """``{candidate: (thresholds, time)}`` confirmed for release in this session: released
        with these thresholds everywhere (the Overview, the Audit page, the record)."""
        return self.state.setdefault(AUDIT_CONFIRMED_KEY, {})

    def confirm_curation(self, name: str, thresholds: Thresholds) -> None:
        """Record the reviewer's confirmation of ``name``'s curation under ``thresholds``."""
        self.confirmed_curations()[name] = (thresholds, datetime.now(UTC))

    def release_thresholds(self, name: str) -> Thresholds:
        """The audit thresholds ``name`` is released under: the confirmed ones, else default."""
        confirmed = self.confirmed_curations().get(name)
        return confirmed[0] if confirmed is not None else Thresholds()

    def curate_when(self, name: str) -> str:
        """``"always"`` for a confirmed candidate (its curated files are filed), else
        ``"failing"`` (curated only when it fails as submitted: what its decision needs)."""
        return "always" if name in self.confirmed_curations() else "failing"

    def release_terms(
        self, names: Iterable[str], options: ReviewOptions
    ) -> dict[str, ReleaseTerms]:
        """What each candidate of ``names``' release is computed and stored under: the seed,
        ``options``, the policy, its confirmed thresholds and curation, and the rules a waiver
        has been requested for on it (approved or not), so the release shown and filed is the
        one computed knowing every requested waiver. The session's waivers and policy are read
        once for all of them (each read checks every approval)."""
        waivers, seed, policy = self.session_waivers(), self.seed(), self.get_policy()
        return {
            name: ReleaseTerms(
                seed=seed,
                options=options,
                policy=policy,
                thresholds=self.release_thresholds(name),
                curate_when=self.curate_when(name),
                waived=frozenset(w.rule for w in waivers if name in w.candidates),
            )
            for name in names
        }

    # --- what is computed, what is stale -------------------------------------------------------
    def stale_sections(self, options: ReviewOptions | None = None) -> list[str]:
        """Needed sections with no complete result for the current data, seed and options."""
        live = self.live()
        if live is None:
            return []
        return live.stale_sections(seed=self.seed(), options=options or self.get_options())

    def changed_options(self, section: str, options: ReviewOptions | None = None) -> list[str]:
        """Options that differ between the shown (last complete) result of ``section`` and now."""
        live = self.live()
        if live is None:
            return []
        return live.changed_options(
            section, seed=self.seed(), options=options or self.get_options()
        )

    def status(self) -> dict[str, str]:
        """``{section: "current" | "stale" | "missing"}`` for the loaded review."""
        live = self.live()
        if live is None:
            return {}
        stale = set(self.stale_sections())
        return {
            s: "current"
            if s not in stale
            else ("stale" if live.latest_base(s, seed=self.seed()) is not None else "missing")
            for s in needed_sections(live.review)
        }

    def plan(self, options: ReviewOptions) -> list[tuple[str, str]]:
        """The ``(candidate, section)`` steps a run would compute now, in order."""
        return self.loaded_live().plan(seed=self.seed(), options=options)

    def projection(self) -> pd.DataFrame | str | None:
        """The stored PCA of the encoded rows (fitted on real only), an error text, or None."""
        live = self.live()
        return (
            None if live is None else live.projection(seed=self.seed(), options=self.get_options())
        )

    def stored_report(
        self, sections: Sequence[str], options: ReviewOptions | None = None
    ) -> tuple[Report | None, list[str]]:
        """The stored results of ``sections`` and the stale ones among them; never computes."""
        live = self.live()
        if live is None:
            return None, []
        return live.stored_report(sections, seed=self.seed(), options=options or self.get_options())

    def review_summary(self, options: ReviewOptions | None = None) -> ReviewSummary | None:
        """The judged summary of every needed section (``record.summary.summarize``), built at
        most once per result; an open record's own. ``None`` when a needed section never ran."""
        record, live = self.opened_record(), self.live()
        if record is not None:
            return self.opened_record_summary()
        if live is None:
            return None
        options, policy = options or self.get_options(), self.get_policy()
        confirmed = tuple(sorted((n, t) for n, (t, _) in self.confirmed_curations().items()))
        waivers = self.session_waivers()
        prior = self.ledger_prior() if policy.ledger != LedgerLimits() else ()
        key = (live.digest, self.seed(), options, policy_key(policy), len(live.results),
               len(live.releases), confirmed, waivers, prior)  # fmt: skip
        store = self.state.setdefault(SUMMARY_KEY, {})
        if key in store:
            return store[key]
        report, stale = self.stored_report(needed_sections(live.review), options)
        if report is None:
            return None
        names = live.review.candidates
        summary = summarize(
            live,
            report,
            stale=stale,
            changed=list(dict.fromkeys(o for s in stale for o in self.changed_options(s, options))),
            seed=self.seed(),
            options=options,
            policy=policy,
            terms=self.release_terms(names, options),
            waivers=waivers,
            prior=prior,
        )
        store.clear()  # one summary per session: older ones are never shown again
        store[key] = summary
        self.state[VIEWS_KEY] = {}  # figures and tables of the previous results
        return summary

    def loaded_summary(self) -> ReviewSummary:
        """:meth:`review_summary`, or ``ConfigError`` when the review has not been computed."""
        summary = self.review_summary()
        if summary is None:
            raise ConfigError("the review has not been computed; press Run review")
        return summary

    def view(self, name: str, build: Callable[[], T], *key: Hashable) -> T:
        """A figure or table built from the stored results once, then reused on every page
        open; dropped when the results, the options or the policy change. ``name`` and ``key``
        (the widget choices it depends on) identify it."""
        if self.review_summary() is None:  # nothing stored yet: nothing to keep
            return build()
        views = self.state.setdefault(VIEWS_KEY, {})
        if (name, *key) not in views:
            views[(name, *key)] = build()
        return views[(name, *key)]

    # --- the run -------------------------------------------------------------------------------
    def request_run(self) -> None:
        """``on_click`` of every Run review button."""
        self.state[RUN_KEY] = True
        self.state.pop(RUN_NOTE_KEY, None)

    def cancel_run(self) -> None:
        """``on_click`` of Cancel: finished steps stay stored; the next run continues."""
        self.state[RUN_KEY] = False
        self.state[RUN_NOTE_KEY] = "Review cancelled; finished steps are kept."

    def run_requested(self) -> bool:
        """Whether a run is pending (requested and not finished or cancelled)."""
        return bool(self.state.get(RUN_KEY))

    def run_note(self) -> str | None:
        """A one-off note about the last run (cancelled, finished)."""
        return self.state.get(RUN_NOTE_KEY)

    def finish_run(self, note: str) -> None:
        """The run is over: its time (the record's) and its note are kept."""
        self.state[RUN_KEY] = False
        self.state[RUN_TIME_KEY] = datetime.now(UTC)
        self.state[RUN_DONE_KEY] = True
        self.state[RUN_NOTE_KEY] = note

    def run_just_done(self) -> bool:
        """True once after a run finished (the page then says so)."""
        return bool(self.state.pop(RUN_DONE_KEY, False))

    def timings(self) -> dict[str, list[float]]:
        """Seconds of every step timed in this session, by section (the estimates' base)."""
        return self.state.setdefault(TIMINGS_KEY, {})

    def run_log(self) -> dict[str, float]:
        """Seconds from the start of the last run to each candidate's first decision on
        screen (what ``benchmarks/bench_pages.py`` prints as the time to the first decision)."""
        return self.state.setdefault(RUN_LOG_KEY, {})

    def release_plan(self, options: ReviewOptions) -> list[str]:
        """Candidates whose release is not stored for the present numbers, policy and
        confirmed thresholds (needs every section complete)."""
        if self.stale_sections(options):
            return []
        live = self.loaded_live()
        terms = self.release_terms(live.review.candidates, options)
        return [n for n, t in terms.items() if live.stored_release(n, t) is None]

    def curation_errors(self) -> dict[str, str]:
        """Why a candidate's audit or curation could not be computed, by candidate."""
        live, options = self.live(), self.get_options()
        if live is None:
            return {}
        terms = self.release_terms(live.review.candidates, options)
        steps = {n: live.stored_release(n, t) for n, t in terms.items()}
        return {n: step.error for n, step in steps.items() if step is not None and step.error}

    def sampled_review(
        self, options: ReviewOptions | None = None
    ) -> tuple[Review, Sampling | None]:
        """The rows the stored statistics are estimated on (samples above
        ``options.sample_rows``; ``Sampling`` maps them to the files' rows), an open record's
        own input files included."""
        live = self.rows_live()
        if live is None:
            raise ConfigError("no review is loaded, or not the open record's input files")
        return live.sample(seed=self.seed(), options=options or self.get_options())

    def candidate_release(self, name: str) -> CandidateRelease | None:
        """The current release of ``name`` (``None`` when out of date or not computed)."""
        summary = self.review_summary()
        return None if summary is None else summary.releases.get(name)

    def rule_verdicts(self, report: Report) -> dict[str, Verdicts]:
        """Each candidate's rule verdicts: the stored run's (what the Overview decides on),
        else the policy applied to ``report``'s numbers before a run."""
        summary = self.review_summary()
        if summary is not None:
            return summary.verdicts
        content = report.to_dict()["candidates"]
        return {n: apply_policy(self.get_policy(), c, kind=report.kind) for n, c in content.items()}

    def copy_counts(self, name: str) -> CopyCounts | None:
        """The copies of ``name`` counted once on its current release's audit (what the
        Overview, the Privacy tiles and the record state); None when not current."""
        release = self.candidate_release(name)
        return None if release is None or release.audit is None else release.audit.counts

    def preview_audit(self, name: str, thresholds: Thresholds) -> CandidateAudit | None:
        """The audit of ``name`` under ``thresholds`` for the Audit page's preview (cached);
        under the current release's own thresholds, that release's audit."""
        current = self.candidate_release(name)
        if current is not None and current.audit is not None:
            if current.audit.thresholds == thresholds:
                return current.audit
        report = self.loaded_summary().report
        return self.loaded_live().preview_audit(
            report, name, thresholds, seed=self.seed(), options=self.get_options()
        )

    def removed_preview(self, name: str, audit: CandidateAudit) -> pd.DataFrame:
        """The rows ``audit`` would remove from ``name``, as in the file, with row and reasons."""
        return self.loaded_live().removed(name, audit)

    def controls_for(
        self, thresholds: Thresholds, *, compute: bool = False
    ) -> PlantedControls | None:
        """The planted-leak controls under ``thresholds`` (computed when ``compute``)."""
        return self.loaded_live().planted_controls(
            self.loaded_summary().report, thresholds, seed=self.seed(),
            options=self.get_options(), policy=self.get_policy(), compute=compute,
        )  # fmt: skip

    def controls_possible(self) -> bool:
        """Whether planted-leak controls apply (a table review with a holdout of >= 20 rows)."""
        review = self.get_review()
        return (
            review is not None and review.kind == "table" and review.holdout is not None
            and review.holdout.n_rows >= 20
        )  # fmt: skip

    # --- the audit page's candidate, the ledger and the record ---------------------------------
    def audit_candidate_index(self, candidates: Sequence[str]) -> int:
        """Position in ``candidates`` of the Audit page's last chosen candidate (0: none)."""
        chosen = self.state.get(AUDIT_CANDIDATE_KEY)
        return list(candidates).index(chosen) if chosen in candidates else 0

    def remember_audit_candidate(self, name: str) -> None:
        """Keep the Audit page's candidate choice (its selectbox's state ends with the page)."""
        self.state[AUDIT_CANDIDATE_KEY] = name

    def ledger_prior(self) -> tuple[PriorRelease, ...]:
        """The register's earlier records from this review's training data (its sha256, or the
        context's source id) for the policy's ``[ledger]`` caps; read only. No register yet is
        no earlier release; an unreadable one is an *unknown* history (fail closed)."""
        review, context = self.get_review(), self.get_context()
        if review is None:
            return ()
        try:
            records = ledger(
                server.register_location(),
                sha256=getattr(review.real, "sha256", None),
                source=context.source if context is not None else None,
            )
        except ConfigError as exc:  # no register yet is no earlier release (ledger: none)
            return (PriorRelease.unreadable(str(exc)),)
        return prior_releases(records)

    def record_refusal(self) -> str | None:
        """Why the record cannot be exported now (a decision out of date, a release step that
        failed: the record files exactly the decisions the screen shows), or None."""
        review = self.get_review()
        if review is None:
            return "no review is loaded"
        summary = self.review_summary()
        if summary is None:
            return "the review has not been computed; press Run review"
        if not summary.current:
            return (
                "the decisions are out of date (" + ", ".join(summary.changed) + " changed); "
                "press Run review before exporting"
            )
        missing = [n for n in review.candidates if n not in summary.releases]
        if missing:
            return "the audit of " + ", ".join(missing) + " could not be computed; see its error"
        return None

    def record_builder(
        self, thresholds: Thresholds | None = None, *, key: Ed25519PrivateKey | None = None
    ) -> Callable[[], dict[str, bytes]]:
        """A function that builds every release file of the current review (once, then reuses
        it); it may run off the script thread and touches no session state.

        The record's time is the latest of the run, the confirmations and the sign-offs, so
        the same state gives the same bytes; with ``key`` the files are ``signing.sign_files``'
        (Ed25519 is deterministic: equal bytes too).

        Raises
        ------
        ConfigError
            :meth:`record_refusal` gives a reason.
        """
        refusal = self.record_refusal()
        if refusal is not None:
            raise ConfigError(f"the record cannot be exported: {refusal}")
        review, summary, policy = self.get_review(), self.loaded_summary(), self.get_policy()
        moments = [self.state.get(RUN_TIME_KEY) or datetime(1970, 1, 1, tzinfo=UTC)]
        moments += [t for _, t in self.confirmed_curations().values()]
        moments += [s.time for s in self.signoffs().values()]
        arguments = {
            "policy": policy,
            "review": review,
            "controls": self.controls_for(thresholds) if thresholds is not None else None,
            "signoff": {n: s for n, s in self.signoffs().items() if n in summary.releases},
            "sources": self.candidate_sources(),
            "context": self.get_context(),
            "waivers": self.session_waivers(),
            "prior": self.ledger_prior() if policy.ledger != LedgerLimits() else (),
            "timestamp": max(moments),
        }

        @functools.cache
        def build() -> dict[str, bytes]:
            files = release_files(summary.report, summary.releases, **arguments)
            return files if key is None else sign_files(files, key)

        return build

    def record_folders(self) -> dict[str, str]:
        """``{candidate: folder of its files in the record}``."""
        return folder_names(self.loaded_live().review.candidates)

    @staticmethod
    def escaping_statement() -> str:
        """What the CSV exports do to cells a spreadsheet would run as formulas."""
        return ESCAPE_STATEMENT

    @staticmethod
    def zip_record(files: dict[str, bytes]) -> bytes:
        """The record's files in one ZIP (``release.bundle.zip_bytes``)."""
        return zip_bytes(files)
