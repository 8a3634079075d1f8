"""What a browser cannot make the server do (issue #35, items 1 and 2; docs/security.md).

- a generator typed in a browser is never imported: the dashboard offers the installed
  generators (entry points of the ``synthreview.generators`` group and the built-ins), and free
  ``module:function`` names only when the operator opted in;
- the register is the server's setting: no page takes a path or URL, readers open it read only
  and leave another application's SQLite file byte-identical, writers refuse it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from pathlib import Path

import pytest

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.generators.builtin import copula
from synthreview.generators.plugin import installed_generators, load_generator
from synthreview.record import server
from synthreview.record.session import ReviewSession
from synthreview.release.register import (
    Record,
    append_records,
    check_chain,
    history,
    open_register,
)
from synthreview.serving import server_settings
from tests.page_helpers import run_page_without_data
from tests.test_register import postgres_db, postgres_url  # noqa: F401 (fixtures)

MARKER_MODULE = "synthreview_hostile_marker"


@pytest.fixture
def hostile_module(tmp_path, monkeypatch) -> Path:
    """A module on sys.path that leaves a file behind when it is imported."""
    marker = tmp_path / "imported"
    (tmp_path / f"{MARKER_MODULE}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\n"
        "def fit(train, n, seed):\n    return train.head(n)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, MARKER_MODULE, raising=False)
    return marker


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ("SYNTHREVIEW_REGISTER", "SYNTHREVIEW_ALLOW_GENERATOR_PATHS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SYNTHREVIEW_CONFIG", str(tmp_path / "no-such-settings.toml"))


# --- generators: installed, not typed -----------------------------------------------------------
def test_a_typed_module_is_never_imported_without_the_operators_opt_in(hostile_module, clean_env):
    for spec in (f"{MARKER_MODULE}:fit", "builtins:print", "subprocess:run", "this:x"):
        with pytest.raises(ConfigError, match="installed on this server"):
            server.allowed_generator(spec)
        with pytest.raises(ConfigError, match="installed on this server"):
            load_generator(spec, allow_paths=False)
    assert not hostile_module.exists()  # nothing was imported
    # built-ins by name, or by their own module:function
    assert load_generator("copula", allow_paths=False) is copula
    assert load_generator("synthreview.generators.builtin:copula", allow_paths=False) is copula
    server.allowed_generator("memorise")
    server.allowed_generator(None)


def test_the_operators_opt_in_allows_free_names(hostile_module, clean_env, monkeypatch):
    monkeypatch.setenv("SYNTHREVIEW_ALLOW_GENERATOR_PATHS", "1")
    server.allowed_generator(f"{MARKER_MODULE}:fit")
    assert hostile_module.exists()


def test_installed_generators_come_from_entry_points(tmp_path, monkeypatch):
    dist = tmp_path / "acme_gen-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-gen\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[synthreview.generators]\nacme = synthreview.generators.builtin:copula\n"
        "copula = acme.evil:replacement\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = installed_generators()
    assert found["acme"] == "synthreview.generators.builtin:copula"
    assert found["copula"] == "synthreview.generators.builtin:copula"  # a built-in is kept
    assert load_generator("acme", allow_paths=False) is copula


# --- server settings ------------------------------------------------------------------------------
def test_settings_file_environment_and_typos(tmp_path):
    path = tmp_path / "synthreview.toml"
    path.write_text('register = "sqlite:///srv/register.sqlite"\nallow_generator_paths = true\n')
    read = server_settings({}, path)
    assert read.register == "sqlite:///srv/register.sqlite" and read.allow_generator_paths
    env = {"SYNTHREVIEW_REGISTER": "/other.sqlite", "SYNTHREVIEW_ALLOW_GENERATOR_PATHS": "0"}
    over = server_settings(env, path)
    assert over.register == "/other.sqlite" and not over.allow_generator_paths
    assert server_settings({}, tmp_path / "missing.toml").allow_generator_paths is False
    path.write_text('registr = "x"\n')
    with pytest.raises(ConfigError, match="unknown keys \\['registr'\\]"):
        server_settings({}, path)
    path.write_text("allow_generator_paths = 'maybe'\n")
    with pytest.raises(ConfigError, match="must be true or false; got 'maybe'"):
        server_settings({}, path)
    with pytest.raises(ConfigError, match="SYNTHREVIEW_ALLOW_GENERATOR_PATHS must be true"):
        server_settings({"SYNTHREVIEW_ALLOW_GENERATOR_PATHS": "perhaps"}, tmp_path / "none")


def test_history_page_shows_the_servers_register_and_takes_no_path(tmp_path, monkeypatch):
    db = tmp_path / "reg.sqlite"
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", str(db))
    at = run_page_without_data("pages/history.py")
    assert not at.exception
    assert any(t.value == f"Register: {db} (read only)" for t in at.text)
    assert not [t for t in at.text_input if "egister" in t.label or "register" in (t.key or "")]
    assert not db.exists()  # a reader never creates a register


# --- the register: read only, foreign files refused -----------------------------------------------
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def foreign(tmp_path) -> Path:
    """Another application's SQLite file (rollback journal, its own tables)."""
    path = tmp_path / "app.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    return path


def _record(candidate: str = "cand") -> Record:
    return Record(
        seq=0, review_id="r1", candidate=candidate, outcome="release", verdict="pass",
        rule=None, reason="all rules pass", reviewer=None, signed_decision=None,
        signed_reason=None, policy_name="default", policy_sha256="0" * 64, inputs=(),
        rules={}, generated_at=None, recorded_at="2026-11-28T00:00:00+00:00", keyid=None,
        previous=None,
    )  # fmt: skip


def test_readers_and_writers_leave_a_foreign_sqlite_file_byte_identical(foreign, tmp_path):
    before = _digest(foreign)
    siblings = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ConfigError, match="is not a synthreview register"):
        history(str(foreign))
    with pytest.raises(ConfigError, match="is not a synthreview register"):
        append_records(str(foreign), [_record()])
    with pytest.raises(ConfigError, match="is not a synthreview register"):
        check_chain(str(foreign))
    assert main(["history", "--db", str(foreign)]) == 2
    assert _digest(foreign) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == siblings  # no -wal, -shm, journal


def test_history_reads_a_register_without_changing_it(tmp_path):
    db = tmp_path / "reg.sqlite"
    append_records(str(db), [_record("a"), _record("b")])
    before = _digest(db)
    assert [r.candidate for r in history(str(db))] == ["a", "b"]
    assert main(["history", "--db", str(db)]) == 0
    assert _digest(db) == before
    with pytest.raises(ConfigError, match="no register at"):
        history(str(tmp_path / "absent.sqlite"))
    assert not (tmp_path / "absent.sqlite").exists()


def test_a_read_only_register_refuses_writes(tmp_path):
    db = tmp_path / "reg.sqlite"
    append_records(str(db), [_record("a")])
    with pytest.raises(ConfigError, match="readonly database"):
        with open_register(str(db), read_only=True) as register:
            register.append([_record("b")])
    assert [r.candidate for r in history(str(db))] == ["a"]


def test_postgresql_readers_never_create_a_schema(postgres_db):  # noqa: F811 (fixture)
    import psycopg

    with pytest.raises(ConfigError, match="is not a synthreview register"):
        history(postgres_db)
    with psycopg.connect(postgres_db) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()[0]
    assert tables == 0
    append_records(postgres_db, [_record("a")])
    assert [r.candidate for r in history(postgres_db)] == ["a"]
    with pytest.raises(ConfigError, match="read-only transaction"):
        with open_register(postgres_db, read_only=True) as register:
            register.append([_record("b")])


def test_the_data_page_opens_only_review_folders_the_operator_offers(tmp_path, monkeypatch):
    reviews = tmp_path / "reviews"
    (reviews / "march").mkdir(parents=True)
    (reviews / "march" / "COMPLETE.json").write_text("{}")
    (reviews / "unfinished").mkdir()  # no completion marker: not offered
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "COMPLETE.json").write_text("{}")
    (reviews / "link").symlink_to(outside)  # a link out of the folder: not offered
    monkeypatch.setenv("SYNTHREVIEW_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("SYNTHREVIEW_REVIEWS", raising=False)
    assert server.stored_reviews() == []  # nothing offered until the operator sets it
    monkeypatch.setenv("SYNTHREVIEW_REVIEWS", str(reviews))
    assert server.stored_reviews() == ["march"]
    for name in (str(outside), "../elsewhere", "link", "unfinished", "/etc"):
        with pytest.raises(ConfigError, match="one of the folders this server offers"):
            ReviewSession({}).open_stored_review(name)
    path = tmp_path / "synthreview.toml"
    path.write_text(f'reviews = "{reviews}"\n')
    assert server_settings({}, path).reviews == str(reviews)
    path.write_text("reviews = 3\n")
    with pytest.raises(ConfigError, match="reviews must be a non-empty URL or path; got 3"):
        server_settings({}, path)
