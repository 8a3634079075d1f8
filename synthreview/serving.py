"""What the operator who started the dashboard allows it to do: settings of the server.

A dashboard is reachable by anyone who can open its address, and nobody signs in to it (see
``docs/security.md``). Two things it does would let such a visitor act on the server itself, so
they are settings of the server, fixed when it starts, and a browser can neither see an input
for them nor change them:

- **the decision register** (:mod:`synthreview.release.register`): where the Audit page
  appends decisions and the History page reads them. A path or URL typed in a browser would let
  a visitor create folders and SQLite files anywhere the server can write, or make the server
  connect to any host and port;
- **the review folders a browser may open** (the Data page's *Open a stored review*): only the
  review folders directly inside the operator's ``reviews`` folder, offered as a list; a path
  typed in a browser would let a visitor read folders anywhere the server can read;
- **free ``module:function`` generators** for the shadow-model attack
  (:mod:`synthreview.generators.plugin`): importing a module named in a browser and calling it
  with the real training table is code execution. Without the opt-in the dashboard offers only
  the generators installed as entry points (and the built-ins).

The settings come from the environment first, then from a TOML file (``$SYNTHREVIEW_CONFIG``, or
``.streamlit/synthreview.toml`` in the folder the server was started from)::

    # .streamlit/synthreview.toml
    register = "postgresql://reviewer@db.internal:5432/synthreview"   # or sqlite:///PATH
    reviews = "/srv/synthreview/reviews"   # review folders the Data page may open
    allow_generator_paths = false

``SYNTHREVIEW_REGISTER`` overrides ``register``, ``SYNTHREVIEW_REVIEWS`` ``reviews`` and
``SYNTHREVIEW_ALLOW_GENERATOR_PATHS=1`` ``allow_generator_paths``. A password never belongs in a
register URL: PostgreSQL reads it from ``PGPASSWORD`` or a ``.pgpass`` file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from synthreview.errors import ConfigError

__all__ = ["CONFIG_FILE", "ServerSettings", "server_settings"]

#: the settings file read when ``$SYNTHREVIEW_CONFIG`` is not set (relative to the server's cwd)
CONFIG_FILE = Path(".streamlit") / "synthreview.toml"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class ServerSettings:
    """The dashboard server's settings.

    Attributes
    ----------
    register : str or None
        The register URL or SQLite path; ``None`` = the default location
        (:func:`synthreview.release.register.default_register`).
    reviews : str or None
        A folder whose review folders (written by ``synthreview review --out``) the Data page
        offers to open; ``None`` = none (``synthreview show PATH`` still opens one).
    allow_generator_paths : bool
        Whether the Privacy page accepts a free ``module:function`` generator (operator opt-in;
        default ``False``: installed entry points and built-ins only).
    source : str
        Where the settings were read (``"environment"``, a file path, or ``"defaults"``),
        for the pages that show them.
    """

    register: str | None = None
    reviews: str | None = None
    allow_generator_paths: bool = False
    source: str = "defaults"


def _flag(value: object, *, name: str, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{where}: {name} must be true or false; got {value!r} instead")


def server_settings(
    environ: Mapping[str, str] | None = None, config_file: Path | None = None
) -> ServerSettings:
    """The server's settings: the environment over the settings file over the defaults.

    Parameters
    ----------
    environ : mapping, optional
        The environment (default :data:`os.environ`).
    config_file : Path, optional
        The TOML file (default ``$SYNTHREVIEW_CONFIG`` or :data:`CONFIG_FILE`); a missing file
        means the defaults.

    Raises
    ------
    ConfigError
        The file is not valid TOML, has a key this module does not know, or a value of the
        wrong type (a typo must not silently fall back to a default).
    """
    env = os.environ if environ is None else environ
    path = config_file or Path(env.get("SYNTHREVIEW_CONFIG") or CONFIG_FILE)
    values: dict[str, object] = {}
    sources: list[str] = []
    if path.is_file():
        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"server settings {path}: not a readable TOML file ({exc})") from None
        unknown = sorted(set(values) - {"register", "reviews", "allow_generator_paths"})
        if unknown:
            raise ConfigError(
                f"server settings {path}: unknown keys {unknown}; expected register, reviews "
                "and allow_generator_paths"
            )
        for name in ("register", "reviews"):
            if name in values and not (isinstance(values[name], str) and values[name].strip()):
                raise ConfigError(
                    f"server settings {path}: {name} must be a non-empty URL or path; got "
                    f"{values[name]!r} instead"
                )
        sources.append(str(path))
    register = values.get("register")
    allow = _flag(values.get("allow_generator_paths", False), name="allow_generator_paths",
                  where=f"server settings {path}")  # fmt: skip
    if env.get("SYNTHREVIEW_REGISTER"):
        register = env["SYNTHREVIEW_REGISTER"]
        sources.append("environment")
    reviews = values.get("reviews")
    if env.get("SYNTHREVIEW_REVIEWS"):
        reviews = env["SYNTHREVIEW_REVIEWS"]
        sources.append("environment")
    if "SYNTHREVIEW_ALLOW_GENERATOR_PATHS" in env:
        allow = _flag(env["SYNTHREVIEW_ALLOW_GENERATOR_PATHS"],
                      name="SYNTHREVIEW_ALLOW_GENERATOR_PATHS", where="environment")  # fmt: skip
        sources.append("environment")
    return ServerSettings(
        register=str(register) if register else None,
        reviews=str(reviews) if reviews else None,
        allow_generator_paths=allow,
        source=", ".join(dict.fromkeys(sources)) or "defaults",
    )
