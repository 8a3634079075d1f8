"""Only what may ship is shipped (issue 33, item 6): the CLI's review folder.

A curated file (``NAME/curated.csv``, ``curated.parquet``) is written only for a candidate whose
decision is release or release after curation; a rejected candidate keeps its audit evidence
(``audit.csv``, ``removed.csv``, ``report.json``) and its signed folder still verifies. The
dashboard's record and ZIP: ``tests/test_page_audit.py``; the file builder:
``tests/test_export.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthreview.cli import main
from synthreview.judgement.policy import load_policy
from synthreview.release.folder import MARKER
from synthreview.release.signing import ENVELOPE_NAME, generate_keys

pytestmark = pytest.mark.slow  # a signed review with curated candidates


def policy_text(*required: str) -> str:
    """A policy file's text: the shipped rules, every one advisory except ``required``."""
    return '[policy]\nname = "test"\n' + "".join(
        f"[rules.{n}]\nrequired = {str(n in required).lower()}\n" for n in load_policy().rules
    )


def _draw(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "hours": rng.normal(40, 8, n).round(1),
            "sex": rng.choice(["F", "M"], n),
            "city": rng.choice(list("ABCDE"), n),
        }
    )


@pytest.fixture(scope="module")
def signed_review(tmp_path_factory):
    """A signed review with ``--curate`` of a fresh sample and a verbatim copy of training.

    The policy requires the copy rule alone (every other rule advisory), so the fresh sample
    is released and the copy, whose curated set is empty, is not.
    """
    folder = tmp_path_factory.mktemp("ships")
    rng = np.random.default_rng(0)
    train, holdout, fresh = _draw(rng, 150), _draw(rng, 150), _draw(rng, 150)
    for name, frame in {"train": train, "holdout": holdout, "fresh": fresh, "copy": train}.items():
        frame.to_csv(folder / f"{name}.csv", index=False)
    policy = folder / "policy.toml"
    policy.write_text(policy_text("audit_copies"))
    keys = generate_keys(folder / "keys")
    code = main(
        ["review", "--real", str(folder / "train.csv"), "--holdout", str(folder / "holdout.csv"),
         "--synthetic", str(folder / "fresh.csv"), "--synthetic", str(folder / "copy.csv"),
         "--embedding", "none", "--max-attack", "150", "--curate", "--policy", str(policy),
         "--sign", str(keys.private), "--out", str(folder / "review"), "--quiet"]
    )  # fmt: skip
    assert code == 1, "the copy is not released"
    return folder


def test_a_rejected_candidate_keeps_its_evidence_and_ships_no_curated_file(signed_review):
    out = signed_review / "review"
    report = json.loads((out / "report.json").read_text())
    outcomes = {n: d["outcome"] for n, d in report["decisions"].items()}
    assert outcomes == {"fresh": "release", "copy": "do_not_release"}
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"copy/audit.csv", "copy/removed.csv"} <= written
    assert {"fresh/curated.csv", "fresh/curated.parquet", "fresh/removed.csv"} <= written
    assert not [n for n in written if n.startswith("copy/curated.")]
    assert set(report["curation"]) == {"fresh", "copy"}  # the copy's curation is evidence
    # a file not written is not listed, and the signed folder verifies
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["outputs"]) == written - {"manifest.json", ENVELOPE_NAME, MARKER}
    assert main(["verify", str(out), "--key", str(signed_review / "keys" / "synthreview.pub")]) == 0
