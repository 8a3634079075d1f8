"""The sha256 of a file on disk, read in blocks (never the whole file in memory).

Input files are recorded, matched and verified by this digest: a loaded table's
``LoadedTable.sha256`` (for a file, the sha256 of its bytes as stored), the partitions of a
folder (:func:`synthreview.io.parquet.folder_digest`), a candidate's own input file among the
release's sources and the files of an earlier review folder.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["file_sha256"]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of the bytes of the file at ``path``.

    Raises
    ------
    OSError
        The file cannot be opened or read (callers name the file in their own message).
    """
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
