"""Review folders: checked before computing, written whole or not at all, read only when finished.

A review folder (the CLI's ``--out``) goes through three functions:

:func:`check_output_folder`
    Before anything is computed: ``--out`` must not be an input, hold an input or lie inside an
    input folder (paths resolved, symbolic links followed, hard links compared by inode); it must
    be a creatable, writable folder outside ``/proc``, ``/sys`` and ``/dev`` on a file system
    with enough free space; an existing non-empty folder is refused unless ``overwrite``.
:func:`write_review_folder`
    Writes every file into a temporary folder beside ``--out`` (``.NAME.synthreview-partial-*``,
    same parent, so the final rename is atomic), flushes each file to disk, writes the completion
    marker ``COMPLETE.json`` last and only then renames the folder to ``--out``. An earlier
    review is swapped out in one step where the kernel allows it (Linux ``renameat2``
    ``RENAME_EXCHANGE``), else moved aside first; its files are then deleted. A failure removes
    the temporary folder and leaves the earlier folder as it was; a killed run leaves ``--out``
    absent or as it was, plus at most a clearly named temporary folder.
:func:`read_finished_review`
    What readers of ``report.json`` call: it refuses a folder that is not finished.

**Finished** means: the folder is not a temporary one (its name carries neither
``.synthreview-partial-`` nor ``.synthreview-old-``), ``COMPLETE.json`` is present, lists
``report.json``, and every file in the folder other than the marker is listed there with a
matching size and sha256, and every listed file is present. The marker holds no timestamp, so
equal files give an equal marker.

**What** ``overwrite`` **deletes.** Only files a review wrote: the files listed in the earlier
folder's ``COMPLETE.json`` (or, for a folder written before the marker existed, in its
``manifest.json`` ``outputs`` plus the manifest itself), each still holding the bytes the review
wrote. A folder that holds any other file, a changed file or a symbolic link is refused even with
``overwrite`` (the message lists them): synthreview never deletes a file it did not write.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from synthreview.errors import ConfigError, DataError
from synthreview.io.digest import file_sha256

#: the completion marker, written last: ``{"format", "version", "files": {path: {sha256, bytes}}}``
MARKER = "COMPLETE.json"
MARKER_FORMAT = "synthreview-review-folder"
MARKER_VERSION = 1
#: name parts of the temporary folders beside ``--out`` (never read as finished)
PARTIAL_TAG = ".synthreview-partial-"
OLD_TAG = ".synthreview-old-"
#: free space always required on the file system of ``--out``, on top of the inputs' size
MIN_FREE_BYTES = 64 * 2**20
#: where a review folder can never go (kernel and device file systems)
FORBIDDEN_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
#: longest file name most file systems accept, in bytes
_NAME_MAX = 255
_SHOWN = 8  # files named in a message before "and N more"


@dataclass(frozen=True)
class FileDigest:
    """One file of a review folder as the completion marker records it.

    Attributes
    ----------
    path : str
        Path relative to the folder, ``/``-separated.
    sha256 : str
        Hex digest of the file's bytes.
    size : int
        Length in bytes.
    """

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class EarlierReview:
    """What an existing, non-empty ``--out`` holds.

    Attributes
    ----------
    folder : Path
    files : tuple of str
        Every file in it (relative, ``/``-separated), symbolic links included.
    listed_by : str or None
        ``"COMPLETE.json"`` or ``"manifest.json"`` when the folder is an earlier review whose
        files that file lists; None when nothing says a review wrote them.
    unlisted : tuple of str
        Files the listing does not name (never deleted).
    changed : tuple of str
        Listed files whose bytes differ from what the review wrote (never deleted).
    """

    folder: Path
    files: tuple[str, ...]
    listed_by: str | None
    unlisted: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def replaceable(self) -> bool:
        """True when ``overwrite`` may delete every file (all written by a review, unchanged)."""
        return self.listed_by is not None and not self.unlisted and not self.changed


@dataclass(frozen=True)
class OutputFolder:
    """The checked ``--out``: where the review will be written and what it replaces.

    Attributes
    ----------
    folder : Path
        ``--out`` resolved (symbolic links followed).
    earlier : EarlierReview or None
        The earlier review ``overwrite`` replaces; None when ``--out`` is new or empty.
    free_bytes : int
        Free space on its file system when checked.
    leftovers : tuple of Path
        Temporary folders of interrupted runs beside it (never read as a review; not removed,
        since another run may still be writing one).
    """

    folder: Path
    earlier: EarlierReview | None
    free_bytes: int
    leftovers: tuple[Path, ...] = ()


@dataclass(frozen=True)
class FinishedReview:
    """A review folder that :func:`read_finished_review` found complete.

    Attributes
    ----------
    folder : Path
    files : tuple of FileDigest
        Every file of the review (the marker excluded), as the marker lists them.
    """

    folder: Path
    files: tuple[FileDigest, ...]

    def read_bytes(self, path: str) -> bytes:
        """The bytes of one listed file (``path`` relative, ``/``-separated)."""
        if path not in {f.path for f in self.files}:
            raise DataError(
                f"review folder {str(self.folder)!r} lists no file {path!r}; expected one of "
                f"{_some(f.path for f in self.files)}"
            )
        return (self.folder / path).read_bytes()

    def report(self) -> dict[str, object]:
        """``report.json`` parsed."""
        content = json.loads(self.read_bytes("report.json"))
        if not isinstance(content, dict):
            raise DataError(
                f"review folder {str(self.folder)!r}: report.json must hold a JSON object; got "
                f"{type(content).__name__} instead"
            )
        return content


# ---------------------------------------------------------------------------------------------
# checking --out before computing


def check_output_folder(
    out: str | Path,
    *,
    inputs: Sequence[str | Path | None],
    planned: Iterable[str] | None = None,
    overwrite: bool = False,
    min_free_bytes: int | None = None,
) -> OutputFolder:
    """Refuse an ``--out`` the review could not, or must not, be written to.

    Parameters
    ----------
    out : str or Path
        The output folder.
    inputs : sequence of path or None
        Every file the review reads (real, holdout, synthetic, policy); None entries are skipped.
    planned : iterable of str, optional
        Relative paths the review will write, to name the output that would replace an input.
    overwrite : bool, default False
        Allow replacing an earlier review (see the module docstring for what is deleted).
    min_free_bytes : int, optional
        Free space required on the file system of ``out``; default :data:`MIN_FREE_BYTES` plus
        the total size of the inputs.

    Returns
    -------
    OutputFolder

    Raises
    ------
    ConfigError
        Naming ``--out``, what was expected and what was found.
    """
    folder = _resolve_out(out)
    given = [Path(p) for p in inputs if p is not None]
    _check_inputs(out, folder, given, planned)
    anchor = _check_creatable(out, folder)
    earlier = existing_review(folder, inputs=given) if folder.is_dir() else None
    if earlier is not None:
        input_ids = {_inode(p): p for p in given}
        for name in earlier.files:
            same = input_ids.get(_inode(folder / name))
            if same is not None:
                raise ConfigError(
                    f"option --out must not hold an input; got {str(out)!r}, whose {name!r} is "
                    f"the same file as input {str(same)!r} (a hard link), instead; move the "
                    "input or choose another --out"
                )
        _check_replaceable(out, earlier, overwrite=overwrite)
    if min_free_bytes is None:
        min_free_bytes = MIN_FREE_BYTES + sum(_size(p) for p in given)
    free = shutil.disk_usage(anchor).free
    if free < min_free_bytes:
        raise ConfigError(
            f"option --out needs at least {_mb(min_free_bytes)} free on its file system "
            f"({_mb(MIN_FREE_BYTES)} plus the inputs' size); got {str(out)!r} with "
            f"{_mb(free)} free instead"
        )
    leftovers = tuple(
        sorted(
            p
            for p in (folder.parent.iterdir() if folder.parent.is_dir() else ())
            if p.name.startswith(f".{folder.name}{PARTIAL_TAG}")
            or p.name.startswith(f".{folder.name}{OLD_TAG}")
        )
    )
    return OutputFolder(folder=folder, earlier=earlier, free_bytes=free, leftovers=leftovers)


def existing_review(
    folder: str | Path, *, inputs: Sequence[str | Path] = ()
) -> EarlierReview | None:
    """What a non-empty folder holds and which of it a review wrote; None when empty or absent.

    ``inputs`` whose inode matches a file in the folder (hard links) count as unlisted, so
    ``overwrite`` never deletes them.
    """
    root = Path(folder)
    if not root.is_dir():
        return None
    files = _walk(root)
    if not files:
        return None
    input_ids = {_inode(Path(p)) for p in inputs} - {None}
    listing, listed_by = _listing(root)
    links = {f for f in files if (root / f).is_symlink()}
    linked_inputs = {f for f in files if f not in links and _inode(root / f) in input_ids}
    if listing is None:
        return EarlierReview(root, tuple(files), None, tuple(files), ())
    unlisted = sorted(
        f for f in files if f != listed_by and (f not in listing or f in links | linked_inputs)
    )
    changed = sorted(
        f
        for f in files
        if f in listing
        and f not in unlisted
        and listing[f] is not None
        and not _matches(root / f, listing[f])
    )
    return EarlierReview(root, tuple(files), listed_by, tuple(unlisted), tuple(changed))


def _resolve_out(out: str | Path) -> Path:
    try:
        folder = Path(out).expanduser().resolve()
    except RuntimeError as exc:  # Python < 3.13: "Symlink loop from ..."
        raise ConfigError(
            f"option --out must be a folder path; got {str(out)!r}, a symbolic link loop, instead"
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"option --out must be a folder path; got {str(out)!r} instead ({exc.strerror})"
        ) from exc
    if folder.parent == folder:
        raise ConfigError(
            f"option --out must be a folder below the file system root; got {str(out)!r} instead"
        )
    for root in FORBIDDEN_ROOTS:
        if folder == root or root in folder.parents:
            raise ConfigError(
                f"option --out must be a folder on a disk; got {str(out)!r} instead, which is "
                f"under {root} (a kernel or device file system)"
            )
    if len(os.fsencode(folder.name)) + len(PARTIAL_TAG) + 10 > _NAME_MAX:
        raise ConfigError(
            f"option --out must have a name of at most {_NAME_MAX - len(PARTIAL_TAG) - 10} bytes "
            f"(its temporary folder adds {len(PARTIAL_TAG) + 10}); got {len(folder.name)} "
            f"characters in {str(out)!r} instead"
        )
    return folder


def _check_inputs(
    out: str | Path, folder: Path, inputs: Sequence[Path], planned: Iterable[str] | None
) -> None:
    planned_paths = {folder / p for p in planned or ()}
    for given in inputs:
        try:
            path = given.expanduser().resolve()
        except (RuntimeError, OSError):
            continue  # the loader reports an unreadable input with its own message
        where = f"input {str(given)!r}"
        if path == folder:
            raise ConfigError(
                f"option --out must be a new or earlier review folder, not an input; got "
                f"{str(out)!r}, which is {where}, instead"
            )
        if folder in path.parents:
            because = (
                f"the review writes {str(path.relative_to(folder))!r} there"
                if path in planned_paths
                else "the review replaces that folder as a whole"
            )
            raise ConfigError(
                f"option --out must not hold an input ({because}); got {str(out)!r}, which "
                f"holds {where}, instead; move the input or choose another --out"
            )
        if path in folder.parents and path.is_dir():
            raise ConfigError(
                f"option --out must not lie inside an input folder; got {str(out)!r}, inside "
                f"{where}, instead"
            )


def _check_creatable(out: str | Path, folder: Path) -> Path:
    """The nearest existing folder of ``folder``; refuse what cannot become a review folder."""
    expected = "option --out must be a directory we may write"
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{expected}; got {str(out)!r} (an existing file) instead")
    anchor = folder.parent
    while not anchor.exists():
        anchor = anchor.parent
    if not anchor.is_dir():
        raise ConfigError(f"{expected}; got {str(out)!r} instead ({str(anchor)!r} is a file)")
    try:  # a real attempt: permission bits, ACLs and read-only mounts all answer the same way
        probe = tempfile.mkdtemp(prefix=f".{folder.name}{PARTIAL_TAG}probe-", dir=anchor)
        os.rmdir(probe)
    except OSError as exc:
        raise ConfigError(
            f"{expected}; got {str(out)!r} instead ({str(anchor)!r} is not writable: "
            f"{exc.strerror}; the review is written beside --out and renamed into place)"
        ) from exc
    if folder.is_dir() and os.stat(folder).st_dev != os.stat(folder.parent).st_dev:
        raise ConfigError(
            f"{expected}; got {str(out)!r}, a mount point, instead (the review is written beside "
            "--out and renamed into place); give a folder inside it, e.g. "
            f"--out {str(Path(out) / 'review')!r}"
        )
    return anchor


def _check_replaceable(out: str | Path, earlier: EarlierReview, *, overwrite: bool) -> None:
    held = f"{len(earlier.files)} file(s): {_some(earlier.files)}"
    if earlier.listed_by is None:
        raise ConfigError(
            f"option --out must be a new, empty or earlier review folder; got {str(out)!r}, "
            f"which holds {held} and no {MARKER} or manifest.json, instead; synthreview deletes "
            "only files a review wrote, so even --overwrite leaves it: choose another --out"
        )
    if not overwrite:
        raise ConfigError(
            f"option --out holds an earlier review ({held}); pass --overwrite to replace it, or "
            f"choose another --out; got {str(out)!r}"
        )
    if earlier.unlisted or earlier.changed:
        parts = []
        if earlier.unlisted:
            parts.append(f"files no review wrote: {_some(earlier.unlisted)}")
        if earlier.changed:
            parts.append(f"files changed since the review wrote them: {_some(earlier.changed)}")
        raise ConfigError(
            f"option --overwrite replaces only files an earlier review wrote (listed in its "
            f"{earlier.listed_by}, unchanged); got {str(out)!r}, which also holds "
            f"{'; '.join(parts)}; move them away or choose another --out"
        )


# ---------------------------------------------------------------------------------------------
# writing


def write_review_folder(
    out: str | Path, files: Mapping[str, bytes], *, overwrite: bool = False
) -> list[Path]:
    """Write ``{relative path: bytes}`` as the review folder ``out``, whole or not at all.

    Parameters
    ----------
    out : str or Path
        The review folder; its parent folders are created.
    files : mapping of str to bytes
        Relative ``/``-separated paths (e.g. ``Release.files``); :data:`MARKER` is added.
    overwrite : bool, default False
        Replace an earlier review at ``out`` (only its own, unchanged files are deleted).

    Returns
    -------
    list of Path
        The written files under ``out``, the marker last.

    Raises
    ------
    ConfigError
        ``out`` holds files and ``overwrite`` is False, or holds files no review wrote.
    OSError
        Writing failed (e.g. the disk is full); the temporary folder is removed and ``out`` is
        as it was.
    """
    folder = _resolve_out(out)
    names = [_relative(name) for name in files]
    earlier = existing_review(folder)
    if earlier is not None:
        _check_replaceable(out, earlier, overwrite=overwrite)
    folder.parent.mkdir(parents=True, exist_ok=True)
    needed = sum(len(data) for data in files.values()) + MIN_FREE_BYTES // 8
    free = shutil.disk_usage(folder.parent).free
    if free < needed:
        raise OSError(
            errno.ENOSPC,
            f"the review's {_mb(needed)} do not fit in the {_mb(free)} free on the file system "
            f"of --out {str(out)!r}; nothing was written",
        )
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}{PARTIAL_TAG}", dir=folder.parent))
    try:
        # mkdtemp makes the folder private (0700); a review folder gets the usual mode
        staging.chmod(0o777 & ~_umask())
        digests = []
        for name, data in zip(names, files.values(), strict=True):
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_synced(path, data)
            digests.append(FileDigest(name, hashlib.sha256(data).hexdigest(), len(data)))
        _write_synced(staging / MARKER, marker_bytes(digests))
        for sub in sorted({(staging / n).parent for n in names}, key=lambda p: -len(p.parts)):
            _fsync_dir(sub)
        _swap_in(staging, folder, earlier)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [folder / n for n in names] + [folder / MARKER]


def marker_bytes(digests: Iterable[FileDigest]) -> bytes:
    """The content of :data:`MARKER` for these files (sorted, no timestamp)."""
    content = {
        "format": MARKER_FORMAT,
        "version": MARKER_VERSION,
        "files": {
            d.path: {"sha256": d.sha256, "bytes": d.size}
            for d in sorted(digests, key=lambda d: d.path)
        },
    }
    return (json.dumps(content, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _swap_in(staging: Path, folder: Path, earlier: EarlierReview | None) -> None:
    if earlier is None:
        # absent, or a folder without files: rename(2) replaces an empty folder atomically and
        # fails on one that filled up in the meantime
        if folder.is_dir():
            for sub in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
                sub.rmdir()  # only empty folders are there: a file makes this fail
        os.rename(staging, folder)
        _fsync_dir(folder.parent)
        return
    aside = folder.parent / staging.name.replace(PARTIAL_TAG, OLD_TAG, 1)
    if _exchange(staging, folder):  # one step: --out is the old or the new review, never absent
        os.rename(staging, aside)
    else:
        os.rename(folder, aside)
        try:
            os.rename(staging, folder)
        except BaseException:
            os.rename(aside, folder)
            raise
    _fsync_dir(folder.parent)
    _remove_review(aside, earlier)


def _remove_review(aside: Path, earlier: EarlierReview) -> None:
    """Delete the earlier review's own files, then its empty folders; leave anything else."""
    for name in earlier.files:
        if name in earlier.unlisted or name in earlier.changed:
            continue
        (aside / name).unlink(missing_ok=True)
    for sub in sorted((p for p in aside.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(sub.iterdir()):
            sub.rmdir()
    if any(aside.iterdir()):
        warnings.warn(
            f"the earlier review was replaced, but {str(aside)!r} still holds files that appeared "
            "while the new one was written; they were left there",
            UserWarning,
            stacklevel=3,
        )
    else:
        aside.rmdir()


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # file system or kernel without the flag: two renames instead
    raise OSError(code, os.strerror(code), str(second))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows: folders cannot be opened; the rename is still the commit point
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the data files were synced
    finally:
        os.close(fd)


def _relative(name: str) -> str:
    path = PurePosixPath(name)
    if (
        not name
        or path.is_absolute()
        or any(part in ("", ".", "..") for part in name.split("/"))
        or "\\" in name
        or name == MARKER
    ):
        raise ValueError(
            f"review file names must be relative '/'-separated paths without '..', other than "
            f"{MARKER!r}; got {name!r} instead"
        )
    return name


# ---------------------------------------------------------------------------------------------
# reading


def read_finished_review(folder: str | Path) -> FinishedReview:
    """The review at ``folder`` if it is finished (see the module docstring), else an error.

    Parameters
    ----------
    folder : str or Path

    Returns
    -------
    FinishedReview

    Raises
    ------
    DataError
        The folder is absent, temporary, has no valid marker, or a file is missing, extra,
        truncated or changed; the message names them.
    """
    root = Path(folder)
    where = f"review folder {str(folder)!r}"
    if not root.is_dir():
        raise DataError(f"{where} must be a folder written by synthreview; it does not exist")
    if PARTIAL_TAG in root.name or OLD_TAG in root.name:
        raise DataError(
            f"{where} is the temporary folder of a review that was interrupted or is being "
            "replaced; a finished review is renamed to its --out and never read from here"
        )
    listing = _marker_listing(root)
    if listing is None:
        raise DataError(
            f"{where} is not finished: {MARKER} is missing or not a synthreview marker (the run "
            "failed or was stopped, or the folder was written by a synthreview without markers)"
        )
    if "report.json" not in listing:
        raise DataError(f"{where} is not finished: its {MARKER} lists no report.json")
    present = set(_walk(root)) - {MARKER}
    missing = sorted(set(listing) - present)
    extra = sorted(present - set(listing))
    damaged = sorted(
        name
        for name in set(listing) & present
        if (root / name).is_symlink() or not _matches(root / name, listing[name])
    )
    problems = [
        f"{label}: {_some(names)}"
        for label, names in (
            ("missing", missing),
            ("truncated or changed", damaged),
            ("not written by the review", extra),
        )
        if names
    ]
    if problems:
        raise DataError(f"{where} is not a finished review ({'; '.join(problems)})")
    return FinishedReview(
        folder=root,
        files=tuple(FileDigest(name, *listing[name]) for name in sorted(listing)),
    )


def _marker_listing(root: Path) -> dict[str, tuple[str, int]] | None:
    try:
        content = json.loads((root / MARKER).read_bytes())
        if content.get("format") != MARKER_FORMAT or content.get("version") != MARKER_VERSION:
            return None
        listing = {
            _relative(str(name)): (str(entry["sha256"]), int(entry["bytes"]))
            for name, entry in content["files"].items()
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return listing


def _listing(root: Path) -> tuple[dict[str, tuple[str, int] | None] | None, str | None]:
    """``({file: (sha256, size) or None}, listed by)`` of an earlier review, or ``(None, None)``."""
    marker = _marker_listing(root)
    if marker is not None:
        return dict(marker), MARKER
    try:  # a review written before the marker: the manifest lists every other output
        outputs = json.loads((root / "manifest.json").read_bytes())["outputs"]
        listing: dict[str, tuple[str, int] | None] = {
            _relative(str(name)): (str(entry["sha256"]), int(entry["bytes"]))
            for name, entry in outputs.items()
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None, None
    listing["manifest.json"] = None
    return listing, "manifest.json"


# ---------------------------------------------------------------------------------------------
# small helpers


def _walk(root: Path) -> list[str]:
    """Every non-folder entry under ``root`` (links not followed), relative and sorted."""
    found = []
    for here, dirs, names in os.walk(root, followlinks=False):
        base = Path(here)
        # a symbolic link to a folder shows up in ``dirs`` and is not entered: count it as a file
        found += [(base / d).relative_to(root).as_posix() for d in dirs if (base / d).is_symlink()]
        found += [(base / n).relative_to(root).as_posix() for n in names]
    return sorted(found)


def _matches(path: Path, expected: tuple[str, int] | None) -> bool:
    if expected is None:
        return True
    sha256, size = expected
    try:
        if path.stat().st_size != size:
            return False
        return file_sha256(path) == sha256
    except OSError:
        return False


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _size(path: Path) -> int:
    """Bytes of an input file, or of the files directly in an input folder (Parquet partitions)."""
    try:
        if path.is_dir():
            return sum(p.stat().st_size for p in path.iterdir() if p.is_file())
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB"


def _some(names: Iterable[str]) -> str:
    names = list(names)
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
