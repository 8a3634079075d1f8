"""The review record: written as the review folder and read back whole, verified on opening."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
import subprocess
import warnings
import zipfile
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

import synthreview as sr
from synthreview.cli import main
from synthreview.errors import ConfigError, DataError
from synthreview.io.persons import with_person
from synthreview.judgement.policy import Policy
from synthreview.metrics.fidelity.section import FidelityReport
from synthreview.metrics.glucose.section import GlucoseReport
from synthreview.metrics.privacy.section import PrivacyReport
from synthreview.options import ReviewOptions
from synthreview.record import record as record_module
from synthreview.record.codec import (
    RecordFormatError,
    from_jsonable,
    recordable_classes,
    to_record_json,
)
from synthreview.record.countersign import (
    countersign,
    countersigned_decisions,
    meeting_signoff,
)
from synthreview.record.record import ReviewRecord, build_record
from synthreview.record.store import (
    OPEN_ENV,
    OPEN_KEY_ENV,
    UNTYPED_CLASSES,
    open_review,
    write_record,
)
from synthreview.record.trust import TRUST_ENV
from synthreview.release.controls import PlantedControls
from synthreview.release.pipeline import CandidateRelease, review_release
from synthreview.release.register import history
from synthreview.release.signing import generate_keys, load_private_key
from synthreview.review import Report, evaluate

MOMENT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
#: classes no small review here builds: the shadow attack needs a generator run
#: (tests/test_shadow.py); WrittenCells' compact columns are recorded as the cells they give
NOT_BUILT_HERE = {"ShadowAttackResult", "ShadowSettings", "ShadowTarget", "Rate", "DerivedCells"}


def _frame(n: int, seed: int, first_person: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "hours": rng.normal(40, 8, n).round(1),
            "sex": rng.choice(["F", "M"], n),
            "person": first_person + np.arange(n) // 2,
        }
    )


def _record(review, options, sections=None) -> ReviewRecord:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(review, options=options, seed=0, sections=sections)
        release = review_release(review, report, curate=True, timestamp=MOMENT)
    return build_record(release, report)


def _round_trip(record: ReviewRecord, folder) -> ReviewRecord:
    write_record(record, folder)
    return open_review(folder)


def _classes(value, found: set[str]) -> set[str]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        found.add(type(value).__qualname__)
        for field in dataclasses.fields(value):
            _classes(getattr(value, field.name), found)
    elif isinstance(value, dict):
        for item in value.values():
            _classes(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _classes(item, found)
    return found


@pytest.fixture(scope="module")
def person_record():
    """A person-level review (two rows per person) with a sensitive column, a target, a claimed
    DP guarantee, quasi-identifiers and a declared constraint, so its record holds those
    results too."""
    real = _frame(240, 0, 0)
    review = sr.align(
        real,
        {"fresh": _frame(200, 2, 10_000), "copy": real.iloc[:160]},
        holdout=_frame(220, 1, 5_000),
    )
    options = ReviewOptions(
        n_bootstrap=20,
        max_attack=80,
        person="person",
        sensitive="sex",
        target="sex",
        claimed_epsilon=1.0,
        quasi_identifiers=("age", "sex"),
        groups=("sex",),
        constraints='[[range]]\ncolumn = "age"\nmin = 18\nmax = 79\n',
    )
    return _record(with_person(review, "person"), options)


@pytest.fixture(scope="module")
def sampled_record():
    """A review above ``sample_rows``: statistics on samples, the audit on every row."""
    real = _frame(1_100, 10, 0).drop(columns="person")
    review = sr.align(
        real,
        {"fresh": _frame(1_050, 12, 0).drop(columns="person"), "copy": real.iloc[:1_020]},
        holdout=_frame(1_080, 11, 0).drop(columns="person"),
    )
    options = ReviewOptions(n_bootstrap=20, max_attack=100, sample_rows=1_000)
    return _record(review, options, sections=("fidelity", "privacy"))


def test_table_record_reads_back_whole(demo_record_folder):
    record, folder = demo_record_folder
    opened = open_review(folder)
    assert opened.equivalent(record), opened.differences(record)
    # the numbers themselves, not only their JSON: arrays bit for bit, tables with their dtypes
    for name, mine in record.report.candidates.items():
        theirs = opened.report.candidates[name]
        assert isinstance(theirs.fidelity, FidelityReport)
        assert isinstance(theirs.privacy, PrivacyReport)
        np.testing.assert_array_equal(
            theirs.fidelity.samples.alpha_level, mine.fidelity.samples.alpha_level
        )
        np.testing.assert_array_equal(
            theirs.privacy.dcr.synthetic_to_train, mine.privacy.dcr.synthetic_to_train
        )
        release, again = record.releases[name], opened.releases[name]
        pd.testing.assert_frame_equal(again.audit.audit, release.audit.audit)
        # attrs hold NaN calibration entries: compared through the lossless JSON
        assert to_record_json(again.audit.audit.attrs) == to_record_json(release.audit.audit.attrs)
        assert again.decision == release.decision
    assert opened.report.options == record.report.options
    assert opened.report.notices == record.report.notices
    assert opened.policy == record.policy
    assert isinstance(opened.controls, PlantedControls)
    assert to_record_json(opened.controls) == to_record_json(record.controls)  # NaN recalls


def test_decisions_are_those_report_json_states(demo_record_folder):
    record, folder = demo_record_folder
    opened = sr.open_review(folder)
    stated = json.loads((folder / "report.json").read_bytes())["decisions"]
    assert {n: d.to_dict() for n, d in opened.decisions.items()} == stated
    # and the record's own verdicts give the same decisions: nothing to notice
    assert {n: d.to_dict() for n, d in opened.release.decisions.items()} == stated
    assert opened.notices == ()
    assert set(stated) == set(opened.candidates) == set(record.report.candidates)


def test_a_rejected_candidate_keeps_no_kept_rows(demo_record_folder):
    record, _ = demo_record_folder
    assert any(r.curated is not None for r in record.releases.values())
    for release in record.releases.values():
        if release.curated is None:
            continue
        curation = release.curated.curation
        kept = len(curation.kept_raw)
        ships = record.release.decisions[release.name].ships
        assert kept == (len(curation.kept_rows) if ships else 0)
        assert len(curation.removed_raw) == len(curation.removed_rows)


@pytest.mark.slow
def test_person_level_record_reads_back_whole(person_record, tmp_path):
    opened = _round_trip(person_record, tmp_path / "person")
    assert opened.equivalent(person_record), opened.differences(person_record)
    person = opened.report.candidates["copy"].privacy.person_level
    assert person is not None
    assert person == person_record.report.candidates["copy"].privacy.person_level


@pytest.mark.slow
def test_sampled_record_reads_back_whole(sampled_record, tmp_path):
    assert sampled_record.report.sampling is not None
    opened = _round_trip(sampled_record, tmp_path / "sampled")
    assert opened.equivalent(sampled_record), opened.differences(sampled_record)
    assert opened.report.sampling.tables[0].positions.tolist() == (
        sampled_record.report.sampling.tables[0].positions.tolist()
    )
    # the every-row audit's neighbour search is part of the record
    audit = opened.releases["copy"].audit.audit
    assert audit.attrs.get("search") == sampled_record.releases["copy"].audit.audit.attrs["search"]


@pytest.mark.slow
def test_every_result_class_is_read_back(demo_record_folder, person_record, sampled_record):
    record, folder = demo_record_folder
    built: set[str] = set()
    for value in (open_review(folder), person_record, sampled_record):
        _classes(value, built)
    recordable = set()
    for root in (Report, CandidateRelease, Policy, PlantedControls, *UNTYPED_CLASSES):
        recordable |= {c.__qualname__ for c in recordable_classes(root).values()}
    glucose = {c.__qualname__ for c in recordable_classes(GlucoseReport).values()}
    glucose -= {"FidelityReport", "PrivacyReport"} | _classes(record, set())
    missing = recordable - built - glucose - NOT_BUILT_HERE
    assert missing == set()


@pytest.mark.slow
def test_glucose_record_reads_back_whole(demo_glucose_record_folder):
    """The trace demo's record (every glucose result class), stored once for the session."""
    record, folder = demo_glucose_record_folder
    opened = open_review(folder)
    assert opened.equivalent(record), opened.differences(record)
    found = _classes(opened, set())
    glucose = {c.__qualname__ for c in recordable_classes(GlucoseReport).values()}
    assert glucose - found == set()


# ------------------------------------------------------------------------------------ codec


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("-inf"),
        (1, "a", None),
        {1: (2.5, float("inf")), 2: ()},
        {"__class__": "not a tag here"},
        np.arange(6, dtype=np.int32).reshape(2, 3),
        np.array(["a", None, 1.5], dtype=object),
        pd.DataFrame(
            {"x": [1.0, np.nan], "s": pd.array(["a", None], dtype="string"), 3: [True, False]},
            index=pd.Index([10, 20], name="row"),
        ),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    ],
)
def test_codec_reads_back_what_it_wrote(value):
    data = json.loads(json.dumps(to_record_json(value), allow_nan=False))
    back = from_jsonable(object, data)
    assert to_record_json(back) == to_record_json(value)
    assert type(back) is type(value)
    if isinstance(value, pd.DataFrame):
        pd.testing.assert_frame_equal(back, value)


def test_codec_builds_only_the_classes_a_record_holds(demo_record_folder):
    record, _ = demo_record_folder
    data = to_record_json(record.policy)
    forged = {**data, "__class__": "subprocess:Popen"}
    with pytest.raises(RecordFormatError, match="must be a class a review record holds"):
        from_jsonable(Policy, forged)
    # a class a record holds, but not where a Policy is expected
    other = {**data, "__class__": "synthreview.judgement.policy:Rule"}
    with pytest.raises(RecordFormatError, match="must be a Policy"):
        from_jsonable(Policy, other)
    wrong = json.loads(json.dumps(data))
    wrong["fields"]["name"] = 3
    with pytest.raises(RecordFormatError, match=r"Policy\.name must be of type str; got 3"):
        from_jsonable(Policy, wrong)
    extra = json.loads(json.dumps(data))
    extra["fields"]["shell"] = "rm -rf /"
    with pytest.raises(RecordFormatError, match="shell"):
        from_jsonable(Policy, extra)


# ------------------------------------------------------------------------- opening folders


def _copy(folder, tmp_path, name="copy"):
    target = tmp_path / name
    shutil.copytree(folder, target)
    return target


def test_a_folder_from_before_records_is_refused_with_what_it_lacks(demo_record_folder, tmp_path):
    _, folder = demo_record_folder
    old = _copy(folder, tmp_path)
    (old / "record.json").unlink()
    with pytest.raises(DataError, match=r"before review records: .* no record\.json"):
        open_review(old)
    (old / "report.json").unlink()
    with pytest.raises(DataError, match="not a synthreview review"):
        open_review(old)
    with pytest.raises(DataError, match="does not exist"):
        open_review(tmp_path / "nowhere")


def test_a_damaged_record_json_is_refused_with_a_message(demo_record_folder, tmp_path):
    _, folder = demo_record_folder
    damaged = _copy(folder, tmp_path)
    data = (damaged / "record.json").read_bytes()
    (damaged / "record.json").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=r"record\.json is not JSON"):
        open_review(damaged)


def test_a_zip_of_the_folder_opens_to_the_same_record(demo_record_folder, tmp_path):
    record, folder = demo_record_folder
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"demo/{path.relative_to(folder).as_posix()}")
    assert open_review(buffer.getvalue()).equivalent(record)
    (tmp_path / "review.zip").write_bytes(buffer.getvalue())
    assert open_review(tmp_path / "review.zip").equivalent(record)


# ---------------------------------------------------------------------- verified on opening


@pytest.fixture(scope="module")
def signed(demo_record_folder, tmp_path_factory):
    """The demo record written signed, and the key pair's files."""
    record, _ = demo_record_folder
    root = tmp_path_factory.mktemp("signed")
    keys = generate_keys(root / "keys")
    written = write_record(record, root / "review", key=load_private_key(keys.private.read_bytes()))
    return written, root / "review", keys


def test_a_signed_record_opens_verified_with_its_key(signed):
    record, folder, keys = signed
    opened = open_review(folder, key=keys.public)
    assert opened.verified.ok, opened.verified.reason
    assert opened.verified.keyid == keys.keyid
    assert opened.verified.line == f"verified - signed by {keys.keyid} at 2026-01-01T00:00:00+00:00"
    assert opened.equivalent(record)
    # without a key it reads the same, but is not verified
    bare = open_review(folder, trust=folder.parent)  # a trust folder without keys
    assert not bare.verified.ok
    assert "no public key was given to verify it" in bare.verified.reason


def test_a_trust_folder_verifies_too(signed, tmp_path, monkeypatch):
    _, folder, keys = signed
    trust = tmp_path / "trust"
    trust.mkdir()
    shutil.copy(keys.public, trust / "meeting.pub")
    monkeypatch.setenv(TRUST_ENV, str(trust))
    assert open_review(folder).verified.ok


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("byte", "report.html: sha256 differs"),
        ("missing", "audit.csv: missing"),
        ("unknown key", "neither the given key nor in the trust folder"),
    ],
)
def test_a_changed_record_opens_not_verified_naming_the_file(signed, tmp_path, change, named):
    _, folder, keys = signed
    copy = _copy(folder, tmp_path)
    key = keys.public
    if change == "byte":
        data = bytearray((copy / "report.html").read_bytes())
        data[100] ^= 1
        (copy / "report.html").write_bytes(bytes(data))
    elif change == "missing":
        next(copy.rglob("audit.csv")).unlink()
    else:
        key = generate_keys(tmp_path / "other").public
    opened = open_review(copy, key=key)
    assert not opened.verified.ok
    assert named in opened.verified.reason
    assert opened.verified.line.startswith("NOT VERIFIED: ")


# ------------------------------------------------------------------------- synthreview show


def test_show_starts_the_dashboard_on_localhost_with_the_record(demo_record_folder, monkeypatch):
    _, folder = demo_record_folder
    started = []

    class Server:
        def __init__(self, command, env):
            started.append((command, env))

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(subprocess, "Popen", Server)
    assert main(["show", str(folder), "--port", "8765"]) == 0
    ((command, env),) = started
    assert command[1:4] == ["-m", "streamlit", "run"] and command[4].endswith("app.py")
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
    assert command[command.index("--server.port") + 1] == "8765"
    assert command[command.index("--server.headless") + 1] == "true"
    assert env[OPEN_ENV] == str(folder.resolve()) and OPEN_KEY_ENV not in env


def test_show_refuses_what_it_cannot_open_before_starting(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("a server started"))
    (tmp_path / "report.json").write_text("{}")
    assert main(["show", str(tmp_path)]) == 2
    assert "record.json" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "nowhere")]) == 2
    assert main(["show", str(tmp_path), "--port", "0"]) == 2


# ------------------------------------------------------------------------------ countersign


@pytest.mark.slow
def test_the_meeting_countersigns_and_verify_checks_the_chain(signed, tmp_path, monkeypatch):
    record, folder, keys = signed
    copy = _copy(folder, tmp_path)
    meeting = generate_keys(tmp_path / "meeting")
    trust = tmp_path / "trust"
    trust.mkdir()
    shutil.copy(meeting.public, trust / "meeting.pub")
    monkeypatch.setenv(TRUST_ENV, str(trust))
    name, stated = next(iter(record.decisions.items()))
    other = "release" if stated.outcome != "release" else "do_not_release"
    command = ["countersign", str(copy), "--key", str(meeting.private),
               "--record-key", str(keys.public), "--decision", f"{name}={other}",
               "--reviewer", "Ann Lee:chair", "--reviewer", "Bo Chen:privacy officer"]  # fmt: skip
    assert main(command) == 2  # the meeting differs from the tool: a reason is required
    assert not (copy / "countersign.1.intoto.jsonl").exists()
    db = tmp_path / "register.sqlite"
    reason = f"{name}=the meeting accepts the residual risk"
    assert main([*command, "--reason", reason, "--register", str(db)]) == 0
    (row,) = history(str(db))
    assert (row.candidate, row.outcome, row.signed_decision) == (name, stated.outcome, other)
    assert row.reviewer == "Ann Lee (chair); Bo Chen (privacy officer)"
    assert row.keyid == meeting.keyid
    opened = open_review(copy, key=keys.public)
    assert opened.verified.ok, opened.verified.reason
    signed_off = countersigned_decisions(opened)[name]
    assert signed_off["decision"] == other and signed_off["tool_decision"] == stated.outcome
    assert signed_off["reviewers"][1] == {"name": "Bo Chen", "role": "privacy officer"}
    assert main(["verify", str(copy), "--key", str(keys.public)]) == 0
    # a second countersignature chains onto the first
    assert main([*command[:6], "--decision", f"{name}={stated.outcome}",
                 "--reviewer", "Ann Lee:chair"]) == 0  # fmt: skip
    assert main(["verify", str(copy), "--key", str(keys.public)]) == 0
    # any change to a link fails, naming it
    data = bytearray((copy / "countersign.1.intoto.jsonl").read_bytes())
    data[40] ^= 1
    (copy / "countersign.1.intoto.jsonl").write_bytes(bytes(data))
    assert main(["verify", str(copy), "--key", str(keys.public)]) == 1
    assert "countersign.1.intoto.jsonl" in open_review(copy, key=keys.public).verified.reason


def test_a_record_not_verified_is_never_countersigned(signed, tmp_path):
    _, folder, _ = signed
    stranger = generate_keys(tmp_path / "stranger")
    opened = open_review(folder, key=stranger.public)
    name, stated = next(iter(opened.decisions.items()))
    signoff = meeting_signoff(
        opened, name, decision=stated.outcome, reviewers=[("Ann Lee", "chair")]
    )
    with pytest.raises(ConfigError, match="only a verified record can be countersigned"):
        countersign(opened, [signoff], load_private_key(stranger.private.read_bytes()))


def test_record_json_is_made_once_per_content_and_is_its_fresh_serialisation(
    demo_record_folder,
):
    record, folder = demo_record_folder
    # the folder was written from the bytes the manifest listing made: a fresh serialisation
    fresh = dataclasses.replace(record, serialised=None)
    assert (folder / "record.json").read_bytes() == fresh.record_json()
    assert record.record_json() is record.record_json()
    # a record of other content never reuses the bytes it was copied with
    later = dataclasses.replace(record, generated_at="2027-01-01T00:00:00+00:00")
    assert later.record_json() != record.record_json()
    assert later.record_json() == dataclasses.replace(later, serialised=None).record_json()
    assert dataclasses.replace(record, location="/elsewhere").record_json() is record.record_json()


def test_a_cli_review_serialises_its_record_once(tmp_path, monkeypatch):
    """``record.json`` (about a second at 40,000 rows) is made once per run: listed in the
    manifest, signed, written and registered from the same bytes."""
    real = _frame(160, 0, 0).drop(columns="person")
    tables = {"train": real, "holdout": _frame(150, 1, 0).drop(columns="person"),
              "copy": real.iloc[:100]}  # fmt: skip
    for name, frame in tables.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    keys = generate_keys(tmp_path / "keys")
    made = []
    original = record_module.to_record_json
    monkeypatch.setattr(
        record_module, "to_record_json", lambda value: made.append(1) or original(value)
    )
    out = tmp_path / "review"
    code = main(["review", "--real", str(tmp_path / "train.csv"),
                 "--holdout", str(tmp_path / "holdout.csv"),
                 "--synthetic", str(tmp_path / "copy.csv"), "--sections", "utility", "--quiet",
                 "--sign", str(keys.private), "--register", str(tmp_path / "register.sqlite"),
                 "--out", str(out)])  # fmt: skip
    assert code in (1, 3)  # utility alone never releases
    assert len(made) == 1
    data = (out / "record.json").read_bytes()
    listed = json.loads((out / "manifest.json").read_bytes())["outputs"]["record.json"]
    assert listed == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    assert open_review(out, key=keys.public).verified.ok


@pytest.mark.slow
def test_a_signed_cli_review_opens_verified(tmp_path):
    """``synthreview review --sign`` writes the record: it opens whole and verified."""
    real = _frame(300, 0, 0).drop(columns="person")
    tables = {
        "train": real,
        "holdout": _frame(280, 1, 0).drop(columns="person"),
        "copy": real.iloc[:200],
        "fresh": _frame(250, 2, 0).drop(columns="person"),
    }
    for name, frame in tables.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    keys = generate_keys(tmp_path / "keys")
    out = tmp_path / "review"
    code = main(["review", "--real", str(tmp_path / "train.csv"),
                 "--holdout", str(tmp_path / "holdout.csv"),
                 "--synthetic", str(tmp_path / "copy.csv"),
                 "--synthetic", str(tmp_path / "fresh.csv"),
                 "--embedding", "none", "--max-attack", "150", "--curate", "--quiet",
                 "--sign", str(keys.private), "--out", str(out)])  # fmt: skip
    assert code in (0, 1, 3, 4)
    opened = open_review(out, key=keys.public)
    assert opened.verified.ok, opened.verified.reason
    stated = json.loads((out / "report.json").read_bytes())["decisions"]
    assert {n: d.to_dict() for n, d in opened.decisions.items()} == stated
    assert opened.notices == ()  # the record's verdicts give what report.json states
    assert opened.policy_text is not None and "[rules." in opened.policy_text
    assert main(["verify", str(out), "--key", str(keys.public)]) == 0
