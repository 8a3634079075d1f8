"""The evidence of a register row: the review folder it names, opened again if it still holds it.

The register (:mod:`synthreview.release.register`) stores, for every decision, the folder the
record was written to (``location``) and the sha256 of the signed statement of the record held
there (``statement_sha256``). :func:`open_evidence` opens that folder
(:func:`synthreview.record.store.open_review`, verified on opening like any record) and gives
the record only when it is the one the register names: the same statement and, for a meeting's
row, the countersignature the row was made from. Anything else is :class:`EvidenceNotFound`,
"evidence not found at LOCATION: why". The location is only ever read from the register.
"""

from __future__ import annotations

import os
from pathlib import Path

from synthreview.errors import DataError
from synthreview.record.record import RECORD_NAME, ReviewRecord
from synthreview.record.store import open_review
from synthreview.record.trust import KeyLike, statement_digest
from synthreview.release.register import Record
from synthreview.release.signing import EnvelopeError, release_statement, statement_id

__all__ = ["EvidenceNotFound", "open_evidence", "record_statement_sha256"]


class EvidenceNotFound(DataError):
    """A register row's folder is gone, moved, replaced or changed: its evidence is not there."""


def record_statement_sha256(record: ReviewRecord) -> str:
    """sha256 of the record's statement: the signed one, else the one its files would have.

    For a signed record it is the digest of ``release.intoto.jsonl``'s statement (the review id
    the register stores); for an unsigned one, that of the statement ``release.signing`` builds
    over its files and ``record.json``, as ``synthreview register`` of an unsigned folder does.
    """
    if record.signature is not None:
        return statement_digest(record.signature)
    statement = release_statement({**record.files, RECORD_NAME: record.record_json()})
    return statement_id(statement)


def open_evidence(
    row: Record,
    *,
    key: KeyLike | None = None,
    trust: str | os.PathLike[str] | None = None,
) -> ReviewRecord:
    """The record a register row names, opened from the folder the register states.

    Parameters
    ----------
    row : Record
        A row read from the register (``release.register.history``).
    key, trust
        As :func:`synthreview.record.store.open_review`: what the record is verified with.

    Returns
    -------
    ReviewRecord
        Verified or not (``record.verified`` says, as for any opened record).

    Raises
    ------
    EvidenceNotFound
        The row names no folder (recorded without one, or before the register kept locations),
        the folder is gone or is not a review any more, or it holds another record or no longer
        the row's countersignature.
    ConfigError
        ``key`` or the trust folder cannot be read.
    """
    if not row.location:
        raise EvidenceNotFound(
            f"evidence not found: record #{row.seq} names no review folder (it was recorded "
            "without one, from the dashboard's downloads, or before the register kept folders)"
        )
    where = Path(row.location)
    if not where.is_dir():
        raise EvidenceNotFound(
            f"evidence not found at {row.location}: no folder there any more (moved or deleted)"
        )
    try:
        record = open_review(where, key=key, trust=trust)
    except DataError as exc:
        raise EvidenceNotFound(f"evidence not found at {row.location}: {exc}") from exc
    expected = row.statement_sha256 or row.review_id
    found = record_statement_sha256(record)
    if found != expected:
        raise EvidenceNotFound(
            f"evidence not found at {row.location}: the folder holds another review (statement "
            f"sha256 {found[:12]}..., the register recorded {expected[:12]}...)"
        )
    if row.review_id != expected and row.review_id not in _digests(record.countersignatures):
        raise EvidenceNotFound(
            f"evidence not found at {row.location}: the folder holds the record but not the "
            f"countersignature of record #{row.seq} (review id {row.review_id[:12]}...)"
        )
    return record


def _digests(envelopes: tuple[bytes, ...]) -> set[str]:
    """The statement digests of the envelopes that can be read (a damaged one names none)."""
    found = set()
    for envelope in envelopes:
        try:
            found.add(statement_digest(envelope))
        except (EnvelopeError, ValueError):
            continue
    return found
