"""Claim test (issue 25 item 2): a claimed (ε, δ)-DP guarantee against the membership attacks.

A noisy copy of the training rows contradicts ε = 1; a fresh real sample (German credit rows
disjoint from training and holdout) is consistent with ε = 1; the phantom share is reported;
the Clopper-Pearson arithmetic is checked by hand.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.io.tables import align
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.metrics.privacy.attack_stats import summarize_attack
from synthreview.metrics.privacy.dp_claim import certified_epsilon, dp_claim_test
from synthreview.options import ReviewOptions, validate_options
from synthreview.review import evaluate
from tests.credit_split import german_credit_split, noisy_copy


def test_certified_epsilon_by_hand():
    # 90 of 100 members and 10 of 100 non-members flagged; each bound one-sided at 97.5 %
    eps, tpr_lo, fpr_hi = certified_epsilon(90, 100, 10, 100, delta=0.0, alpha=0.025)
    lo, hi = beta.ppf(0.025, 90, 11), beta.ppf(0.975, 11, 90)
    assert tpr_lo == pytest.approx(lo) and fpr_hi == pytest.approx(hi)
    assert lo == pytest.approx(0.8238, abs=1e-4) and hi == pytest.approx(0.1762, abs=1e-4)
    expected = max(math.log(lo / hi), math.log((1 - hi) / (1 - lo)))
    assert eps == pytest.approx(expected) and eps == pytest.approx(1.5422, abs=1e-4)
    # δ is subtracted from both numerators
    eps_d, *_ = certified_epsilon(90, 100, 10, 100, delta=0.1, alpha=0.025)
    assert eps_d == pytest.approx(math.log((lo - 0.1) / hi))
    # nothing flagged beyond chance certifies nothing
    assert certified_epsilon(10, 100, 10, 100, delta=0.0, alpha=0.025)[0] == 0.0


def _attack(name, members, others):
    scores = np.r_[members, others].astype(float)
    is_member = np.r_[np.ones(len(members), bool), np.zeros(len(others), bool)]
    return summarize_attack(name, scores, is_member, n_bootstrap=10)


def test_bonferroni_counts_every_attack_and_threshold():
    rng = np.random.default_rng(0)
    null = _attack("null", rng.normal(size=300), rng.normal(size=300))
    leak = _attack("leak", rng.normal(3, 1, size=300), rng.normal(size=300))
    result = dp_claim_test([null, leak], epsilon=1.0, n_thresholds=10)
    assert result.n_tests == 20
    assert result.contradicted and result.contradicting == ("leak",) and result.attack == "leak"
    assert result.excess == pytest.approx(result.certified_epsilon - 1.0)
    # the reported operating point's bounds give the certified ε back
    alpha = 0.05 / (2 * 20)
    tp, fp = round(result.tpr * 300), round(result.fpr * 300)
    again, lo, hi = certified_epsilon(tp, 300, fp, 300, delta=0.0, alpha=alpha)
    assert again == pytest.approx(result.certified_epsilon)
    assert (lo, hi) == pytest.approx((result.tpr_lower, result.fpr_upper))
    # a claim large enough is consistent with the same evidence
    assert not dp_claim_test([null, leak], epsilon=10.0, n_thresholds=10).contradicted
    alone = dp_claim_test([null], epsilon=0.5)
    assert not alone.contradicted and alone.certified_epsilon == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": -1.0}, "epsilon must be a finite number >= 0"),
        ({"epsilon": math.inf}, "epsilon must be a finite number >= 0"),
        ({"epsilon": 1.0, "delta": 1.0}, r"delta must be a number in \[0, 1\)"),
        ({"epsilon": 1.0, "n_thresholds": 0}, "n_thresholds must be an integer >= 1"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    rng = np.random.default_rng(0)
    attack = _attack("a", rng.normal(size=20), rng.normal(size=20))
    with pytest.raises(ValueError, match=message):
        dp_claim_test([attack], **kwargs)


@pytest.fixture(scope="module")
def credit():
    """German credit: 300 training, 300 holdout; a fresh sample and a noisy copy, ε = 1 claimed."""
    n = 300
    split = german_credit_split(n)
    real, holdout, fresh, schema = split.real, split.holdout, split.fresh, split.schema
    noisy = noisy_copy(real.frame, schema.numeric, 2)
    review = align(real, {"fresh": fresh, "noisy": noisy}, holdout=holdout, schema=schema)
    options = ReviewOptions(max_attack=n, claimed_epsilon=1.0)
    report = evaluate(review, sections=["privacy"], options=options, seed=0)
    return review, {name: c.to_dict() for name, c in report.candidates.items()}


def test_a_noisy_copy_contradicts_epsilon_one(credit):
    _, content = credit
    claim = content["noisy"]["privacy"]["dp_claim"]
    assert claim["contradicted"] and claim["certified_epsilon"] > 1.0, claim
    assert claim["claimed_epsilon"] == 1.0 and claim["contradicting"]
    rule = apply_policy(load_policy(), content["noisy"])["dp_claim"]
    assert rule.verdict == "fail"
    assert rule.value == pytest.approx(claim["certified_epsilon"] - 1.0)
    assert "contradicts the claim" in rule.reason and "claimed ε = 1" in rule.reason
    assert claim["phantom_share"] < 0.2  # a copy's flagged members are real leaks


def test_a_fresh_real_sample_is_consistent_with_epsilon_one(credit):
    _, content = credit
    claim = content["fresh"]["privacy"]["dp_claim"]
    assert not claim["contradicted"] and claim["excess"] == 0.0, claim
    assert claim["certified_epsilon"] < 1.0
    rule = apply_policy(load_policy(), content["fresh"])["dp_claim"]
    assert rule.verdict == "pass" and "consistent with the claim" in rule.reason
    # the phantom share is reported: a fresh sample's flagged members are mostly phantoms
    assert 0.0 <= claim["phantom_share"] <= 1.0 and claim["phantom_share"] > 0.5
    assert "phantom share" in rule.reason


def test_without_a_claim_the_rule_does_not_apply(credit):
    _, content = credit
    fresh = dict(content["fresh"])
    fresh["privacy"] = {k: v for k, v in fresh["privacy"].items() if k != "dp_claim"}
    rule = apply_policy(load_policy(), fresh)["dp_claim"]
    assert rule.verdict == "n/a" and "no claimed ε" in rule.reason


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"claimed_epsilon": -0.5}, "option claimed_epsilon must be a finite number >= 0"),
        ({"claimed_epsilon": math.nan}, "option claimed_epsilon must be a finite number >= 0"),
        ({"claimed_epsilon": 1.0, "claimed_delta": 1.5}, "option claimed_delta must be"),
        ({"claimed_delta": 1e-5}, "option claimed_epsilon must be given when claimed_delta"),
    ],
)
def test_options_are_checked(credit, options, message):
    review, _ = credit
    with pytest.raises(ConfigError, match=message):
        validate_options(review, ReviewOptions(**options))


def test_cli_refuses_a_bad_claim_with_exit_2(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 120), "hours": rng.integers(10, 60, 120),
                          "sex": ["F", "M"] * 60})  # fmt: skip
    for i, name in enumerate(("train", "holdout", "synthetic")):
        frame.iloc[i * 40 : (i + 1) * 40].to_csv(tmp_path / f"{name}.csv", index=False)
    args = ["review", "--real", str(tmp_path / "train.csv"), "--holdout",
            str(tmp_path / "holdout.csv"), "--synthetic", str(tmp_path / "synthetic.csv"),
            "--out", str(tmp_path / "out"), "--quiet", "--claimed-epsilon", "-1"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "option claimed_epsilon must be a finite number >= 0" in err and "got -1.0" in err
    assert not (tmp_path / "out").exists()


def test_cli_tests_a_claim_and_files_it(tmp_path):
    """``--claimed-epsilon 1 --claimed-delta 1e-5`` on a small table: the review runs (no exit
    2) and report.json carries the claim test with its δ, judged by rule dp_claim; report.html
    files it in its own block."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 120), "hours": rng.integers(10, 60, 120),
                          "sex": ["F", "M"] * 60})  # fmt: skip
    for i, name in enumerate(("train", "holdout", "synthetic")):
        frame.iloc[i * 40 : (i + 1) * 40].to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "out"
    args = ["review", "--real", str(tmp_path / "train.csv"), "--holdout",
            str(tmp_path / "holdout.csv"), "--synthetic", str(tmp_path / "synthetic.csv"),
            "--out", str(out), "--quiet", "--embedding", "none", "--sections", "privacy",
            "--claimed-epsilon", "1", "--claimed-delta", "1e-5"]  # fmt: skip
    # privacy alone cannot release (the required fidelity rules are incomplete: 3) unless a
    # privacy rule fails (1); never a refusal of the input (2)
    assert main(args) in (1, 3)
    report = json.loads((out / "report.json").read_text())
    claim = report["candidates"]["synthetic"]["privacy"]["dp_claim"]
    assert claim["claimed_epsilon"] == 1.0 and claim["claimed_delta"] == 1e-5
    assert claim["n_tests"] > 0 and claim["certified_epsilon"] >= 0.0
    assert report["options"]["claimed_delta"] == 1e-5
    rule = report["verdicts"]["synthetic"]["rules"]["dp_claim"]
    assert rule["verdict"] in ("pass", "fail") and "claimed ε = 1, δ = 1e-05" in rule["reason"]
    assert "Claimed privacy guarantee" in (out / "report.html").read_text()
