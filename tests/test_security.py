"""Issue 35: the holes the generator plugins, the register, signing and Parquet folders opened.

One test (at least) per hole, each written to fail on the code before the fix: a hung generator
is killed at its limit and nothing it prints reaches the logs; a generator output with no usable
rows is an error of the attack; a FIFO among Parquet partitions is refused unread; key files and
folders get their modes whatever the umask; a claimed ε = 0 is judged like any other ε.
"""

from __future__ import annotations

import ast
import contextlib
import glob
import io
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

import synthreview
from synthreview import cli
from synthreview.cli import main
from synthreview.errors import ConfigError, DataError
from synthreview.generators.runner import GeneratorProcess, GeneratorTimeout
from synthreview.io.parquet import read_partition
from synthreview.io.tables import align, infer_schema
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.metrics.privacy.shadow import ShadowSettings, shadow_attack
from synthreview.options import ReviewOptions
from synthreview.release.folder import MARKER, marker_bytes
from synthreview.release.register import check_register, history, parse_register_url, redact_url
from synthreview.release.signing import (
    ENVELOPE_NAME,
    folder_digests,
    generate_keys,
    load_private_key,
    load_public_key,
    read_envelope,
    sign_statement,
    verify_folder,
)
from synthreview.review import evaluate
from synthreview.terminal import terminal_text
from tests.credit_split import german_credit_split, noisy_copy
from tests.e2e_utils import free_port
from tests.hostile_generators import MARK

HOSTILE = "tests.hostile_generators"
COLUMNS = ["age", "education_num", "hours_per_week", "sex", "income"]


@pytest.fixture(scope="module")
def adult():
    """60 training and 60 holdout rows of the bundled Adult table (a few columns)."""
    frame = pd.read_csv(Path(synthreview.__file__).parent / "datasets" / "adult.csv.gz")[COLUMNS]
    rows = frame.sample(120, random_state=35).reset_index(drop=True)
    return rows.iloc[:60].reset_index(drop=True), rows.iloc[60:].reset_index(drop=True)


def _shadow(adult, name, *, limit=600.0):
    real, holdout = adult
    settings = ShadowSettings(f"{HOSTILE}:{name}", n_shadows=4, n_targets=1, time_limit_s=limit)
    return shadow_attack(real, real, holdout, settings=settings, schema=infer_schema(real))


def _shadow_rule(content, policy=None):
    return next(r for r in apply_policy(policy or load_policy(), content).rules
                if r.rule == "shadow_tpr_at_fpr_1pct")  # fmt: skip


# --- item 1: the generator runs in a child process ----------------------------------------------


@pytest.mark.slow
def test_a_hung_generator_is_killed_at_the_time_limit(adult):
    start = time.monotonic()
    result = _shadow(adult, "hang", limit=10.0)  # the child's start counts too
    took = time.monotonic() - start
    assert took < 20, f"the attack took {took:.1f} s with a 10 s limit"
    assert not result.complete and result.targets == ()
    assert result.note.startswith("stopped at the time limit (10 s)")
    assert "killed" in result.note
    verdict = _shadow_rule({"privacy": {"shadow": result.to_dict()}})
    assert verdict.verdict != "pass" and "partial, not judged" in verdict.reason


@pytest.mark.slow
def test_a_hung_call_is_killed_with_the_processes_it_started(adult, tmp_path, monkeypatch):
    real, _ = adult
    pid_file = tmp_path / "grandchild.pid"
    monkeypatch.setenv("HOSTILE_PID_FILE", str(pid_file))
    runner = GeneratorProcess(f"{HOSTILE}:spawn_and_hang")
    with runner:
        runner.wait_ready(deadline=time.monotonic() + 120)
        process = runner._process
        start = time.monotonic()
        with pytest.raises(GeneratorTimeout, match="did not answer by its deadline while fitting"):
            runner.sample(real, 5, 0, deadline=time.monotonic() + 1.5)
        assert time.monotonic() - start < 8
        assert process is not None and process.poll() is not None
        grandchild = int(pid_file.read_text())
        with pytest.raises(GeneratorTimeout, match="already ended"):
            runner.sample(real, 5, 0, deadline=time.monotonic() + 1.5)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.05)
    assert not _alive(grandchild), "a process the generator started outlived it"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie waits for its parent (init here) to reap it: it runs no more
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ")[-1].startswith("Z"))


@pytest.mark.slow
def test_nothing_a_generator_prints_reaches_the_logs(adult, capfd, caplog):
    result = _shadow(adult, "chatty")
    assert result.complete and len(result.targets) == 1
    out, err = capfd.readouterr()
    assert MARK not in out and MARK not in err
    assert MARK not in caplog.text


@pytest.mark.slow
def test_the_generator_receives_only_the_shadow_training_rows(adult):
    real, _ = adult
    train = real.iloc[:7]
    with GeneratorProcess("synthreview.generators.builtin:memorise") as runner:
        rows = runner.sample(train, 7, 0, deadline=time.monotonic() + 120)
    # memorise returns what it got: exactly the seven rows handed over, nothing else
    pd.testing.assert_frame_equal(
        rows.sort_values(COLUMNS).reset_index(drop=True),
        train.sort_values(COLUMNS).reset_index(drop=True),
        check_dtype=False,
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("all_missing", "every one missing in every column"),
        ("no_rows", "returned no rows"),
        ("not_a_table", "must return a pandas DataFrame"),
    ],
)
@pytest.mark.slow
def test_a_generator_output_with_no_usable_rows_is_an_error_of_the_attack(
    adult, name, message, tmp_path
):
    with pytest.raises(DataError, match=message):
        _shadow(adult, name)
    # the section records it as the attack's error: a policy that requires the rule gets
    # incomplete, never a pass
    policy = tmp_path / "policy.toml"
    policy.write_text("[rules.shadow_tpr_at_fpr_1pct]\nrequired = true\n")
    verdict = _shadow_rule({"privacy": {"errors": {"shadow": message}}}, load_policy(policy))
    assert verdict.verdict == "incomplete" and "the shadow attack failed" in verdict.reason


# --- item 6: edges ----------------------------------------------------------------------------


def _run_with_timeout(function, seconds):
    """``function()``'s result, or a failed test when it has not returned within ``seconds``."""
    found = {}

    def run():
        try:
            found["value"] = function()
        except Exception as exc:  # re-raised in the test's thread
            found["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still blocked after {seconds} s"
    if "error" in found:
        raise found["error"]
    return found["value"]


def test_a_fifo_among_parquet_partitions_is_refused_by_name(adult, tmp_path, capsys):
    real, holdout = adult
    folder = tmp_path / "real"
    folder.mkdir()
    real.to_parquet(folder / "part.0.parquet", index=False)
    os.mkfifo(folder / "part.1.parquet")  # no writer ever comes: opening it would block
    holdout.to_csv(tmp_path / "synthetic.csv", index=False)
    argv = ["review", "--real", str(folder), "--synthetic", str(tmp_path / "synthetic.csv"),
            "--out", str(tmp_path / "out"), "--quiet"]  # fmt: skip
    assert _run_with_timeout(lambda: main(argv), 60) == 2
    err = capsys.readouterr().err
    assert "'part.1.parquet'" in err and "not a regular file" in err


def test_a_fifo_put_in_place_of_a_listed_partition_is_refused_unread(tmp_path):
    fifo = tmp_path / "part.0.parquet"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        _run_with_timeout(
            lambda: read_partition(fifo, what="real", max_bytes=2**20, max_columns=None), 20
        )


def test_keygen_sets_its_modes_whatever_the_umask(tmp_path, capsys):
    old = os.umask(0)
    try:
        assert main(["keygen", "--out", str(tmp_path / "keys")]) == 0
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "keys").iterdir()}
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700
    assert modes == {"synthreview.key": 0o600, "synthreview.pub": 0o644}


def test_keygen_public_key_is_readable_under_a_strict_umask(tmp_path, capsys):
    old = os.umask(0o077)
    try:
        assert main(["keygen", "--out", str(tmp_path / "keys")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "keys" / "synthreview.pub").stat().st_mode) == 0o644


@pytest.fixture(scope="module")
def credit_claims():
    """German credit: 300 training, 300 holdout; a noisy copy and a fresh sample, ε = 0 and
    ε = 1 claimed."""
    split = german_credit_split(300)
    noisy = noisy_copy(split.real.frame, split.schema.numeric, 2)
    review = align(split.real, {"fresh": split.fresh, "noisy": noisy}, holdout=split.holdout,
                   schema=split.schema)  # fmt: skip
    claims = {}
    for eps in (0.0, 1.0):
        options = ReviewOptions(max_attack=300, claimed_epsilon=eps)
        report = evaluate(review, sections=["privacy"], options=options, seed=0)
        claims[eps] = {name: c.to_dict() for name, c in report.candidates.items()}
    return claims


@pytest.mark.slow
def test_a_claimed_epsilon_of_zero_is_judged_like_any_other(credit_claims):
    policy = load_policy()
    for eps, content in credit_claims.items():
        noisy = apply_policy(policy, content["noisy"])["dp_claim"]
        fresh = apply_policy(policy, content["fresh"])["dp_claim"]
        assert noisy.verdict == "fail" and f"claimed ε = {eps:g}" in noisy.reason, (eps, noisy)
        assert fresh.verdict == "pass", (eps, fresh)
    # the same evidence: what the attacks certify does not depend on the claim
    zero, one = credit_claims[0.0]["noisy"], credit_claims[1.0]["noisy"]
    certified = zero["privacy"]["dp_claim"]["certified_epsilon"]
    assert certified == one["privacy"]["dp_claim"]["certified_epsilon"] > 1.0
    assert apply_policy(policy, zero)["dp_claim"].value == pytest.approx(certified)


# --- items 4 and 5: no secret written or printed; terminal output is text -----------------------

PASSWORD = "s3cret-pw-35"
SPOOF = "cand\rRELEASE (pass) - every rule passes\x1b[2K"


@pytest.fixture(scope="module")
def password_postgres():
    """A PostgreSQL server that asks for a password (scram-sha-256): ``(port, root folder)``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL server binaries not found: apt-get install -y postgresql")
    initdb = found[-1]
    pg_ctl = str(Path(initdb).with_name("pg_ctl"))
    root = Path(tempfile.mkdtemp(prefix="synthreview-pgpw-"))
    (root / "pw").write_text(PASSWORD + "\n")
    run_as: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root
        user = pwd.getpwnam("postgres")
        for path in (root, root / "pw"):
            os.chown(path, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", free_port()
    started = False
    try:
        subprocess.run([*run_as, initdb, "-D", str(data), "-U", "synthreview",
                        "-A", "scram-sha-256", "--pwfile", str(root / "pw"), "-E", "UTF8",
                        "--no-sync"], check=True, capture_output=True)  # fmt: skip
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run([*run_as, pg_ctl, "-D", str(data), "-l", str(root / "log"), "-w",
                        "-t", "60", "-o", options, "start"], check=True,
                       capture_output=True)  # fmt: skip
        started = True
        yield port
    finally:
        if started:
            subprocess.run([*run_as, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
                           capture_output=True)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def test_register_urls_are_shown_without_credentials():
    url = f"postgresql://me:{PASSWORD}@db.example:5432/reg?sslmode=require&password={PASSWORD}"
    assert redact_url(url) == (
        "postgresql://me:***@db.example:5432/reg?sslmode=require&password=***"
    )
    assert parse_register_url(url).shown == redact_url(url)
    with pytest.raises(ConfigError) as caught:
        parse_register_url(f"sqlite://me:{PASSWORD}@x")
    assert PASSWORD not in str(caught.value)


@pytest.fixture(scope="module")
def spoof_review(adult, password_postgres, tmp_path_factory):
    """One CLI review: a candidate file named with ``\\r`` and an escape sequence, the register
    given as a URL with a password; ``(exit code, stdout, stderr, out folder)``."""
    folder = tmp_path_factory.mktemp("spoof")
    real, holdout = adult
    real.to_csv(folder / "real.csv", index=False)
    holdout.to_csv(folder / "holdout.csv", index=False)
    real.to_csv(folder / f"{SPOOF}.csv", index=False)  # a copy: it must not be released
    url = f"postgresql://synthreview:{PASSWORD}@127.0.0.1:{password_postgres}/postgres"
    argv = ["review", "--real", str(folder / "real.csv"), "--holdout", str(folder / "holdout.csv"),
            "--synthetic", str(folder / f"{SPOOF}.csv"), "--embedding", "none",
            "--max-attack", "60", "--out", str(folder / "out"), "--register", url]  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue(), folder / "out"


def test_no_password_in_any_file_of_the_review_folder_or_any_message(spoof_review):
    code, out, err, folder = spoof_review
    assert code == 1, err
    assert PASSWORD not in out + err
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files and all(PASSWORD.encode() not in p.read_bytes() for p in files)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert "synthreview:***@127.0.0.1" in json.dumps(manifest)


def test_a_crafted_candidate_name_cannot_print_a_decision_line(spoof_review):
    _, out, err, _ = spoof_review
    assert "\r" not in out + err and "\x1b" not in out + err
    decisions = [line for line in err.split("\n") if "DO NOT RELEASE" in line]
    assert decisions and all(line.startswith("cand\\rRELEASE (pass)") for line in decisions)
    # no line of the output starts as a release would
    assert not any(line.startswith("RELEASE") for line in (out + err).split("\n"))


@pytest.mark.parametrize(
    "url",
    [f"postgresql://me:{PASSWORD}@[broken/db", f"postgresql://me@[broken/db?password={PASSWORD}"],
)
def test_a_driver_message_quoting_the_url_shows_no_password(url, capsys):
    # libpq quotes a URL it cannot parse in its message
    assert main(["history", "--db", url]) == 2
    err = capsys.readouterr().err
    assert PASSWORD not in err and "***" in err and "IPv6" in err


def test_terminal_text_escapes_control_and_format_characters():
    assert terminal_text("a\rb\nc\x1b[31md\u202ee\x7f") == "a\\rb\\nc\\x1b[31md\\u202ee\\x7f"
    assert terminal_text("Zürich ✓ 東京") == "Zürich ✓ 東京"


def test_every_line_the_cli_prints_goes_through_say():
    # one escaping for the whole command line: a print elsewhere would write names raw
    tree = ast.parse(Path(cli.__file__).read_text(encoding="utf-8"))
    printing = {
        function.name
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef)
        for call in ast.walk(function)
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "print"
    }
    assert printing == {"say"}


@pytest.mark.slow
def test_log_records_and_warnings_of_the_cli_are_escaped():
    # a section's failure is logged with the candidate's name and a traceback; a warning may
    # name a column: in the command line's process both print escaped, line starts indented
    code = (
        "import logging, warnings\n"
        "from synthreview.terminal import terminal_output\n"
        "with terminal_output():\n"
        "    logging.getLogger('synthreview.review').error('%s of %s failed:\\n%s', 'privacy',\n"
        "        'x\\rRELEASE (pass)\\nRELEASE (pass)', 'Traceback\\n  line')\n"
        "    warnings.warn('column \\x1b[2Kage\\rRELEASE', UserWarning)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "\x1b" not in done.stderr
    assert "x\\rRELEASE (pass)" in done.stderr and "age\\rRELEASE" in done.stderr
    assert "Traceback" in done.stderr  # kept, on its own (indented) line
    assert not any(line.startswith("RELEASE") for line in done.stderr.split("\n"))


def test_passwords_come_from_pgpassword_or_a_pgpass_file(password_postgres, tmp_path, monkeypatch):
    url = f"postgresql://synthreview@127.0.0.1:{password_postgres}/postgres"
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    with pytest.raises(ConfigError) as refused:
        check_register(url)
    assert "password" in str(refused.value)
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    assert check_register(url).dialect == "postgresql"
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{password_postgres}:*:synthreview:{PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    assert check_register(url).dialect == "postgresql"


# --- item 3: verification binds names, roles and decisions --------------------------------------


@pytest.fixture(scope="module")
def signed(adult, tmp_path_factory):
    """A signed review whose training table and candidate are both named ``data.csv``."""
    root = tmp_path_factory.mktemp("bound")
    real, holdout = adult
    for name in ("real", "holdout", "candidate", "keys"):
        (root / name).mkdir()
    real.to_csv(root / "real" / "data.csv", index=False)
    holdout.to_csv(root / "holdout" / "holdout.csv", index=False)
    candidate = real.sample(frac=1.0, random_state=2).reset_index(drop=True)
    candidate.assign(age=candidate["age"] + 1).to_csv(root / "candidate" / "data.csv", index=False)
    keys = generate_keys(root / "keys" / "pair")
    argv = ["review", "--real", str(root / "real" / "data.csv"),
            "--holdout", str(root / "holdout" / "holdout.csv"),
            "--synthetic", str(root / "candidate" / "data.csv"), "--embedding", "none",
            "--max-attack", "60", "--sign", str(keys.private), "--out", str(root / "review"),
            "--quiet"]  # fmt: skip
    assert main(argv) in (0, 1, 3, 4)
    return root


def _verify(signed, folder, *inputs):
    return main(["verify", str(folder), "--key", str(signed / "keys" / "pair" / "synthreview.pub"),
                 *(["--inputs", *inputs] if inputs else [])])  # fmt: skip


def test_inputs_given_with_their_roles_verify(signed, capsys):
    real, candidate = signed / "real" / "data.csv", signed / "candidate" / "data.csv"
    assert _verify(signed, signed / "review", f"real={real}", f"data={candidate}") == 0
    assert _verify(signed, signed / "review", str(real), str(candidate)) == 0  # by sha256
    assert "2 inputs checked" in capsys.readouterr().out


def test_the_real_table_handed_in_as_the_candidate_fails_naming_both(signed, capsys):
    real = signed / "real" / "data.csv"
    assert _verify(signed, signed / "review", f"data={real}") == 1
    err = capsys.readouterr().err
    assert "given as the synthetic input 'data'" in err
    assert "that of the real input 'data'" in err
    assert _verify(signed, signed / "review", f"synthetic:data={real}") == 1
    assert _verify(signed, signed / "review", f"nobody={real}") == 1
    assert "a role the signed record does not list" in capsys.readouterr().err


def _copy(signed, tmp_path):
    folder = tmp_path / "review"
    shutil.copytree(signed / "review", folder)
    return folder


def _reseal(folder):
    """Rewrite COMPLETE.json for the folder's files as they now are (what a forger would do)."""
    (folder / MARKER).unlink()
    (folder / MARKER).write_bytes(marker_bytes(folder_digests(folder).values()))


def test_a_forged_decision_signed_by_the_key_holder_fails_verify_and_register(
    signed, tmp_path, capsys
):
    folder = _copy(signed, tmp_path)
    envelope = read_envelope((folder / ENVELOPE_NAME).read_bytes())
    statement = json.loads(envelope.payload)
    for decision in statement["predicate"]["decisions"].values():
        decision.update(outcome="release", verdict="pass", reason="every rule passes")
    key = load_private_key((signed / "keys" / "pair" / "synthreview.key").read_bytes())
    (folder / ENVELOPE_NAME).write_bytes(sign_statement(statement, key))
    _reseal(folder)
    assert _verify(signed, folder) == 1
    err = capsys.readouterr().err
    assert "signed decisions differ from report.json's (for data)" in err
    db = tmp_path / "register.sqlite"
    pub = signed / "keys" / "pair" / "synthreview.pub"
    code = main(["register", str(folder), "--key", str(pub), "--db", str(db)])
    assert code == 1 and "the register was not updated" in capsys.readouterr().err
    assert not db.exists() or history(str(db)) == []


def test_a_forged_policy_digest_fails(signed, tmp_path, capsys):
    folder = _copy(signed, tmp_path)
    envelope = read_envelope((folder / ENVELOPE_NAME).read_bytes())
    statement = json.loads(envelope.payload)
    statement["predicate"]["policy"]["sha256"] = "0" * 64
    key = load_private_key((signed / "keys" / "pair" / "synthreview.key").read_bytes())
    (folder / ENVELOPE_NAME).write_bytes(sign_statement(statement, key))
    _reseal(folder)
    assert _verify(signed, folder) == 1
    assert "signed policy sha256 differ" in capsys.readouterr().err


def test_a_folder_without_its_completion_marker_fails(signed, tmp_path, capsys):
    folder = _copy(signed, tmp_path)
    (folder / MARKER).unlink()
    assert _verify(signed, folder) == 1
    assert "COMPLETE.json: missing" in capsys.readouterr().err


def test_verify_hashes_in_blocks_whatever_the_file_size(signed, tmp_path):
    folder = _copy(signed, tmp_path)
    with open(folder / "extra.bin", "wb") as handle:  # sparse: 256 MiB on no disk blocks
        handle.truncate(256 * 2**20)
    _reseal(folder)
    public = load_public_key((signed / "keys" / "pair" / "synthreview.pub").read_bytes())
    tracemalloc.start()
    try:
        result = verify_folder(folder, public)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.problems == ("extra.bin: extra file, not in the signed record",)
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.0f} MiB while verifying a 256 MiB file"


def _hand_made(tmp_path, report):
    folder = tmp_path / "hand"
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps(report))
    return folder


def test_register_of_a_hand_made_folder_stores_its_input_roles(tmp_path, capsys):
    folder = _hand_made(tmp_path, {
        "decisions": {"c": {"outcome": "release", "verdict": "pass", "reason": "ok"}},
        "inputs": [{"role": "real", "name": "my:data", "sha256": "a" * 64},
                   {"role": "synthetic", "name": "c", "sha256": "b" * 64}],
    })  # fmt: skip
    db = tmp_path / "register.sqlite"
    assert main(["register", str(folder), "--db", str(db)]) == 0
    assert "unverified" in capsys.readouterr().out
    (record,) = history(str(db))
    assert [(i.role, i.name) for i in record.inputs] == [("real", "my:data"), ("synthetic", "c")]


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"decisions": {"c": "release"}}, "report.json 'decisions' 'c' must be a JSON object"),
        ({"decisions": {"c": {"reason": "x"}}}, "must name its outcome"),
        ({"decisions": {"c": {"outcome": "release"}}, "verdicts": ["x"]},
         "report.json 'verdicts' must be a JSON object"),
        ({"decisions": {"c": {"outcome": "release"}},
          "inputs": [{"role": "synthetic:x", "name": "s", "sha256": "0"}]},
         "role must be one of ['real', 'holdout', 'synthetic']"),
        ({"decisions": {"c": {"outcome": "release"}}, "inputs": [{"name": "s", "sha256": "0"}]},
         "must be a mapping with 'role', 'name' and 'sha256'"),
    ],
)  # fmt: skip
def test_register_of_a_malformed_hand_made_folder_exits_2(tmp_path, capsys, report, message):
    folder = _hand_made(tmp_path, report)
    db = tmp_path / "register.sqlite"
    assert main(["register", str(folder), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
