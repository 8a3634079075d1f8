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

import hashlib
import io
import json
import os
import stat
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError, DataError
from synthreview.judgement.ledger import PriorRelease
from synthreview.judgement.policy import Policy
from synthreview.judgement.waivers import Waiver
from synthreview.metrics.fidelity.features import PairwiseCombinations
from synthreview.record.codec import (
    BLOBS,
    ROOT,
    SIZES,
    BlobTable,
    RecordFormatError,
    blob_text_size,
    from_jsonable,
)
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
from synthreview.release.register import AppendResult, append_records, records_of_release
from synthreview.release.signing import ENVELOPE_NAME, read_folder, sign_files
from synthreview.release.signoff import SignOff
from synthreview.review import Report

__all__ = [
    "LAZY_BYTES",
    "MAX_UNZIPPED_BYTES",
    "MAX_ZIP_FILES",
    "OPEN_ENV",
    "OPEN_KEY_ENV",
    "READABLE_VERSIONS",
    "FolderFiles",
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
#: record versions this synthreview reads: 1 wrote every column item by item, 2 holds text and
#: masked columns as arrays and large arrays once, in a blob table (``record.codec``)
READABLE_VERSIONS = (1, RECORD_VERSION)
#: files of an opened folder up to this size are read on opening; larger ones (a million-row
#: audit table, curated CSV, the record) when asked for, checked against their digest then
LAZY_BYTES = 8 * 1024 * 1024
#: where the blob table starts in record.json: the codec writes it last, and the sequence
#: cannot occur earlier (a quote inside a JSON string is escaped; the codec writes mapping keys
#: that start with "__" as [key, value] pairs)
_BLOB_MARK = b',"' + BLOBS.encode("ascii") + b'":{'
_CHUNK = 8 * 1024 * 1024


class FolderFiles(Mapping[str, bytes]):
    """The files of a review folder, read from disk when asked for.

    Files up to :data:`LAZY_BYTES` are read on opening; larger ones are hashed on opening and
    read again when asked for, refused if they changed since (a record is evidence: what a
    page shows later is what was opened). A million-row record's audit table and curated files
    then cost memory only while a page uses them.

    Parameters
    ----------
    folder : path
        A review folder: plain files only (``release.signing.read_folder``'s rule).
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.root = Path(folder)
        self._small: dict[str, bytes] = {}
        self._large: dict[str, tuple[Path, int, str]] = {}
        try:
            for path in sorted(self.root.rglob("*")):
                name = path.relative_to(self.root).as_posix()
                mode = path.lstat().st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise ConfigError(
                        f"the review folder must hold plain files only; {name!r} is a link or a "
                        "special file"
                    )
                if not stat.S_ISREG(mode):
                    continue
                if path.lstat().st_size <= LAZY_BYTES:
                    self._small[name] = path.read_bytes()
                else:
                    size, digest = _hash_file(path)
                    self._large[name] = (path, size, digest)
        except OSError as exc:
            raise ConfigError(
                f"the review folder {str(self.root)!r} could not be read: {exc}"
            ) from exc
        self._names = sorted([*self._small, *self._large])

    def __getitem__(self, name: str) -> bytes:
        if name in self._small:
            return self._small[name]
        path, size, digest = self._large[name]
        data = self._read(name, path)
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            raise DataError(
                f"{name} in the review folder {str(self.root)!r} changed after the review was "
                "opened; open it again"
            )
        return data

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def _read(self, name: str, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except OSError as exc:
            raise DataError(
                f"{name} in the review folder {str(self.root)!r} could not be read: {exc}"
            ) from exc

    def reader(self, name: str) -> tuple[Callable[[int, int], bytes], int]:
        """``(read(start, stop), size)`` of file ``name``: byte ranges read from disk, for a
        large ``record.json`` read blob by blob (each blob checked by its sha256)."""
        if name in self._small:
            view = memoryview(self._small[name])
            return (lambda start, stop: bytes(view[start:stop])), len(view)
        path, size, _ = self._large[name]

        def read(start: int, stop: int) -> bytes:
            try:
                with open(path, "rb") as handle:
                    handle.seek(start)
                    return handle.read(max(stop - start, 0))
            except OSError as exc:
                raise DataError(f"{name} could not be read: {exc}") from exc

        return read, size

    def without(self, names: set[str] | frozenset[str]) -> FolderFiles:
        """These files less ``names`` (nothing read)."""
        kept = object.__new__(FolderFiles)
        kept.root = self.root
        kept._small = {n: d for n, d in self._small.items() if n not in names}
        kept._large = {n: e for n, e in self._large.items() if n not in names}
        kept._names = [n for n in self._names if n not in names]
        return kept


def _hash_file(path: Path) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


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


def register_record(
    record: ReviewRecord,
    register: str,
    *,
    key: Ed25519PrivateKey | None = None,
    location: str | os.PathLike[str] | None = None,
) -> AppendResult:
    """Append the records of ``record``, as :func:`write_record` just wrote it, to the register
    at ``register`` (what ``synthreview review --register`` files).

    Parameters
    ----------
    record : ReviewRecord
        As written (signed with ``key`` when one was given).
    register : str
        The register's URL or SQLite path (``release.register.append_records``).
    key : Ed25519PrivateKey, optional
        The key ``record`` was signed with: marks the records as signed by it.
    location : path, optional
        The folder ``record`` was written to.

    Returns
    -------
    AppendResult
        The records added and those already there.
    """
    return append_records(
        register, records_of_release(record_files(record), key=key, location=location)
    )


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


def _review_files(source: str | os.PathLike[str] | bytes) -> Mapping[str, bytes]:
    """:func:`read_review_files`, a folder's large files left on disk (:class:`FolderFiles`)."""
    if not isinstance(source, bytes | bytearray) and Path(source).is_dir():
        return FolderFiles(source)
    return read_review_files(source)


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


def _strict_json(data: bytes, where: str) -> Any:
    def no_constant(name: str) -> None:
        raise RecordFormatError(f"{where}/{RECORD_NAME} must be strict JSON; it holds {name}")

    try:
        return json.loads(data, parse_constant=no_constant)
    except RecordFormatError:
        raise
    except (ValueError, RecursionError) as exc:
        raise RecordFormatError(f"{where}/{RECORD_NAME} is not JSON: {exc}") from None


def _find(read: Callable[[int, int], bytes], size: int, mark: bytes) -> int:
    """Where ``mark`` first occurs, read chunk by chunk; -1 when it does not."""
    start = 0
    while start < size:
        chunk = read(start, min(start + _CHUNK + len(mark), size))
        found = chunk.find(mark)
        if found >= 0:
            return start + found
        start += _CHUNK
    return -1


class _BlobTexts(Mapping[str, bytes]):
    """The base64 text of each blob of record.json, read from its byte range when asked for."""

    def __init__(self, read: Callable[[int, int], bytes], spans: dict[str, tuple[int, int]]):
        self.read, self.spans = read, spans

    def __getitem__(self, digest: str) -> bytes:
        start, stop = self.spans[digest]
        return self.read(start, stop)

    def __iter__(self) -> Iterator[str]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)


def _record_content(
    read: Callable[[int, int], bytes], size: int, where: str
) -> tuple[dict[str, Any], BlobTable | None]:
    """record.json's content and its blob table, the blobs left on disk until a value needs
    them: the table is the file's tail (``record.codec``), and ``__sizes__`` says where each
    blob lies in it, so it is never parsed as JSON (a million-row record would be held twice)."""
    at = _find(read, size, _BLOB_MARK)
    if at < 0:
        return _checked(_strict_json(read(0, size), where), where), None
    content = _checked(_strict_json(read(0, at) + b"}}", where), where)
    if set(content) != {ROOT, SIZES}:
        raise RecordFormatError(f"{where}/{RECORD_NAME} holds a blob table without its value")
    sizes = content[SIZES]
    table = BlobTable(sizes, {}, where=f"{where}/{RECORD_NAME}")
    spans: dict[str, tuple[int, int]] = {}
    position = at + len(_BLOB_MARK)
    for i, (digest, n_bytes) in enumerate(sizes):
        key = b'"' + str(digest).encode("ascii", "replace") + b'":"'
        start = position + len(key)
        stop = start + blob_text_size(n_bytes)
        last = i == len(sizes) - 1
        close = b'"}}}' if last else b'",'
        if read(position, start) != key or read(stop, stop + len(close)) != close:
            raise RecordFormatError(
                f"{where}/{RECORD_NAME} is not JSON: its blob table is not as its sizes say at "
                f"byte {position} (a damaged or truncated file?)"
            )
        spans[str(digest)] = (start, stop)
        position = stop + len(close)
    if position != size:
        raise RecordFormatError(
            f"{where}/{RECORD_NAME} is not JSON: {size - position} bytes after its blob table"
        )
    table.texts = _BlobTexts(read, spans)
    return content[ROOT], table


def _checked(parsed: Any, where: str) -> dict[str, Any]:
    if not isinstance(parsed, dict) or parsed.get("format") != RECORD_FORMAT:
        raise RecordFormatError(f"{where}/{RECORD_NAME} is not a synthreview record")
    if parsed.get("version") not in READABLE_VERSIONS:
        raise RecordFormatError(
            f"{where}/{RECORD_NAME} has record version {parsed.get('version')!r}; this "
            f"synthreview reads versions {READABLE_VERSIONS} (a newer synthreview wrote it?)"
        )
    content = parsed.get("content")
    if not isinstance(content, dict):
        raise RecordFormatError(f"{where}/{RECORD_NAME} holds no content")
    return content


def _content(files: Mapping[str, bytes], where: str) -> tuple[dict[str, Any], BlobTable | None]:
    """The content of ``files``' record.json and its blob table (None when it has none)."""
    if isinstance(files, FolderFiles):
        read, size = files.reader(RECORD_NAME)
    else:
        view = memoryview(files[RECORD_NAME])
        read, size = (lambda start, stop: bytes(view[start:stop])), len(view)
    content, blobs = _record_content(read, size, where)
    if blobs is None and set(content) == {ROOT, SIZES, BLOBS}:  # a table that is not last
        raise RecordFormatError(f"{where}/{RECORD_NAME} must hold its blob table last")
    return content, blobs


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
    files = _review_files(path_or_zip)
    if RECORD_NAME not in files:
        raise _refusal(where, files)
    content, blobs = _content(files, where)
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
        name: from_jsonable(
            hint, content[name], where=f"{at}:{name}", extra=UNTYPED_CLASSES, blobs=blobs
        )
        for name, hint in parts.items()
    }
    countersigned = countersignature_names(files)
    left_out = {MARKER, ENVELOPE_NAME, RECORD_NAME, *countersigned}
    kept: Mapping[str, bytes] = (
        files.without(left_out)
        if isinstance(files, FolderFiles)
        else {n: d for n, d in files.items() if n not in left_out}
    )
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
    # the decisions need no files: a million-row record's files stay on disk
    for name, mine in replace(record, files={}).release.decisions.items():
        said = stated.get(name)
        if said is None:
            notices.append(f"report.json states no decision for {name}")
        elif (said.outcome, said.reason) != (mine.outcome, mine.reason):
            notices.append(
                f"report.json states {said.outcome} for {name}, but its record's verdicts give "
                f"{mine.outcome} (the files were changed?)"
            )
    return tuple(notices)
