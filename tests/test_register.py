"""The decision register: SQLite and a real PostgreSQL server, concurrent appends, history."""

from __future__ import annotations

import glob
import json
import multiprocessing
import os
import pwd
import shutil
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.release import register as register_module
from synthreview.release.folder import write_review_folder
from synthreview.release.register import (
    SCHEMA_VERSION,
    RuleChange,
    append_records,
    history,
    open_register,
    parse_register_url,
    records_from_statement,
    rule_changes,
)
from synthreview.release.signing import (
    generate_keys,
    load_private_key,
    release_statement,
    sign_files,
    statement_id,
)
from tests.e2e_utils import free_port

PROCESSES, PER_PROCESS = 4, 50
CANDIDATES = ("ctgan", "copula", "tvae")


def review_files(number: int, *, candidates=CANDIDATES, flip=()) -> dict[str, bytes]:
    """A hand-made review folder: report.json with decisions and rule verdicts, a manifest.

    ``number`` makes each review distinct; rules named in ``flip`` fail instead of passing.
    """
    rules = {"k_marginal", "mia_auc", "ip_alpha"}
    report = {
        "inputs": [
            {"name": "train", "role": "real", "sha256": "a" * 64},
            {"name": "holdout", "role": "holdout", "sha256": "b" * 64},
            *(
                {"name": c, "role": "synthetic", "sha256": f"{i:064x}"}
                for i, c in enumerate(candidates)
            ),
        ],
        "decisions": {
            c: {
                "candidate": c,
                "outcome": "do_not_release" if flip else "release",
                "verdict": "fail" if flip else "pass",
                "rule": sorted(flip)[0] if flip else None,
                "reason": f"review {number}: "
                + ("fails " + ", ".join(sorted(flip)) if flip else "every rule passes"),
            }
            for c in candidates
        },
        "verdicts": {
            c: {
                "rules": {
                    r: {"verdict": "fail" if r in flip else "pass", "value": 0.1, "required": True}
                    for r in rules
                }
            }
            for c in candidates
        },
        "policy": {"name": "synthreview default", "sha256": "c" * 64, "source": "default.toml"},
        "options": {"seed": number},
        "generated_at": f"2026-11-25T00:00:{number % 60:02d}+00:00",
        "review_number": number,
    }
    manifest = {"versions": {"synthreview": "test"}}
    return {
        "report.json": json.dumps(report, sort_keys=True).encode(),
        "manifest.json": json.dumps(manifest).encode(),
    }


def records_of(number: int, **kwargs):
    statement = release_statement(review_files(number, **kwargs))
    return records_from_statement(statement, review_id=statement_id(statement))


def append_many(url: str, first: int, count: int, gate: str) -> None:
    """One writer process: ``count`` reviews of one candidate, each its own transaction."""
    # every process starts writing at the same moment, once all have started
    Path(gate, f"ready-{first}").touch()
    while not Path(gate, "go").exists():
        time.sleep(0.001)
    for number in range(first, first + count):
        append_records(url, records_of(number)[:1])


def _run_writers(url: str, gate: Path) -> None:
    # forked writers: separate processes, each with its own connection and its own lock
    # attempts, that do not import synthreview again (about 4 s of CPU per process); nothing
    # in this process holds a connection to the register when they fork
    fork = multiprocessing.get_context("fork")
    procs = [
        fork.Process(target=append_many, args=(url, p * PER_PROCESS, PER_PROCESS, str(gate)))
        for p in range(PROCESSES)
    ]
    for proc in procs:
        proc.start()
    deadline = time.time() + 240
    while len(list(gate.glob("ready-*"))) < PROCESSES and time.time() < deadline:
        if any(p.exitcode is not None for p in procs):
            break
        time.sleep(0.01)
    (gate / "go").touch()
    for proc in procs:
        proc.join(timeout=300)
        if proc.exitcode is None:  # hung: stop it, and fail below
            proc.kill()
            proc.join()
    # a writer's traceback, if any, is on this test's captured stderr
    assert [p.exitcode for p in procs] == [0] * PROCESSES


def _check_all_written_once(url: str) -> None:
    records = history(url)
    total = PROCESSES * PER_PROCESS
    assert len(records) == total
    assert len({(r.review_id, r.candidate) for r in records}) == total  # none duplicated
    expected = {statement_id(release_statement(review_files(n))) for n in range(total)}
    assert {r.review_id for r in records} == expected  # none lost
    # appends never interleaved: each record follows the one appended just before it
    seqs = [r.seq for r in records]
    assert seqs == sorted(seqs)
    assert [r.previous for r in records] == [None, *seqs[:-1]]
    # the writers' lock keeps the hash chain whole: each record follows the one before it
    chain = register_module.check_chain(url)
    assert chain.ok and chain.records == total, chain
    # appending the same reviews again adds nothing
    again = append_records(url, records_of(0)[:1])
    assert again.added == () and len(again.already) == 1
    assert len(history(url)) == total


def test_four_processes_append_200_records_to_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'register.sqlite'}"
    _run_writers(url, tmp_path)
    _check_all_written_once(url)
    with sqlite3.connect(tmp_path / "register.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.fixture(scope="module")
def postgres_url():
    """A PostgreSQL server of Debian's ``postgresql`` package, in a temporary folder."""
    if os.environ.get("SYNTHREVIEW_NO_POSTGRES") == "1":
        pytest.skip("SYNTHREVIEW_NO_POSTGRES=1")
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    initdb = found[-1] if found else shutil.which("initdb")
    if initdb is None:
        pytest.fail(
            "PostgreSQL server binaries not found: apt-get install -y postgresql "
            "(or set SYNTHREVIEW_NO_POSTGRES=1 to skip the PostgreSQL register tests)"
        )
    pg_ctl = str(Path(initdb).with_name("pg_ctl"))
    root = Path(tempfile.mkdtemp(prefix="synthreview-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:
        # the server refuses to run as root: run it as the package's postgres user
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", free_port()
    started = False
    try:
        subprocess.run(
            [
                *run_as,
                initdb,
                "-D",
                str(data),
                "-U",
                "synthreview",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [
                *run_as,
                pg_ctl,
                "-D",
                str(data),
                "-l",
                str(root / "log"),
                "-w",
                "-t",
                "60",
                "-o",
                options,
                "start",
            ],
            check=True,
            capture_output=True,
        )
        started = True
        yield f"postgresql://synthreview@127.0.0.1:{port}/postgres"
    finally:
        if started:
            subprocess.run(
                [*run_as, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True
            )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_db(postgres_url):
    """A fresh database on the module's server for one test."""
    import psycopg

    name = f"register_{time.time_ns()}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_url.rsplit("/", 1)[0] + f"/{name}"


def test_four_processes_append_200_records_to_postgresql(postgres_db, tmp_path):
    _run_writers(postgres_db, tmp_path)
    _check_all_written_once(postgres_db)


def test_postgresql_register_history_and_schema_version(postgres_db):
    import psycopg

    append_records(postgres_db, records_of(1))
    append_records(postgres_db, records_of(2, flip={"mia_auc"}))
    later = history(postgres_db, candidate="ctgan")
    assert [r.outcome for r in later] == ["release", "do_not_release"]
    assert rule_changes(later[0], later[1]) == (RuleChange("mia_auc", "pass", "fail"),)
    with psycopg.connect(postgres_db) as conn:
        assert (
            conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        )


def test_postgresql_that_refuses_the_connection_exits_2(tmp_path, capsys):
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/register"
    with pytest.raises(ConfigError, match="refused the connection"):
        append_records(url, records_of(1))
    assert main(["history", "--db", url]) == 2
    assert "refused the connection" in capsys.readouterr().err


def test_sqlite_history_links_reviews_of_a_candidate_and_shows_rule_changes(tmp_path):
    url = str(tmp_path / "reg.sqlite")  # a plain path is an SQLite register
    first = append_records(url, records_of(1))
    assert len(first.added) == len(CANDIDATES)
    append_records(url, records_of(2, candidates=("ctgan",), flip={"k_marginal", "ip_alpha"}))
    records = history(url, candidate="ctgan")
    assert len(records) == 2
    assert records[1].previous == records[0].seq
    assert records[1].reason.startswith("review 2: fails")
    assert rule_changes(records[0], records[1]) == (
        RuleChange("ip_alpha", "pass", "fail"),
        RuleChange("k_marginal", "pass", "fail"),
    )
    assert history(url, inputs_sha256="a" * 64) == history(url)
    assert history(url, inputs_sha256="d" * 64) == []
    with pytest.raises(ConfigError, match="64 lowercase hex"):
        history(url, inputs_sha256="A%")
    with pytest.raises(ConfigError, match="one candidate"):
        rule_changes(records[0], history(url, candidate="tvae")[0])


def _signed_folder(tmp_path, number, key, **kwargs):
    folder = tmp_path / f"review{number}"
    write_review_folder(folder, sign_files(review_files(number, **kwargs), key))
    return folder


def test_cli_register_verifies_then_records_and_history_names_changed_rules(tmp_path, capsys):
    keys = generate_keys(tmp_path / "keys")
    key = load_private_key(keys.private.read_bytes())
    db = f"sqlite:///{tmp_path / 'team' / 'register.sqlite'}"  # folder created on first use
    first = _signed_folder(tmp_path, 1, key)
    second = _signed_folder(tmp_path, 2, key, flip={"mia_auc"})
    pub = str(keys.public)
    assert main(["register", str(first), "--db", db, "--key", pub]) == 0
    assert main(["register", str(second), "--db", db, "--key", pub]) == 0
    out = capsys.readouterr().out
    assert out.count("recorded #") == 2 * len(CANDIDATES)
    assert main(["register", str(first), "--db", db, "--key", pub]) == 0
    assert "already recorded" in capsys.readouterr().out
    assert main(["history", "--db", db, "--candidate", "copula"]) == 0
    out = capsys.readouterr().out
    assert "copula release (pass)" in out and "copula do_not_release (fail)" in out
    assert "mia_auc: pass -> fail" in out
    assert len(history(db)) == 2 * len(CANDIDATES)
    assert {r.keyid for r in history(db)} == {keys.keyid}

    # a changed folder is not recorded (exit 1), a signed folder needs --key (exit 2)
    (second / "report.json").write_bytes(b"{}")
    assert main(["register", str(second), "--db", db, "--key", pub]) == 1
    assert "the register was not updated" in capsys.readouterr().err
    assert main(["register", str(first), "--db", db]) == 2
    other = generate_keys(tmp_path / "other")
    assert main(["register", str(first), "--db", db, "--key", str(other.public)]) == 1
    assert len(history(db)) == 2 * len(CANDIDATES)


def test_unsigned_folder_is_recorded_as_unverified(tmp_path, capsys):
    folder = tmp_path / "plain"
    write_review_folder(folder, review_files(7))
    db = str(tmp_path / "r.sqlite")
    assert main(["register", str(folder), "--db", db]) == 0
    assert "unverified" in capsys.readouterr().out
    assert {r.keyid for r in history(db)} == {None}


def test_locked_or_corrupt_sqlite_register_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(register_module, "WAIT_SECONDS", 1)
    path = tmp_path / "reg.sqlite"
    append_records(str(path), records_of(1))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ConfigError, match="locked"):
            append_records(str(path), records_of(2))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(history(str(path))) == len(CANDIDATES)
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is no database" * 100)
    with pytest.raises(ConfigError, match=r"corrupt\.sqlite"):
        history(str(corrupt))


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "reg.sqlite"
    append_records(str(path), records_of(1))
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION + 1,))
    with pytest.raises(ConfigError, match="schema version"):
        history(str(path))


def test_register_urls():
    assert parse_register_url("sqlite:///rel/r.sqlite").target == "rel/r.sqlite"
    assert parse_register_url("sqlite:////abs/r.sqlite").target == "/abs/r.sqlite"
    shown = parse_register_url("postgresql://me:secret@db.example:5432/reg").shown
    assert "secret" not in shown and "db.example:5432/reg" in shown
    for bad in ("", "mysql://x/y", "sqlite://"):
        with pytest.raises(ConfigError, match="--db"):
            parse_register_url(bad)


def test_records_need_decisions():
    statement = release_statement(
        {"report.json": json.dumps({"inputs": [], "decisions": {}}).encode()}
    )
    with pytest.raises(ConfigError, match="no decisions"):
        records_from_statement(statement, review_id=statement_id(statement))


def test_empty_register_has_no_history(tmp_path):
    with open_register(str(tmp_path / "new.sqlite")) as register:
        assert register.history() == []
        assert register.where.dialect == "sqlite"


def test_history_page_shows_records_and_changed_rules(tmp_path, monkeypatch):
    from page_helpers import run_page_without_data

    db = tmp_path / "register.sqlite"
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", f"sqlite:///{db}")
    missing = run_page_without_data("pages/history.py")
    assert not missing.exception
    assert any("no register at" in i.value for i in missing.info)
    assert not db.exists()  # the page only reads: it never creates a register

    append_records(str(db), records_of(1))
    append_records(str(db), records_of(2, candidates=("ctgan",), flip={"mia_auc"}))
    at = run_page_without_data("pages/history.py")
    assert not at.exception, at.exception
    # the decisions in a static table (cells Markdown-escaped), the changes in a data grid
    table = at.table[0].value.map(lambda cell: str(cell).replace("\\", ""))
    (changes,) = (d.value for d in at.dataframe)
    assert len(table) == len(CANDIDATES) + 1
    assert table.iloc[0]["candidate"] == "ctgan" and table.iloc[0]["decision"] == "do_not_release"
    assert changes[["candidate", "rule", "before", "after"]].values.tolist() == [
        ["ctgan", "mia_auc", "pass", "fail"]
    ]
    at.selectbox(key="history_candidate").select("tvae").run()
    assert not at.dataframe  # no rule changed for tvae: no changes table
    assert at.table[0].value["candidate"].tolist() == ["tvae"]


def test_records_of_a_release_built_in_process_match_its_signed_statement(tmp_path):
    from synthreview.release.register import check_register, records_of_release
    from synthreview.release.signing import load_public_key, read_folder, verify_files

    keys = generate_keys(tmp_path / "keys")
    key = load_private_key(keys.private.read_bytes())
    files = review_files(5)
    folder = tmp_path / "review"
    write_review_folder(folder, sign_files(files, key))
    verified = verify_files(read_folder(folder), load_public_key(keys.public.read_bytes()))
    records = records_of_release(files, key=key)
    assert {r.review_id for r in records} == {verified.review_id}
    assert {r.keyid for r in records} == {keys.keyid}
    again = records_of_release(read_folder(folder), key=key)  # envelope and marker left out
    assert [(r.review_id, r.candidate) for r in again] == [
        (r.review_id, r.candidate) for r in records
    ]
    assert {r.keyid for r in records_of_release(files)} == {None}
    url = f"sqlite:///{tmp_path / 'new' / 'r.sqlite'}"
    assert check_register(url).dialect == "sqlite" and (tmp_path / "new" / "r.sqlite").exists()
    with pytest.raises(ConfigError, match="refused the connection"):
        check_register(f"postgresql://nobody@127.0.0.1:{free_port()}/register")


# --- the hash chain (issue 37) -------------------------------------------------------------

_FORGE_COLUMNS = (
    "candidate, outcome, verdict, rule, reason, reviewer, signed_decision, signed_reason, "
    "policy_name, policy_sha256, inputs, rules, generated_at, recorded_at, keyid, previous"
)
# each way of rewriting history behind the tool's back, and the record the check must name
# (the register holds 2 reviews of 3 candidates and a third of ctgan: records #1..#7; #4 is the
# latest copula record, so deleting it breaks no ``previous`` reference)
TAMPERING = {
    "changed": ("UPDATE decisions SET outcome = 'release', reason = 'fine' WHERE seq = 5", 5),
    "deleted": ("DELETE FROM decisions WHERE seq = 4", 5),
    # a forged record linked to the last one, with a hash copied from a genuine record
    "inserted": (
        f"INSERT INTO decisions (review_id, {_FORGE_COLUMNS}, prev_hash, row_hash) "
        f"SELECT 'forged', {_FORGE_COLUMNS}, "
        "(SELECT row_hash FROM decisions WHERE seq = 7), row_hash FROM decisions WHERE seq = 2",
        8,
    ),
}


def _filled(url: str) -> None:
    append_records(url, records_of(1))
    append_records(url, records_of(2, flip={"mia_auc"}))
    append_records(url, records_of(3, candidates=("ctgan",)))


def _check_catches(url: str, execute, how: str, capsys) -> None:
    from synthreview.release.register import check_chain

    _filled(url)
    intact = check_chain(url)
    assert intact.ok and intact.records == 7 and intact.broken_at is None
    assert main(["history", "--db", url, "--check"]) == 0
    assert "chain intact: 7 records" in capsys.readouterr().out
    sql, named = TAMPERING[how]
    execute(sql)
    broken = check_chain(url)
    assert not broken.ok and broken.broken_at == named, broken
    assert main(["history", "--db", url, "--check"]) == 1
    assert f"record #{named} " in capsys.readouterr().err


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_chain_check_names_the_first_tampered_record_in_sqlite(tmp_path, how, capsys):
    path = tmp_path / "reg.sqlite"

    def execute(sql: str) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute(sql)

    _check_catches(f"sqlite:///{path}", execute, how, capsys)


def test_chain_check_names_the_first_tampered_record_in_postgresql(postgres_url, capsys):
    import psycopg

    for how in sorted(TAMPERING):
        name = f"chain_{how}_{time.time_ns()}"
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = postgres_url.rsplit("/", 1)[0] + f"/{name}"

        def execute(sql: str, url=url) -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql)

        _check_catches(url, execute, how, capsys)


def test_chain_rewritten_to_its_end_shows_only_as_another_head(tmp_path):
    """The limit of a chain kept inside its own database: a rewrite that recomputes every hash
    from the changed record on passes the check, and only the head hash kept elsewhere differs."""
    from synthreview.release.register import _SELECT, check_chain, row_digest

    path = tmp_path / "reg.sqlite"
    _filled(str(path))
    before = check_chain(str(path)).head
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE decisions SET reason = 'rewritten' WHERE seq = 7")
        row = conn.execute(f"SELECT {_SELECT}, prev_hash FROM decisions WHERE seq = 7").fetchone()
        conn.execute(
            "UPDATE decisions SET row_hash = ? WHERE seq = 7", (row_digest(row[:-1], row[-1]),)
        )
    after = check_chain(str(path))
    assert after.ok and after.head != before


def test_register_made_before_the_chain_is_chained_once_when_next_written(tmp_path, capsys):
    from synthreview.release.register import (
        _COLUMNS,
        MIGRATIONS,
        _values,
        check_chain,
    )

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # a schema version 1 register with 3 records
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[1]["sqlite"]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (1)")
        v1 = _COLUMNS[: _COLUMNS.index("previous") + 1]  # the columns of schema version 1
        for record in records_of(1):
            conn.execute(
                f"INSERT INTO decisions ({', '.join(v1)}) VALUES ({', '.join('?' * len(v1))})",
                _values(record, None)[: len(v1)],
            )
    # reading never migrates: the old register is listed as it is, and has no chain yet
    assert [r.access for r in history(str(path))] == [None] * 3
    unchained = check_chain(str(path))
    assert not unchained.ok and unchained.version == 1 and "schema version 1" in unchained.problem
    assert main(["history", "--db", str(path), "--check"]) == 1
    assert "made before the hash chain" in capsys.readouterr().err
    append_records(str(path), records_of(2))  # the write that migrates
    check = check_chain(str(path))
    assert check.ok and check.records == 6 and check.version == SCHEMA_VERSION
    (migration,) = check.migrations
    assert (migration.from_version, migration.records) == (1, 3)
    append_records(str(path), records_of(3))  # chained once: no second migration
    assert len(check_chain(str(path)).migrations) == 1
    assert main(["history", "--db", str(path), "--check"]) == 0
    assert "chained on migration from schema version 1" in capsys.readouterr().out
    with sqlite3.connect(path) as conn:  # a record from before the migration is covered too
        conn.execute("UPDATE decisions SET reason = 'other' WHERE seq = 2")
    assert check_chain(str(path)).broken_at == 2


def test_history_page_checks_the_chain_on_request(tmp_path, monkeypatch):
    from page_helpers import run_page_without_data

    db = tmp_path / "register.sqlite"
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", f"sqlite:///{db}")
    _filled(str(db))
    at = run_page_without_data("pages/history.py")
    assert not at.success  # checked only on request
    at.button(key="history_check_chain").click().run()
    assert not at.exception, at.exception
    assert [s.value for s in at.success] == ["Chain intact: 7 records, each matching its hash."]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE decisions SET reason = 'edited' WHERE seq = 3")
    at.button(key="history_check_chain").click().run()
    assert [e.value for e in at.error] == ["Chain NOT intact at record #3."]
    assert any("record #3 does not match its hash" in t.value for t in at.text)


def test_postgresql_register_made_before_the_chain_is_migrated_on_its_next_write(postgres_db):
    import psycopg

    from synthreview.release.register import _COLUMNS, MIGRATIONS, _values, check_chain

    v1 = _COLUMNS[: _COLUMNS.index("previous") + 1]
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[1]["postgresql"]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (1)")
        for record in records_of(1):
            conn.execute(
                f"INSERT INTO decisions ({', '.join(v1)}) VALUES ({', '.join(['%s'] * len(v1))})",
                _values(record, None)[: len(v1)],
            )
    assert len(history(postgres_db)) == 3 and not check_chain(postgres_db).ok  # read as it is
    append_records(postgres_db, records_of(2))
    check = check_chain(postgres_db)
    assert check.ok and check.records == 6
    assert [(m.from_version, m.records) for m in check.migrations] == [(1, 3)]
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute("UPDATE decisions SET reason = 'edited' WHERE seq = 1")
    assert check_chain(postgres_db).broken_at == 1
