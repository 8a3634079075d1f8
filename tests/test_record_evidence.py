"""The register keeps each decision's evidence folder and statement digest; History reopens it.

Schema 4 of the register (SQLite and PostgreSQL): an older register stays readable as it is and
is migrated on the next append with its rows' hashes unchanged; ``open_evidence`` opens the
folder a row names only while it holds that record (and, for a meeting's row, its
countersignature).
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace

import pytest

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.record.countersign import countersign_folder, meeting_signoff
from synthreview.record.evidence import EvidenceNotFound, open_evidence, record_statement_sha256
from synthreview.record.store import open_review, write_record
from synthreview.record.trust import TRUST_ENV, trusted_keys
from synthreview.release.register import (
    SCHEMA_VERSION,
    append_records,
    check_chain,
    history,
    records_from_statement,
)
from synthreview.release.signing import generate_keys, load_private_key, release_statement
from tests.test_register import postgres_db as postgres_db  # the fixture
from tests.test_register import postgres_url, records_of, review_files  # noqa: F401

NEW_COLUMNS = ("location", "statement_sha256")


def _as_version_3(execute) -> None:
    """Take a schema-4 register back to schema 3: what an earlier synthreview wrote."""
    for column in NEW_COLUMNS:
        execute(f"ALTER TABLE decisions DROP COLUMN {column}")
    execute("DELETE FROM schema_version WHERE version = 4")


def _check_migration(url: str, execute, tmp_path) -> None:
    # rows as schema 3 wrote them: no evidence columns
    append_records(url, [replace(r, statement_sha256=None) for r in records_of(1)])
    _as_version_3(execute)
    before = history(url)
    assert before and all(r.location is None for r in before)  # read as it is, not migrated
    head = check_chain(url)
    assert head.ok and head.version == 3
    statement = release_statement(review_files(2))
    rows = records_from_statement(statement, review_id="e" * 64, location=tmp_path)
    append_records(url, rows)  # the next append migrates
    after = history(url)
    assert [r.seq for r in after[: len(before)]] == [r.seq for r in before]
    assert after[: len(before)] == before  # earlier rows unchanged, no location
    assert {(r.location, r.statement_sha256) for r in after[len(before) :]} == {
        (str(tmp_path.resolve()), "e" * 64)
    }
    check = check_chain(url)
    assert check.ok and check.version == SCHEMA_VERSION == 4, check
    assert check.migrations == ()  # the chain was already there: nothing re-chained


def test_sqlite_register_gains_the_evidence_columns_keeping_old_rows(tmp_path):
    path = tmp_path / "register.sqlite"

    def execute(sql: str) -> None:
        with sqlite3.connect(path) as conn:
            conn.execute(sql)

    _check_migration(str(path), execute, tmp_path)


def test_postgresql_register_gains_the_evidence_columns_keeping_old_rows(postgres_db, tmp_path):
    import psycopg

    def execute(sql: str) -> None:
        with psycopg.connect(postgres_db, autocommit=True) as conn:
            conn.execute(sql)

    _check_migration(postgres_db, execute, tmp_path)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    root = tmp_path_factory.mktemp("evidence-keys")
    tool, meeting = generate_keys(root / "tool"), generate_keys(root / "meeting")
    trust = root / "trust"
    trust.mkdir()
    shutil.copy(tool.public, trust / "tool.pub")
    shutil.copy(meeting.public, trust / "meeting.pub")
    return tool, meeting, trust


def _signed(demo_record_folder, keys, folder):
    record, _ = demo_record_folder
    tool, _, _ = keys
    return write_record(record, folder, key=load_private_key(tool.private.read_bytes()))


def test_register_then_history_opens_the_folder_while_it_holds_the_record(
    demo_record_folder, keys, tmp_path, capsys
):
    tool, _, trust = keys
    folder = tmp_path / "review"
    written = _signed(demo_record_folder, keys, folder)
    db = str(tmp_path / "register.sqlite")
    assert main(["register", str(folder), "--db", db, "--key", str(tool.public)]) == 0
    rows = history(db)
    assert {r.location for r in rows} == {str(folder.resolve())}
    assert {r.statement_sha256 for r in rows} == {record_statement_sha256(written)}
    assert main(["history", "--db", db]) == 0
    assert f"evidence: {folder.resolve()}" in capsys.readouterr().out

    opened = open_evidence(rows[0], key=tool.public, trust=trust)
    assert opened.verified.ok and opened.equivalent(written)
    assert opened.location == str(folder.resolve())

    # another review written where the first was: not this row's evidence
    shutil.rmtree(folder)
    record, _ = demo_record_folder
    write_record(replace(record, generated_at="2027-01-01T00:00:00+00:00"), folder)
    with pytest.raises(EvidenceNotFound, match=r"evidence not found at .*holds another review"):
        open_evidence(rows[0], key=tool.public, trust=trust)
    shutil.rmtree(folder)
    with pytest.raises(EvidenceNotFound, match=r"evidence not found at .*no folder there"):
        open_evidence(rows[0], key=tool.public, trust=trust)
    (folder).mkdir()
    (folder / "notes.txt").write_text("not a review")
    with pytest.raises(EvidenceNotFound, match=r"evidence not found at .*not a synthreview"):
        open_evidence(rows[0], key=tool.public, trust=trust)


def test_a_row_without_a_folder_names_none(demo_record_folder):
    statement = release_statement(review_files(3))
    (row, *_) = records_from_statement(statement, review_id="f" * 64)
    assert row.location is None
    with pytest.raises(EvidenceNotFound, match="names no review folder"):
        open_evidence(row)


def test_an_unsigned_folder_is_found_by_its_files_statement(demo_record_folder, tmp_path):
    record, _ = demo_record_folder
    folder = tmp_path / "unsigned"
    write_record(record, folder)
    db = str(tmp_path / "register.sqlite")
    assert main(["register", str(folder), "--db", db]) == 0
    row = history(db)[0]
    assert row.statement_sha256 == row.review_id
    opened = open_evidence(row)
    assert not opened.verified.ok  # unsigned: opens, NOT VERIFIED, as any unsigned record
    assert record_statement_sha256(opened) == row.review_id


def test_the_meeting_row_needs_its_countersignature(demo_record_folder, keys, tmp_path):
    tool, meeting, trust = keys
    folder = tmp_path / "review"
    _signed(demo_record_folder, keys, folder)
    record = open_review(folder, key=tool.public, trust=trust)
    name = record.candidates[0]
    signoff = meeting_signoff(
        record, name, decision=record.decisions[name].outcome, reviewers=[("Ann Lee", "chair")]
    )
    db = str(tmp_path / "register.sqlite")
    done = countersign_folder(
        record,
        [signoff],
        load_private_key(meeting.private.read_bytes()),
        register=db,
        trusted=trusted_keys(tool.public, trust=trust),
    )
    (row,) = done.registered.added
    assert row.location == str(folder.resolve()) and row.keyid == done.keyid
    assert row.statement_sha256 == record_statement_sha256(record) != row.review_id
    # a second session holding the record as it was opened never overwrites that file
    with pytest.raises(ConfigError, match=r"already holds countersign\.1"):
        countersign_folder(
            record,
            [signoff],
            load_private_key(meeting.private.read_bytes()),
            register=db,
            trusted=trusted_keys(tool.public, trust=trust),
        )
    assert len(history(db)) == 1
    reopened = open_evidence(row, key=tool.public, trust=trust)
    assert reopened.verified.ok and len(reopened.countersignatures) == 1
    # the countersignature gone: the record is there, this row's evidence is not
    (folder / done.file).unlink()
    with pytest.raises(EvidenceNotFound, match="not the countersignature of record"):
        open_evidence(row, key=tool.public, trust=trust)


def test_countersign_cli_registers_the_folder(demo_record_folder, keys, tmp_path, monkeypatch):
    tool, meeting, trust = keys
    folder = tmp_path / "review"
    _signed(demo_record_folder, keys, folder)
    record = open_review(folder, key=tool.public)
    name = record.candidates[0]
    db = str(tmp_path / "register.sqlite")
    monkeypatch.setenv(TRUST_ENV, str(trust))
    decision = f"{name}={record.decisions[name].outcome}"
    command = ["countersign", str(folder), "--key", str(meeting.private),
               "--record-key", str(tool.public), "--reviewer", "Ann Lee:chair",
               "--decision", decision, "--register", db]  # fmt: skip
    assert main(command) == 0
    (row,) = history(db)
    assert row.location == str(folder.resolve())
    assert open_evidence(row, key=tool.public).verified.ok
