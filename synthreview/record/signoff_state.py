"""The meeting's part of a dashboard session: its sign-off, waivers, approvals and signing key.

:class:`SignoffState` is the part of :class:`~synthreview.record.session.ReviewSession` that
holds what the reviewers bring to a loaded review rather than what the engine computes: the
meeting's sign-off per candidate, the waiver requests and the second-key approvals that make
them count, and the Ed25519 signing key (this session only, never written to disk). Its keys
below are spelled only here. It never draws and never imports Streamlit.

``ReviewSession`` inherits it; the sign-off reads the tool's decision, and a waiver the
policy's rules and the candidates' sha256, through the session's ``loaded_summary``,
``get_policy`` and ``get_review``.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError
from synthreview.judgement.waivers import Waiver
from synthreview.record.uploads import private_key
from synthreview.release.signing import ENVELOPE_NAME, key_id, load_public_key
from synthreview.release.signoff import SignOff, sign_off
from synthreview.release.waivers import read_approval, waivers_for

__all__ = ["SignoffState"]

SIGNOFF_KEY = "_signoff"  # {candidate: SignOff} of the loaded review
WAIVERS_KEY = "_waiver_requests"  # [(rule, reason, requested at)]: the Audit page's requests
APPROVALS_KEY = "_waiver_approvals"  # [Approval]: second-key approvals verified on upload
SIGNING_UPLOAD_KEY = "audit_signing_key"  # the private key file uploader (Audit page)
SIGNING_PASSPHRASE_KEY = "audit_signing_passphrase"
SIGNING_KEY = "_signing_key"  # the loaded Ed25519PrivateKey: this session only, never disk
SIGNING_ERROR_KEY = "_signing_error"


class SignoffState:
    """The meeting's sign-off, waivers, approvals and signing key of one session.

    Attributes
    ----------
    state : mutable mapping of str
        The session's mapping (``ReviewSession.state``).
    """

    state: MutableMapping[str, Any]

    # --- the meeting's sign-off and waivers ----------------------------------------------------
    def signoffs(self) -> dict[str, SignOff]:
        """``{candidate: SignOff}`` entered on the Audit page for the loaded review."""
        return self.state.setdefault(SIGNOFF_KEY, {})

    def record_signoff(
        self, name: str, *, reviewer: str, decision: str | None, reason: str, comment: str
    ) -> str | None:
        """Validate and store the meeting's sign-off of ``name``; the error text, or None.
        ``decision`` is None until the meeting chooses one: nothing is stored then."""
        if decision is None:
            return "choose the meeting's decision first (it is blank until the meeting chooses)"
        tool = self.loaded_summary().decisions[name].outcome
        try:
            self.signoffs()[name] = sign_off(
                reviewer, decision, tool_decision=tool, reason=reason, comment=comment
            )
        except ConfigError as exc:
            return str(exc)
        return None

    def request_waiver(self, rule: str, reason: str) -> str | None:
        """File a waiver request of ``rule`` (the session's signing key is the requester);
        why it was refused, or None. No decision changes until another key approves it."""
        if self.signing_key_id() is None:
            return "load your signing key below first: the signing key is the waiver's requester"
        if rule not in self.get_policy().rules:
            return f"the waived rule must be a rule of the policy; got {rule!r}"
        if not reason.strip():
            return "a waiver needs its justification; got an empty reason"
        moment = datetime.now(UTC).isoformat(timespec="seconds")
        self.state.setdefault(WAIVERS_KEY, []).append((rule, reason.strip(), moment))
        return None

    def add_approval(self, approval: bytes, public_key: bytes) -> str | None:
        """Verify an approval (``synthreview approve``) with the approver's public key and keep
        it; why it was refused, or None."""
        try:
            approver = load_public_key(public_key)
            if key_id(approver) == self.signing_key_id():
                return "the approval must be verified with a second reviewer's key, not yours"
            found = read_approval(approval, approver, where="the approval")
        except ConfigError as exc:
            return str(exc)
        self.state.setdefault(APPROVALS_KEY, []).append(found)
        return None

    def session_waivers(self) -> tuple[Waiver, ...]:
        """The waivers requested in this session, each approved where an approval matches."""
        review = self.get_review()
        synthetic = review.synthetic.items() if review else ()
        candidates = {n: t.sha256 for n, t in synthetic if hasattr(t, "sha256")}
        approvals = tuple(self.state.get(APPROVALS_KEY, ()))
        return tuple(
            waiver
            for rule, reason, moment in self.state.get(WAIVERS_KEY, ())
            for waiver in waivers_for(
                [(rule, reason)],
                requester=self.signing_key_id() or "",
                requested_at=moment,
                candidates=candidates,
                approvals=approvals,
            )
        )

    # --- the signing key (this session only, never written) ------------------------------------
    def load_signing_key(self) -> None:
        """``on_change`` of the signing key uploader and its passphrase: load the key from the
        uploaded bytes in memory, or keep why not (the downloads then stay unsigned)."""
        upload = self.state.get(SIGNING_UPLOAD_KEY)
        self.forget_signing_key()
        if upload is None:
            return
        try:
            passphrase = self.state.get(SIGNING_PASSPHRASE_KEY) or ""
            self.state[SIGNING_KEY] = private_key(upload.getvalue(), passphrase=passphrase)
        except ConfigError as exc:
            self.state[SIGNING_ERROR_KEY] = f"{upload.name}: {exc}; the downloads stay unsigned"

    def forget_signing_key(self) -> None:
        """Drop the session's signing key (the downloads are unsigned again)."""
        self.state.pop(SIGNING_KEY, None)
        self.state.pop(SIGNING_ERROR_KEY, None)

    def signing_key(self) -> Ed25519PrivateKey | None:
        """The Ed25519 private key loaded in this session, or ``None``."""
        return self.state.get(SIGNING_KEY)

    def signing_key_id(self) -> str | None:
        """``signing.key_id`` of the session's signing key (what ``verify`` names), or None."""
        key = self.signing_key()
        return None if key is None else key_id(key.public_key())

    def signing_error(self) -> str | None:
        """Why the uploaded signing key was refused, if it was."""
        return self.state.get(SIGNING_ERROR_KEY)

    @staticmethod
    def signature_file_name() -> str:
        """The signed statement's file in a signed record (``release.intoto.jsonl``)."""
        return ENVELOPE_NAME
