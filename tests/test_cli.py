"""The headless review: report.json for demo files, exit code 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from synthreview.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    rng = pd.Series(range(300))
    real = pd.DataFrame(
        {"age": 20 + rng % 50, "sex": ["F", "M", "M"] * 100, "hours": 30 + (rng * 7) % 40}
    )
    real.iloc[:150].to_csv(folder / "train.csv", index=False)
    real.iloc[150:].to_csv(folder / "holdout.csv", index=False)
    real.sample(frac=0.5, random_state=1).to_csv(folder / "copy.csv", index=False)
    return folder


def test_report_has_inputs_with_digests(small_files, tmp_path):
    out = tmp_path / "out"
    code = main(
        [
            "review",
            "--real",
            str(small_files / "train.csv"),
            "--holdout",
            str(small_files / "holdout.csv"),
            "--synthetic",
            str(small_files / "copy.csv"),
            "--sections",
            "utility",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code in (0, 1)
    report = json.loads((out / "report.json").read_text())
    roles = {i["role"]: i for i in report["inputs"]}
    assert set(roles) == {"real", "holdout", "synthetic"}
    assert roles["synthetic"]["name"] == "copy"
    assert roles["real"]["rows"] == 150 and roles["real"]["columns"] == 3
    assert len(roles["real"]["sha256"]) == 64
    assert "copy" in report["candidates"]


def test_bad_input_exits_2_with_the_message(small_files, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("age,colour\n1,red\n2,blue\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthreview",
            "review",
            "--real",
            str(small_files / "train.csv"),
            "--synthetic",
            str(bad),
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "missing columns" in proc.stderr
    assert not (tmp_path / "o" / "report.json").exists()


def test_missing_file_exits_2(tmp_path):
    assert (
        main(
            [
                "review",
                "--real",
                str(tmp_path / "nope.csv"),
                "--synthetic",
                str(tmp_path / "nope2.csv"),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
