"""Real records are never released as synthetic (issue 22, item 6).

A candidate whose rows are records of the holdout (or of the training table) fails the
``real_records`` rule with a reason that says so; a fresh real sample, which repeats real
records only by coincidence, does not; a holdout identical to the real table is refused before
anything is computed.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthreview.cli import main
from synthreview.errors import DataError
from synthreview.io.tables import align, table_from_frame
from synthreview.judgement.policy import load_policy
from synthreview.release.audit import audit_table, holdout_audit, real_records
from synthreview.release.evidence import copy_evidence_for
from synthreview.release.verdicts import copy_excess, judge_audited
from synthreview.review import evaluate


def population(n: int, seed: int) -> pd.DataFrame:
    """People with a continuous column: two different people almost never share a row."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    income = np.round(rng.lognormal(10, 0.6, n), 2)
    return pd.DataFrame(
        {
            "age": age,
            "income": income,
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(["a", "b", "c", "d", "e"], n),
            "label": np.where(income * age / 50 + rng.normal(0, 5000, n) > 25000, "yes", "no"),
        }
    )


def coarse(n: int, seed: int) -> pd.DataFrame:
    """Few categories and no continuous column: most rows repeat other people's rows."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "band": rng.choice(["18-30", "31-50", "51+"], n, p=[0.5, 0.3, 0.2]),
            "smoker": rng.choice(["no", "yes"], n, p=[0.8, 0.2]),
            "region": rng.choice(["n", "s", "e", "w"], n),
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("real_records")
    people = population(900, 0)
    people.iloc[:300].to_csv(folder / "train.csv", index=False)
    people.iloc[300:600].to_csv(folder / "holdout.csv", index=False)
    people.iloc[300:600].to_csv(folder / "is_holdout.csv", index=False)
    people.iloc[600:].to_csv(folder / "fresh.csv", index=False)
    people.iloc[:300].sample(frac=1.0, random_state=3).to_csv(folder / "train_again.csv",
                                                               index=False)  # fmt: skip
    return folder


def _review(folder, *candidates, out):
    args = ["review", "--real", str(folder / "train.csv"), "--holdout"]
    args += [str(folder / "holdout.csv"), "--target", "label", "--out", str(out), "--quiet"]
    for name in candidates:
        args += ["--synthetic", str(folder / f"{name}.csv")]
    return args


@pytest.mark.slow
def test_a_candidate_that_is_the_holdout_is_not_released(files, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(_review(files, "is_holdout", "fresh", out=out))
    assert code == 1
    err = capsys.readouterr().err
    assert "is_holdout: DO NOT RELEASE" in err
    assert "300 rows (100.0%) are records of the real/holdout data: 300 in the holdout" in err
    report = json.loads((out / "report.json").read_text())
    assert report["verdicts"]["is_holdout"]["rules"]["real_records"]["verdict"] == "fail"
    assert report["verdicts"]["fresh"]["rules"]["real_records"]["verdict"] == "pass"
    assert report["decisions"]["fresh"]["outcome"] != "do_not_release"
    # the per-row audit flags every row as a holdout record (and removes it)
    audit = pd.read_csv(out / "is_holdout" / "audit.csv")
    assert audit["drop_holdout_copy"].all() and audit["removed"].all()
    assert not pd.read_csv(out / "fresh" / "audit.csv")["drop_holdout_copy"].any()


def test_identical_real_and_holdout_is_refused_before_computing(files, tmp_path, capsys):
    args = ["review", "--real", str(files / "train.csv"), "--holdout"]
    args += [str(files / "train_again.csv"), "--synthetic", str(files / "fresh.csv")]
    code = main([*args, "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "holds the same 300 rows as real" in err and "no non-members" in err
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_holdout_mostly_made_of_training_rows_carries_a_warning():
    people = population(400, 1)
    real = table_from_frame(people.iloc[:300], name="train")
    mostly = pd.concat([people.iloc[:120], people.iloc[300:380]])  # 60 % training rows
    review = align(real, {"c": people.iloc[300:]}, holdout=table_from_frame(mostly, name="h"))
    warnings = [n for n in review.notices if "holdout rows equal a row of real" in n.message]
    assert len(warnings) == 1 and warnings[0].level == "warning"
    assert warnings[0].message.startswith("60% of the holdout rows")
    half = pd.concat([people.iloc[:50], people.iloc[300:400]])  # a third: no notice
    review = align(real, {"c": people.iloc[300:]}, holdout=table_from_frame(half, name="h"))
    assert not [n for n in review.notices if "holdout rows equal a row of real" in n.message]
    with pytest.raises(DataError, match="holds the same 300 rows"):
        align(real, {"c": people.iloc[300:]}, holdout=people.iloc[:300].iloc[::-1])


def _judged(real: pd.DataFrame, holdout: pd.DataFrame, candidate: pd.DataFrame):
    review = align(real, {"c": candidate}, holdout=holdout)
    report = evaluate(review, sections=["privacy"], seed=0)
    result = report.candidates["c"]
    copies = copy_evidence_for(report, "c")
    audit = audit_table(None, result.privacy, copies=copies)
    reference = holdout_audit(None, result.privacy, copies=copies)
    excess = copy_excess(audit, reference)
    content = report.to_dict()["candidates"]["c"]
    return audit, real_records(audit, reference), judge_audited(load_policy(), content,
                                                                copies=excess)  # fmt: skip


def test_planted_holdout_and_training_rows_are_flagged_row_by_row():
    people = population(700, 2)
    real, holdout = people.iloc[:300], people.iloc[300:600]
    # 10 % holdout records and 5 % training records among 200 new people
    candidate = pd.concat([people.iloc[600:685], holdout.iloc[:10], real.iloc[:5]])
    audit, found, verdicts = _judged(real, holdout, candidate.reset_index(drop=True))
    assert (found.matched, found.in_holdout, found.in_training) == (15, 10, 5)
    assert found.share == pytest.approx(0.15) and 0 < found.lower < 0.15
    assert found.reference == 0.0 and found.n_reference == 300
    assert audit["drop_holdout_copy"].tolist() == [False] * 85 + [True] * 10 + [False] * 5
    assert audit["drop_exact_copy"].tolist() == [False] * 95 + [True] * 5
    rule = verdicts["real_records"]
    assert rule.verdict == "fail" and "15 rows (15.0%) are records of the real/holdout" in (
        rule.message
    )


def test_a_fresh_sample_repeats_real_records_by_coincidence_and_passes():
    # on a table of four coarse columns most rows of any sample repeat real records; the
    # holdout shows the same rate, so a fresh sample is not flagged beyond coincidence
    real, holdout, fresh = coarse(300, 10), coarse(300, 11), coarse(300, 12)
    _, found, verdicts = _judged(real, holdout, fresh)
    assert found.share > 0.9 and found.reference > 0.9
    assert found.excess < 0.005
    assert verdicts["real_records"].verdict == "pass"


def test_without_privacy_evidence_the_rule_is_unmeasured_not_passed():
    audit = pd.DataFrame({"row": [0, 1], "exact_copy": pd.array([pd.NA, pd.NA], "boolean")})
    assert real_records(audit, None) is None
    audit["holdout_copy"] = pd.array([True, False], dtype="boolean")
    found = real_records(audit, None)
    assert found.matched == 1 and np.isnan(found.reference) and np.isnan(found.excess)
