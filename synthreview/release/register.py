"""The decision register: every filed review's decisions, append-only, in SQLite or PostgreSQL.

One row per candidate decision of a review: the review's id (sha256 of its signed statement,
:mod:`synthreview.release.signing`), the candidate, the tool's decision with its deciding rule
and reason, the meeting's sign-off (reviewer, decision, reason), the policy's name and sha256,
the input digests, every rule verdict and the report's time. Rows are never updated or
deleted: a later review of the same candidate name is a new row pointing at the one it follows
(``previous``), so :func:`rule_changes` shows which verdicts moved between two releases of a
generator.

Where the register lives (``--db``):

- ``sqlite:///relative/path.sqlite``, ``sqlite:////absolute/path.sqlite`` or a plain path: an
  SQLite file, created on first use, in WAL mode with a busy timeout, each append one
  ``BEGIN IMMEDIATE`` transaction (several processes may append at once);
- ``postgresql://user@host:port/dbname``: a PostgreSQL database for a team (``psycopg``); each
  append is one transaction holding an advisory lock, so concurrent appends neither interleave
  nor lose a row;
- default: :func:`default_register` (``$SYNTHREVIEW_REGISTER``, else
  ``$XDG_DATA_HOME/synthreview/register.sqlite``, else
  ``~/.local/share/synthreview/register.sqlite``).

The schema carries its version (table ``schema_version``); :data:`MIGRATIONS` brings an older
register up to :data:`SCHEMA_VERSION` on first use and a newer one is refused.

The rows form a hash chain, as a transparency log's entries do (Sigstore Rekor): each row stores
``prev_hash``, the previous row's ``row_hash`` (:data:`GENESIS` for the first), and ``row_hash``,
the sha256 of its own canonical content (:func:`row_digest`: every column, ``seq`` and
``prev_hash`` included, as sorted compact JSON). :func:`check_chain` (``synthreview history
--check``) recomputes it and names the first row that does not match: a row changed in the
database, a row deleted (the next row's ``prev_hash`` names another row) or a row inserted
without the tool. A register made before the chain (schema version 1) is chained once when it is
next written to, and the migration is recorded in ``chain_migrations`` (when, how many rows, the
head hash then): the chain attests those rows unchanged since that moment, not before. The chain
is kept inside the database it protects, so whoever can rewrite every row from some point on,
recomputing each hash, is caught only by comparing the head hash with one kept elsewhere
(``history --check`` prints it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias
from urllib.parse import unquote_plus

import pandas as pd
import psycopg
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.errors import ConfigError
from synthreview.judgement.ledger import PriorRelease
from synthreview.release.folder import MARKER
from synthreview.release.signing import (
    ENVELOPE_NAME,
    INPUT_PREFIX,
    PREDICATE_TYPE,
    JSONObject,
    key_id,
    release_statement,
    statement_id,
)

SCHEMA_VERSION = 4
#: ``prev_hash`` of the chain's first row
GENESIS = "0" * 64
#: an open register connection
Connection: TypeAlias = "sqlite3.Connection | psycopg.Connection"
#: one row as the database returns it
Row: TypeAlias = "Sequence[str | int | None]"
# seconds a writer waits for another writer's transaction (SQLite busy timeout, PG connect)
WAIT_SECONDS = 60
# pg_advisory_xact_lock key of the register's writers ("synthrev" in ASCII)
PG_LOCK = 0x73796E7468726576

_COLUMNS = (
    "review_id",
    "candidate",
    "outcome",
    "verdict",
    "rule",
    "reason",
    "reviewer",
    "signed_decision",
    "signed_reason",
    "policy_name",
    "policy_sha256",
    "inputs",
    "rules",
    "generated_at",
    "recorded_at",
    "keyid",
    "previous",
    "access",
    "source_id",
    "claimed_epsilon",
    "waivers",
    "location",
    "statement_sha256",
)
_TABLE = """
CREATE TABLE decisions (
    seq {serial},
    review_id TEXT NOT NULL,
    candidate TEXT NOT NULL,
    outcome TEXT NOT NULL,
    verdict TEXT,
    rule TEXT,
    reason TEXT NOT NULL,
    reviewer TEXT,
    signed_decision TEXT,
    signed_reason TEXT,
    policy_name TEXT,
    policy_sha256 TEXT,
    inputs TEXT NOT NULL,
    rules TEXT NOT NULL,
    generated_at TEXT,
    recorded_at TEXT NOT NULL,
    keyid TEXT,
    previous BIGINT REFERENCES decisions (seq),
    UNIQUE (review_id, candidate)
)"""
#: schema version -> statements that bring the previous version to it, per dialect
MIGRATIONS: dict[int, dict[str, tuple[str, ...]]] = {
    1: {
        "sqlite": (
            _TABLE.format(serial="INTEGER PRIMARY KEY AUTOINCREMENT"),
            "CREATE INDEX decisions_candidate ON decisions (candidate, seq)",
        ),
        "postgresql": (
            _TABLE.format(serial="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
            "CREATE INDEX decisions_candidate ON decisions (candidate, seq)",
        ),
    },
    # the hash chain; Register.migrate then chains the rows already there (_chain_existing)
    2: {
        dialect: (
            "ALTER TABLE decisions ADD COLUMN prev_hash TEXT",
            "ALTER TABLE decisions ADD COLUMN row_hash TEXT",
            "CREATE TABLE chain_migrations (migrated_at TEXT NOT NULL, "
            "from_version INTEGER NOT NULL, records BIGINT NOT NULL, head TEXT NOT NULL)",
        )
        for dialect in ("sqlite", "postgresql")
    },
    # the ledger per source: the release context's access model and source id, the claimed ε;
    # the candidate's waivers (JSON: rule, justification, requester, approver, times)
    # (NULL in earlier rows, which a row's hash leaves out: their hashes stay as they were)
    3: {
        dialect: (
            "ALTER TABLE decisions ADD COLUMN access TEXT",
            "ALTER TABLE decisions ADD COLUMN source_id TEXT",
            "ALTER TABLE decisions ADD COLUMN claimed_epsilon DOUBLE PRECISION",
            "ALTER TABLE decisions ADD COLUMN waivers TEXT",
        )
        for dialect in ("sqlite", "postgresql")
    },
    # the evidence: the review folder the record was written to (absolute path) and the sha256
    # of the signed statement of the record held there, so History can open the folder again
    # and tell whether it still holds that record (NULL in earlier rows: their hashes stay)
    4: {
        dialect: (
            "ALTER TABLE decisions ADD COLUMN location TEXT",
            "ALTER TABLE decisions ADD COLUMN statement_sha256 TEXT",
        )
        for dialect in ("sqlite", "postgresql")
    },
}


class NoRegister(ConfigError):
    """A reader found no register at the location (nothing has been recorded there yet)."""


@dataclass(frozen=True)
class RegisterURL:
    """Where a register lives.

    Attributes
    ----------
    dialect : {"sqlite", "postgresql"}
    target : str
        The SQLite file path, or the libpq connection URL.
    shown : str
        The URL without its password, for messages.
    """

    dialect: str
    target: str
    shown: str


@dataclass(frozen=True)
class InputDigest:
    """One input file of a review: its role, name and sha256."""

    role: str
    name: str
    sha256: str


@dataclass(frozen=True)
class Record:
    """One candidate decision as the register holds it.

    Attributes
    ----------
    seq : int
        Position in the register (0 for a record not yet appended).
    review_id : str
        sha256 of the review's statement.
    candidate : str
    outcome : str
        The tool's decision (``release``, ``release_after_curation``, ``do_not_release``,
        ``incomplete``).
    verdict, rule, reason : str or None
        The verdict, the rule that decided and the plain reason.
    reviewer, signed_decision, signed_reason : str or None
        The meeting's sign-off, when the review carried one.
    policy_name, policy_sha256 : str or None
    inputs : tuple of InputDigest
    rules : dict of str to str
        Every rule's verdict.
    generated_at : str or None
        The report's time.
    recorded_at : str
        When the register took the record.
    keyid : str or None
        Key id whose signature was verified before recording; None for an unverified folder.
    previous : int or None
        ``seq`` of the register's earlier record of the same candidate name.
    access, source_id : str or None
        The release context's access model and source id (None: no context).
    claimed_epsilon : float or None
        The review's claimed ε (``--claimed-epsilon``), for the ledger's composition.
    waivers : str or None
        JSON list of the candidate's waivers (``report.json`` ``waivers``), None: none.
    location : str or None
        The review folder the record's evidence was written to (absolute); None when the
        review was recorded without a folder (the dashboard's downloads) or before schema 4.
    statement_sha256 : str or None
        sha256 of the signed statement of the record held at ``location``: the prepared
        record's (``review_id`` for its own rows; the record a countersignature countersigns
        for the meeting's rows). Opening the folder again checks it.
    """

    seq: int
    review_id: str
    candidate: str
    outcome: str
    verdict: str | None
    rule: str | None
    reason: str
    reviewer: str | None
    signed_decision: str | None
    signed_reason: str | None
    policy_name: str | None
    policy_sha256: str | None
    inputs: tuple[InputDigest, ...]
    rules: dict[str, str]
    generated_at: str | None
    recorded_at: str
    keyid: str | None
    previous: int | None
    access: str | None = None
    source_id: str | None = None
    claimed_epsilon: float | None = None
    waivers: str | None = None
    location: str | None = None
    statement_sha256: str | None = None


@dataclass(frozen=True)
class AppendResult:
    """What :func:`append_records` did: the records added and those already there."""

    added: tuple[Record, ...]
    already: tuple[Record, ...]


@dataclass(frozen=True)
class ChainMigration:
    """A register chained when it was migrated: rows before it are attested from then on."""

    migrated_at: str
    from_version: int
    records: int
    head: str


@dataclass(frozen=True)
class ChainCheck:
    """What :func:`check_chain` found.

    Attributes
    ----------
    ok : bool
        Every row's hashes match and each row follows the one before it.
    records : int
        Rows checked.
    head : str
        ``row_hash`` of the last row (:data:`GENESIS` for an empty register): compare it with a
        copy kept outside the database to catch a rewrite of the chain's end.
    broken_at : int or None
        ``seq`` of the first row that does not match.
    problem : str or None
        What does not match there, in words.
    migrations : tuple of ChainMigration
        When rows made before the chain were chained.
    version : int
        The register's schema version (below 2: no chain yet).
    """

    ok: bool
    records: int
    head: str
    broken_at: int | None
    problem: str | None
    migrations: tuple[ChainMigration, ...]
    version: int


@dataclass(frozen=True)
class RuleChange:
    """A rule whose verdict differs between two records of one candidate."""

    rule: str
    before: str | None
    after: str | None


def default_register() -> str:
    """``$SYNTHREVIEW_REGISTER``, else the SQLite file under the user's data folder."""
    chosen = os.environ.get("SYNTHREVIEW_REGISTER")
    if chosen:
        return chosen
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return f"sqlite:///{Path(base) / 'synthreview' / 'register.sqlite'}"


#: query parameters of a connection URL whose values are secrets (libpq's and common ones)
SECRET_QUERY_KEYS = frozenset({"password", "passwd", "pwd", "pass", "sslpassword", "secret",
                               "token", "api_key", "apikey"})  # fmt: skip


def redact_url(url: str) -> str:
    """``url`` with its credentials hidden: the one form in which a register URL is shown.

    The password of ``scheme://user:password@host`` becomes ``***`` and so does the value of
    every secret query parameter (:data:`SECRET_QUERY_KEYS`, e.g. ``?password=...``); a value
    without ``://`` (a file path) is returned as it is. Every message, manifest and record that
    names a register uses this form (passwords belong in ``PGPASSWORD`` or a ``.pgpass`` file,
    which libpq reads).

    >>> redact_url("postgresql://me:s3cret@db:5432/reg?sslmode=require&password=s3cret")
    'postgresql://me:***@db:5432/reg?sslmode=require&password=***'
    """
    if not isinstance(url, str) or "://" not in url:
        return url
    scheme, _, rest = url.partition("://")
    location, mark, query = rest.partition("?")
    query, hash_mark, fragment = query.partition("#")
    authority, slash, path = location.partition("/")
    if "@" in authority:
        userinfo, _, host = authority.rpartition("@")
        if ":" in userinfo:
            authority = f"{userinfo.split(':', 1)[0]}:***@{host}"
    pairs = []
    for pair in query.split("&") if query else ():
        key, equals, _value = pair.partition("=")
        secret = unquote_plus(key).strip().lower() in SECRET_QUERY_KEYS
        pairs.append(f"{key}{equals}***" if secret and equals else pair)
    return f"{scheme}://{authority}{slash}{path}{mark}{'&'.join(pairs)}{hash_mark}{fragment}"


def redact_secrets(text: str, url: str) -> str:
    """``text`` (a driver's message) with ``url`` and its secrets replaced by their redacted form.

    libpq quotes a URL it cannot parse in its message; the password (as written and decoded)
    and every secret query value of ``url`` become ``***`` wherever they appear.
    """
    text = text.replace(url, redact_url(url))
    secrets = set()
    if "://" in url:
        authority = url.partition("://")[2].partition("/")[0].partition("?")[0]
        userinfo = authority.rpartition("@")[0]
        if ":" in userinfo:
            secrets.add(userinfo.split(":", 1)[1])
        for pair in url.partition("?")[2].partition("#")[0].split("&"):
            key, equals, value = pair.partition("=")
            if equals and unquote_plus(key).strip().lower() in SECRET_QUERY_KEYS:
                secrets.add(value)
    for secret in sorted(secrets | {unquote_plus(x) for x in secrets}, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


def parse_register_url(url: str) -> RegisterURL:
    """Split ``--db`` into dialect and target (see the module docstring for the forms).

    Raises
    ------
    ConfigError
        An empty value, another scheme, or an SQLite URL without a path.
    """
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"option --db must be a register URL or path; got {url!r} instead")
    if "://" not in url:
        return RegisterURL("sqlite", url, url)
    scheme, _, rest = url.partition("://")
    scheme = scheme.lower()
    if scheme == "sqlite":
        # SQLAlchemy's form: sqlite:///relative or sqlite:////absolute (the host part is empty)
        if not rest.startswith("/") or rest == "/":
            raise ConfigError(
                f"option --db: an SQLite URL must be sqlite:///PATH; got {redact_url(url)!r} "
                "instead"
            )
        return RegisterURL("sqlite", rest[1:], url)
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        target = "postgresql://" + rest
        return RegisterURL("postgresql", target, redact_url(target))
    raise ConfigError(
        "option --db must be sqlite:///PATH, postgresql://USER@HOST:PORT/DB or a file path; "
        f"got the scheme {scheme!r} instead"
    )


def records_from_statement(
    statement: JSONObject,
    *,
    review_id: str,
    keyid: str | None = None,
    location: str | os.PathLike[str] | None = None,
) -> list[Record]:
    """One :class:`Record` (``seq`` 0, not yet appended) per candidate decision of a statement.

    Parameters
    ----------
    statement : mapping
        A release statement (:func:`synthreview.release.signing.release_statement`).
    review_id : str
        sha256 of the statement's bytes (``Verification.review_id``); also the records'
        ``statement_sha256``, the digest History checks when it opens ``location`` again.
    keyid : str, optional
        The key whose signature was verified.
    location : path, optional
        The review folder that holds the record (stored absolute); None: no folder (the
        dashboard's downloads).
    """
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise ConfigError(
            f"statement must have predicateType {PREDICATE_TYPE}; got "
            f"{statement.get('predicateType')!r} instead"
        )
    predicate = _mapping(statement.get("predicate"), "the decision record")
    decisions = _mapping(predicate.get("decisions"), "report.json 'decisions'")
    if not decisions:
        raise ConfigError("the review records no decisions (report.json 'decisions' is empty)")
    for name, decision in decisions.items():
        entry = _mapping(decision, f"report.json 'decisions' {name!r}")
        if not isinstance(entry.get("outcome"), str):
            raise ConfigError(
                f"report.json 'decisions' {name!r} must name its outcome (text); got "
                f"{entry.get('outcome')!r} instead"
            )
    inputs = []
    for subject in statement.get("subject") or []:
        name = subject.get("name", "")
        if name.startswith(INPUT_PREFIX):
            _, role, stem = name.split(":", 2)
            inputs.append(InputDigest(role, stem, subject["digest"]["sha256"]))
    policy = _mapping(predicate.get("policy"), "report.json 'policy'")
    signoffs = _mapping(predicate.get("signoff"), "report.json 'signoff'")
    verdicts = _mapping(predicate.get("verdicts"), "report.json 'verdicts'")
    for name in decisions:
        _mapping(signoffs.get(name), f"report.json 'signoff' {name!r}")
        for rule, entry in _mapping(verdicts.get(name), f"the verdicts of {name!r}").items():
            _mapping(entry, f"the verdict of {name!r} rule {rule!r}")
    context = _mapping(predicate.get("context"), "report.json 'context'")
    options = _mapping(predicate.get("options"), "report.json 'options'")
    now = datetime.now(UTC).isoformat(timespec="seconds")
    records = []
    for name, decision in sorted(decisions.items()):
        signed = signoffs.get(name) or {}
        records.append(
            Record(
                seq=0,
                review_id=review_id,
                candidate=name,
                outcome=str(decision.get("outcome")),
                verdict=decision.get("verdict"),
                rule=decision.get("rule"),
                reason=str(decision.get("reason") or ""),
                reviewer=signed.get("reviewer"),
                signed_decision=signed.get("decision"),
                signed_reason=signed.get("reason"),
                policy_name=policy.get("name"),
                policy_sha256=policy.get("sha256"),
                inputs=tuple(inputs),
                rules={
                    rule: entry.get("verdict") for rule, entry in (verdicts.get(name) or {}).items()
                },
                generated_at=predicate.get("time"),
                recorded_at=now,
                keyid=keyid,
                previous=None,
                access=context.get("access"),
                source_id=context.get("source"),
                claimed_epsilon=_epsilon(options.get("claimed_epsilon")),
                waivers=_waivers_of(predicate.get("waivers"), name),
                location=folder_location(location),
                statement_sha256=review_id,
            )
        )
    return records


def folder_location(folder: str | os.PathLike[str] | None) -> str | None:
    """How the register stores a review folder's location: its absolute, resolved path."""
    return None if folder is None else str(Path(folder).resolve())


def _waivers_of(waivers: object, candidate: str) -> str | None:
    """The candidate's waivers of a record's ``waivers`` list, as sorted JSON (None: none)."""
    if not isinstance(waivers, list):
        return None
    mine = [
        w for w in waivers if isinstance(w, Mapping) and candidate in (w.get("candidates") or ())
    ]
    return json.dumps(mine, sort_keys=True, ensure_ascii=False) if mine else None


def _epsilon(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    """``value`` when it is a JSON object (``{}`` for a missing one), else a ConfigError: a
    hand-made or damaged report is refused with a message, never a traceback."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what} must be a JSON object; got {type(value).__name__} instead")
    return value


def records_of_release(
    files: Mapping[str, bytes],
    *,
    key: Ed25519PrivateKey | None = None,
    location: str | os.PathLike[str] | None = None,
) -> list[Record]:
    """The records of a review this process just built (``Release.files``), signed or not.

    The statement is rebuilt from ``files`` by ``signing.release_statement`` (the envelope and
    the completion marker left out), so its id equals that of the statement
    ``sign_files(files, key)`` signs; ``key`` marks the records as signed by it. A folder read
    back from disk goes through ``verify_files`` instead (``synthreview register``).
    ``location`` is the folder ``files`` were written to, when they were.
    """
    kept = {n: d for n, d in files.items() if n not in (ENVELOPE_NAME, MARKER)}
    statement = release_statement(kept)
    keyid = key_id(key.public_key()) if key is not None else None
    return records_from_statement(
        statement, review_id=statement_id(statement), keyid=keyid, location=location
    )


def check_register(url: str | None) -> RegisterURL:
    """Open the register at ``url`` once (creating or migrating it) and close it.

    For a command that will append after a long computation: an unreachable, locked or newer
    register is a :class:`ConfigError` before anything is computed.
    """
    with open_register(url) as register:
        return register.where


class Register:
    """An open register: :meth:`append` and :meth:`history`. Use :func:`open_register`."""

    def __init__(self, where: RegisterURL, connection: Connection) -> None:
        self.where = where
        self._connection = connection
        self._mark = "?" if where.dialect == "sqlite" else "%s"

    def _sql(self, text: str) -> str:
        return text.replace("?", self._mark)

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction that excludes every other writer of the register."""
        conn = self._connection
        if self.where.dialect == "sqlite":
            # IMMEDIATE takes the write lock at BEGIN (waiting up to the busy timeout), so the
            # previous-record lookup and the insert see no other writer in between
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        else:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (PG_LOCK,))
                yield conn

    def check_readable(self) -> int:
        """The schema version of a register opened read only (nothing is created or migrated).

        Raises
        ------
        ConfigError
            The database is not a synthreview register, or its schema is newer than this
            synthreview reads.
        """
        conn = self._connection
        if self.where.dialect == "sqlite":
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
        else:
            query = (
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        refused = _not_a_register(self.where, {str(r[0]) for r in conn.execute(query)})
        if refused is not None:
            raise refused
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        found = int(row[0]) if row and row[0] is not None else 0
        if found > SCHEMA_VERSION:
            raise ConfigError(
                f"the register {self.where.shown} has schema version {found}; this synthreview "
                f"knows versions up to {SCHEMA_VERSION} (upgrade synthreview)"
            )
        # an older schema is read as it is (reading never upgrades: the next review recorded
        # in it does)
        return found

    def migrate(self) -> int:
        """Bring the schema to :data:`SCHEMA_VERSION`; return the version found before."""
        with self._writing() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
            found = int(row[0]) if row and row[0] is not None else 0
            if found > SCHEMA_VERSION:
                raise ConfigError(
                    f"the register {self.where.shown} has schema version {found}; this "
                    f"synthreview knows versions up to {SCHEMA_VERSION} (upgrade synthreview)"
                )
            for version in range(found + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[version][self.where.dialect]:
                    conn.execute(statement)
                conn.execute(
                    self._sql("INSERT INTO schema_version (version) VALUES (?)"), (version,)
                )
            if found < 2 <= SCHEMA_VERSION:
                # once every column exists: the rows already there join the chain
                self._chain_existing(conn, found)
        return found

    def _chain_existing(self, conn: Connection, found: int) -> None:
        """Chain the rows of a register made before the chain, once, and record that."""
        rows = conn.execute(f"SELECT {_SELECT} FROM decisions ORDER BY seq").fetchall()
        head = GENESIS
        for row in rows:
            digest = row_digest(row, head)
            conn.execute(
                self._sql("UPDATE decisions SET prev_hash = ?, row_hash = ? WHERE seq = ?"),
                (head, digest, row[0]),
            )
            head = digest
        if found >= 1:
            conn.execute(
                self._sql(
                    "INSERT INTO chain_migrations (migrated_at, from_version, records, head) "
                    "VALUES (?, ?, ?, ?)"
                ),
                (datetime.now(UTC).isoformat(timespec="seconds"), found, len(rows), head),
            )

    def append(self, records: Sequence[Record]) -> AppendResult:
        """Append ``records`` in one transaction; a (review, candidate) already there is kept.

        Each new record's ``previous`` is the register's latest record of the same candidate.
        """
        added, already = [], []
        with self._writing() as conn:
            for record in records:
                row = conn.execute(
                    self._sql(
                        f"SELECT {_SELECT} FROM decisions WHERE review_id = ? AND candidate = ?"
                    ),
                    (record.review_id, record.candidate),
                ).fetchone()
                if row is not None:
                    already.append(_record(row))
                    continue
                last = conn.execute(
                    self._sql("SELECT max(seq) FROM decisions WHERE candidate = ?"),
                    (record.candidate,),
                ).fetchone()
                previous = int(last[0]) if last and last[0] is not None else None
                values = _values(record, previous)
                row = conn.execute(
                    self._sql(
                        f"INSERT INTO decisions ({', '.join(_COLUMNS)}) VALUES "
                        f"({', '.join('?' * len(_COLUMNS))}) RETURNING {_SELECT}"
                    ),
                    values,
                ).fetchone()
                # the row's hash covers its seq, known only once inserted: set in the same
                # transaction, under the writers' lock, so no row is ever seen unchained
                head = self._head(conn, before=int(row[0]))
                conn.execute(
                    self._sql("UPDATE decisions SET prev_hash = ?, row_hash = ? WHERE seq = ?"),
                    (head, row_digest(row, head), row[0]),
                )
                added.append(_record(row))
        return AppendResult(tuple(added), tuple(already))

    def _head(self, conn: Connection, *, before: int) -> str:
        """``row_hash`` of the last row before ``seq`` ``before`` (:data:`GENESIS`: none)."""
        row = conn.execute(
            self._sql("SELECT row_hash FROM decisions WHERE seq < ? ORDER BY seq DESC LIMIT 1"),
            (before,),
        ).fetchone()
        return GENESIS if row is None else str(row[0])

    def check_chain(self) -> ChainCheck:
        """Recompute the hash chain over every row, in ``seq`` order (see the module docstring)."""
        conn = self._connection
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        version = int(row[0]) if row and row[0] is not None else 0
        if version < 2:
            count = conn.execute("SELECT count(*) FROM decisions").fetchone()[0]
            return ChainCheck(
                False,
                int(count),
                GENESIS,
                None,
                f"the register has schema version {version}, made before the hash chain; it is "
                "chained (once, recorded) when a review is next recorded in it",
                (),
                version,
            )
        migrations = tuple(
            ChainMigration(str(m[0]), int(m[1]), int(m[2]), str(m[3]))
            for m in conn.execute(
                "SELECT migrated_at, from_version, records, head FROM chain_migrations "
                "ORDER BY migrated_at"
            ).fetchall()
        )
        rows = conn.execute(
            f"SELECT {_select(version)}, prev_hash, row_hash FROM decisions ORDER BY seq"
        ).fetchall()
        head, last_seq = GENESIS, None
        for row in rows:
            *content, prev_hash, row_hash = row
            seq = int(content[0])
            if prev_hash != head:
                after = f"record #{last_seq}" if last_seq is not None else "the chain's start"
                return ChainCheck(
                    False,
                    len(rows),
                    head,
                    seq,
                    f"record #{seq} does not follow {after}: its previous-record hash is "
                    f"{_short(prev_hash)}, the hash before it is {_short(head)} (a record was "
                    "deleted or inserted here, or this link was changed)",
                    migrations,
                    version,
                )
            if row_hash != row_digest(content, prev_hash):
                return ChainCheck(
                    False,
                    len(rows),
                    head,
                    seq,
                    f"record #{seq} does not match its hash {_short(row_hash)}: its content was "
                    "changed, or it was inserted without synthreview",
                    migrations,
                    version,
                )
            head, last_seq = row_hash, seq
        return ChainCheck(True, len(rows), head, None, None, migrations, version)

    def _version(self) -> int:
        row = self._connection.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def history(
        self, *, candidate: str | None = None, inputs_sha256: str | None = None
    ) -> list[Record]:
        """Records in the order they were appended, optionally of one candidate name or input."""
        where, params = [], []
        if candidate is not None:
            where.append("candidate = ?")
            params.append(candidate)
        if inputs_sha256 is not None:
            if not re.fullmatch(r"[0-9a-f]{64}", inputs_sha256):
                raise ConfigError(
                    "option --inputs-sha256 must be 64 lowercase hex digits; got "
                    f"{inputs_sha256!r} instead"
                )
            where.append("inputs LIKE ?")
            params.append(f'%"{inputs_sha256}"%')
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._connection.execute(
            self._sql(f"SELECT {_select(self._version())} FROM decisions{clause} ORDER BY seq"),
            tuple(params),
        ).fetchall()
        return [_record(row) for row in rows]


_SELECT = "seq, " + ", ".join(_COLUMNS)
#: the schema version that added a column (the others are version 1's)
_COLUMN_SINCE = {
    "access": 3,
    "source_id": 3,
    "claimed_epsilon": 3,
    "waivers": 3,
    "location": 4,
    "statement_sha256": 4,
}


def _select(version: int) -> str:
    """:data:`_SELECT` for a register at schema ``version``: a column it does not have yet
    reads as NULL (a reader never migrates, so an older register is read as it is)."""
    return "seq, " + ", ".join(
        name if _COLUMN_SINCE.get(name, 1) <= version else f"NULL AS {name}" for name in _COLUMNS
    )


def row_digest(row: Row, prev_hash: str) -> str:
    """sha256 of a row's canonical content: ``seq``, every column and ``prev_hash``.

    The content is sorted compact JSON (UTF-8) of the row as stored; a column that is NULL is
    left out, so a column added by a later schema version leaves earlier rows' hashes as they
    were.
    """
    content = {
        name: value
        for name, value in zip(("seq", *_COLUMNS), row, strict=True)
        if value is not None
    }
    content["prev_hash"] = prev_hash
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _short(digest: object) -> str:
    return "none" if digest is None else f"{str(digest)[:12]}..."


def _values(record: Record, previous: int | None) -> tuple[str | int | None, ...]:
    inputs = [{"role": i.role, "name": i.name, "sha256": i.sha256} for i in record.inputs]
    return (
        record.review_id,
        record.candidate,
        record.outcome,
        record.verdict,
        record.rule,
        record.reason,
        record.reviewer,
        record.signed_decision,
        record.signed_reason,
        record.policy_name,
        record.policy_sha256,
        json.dumps(inputs, sort_keys=True),
        json.dumps(record.rules, sort_keys=True),
        record.generated_at,
        record.recorded_at,
        record.keyid,
        previous,
        record.access,
        record.source_id,
        record.claimed_epsilon,
        record.waivers,
        record.location,
        record.statement_sha256,
    )


def _record(row: Row) -> Record:
    fields = dict(zip(("seq", *_COLUMNS), row, strict=True))
    fields["seq"] = int(fields["seq"])
    fields["inputs"] = tuple(InputDigest(**i) for i in json.loads(fields["inputs"]))
    fields["rules"] = json.loads(fields["rules"])
    fields["previous"] = None if fields["previous"] is None else int(fields["previous"])
    return Record(**fields)


def _wal_mode(conn: sqlite3.Connection) -> str:
    """Switch to WAL (a no-op once the file is WAL) and return the journal mode.

    Changing the journal mode needs an exclusive lock, and SQLite reports "database is locked"
    at once, without its busy handler, while another process creates or switches the same new
    file; so the switch is retried until :data:`WAIT_SECONDS` have passed.
    """
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        if mode.lower() == "wal":
            return mode
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _sqlite_tables(path: Path) -> set[str]:
    """The table names of an existing SQLite file, read without changing a byte of it."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return {str(r[0]) for r in rows}
    finally:
        conn.close()


def _not_a_register(where: RegisterURL, tables: set[str]) -> ConfigError | None:
    """Why a database with ``tables`` is not a synthreview register (``None`` when it is)."""
    missing = sorted({"decisions", "schema_version"} - tables)
    if not missing:
        return None
    return ConfigError(
        f"{where.shown} is not a synthreview register (it has no {' or '.join(missing)} table); "
        "nothing was read or changed"
    )


def _connect(where: RegisterURL, *, create: bool = True, read_only: bool = False) -> Connection:
    if where.dialect == "sqlite":
        path = Path(where.target)
        if (read_only or not create) and not path.is_file():
            raise NoRegister(f"no register at {where.shown} yet: register a review first")
        if read_only:
            # mode=ro: SQLite itself refuses every write, so a reader never creates tables,
            # switches the journal mode or leaves a byte of another application's file changed
            try:
                conn = sqlite3.connect(
                    f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=WAIT_SECONDS,
                    isolation_level=None,
                )  # fmt: skip
                conn.execute(f"PRAGMA busy_timeout = {WAIT_SECONDS * 1000}")
            except (OSError, sqlite3.Error) as exc:
                raise ConfigError(
                    f"the register {where.shown} could not be opened as an SQLite file: {exc}"
                ) from exc
            return conn
        if path.is_file() and path.stat().st_size > 0:
            # an existing file that is not a register is another application's: never add
            # tables to it or switch its journal mode
            try:
                tables = _sqlite_tables(path)
            except sqlite3.Error as exc:
                raise ConfigError(
                    f"the register {where.shown} could not be opened as an SQLite file: {exc}"
                ) from exc
            refused = _not_a_register(where, tables) if tables else None
            if refused is not None:
                raise refused
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=WAIT_SECONDS, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {WAIT_SECONDS * 1000}")
            mode = _wal_mode(conn)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"the register {where.shown} could not be opened as an SQLite file: {exc}"
            ) from exc
        if str(mode).lower() != "wal":
            conn.close()
            raise ConfigError(
                f"the register {where.shown} could not switch to WAL mode (got {mode!r}); "
                "is it on a network file system?"
            )
        return conn
    try:
        if read_only:
            # every transaction of this session read only: the server refuses a write
            return psycopg.connect(
                where.target, autocommit=True, connect_timeout=WAIT_SECONDS,
                options="-c default_transaction_read_only=on",
            )  # fmt: skip
        return psycopg.connect(where.target, autocommit=True, connect_timeout=WAIT_SECONDS)
    except psycopg.Error as exc:
        raise ConfigError(
            f"the register {where.shown} refused the connection: "
            f"{redact_secrets(str(exc).strip(), where.target)}"
        ) from exc


@contextmanager
def open_register(
    url: str | None = None, *, create: bool = True, read_only: bool = False
) -> Iterator[Register]:
    """Open (and create or migrate) the register at ``url`` (default :func:`default_register`).

    With ``create=False`` a missing SQLite file is an error instead of a new register. With
    ``read_only=True`` (every reader: the History page, ``synthreview history``) the register
    is opened read only (SQLite ``mode=ro``; a PostgreSQL session whose transactions are read
    only), nothing is created or migrated, and a database that is not a synthreview register is
    refused with a message.

    Raises
    ------
    ConfigError
        The register cannot be opened, created, migrated or read: a locked or corrupt SQLite
        file, a PostgreSQL server that refuses the connection, a newer schema. Nothing is
        written then.
    """
    where = parse_register_url(url if url is not None else default_register())
    conn = _connect(where, create=create, read_only=read_only)
    try:
        register = Register(where, conn)
        try:
            if read_only:
                register.check_readable()
            else:
                register.migrate()
            yield register
        except (sqlite3.Error, psycopg.Error) as exc:
            raise ConfigError(
                f"the register {where.shown} failed: "
                f"{redact_secrets(str(exc).strip(), where.target)}"
            ) from exc
    finally:
        conn.close()


def append_records(url: str | None, records: Sequence[Record]) -> AppendResult:
    """Open the register at ``url``, append ``records`` in one transaction, close it."""
    with open_register(url) as register:
        return register.append(records)


def history(
    url: str | None,
    *,
    candidate: str | None = None,
    inputs_sha256: str | None = None,
) -> list[Record]:
    """The register's records (see :meth:`Register.history`), opened read only."""
    with open_register(url, read_only=True) as register:
        return register.history(candidate=candidate, inputs_sha256=inputs_sha256)


def ledger(
    url: str | None, *, sha256: str | None = None, source: str | None = None
) -> list[Record]:
    """Every record reviewed from one source: a real (training) input of sha256 ``sha256``, or
    a release context whose ``source`` id is ``source``; in the order recorded, read only.

    A register that does not exist yet has no releases (an empty list): the first review of a
    source may be recorded into a new register.
    """
    if sha256 is None and source is None:
        raise ConfigError("the ledger needs --real FILE or --source SHA256_OR_ID; got neither")
    digest = sha256 if sha256 is not None else source
    by_digest = digest is not None and re.fullmatch(r"[0-9a-f]{64}", digest) is not None
    try:
        with open_register(url, read_only=True) as register:
            records = register.history(inputs_sha256=digest) if by_digest else []
            if source is not None:
                records += [r for r in register.history() if r.source_id == source]
    except NoRegister:
        return []
    chosen = {
        r.seq: r
        for r in records
        if r.source_id == source or any(i.role == "real" and i.sha256 == digest for i in r.inputs)
    }
    return [chosen[seq] for seq in sorted(chosen)]


def prior_releases(records: Sequence[Record]) -> tuple[PriorRelease, ...]:
    """The ledger's records in the words :func:`synthreview.judgement.ledger.cap_decisions`
    reads."""
    return tuple(
        PriorRelease(
            seq=r.seq,
            candidate=r.candidate,
            recorded_at=r.recorded_at,
            outcome=r.outcome,
            access=r.access,
            claimed_epsilon=r.claimed_epsilon,
        )
        for r in records
    )


def check_chain(url: str | None) -> ChainCheck:
    """Check the hash chain of the register at ``url`` (see :meth:`Register.check_chain`),
    opened read only."""
    with open_register(url, read_only=True) as register:
        return register.check_chain()


def rule_changes(earlier: Record, later: Record) -> tuple[RuleChange, ...]:
    """Rules whose verdict differs from ``earlier`` to ``later`` (a rule one lacks: None)."""
    if earlier.candidate != later.candidate:
        raise ConfigError(
            "rule_changes compares two records of one candidate; got "
            f"{earlier.candidate!r} and {later.candidate!r} instead"
        )
    return tuple(
        RuleChange(rule, earlier.rules.get(rule), later.rules.get(rule))
        for rule in sorted(set(earlier.rules) | set(later.rules))
        if earlier.rules.get(rule) != later.rules.get(rule)
    )


def history_frame(records: Sequence[Record]) -> pd.DataFrame:
    """One row per record, newest first, with the columns a reader of the history needs."""
    rows = [
        {
            "#": r.seq,
            "time": r.generated_at,
            "candidate": r.candidate,
            "decision": r.outcome,
            "verdict": r.verdict,
            "rule": r.rule,
            "reason": r.reason,
            "signed off by": r.reviewer,
            "meeting decision": r.signed_decision,
            "policy": r.policy_name,
            "policy sha256": (r.policy_sha256 or "")[:12],
            "signature": f"key {r.keyid[:16]}" if r.keyid else "unverified",
            "follows #": r.previous,
            "access": r.access,
            "waivers": waivers_text(r.waivers),
            "review id": r.review_id[:12],
            "evidence at": r.location,
        }
        for r in sorted(records, key=lambda r: -r.seq)
    ]
    return pd.DataFrame(rows, columns=_HISTORY_COLUMNS)


_HISTORY_COLUMNS = (
    "#",
    "time",
    "candidate",
    "decision",
    "verdict",
    "rule",
    "reason",
    "signed off by",
    "meeting decision",
    "policy",
    "policy sha256",
    "signature",
    "follows #",
    "access",
    "waivers",
    "review id",
    "evidence at",
)


def waivers_text(waivers: str | None) -> str | None:
    """A record's waivers in words: rule, status, justification, requester, approver, times."""
    if not waivers:
        return None
    return "; ".join(
        f"{w.get('rule')} {w.get('status')} ({w.get('reason')}; requested by key "
        f"{str(w.get('requester'))[:16]} at {w.get('requested_at')}"
        + (
            f", approved by key {str(w.get('approver'))[:16]} at {w.get('approved_at')})"
            if w.get("approver")
            else ", not approved)"
        )
        for w in json.loads(waivers)
    )


def changes_frame(records: Sequence[Record], *, candidate: str | None = None) -> pd.DataFrame:
    """Every rule verdict that changed from a record to the next of its candidate.

    Columns ``candidate``, ``from #``, ``to #``, ``rule``, ``before``, ``after``, newest first;
    only ``candidate``'s records when given. A record whose earlier record is not among
    ``records`` is skipped.
    """
    by_seq = {r.seq: r for r in records if candidate is None or r.candidate == candidate}
    rows = [
        {
            "candidate": r.candidate,
            "from #": r.previous,
            "to #": r.seq,
            "rule": change.rule,
            "before": change.before,
            "after": change.after,
        }
        for r in sorted(by_seq.values(), key=lambda r: -r.seq)
        if r.previous in by_seq
        for change in rule_changes(by_seq[r.previous], r)
    ]
    return pd.DataFrame(rows, columns=["candidate", "from #", "to #", "rule", "before", "after"])
