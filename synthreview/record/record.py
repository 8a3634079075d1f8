"""The review record: one frozen value that holds a whole review, its release and its signatures.

A :class:`ReviewRecord` is what a review *is* once it is computed: the inputs, options and
policy, the :class:`~synthreview.review.Report` with every section of every candidate, each
candidate's :class:`~synthreview.release.pipeline.CandidateRelease` (audit table, thresholds,
curation, curated verdicts, re-attack, decision and reason), the meeting's sign-off, the files
of the review folder, the signature and countersignatures, the versions and the times.
:func:`build_record` makes one from a live run; :mod:`synthreview.record.store` writes it as the
review folder and reads it back (``open_review``) without recomputing anything.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from typing import Any

from synthreview.judgement.decision import Decision
from synthreview.judgement.ledger import PriorRelease
from synthreview.judgement.policy import Policy
from synthreview.judgement.waivers import Waiver
from synthreview.record.codec import to_record_json
from synthreview.release.controls import PlantedControls
from synthreview.release.curation import CurationResult
from synthreview.release.export import dumps
from synthreview.release.pipeline import CandidateRelease, Release
from synthreview.release.signoff import SignOff
from synthreview.review import Report

__all__ = [
    "RECORD_FORMAT",
    "RECORD_NAME",
    "RECORD_VERSION",
    "ReviewRecord",
    "Serialised",
    "Verified",
    "build_record",
]

#: the file of a review folder that holds the record's typed content (lossless JSON)
RECORD_NAME = "record.json"
RECORD_FORMAT = "synthreview-review-record"
#: 2: text and masked columns as arrays, large arrays once in a blob table (``record.codec``)
RECORD_VERSION = 2


#: the fields of a :class:`ReviewRecord` that ``record.json`` does not hold: two records that
#: differ only in these have the same ``record.json``
_NOT_IN_JSON = frozenset(
    {"files", "signature", "countersignatures", "verified", "notices", "location", "serialised"}
)


@dataclass(frozen=True)
class Serialised:
    """``record.json``'s bytes and the field values they were made from.

    Attributes
    ----------
    parts : tuple
        The record's fields that ``record.json`` holds, as they were when it was made.
    data : bytes
    """

    parts: tuple[Any, ...] = field(repr=False)
    data: bytes = field(repr=False)

    def of(self, parts: tuple[Any, ...]) -> bytes | None:
        """``data`` when ``parts`` are the very objects it was made from, else None (a value
        replaced by an equal one is serialised again: equality of tables is not cheap)."""
        same = len(parts) == len(self.parts) and all(
            a is b for a, b in zip(parts, self.parts, strict=True)
        )
        return self.data if same else None


@dataclass(frozen=True)
class Verified:
    """How a record's signatures checked out when it was opened.

    Attributes
    ----------
    ok : bool
        True only when the signature verifies with a trusted key and every file matches.
    reason : str
        Why not (each problem starting with the file it concerns), or what was verified.
    keyid : str or None
        The key id of the signature (``release.signing.key_id``), when the record is signed.
    time : str or None
        When the signed record was made (the statement's ``time``).
    review_id : str or None
        sha256 of the signed statement: the record's identity in the register.
    """

    ok: bool
    reason: str
    keyid: str | None = None
    time: str | None = None
    review_id: str | None = None

    @property
    def line(self) -> str:
        """The sentence every page shows: "verified - signed by ..." or "NOT VERIFIED: ..."."""
        if self.ok:
            return f"verified - signed by {self.keyid} at {self.time}"
        return f"NOT VERIFIED: {self.reason}"


@dataclass(frozen=True)
class ReviewRecord:
    """One review, whole: what was reviewed, every number, every decision and who signed.

    Attributes
    ----------
    report : Report
        Every section of every candidate (``review.evaluate``), with the inputs (name, role,
        rows, columns, sha256), options, seed, loading notices and sampling.
    releases : mapping of str to CandidateRelease
        Each candidate's release (``release.pipeline.release_candidate``). A candidate that may
        not ship keeps its removed rows and audit, never its kept rows.
    policy : Policy
    policy_text : str or None
        The policy file's text as loaded (None when it was not at hand).
    controls : PlantedControls or None
    prior : tuple of PriorRelease
        Earlier releases of the same source the decisions were capped by (the ledger).
    claimed_epsilon : float or None
        The DP guarantee claimed for the candidates, when one was.
    waivers : tuple of Waiver
        Approved exceptions the decisions took into account.
    signoff : mapping of str to SignOff
        The meeting's sign-off filed with the prepared record.
    generated_at : str
        When the record was made (``report.json`` ``generated_at``).
    versions : mapping of str to str
        Package versions (``manifest.json`` ``versions``).
    files : mapping of str to bytes
        The review folder's files (``report.json``, ``report.html``, per-candidate CSV /
        Parquet, ``manifest.json``): its completion marker, signature and countersignatures
        aside.
    signature : bytes or None
        The DSSE envelope ``release.intoto.jsonl`` of a signed record.
    countersignatures : tuple of bytes
        The meeting's countersignatures (``countersign.N.intoto.jsonl``), in order.
    verified : Verified or None
        How the signatures checked out when the record was opened (None for a record just
        built: nothing to check yet). Not part of the record's identity.
    notices : tuple of str
        What opening found missing or odd (e.g. a folder written by an earlier synthreview).
    location : str or None
        The review folder the record was opened from (absolute); None for a ZIP, its bytes or
        a record built in memory. Where a countersignature is written and the register's
        evidence location. Not part of the record's identity.
    serialised : Serialised or None
        ``record.json``'s bytes as :func:`build_record` made them (about a second at 40,000
        rows), so listing the record in its manifest, signing it and writing it serialise it
        once. ``dataclasses.replace`` hands them on; :meth:`record_json` uses them only while
        every field they were made from is the same object. Not part of the record's identity.
    """

    report: Report
    releases: Mapping[str, CandidateRelease]
    policy: Policy
    policy_text: str | None = None
    controls: PlantedControls | None = None
    prior: tuple[PriorRelease, ...] = ()
    claimed_epsilon: float | None = None
    waivers: tuple[Waiver, ...] = ()
    signoff: Mapping[str, SignOff] = field(default_factory=dict)
    generated_at: str = ""
    versions: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    signature: bytes | None = field(default=None, repr=False)
    countersignatures: tuple[bytes, ...] = field(default=(), repr=False)
    verified: Verified | None = field(default=None, compare=False)
    notices: tuple[str, ...] = field(default=(), compare=False)
    location: str | None = field(default=None, compare=False)
    serialised: Serialised | None = field(default=None, compare=False, repr=False)

    @property
    def inputs(self) -> list[dict[str, Any]]:
        """One entry per input file: name, role, rows, columns, sha256."""
        return list(self.report.inputs)

    @property
    def candidates(self) -> list[str]:
        """The candidates, in review order."""
        return list(self.report.candidates)

    @property
    def stated(self) -> dict[str, Any]:
        """``report.json`` as filed (parsed)."""
        data = self.files.get("report.json")
        return json.loads(data) if data else {}

    @property
    def decisions(self) -> dict[str, Decision]:
        """Candidate -> decision, as ``report.json`` states it."""
        stated = self.stated.get("decisions") or {}
        known = {f.name for f in fields(Decision)}
        return {
            name: Decision(**{k: v for k, v in entry.items() if k in known})
            for name, entry in stated.items()
        }

    @property
    def release(self) -> Release:
        """The releases as ``release.pipeline.Release`` (files, candidates, policy, controls)."""
        return Release(
            dict(self.files),
            dict(self.releases),
            self.policy,
            self.controls,
            self.prior,
            self.claimed_epsilon,
            self.waivers,
        )

    def content(self) -> dict[str, Any]:
        """What ``record.json`` holds (``codec.to_record_json`` of the typed content)."""
        return to_record_json(
            {
                "report": self.report,
                "releases": dict(self.releases),
                "policy": self.policy,
                "policy_text": self.policy_text,
                "controls": self.controls,
                "prior": self.prior,
                "claimed_epsilon": self.claimed_epsilon,
                "waivers": self.waivers,
                "signoff": dict(self.signoff),
                "generated_at": self.generated_at,
                "versions": dict(self.versions),
            }
        )

    def record_json(self) -> bytes:
        """The bytes of ``record.json`` (equal content gives equal bytes): ``serialised``'s
        while they are this record's."""
        made = self.serialised.of(self._json_parts()) if self.serialised is not None else None
        if made is not None:
            return made
        content = {"format": RECORD_FORMAT, "version": RECORD_VERSION, "content": self.content()}
        text = json.dumps(content, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")

    def keeping_json(self) -> ReviewRecord:
        """This record holding its ``record.json`` bytes (``serialised``)."""
        return replace(self, serialised=Serialised(self._json_parts(), self.record_json()))

    def _json_parts(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in fields(self) if f.name not in _NOT_IN_JSON)

    def equivalent(self, other: ReviewRecord) -> bool:
        """Whether ``other`` holds the same record: every number, table, file and signature.

        ``==`` cannot compare records (arrays and tables inside have no single truth value);
        this compares their lossless JSON (``codec.to_record_json``: floats bit for bit, arrays
        as bytes, NaN equal to NaN) and the folder's files byte for byte. How the record
        verified on opening and what opening noticed are not part of it.
        """
        if not isinstance(other, ReviewRecord):
            return False
        return (
            _same(self.content(), other.content())
            and dict(self.files) == dict(other.files)
            and self.signature == other.signature
            and self.countersignatures == other.countersignatures
        )

    def differences(self, other: ReviewRecord) -> list[str]:
        """Where ``other`` differs (JSON paths and file names); empty when equivalent."""
        found: list[str] = []
        _diff(self.content(), other.content(), "record", found)
        for name in sorted(set(self.files) | set(other.files)):
            if self.files.get(name) != other.files.get(name):
                found.append(f"file {name}")
        if self.signature != other.signature:
            found.append("signature")
        if self.countersignatures != other.countersignatures:
            found.append("countersignatures")
        return found


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _diff(a: Any, b: Any, where: str, found: list[str], limit: int = 20) -> None:
    if len(found) >= limit or _same(a, b):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            _diff(a.get(key), b.get(key), f"{where}.{key}", found, limit)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{where}[{i}]", found, limit)
        return
    found.append(where)


def _evidence_only(curation: CurationResult) -> CurationResult:
    """A curation without its kept rows: what a candidate that may not ship keeps on file."""
    kept_raw = curation.kept_raw.iloc[0:0]
    kept_frame = curation.kept_frame.iloc[0:0]
    return replace(
        curation,
        kept_raw=kept_raw,
        kept_frame=kept_frame,
        table=replace(curation.table, frame=kept_frame, raw=kept_raw),
    )


def _shipped(release: CandidateRelease, decision: Decision) -> CandidateRelease:
    if release.curated is None or decision.ships:
        return release
    curated = replace(release.curated, curation=_evidence_only(release.curated.curation))
    return replace(release, curated=curated)


def default_policy_text(policy: Policy) -> str | None:
    """The shipped policy file's text when ``policy`` is it (same sha256), else None."""
    data = resources.files("synthreview.policies").joinpath("default.toml").read_bytes()
    return data.decode("utf-8") if hashlib.sha256(data).hexdigest() == policy.sha256 else None


def build_record(
    release: Release,
    report: Report,
    *,
    signoff: Mapping[str, SignOff] | None = None,
    policy_text: str | None = None,
) -> ReviewRecord:
    """The record of a live run: ``report`` and ``release`` (``review_release`` / the dashboard).

    Parameters
    ----------
    release : Release
        Its ``files`` are the review folder (unsigned); ``candidates`` every candidate's release.
    report : Report
        The report the release was made from.
    signoff : mapping of str to SignOff, optional
        The sign-off filed in ``release.files`` (default: none).
    policy_text : str, optional
        The policy file's text; default: the shipped policy's when ``release.policy`` is it.

    Returns
    -------
    ReviewRecord
        Unsigned; ``record.store.write_record`` signs it when given a key.
    """
    missing = [n for n in report.candidates if n not in release.candidates]
    if missing:
        raise ValueError(
            f"release must hold a release of every candidate of the report; missing {missing}"
        )
    stated = json.loads(release.files["report.json"])
    decided = release.decisions  # waivers and the ledger's caps included
    versions: dict[str, str] = {}
    if "manifest.json" in release.files:
        versions = dict(json.loads(release.files["manifest.json"]).get("versions") or {})
    record = ReviewRecord(
        report=replace(report, context=None),
        releases={n: _shipped(release.candidates[n], decided[n]) for n in report.candidates},
        policy=release.policy,
        policy_text=policy_text if policy_text is not None else default_policy_text(release.policy),
        controls=release.controls,
        prior=tuple(release.prior),
        claimed_epsilon=release.claimed_epsilon,
        waivers=tuple(release.waivers),
        signoff=dict(signoff or {}),
        generated_at=str(stated.get("generated_at") or ""),
        versions=versions,
        files=dict(release.files),
    )
    # made once here: the manifest lists it, and signing and writing the record reuse it
    record = record.keeping_json()
    return replace(record, files=_listed(record))


def _listed(record: ReviewRecord) -> dict[str, bytes]:
    """The record's files with ``manifest.json`` listing ``record.json`` among the outputs."""
    files = dict(record.files)
    if "manifest.json" not in files:
        return files
    data = record.record_json()
    manifest = json.loads(files["manifest.json"])
    outputs = dict(manifest.get("outputs") or {})
    outputs[RECORD_NAME] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    manifest["outputs"] = dict(sorted(outputs.items()))
    files["manifest.json"] = dumps(manifest)
    return files
