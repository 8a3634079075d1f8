"""The one judgement: verdict styles, decisions with reasons, fail-closed rules, and the two rules
that used to judge what they could not see (discriminator copies, k-marginal on numeric tables)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import UndefinedMetricWarning
from synthreview.io.tables import align, read_table
from synthreview.judgement.decision import decide, decide_all, exit_code, rule_label
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.judgement.verdicts import (
    DECISION_STYLE,
    SCREEN_OUTCOMES,
    VERDICT_STYLE,
    VERDICTS,
    contrast_ratio,
    style,
)
from synthreview.metrics.utility.efficacy import discriminator_auc
from synthreview.metrics.utility.section import evaluate_utility

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def good(**over):
    c = {
        "fidelity": {
            "ip_alpha": 0.9, "ir_beta": 0.85, "authenticity": 0.6,
            "holdout_reference": {"ip_alpha": 0.92, "ir_beta": 0.88, "authenticity": 0.62},
        },
        "privacy": {
            "membership_inference": [
                {"attack": "nn", "auc": 0.52, "tpr_at_fpr_1pct": 0.015},
                {"attack": "clf", "auc": 0.5, "tpr_at_fpr_1pct": 0.01},
            ],
            "dcr": {"share_closer_to_train": 0.5},
            "wp29": {p: {"risk": 0.0, "ci": [0.0, 0.02]} for p in (
                "singling_out_univariate", "singling_out_multivariate", "linkability",
                "inference")},
        },
        "utility": {
            "discriminator_auc": 0.6,
            "k_marginal": {"2": 950.0},
            "k_marginal_binned": {"2": 940.0},
            "holdout_reference": {"k_marginal": {"2": 955.0}, "k_marginal_binned": {"2": 945.0}},
            "ml_efficacy": [{"model": "rf", "metric": "roc_auc", "tstr": 0.8, "trtr": 0.82}],
        },
    }  # fmt: skip
    for path, value in over.items():
        *keys, last = path.split(".")
        target = c
        for key in keys:
            target = target[key]
        target[last] = value
    return c


def test_styles_are_readable_labelled_and_complete():
    assert set(VERDICT_STYLE) == set(VERDICTS) and set(DECISION_STYLE) == set(SCREEN_OUTCOMES)
    for s in (*VERDICT_STYLE.values(), *DECISION_STYLE.values()):
        assert contrast_ratio(s.foreground, s.background) >= 7.0, s
        assert s.label.isascii() and s.label.upper() == s.label  # a text label, no emoji
        assert s.css() == f"background-color: {s.background}; color: {s.foreground}"
    assert style("incomplete").label == "INCOMPLETE" and style("nonsense") == VERDICT_STYLE["n/a"]
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)


def test_good_candidate_is_released_with_a_reason():
    verdicts = apply_policy(load_policy(), good())
    assert verdicts.overall == "pass", [r.message for r in verdicts.rules if r.verdict != "pass"]
    decision = decide("g", verdicts)
    assert decision.outcome == "release" and decision.exit_code == 0
    assert decision.reason.startswith("every required rule is met")


def test_attacker_hits_are_the_reason_to_refuse():
    c = good()
    c["privacy"]["membership_inference"][0]["tpr_at_fpr_1pct"] = 0.12
    decision = decide("leaky", apply_policy(load_policy(), c))
    assert decision.outcome == "do_not_release" and decision.exit_code == 1
    assert decision.rule == "mia_tpr_at_fpr_1pct"
    assert "an attacker (nn) identifies 12 % of training rows at 1 % false alarms" in (
        decision.reason
    )


def test_decision_lines_name_rules_and_attacks_in_registry_words():
    """Warnings and attacks read as labels ("attribute inference (WP29)", the attack's label);
    the rule ids stay in the machine-readable fields."""
    c = good()
    c["privacy"]["wp29"]["inference"] = {"risk": 0.2, "ci": [0.05, 0.3]}
    c["privacy"]["dcr"] = {"share_closer_to_train": 0.95}
    verdicts = apply_policy(load_policy(), c)
    warned = [r.rule for r in verdicts.warned]
    assert "wp29_inference" in warned and "dcr_share" in warned
    decision = decide("c", verdicts)
    assert decision.outcome == "release"
    assert "attribute inference (WP29)" in decision.reason
    assert "DCR share closer to training" in decision.reason
    assert not any(rule in decision.reason for rule in warned), decision.reason
    assert decision.rule == warned[0]
    c = good()
    c["privacy"]["membership_inference"][0].update(attack="nndr", auc=0.95)
    decision = decide("leaky", apply_policy(load_policy(), c))
    assert decision.rule == "mia_auc" and "(NN distance ratio)" in decision.reason
    assert "nndr" not in decision.reason


def test_lost_joint_distributions_are_said_in_numbers():
    c = good(**{"utility.k_marginal_binned": {"2": 790.0}})
    c["utility"]["holdout_reference"]["k_marginal_binned"] = {"2": 970.0}
    decision = decide("shuffled", apply_policy(load_policy(), c))
    assert decision.outcome == "do_not_release"
    assert "2-way marginals over every column score 790 vs 970 for real data" in decision.reason


@pytest.mark.parametrize(
    ("candidate", "rule", "why"),
    [
        ({"errors": {"privacy": "inf in column x"}}, "mia_auc", "privacy section failed"),
        (good(privacy={}), "mia_auc", "no membership-inference attack ran"),
        (good(**{"utility.ml_efficacy": []}), "tstr_trtr_ratio", "no ML-efficacy result"),
        (
            good(**{"privacy.wp29": None}),
            "wp29_singling_out_univariate",
            "reports no wp29.singling_out_univariate",
        ),
        (good(**{"fidelity.ip_alpha": None}), "ip_alpha", "no ip_alpha"),  # degenerate -> nan
        (
            good(**{"utility.k_marginal_binned": {}, "utility.k_marginal": {}}),
            "k_marginal",
            "no 2-way marginal",
        ),
    ],
)
def test_a_required_rule_that_was_not_computed_makes_the_candidate_incomplete(candidate, rule, why):
    verdicts = apply_policy(load_policy(), candidate, kind="table")
    assert verdicts.overall == "incomplete"
    assert verdicts[rule].verdict == "incomplete" and why in verdicts[rule].note
    decision = decide("c", verdicts)
    assert decision.outcome == "incomplete" and decision.exit_code == 3
    assert decision.reason.startswith(f"{rule_label(rule)}: ")  # words, not the rule id
    assert decision.rule == rule  # report.json keeps the id


def test_advisory_rules_warn_but_never_fail_and_fail_dominates_incomplete():
    c = good(**{"privacy.dcr": {"share_closer_to_train": 0.95}})
    verdicts = apply_policy(load_policy(), c)
    assert (
        verdicts["dcr_share"].verdict == "warn" and "does not require" in verdicts["dcr_share"].note
    )
    assert decide("c", verdicts).outcome == "release"
    c = good(**{"privacy.membership_inference": [{"attack": "nn", "auc": 0.9}]})
    c["utility"]["ml_efficacy"] = []
    verdicts = apply_policy(load_policy(), c)
    assert verdicts.overall == "fail" and verdicts.incomplete


def test_rules_that_do_not_apply_are_na_and_a_candidate_with_nothing_is_incomplete():
    verdicts = apply_policy(load_policy(), {"glucose": {"forecast": {}}})
    assert verdicts.kind == "traces"
    assert verdicts["k_marginal"].verdict == "n/a" and verdicts["wp29_linkability"].verdict == "n/a"
    assert verdicts["mia_auc"].verdict == "incomplete"
    policy = load_policy()
    nothing = apply_policy(policy, {}, kind="table")
    assert nothing.overall == "incomplete"


def test_release_after_curation_has_its_own_exit_code_below_do_not_release():
    failing = apply_policy(load_policy(), good(**{"fidelity.ip_alpha": 0.5}))
    fixed = apply_policy(load_policy(), good())
    decisions = decide_all({"a": failing}, {"a": fixed})
    assert decisions["a"].outcome == "release_after_curation"
    assert exit_code(decisions) == 4  # only the curated files may ship
    passing = decide_all({"b": fixed})
    assert exit_code(passing) == 0 and exit_code({**decisions, **passing}) == 4
    refused = decide_all({"c": failing})
    assert exit_code({**decisions, **refused}) == 1  # the worst decision decides
    emptied = apply_policy(load_policy(), {"errors": {"curation": "every row was removed"}})
    assert decide("a", failing, emptied).outcome == "do_not_release"
    assert exit_code({}) == 3


def test_discriminator_far_below_half_is_not_better_than_half():
    verdicts = apply_policy(load_policy(), good(**{"utility.discriminator_auc": 0.07}))
    rule = verdicts["discriminator_auc"]
    assert rule.verdict == "warn" and rule.value == pytest.approx(0.43)
    assert "suspiciously indistinguishable" in rule.reason
    strict = load_policy().rules["discriminator_auc"]
    assert not strict.required  # advisory by default: GBM separates nearly every generator


@pytest.fixture(scope="module")
def flchain():
    table = read_table(DATA / "flchain.csv", role="real")
    review = align(table, [table])
    frame = table.frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    return review.schema, frame


def _utility(schema, real, candidate, holdout):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        report = evaluate_utility(real, candidate, holdout, schema=schema, formula="")
    return {"utility": report.to_dict()}


def test_copied_rows_read_as_suspicious_not_ideal_on_real_data(flchain):
    schema, frame = flchain
    real = frame.iloc[:600]
    auc = discriminator_auc(real, real.copy(), schema=schema).auc
    assert auc < 0.4  # identical rows on both sides of the folds: the copy signature
    verdicts = apply_policy(load_policy(), {"utility": {"discriminator_auc": auc}}, kind="table")
    assert verdicts["discriminator_auc"].verdict != "pass"


def test_k_marginal_fails_a_column_shuffle_on_a_mostly_numeric_table(flchain):
    # flchain: 7 numeric and 4 categorical analysed columns (numeric codes count as numeric)
    schema, frame = flchain
    assert len(schema.numeric) > len(schema.categorical)
    real, holdout, fresh = frame.iloc[:2000], frame.iloc[2000:4000], frame.iloc[4000:6000]
    rng = np.random.default_rng(1)
    shuffled = pd.DataFrame(
        {c: real[c].to_numpy()[rng.permutation(len(real))] for c in real.columns}
    )
    policy = load_policy()
    bad = apply_policy(policy, _utility(schema, real, shuffled, holdout), kind="table")
    ok = apply_policy(policy, _utility(schema, real, fresh, holdout), kind="table")
    assert bad["k_marginal"].verdict == "fail", bad["k_marginal"].message
    assert ok["k_marginal"].verdict == "pass", ok["k_marginal"].message
    assert "every column" in bad["k_marginal"].reason
