"""Signed approvals of waivers: the second key that turns a requested exception into a granted one.

An approval is a DSSE envelope (as the signed record, :mod:`synthreview.release.signing`) whose
payload, of type :data:`APPROVAL_TYPE`, names the rule, the requester's justification, the
requester's key id and the sha256 of the candidate file it is granted for, with the time of
approval. ``synthreview approve`` writes one with the approver's key; ``review --waive RULE
--reason TEXT --approval FILE --approver-key PUB`` reads it back, verifies it with the public key
given (never a key the file carries), and refuses an approval signed by the requester's own key.
The approval binds to the candidate's bytes, not to a review id, since the approver signs before
the review that uses it is written; the review then files the approval in its signed record.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from synthreview.errors import ConfigError
from synthreview.judgement.waivers import Waiver
from synthreview.release.signing import EnvelopeError, canonical_json, key_id, pae, read_envelope

#: DSSE payload type of a waiver approval
APPROVAL_TYPE = "application/vnd.synthreview.waiver-approval+json"
_FIELDS = ("rule", "reason", "requester", "candidate_sha256", "approved_at")


@dataclass(frozen=True)
class Approval:
    """A verified approval: what it grants, for which candidate file, by which key, when."""

    rule: str
    reason: str
    requester: str
    candidate_sha256: str
    approved_at: str
    approver: str


def approval_bytes(
    key: Ed25519PrivateKey,
    *,
    rule: str,
    reason: str,
    requester: str,
    candidate_sha256: str,
    approved_at: datetime | None = None,
) -> bytes:
    """A signed approval (one JSON line) of waiving ``rule`` for one candidate file.

    Raises
    ------
    ConfigError
        ``key`` is the requester's own key: an exception needs a second person.
    """
    approver = key_id(key.public_key())
    if approver == requester:
        raise ConfigError(
            "option --key must be the approver's own key, not the requester's; got the key "
            f"{requester[:16]} that requested the waiver"
        )
    payload = canonical_json(
        {
            "rule": rule,
            "reason": reason,
            "requester": requester,
            "candidate_sha256": candidate_sha256,
            "approved_at": (approved_at or datetime.now(UTC)).isoformat(timespec="seconds"),
        }
    )
    envelope = {
        "payload": base64.b64encode(payload).decode("ascii"),
        "payloadType": APPROVAL_TYPE,
        "signatures": [
            {
                "keyid": approver,
                "sig": base64.b64encode(key.sign(pae(APPROVAL_TYPE, payload))).decode("ascii"),
            }
        ],
    }
    return canonical_json(envelope) + b"\n"


def read_approval(data: bytes, approver: Ed25519PublicKey, *, where: str) -> Approval:
    """Verify an approval with the approver's public key and return what it grants.

    Raises
    ------
    ConfigError
        Not an approval envelope, no signature by ``approver`` that verifies, or a payload
        without its fields; the message names ``where``.
    """
    wanted = key_id(approver)
    try:
        envelope = read_envelope(data)
    except EnvelopeError as exc:
        raise ConfigError(f"{where} is not a signed approval: {exc}") from None
    if envelope.payload_type != APPROVAL_TYPE:
        raise ConfigError(
            f"{where} must be a waiver approval ({APPROVAL_TYPE}); got "
            f"{envelope.payload_type!r} instead"
        )
    for keyid, sig in envelope.signatures:
        if keyid != wanted:
            continue
        try:
            approver.verify(sig, pae(APPROVAL_TYPE, envelope.payload))
        except InvalidSignature:
            continue
        break
    else:
        raise ConfigError(f"{where} carries no valid signature by the approver key {wanted[:16]}")
    try:
        content = json.loads(envelope.payload)
    except ValueError as exc:
        raise ConfigError(f"{where}: the approval's payload is not JSON ({exc})") from None
    if not isinstance(content, Mapping) or not all(
        isinstance(content.get(f), str) for f in _FIELDS
    ):
        raise ConfigError(f"{where}: the approval must name {', '.join(_FIELDS)} as text")
    return Approval(*(str(content[f]) for f in _FIELDS), approver=wanted)


def waivers_for(
    requests: Sequence[tuple[str, str]],
    *,
    requester: str,
    requested_at: str,
    candidates: Mapping[str, str],
    approvals: Sequence[Approval] = (),
) -> tuple[Waiver, ...]:
    """One :class:`Waiver` per requested rule and candidate, approved where an approval grants
    that rule, justification and requester for that candidate's file (``candidates``:
    ``{name: input sha256}``)."""
    waivers = []
    for rule, reason in requests:
        for name, sha256 in sorted(candidates.items()):
            granted = next(
                (
                    a
                    for a in approvals
                    if (a.rule, a.reason, a.requester, a.candidate_sha256)
                    == (rule, reason, requester, sha256)
                    and a.approver != requester
                ),
                None,
            )
            waivers.append(
                Waiver(
                    rule=rule,
                    reason=reason,
                    requester=requester,
                    requested_at=requested_at,
                    candidates=(name,),
                    approver=granted.approver if granted else None,
                    approved_at=granted.approved_at if granted else None,
                )
            )
    return tuple(waivers)
