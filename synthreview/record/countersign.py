"""The release meeting countersigns a prepared record: a signed statement over it, per candidate.

A countersignature is an in-toto Statement v1 in a DSSE envelope (Ed25519, as
:mod:`synthreview.release.signing` signs the record) whose subjects are the prepared record's
statement (``record``, by its sha256) and the statement it follows (``statement``: the record's
for the first countersignature, the previous countersignature's after that), and whose
predicate is the meeting's sign-off per candidate: reviewers and their roles, the meeting's
decision, the reason (required when it differs from the tool's decision) and the time. It is
written beside the record as ``countersign.N.intoto.jsonl``; ``record.trust`` checks the chain
when the record is opened and ``synthreview verify`` when it is verified, so removing,
reordering or changing any link fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from synthreview.errors import ConfigError
from synthreview.judgement.verdicts import OUTCOMES, Outcome
from synthreview.record.record import ReviewRecord
from synthreview.record.trust import COUNTERSIGN_TYPE, TRUST_ENV, countersign_name, statement_digest
from synthreview.release.folder import MARKER, FileDigest, marker_bytes
from synthreview.release.register import (
    AppendResult,
    Record,
    append_records,
    check_register,
    records_from_statement,
)
from synthreview.release.signing import (
    STATEMENT_TYPE,
    key_id,
    read_envelope,
    read_folder,
    sign_statement,
)

__all__ = [
    "Countersigned",
    "MeetingSignOff",
    "append_countersignature",
    "countersign",
    "countersign_folder",
    "countersign_records",
    "countersigned_decisions",
    "meeting_signoff",
    "reviewers_from_text",
]

MAX_TEXT = 5000


@dataclass(frozen=True)
class MeetingSignOff:
    """The meeting's decision on one candidate of a prepared record.

    Attributes
    ----------
    candidate : str
    decision : {"release", "release_after_curation", "do_not_release", "incomplete"}
        What the meeting decided; chosen, never carried over from another candidate.
    reason : str
        Why; required when ``decision`` differs from the record's (the tool's) decision.
    reviewers : tuple of (name, role)
    tool_decision : str
        The record's decision for the candidate, as ``report.json`` states it.
    time : datetime
    """

    candidate: str
    decision: Outcome
    reason: str
    reviewers: tuple[tuple[str, str], ...]
    tool_decision: str
    time: datetime

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready sign-off (time in UTC, to the second)."""
        return {
            "decision": self.decision,
            "reason": self.reason,
            "reviewers": [{"name": n, "role": r} for n, r in self.reviewers],
            "tool_decision": self.tool_decision,
            "time": self.time.astimezone(UTC).isoformat(timespec="seconds"),
        }


def meeting_signoff(
    record: ReviewRecord,
    candidate: str,
    *,
    decision: str | None,
    reviewers: Sequence[tuple[str, str]],
    reason: str = "",
    time: datetime | None = None,
) -> MeetingSignOff:
    """One candidate's sign-off, checked against the record.

    Raises
    ------
    ConfigError
        No decision chosen (None), an unknown candidate or decision, no reviewer, a reviewer
        without name or role, or no reason where the meeting's decision differs from the
        tool's.
    """
    stated = record.decisions
    if decision is None:
        raise ConfigError(
            f"the meeting's decision for {candidate!r} must be chosen (it is blank until the "
            "meeting chooses); got none"
        )
    if candidate not in stated:
        raise ConfigError(
            f"candidate must be one of the record's candidates {sorted(stated)}; got "
            f"{candidate!r} instead"
        )
    if decision not in OUTCOMES:
        raise ConfigError(
            f"decision for {candidate!r} must be one of {list(OUTCOMES)}; got {decision!r} instead"
        )
    people = tuple((str(n).strip(), str(r).strip()) for n, r in reviewers)
    if not people or any(not n or not r for n, r in people):
        raise ConfigError(
            f"reviewers of {candidate!r} must be at least one (name, role), each non-empty; got "
            f"{list(reviewers)!r} instead"
        )
    tool = stated[candidate].outcome
    why = reason.strip()
    if decision != tool and not why:
        raise ConfigError(
            f"reason for {candidate!r} is required: the meeting decides {decision}, the record "
            f"states {tool}; got no reason"
        )
    if len(why) > MAX_TEXT:
        raise ConfigError(f"reason for {candidate!r} must be at most {MAX_TEXT} characters")
    return MeetingSignOff(candidate, decision, why, people, tool, time or datetime.now(UTC))


def countersign(
    record: ReviewRecord, signoffs: Sequence[MeetingSignOff], key: Ed25519PrivateKey
) -> bytes:
    """The DSSE envelope of the meeting's countersignature of ``record`` (one JSON line).

    Raises
    ------
    ConfigError
        The record is not signed, or did not verify when opened (a record that is NOT
        VERIFIED is never countersigned), or no or a repeated candidate is signed off.
    """
    verified = record.verified
    if record.signature is None or verified is None or not verified.ok:
        why = verified.reason if verified is not None else "it was not opened with a key"
        raise ConfigError(
            f"only a verified record can be countersigned; this one is NOT VERIFIED: {why}"
        )
    names = [s.candidate for s in signoffs]
    if not names or len(set(names)) != len(names):
        raise ConfigError(
            f"signoffs must sign off each candidate at most once, at least one; got {names}"
        )
    previous = (
        statement_digest(record.countersignatures[-1])
        if record.countersignatures
        else statement_digest(record.signature)
    )
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": "record", "digest": {"sha256": statement_digest(record.signature)}},
            {"name": "statement", "digest": {"sha256": previous}},
        ],
        "predicateType": COUNTERSIGN_TYPE,
        "predicate": {
            "signoff": {s.candidate: s.to_dict() for s in signoffs},
            "countersignature": len(record.countersignatures) + 1,
        },
    }
    return sign_statement(statement, key)


def append_countersignature(
    record: ReviewRecord, envelope: bytes, folder: str | os.PathLike[str]
) -> ReviewRecord:
    """Write ``envelope`` beside the record at ``folder`` as the next countersignature.

    The completion marker is rewritten to list it (written aside, then renamed over the old
    one). Returns the record with the countersignature added.

    Raises
    ------
    ConfigError
        ``folder`` does not hold this record's signature, or already holds that file.
    """
    root = Path(folder)
    files = read_folder(root)
    if record.signature is None or files.get("release.intoto.jsonl") != record.signature:
        raise ConfigError(
            f"folder {str(root)!r} must hold the signed record being countersigned; its "
            "release.intoto.jsonl differs"
        )
    name = countersign_name(len(record.countersignatures) + 1)
    try:
        # exclusive create: two meetings countersigning at once never overwrite each other
        with open(root / name, "xb") as out:
            out.write(envelope)
    except FileExistsError:
        raise ConfigError(
            f"folder {str(root)!r} already holds {name}; open it again first"
        ) from None
    files[name] = envelope
    listed = [
        FileDigest(n, hashlib.sha256(d).hexdigest(), len(d))
        for n, d in files.items()
        if n != MARKER
    ]
    handle, staged = tempfile.mkstemp(dir=root, prefix=".marker-")
    with os.fdopen(handle, "wb") as out:
        out.write(marker_bytes(listed))
    os.replace(staged, root / MARKER)
    return replace(record, countersignatures=(*record.countersignatures, envelope))


def countersigned_decisions(record: ReviewRecord) -> dict[str, Mapping[str, Any]]:
    """Candidate -> the latest countersigned sign-off (``MeetingSignOff.to_dict``)."""
    found: dict[str, Mapping[str, Any]] = {}
    for envelope in record.countersignatures:
        statement = json.loads(read_envelope(envelope).payload)
        found.update((statement.get("predicate") or {}).get("signoff") or {})
    return found


def countersign_records(
    record: ReviewRecord,
    envelope: bytes,
    *,
    keyid: str,
    location: str | os.PathLike[str] | None = None,
) -> list[Record]:
    """The register rows of a countersignature: one per candidate signed off.

    Each is the prepared record's row of the candidate (``release.register``) with the
    meeting's reviewers, decision and reason, under the countersignature's statement digest as
    its review id and the meeting's key id, so it is appended beside the prepared record's rows.
    ``location`` is the folder holding the record and the countersignature; the rows'
    ``statement_sha256`` is the prepared record's statement, which History checks there.
    """
    if record.signature is None:
        raise ConfigError("only a signed record's countersignature can be registered")
    prepared = json.loads(read_envelope(record.signature).payload)
    predicate = json.loads(read_envelope(envelope).payload).get("predicate") or {}
    signed = predicate.get("signoff") or {}
    rows = records_from_statement(
        prepared, review_id=statement_digest(envelope), keyid=keyid, location=location
    )
    return [
        replace(
            row,
            reviewer="; ".join(
                f"{p['name']} ({p['role']})" for p in signed[row.candidate]["reviewers"]
            ),
            signed_decision=signed[row.candidate]["decision"],
            signed_reason=signed[row.candidate]["reason"],
            statement_sha256=statement_digest(record.signature),
        )
        for row in rows
        if row.candidate in signed
    ]


def reviewers_from_text(text: str) -> list[tuple[str, str]]:
    """The reviewers a meeting types, one per line as ``name: role`` (as ``--reviewer``).

    Raises
    ------
    ConfigError
        A line without ``:``, or with an empty name or role.
    """
    people = []
    for line in str(text).splitlines():
        if not line.strip():
            continue
        name, found, role = line.partition(":")
        if not found or not name.strip() or not role.strip():
            raise ConfigError(
                "reviewers must be one per line as 'name: role' (e.g. 'Ann Lee: chair'); got "
                f"{line.strip()!r} instead"
            )
        people.append((name.strip(), role.strip()))
    return people


@dataclass(frozen=True)
class Countersigned:
    """What :func:`countersign_folder` did.

    Attributes
    ----------
    record : ReviewRecord
        The record with the new countersignature (as it now is on disk).
    file : str
        The countersignature's file name in the record's folder.
    keyid : str
        The meeting's key id.
    registered : AppendResult
        The register rows appended (one per candidate signed off).
    """

    record: ReviewRecord
    file: str
    keyid: str
    registered: AppendResult


def countersign_folder(
    record: ReviewRecord,
    signoffs: Sequence[MeetingSignOff],
    key: Ed25519PrivateKey,
    *,
    register: str | None,
    trusted: Mapping[str, Ed25519PublicKey],
) -> Countersigned:
    """The dashboard's countersignature: signed, written beside the record, registered.

    The same steps as ``synthreview countersign --register`` (:func:`countersign`,
    :func:`append_countersignature`, :func:`countersign_records`), for a record opened from a
    folder on the server (``record.location``), with two checks more, both before anything is
    written: the meeting's key must be one the server trusts (``trusted``: the key
    ``synthreview show`` was given and ``$SYNTHREVIEW_TRUST``'s), so that the countersigned
    record verifies when it is opened again and its register rows name a trusted signer; and
    the register must open.

    Parameters
    ----------
    record : ReviewRecord
        Opened from a folder and verified (``record.verified.ok``).
    signoffs : sequence of MeetingSignOff
        :func:`meeting_signoff` per candidate.
    key : Ed25519PrivateKey
        The meeting's key.
    register : str or None
        The server's register (``release.register`` URL or path; None: the default location).
    trusted : mapping of key id to Ed25519PublicKey
        ``record.trust.trusted_keys`` of the server.

    Raises
    ------
    ConfigError
        The record is NOT VERIFIED or was not opened from a folder; the key is not trusted; the
        register cannot be opened; a sign-off is refused (see :func:`countersign`).
    """
    if record.location is None:
        raise ConfigError(
            "only a record opened from a review folder on this server can be countersigned "
            "here (the countersignature is written beside it); this one was opened from a ZIP: "
            "countersign the folder with `synthreview countersign`"
        )
    keyid = key_id(key.public_key())
    if keyid not in trusted:
        raise ConfigError(
            f"the meeting's key {keyid[:16]} is not one this server trusts, so the "
            "countersignature would open as NOT VERIFIED; the operator adds its public key to "
            f"the trust folder ({TRUST_ENV}) or gives it to `synthreview show --key`"
        )
    envelope = countersign(record, signoffs, key)  # refuses a record that is NOT VERIFIED
    check_register(register)  # before anything is written
    signed = append_countersignature(record, envelope, record.location)
    rows = countersign_records(signed, envelope, keyid=keyid, location=record.location)
    return Countersigned(
        record=signed,
        file=countersign_name(len(signed.countersignatures)),
        keyid=keyid,
        registered=append_records(register, rows),
    )
