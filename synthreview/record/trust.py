"""Whether an opened record can be trusted: its signature, its files and its countersignatures.

A record is **verified** only when its DSSE envelope (``release.intoto.jsonl``, Ed25519,
:mod:`synthreview.release.signing`) carries a signature by a trusted key that verifies, every
file the signed statement lists is present with its sha256 and no other file is there, the
completion marker lists the folder as it is, and every countersignature
(``countersign.N.intoto.jsonl``, :mod:`synthreview.record.countersign`) verifies with a trusted
key and names the statement before it by digest. Trusted keys are the one given (``key=``) and
the ``*.pub`` files of a trust folder (``trust=``, default the ``SYNTHREVIEW_TRUST``
environment variable). Anything else opens the record as NOT VERIFIED with the reason, naming
the file concerned.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from synthreview.errors import ConfigError
from synthreview.record.record import Verified
from synthreview.release.folder import MARKER, FileDigest, marker_bytes
from synthreview.release.signing import (
    ENVELOPE_NAME,
    PAYLOAD_TYPE,
    EnvelopeError,
    key_id,
    load_public_key,
    pae,
    read_envelope,
    read_key_file,
    verify_files,
)

__all__ = [
    "COUNTERSIGN_TYPE",
    "TRUST_ENV",
    "countersign_name",
    "countersignature_names",
    "trusted_keys",
    "verify_record_files",
]

#: environment variable naming a folder of trusted public keys (``*.pub``)
TRUST_ENV = "SYNTHREVIEW_TRUST"
#: predicate type of a meeting's countersignature
COUNTERSIGN_TYPE = "https://synthreview.dev/countersignature/v1"
_COUNTERSIGN = re.compile(r"^countersign\.([1-9][0-9]{0,5})\.intoto\.jsonl$")

KeyLike = Ed25519PublicKey | bytes | str | os.PathLike[str]


def countersign_name(n: int) -> str:
    """The file of the ``n``-th countersignature (1-based)."""
    return f"countersign.{n}.intoto.jsonl"


def countersignature_names(names: object) -> list[str]:
    """The countersignature files among ``names``, in their order (1, 2, ...)."""
    found = [(int(m.group(1)), n) for n in names if (m := _COUNTERSIGN.match(str(n)))]
    return [n for _, n in sorted(found)]


def _public_key(key: KeyLike) -> Ed25519PublicKey:
    if isinstance(key, Ed25519PublicKey):
        return key
    if isinstance(key, bytes):
        return load_public_key(key)
    return load_public_key(read_key_file(key, what="the public key"))


def trusted_keys(
    key: KeyLike | None = None, *, trust: str | os.PathLike[str] | None = None
) -> dict[str, Ed25519PublicKey]:
    """``{key id: public key}`` of ``key`` and of the ``*.pub`` files in the trust folder.

    Parameters
    ----------
    key : Ed25519PublicKey, PEM bytes or path, optional
    trust : path, optional
        A folder of PEM public keys; default the ``SYNTHREVIEW_TRUST`` environment variable
        (none when unset or empty).

    Raises
    ------
    ConfigError
        ``key`` or a key of the trust folder cannot be read, or the folder is not a folder.
    """
    keys: dict[str, Ed25519PublicKey] = {}
    if key is not None:
        public = _public_key(key)
        keys[key_id(public)] = public
    folder = trust if trust is not None else (os.environ.get(TRUST_ENV) or None)
    if folder is not None:
        root = Path(folder)
        if not root.is_dir():
            raise ConfigError(
                f"the trust folder ({TRUST_ENV} or trust=) must be a folder of *.pub keys; got "
                f"{str(root)!r} instead"
            )
        for path in sorted(root.glob("*.pub")):
            public = _public_key(path)
            keys[key_id(public)] = public
    return keys


def _signed_by(data: bytes, what: str, keys: Mapping[str, Ed25519PublicKey]) -> tuple[str, dict]:
    """The key id and statement of an envelope signed by one of ``keys``; ValueError if not."""
    try:
        envelope = read_envelope(data)
        statement = json.loads(envelope.payload)
    except (EnvelopeError, ValueError) as exc:
        raise ValueError(f"{what}: malformed envelope: {exc}") from None
    if envelope.payload_type != PAYLOAD_TYPE or not isinstance(statement, dict):
        raise ValueError(f"{what}: not an in-toto statement ({envelope.payload_type!r})")
    signers = [k for k, _ in envelope.signatures]
    known = [(k, s) for k, s in envelope.signatures if k in keys]
    if not known:
        shown = ", ".join(k[:16] or "(none)" for k in signers)
        raise ValueError(
            f"{what}: signed by key {shown}, which is neither the given key nor in the trust "
            f"folder ({TRUST_ENV})"
        )
    message = pae(envelope.payload_type, envelope.payload)
    for keyid, signature in known:
        try:
            keys[keyid].verify(signature, message)
        except InvalidSignature:
            continue
        return keyid, statement
    raise ValueError(f"{what}: the signature by key {known[0][0][:16]} does not verify")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def statement_digest(envelope: bytes) -> str:
    """sha256 of an envelope's statement bytes (``Verification.review_id`` of the record)."""
    return _digest(read_envelope(envelope).payload)


def verify_record_files(
    files: Mapping[str, bytes], keys: Mapping[str, Ed25519PublicKey]
) -> Verified:
    """How a record folder (every file, marker and signatures included) checks out.

    Parameters
    ----------
    files : mapping of str to bytes
        ``release.signing.read_folder`` of the folder (or the files of its ZIP).
    keys : mapping of key id to Ed25519PublicKey
        :func:`trusted_keys`.

    Returns
    -------
    Verified
        ``ok`` only when the record is signed by a trusted key, every file matches, the marker
        (when present) lists the folder as it is, and every countersignature verifies and names
        the statement before it; otherwise the reasons, each starting with its file.
    """
    if ENVELOPE_NAME not in files:
        return Verified(False, f"{ENVELOPE_NAME}: missing; the record is not signed")
    try:
        envelope = read_envelope(files[ENVELOPE_NAME])
        statement = json.loads(envelope.payload)
    except (EnvelopeError, ValueError) as exc:
        return Verified(False, f"{ENVELOPE_NAME}: malformed envelope: {exc}")
    review_id = _digest(envelope.payload)
    signer = envelope.signatures[0][0] if envelope.signatures else None
    predicate = statement.get("predicate") if isinstance(statement, dict) else None
    time = predicate.get("time") if isinstance(predicate, dict) else None
    trusted = next((k for k, _ in envelope.signatures if k in keys), None)
    if trusted is None:
        shown = ", ".join(k[:16] or "(none)" for k, _ in envelope.signatures)
        why = (
            f"{ENVELOPE_NAME}: signed by key {shown}, which is neither the given key nor in the "
            f"trust folder ({TRUST_ENV})"
            if keys
            else f"{ENVELOPE_NAME}: signed by key {shown}; no public key was given to verify it "
            f"(key= / --key, or a trust folder in {TRUST_ENV})"
        )
        return Verified(False, why, signer, time, review_id)
    countersigned = countersignature_names(files)
    prepared = {n: d for n, d in files.items() if n != MARKER and n not in countersigned}
    problems = list(verify_files(prepared, keys[trusted]).problems)
    if MARKER in files:
        listed = [FileDigest(n, _digest(d), len(d)) for n, d in files.items() if n != MARKER]
        if bytes(files[MARKER]) != marker_bytes(listed):
            problems.append(f"{MARKER}: does not list the folder's files as they are")
    previous = review_id
    for name in countersigned:
        try:
            _, counter = _signed_by(files[name], name, keys)
        except ValueError as exc:
            problems.append(str(exc))
            break
        subjects = {
            s.get("name"): (s.get("digest") or {}).get("sha256")
            for s in counter.get("subject") or []
            if isinstance(s, dict)
        }
        if counter.get("predicateType") != COUNTERSIGN_TYPE:
            problems.append(f"{name}: not a countersignature ({counter.get('predicateType')!r})")
        elif subjects.get("statement") != previous or subjects.get("record") != review_id:
            problems.append(
                f"{name}: does not countersign this record (its subject names another statement)"
            )
        previous = statement_digest(files[name])
    if problems:
        return Verified(False, "; ".join(problems), trusted, time, review_id)
    return Verified(True, "every file matches its signed record", trusted, time, review_id)
