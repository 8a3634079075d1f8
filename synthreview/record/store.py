"""The review folder of a record: written by :func:`write_record`, read back by :func:`open_review`.

The folder is the one ``synthreview review`` has always written (``report.json``,
``report.html``, per-candidate CSV / Parquet, ``manifest.json``, optionally the signed
``release.intoto.jsonl``, and the completion marker ``COMPLETE.json``) plus ``record.json``: the
record's typed content as lossless JSON (:mod:`synthreview.record.codec`), listed in the marker
and covered by the signature like every other file. :func:`open_review` reads a folder or a ZIP
of one back into the same :class:`~synthreview.record.record.ReviewRecord` without recomputing
anything, and says on opening whether its signatures verify (:mod:`synthreview.record.trust`).
"""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError, DataError
from synthreview.judgement.ledger import PriorRelease
from synthreview.judgement.policy import Policy
from synthreview.judgement.waivers import Waiver
from synthreview.metrics.fidelity.features import PairwiseCombinations
from synthreview.record.codec import RecordFormatError, from_jsonable
from synthreview.record.record import RECORD_FORMAT, RECORD_NAME, RECORD_VERSION, ReviewRecord
from synthreview.record.trust import (
    KeyLike,
    countersign_name,
    countersignature_names,
    trusted_keys,
    verify_record_files,
)
from synthreview.release.controls import PlantedControls
from synthreview.release.folder import MARKER, write_review_folder
from synthreview.release.pipeline import CandidateRelease
from synthreview.release.signing import ENVELOPE_NAME, read_folder, sign_files
from synthreview.release.signoff import SignOff
from synthreview.review import Report

__all__ = [
    "MAX_UNZIPPED_BYTES",
    "MAX_ZIP_FILES",
    "OPEN_ENV",
    "OPEN_KEY_ENV",
    "open_review",
    "read_review_files",
    "read_review_zip",
    "record_files",
    "write_record",
]

#: ``synthreview show``: the review (folder or ZIP) a dashboard session opens at its start, and
#: the public key it is verified with
OPEN_ENV = "SYNTHREVIEW_OPEN"
OPEN_KEY_ENV = "SYNTHREVIEW_OPEN_KEY"
#: result classes a record holds in fields typed ``Any`` (the type hints do not name them)
UNTYPED_CLASSES: tuple[type, ...] = (PairwiseCombinations,)

#: the most bytes the files of an uploaded review ZIP may hold once decompressed (zip bombs)
MAX_UNZIPPED_BYTES = 512 * 1024 * 1024
#: the most files an uploaded review ZIP may hold
MAX_ZIP_FILES = 10_000


def _zip_member_name(info: zipfile.ZipInfo) -> str:
    """The member's relative path, or ``ConfigError`` for a path that could leave its folder."""
    name = info.filename
    parts = name.replace("\\", "/").split("/")
    if (
        not name
        or name.startswith(("/", "\\"))
        or (len(name) > 1 and name[1] == ":")  # C:... on Windows
        or ".." in parts
        or "\0" in name
    ):
        raise ConfigError(
            f"the review ZIP must hold relative paths inside its folder; got the member {name!r} "
            "(an absolute path or one with '..') instead"
        )
    if stat.S_ISLNK(info.external_attr >> 16):
        raise ConfigError(f"the review ZIP must hold plain files; {name!r} is a link")
    if info.flag_bits & 0x1:
        raise ConfigError(f"the review ZIP must not be encrypted; {name!r} is")
    return "/".join(p for p in parts if p not in ("", "."))


def read_review_zip(
    data: bytes, *, max_bytes: int = MAX_UNZIPPED_BYTES, max_files: int = MAX_ZIP_FILES
) -> dict[str, bytes]:
    """The files of a review folder ZIP as ``{relative path: bytes}``, read in memory.

    The Audit page's *Everything (ZIP)* holds the files at its top; a zipped CLI folder holds
    them under one folder, which is taken off. Nothing is extracted to disk.

    Raises
    ------
    ConfigError
        Not a ZIP; a member with an absolute path, ``..``, a link or encryption; two members of
        one name; more than ``max_files`` files or more than ``max_bytes`` decompressed (counted
        while reading, whatever the archive declares).
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise ConfigError(
            f"the review folder must be a ZIP file; it could not be read: {exc}"
        ) from exc
    files: dict[str, bytes] = {}
    left = max_bytes
    with archive:
        members = [i for i in archive.infolist() if not i.is_dir()]
        if len(members) > max_files:
            raise ConfigError(
                f"the review ZIP may hold at most {max_files} files; got {len(members)} instead"
            )
        if sum(i.file_size for i in members) > max_bytes:
            raise ConfigError(
                f"the review ZIP may hold at most {max_bytes} bytes decompressed; it declares "
                f"{sum(i.file_size for i in members)} instead"
            )
        for info in members:
            name = _zip_member_name(info)
            if name in files:
                raise ConfigError(f"the review ZIP holds {name!r} twice; expected one of each")
            try:
                with archive.open(info) as member:
                    content = member.read(left + 1)  # the declared size may lie
            except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as exc:
                raise ConfigError(
                    f"the review ZIP member {name!r} could not be read: {exc}"
                ) from exc
            if len(content) > left:
                raise ConfigError(
                    f"the review ZIP may hold at most {max_bytes} bytes decompressed; it holds "
                    "more (a zip bomb?)"
                )
            left -= len(content)
            files[name] = content
    tops = {n.split("/", 1)[0] for n in files}
    if len(tops) == 1 and all("/" in n for n in files):
        (top,) = tops
        files = {n[len(top) + 1 :]: d for n, d in files.items()}
    return files


def record_files(record: ReviewRecord) -> dict[str, bytes]:
    """The record's folder as ``{relative path: bytes}``: its files, ``record.json``, signatures.

    The completion marker is left to ``release.folder.write_review_folder``.
    """
    files = {**record.files, RECORD_NAME: record.record_json()}
    if record.signature is not None:
        files[ENVELOPE_NAME] = record.signature
    for n, envelope in enumerate(record.countersignatures, start=1):
        files[countersign_name(n)] = envelope
    return files


def write_record(
    record: ReviewRecord,
    folder: str | os.PathLike[str],
    *,
    key: Ed25519PrivateKey | None = None,
    overwrite: bool = False,
) -> ReviewRecord:
    """Write ``record`` as the review folder ``folder`` (whole or not at all), signed with ``key``.

    Parameters
    ----------
    record : ReviewRecord
    folder : path
        As ``synthreview review --out`` (``release.folder.write_review_folder``).
    key : Ed25519PrivateKey, optional
        Sign the folder (``release.signing.sign_files``: the statement covers ``record.json``
        too). A record that is already signed keeps its signature when no key is given; signing
        it again drops its countersignatures, which named the old statement.
    overwrite : bool
        Replace an earlier review at ``folder``.

    Returns
    -------
    ReviewRecord
        ``record`` as written (with its signature when ``key`` was given).
    """
    if key is not None:
        unsigned = {**record.files, RECORD_NAME: record.record_json()}
        signed = sign_files(unsigned, key)
        record = replace(record, signature=signed[ENVELOPE_NAME], countersignatures=())
    write_review_folder(folder, record_files(record), overwrite=overwrite)
    return record


def read_review_files(source: str | os.PathLike[str] | bytes) -> dict[str, bytes]:
    """Every file of a review folder, or of a ZIP of one (path or bytes), in memory."""
    if isinstance(source, bytes | bytearray):
        return read_review_zip(bytes(source))
    path = Path(source)
    if path.is_dir():
        return read_folder(path)
    if not path.is_file():
        raise DataError(
            f"path_or_zip must be a review folder or a ZIP of one; {str(path)!r} does not exist"
        )
    if not zipfile.is_zipfile(path):
        raise DataError(
            f"path_or_zip must be a review folder or a ZIP of one; {str(path)!r} is a file that "
            "is not a ZIP"
        )
    size = path.stat().st_size
    if size > MAX_UNZIPPED_BYTES:
        raise DataError(f"the review ZIP {str(path)!r} is larger than {MAX_UNZIPPED_BYTES} bytes")
    return read_review_zip(path.read_bytes())


def _refusal(where: str, files: Mapping[str, bytes]) -> DataError:
    if "report.json" not in files:
        return DataError(
            f"{where} is not a synthreview review: it holds no report.json and no {RECORD_NAME}"
        )
    version = "an earlier synthreview"
    try:
        stated = json.loads(files["report.json"]).get("synthreview_version")
        version = f"synthreview {stated}" if stated else version
    except (ValueError, AttributeError):
        pass
    return DataError(
        f"{where} was written by {version}, before review records: it holds report.json (the "
        f"decisions) and report.html, but no {RECORD_NAME}, the per-candidate results, audit "
        "tables and curation a record is read from; read its report.html, or run the review "
        "again with this version to get a record that opens"
    )


def _content(data: bytes, where: str) -> dict[str, Any]:
    def no_constant(name: str) -> None:
        raise RecordFormatError(f"{where}/{RECORD_NAME} must be strict JSON; it holds {name}")

    try:
        parsed = json.loads(data, parse_constant=no_constant)
    except RecordFormatError:
        raise
    except (ValueError, RecursionError) as exc:
        raise RecordFormatError(f"{where}/{RECORD_NAME} is not JSON: {exc}") from None
    if not isinstance(parsed, dict) or parsed.get("format") != RECORD_FORMAT:
        raise RecordFormatError(f"{where}/{RECORD_NAME} is not a synthreview record")
    if parsed.get("version") != RECORD_VERSION:
        raise RecordFormatError(
            f"{where}/{RECORD_NAME} has record version {parsed.get('version')!r}; this "
            f"synthreview reads version {RECORD_VERSION} (a newer synthreview wrote it?)"
        )
    content = parsed.get("content")
    if not isinstance(content, dict):
        raise RecordFormatError(f"{where}/{RECORD_NAME} holds no content")
    return content


def open_review(
    path_or_zip: str | os.PathLike[str] | bytes,
    *,
    key: KeyLike | None = None,
    trust: str | os.PathLike[str] | None = None,
) -> ReviewRecord:
    """Read a review folder (or a ZIP of one) back into its :class:`ReviewRecord`.

    Nothing is recomputed: every number, table and decision is read from ``record.json`` and the
    folder's files. The signatures are checked on opening (``record.verified``).

    Parameters
    ----------
    path_or_zip : path or bytes
        A review folder written by ``synthreview review`` / :func:`write_record`, a ZIP of one
        (its files at the top or under one folder), or the ZIP's bytes.
    key : Ed25519PublicKey, PEM bytes or path, optional
        The signer's public key.
    trust : path, optional
        A folder of trusted public keys (``*.pub``); default the ``SYNTHREVIEW_TRUST``
        environment variable.

    Returns
    -------
    ReviewRecord
        ``verified.ok`` only when the record is signed by a trusted key and every file matches
        (``record.trust.verify_record_files``); otherwise ``verified.reason`` says why, naming
        the file.

    Raises
    ------
    DataError
        Not a review folder or ZIP; a folder written before records (no ``record.json``: the
        message says what it lacks); a ``record.json`` that is not what a record writes.
    ConfigError
        ``key`` or the trust folder cannot be read.
    """
    where = (
        "the review ZIP" if isinstance(path_or_zip, bytes | bytearray) else repr(str(path_or_zip))
    )
    keys = trusted_keys(key, trust=trust)
    files = read_review_files(path_or_zip)
    if RECORD_NAME not in files:
        raise _refusal(where, files)
    content = _content(files[RECORD_NAME], where)
    at = f"{where}/{RECORD_NAME}"
    parts = {
        "report": Report,
        "releases": dict[str, CandidateRelease],
        "policy": Policy,
        "policy_text": str | None,
        "controls": PlantedControls | None,
        "prior": tuple[PriorRelease, ...],
        "claimed_epsilon": float | None,
        "waivers": tuple[Waiver, ...],
        "signoff": dict[str, SignOff],
        "generated_at": str,
        "versions": dict[str, str],
    }
    missing = sorted(set(parts) - set(content))
    if missing:
        raise RecordFormatError(f"{at} lacks {missing}")
    values = {
        name: from_jsonable(hint, content[name], where=f"{at}:{name}", extra=UNTYPED_CLASSES)
        for name, hint in parts.items()
    }
    countersigned = countersignature_names(files)
    kept = {
        n: d
        for n, d in files.items()
        if n not in (MARKER, ENVELOPE_NAME, RECORD_NAME) and n not in countersigned
    }
    verified = verify_record_files(files, keys)
    folder = None if isinstance(path_or_zip, bytes | bytearray) else Path(path_or_zip)
    record = ReviewRecord(
        **values,
        files=kept,
        signature=files.get(ENVELOPE_NAME),
        countersignatures=tuple(files[n] for n in countersigned),
        verified=verified,
        location=str(folder.resolve()) if folder is not None and folder.is_dir() else None,
    )
    return replace(record, notices=_notices(record))


def _notices(record: ReviewRecord) -> tuple[str, ...]:
    """What an opened record states that its own content does not give."""
    notices = []
    stated = record.decisions
    for name, mine in record.release.decisions.items():
        said = stated.get(name)
        if said is None:
            notices.append(f"report.json states no decision for {name}")
        elif (said.outcome, said.reason) != (mine.outcome, mine.reason):
            notices.append(
                f"report.json states {said.outcome} for {name}, but its record's verdicts give "
                f"{mine.outcome} (the files were changed?)"
            )
    return tuple(notices)
