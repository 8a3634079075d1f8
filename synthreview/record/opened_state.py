"""The opened record's part of a dashboard session: the record shown, its inputs, its meeting.

:class:`OpenedRecordState` is the part of :class:`~synthreview.record.session.ReviewSession`
that holds a :class:`~synthreview.record.record.ReviewRecord` opened from a folder, a ZIP or a
register row: evidence, shown whole and never recomputed. It says which of its input files
the loaded files supply (byte for byte) for the views that draw rows, states its column kinds
and sampling, and writes the meeting's countersignature of it. Its keys below are spelled only
here. It never draws and never imports Streamlit.

``ReviewSession`` inherits it and opens, closes and re-runs a record (``open_record``,
``close_record``, ``rerun_with_inputs``: they also reset the loaded review); the views read
the loaded review, the options, the seed and the stored views through the session's
``get_review``, ``live``, ``get_options``, ``seed``, ``view`` and ``open_record``.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pandas as pd

from synthreview.errors import ConfigError, DataError, error_message
from synthreview.io.schema import Review
from synthreview.record import server
from synthreview.record.countersign import (
    countersign_folder,
    meeting_signoff,
    reviewers_from_text,
)
from synthreview.record.evidence import open_evidence
from synthreview.record.inputs import (
    InputMatch,
    encoded_projection,
    input_line,
    inputs_frame,
    match_inputs,
    recorded_review,
)
from synthreview.record.live import LiveReview, review_digest
from synthreview.record.record import ReviewRecord
from synthreview.record.store import OPEN_ENV, OPEN_KEY_ENV
from synthreview.record.summary import ReviewSummary, record_summary
from synthreview.record.trust import trusted_keys

__all__ = ["MEETING_FIELDS", "OpenedRecordState", "meeting_field_key"]

OPENED_KEY = "_opened_record"  # the ReviewRecord opened from a folder or ZIP: evidence
OPEN_TRIED_KEY = "_open_tried"
OPEN_ERROR_KEY = "_open_error"
RECORD_SUMMARY_KEY = "_record_summary"
RECORD_ROWS_KEY = "_record_rows"  # the LiveReview of an open record's loaded input files
MEETING_DONE_KEY = "_meeting_countersigned"  # (candidate slot, what was done): shown once
#: the Audit page's meeting fields of an opened record, one set per candidate slot
MEETING_FIELDS = ("reviewers", "decision", "reason")


def meeting_field_key(field: str, slot: int) -> str:
    """The widget key of the meeting's ``field`` (one of :data:`MEETING_FIELDS`) for candidate
    ``slot``: one per candidate, so nothing typed for one candidate shows under another."""
    if field not in MEETING_FIELDS:
        raise ValueError(f"field must be one of {MEETING_FIELDS}; got {field!r} instead")
    return f"audit_meeting_{field}_{slot}"


class OpenedRecordState:
    """The opened record of one session, its inputs and its meeting's countersignature.

    Attributes
    ----------
    state : mutable mapping of str
        The session's mapping (``ReviewSession.state``).
    """

    state: MutableMapping[str, Any]

    # --- the record shown ----------------------------------------------------------------------
    def opened_record(self) -> ReviewRecord | None:
        """The review record opened in this session (:meth:`open_record`), or ``None``."""
        return self.state.get(OPENED_KEY)

    def locked(self) -> bool:
        """Whether an opened record is shown: controls that would change numbers are disabled."""
        return self.opened_record() is not None

    def open_error(self) -> str | None:
        """Why the record named at the session's start could not be opened."""
        return self.state.get(OPEN_ERROR_KEY)

    def _set_opened(self, record: ReviewRecord) -> None:
        """Show ``record``; what was cached for the previous one goes (``open_record``)."""
        self.state[OPENED_KEY] = record
        for stale in (RECORD_SUMMARY_KEY, OPEN_ERROR_KEY, RECORD_ROWS_KEY):
            self.state.pop(stale, None)

    def _clear_opened(self) -> None:
        """Show no record (``close_record``); the record itself is never changed."""
        for key in (OPENED_KEY, RECORD_SUMMARY_KEY, RECORD_ROWS_KEY):
            self.state.pop(key, None)

    def open_stored_review(self, name: str, *, key: Any = None) -> ReviewRecord:
        """Open the stored review ``name`` (one of ``record.server.stored_reviews``).

        Raises
        ------
        ConfigError
            ``name`` is not one of the offered review folders (nothing is read then).
        DataError
            ``record.store.open_review``'s refusals.
        """
        offered = server.stored_reviews()
        if name not in offered:
            raise ConfigError(
                f"the review to open must be one of the folders this server offers "
                f"({len(offered)}); got {name!r} instead"
            )
        return self.open_record(Path(server.settings().reviews or "") / name, key=key)

    def open_from_environment(self) -> None:
        """Open the record ``synthreview show`` names (once per session); keep why it failed.

        The session counts as tried only once the open has finished (opened, or refused with
        its reason): a click while a large record is still being read stops the script mid-open
        (Streamlit interrupts a run for the next), and the next run must open it again instead
        of falling back to the demo."""
        if self.state.get(OPEN_TRIED_KEY):
            return
        if os.environ.get(OPEN_ENV):
            try:
                self.open_record(os.environ[OPEN_ENV], key=os.environ.get(OPEN_KEY_ENV) or None)
            except (DataError, ConfigError) as exc:
                self.state[OPEN_ERROR_KEY] = str(exc)
        self.state[OPEN_TRIED_KEY] = True

    def open_register_row(self, seq: int) -> ReviewRecord:
        """Open the evidence of register record ``seq`` (the folder the register states, never
        one named by the browser) for every page.

        Raises
        ------
        ConfigError
            The register holds no record ``seq``.
        DataError
            ``record.evidence.open_evidence``'s refusals (``EvidenceNotFound``: not where the
            register says it was written).
        """
        row = next((r for r in server.register_history() if r.seq == seq), None)
        if row is None:
            raise ConfigError(f"the register holds no record #{seq}")
        return self.open_record(open_evidence(row, key=os.environ.get(OPEN_KEY_ENV) or None))

    def opened_record_summary(self) -> ReviewSummary | None:
        """The judged summary of the open record (``record.summary.record_summary``), built once
        per record; ``None`` when no record is open."""
        record = self.opened_record()
        if record is None:
            return None
        cached = self.state.get(RECORD_SUMMARY_KEY)
        if cached is None or cached[0] is not record:
            cached = self.state[RECORD_SUMMARY_KEY] = (record, record_summary(record))
        return cached[1]

    # --- its input files and what it states ----------------------------------------------------
    def record_inputs_needed(self) -> str:
        """Which input files a raw-row view of the open record needs (name, role, sha256)."""
        record = self.opened_record()
        return "" if record is None else "; ".join(input_line(i) for i in record.inputs)

    def record_match(self) -> InputMatch | None:
        """How the loaded files supply the open record's inputs (None: no record open)."""
        record = self.opened_record()
        return None if record is None else match_inputs(record.inputs, self.get_review())

    def record_inputs_frame(self) -> pd.DataFrame:
        """The open record's input files, each with whether the loaded files supply it."""
        record, match = self.opened_record(), self.record_match()
        if record is None or match is None:
            return pd.DataFrame()
        return inputs_frame(record.inputs, match)

    def record_rows(self) -> Review | None:
        """The rows a raw-row view draws: the loaded review, or for an open record the loaded
        files named as the record names them, only when each has the record's sha256."""
        match, review = self.record_match(), self.get_review()
        if match is None:
            return review
        return recorded_review(review, match) if review is not None and match.ok else None

    def rows_live(self) -> LiveReview | None:
        """The stored steps of the rows raw-row views draw (cached for a record's inputs)."""
        if self.opened_record() is None:
            return self.live()
        rows = self.record_rows()
        cached = self.state.get(RECORD_ROWS_KEY)
        if rows is not None and (cached is None or cached.digest != review_digest(rows)):
            cached = self.state[RECORD_ROWS_KEY] = LiveReview(rows)
        return cached if rows is not None else None

    def record_projection(self) -> pd.DataFrame | str | None:
        """The PCA view of the open record's rows when its input files are loaded (None: not)."""
        record, live = self.opened_record(), self.rows_live()
        if record is None or live is None or live.review.kind != "table":
            return None

        def build() -> pd.DataFrame | str:
            try:
                return encoded_projection(live.review, options=self.get_options(), seed=self.seed())
            except Exception as exc:  # a failed view must not stop the page
                return error_message(exc)

        return self.view("record_projection", build, live.digest)

    def record_schema_frame(self) -> pd.DataFrame | None:
        """The open record's scored columns and their kinds, as its fidelity tables state them
        (``column``, ``kind``); ``None`` when no record is open or none states them (a glucose
        record, or no fidelity section computed)."""
        record = self.opened_record()
        if record is None:
            return None
        for candidate in record.report.candidates.values():
            features = getattr(candidate.fidelity, "features", None)
            if features is not None and len(features):
                return features[["column", "kind"]].reset_index(drop=True)
        return None

    def record_sampling_sentence(self) -> str:
        """How the open record's population statistics were estimated, in one sentence."""
        record = self.opened_record()
        sampling = None if record is None else record.report.sampling
        if sampling is not None and any(t.sampled for t in sampling.tables):
            return sampling.sentence()
        if record is not None and record.report.kind != "table":
            return "Glucose traces are reviewed on every trace (never sampled)."
        limit = None if record is None else record.report.options.sample_rows
        if limit is not None:
            return (
                f"Every table had at most {limit:,} rows: every statistic was estimated on every "
                "row."
            )
        return "Every statistic was estimated on every row."

    # --- the meeting's countersignature ---------------------------------------------------------
    def countersign_meeting(
        self, name: str, slot: int, *, reviewers: str, decision: str | None, reason: str
    ) -> None:
        """Countersign candidate ``name`` (the Audit page's ``slot``) of the opened record with
        the session's key, beside the record on the server, into the server's register
        (``record.countersign.countersign_folder``); the session then holds the countersigned
        record, and :meth:`meeting_done` says what was done once.

        Raises
        ------
        ConfigError
            No record is open or no key is loaded, or the sign-off or countersignature is
            refused (the message says why); nothing changes then.
        """
        record, key = self.opened_record(), self.signing_key()
        if record is None or key is None:
            raise ConfigError("open a record and load the meeting's private key (above) first")
        signoff = meeting_signoff(record, name, decision=decision, reason=reason,
                                  reviewers=reviewers_from_text(reviewers))  # fmt: skip
        # the keys this server trusts: the one ``synthreview show`` was given, the trust folder
        trusted = trusted_keys(os.environ.get(OPEN_KEY_ENV) or None)
        done = countersign_folder(record, [signoff], key, register=server.register_location(),
                                  trusted=trusted)  # fmt: skip
        self.state[OPENED_KEY] = done.record
        self.state.pop(RECORD_SUMMARY_KEY, None)
        said = f"Countersigned {name} ({done.file}, key {done.keyid[:16]}); registered."
        self.state[MEETING_DONE_KEY] = (slot, said)

    def meeting_done(self, slot: int) -> str | None:
        """What the countersignature just written for candidate ``slot`` did, once; its fields
        are blank again then (a second click signs nothing twice)."""
        if self.state.get(MEETING_DONE_KEY, (None,))[0] != slot:
            return None
        for field in MEETING_FIELDS:
            self.state.pop(meeting_field_key(field, slot), None)
        return self.state.pop(MEETING_DONE_KEY)[1]
