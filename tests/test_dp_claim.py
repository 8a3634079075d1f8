"""Claim test (issue 25 item 2): a claimed (ε, δ)-DP guarantee against the membership attacks.

A noisy copy of the training rows contradicts ε = 1; a fresh real sample (German credit rows
disjoint from training and holdout) is consistent with ε = 1; the phantom share is reported;
the Clopper-Pearson arithmetic is checked by hand. Issue 35 item 6: 15 verbatim training
records contradict a claimed ε = 0 (the verbatim-copy event), a fresh sample does not.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.io.persons import with_person
from synthreview.io.tables import align
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.metrics.privacy.attack_stats import summarize_attack
from synthreview.metrics.privacy.dp_claim import (
    VerbatimEvents,
    certified_epsilon,
    dp_claim_test,
    verbatim_events,
)
from synthreview.options import ReviewOptions, validate_options
from synthreview.review import evaluate
from tests.credit_split import german_credit_split, noisy_copy

#: the first 120 people (960 rows) of the NLSY wage panel (tests/data/README.md)
PANEL = Path(__file__).resolve().parent / "data" / "wage_panel_120.csv"


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


# --- issue 35 item 6: verbatim records are an event ε-DP bounds, ε = 0 included ----------------


def test_verbatim_events_count_units_by_hand():
    real = np.array([1, 2, 3, 4, 5, 6], np.uint64)
    holdout = np.array([7, 8, 9, 3], np.uint64)  # 3: a holdout row that repeats a training row
    synthetic = np.array([2, 3, 3, 42], np.uint64)
    rows = verbatim_events(real, holdout, synthetic)
    assert (rows.copied_members, rows.n_members) == (2, 6)  # rows 2 and 3
    assert (rows.copied_nonmembers, rows.n_nonmembers) == (1, 4) and rows.unit == "row"
    # by person: a person is copied when any of the person's rows is
    people = verbatim_events(real, holdout, synthetic,
                             real_groups=np.array(["a", "a", "b", "b", "c", "c"]),
                             holdout_groups=np.array(["x", "x", "y", "y"]))  # fmt: skip
    assert (people.copied_members, people.n_members) == (2, 3)  # a (row 2) and b (row 3)
    assert (people.copied_nonmembers, people.n_nonmembers) == (1, 2) and people.unit == "person"
    with pytest.raises(ValueError, match="real_groups and holdout_groups must be given together"):
        verbatim_events(real, holdout, synthetic, real_groups=np.zeros(6))


@pytest.mark.parametrize("claimed", [0.0, 0.1, 0.5])
def test_fifteen_verbatim_records_contradict_a_small_epsilon_by_hand(claimed):
    # 15 of 300 training rows copied, none of 300 holdout rows: the event "copied" holds half
    # the family's α, each of its two bounds one-sided at 1 - 0.05 / 4
    rng = np.random.default_rng(0)
    null = _attack("null", rng.normal(size=300), rng.normal(size=300))
    events = VerbatimEvents(15, 300, 0, 300)
    result = dp_claim_test([null], epsilon=claimed, verbatim=events)
    lo = beta.ppf(0.0125, 15, 286)
    hi = 1 - 0.0125 ** (1 / 300)  # Clopper-Pearson upper bound of 0 of 300
    assert result.verbatim_epsilon == pytest.approx(math.log(lo / hi))
    assert result.verbatim_epsilon == pytest.approx(0.5795, abs=1e-4)
    assert result.contradicted and result.contradicting == ("verbatim_copies",)
    assert result.attack == "verbatim_copies" and result.certified_epsilon > claimed
    assert (result.tpr_lower, result.fpr_upper) == pytest.approx((lo, hi))
    assert result.n_tests == 21 and result.disclosures == 15 and result.phantom_share == 0.0
    # the attacks' points share the other half of α
    alone = dp_claim_test([null], epsilon=claimed)
    assert not alone.contradicted and math.isnan(alone.verbatim_epsilon)
    # ε = 0.58 is consistent with the same evidence; so is any ε when the holdout is copied alike
    assert not dp_claim_test([null], epsilon=0.6, verbatim=events).contradicted
    alike = dp_claim_test([null], epsilon=0.0, verbatim=VerbatimEvents(15, 300, 15, 300))
    assert not alike.contradicted and alike.verbatim_epsilon == 0.0


@pytest.fixture(scope="module")
def verbatim_claims():
    """German credit, 300 rows a side: the fresh sample, and the fresh sample with 15 of its
    rows replaced by training rows; ε = 0 claimed."""
    split = german_credit_split(300)
    copied = split.fresh.frame.copy()
    rows = np.random.default_rng(0).choice(300, 15, replace=False)
    copied.iloc[rows] = split.real.frame.iloc[rows].to_numpy()
    review = align(split.real, {"fresh": split.fresh, "verbatim": copied}, holdout=split.holdout,
                   schema=split.schema)  # fmt: skip
    options = ReviewOptions(max_attack=300, claimed_epsilon=0.0)
    report = evaluate(review, sections=["privacy"], options=options, seed=0)
    return {name: c.to_dict() for name, c in report.candidates.items()}


def test_fifteen_verbatim_training_records_fail_a_claimed_epsilon_of_zero(verbatim_claims):
    claim = verbatim_claims["verbatim"]["privacy"]["dp_claim"]
    assert claim["verbatim"] == {
        "copied_members": 15,
        "n_members": 300,
        "copied_nonmembers": 0,
        "n_nonmembers": 300,
        "unit": "row",
    }
    assert claim["contradicted"] and "verbatim_copies" in claim["contradicting"]
    assert claim["certified_epsilon"] == pytest.approx(0.5795, abs=1e-4)
    rule = apply_policy(load_policy(), verbatim_claims["verbatim"])["dp_claim"]
    assert rule.verdict == "fail" and "claimed ε = 0" in rule.reason
    # a fresh sample copies nothing: the same claim stands
    fresh = verbatim_claims["fresh"]["privacy"]["dp_claim"]
    assert fresh["verbatim_epsilon"] == 0.0 and not fresh["contradicted"]
    assert apply_policy(load_policy(), verbatim_claims["fresh"])["dp_claim"].verdict == "pass"


def test_verbatim_people_fail_a_claimed_epsilon_of_zero_per_person():
    """NLSY panel (tests/data/wage_panel_120.csv), 40 people a side split by person: every row
    of 15 training people in place of 15 fresh people (ids renumbered) contradicts ε = 0 per
    person; the fresh people do not."""
    frame = pd.read_csv(PANEL)
    people = np.sort(frame["person_id"].unique())
    order = people[np.random.default_rng(0).permutation(len(people))]
    parts = {name: frame[frame["person_id"].isin(ids)].reset_index(drop=True)
             for name, ids in (("real", order[:40]), ("holdout", order[40:80]),
                               ("fresh", order[80:]))}  # fmt: skip
    fresh = parts["fresh"].assign(person_id=parts["fresh"]["person_id"] + 100_000)
    copied = parts["real"][parts["real"]["person_id"].isin(order[:15])]
    kept = fresh[fresh["person_id"].isin(order[80 + 15 :] + 100_000)]
    verbatim = pd.concat([kept, copied.assign(person_id=copied["person_id"] + 200_000)])
    review = with_person(
        align(parts["real"], {"fresh": fresh, "verbatim": verbatim.reset_index(drop=True)},
              holdout=parts["holdout"]),
        "person_id",
    )  # fmt: skip
    options = ReviewOptions(embedding="none", person="person_id", claimed_epsilon=0.0)
    report = evaluate(review, sections=["privacy"], options=options, seed=0)
    content = {name: c.to_dict() for name, c in report.candidates.items()}
    claim = content["verbatim"]["privacy"]["dp_claim"]
    assert claim["unit"] == "person" and claim["verbatim"]["unit"] == "person"
    assert (claim["verbatim"]["copied_members"], claim["verbatim"]["n_members"]) == (15, 40)
    assert claim["verbatim"]["n_nonmembers"] == 40
    lo = beta.ppf(0.0125, 15, 26)
    hi = beta.ppf(1 - 0.0125, claim["verbatim"]["copied_nonmembers"] + 1,
                  40 - claim["verbatim"]["copied_nonmembers"])  # fmt: skip
    assert claim["verbatim_epsilon"] == pytest.approx(math.log(lo / hi))
    assert claim["contradicted"] and "verbatim_copies" in claim["contradicting"]
    assert apply_policy(load_policy(), content["verbatim"])["dp_claim"].verdict == "fail"
    fresh_claim = content["fresh"]["privacy"]["dp_claim"]
    assert fresh_claim["verbatim_epsilon"] == 0.0 and not fresh_claim["contradicted"]
