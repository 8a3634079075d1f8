"""Signed release records: keygen, sign, verify offline; every changed byte is caught."""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import json
import shutil
import stat

import pandas as pd
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.cli import main, signing_key
from synthreview.errors import ConfigError
from synthreview.release.folder import MARKER, write_review_folder
from synthreview.release.register import history
from synthreview.release.signing import (
    ENVELOPE_NAME,
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    generate_keys,
    key_id,
    load_private_key,
    load_public_key,
    pae,
    read_folder,
    release_statement,
    sign_files,
    statement_id,
    verify_files,
)


@pytest.fixture(scope="module")
def review_folder(tmp_path_factory):
    """A tiny real review (audit and curation included): its folder, inputs and a key pair."""
    folder = tmp_path_factory.mktemp("signed")
    rows = pd.Series(range(300))
    real = pd.DataFrame(
        {"age": 20 + rows % 50, "sex": ["F", "M", "M"] * 100, "hours": 30 + (rows * 7) % 40}
    )
    real.iloc[:150].to_csv(folder / "train.csv", index=False)
    real.iloc[150:].to_csv(folder / "holdout.csv", index=False)
    real.sample(frac=0.5, random_state=1).to_csv(folder / "copy.csv", index=False)
    code = main(
        [
            "review",
            "--real",
            str(folder / "train.csv"),
            "--holdout",
            str(folder / "holdout.csv"),
            "--synthetic",
            str(folder / "copy.csv"),
            "--embedding",
            "none",
            "--max-attack",
            "150",
            "--curate",
            "--out",
            str(folder / "review"),
            "--quiet",
        ]
    )
    assert code in (0, 1, 3, 4)
    keys = generate_keys(folder / "keys")
    key = load_private_key(keys.private.read_bytes())
    files = {n: d for n, d in read_folder(folder / "review").items() if n != MARKER}
    write_review_folder(folder / "signed", sign_files(files, key))
    return folder


@pytest.fixture(scope="module")
def public_key(review_folder):
    return load_public_key((review_folder / "keys" / "synthreview.pub").read_bytes())


def _verify_cli(folder, key, *extra):
    return main(["verify", str(folder), "--key", str(key), *extra])


def test_pae_matches_the_dsse_test_vector():
    # DSSE protocol.md, "Test Vectors"
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_signed_folder_verifies(review_folder, capsys):
    signed = review_folder / "signed"
    assert {"report.json", "report.html", "manifest.json", ENVELOPE_NAME, MARKER} <= set(
        read_folder(signed)
    )
    # the copy is rejected: its audit evidence is signed, and no curated file is written or listed
    report = json.loads((signed / "report.json").read_bytes())
    assert report["decisions"]["copy"]["outcome"] == "do_not_release"
    assert {"copy/audit.csv", "copy/removed.csv"} <= set(read_folder(signed))
    assert not any("curated." in name for name in read_folder(signed))
    pub = review_folder / "keys" / "synthreview.pub"
    assert _verify_cli(signed, pub) == 0
    assert "verified" in capsys.readouterr().out
    inputs = [str(review_folder / f) for f in ("train.csv", "holdout.csv", "copy.csv")]
    assert _verify_cli(signed, pub, "--inputs", *inputs) == 0


def test_envelope_is_standard_dsse_over_an_in_toto_statement(review_folder, public_key):
    files = read_folder(review_folder / "signed")
    line = files[ENVELOPE_NAME]
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    envelope = json.loads(line)
    assert envelope["payloadType"] == PAYLOAD_TYPE == "application/vnd.in-toto+json"
    payload = base64.b64decode(envelope["payload"])
    (signature,) = envelope["signatures"]
    assert signature["keyid"] == key_id(public_key)
    # an independent check: the Ed25519 signature over the DSSE PAE written out by hand
    message = b"DSSEv1 %d %s %d %s" % (
        len(PAYLOAD_TYPE),
        PAYLOAD_TYPE.encode(),
        len(payload),
        payload,
    )
    public_key.verify(base64.b64decode(signature["sig"]), message)

    statement = json.loads(payload)
    assert statement["_type"] == STATEMENT_TYPE == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == PREDICATE_TYPE
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    for name, data in files.items():
        if name not in (ENVELOPE_NAME, MARKER):
            assert subjects[name] == hashlib.sha256(data).hexdigest(), name
    report = json.loads(files["report.json"])
    for entry in report["inputs"]:
        assert subjects[f"input:{entry['role']}:{entry['name']}"] == entry["sha256"]
    predicate = statement["predicate"]
    assert predicate["decisions"] == report["decisions"]
    assert predicate["policy"]["sha256"] == report["policy"]["sha256"]
    assert predicate["policy"]["name"] == report["policy"]["name"]
    assert predicate["options"] == report["options"]
    assert predicate["time"] == report["generated_at"]
    assert predicate["versions"]["synthreview"]
    for name, verdicts in report["verdicts"].items():
        assert {r: v["verdict"] for r, v in predicate["verdicts"][name].items()} == {
            r: v["verdict"] for r, v in verdicts["rules"].items()
        }
    # canonical JSON: sorted keys, no spaces; the review id is its sha256
    assert payload == json.dumps(
        statement, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    assert statement_id(statement) == hashlib.sha256(payload).hexdigest()


def test_signing_twice_gives_the_same_bytes(review_folder):
    key = load_private_key((review_folder / "keys" / "synthreview.key").read_bytes())
    files = {n: d for n, d in read_folder(review_folder / "review").items() if n != MARKER}
    first, second = sign_files(files, key), sign_files(dict(reversed(files.items())), key)
    assert first[ENVELOPE_NAME] == second[ENVELOPE_NAME]
    assert ENVELOPE_NAME not in files  # the input mapping is left as it was


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _flipped(data: bytes, at: int) -> bytes:
    changed = bytearray(data)
    changed[at] ^= 0x01
    return bytes(changed)


@pytest.mark.slow
def test_flipping_any_byte_of_any_file_fails_naming_that_file(
    review_folder, public_key, monkeypatch
):
    # ~6,000 verifications, each of which hashes every file (report.html holds plotly.js): the
    # digests of the unchanged files are remembered (the same bytes objects each time), so a
    # verification hashes only the changed copy; every digest is still sha256 of its bytes
    digest = functools.lru_cache(maxsize=32)(_sha256_hex)
    monkeypatch.setattr("synthreview.release.signing._sha256", digest)
    files = read_folder(review_folder / "signed")
    assert verify_files(files, public_key).ok
    assert len(files) >= 7  # report, html, manifest, audit, removed, envelope, marker
    for name, data in files.items():
        # every byte of the envelope (its base64, key id and JSON structure all matter); the
        # first, middle and last byte of every other file (a digest changes with any byte)
        positions = (
            range(len(data)) if name == ENVELOPE_NAME else {0, len(data) // 2, len(data) - 1}
        )
        for at in positions:
            result = verify_files({**files, name: _flipped(data, at)}, public_key)
            assert not result.ok, (name, at)
            assert any(p.startswith(f"{name}: ") for p in result.problems), (name, at, result)
            if name not in (ENVELOPE_NAME, MARKER):
                # the changed file, and only the files that record its digest, are named
                named = {p.split(": ")[0] for p in result.problems}
                assert named <= {name, MARKER}, result.problems


def test_changed_file_on_disk_exits_1_naming_it(review_folder, tmp_path, capsys):
    copy = tmp_path / "signed"
    shutil.copytree(review_folder / "signed", copy)
    path = copy / "copy" / "removed.csv"
    path.write_bytes(_flipped(path.read_bytes(), 0))
    assert _verify_cli(copy, review_folder / "keys" / "synthreview.pub") == 1
    err = capsys.readouterr().err
    assert "copy/removed.csv: sha256 differs" in err and "NOT verified" in err


def test_extra_and_missing_files_fail(review_folder, public_key):
    files = read_folder(review_folder / "signed")
    extra = verify_files({**files, "notes.txt": b"added later"}, public_key)
    assert not extra.ok and any(p.startswith("notes.txt: extra file") for p in extra.problems)
    missing = {n: d for n, d in files.items() if n != "copy/removed.csv"}
    result = verify_files(missing, public_key)
    assert not result.ok and any(p.startswith("copy/removed.csv: missing") for p in result.problems)
    unsigned = {n: d for n, d in files.items() if n != ENVELOPE_NAME}
    assert verify_files(unsigned, public_key).problems[0].startswith(f"{ENVELOPE_NAME}: missing")


def test_record_signed_with_key_a_fails_with_key_b(review_folder, tmp_path, capsys):
    other = generate_keys(tmp_path / "b")
    assert _verify_cli(review_folder / "signed", other.public) == 1
    assert "wrong key" in capsys.readouterr().err
    # a signature by B re-using A's key id is refused too
    files = read_folder(review_folder / "signed")
    envelope = json.loads(files[ENVELOPE_NAME])
    forged_key = Ed25519PrivateKey.generate()
    payload = base64.b64decode(envelope["payload"])
    envelope["signatures"][0]["sig"] = base64.b64encode(
        forged_key.sign(pae(PAYLOAD_TYPE, payload))
    ).decode()
    forged = {**files, ENVELOPE_NAME: json.dumps(envelope).encode() + b"\n"}
    key_a = load_public_key((review_folder / "keys" / "synthreview.pub").read_bytes())
    result = verify_files(forged, key_a)
    assert not result.ok and "does not verify" in result.problems[0]


@pytest.mark.parametrize("keep", [0, 1, 40, 0.5, -2])
def test_truncated_envelope_fails_cleanly(review_folder, tmp_path, capsys, keep):
    copy = tmp_path / "signed"
    shutil.copytree(review_folder / "signed", copy)
    envelope = (copy / ENVELOPE_NAME).read_bytes()
    cut = int(len(envelope) * keep) if isinstance(keep, float) else keep
    (copy / ENVELOPE_NAME).write_bytes(envelope[:cut])
    assert _verify_cli(copy, review_folder / "keys" / "synthreview.pub") == 1
    err = capsys.readouterr().err
    assert f"{ENVELOPE_NAME}: malformed envelope" in err and "Traceback" not in err


def test_changed_input_file_fails_naming_it(review_folder, tmp_path, capsys):
    changed = tmp_path / "train.csv"
    changed.write_bytes((review_folder / "train.csv").read_bytes() + b"20,F,30\n")
    assert (
        _verify_cli(
            review_folder / "signed",
            review_folder / "keys" / "synthreview.pub",
            "--inputs",
            f"real={changed}",
        )
        == 1
    )
    assert (
        "train.csv: sha256 differs from the signed record's real input 'train'"
        in capsys.readouterr().err
    )
    unknown = tmp_path / "other.csv"
    unknown.write_bytes(b"a\n1\n")
    assert (
        _verify_cli(
            review_folder / "signed",
            review_folder / "keys" / "synthreview.pub",
            "--inputs",
            str(unknown),
        )
        == 1
    )
    assert "other.csv: its sha256 is not that of any input" in capsys.readouterr().err


def test_verify_bad_arguments_exit_2(review_folder, tmp_path, capsys):
    pub = review_folder / "keys" / "synthreview.pub"
    assert _verify_cli(tmp_path / "absent", pub) == 2
    assert "must be a directory" in capsys.readouterr().err
    not_a_key = tmp_path / "key.pub"
    not_a_key.write_text("hello")
    assert _verify_cli(review_folder / "signed", not_a_key) == 2
    assert "PEM Ed25519 public key" in capsys.readouterr().err
    assert _verify_cli(review_folder / "signed", tmp_path / "missing.pub") == 2
    with pytest.raises(SystemExit) as exited:
        main(["verify", str(review_folder / "signed")])  # no --key
    assert exited.value.code == 2


def test_keygen_writes_a_0600_key_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "keys"
    assert main(["keygen", "--out", str(out)]) == 0
    private, public = out / "synthreview.key", out / "synthreview.pub"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert b"BEGIN PRIVATE KEY" in private.read_bytes()
    before = private.read_bytes()
    capsys.readouterr()
    assert main(["keygen", "--out", str(out)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert private.read_bytes() == before
    key = load_private_key(before)
    assert key_id(key.public_key()) == key_id(load_public_key(public.read_bytes()))


def test_passphrase_encrypts_the_key(tmp_path, capsys):
    secret = tmp_path / "pass.txt"
    secret.write_text("correct horse\n")
    assert main(["keygen", "--out", str(tmp_path / "k"), "--passphrase-file", str(secret)]) == 0
    pem = (tmp_path / "k" / "synthreview.key").read_bytes()
    assert b"ENCRYPTED" in pem
    assert isinstance(load_private_key(pem, passphrase=b"correct horse"), Ed25519PrivateKey)
    with pytest.raises(ConfigError, match="passphrase is wrong"):
        load_private_key(pem, passphrase=b"wrong")
    with pytest.raises(ConfigError, match="encrypted; expected its passphrase"):
        load_private_key(pem)
    # review --sign reads the key (and its passphrase) before anything is computed
    args = argparse.Namespace(sign=tmp_path / "k" / "synthreview.key", sign_passphrase_file=secret)
    assert isinstance(signing_key(args), Ed25519PrivateKey)
    args.sign_passphrase_file = None
    with pytest.raises(ConfigError, match="passphrase"):
        signing_key(args)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["keygen", "--out", str(tmp_path / "e"), "--passphrase-file", str(empty)]) == 2
    assert "must not be empty" in capsys.readouterr().err


def test_statement_needs_a_report_and_is_signed_once():
    with pytest.raises(ConfigError, match=r"report\.json"):
        release_statement({"manifest.json": b"{}"})
    key = Ed25519PrivateKey.generate()
    files = {"report.json": json.dumps({"inputs": [], "decisions": {}}).encode()}
    signed = sign_files(files, key)
    with pytest.raises(ConfigError, match="already contain"):
        sign_files(signed, key)
    with pytest.raises(ConfigError, match="Ed25519 private key"):
        sign_files(files, key.public_key())


def test_another_spelling_of_the_same_signature_bytes_is_refused(review_folder, public_key):
    # the last base64 character of a 64-byte signature carries 4 unused bits: setting one gives
    # a changed file that decodes to the same bytes, which must not verify
    files = read_folder(review_folder / "signed")
    envelope = json.loads(files[ENVELOPE_NAME])
    sig = envelope["signatures"][0]["sig"]
    assert sig.endswith("==")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    spelled = sig[:-3] + alphabet[alphabet.index(sig[-3]) ^ 0b0001] + "=="
    assert base64.b64decode(spelled) == base64.b64decode(sig)
    envelope["signatures"][0]["sig"] = spelled
    changed = json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    result = verify_files({**files, ENVELOPE_NAME: changed}, public_key)
    assert not result.ok and "not canonical base64" in result.problems[0]
    # URL-safe base64 of the same bytes is a spelling DSSE allows
    envelope["signatures"][0]["sig"] = base64.urlsafe_b64encode(base64.b64decode(sig)).decode()
    envelope["payload"] = base64.urlsafe_b64encode(base64.b64decode(envelope["payload"])).decode()
    urlsafe = json.dumps(envelope).encode() + b"\n"
    unmarked = {n: d for n, d in files.items() if n != MARKER}  # the marker lists the old bytes
    assert verify_files({**unmarked, ENVELOPE_NAME: urlsafe}, public_key).ok


def test_review_sign_and_register_in_one_command(review_folder, tmp_path):
    """``review --sign KEY --register DB``: the folder comes out signed (verify exits 0) and the
    register holds one record per candidate with the same decision as report.json."""
    out, db = tmp_path / "signed_review", tmp_path / "register.sqlite"
    code = main(
        [
            "review",
            "--real", str(review_folder / "train.csv"),
            "--holdout", str(review_folder / "holdout.csv"),
            "--synthetic", str(review_folder / "copy.csv"),
            "--embedding", "none", "--max-attack", "150", "--curate", "--quiet",
            "--sign", str(review_folder / "keys" / "synthreview.key"),
            "--register", str(db),
            "--out", str(out),
        ]
    )  # fmt: skip
    assert code in (0, 1, 3, 4)
    assert (out / ENVELOPE_NAME).is_file()
    assert main(["verify", str(out), "--key", str(review_folder / "keys" / "synthreview.pub")]) == 0
    report = json.loads((out / "report.json").read_text())
    assert main(["history", "--db", str(db)]) == 0
    records = history(str(db))
    assert {r.candidate: r.outcome for r in records} == {
        n: d["outcome"] for n, d in report["decisions"].items()
    }


def test_review_refuses_a_bad_key_before_computing(review_folder, tmp_path, capsys):
    bad = tmp_path / "bad.key"
    bad.write_text("not a key")
    code = main(["review", "--real", str(review_folder / "train.csv"),
                 "--synthetic", str(review_folder / "copy.csv"),
                 "--sign", str(bad), "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 2 and "--sign" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
