"""AppTest of signing on the Audit page and of verifying on the History page (issue 24).

The Audit page runs on the small fixed report of ``test_page_audit`` (the page only reads
results), so the signing control, the signed downloads and the register button take seconds.
The History page's verify panel gets ZIPs built from a hand-made review folder.
"""

from __future__ import annotations

import io
import json
import zipfile
from unittest.mock import patch

import pytest

from synthreview.errors import ConfigError
from synthreview.record.live import LiveReview
from synthreview.record.session import ReviewSession
from synthreview.record.signoff_state import SIGNING_PASSPHRASE_KEY, SIGNING_UPLOAD_KEY
from synthreview.record.store import read_review_zip
from synthreview.record.uploads import verify_review_zip
from synthreview.release.bundle import zip_bytes
from synthreview.release.folder import write_review_folder
from synthreview.release.register import append_records, history, records_of_release
from synthreview.release.signing import (
    ENVELOPE_NAME,
    generate_keys,
    load_private_key,
    load_public_key,
    sign_files,
    verify_files,
)
from tests.page_helpers import run_page_without_data
from tests.test_page_audit import fake_report, only_required, open_page, small_review
from tests.test_register import records_of, review_files

ALL_DOWNLOADS = {
    "audit_download_csv", "audit_download_parquet", "audit_download_audit",
    "audit_download_removed", "audit_download_report_json", "audit_download_report_html",
    "audit_download_manifest", "audit_download_zip",
}  # fmt: skip


@pytest.fixture
def keys(tmp_path):
    return generate_keys(tmp_path / "keys")


@pytest.fixture
def confirmed():
    """The Audit page after Curate -> Confirm on the fixed report: the Downloads section.

    The policy requires one rule the candidates meet, so they are released and their curated
    files are among the downloads (a rejected candidate ships none: tests/test_page_audit.py).
    """
    review = small_review()
    report = fake_report(review)
    after = fake_report(review, mia=0.5)
    with (
        patch.object(ReviewSession, "stored_report", return_value=(report, [])),
        patch.object(ReviewSession, "stale_sections", return_value=[]),
        patch.object(ReviewSession, "plan", return_value=[]),
        patch.object(LiveReview, "candidate_report", return_value=report),
        patch("synthreview.release.pipeline.evaluate_curated", return_value=after),
    ):
        at = open_page(review, None, policy=only_required("ip_alpha")).run()
        at.button(key="audit_curate").click().run()
        at.button(key="audit_confirm").click().run()
        assert not at.exception, at.exception
        yield at


def _upload_key(at, data: bytes, *, passphrase: str | None = None):
    if passphrase is not None:
        at.text_input(key=SIGNING_PASSPHRASE_KEY).input(passphrase)
    at.file_uploader(key=SIGNING_UPLOAD_KEY).upload("synthreview.key", data)
    return at.run()


def _texts(at) -> str:
    return "\n".join(t.value for t in at.text)


def test_signing_key_signs_every_download_and_the_register_record(
    confirmed, keys, tmp_path, monkeypatch
):
    at = confirmed
    assert {b.key for b in at.download_button} == ALL_DOWNLOADS  # unsigned: no signature file
    assert any("not signed" in c.value for c in at.caption)
    _upload_key(at, keys.private.read_bytes())
    assert not at.exception and not at.error
    assert f"Signed with key {keys.keyid}" in _texts(at)
    assert {b.key for b in at.download_button} == ALL_DOWNLOADS | {"audit_download_envelope"}

    # "Record in the register" builds the record with the session's key: the files it records
    # are the signed files every download comes from
    db = tmp_path / "register.sqlite"
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", str(db))  # the server's setting, not the browser's
    at.run()
    # no field of the page takes a register path or URL
    assert not [t.label for t in at.text_input if "egister" in t.label or "register" in t.key]
    assert any(f"Register: {db}" in t.value for t in at.text)
    with patch("synthreview.record.server.records_of_release", wraps=records_of_release) as spy:
        at.button(key="audit_register_record").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (files,), call_key = spy.call_args.args, spy.call_args.kwargs["key"]
    public = load_public_key(keys.public.read_bytes())
    assert ENVELOPE_NAME in files and verify_files(files, public).ok
    assert call_key is app_state_key(at)
    # the ZIP of those files holds the envelope, and verifies after a round trip
    archive = ReviewSession.zip_record(files)
    assert ENVELOPE_NAME in zipfile.ZipFile(io.BytesIO(archive)).namelist()
    assert verify_review_zip(archive, keys.public.read_bytes()).ok
    recorded = history(str(db))
    assert {r.candidate for r in recorded} == {"cand", "other"}
    assert {r.keyid for r in recorded} == {keys.keyid}
    assert any("Recorded 2 decisions" in s.value for s in at.success)
    # recording the same record again adds nothing
    at.button(key="audit_register_record").click().run()
    assert len(history(str(db))) == 2
    assert any("2 were already there" in s.value for s in at.success)

    at.button(key="audit_signing_forget").click().run()
    assert {b.key for b in at.download_button} == ALL_DOWNLOADS
    assert app_state_key(at) is None


def _plain(markdown: str) -> str:
    """What the reader sees of escaped Markdown (``figures.text.markdown_text``)."""
    return markdown.replace("\\", "").replace("\u2060", "")


def app_state_key(at):
    return at.session_state["_signing_key"] if "_signing_key" in at.session_state else None


def test_bad_key_or_passphrase_leaves_the_downloads_unsigned(confirmed, tmp_path):
    at = confirmed
    _upload_key(at, b"-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    assert not at.exception
    assert any("must be a PEM Ed25519 private key" in _plain(e.value) for e in at.error)
    assert {b.key for b in at.download_button} == ALL_DOWNLOADS
    assert app_state_key(at) is None
    _upload_key(at, b"\0" * 70_000)
    assert any("at most 65536 bytes; got 70000" in _plain(e.value) for e in at.error)

    locked = generate_keys(tmp_path / "locked", passphrase=b"correct horse")
    _upload_key(at, locked.private.read_bytes())
    assert any("encrypted; expected its passphrase" in _plain(e.value) for e in at.error)
    _upload_key(at, locked.private.read_bytes(), passphrase="wrong")
    assert any("passphrase is wrong" in _plain(e.value) for e in at.error)
    assert {b.key for b in at.download_button} == ALL_DOWNLOADS
    at.text_input(key=SIGNING_PASSPHRASE_KEY).input("correct horse").run()
    assert not at.error
    assert f"Signed with key {locked.keyid}" in _texts(at)
    assert "audit_download_envelope" in {b.key for b in at.download_button}


def test_register_error_is_shown_not_raised(confirmed, tmp_path, monkeypatch):
    at = confirmed
    folder = tmp_path / "a folder"
    folder.mkdir()
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", str(folder))  # a folder, not an SQLite file
    at.button(key="audit_register_record").click().run()
    assert not at.exception
    assert any("The register was not updated" in _plain(e.value) for e in at.error)
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", "mysql://nowhere/db")
    at.run()
    at.button(key="audit_register_record").click().run()
    assert any("got the scheme" in _plain(e.value) for e in at.error)


# --- the History page's verify panel ----------------------------------------------------------
@pytest.fixture
def signed(keys):
    key = load_private_key(keys.private.read_bytes())
    return sign_files(review_files(1), key)


def _verify(zip_data: bytes, public: bytes, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", f"sqlite:///{tmp_path / 'none.sqlite'}")
    at = run_page_without_data("pages/history.py")
    at.file_uploader(key="history_verify_zip").upload("review.zip", zip_data, "application/zip")
    at.file_uploader(key="history_verify_key").upload("synthreview.pub", public)
    at.run()
    assert not at.exception, at.exception
    return at


def test_verify_panel_accepts_a_signed_zip(signed, keys, tmp_path, monkeypatch):
    at = _verify(zip_bytes(signed), keys.public.read_bytes(), tmp_path, monkeypatch)
    assert any(s.value.startswith("Verified: signed with key") for s in at.success)
    assert not at.error


def test_verify_panel_accepts_a_zipped_cli_folder(signed, keys, tmp_path, monkeypatch):
    folder = tmp_path / "review"
    write_review_folder(folder, signed)  # adds COMPLETE.json, as `review --sign --out` does
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            archive.write(path, f"review/{path.relative_to(folder).as_posix()}")
    at = _verify(buffer.getvalue(), keys.public.read_bytes(), tmp_path, monkeypatch)
    assert any(s.value.startswith("Verified") for s in at.success), [e.value for e in at.error]


@pytest.mark.parametrize("name", ["report.json", "manifest.json", ENVELOPE_NAME])
def test_verify_panel_names_a_file_with_one_byte_flipped(signed, keys, name, tmp_path, monkeypatch):
    changed = dict(signed)
    data = bytearray(changed[name])
    data[len(data) // 2] ^= 0x01
    changed[name] = bytes(data)
    at = _verify(zip_bytes(changed), keys.public.read_bytes(), tmp_path, monkeypatch)
    assert not at.success
    assert any("Not verified" in _plain(e.value) for e in at.error)
    problems = "\n".join(c.value for c in at.code)
    assert name in problems, problems


def test_verify_panel_refuses_the_wrong_key(signed, tmp_path, monkeypatch):
    other = generate_keys(tmp_path / "other")
    at = _verify(zip_bytes(signed), other.public.read_bytes(), tmp_path, monkeypatch)
    assert not at.success
    assert "wrong key" in "\n".join(c.value for c in at.code)


def test_verify_panel_explains_a_bad_zip_or_key(signed, keys, tmp_path, monkeypatch):
    at = _verify(b"not a zip", keys.public.read_bytes(), tmp_path, monkeypatch)
    assert any("must be a ZIP file" in _plain(e.value) for e in at.error)
    at = _verify(zip_bytes(signed), keys.private.read_bytes(), tmp_path, monkeypatch)
    assert any("public key must be a PEM Ed25519 public key" in _plain(e.value) for e in at.error)
    at = _verify(zip_bytes(signed), b"x" * 100_000, tmp_path, monkeypatch)
    assert any("at most 65536 bytes; got 100000" in _plain(e.value) for e in at.error)


def test_verify_shows_user_file_names_as_text(keys, tmp_path, monkeypatch):
    key = load_private_key(keys.private.read_bytes())
    files = sign_files(review_files(2), key)
    files["**bold** [link](x.html) :red[x]"] = b"added"
    at = _verify(zip_bytes(files), keys.public.read_bytes(), tmp_path, monkeypatch)
    problems = "\n".join(c.value for c in at.code)
    assert "**bold** [link](x.html) :red[x]: extra file, not in the signed record" in problems
    assert not any("bold" in m.value for m in at.markdown)


def test_history_names_the_rules_that_changed_as_text(tmp_path, monkeypatch):
    db = tmp_path / "register.sqlite"
    monkeypatch.setenv("SYNTHREVIEW_REGISTER", str(db))
    append_records(str(db), records_of(1, candidates=("*gen*",)))
    append_records(str(db), records_of(2, candidates=("*gen*",), flip={"mia_auc", "ip_alpha"}))
    at = run_page_without_data("pages/history.py")
    assert not at.exception, at.exception
    # the candidate name is the reviewer's text: shown as text, never as Markdown
    assert "*gen* (#1 → #2): ip_alpha pass → fail; mia_auc pass → fail" in _texts(at)
    # the register's decision, meeting decision, sign-off and signature first (static tables
    # whose cells wrap), the rest on demand; the changed verdicts in a data grid
    assert len(at.dataframe) == 1
    first = at.table[0].value
    assert list(first.columns)[:5] == [
        "candidate",
        "decision",
        "meeting decision",
        "signed off by",
        "signature",
    ]
    assert "None" not in first.to_string() and "not signed off" in first.to_string()


# --- reading an uploaded ZIP in memory --------------------------------------------------------
def _zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name", ["../report.json", "/etc/passwd", "a/../../b", "C:/x.json", "\\\\server\\x"]
)
def test_read_review_zip_refuses_paths_that_leave_the_folder(name):
    with pytest.raises(ConfigError, match="relative paths inside its folder"):
        read_review_zip(_zip_of({"report.json": b"{}", name: b"x"}))


def test_read_review_zip_caps_the_decompressed_size():
    bomb = _zip_of({"report.json": b"\0" * 1_000_000})
    assert len(bomb) < 5_000  # a kilobyte-sized upload that inflates a thousandfold
    with pytest.raises(ConfigError, match="at most 100000 bytes decompressed"):
        read_review_zip(bomb, max_bytes=100_000)
    # a member whose header understates its size: never read beyond the cap (zipfile stops at
    # the declared size and the CRC then fails; the read is capped in any case)
    lying = bytearray(bomb)
    start = lying.index(b"PK\x01\x02")  # the central directory's file size
    lying[start + 24 : start + 28] = (10).to_bytes(4, "little")
    lying[22:26] = (10).to_bytes(4, "little")  # and the local header's
    with pytest.raises(ConfigError, match=r"could not be read|decompressed"):
        read_review_zip(bytes(lying), max_bytes=100_000)
    with pytest.raises(ConfigError, match="at most 1 files"):
        read_review_zip(_zip_of({"a": b"1", "b": b"2"}), max_files=1)


def test_read_review_zip_takes_off_one_top_folder_and_refuses_a_duplicate():
    files = read_review_zip(_zip_of({"out/report.json": b"{}", "out/c/a.csv": b"1"}))
    assert files == {"report.json": b"{}", "c/a.csv": b"1"}
    assert read_review_zip(_zip_of({"report.json": b"{}"})) == {"report.json": b"{}"}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning, match="Duplicate"):
        archive.writestr("report.json", b"{}")
        archive.writestr("report.json", json.dumps({"x": 1}))
    with pytest.raises(ConfigError, match="twice"):
        read_review_zip(buffer.getvalue())
