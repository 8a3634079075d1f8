"""What a browser uploads that the dashboard reads as keys or as a signed review: checked here.

A PEM key file is refused above :data:`MAX_KEY_BYTES` before it is parsed; an uploaded review
ZIP is read in memory (``record.store.read_review_zip``: member paths, sizes and counts checked)
and verified with the signer's public key.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError
from synthreview.record.store import read_review_zip
from synthreview.release.signing import (
    Verification,
    load_private_key,
    load_public_key,
    verify_files,
)

__all__ = ["MAX_KEY_BYTES", "key_bytes", "private_key", "verify_review_zip"]

#: the most bytes a PEM key file may have (an Ed25519 PEM key is a few hundred bytes)
MAX_KEY_BYTES = 64 * 1024


def key_bytes(data: bytes, *, what: str) -> bytes:
    """``data`` when it may be a PEM key file; ``ConfigError`` naming ``what`` otherwise."""
    if len(data) > MAX_KEY_BYTES:
        raise ConfigError(
            f"{what} must be a PEM key file of at most {MAX_KEY_BYTES} bytes; got {len(data)} "
            "bytes instead"
        )
    return data


def private_key(data: bytes, *, passphrase: str = "") -> Ed25519PrivateKey:
    """The Ed25519 signing key of an uploaded PEM file (parsed in memory, never written).

    Raises
    ------
    ConfigError
        Too large, not an Ed25519 PEM key, or the wrong passphrase.
    """
    return load_private_key(
        key_bytes(data, what="the signing key"), passphrase=passphrase.encode("utf-8") or None
    )


def verify_review_zip(data: bytes, public_key: bytes) -> Verification:
    """``signing.verify_files`` on the files of an uploaded review ZIP, with a PEM public key.

    Raises
    ------
    ConfigError
        The ZIP (``record.store.read_review_zip``) or the public key cannot be read.
    """
    key = load_public_key(key_bytes(public_key, what="the public key"))
    return verify_files(read_review_zip(data), key)
