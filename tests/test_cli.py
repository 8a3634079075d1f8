"""The headless review: report.json for demo files, exit code 2 on bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthreview.cli import evaluation_share, main

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
    # utility alone cannot release: the required fidelity and privacy rules are incomplete (3)
    # unless a utility rule already fails (1)
    assert code in (1, 3)
    report = json.loads((out / "report.json").read_text())
    roles = {i["role"]: i for i in report["inputs"]}
    assert set(roles) == {"real", "holdout", "synthetic"}
    assert roles["synthetic"]["name"] == "copy"
    assert roles["real"]["rows"] == 150 and roles["real"]["columns"] == 3
    assert len(roles["real"]["sha256"]) == 64
    assert "copy" in report["candidates"]


@pytest.mark.slow
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


@pytest.fixture(scope="module")
def adult_files(tmp_path_factory):
    """A small Adult split, a fresh real sample and a memorising candidate, as CSV files."""
    from synthreview import demo

    folder = tmp_path_factory.mktemp("adult")
    review = demo.tables(seed=3, n_train=300, n_holdout=600)
    review.real.raw.to_csv(folder / "train.csv", index=False)
    holdout = review.holdout.raw
    holdout.iloc[:300].to_csv(folder / "holdout.csv", index=False)
    holdout.iloc[300:].to_csv(folder / "fresh.csv", index=False)  # never seen by "training"
    review.real.raw.sample(n=300, replace=True, random_state=0).to_csv(
        folder / "memorizer.csv", index=False
    )
    return folder


def _review(folder, out, *candidates, extra=(), quiet=True):
    args = [
        "review",
        "--real",
        str(folder / "train.csv"),
        "--holdout",
        str(folder / "holdout.csv"),
        "--out",
        str(out),
        *(["--quiet"] if quiet else []),
        "--max-attack",
        "300",
        *extra,
    ]
    for name in candidates:
        args += ["--synthetic", str(folder / f"{name}.csv")]
    return main(args)


@pytest.mark.slow
def test_policy_exit_codes_and_release_files(adult_files, tmp_path, capsys):
    # without the utility section the required utility rules are missing: incomplete, exit 3
    # (issue #12: this used to exit 0)
    only = ["--sections", "fidelity", "privacy"]
    assert _review(adult_files, tmp_path / "part", "fresh", extra=only) == 3
    assert "fresh INCOMPLETE: k_marginal" in capsys.readouterr().err
    full = ["--target", "income"]
    assert _review(adult_files, tmp_path / "fresh", "fresh", extra=full) == 0, (
        capsys.readouterr().err
    )
    code = _review(adult_files, tmp_path / "mem", "memorizer", "fresh", extra=["--curate", *full],
                   quiet=False)  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "memorizer FAILS the policy: mia_" in err
    # one fraction over the evaluation and the release of both candidates: it never goes back
    # (issue 39; it restarted at 0 % for the release and again for each candidate's curation)
    fractions = [float(f) for f in re.findall(r"\[\s*([0-9.]+)%\]", err)]
    assert len(fractions) > 10 and fractions == sorted(fractions) and fractions[-1] == 100.0
    assert any(f > 100 * evaluation_share(curate=True, sampled=False) for f in fractions)
    out = tmp_path / "mem"
    for rel in (
        "report.json",
        "report.html",
        "manifest.json",
        "memorizer/audit.csv",
        "memorizer/removed.csv",
    ):
        assert (out / rel).is_file(), rel
    report = json.loads((out / "report.json").read_text())
    assert report["verdicts"]["memorizer"]["overall"] == "fail"
    # a rejected candidate keeps its audit evidence and never ships a curated file (issue 33)
    assert report["decisions"]["memorizer"]["outcome"] == "do_not_release"
    assert not list((out / "memorizer").glob("curated.*"))
    removed = pd.read_csv(out / "memorizer" / "removed.csv", dtype=str, keep_default_na=False)
    audit = pd.read_csv(out / "memorizer" / "audit.csv")
    assert len(removed) == int(audit["removed"].sum())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 0 and "report.json" in json.dumps(manifest["outputs"])


@pytest.mark.slow
def test_same_inputs_and_seed_give_the_same_report(adult_files, tmp_path):
    for run in ("a", "b"):
        _review(
            adult_files,
            tmp_path / run,
            "memorizer",
            extra=["--sections", "fidelity", "privacy", "--curate"],
        )
    a, b = (json.loads((tmp_path / r / "report.json").read_text()) for r in ("a", "b"))
    a.pop("generated_at")
    b.pop("generated_at")
    assert a == b


def test_bad_policy_exits_2_before_computing(adult_files, tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text("[rules.mia_auc]\npass = 'high'\n")
    assert _review(adult_files, tmp_path / "o", "fresh", extra=["--policy", str(policy)]) == 2
    assert not (tmp_path / "o").exists()


def _args(folder, out, *extra):
    return [
        "review",
        "--real",
        str(folder / "train.csv"),
        "--holdout",
        str(folder / "holdout.csv"),
        "--synthetic",
        str(folder / "copy.csv"),
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


@pytest.fixture
def no_computing(monkeypatch):
    """Every section and the embedding raise: a bad option must stop the run before them."""

    def never(*args, **kwargs):
        raise AssertionError("computed despite a bad option")

    for name in ("evaluate_fidelity", "evaluate_privacy", "evaluate_utility", "prepare"):
        monkeypatch.setattr(f"synthreview.review.{name}", never)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "agee"], "option target must be one of the analysed columns"),
        (["--sensitive", "sexx"], "option sensitive must be one of the analysed columns"),
        (["--groups", "hours"], "option groups must be categorical columns"),
        (["--groups", "nope"], "option groups must be categorical columns"),
        (["--formula", "age ~ hourz"], "option formula"),
        (["--formula", "age hours"], "option formula"),
        (["--alpha", "2"], "option --alpha must be in (0, 1)"),
        (["--alpha", "-0.5"], "option --alpha must be in (0, 1)"),
        (["--max-attack", "-5"], "option max_attack must be an integer >= 10"),
        (["--sample-rows", "10"], "option sample_rows must be None (every row) or an integer"),
        (["--device", "cuda:7"], "option device must be"),
        (["--device", "gpu"], "option device must be"),
    ],
)
def test_bad_options_exit_2_before_computing(small_files, tmp_path, capsys, no_computing, extra,
                                             message):  # fmt: skip
    assert main(_args(small_files, tmp_path / "o", *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and "got" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_out_naming_a_file_exits_2(small_files, tmp_path, capsys, no_computing):
    existing = tmp_path / "report.txt"
    existing.write_text("x")
    assert main(_args(small_files, existing)) == 2
    assert "option --out must be a directory we may write" in capsys.readouterr().err


def test_unknown_section_exits_2(small_files, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(_args(small_files, tmp_path / "o", "--sections", "fidelty"))
    assert stop.value.code == 2 and "invalid choice: 'fidelty'" in capsys.readouterr().err


def test_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["review", "--help"])
    out = capsys.readouterr().out
    assert "3  incomplete" in out and "2  bad input" in out


def test_a_failing_section_is_incomplete_and_exits_3(small_files, tmp_path, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("inf in column 'hours'")

    monkeypatch.setattr("synthreview.review.evaluate_privacy", broken)
    code = main(_args(small_files, tmp_path / "o", "--sections", "privacy"))
    err = capsys.readouterr().err
    assert code == 3, err
    assert "INCOMPLETE: mia_auc" in err and "privacy section failed" in err
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["verdicts"]["copy"]["overall"] == "incomplete"
    assert report["decisions"]["copy"]["outcome"] == "incomplete"


@pytest.mark.slow
def test_cli_report_equals_the_library_release_and_a_rejection_keeps_its_evidence(tmp_path):
    """One review, one verdict: report.json from the CLI equals the one the dashboard's export
    path (evaluate + review_release) builds for the same files and options, timestamps aside."""
    from synthreview.io.tables import align, read_table
    from synthreview.options import ReviewOptions
    from synthreview.release.pipeline import review_release
    from synthreview.review import evaluate

    german = pd.read_csv(ROOT.parent / "shared" / "data" / "german_credit.csv")
    german = german.sample(frac=1.0, random_state=0).reset_index(drop=True)
    german.iloc[:300].to_csv(tmp_path / "train.csv", index=False)
    german.iloc[300:600].to_csv(tmp_path / "holdout.csv", index=False)
    rng = np.random.default_rng(0)
    independent = pd.DataFrame(  # every column sampled on its own: joint structure destroyed
        {c: german[c].iloc[:300].to_numpy()[rng.permutation(300)] for c in german.columns}
    )
    independent.to_csv(tmp_path / "gc_independent.csv", index=False)
    out = tmp_path / "cli"
    code = main(
        ["review", "--real", str(tmp_path / "train.csv"),
         "--holdout", str(tmp_path / "holdout.csv"),
         "--synthetic", str(tmp_path / "gc_independent.csv"), "--target", "creditability",
         "--max-attack", "200", "--out", str(out), "--quiet", "--curate"]
    )  # fmt: skip
    cli = json.loads((out / "report.json").read_text())
    assert code == 1 and cli["decisions"]["gc_independent"]["outcome"] == "do_not_release"
    assert (out / "gc_independent" / "audit.csv").is_file()  # the rejection keeps its evidence

    real = read_table(tmp_path / "train.csv", role="real")
    holdout = read_table(tmp_path / "holdout.csv", role="holdout")
    candidate = read_table(tmp_path / "gc_independent.csv", role="synthetic")
    review = align(real, [candidate], holdout=holdout)
    options = ReviewOptions(target="creditability", max_attack=200)
    report = evaluate(review, options=options, seed=0)
    release = review_release(review, report, curate=True)
    library = json.loads(release.files["report.json"])
    for content in (cli, library):
        content.pop("generated_at")
    assert library == cli


@pytest.mark.parametrize(
    ("curate", "sampled", "share"),
    [(False, False, 1 / 1.1), (True, False, 0.5), (False, True, 0.5), (True, True, 1 / 3)],
)
def test_the_evaluation_takes_its_share_of_the_run(curate, sampled, share):
    """Counted in candidate evaluations: an every-row audit and a curated re-evaluation are
    one each, judging and writing the files a tenth."""
    assert evaluation_share(curate=curate, sampled=sampled) == pytest.approx(share)
