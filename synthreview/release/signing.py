"""A signed release record that anyone can verify offline.

A review folder (``report.json``, ``report.html``, per-candidate CSV / Parquet,
``manifest.json``) is bound to its decision by one signed statement:

- an `in-toto Statement v1 <https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md>`_
  whose ``subject`` lists every input file (``input:ROLE:NAME``, sha256 from ``report.json``
  ``inputs``) and every output file of the folder (its relative path and sha256), and whose
  ``predicate`` (type :data:`PREDICATE_TYPE`) is the decision record: decisions and their
  reasons, every rule verdict, the policy's name and sha256, the options, the versions, the
  reviewers' sign-off and the report's time;
- wrapped in a `DSSE <https://github.com/secure-systems-lab/dsse>`_ envelope
  (``payloadType`` :data:`PAYLOAD_TYPE`), signed with Ed25519 over the DSSE
  pre-authentication encoding (:func:`pae`), and written as one line to
  :data:`ENVELOPE_NAME` next to the files it covers.

The statement is canonical JSON (sorted keys, no spaces) and Ed25519 signatures are
deterministic, so the same files and key give the same envelope bytes. The signature covers
the folder as it was produced; :func:`verify_files` accepts it only when the signature verifies
with the given key (its key id must match: the key id in an envelope is a hint, never trusted on
its own), every subject file has its recorded sha256 and no output file is there that the
statement does not list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from synthreview.errors import ConfigError
from synthreview.io.digest import file_sha256
from synthreview.release.folder import MARKER, FileDigest, marker_bytes

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://synthreview.dev/release-decision/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
ENVELOPE_NAME = "release.intoto.jsonl"
PRIVATE_KEY_NAME = "synthreview.key"
PUBLIC_KEY_NAME = "synthreview.pub"
INPUT_PREFIX = "input:"
#: the roles an input file has in a review (``report.json`` ``inputs``)
INPUT_ROLES = ("real", "holdout", "synthetic")
#: a value of parsed JSON
JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
#: a parsed JSON object: report.json, an in-toto statement, its predicate
JSONObject: TypeAlias = "dict[str, JSONValue]"
# the most bytes an envelope may have: a statement lists file digests, never data
MAX_ENVELOPE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class KeyFiles:
    """The key pair :func:`generate_keys` wrote.

    Attributes
    ----------
    private : Path
        PKCS8 PEM private key (file mode 0600; encrypted when a passphrase was given).
    public : Path
        SubjectPublicKeyInfo PEM public key, to hand to whoever verifies.
    keyid : str
        :func:`key_id` of the pair.
    """

    private: Path
    public: Path
    keyid: str


@dataclass(frozen=True)
class Verification:
    """What :func:`verify_files` found.

    Attributes
    ----------
    problems : tuple of str
        One line per failure, each starting with the file it concerns; empty when verified.
    keyid : str
        :func:`key_id` of the key verified against.
    statement : dict or None
        The statement the envelope carries (None when the envelope could not be read).
    review_id : str or None
        sha256 of the statement's bytes: the record's identity in the register.
    """

    problems: tuple[str, ...]
    keyid: str
    statement: JSONObject | None = field(default=None, compare=False)
    review_id: str | None = None

    @property
    def ok(self) -> bool:
        """True when the signature verifies and every file matches its record."""
        return not self.problems


class EnvelopeError(ValueError):
    """An envelope that is not the DSSE JSON, base64 or statement it must be."""


def canonical_json(content: object) -> bytes:
    """UTF-8 JSON with sorted keys and no spaces: equal content gives equal bytes."""
    return json.dumps(
        content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def statement_id(statement: Mapping[str, object]) -> str:
    """sha256 (hex) of a statement's canonical bytes: the review's id in the register.

    Equal to ``Verification.review_id`` of the envelope that carries the statement.
    """
    return hashlib.sha256(canonical_json(statement)).hexdigest()


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: what is signed, not the payload alone.

    ``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`` with ``LEN`` the byte length in
    ASCII decimal, so the type is authenticated with the body.

    >>> pae("http://example.com/HelloWorld", b"hello world")
    b'DSSEv1 29 http://example.com/HelloWorld 11 hello world'
    """
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def key_id(public_key: Ed25519PublicKey) -> str:
    """sha256 (hex) of the raw 32-byte Ed25519 public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def generate_keys(out: str | Path, *, passphrase: bytes | None = None) -> KeyFiles:
    """Write a new Ed25519 key pair ``out/synthreview.key`` and ``out/synthreview.pub``.

    Parameters
    ----------
    out : str or Path
        Folder; created when missing. Existing key files are never overwritten.
    passphrase : bytes, optional
        Encrypts the private key (PKCS8, best available encryption). Must not be empty.

    Raises
    ------
    ConfigError
        ``out`` exists and is not a folder, a key file already exists, or the passphrase is
        empty.
    """
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"option --out must be a folder; got {str(folder)!r} (a file) instead")
    if passphrase is not None and not passphrase:
        raise ConfigError("the passphrase must not be empty; got an empty passphrase file instead")
    private_path, public_path = folder / PRIVATE_KEY_NAME, folder / PUBLIC_KEY_NAME
    for path in (private_path, public_path):
        if path.exists():
            raise ConfigError(
                f"refusing to overwrite {str(path)!r}: a key file is already there (move it "
                "away or choose another --out)"
            )
    created = not folder.exists()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if created:
        # mkdir's mode is masked by the umask (and parents ignore it): stated after the fact,
        # so a umask of 000 cannot leave the key folder world-writable
        os.chmod(folder, 0o700)
    key = Ed25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    # created 0600 in one call (O_EXCL): the private key is never readable by others, not even
    # for a moment, and a file that appeared meanwhile is not overwritten
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(private_pem)
    os.chmod(private_path, 0o600)  # the umask could only have removed bits; state it anyway
    fd = os.open(public_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(public_pem)
    os.chmod(public_path, 0o644)  # readable by whoever verifies, whatever the umask
    return KeyFiles(private_path, public_path, key_id(key.public_key()))


def load_private_key(data: bytes, *, passphrase: bytes | None = None) -> Ed25519PrivateKey:
    """The Ed25519 private key in PEM ``data`` (as :func:`generate_keys` writes it).

    Raises
    ------
    ConfigError
        Not a PEM private key, not Ed25519, encrypted without a passphrase given, or the
        passphrase is wrong.
    """
    try:
        key = serialization.load_pem_private_key(data, password=passphrase or None)
    except TypeError as exc:
        # cryptography: encrypted without a password, or a password for an unencrypted key
        if passphrase:
            raise ConfigError(
                "the signing key is not encrypted; expected no passphrase, got one"
            ) from exc
        raise ConfigError(
            "the signing key is encrypted; expected its passphrase (--passphrase-file), got none"
        ) from exc
    except ValueError as exc:
        hint = " or the passphrase is wrong" if passphrase else ""
        raise ConfigError(
            f"the signing key must be a PEM Ed25519 private key (synthreview keygen); it could "
            f"not be read{hint}: {exc}"
        ) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(
            f"the signing key must be an Ed25519 key; got a {type(key).__name__} instead"
        )
    return key


def load_public_key(data: bytes) -> Ed25519PublicKey:
    """The Ed25519 public key in PEM ``data`` (``synthreview.pub``).

    Raises
    ------
    ConfigError
        Not a PEM public key, or not Ed25519.
    """
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError as exc:
        raise ConfigError(
            f"the public key must be a PEM Ed25519 public key (synthreview.pub); it could not be "
            f"read: {exc}"
        ) from exc
    if not isinstance(key, Ed25519PublicKey):
        raise ConfigError(
            f"the public key must be an Ed25519 key; got a {type(key).__name__} instead"
        )
    return key


def read_key_file(path: str | Path, *, what: str) -> bytes:
    """Bytes of a key or passphrase file; :class:`ConfigError` naming ``what`` when unreadable."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"{what} must be a readable file; got {str(path)!r} ({exc.strerror or exc})"
        ) from exc


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _subject(name: str, sha256: str) -> JSONObject:
    return {"name": name, "digest": {"sha256": sha256}}


def _report(files: Mapping[str, bytes]) -> JSONObject:
    if "report.json" not in files:
        raise ConfigError(
            f"the files to sign must contain report.json; got {sorted(files)[:8]} instead"
        )
    try:
        report = json.loads(files["report.json"])
    except ValueError as exc:
        raise ConfigError(f"report.json must be JSON; it could not be parsed: {exc}") from exc
    if not isinstance(report, dict):
        raise ConfigError(f"report.json must hold an object; got {type(report).__name__} instead")
    return report


def _versions(files: Mapping[str, bytes], report: JSONObject) -> JSONObject:
    found = None
    if "manifest.json" in files:
        try:
            found = json.loads(files["manifest.json"]).get("versions")
        except (ValueError, AttributeError):
            found = None
    if isinstance(found, dict):
        return found
    return {"synthreview": report.get("synthreview_version")}


def _object(value: object, what: str) -> JSONObject:
    """``value`` when it is a JSON object, ``{}`` when missing; else a ConfigError naming it."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{what} must be a JSON object; got {type(value).__name__} instead")
    return value


def _rule_verdicts(report: JSONObject) -> dict[str, JSONObject]:
    """``{candidate: {rule: {verdict, value, required}}}`` from ``report.json`` ``verdicts``."""
    verdicts: dict[str, JSONObject] = {}
    for name, candidate in _object(report.get("verdicts"), "report.json 'verdicts'").items():
        rules = _object(_object(candidate, f"report.json 'verdicts' {name!r}").get("rules"),
                        f"report.json 'verdicts' {name!r} 'rules'")  # fmt: skip
        verdicts[name] = {
            rule: {
                "verdict": entry.get("verdict"),
                "value": entry.get("value"),
                "required": entry.get("required"),
            }
            for rule, entry in rules.items()
            if isinstance(entry, dict)
        }
    return verdicts


def release_predicate(files: Mapping[str, bytes]) -> JSONObject:
    """The decision record of a review folder, from its ``report.json`` (and manifest versions).

    Keys: ``decisions`` (``report.json`` ``decisions``: outcome, verdict, deciding rule and
    reason per candidate), ``verdicts`` (every rule's verdict and value per candidate),
    ``policy`` (name, sha256, source), ``options``, ``sections``, ``seed``, ``kind``,
    ``versions``, ``signoff`` (the meeting's sign-off, or None), ``context`` (the release
    context: recipient, purpose, access model, threat model..., or None), ``waivers`` (requested
    and approved exceptions, or None) and ``time`` (the
    report's ``generated_at``, so signing twice gives the same bytes).
    """
    report = _report(files)
    policy = _object(report.get("policy"), "report.json 'policy'")
    return {
        "decisions": _object(report.get("decisions"), "report.json 'decisions'"),
        "verdicts": _rule_verdicts(report),
        "policy": {key: policy.get(key) for key in ("name", "sha256", "source")},
        "options": report.get("options"),
        "sections": report.get("sections"),
        "seed": report.get("seed"),
        "kind": report.get("kind"),
        "versions": _versions(files, report),
        "signoff": report.get("signoff"),
        "context": report.get("context"),
        "waivers": report.get("waivers"),
        "time": report.get("generated_at"),
    }


def input_subjects(inputs: Sequence[Mapping[str, object]]) -> list[JSONObject]:
    """Statement subjects ``input:ROLE:NAME`` of the ``report.json`` ``inputs`` entries."""
    subjects = []
    for i, entry in enumerate(inputs):
        if not isinstance(entry, Mapping) or not {"name", "sha256", "role"} <= set(entry):
            raise ConfigError(
                f"inputs[{i}] must be a mapping with 'role', 'name' and 'sha256' (report.json "
                f"inputs); got {entry!r} instead"
            )
        role, name, digest = entry["role"], entry["name"], entry["sha256"]
        # the subject is input:ROLE:NAME, split at its first two colons when read back
        if role not in INPUT_ROLES:
            raise ConfigError(
                f"inputs[{i}] role must be one of {list(INPUT_ROLES)}; got {role!r} instead"
            )
        if not isinstance(name, str) or not name or not isinstance(digest, str):
            raise ConfigError(
                f"inputs[{i}] must have a non-empty text 'name' and a text 'sha256'; got "
                f"{name!r} and {digest!r} instead"
            )
        subjects.append(_subject(f"{INPUT_PREFIX}{role}:{name}", digest))
    return subjects


def release_statement(
    files: Mapping[str, bytes],
    *,
    inputs: Sequence[Mapping[str, object]] | None = None,
    predicate: Mapping[str, JSONValue] | None = None,
) -> JSONObject:
    """The in-toto Statement v1 of a review folder given as ``{relative path: bytes}``.

    Parameters
    ----------
    files : mapping of str to bytes
        Every output file of the folder (``report.json`` required); never the envelope.
    inputs : sequence of mapping, optional
        Input files as ``report.json`` lists them (``name``, ``role``, ``sha256``); default:
        ``report.json`` ``inputs``.
    predicate : mapping, optional
        Entries that replace or add to :func:`release_predicate` (e.g. a sign-off given at
        signing time).
    """
    if ENVELOPE_NAME in files:
        raise ConfigError(f"the files to sign already contain {ENVELOPE_NAME}; sign them once")
    for name, data in files.items():
        if not isinstance(data, bytes | bytearray):
            raise ConfigError(f"files[{name!r}] must be bytes; got {type(data).__name__} instead")
    report = _report(files)
    chosen = (report.get("inputs") or []) if inputs is None else inputs
    subjects = input_subjects(chosen)
    subjects += [_subject(name, _sha256(bytes(data))) for name, data in sorted(files.items())]
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": {**release_predicate(files), **dict(predicate or {})},
    }


def sign_statement(statement: Mapping[str, object], key: Ed25519PrivateKey) -> bytes:
    """The DSSE envelope of ``statement`` signed by ``key``: one JSON line (with newline)."""
    payload = canonical_json(statement)
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    envelope = {
        "payload": base64.b64encode(payload).decode("ascii"),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [
            {"keyid": key_id(key.public_key()), "sig": base64.b64encode(signature).decode("ascii")}
        ],
    }
    return canonical_json(envelope) + b"\n"


def sign_files(
    files: Mapping[str, bytes],
    key: Ed25519PrivateKey,
    *,
    inputs: Sequence[Mapping[str, object]] | None = None,
    predicate: Mapping[str, JSONValue] | None = None,
) -> dict[str, bytes]:
    """``files`` plus :data:`ENVELOPE_NAME`, the signed statement that covers them.

    Parameters
    ----------
    files : mapping of str to bytes
        A review folder in memory (``build_release`` / ``Release.files``).
    key : Ed25519PrivateKey
        From :func:`load_private_key`.
    inputs, predicate
        As for :func:`release_statement`.

    Returns
    -------
    dict of str to bytes
        A new mapping; ``files`` is not changed.
    """
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(
            f"key must be an Ed25519 private key (load_private_key); got {type(key).__name__} "
            "instead"
        )
    statement = release_statement(files, inputs=inputs, predicate=predicate)
    return {**files, ENVELOPE_NAME: sign_statement(statement, key)}


def _strict_b64(text: object, what: str) -> bytes:
    """Decode standard or URL-safe base64, refusing any other spelling of the same bytes."""
    if not isinstance(text, str) or not text.isascii():
        raise EnvelopeError(f"{what} must be a base64 string; got {type(text).__name__}")
    try:
        data = base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EnvelopeError(f"{what} is not valid base64 ({exc})") from exc
    # one spelling per byte string: unused low bits or other padding would let a changed
    # envelope decode to the same bytes
    if text not in (base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()):
        raise EnvelopeError(f"{what} is not canonical base64")
    return data


@dataclass(frozen=True)
class Envelope:
    """A parsed DSSE envelope: payload bytes, its type and ``(keyid, signature)`` pairs."""

    payload: bytes
    payload_type: str
    signatures: tuple[tuple[str, bytes], ...]


def read_envelope(data: bytes) -> Envelope:
    """Parse one DSSE JSON envelope (one line of :data:`ENVELOPE_NAME`).

    Raises
    ------
    EnvelopeError
        Not UTF-8 JSON holding exactly one envelope object, a required field missing or of the
        wrong type, or base64 that does not decode.
    """
    if len(data) > MAX_ENVELOPE_BYTES:
        raise EnvelopeError(f"{len(data)} bytes, more than an envelope may have")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EnvelopeError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    # JSON Lines: one object per line; this record holds exactly one
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if len(lines) != 1:
        raise EnvelopeError(f"expected one JSON line, got {len(lines)}")
    try:
        content = json.loads(lines[0])
    except ValueError as exc:
        raise EnvelopeError(f"not JSON ({exc}); the file may be truncated") from exc
    if not isinstance(content, dict):
        raise EnvelopeError(f"expected a JSON object, got {type(content).__name__}")
    for key in ("payload", "payloadType", "signatures"):
        if key not in content:
            raise EnvelopeError(f"the required field {key!r} is missing")
    if not isinstance(content["payloadType"], str):
        raise EnvelopeError("payloadType must be a string")
    entries = content["signatures"]
    if not isinstance(entries, list) or not entries:
        raise EnvelopeError("signatures must be a non-empty list")
    signatures = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "sig" not in entry:
            raise EnvelopeError(f"signatures[{i}] must be an object with 'sig'")
        keyid = entry.get("keyid", "")
        if not isinstance(keyid, str):
            raise EnvelopeError(f"signatures[{i}].keyid must be a string")
        signatures.append((keyid, _strict_b64(entry["sig"], f"signatures[{i}].sig")))
    payload = _strict_b64(content["payload"], "payload")
    return Envelope(payload, content["payloadType"], tuple(signatures))


def _statement(payload: bytes) -> JSONObject:
    try:
        statement = json.loads(payload)
    except ValueError as exc:
        raise EnvelopeError(f"the payload is not a JSON statement ({exc})") from exc
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise EnvelopeError(f"the payload is not an in-toto statement (_type {STATEMENT_TYPE})")
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise EnvelopeError(
            f"predicateType must be {PREDICATE_TYPE}; got {statement.get('predicateType')!r}"
        )
    subjects = statement.get("subject")
    if not isinstance(subjects, list) or not all(
        isinstance(s, dict)
        and isinstance(s.get("name"), str)
        and isinstance((s.get("digest") or {}).get("sha256"), str)
        for s in subjects
    ):
        raise EnvelopeError("subject must be a list of {name, digest: {sha256}}")
    return statement


def _check_signature(envelope: Envelope, public_key: Ed25519PublicKey) -> str | None:
    """None when a signature made with ``public_key``'s key id verifies, else why not."""
    wanted = key_id(public_key)
    mine = [sig for keyid, sig in envelope.signatures if keyid == wanted]
    if not mine:
        found = ", ".join(k[:16] or "(none)" for k, _ in envelope.signatures)
        return f"no signature by key {wanted[:16]} (signed by {found}): wrong key?"
    if envelope.payload_type != PAYLOAD_TYPE:
        return f"payloadType must be {PAYLOAD_TYPE}; got {envelope.payload_type!r}"
    message = pae(envelope.payload_type, envelope.payload)
    for sig in mine:
        try:
            public_key.verify(sig, message)
        except InvalidSignature:
            continue
        return None
    return f"the signature by key {wanted[:16]} does not verify: the record was changed"


@dataclass(frozen=True)
class GivenInput:
    """An input file handed to verification (``synthreview verify --inputs``).

    Attributes
    ----------
    label : str
        How messages name it (the path as given).
    sha256 : str
        Its digest: a file's bytes, or :func:`synthreview.io.parquet.folder_digest` of a folder.
    role : str or None
        The role it is given as (``ROLE=PATH``): ``real``, ``holdout`` or a candidate's name;
        None: matched by its digest to whichever input the record lists with it.
    """

    label: str
    sha256: str
    role: str | None = None


def recorded_inputs(statement: Mapping[str, object]) -> list[tuple[str, str, str]]:
    """``(role, name, sha256)`` of every ``input:ROLE:NAME`` subject of a statement."""
    found = []
    for subject in statement.get("subject") or []:  # type: ignore[attr-defined]
        name = subject["name"]
        if name.startswith(INPUT_PREFIX) and name.count(":") >= 2:
            _, role, stem = name.split(":", 2)
            found.append((role, stem, subject["digest"]["sha256"]))
    return found


def _role_names(role: str, name: str) -> set[str]:
    """The names ``ROLE=PATH`` may use for an input: its role, and a candidate's name."""
    return {role, f"{role}:{name}"} | ({name} if role == "synthetic" else set())


def _check_inputs(given: Sequence[GivenInput], statement: Mapping[str, object]) -> list[str]:
    """One problem per given input whose digest is not the record's for its role."""
    recorded = recorded_inputs(statement)
    problems = []
    for entry in given:
        owners = [(r, n) for r, n, d in recorded if d == entry.sha256]
        if entry.role is None:
            if not owners:
                problems.append(
                    f"{entry.label}: its sha256 is not that of any input of the signed record"
                )
            continue
        wanted = [(r, n, d) for r, n, d in recorded if entry.role in _role_names(r, n)]
        if not wanted:
            problems.append(
                f"{entry.label}: given as {entry.role!r}, a role the signed record does not list "
                f"(it lists {', '.join(sorted({f'{r}:{n}' for r, n, _ in recorded}))})"
            )
        elif not any(d == entry.sha256 for _, _, d in wanted):
            role, name, _ = wanted[0]
            if owners:
                other = ", ".join(f"the {r} input {n!r}" for r, n in owners)
                problems.append(
                    f"{entry.label}: given as the {role} input {name!r}, but its sha256 is that "
                    f"of {other} in the signed record (inputs swapped?)"
                )
            else:
                problems.append(
                    f"{entry.label}: sha256 differs from the signed record's {role} input {name!r}"
                )
    return problems


def _decision_problems(statement: Mapping[str, object], report_bytes: bytes) -> list[str]:
    """Where the signed decision record differs from ``report.json``'s (a forged predicate)."""
    try:
        report = _report({"report.json": report_bytes})
        reported_verdicts = _rule_verdicts(report)
        reported_decisions = _object(report.get("decisions"), "report.json 'decisions'")
        reported_policy = _object(report.get("policy"), "report.json 'policy'")
    except ConfigError as exc:
        return [f"report.json: {exc}"]
    predicate = statement.get("predicate")
    if not isinstance(predicate, Mapping):
        return [f"{ENVELOPE_NAME}: the signed statement carries no decision record"]
    problems = []
    signed_policy = predicate.get("policy") if isinstance(predicate.get("policy"), Mapping) else {}
    checks = (
        ("decisions", predicate.get("decisions"), reported_decisions),
        ("rule verdicts", predicate.get("verdicts"), reported_verdicts),
        ("policy sha256", signed_policy.get("sha256"), reported_policy.get("sha256")),
    )
    for what, signed, reported in checks:
        # sorted JSON text: equal content compares equal; NaN in a forged report is no crash
        if json.dumps(signed, sort_keys=True) != json.dumps(reported, sort_keys=True):
            names = ""
            if isinstance(signed, Mapping) and isinstance(reported, Mapping):
                differ = sorted(
                    k for k in set(signed) | set(reported) if signed.get(k) != reported.get(k)
                )
                names = f" (for {', '.join(map(str, differ[:5]))})" if differ else ""
            problems.append(
                f"{ENVELOPE_NAME}: the signed {what} differ from report.json's{names}: the "
                "statement does not record this review's decision"
            )
    return problems


def _verify(
    digests: Mapping[str, FileDigest],
    read: Callable[[str], bytes],
    public_key: Ed25519PublicKey,
    *,
    inputs: Sequence[GivenInput],
    require_marker: bool,
) -> Verification:
    """:func:`verify_files` on the folder's digests; ``read`` gives the few files parsed."""
    if not isinstance(public_key, Ed25519PublicKey):
        raise ConfigError(
            f"public_key must be an Ed25519 public key (load_public_key); got "
            f"{type(public_key).__name__} instead"
        )
    wanted = key_id(public_key)
    if ENVELOPE_NAME not in digests:
        return Verification((f"{ENVELOPE_NAME}: missing; the folder is not signed",), wanted)
    try:
        size = digests[ENVELOPE_NAME].size
        if size > MAX_ENVELOPE_BYTES:
            raise EnvelopeError(f"{size} bytes, more than an envelope may have")
        envelope = read_envelope(read(ENVELOPE_NAME))
        statement = _statement(envelope.payload)
    except EnvelopeError as exc:
        return Verification((f"{ENVELOPE_NAME}: malformed envelope: {exc}",), wanted)
    problems: list[str] = []
    why = _check_signature(envelope, public_key)
    if why is not None:
        problems.append(f"{ENVELOPE_NAME}: {why}")
    recorded = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    outputs = {n: d for n, d in recorded.items() if not n.startswith(INPUT_PREFIX)}
    for name, digest in sorted(outputs.items()):
        if name not in digests:
            problems.append(f"{name}: missing (the signed record lists it)")
        elif digests[name].sha256 != digest:
            problems.append(f"{name}: sha256 differs from the signed record (file changed)")
    for name in sorted(set(digests) - set(outputs) - {ENVELOPE_NAME, MARKER}):
        problems.append(f"{name}: extra file, not in the signed record")
    if MARKER in digests and MARKER not in outputs:
        # the completion marker is written after signing (release.folder); it is derived from
        # the other files, so it must be exactly what they give
        listed = [d for n, d in digests.items() if n != MARKER]
        if read(MARKER) != marker_bytes(listed):
            problems.append(f"{MARKER}: does not list the folder's files as they are")
    elif MARKER not in digests and require_marker:
        problems.append(
            f"{MARKER}: missing; the folder was never finished (a review writes it last)"
        )
    if "report.json" in outputs and "report.json" in digests:
        problems.extend(_decision_problems(statement, read("report.json")))
    problems.extend(_check_inputs(inputs, statement))
    return Verification(tuple(problems), wanted, statement, _sha256(envelope.payload))


def verify_files(
    files: Mapping[str, bytes],
    public_key: Ed25519PublicKey,
    *,
    inputs: Sequence[GivenInput] = (),
) -> Verification:
    """Check a review folder given as ``{relative path: bytes}`` against its signed statement.

    Parameters
    ----------
    files : mapping of str to bytes
        Every file of the folder, :data:`ENVELOPE_NAME` included (:func:`read_folder`, or the
        files of a review ZIP).
    public_key : Ed25519PublicKey
        The signer's key (:func:`load_public_key`); the envelope must carry a signature with its
        :func:`key_id` that verifies.
    inputs : sequence of GivenInput, optional
        Inputs to check too: one given with a role must have the digest the record lists for
        that role (a digest the record lists for another role fails naming both); one without
        must have the digest of some recorded input.

    Returns
    -------
    Verification
        ``ok`` only when the signature verifies, every output subject is present with its
        sha256, no other file is in the folder, the signed decisions, rule verdicts and policy
        sha256 equal ``report.json``'s, and every given input matches its record. The
        completion marker ``COMPLETE.json`` (:mod:`synthreview.release.folder`, written after
        signing), when present, must list exactly the folder's other files; a folder on disk
        must have it (:func:`verify_folder`).
    """
    digests = {n: FileDigest(n, _sha256(bytes(d)), len(d)) for n, d in files.items()}
    return _verify(digests, lambda name: bytes(files[name]), public_key, inputs=inputs,
                   require_marker=False)  # fmt: skip


def verify_folder(
    folder: str | Path, public_key: Ed25519PublicKey, *, inputs: Sequence[GivenInput] = ()
) -> Verification:
    """:func:`verify_files` on a folder on disk, which must hold its ``COMPLETE.json``.

    Files are hashed in blocks (:func:`synthreview.io.digest.file_sha256`): memory does not
    grow with their size; only the envelope, ``report.json`` and the marker are read whole.

    Raises
    ------
    ConfigError
        As :func:`folder_digests`.
    """
    root = Path(folder)
    digests = folder_digests(root)

    def read(name: str) -> bytes:
        try:
            return (root / name).read_bytes()
        except OSError as exc:
            raise ConfigError(f"the review folder file {name!r} could not be read: {exc}") from exc

    return _verify(digests, read, public_key, inputs=inputs, require_marker=True)


def folder_digests(folder: str | Path) -> dict[str, FileDigest]:
    """sha256 and size of every regular file under ``folder``, read in blocks.

    Raises
    ------
    ConfigError
        ``folder`` is not a readable directory, or holds a link or special file.
    """
    root = Path(folder)
    digests: dict[str, FileDigest] = {}
    for rel, path in _plain_files(root):
        try:
            size = path.stat().st_size
            digests[rel] = FileDigest(rel, file_sha256(path), size)
        except OSError as exc:
            raise ConfigError(f"the review folder {str(root)!r} could not be read: {exc}") from exc
    return digests


def _plain_files(root: Path) -> list[tuple[str, Path]]:
    """``(relative POSIX path, path)`` of every file under ``root``; links and special files
    refused (a signed folder holds plain files only)."""
    if not root.is_dir():
        raise ConfigError(f"the review folder must be a directory; got {str(root)!r} instead")
    found = []
    try:
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise ConfigError(
                    f"the review folder must hold plain files only; {rel!r} is a link or a "
                    "special file"
                )
            if stat.S_ISREG(mode):
                found.append((rel, path))
    except OSError as exc:
        raise ConfigError(f"the review folder {str(root)!r} could not be read: {exc}") from exc
    return found


def read_folder(folder: str | Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` as ``{relative POSIX path: bytes}``.

    Raises
    ------
    ConfigError
        ``folder`` is not a readable directory, or holds a link or special file (a signed
        folder holds plain files only).
    """
    root = Path(folder)
    try:
        return {rel: path.read_bytes() for rel, path in _plain_files(root)}
    except OSError as exc:
        raise ConfigError(f"the review folder {str(root)!r} could not be read: {exc}") from exc
