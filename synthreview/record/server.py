"""What the server running the dashboard offers and records: its settings, the review folders
its operator put in its ``reviews`` folder, its decision register and its generators.

Everything here is read from the operator's settings on each call (``synthreview.serving``:
the environment and ``.streamlit/synthreview.toml``), never from a browser session, so nothing a
browser sends can name a path, a register or a module (docs/security.md).
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError
from synthreview.generators.plugin import installed_generators, load_generator
from synthreview.release.register import (
    AppendResult,
    ChainCheck,
    Record,
    append_records,
    check_chain,
    default_register,
    history,
    parse_register_url,
    records_of_release,
)
from synthreview.serving import ServerSettings, server_settings

__all__ = [
    "allowed_generator",
    "generator_choices",
    "record_in_register",
    "register_chain_check",
    "register_history",
    "register_location",
    "register_shown",
    "settings",
    "stored_reviews",
]


def settings() -> ServerSettings:
    """The server's settings (:mod:`synthreview.serving`), read on each call."""
    return server_settings()


def stored_reviews() -> list[str]:
    """The review folders (holding a completion marker) directly inside the operator's
    ``reviews`` folder, by name: a browser picks one, never names a path on the server."""
    root = settings().reviews
    if root is None or not Path(root).is_dir():
        return []
    return sorted(
        entry.name
        for entry in Path(root).iterdir()
        if entry.is_dir() and not entry.is_symlink() and (entry / "COMPLETE.json").is_file()
    )


def register_location() -> str:
    """The decision register this server records in and reads: the operator's setting
    (``SYNTHREVIEW_REGISTER`` or ``.streamlit/synthreview.toml``), else the default location."""
    return settings().register or default_register()


def register_shown() -> str:
    """:func:`register_location` as the pages show it (credentials redacted)."""
    try:
        return parse_register_url(register_location()).shown
    except ConfigError as exc:
        return f"(not usable: {exc})"


def record_in_register(
    files: dict[str, bytes], *, key: Ed25519PrivateKey | None = None
) -> AppendResult:
    """Append the decisions of the record ``files`` to the server's register.

    Parameters
    ----------
    files : dict of str to bytes
        The record as built in the session (``ReviewSession.record_builder``), signed or not.
    key : Ed25519PrivateKey, optional
        The key that signed ``files``: the records carry its key id.

    Raises
    ------
    ConfigError
        The register cannot be opened, created or written (locked, corrupt, refused, newer, or
        a file that is not a synthreview register).
    """
    return append_records(register_location(), records_of_release(files, key=key))


def register_history(
    *, candidate: str | None = None, inputs_sha256: str | None = None
) -> list[Record]:
    """The server's register, read only (nothing created or changed).

    Raises
    ------
    ConfigError
        No register yet, a file that is not a synthreview register, or a refused connection.
    """
    return history(register_location(), candidate=candidate, inputs_sha256=inputs_sha256)


def register_chain_check() -> ChainCheck:
    """The server's register's hash chain recomputed, read only (``history --check``).

    Raises
    ------
    ConfigError
        As :func:`register_history`.
    """
    return check_chain(register_location())


def allowed_generator(spec: str | None) -> None:
    """Refuse a generator this server does not allow: only the installed ones unless the
    operator opted in to free ``module:function`` names. Nothing is imported for a refused name.

    Raises
    ------
    ConfigError
        ``spec`` is not installed (and free names are not allowed), or cannot be loaded.
    """
    if spec is not None:
        load_generator(spec, allow_paths=settings().allow_generator_paths)


def generator_choices() -> list[str]:
    """The generators the Privacy page offers: the installed ones, by name."""
    return list(installed_generators())
