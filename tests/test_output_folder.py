"""Review folders: outputs never touch inputs; written whole or not at all; read only when finished.

The CLI cases run ``synthreview.cli.main`` on a 40-row table with ``--sections fidelity
--embedding none`` (a few seconds); the refusals must come before anything is computed, so
``evaluate`` is replaced by a stand-in that fails the test if it is reached.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import pytest

from synthreview import cli
from synthreview import review as review_module
from synthreview.errors import ConfigError, DataError
from synthreview.release import folder as folder_module
from synthreview.release.folder import (
    MARKER,
    OLD_TAG,
    PARTIAL_TAG,
    check_output_folder,
    existing_review,
    read_finished_review,
    write_review_folder,
)

ADULT = Path(__file__).parent / "data" / "adult_small.csv"
FAST = ["--sections", "fidelity", "--embedding", "none", "--quiet"]


class ReachedComputation(BaseException):
    """Raised by the stand-in for ``evaluate``."""


@pytest.fixture
def no_computing(monkeypatch):
    """Fail the test if the CLI starts computing."""

    def stop(*args, **kwargs):
        raise ReachedComputation

    monkeypatch.setattr(review_module, "evaluate", stop)
    if hasattr(cli, "evaluate"):
        monkeypatch.setattr(cli, "evaluate", stop)


def _copy(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ADULT, path)
    return path


def _argv(real: Path, synthetic: Path, out: Path, *extra: str) -> list[str]:
    paths = ["--real", str(real), "--synthetic", str(synthetic), "--out", str(out)]
    return ["review", *paths, *FAST, *extra]


def _tree(folder: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``folder``."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if PARTIAL_TAG in p.name or OLD_TAG in p.name)


def _error(capsys) -> str:
    return capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# outputs never touch inputs (refused before computing, no input byte changed)


def test_synthetic_inside_out_is_refused_before_computing(tmp_path, capsys, no_computing):
    out = tmp_path / "OUT"
    synthetic = _copy(out / "curated" / "curated.csv")
    real = _copy(tmp_path / "real.csv")
    before = synthetic.read_bytes()
    code = cli.main(_argv(real, synthetic, out, "--curate"))
    assert code == 2
    message = _error(capsys)
    assert "--out must not hold an input" in message
    assert "curated.csv" in message and "choose another --out" in message
    assert synthetic.read_bytes() == before
    assert _tree(out) == {"curated/curated.csv": hashlib.sha256(before).hexdigest()}


def test_real_named_like_an_output_is_refused_before_computing(tmp_path, capsys, no_computing):
    out = tmp_path / "OUT"
    real = _copy(out / "report.json")
    synthetic = _copy(tmp_path / "synthetic.csv")
    before = real.read_bytes()
    assert cli.main(_argv(real, synthetic, out)) == 2
    message = _error(capsys)
    assert "the review writes 'report.json' there" in message
    assert real.read_bytes() == before


def test_input_reached_through_a_symlinked_out_is_refused(tmp_path, capsys, no_computing):
    data = tmp_path / "data"
    real = _copy(data / "real.csv")
    (tmp_path / "link").symlink_to(data, target_is_directory=True)
    assert cli.main(_argv(real, _copy(tmp_path / "s.csv"), tmp_path / "link")) == 2
    assert "must not hold an input" in _error(capsys)
    assert real.read_bytes() == ADULT.read_bytes()


def test_out_equal_to_an_input_folder_or_inside_one_is_refused(tmp_path, no_computing):
    real = _copy(tmp_path / "in" / "real.csv")
    with pytest.raises(ConfigError, match="not an input"):
        check_output_folder(real.parent, inputs=[real.parent])
    with pytest.raises(ConfigError, match="inside an input folder"):
        check_output_folder(real.parent / "out", inputs=[real.parent])


# ---------------------------------------------------------------------------------------------
# --out that cannot be written: refused before computing


@pytest.mark.parametrize("kind", ["symlink_loop", "proc", "file", "under_file"])
def test_unusable_out_is_refused_before_computing(kind, tmp_path, capsys, no_computing):
    real, synthetic = _copy(tmp_path / "real.csv"), _copy(tmp_path / "s.csv")
    if kind == "symlink_loop":
        (tmp_path / "a").symlink_to(tmp_path / "b")
        (tmp_path / "b").symlink_to(tmp_path / "a")
        out, expected = tmp_path / "a", "symbolic link loop"
    elif kind == "proc":
        out, expected = Path("/proc/x"), "under /proc"
    elif kind == "file":
        (tmp_path / "notes.txt").write_text("")
        out, expected = tmp_path / "notes.txt", "an existing file"
    else:
        out, expected = tmp_path / "s.csv" / "sub", "is a file"
    assert cli.main(_argv(real, synthetic, out)) == 2
    message = _error(capsys)
    assert "option --out" in message and expected in message
    assert real.read_bytes() == synthetic.read_bytes() == ADULT.read_bytes()


def test_low_free_space_is_refused_before_computing(tmp_path, capsys, monkeypatch, no_computing):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 2**20, 2**20))
    real, synthetic = _copy(tmp_path / "real.csv"), _copy(tmp_path / "s.csv")
    assert cli.main(_argv(real, synthetic, tmp_path / "out")) == 2
    message = _error(capsys)
    assert "free on its file system" in message and "1.0 MB free" in message
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# earlier reviews: refused without --overwrite, replaced whole with it


@pytest.fixture
def earlier_review(tmp_path):
    """A finished review of candidate ``first`` in ``tmp_path / "out"`` (by the CLI)."""
    real = _copy(tmp_path / "real.csv")
    out = tmp_path / "out"
    code = cli.main(_argv(real, _copy(tmp_path / "first.csv"), out))
    assert code in (0, 1, 3)
    assert (out / "first" / "audit.csv").is_file()
    return out


def test_earlier_review_is_refused_without_overwrite(earlier_review, tmp_path, capsys):
    before = _tree(earlier_review)
    capsys.readouterr()
    code = cli.main(_argv(tmp_path / "real.csv", _copy(tmp_path / "second.csv"), earlier_review))
    assert code == 2
    message = _error(capsys)
    assert "holds an earlier review" in message and "pass --overwrite" in message
    assert "first/audit.csv" in message
    assert _tree(earlier_review) == before


def test_overwrite_replaces_the_earlier_review_whole(earlier_review, tmp_path):
    second = _copy(tmp_path / "second.csv")
    code = cli.main(_argv(tmp_path / "real.csv", second, earlier_review, "--overwrite"))
    assert code in (0, 1, 3)
    assert not (earlier_review / "first").exists()  # the old candidate folder is gone
    finished = read_finished_review(earlier_review)
    files = set(_tree(earlier_review))
    assert {f.path for f in finished.files} == files - {MARKER}
    manifest = json.loads((earlier_review / "manifest.json").read_text())
    assert set(manifest["outputs"]) == files - {MARKER, "manifest.json"}
    assert "second/audit.csv" in files
    assert _leftovers(tmp_path) == []


def test_overwrite_never_deletes_a_file_no_review_wrote(earlier_review, tmp_path, capsys):
    notes = earlier_review / "notes.txt"
    notes.write_text("mine")
    before = _tree(earlier_review)
    capsys.readouterr()
    code = cli.main(
        [*_argv(tmp_path / "real.csv", _copy(tmp_path / "s.csv"), earlier_review), "--overwrite"]
    )
    assert code == 2
    message = _error(capsys)
    assert "files no review wrote: notes.txt" in message
    assert _tree(earlier_review) == before


def test_a_folder_that_is_no_review_is_refused_even_with_overwrite(tmp_path, capsys, no_computing):
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "thesis.tex").write_text("years of work")
    real, synthetic = _copy(tmp_path / "real.csv"), _copy(tmp_path / "s.csv")
    assert cli.main([*_argv(real, synthetic, out), "--overwrite"]) == 2
    message = _error(capsys)
    assert "sub/thesis.tex" in message and "even --overwrite leaves it" in message
    assert (out / "sub" / "thesis.tex").read_text() == "years of work"


def test_an_empty_out_folder_is_used(tmp_path):
    out = tmp_path / "out"
    (out / "empty" / "folders").mkdir(parents=True)
    write_review_folder(out, {"report.json": b"{}"})
    assert read_finished_review(out).report() == {}


def test_a_review_without_marker_is_replaced_by_its_manifest(tmp_path):
    """A folder from before the marker: its manifest lists what the review wrote."""
    out = tmp_path / "out"
    (out / "a").mkdir(parents=True)
    (out / "a" / "audit.csv").write_bytes(b"x\n")
    (out / "report.json").write_bytes(b"{}")
    outputs = {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        for name, data in {"a/audit.csv": b"x\n", "report.json": b"{}"}.items()
    }
    (out / "manifest.json").write_text(json.dumps({"outputs": outputs}))
    assert existing_review(out).replaceable
    with pytest.raises(DataError, match=r"COMPLETE\.json is missing"):
        read_finished_review(out)
    write_review_folder(out, {"report.json": b"[]"}, overwrite=True)
    assert _tree(out).keys() == {"report.json", MARKER}


def test_a_hard_linked_input_is_never_deleted(tmp_path):
    out = tmp_path / "out"
    write_review_folder(out, {"report.json": b"{}", "c/curated.csv": b"a\n1\n"})
    os.link(out / "c" / "curated.csv", tmp_path / "input.csv")
    found = existing_review(out, inputs=[tmp_path / "input.csv"])
    assert found is not None and found.unlisted == ("c/curated.csv",)
    with pytest.raises(ConfigError, match=r"'c/curated\.csv' is the same file as input"):
        check_output_folder(out, inputs=[tmp_path / "input.csv"], overwrite=True)


# ---------------------------------------------------------------------------------------------
# a failed write leaves the old folder and nothing that looks finished


@pytest.mark.parametrize("fail_at", [1, 3])
def test_a_write_failure_leaves_the_earlier_review_untouched(
    earlier_review, tmp_path, capsys, monkeypatch, fail_at
):
    before = _tree(earlier_review)
    real_write = folder_module._write_synced
    calls = []

    def disk_full_after_a_few(path, data):
        calls.append(path)
        if len(calls) == fail_at:
            path.write_bytes(data[: len(data) // 2])  # a truncated file, then the error
            raise OSError(28, "No space left on device", str(path))
        real_write(path, data)

    monkeypatch.setattr(folder_module, "_write_synced", disk_full_after_a_few)
    capsys.readouterr()
    code = cli.main(
        [*_argv(tmp_path / "real.csv", _copy(tmp_path / "s.csv"), earlier_review), "--overwrite"]
    )
    assert code == 2
    assert "No space left on device" in _error(capsys)
    assert _tree(earlier_review) == before
    assert read_finished_review(earlier_review).folder == earlier_review
    assert _leftovers(tmp_path) == []


def test_a_write_failure_into_a_new_folder_leaves_nothing(tmp_path, monkeypatch):
    def fail(path, data):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(folder_module, "_write_synced", fail)
    with pytest.raises(OSError, match="No space"):
        write_review_folder(tmp_path / "out", {"report.json": b"{}"})
    assert list(tmp_path.iterdir()) == []


def test_a_failed_swap_puts_the_earlier_review_back(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_review_folder(out, {"report.json": b"{}", "a/audit.csv": b"old"})
    before = _tree(out)
    monkeypatch.setattr(folder_module, "_exchange", lambda first, second: False)
    real_rename = os.rename

    def rename(src, dst):
        if PARTIAL_TAG in Path(src).name and Path(dst) == out:
            raise OSError(5, "Input/output error")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError, match="Input/output"):
        write_review_folder(out, {"report.json": b"[]"}, overwrite=True)
    assert _tree(out) == before
    assert _leftovers(tmp_path) == []


def test_the_two_rename_fallback_replaces_the_review(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_review_folder(out, {"report.json": b"{}", "a/audit.csv": b"old"})
    monkeypatch.setattr(folder_module, "_exchange", lambda first, second: False)
    write_review_folder(out, {"report.json": b"[]"}, overwrite=True)
    assert _tree(out).keys() == {"report.json", MARKER}
    assert _leftovers(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# only a finished folder reads as finished


@pytest.fixture
def finished(tmp_path):
    out = tmp_path / "out"
    write_review_folder(out, {"report.json": b'{"a": 1}', "c/audit.csv": b"row\n" * 100})
    return out


def test_a_finished_review_reads(finished):
    review = read_finished_review(finished)
    assert review.report() == {"a": 1}
    assert [f.path for f in review.files] == ["c/audit.csv", "report.json"]
    assert json.loads((finished / MARKER).read_text())["files"]["report.json"]["bytes"] == 8


def test_a_truncated_file_is_refused(finished):
    path = finished / "c" / "audit.csv"
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(DataError, match=r"truncated or changed: c/audit.csv"):
        read_finished_review(finished)


def test_a_changed_file_of_the_same_size_is_refused(finished):
    (finished / "report.json").write_bytes(b'{"a": 2}')
    with pytest.raises(DataError, match=r"truncated or changed: report.json"):
        read_finished_review(finished)


def test_a_missing_or_extra_file_is_refused(finished):
    (finished / "stale").mkdir()
    (finished / "stale" / "curated.csv").write_text("old run")
    with pytest.raises(DataError, match=r"not written by the review: stale/curated.csv"):
        read_finished_review(finished)
    shutil.rmtree(finished / "stale")
    (finished / "c" / "audit.csv").unlink()
    with pytest.raises(DataError, match=r"missing: c/audit.csv"):
        read_finished_review(finished)


def test_a_folder_without_marker_is_refused(finished):
    (finished / MARKER).unlink()
    with pytest.raises(DataError, match=r"COMPLETE\.json is missing"):
        read_finished_review(finished)


def test_a_temporary_folder_is_never_read_as_finished(finished, tmp_path):
    """Even a complete copy left under the temporary name (killed just before the rename)."""
    partial = tmp_path / f".out{PARTIAL_TAG}abc123"
    shutil.copytree(finished, partial)
    with pytest.raises(DataError, match="temporary folder"):
        read_finished_review(partial)


def test_file_names_that_escape_the_folder_are_refused(tmp_path):
    for name in ("../x", "/etc/passwd", "a/../../x", MARKER):
        with pytest.raises(ValueError, match="relative"):
            write_review_folder(tmp_path / "out", {name: b""})
    assert not (tmp_path / "out").exists()


def test_the_folder_gets_the_usual_mode_not_the_temporary_one(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    write_review_folder(tmp_path / "out", {"report.json": b"{}"})
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o777 & ~mask


def test_leftover_temporary_folders_are_named_not_removed(tmp_path, capsys, no_computing):
    left = tmp_path / f".out{PARTIAL_TAG}dead1234"
    left.mkdir()
    (left / "report.json").write_text("{")
    real, synthetic = _copy(tmp_path / "real.csv"), _copy(tmp_path / "s.csv")
    with pytest.raises(ReachedComputation):
        cli.main(_argv(real, synthetic, tmp_path / "out"))
    assert f"{left.name}' is the temporary folder of an interrupted review" in _error(capsys)
    assert (left / "report.json").read_text() == "{"


_CHILD = """
import sys, time
from pathlib import Path
from synthreview.release import folder

real_write = folder._write_synced
written = []

def write_then_hang(path, data):
    real_write(path, data)
    written.append(path)
    if len(written) == 3:  # the parent kills us here, mid-write
        time.sleep(120)

folder._write_synced = write_then_hang
files = {f"c{i}/audit.csv": b"row\\n" * 1000 for i in range(6)}
folder.write_review_folder(Path(sys.argv[1]), {"report.json": b"[]", **files}, overwrite=True)
"""


def test_kill_9_while_writing_leaves_the_earlier_review(finished, tmp_path):
    """A real SIGKILL with three files of the new review on disk: --out is the old review."""
    before = _tree(finished)
    root = Path(__file__).resolve().parents[1]
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(finished)], cwd=root)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            staging = [p for p in tmp_path.iterdir() if PARTIAL_TAG in p.name]
            if staging and sum(1 for p in staging[0].rglob("*") if p.is_file()) >= 3:
                break
            time.sleep(0.01)
        assert child.poll() is None, "the writer ended before it could be killed"
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert _tree(finished) == before
    assert read_finished_review(finished).report() == {"a": 1}
    (left,) = _leftovers(tmp_path)
    with pytest.raises(DataError, match="temporary folder"):
        read_finished_review(tmp_path / left)
    with pytest.raises(DataError, match=r"COMPLETE\.json is missing"):
        read_finished_review(shutil.copytree(tmp_path / left, tmp_path / "renamed"))
