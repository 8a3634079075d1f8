"""Release policy: loading and validating TOML, verdicts per rule and overall."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthreview.errors import ConfigError
from synthreview.judgement.policy import (
    apply_policy,
    headline_scores,
    load_policy,
    metric_verdict,
    parse_policy,
    threshold_text,
)
from synthreview.judgement.rules import SPECS


def candidate(
    *,
    mia=0.52,
    share=0.5,
    auth=0.6,
    ref_auth=0.62,
    ip=0.9,
    ref_ip=0.93,
    ir=0.85,
    ref_ir=0.9,
    disc=0.6,
    k2=950.0,
    ref_k2=955.0,
    tstr=0.8,
    trtr=0.82,
    tpr=0.02,
):
    return {
        "fidelity": {
            "ip_alpha": ip, "ir_beta": ir, "authenticity": auth,
            "holdout_reference": {"ip_alpha": ref_ip, "ir_beta": ref_ir, "authenticity": ref_auth},
        },
        "privacy": {
            "membership_inference": [
                {"attack": "nn", "auc": mia, "tpr_at_fpr_1pct": tpr},
                {"attack": "clf", "auc": 0.5, "tpr_at_fpr_1pct": 0.01},
            ],
            "dcr": {"share_closer_to_train": share},
            "wp29": {
                part: {"risk": 0.01, "ci": [0.0, 0.03]}
                for part in ("singling_out_univariate", "singling_out_multivariate",
                             "linkability", "inference")
            },
            "shadow": {"generator": "m:f", "complete": True, "targets": [{}] * 10,
                       "tpr": {"value": 0.01, "hits": 1, "n": 100, "ci": [0.0003, 0.054]}},
            "dp_claim": {"claimed_epsilon": 1.0, "claimed_delta": 0.0, "excess": 0.0,
                         "certified_epsilon": 0.0, "contradicting": []},
        },
        "utility": {
            "discriminator_auc": disc,
            "k_marginal": {"1": 990.0, "2": k2, "3": 900.0},
            "holdout_reference": {"k_marginal": {"1": 995.0, "2": ref_k2, "3": 910.0}},
            "ml_efficacy": [
                {"model": "rf", "metric": "roc_auc", "tstr": tstr, "trtr": trtr},
                {"model": "ridge", "metric": "rmse", "tstr": 1.0, "trtr": 1.0},
            ],
        },
    }  # fmt: skip


def test_default_policy_documents_every_rule():
    policy = load_policy()
    assert list(policy.rules) == list(SPECS)
    assert policy.rules["mia_auc"].pass_at == 0.6 and policy.rules["mia_auc"].fail_at == 0.7
    assert policy.missing == "n/a"
    text = (Path(__file__).parents[1] / "synthreview/policies/default.toml").read_text()
    for name in SPECS:  # every rule states its thresholds and why in the shipped file
        assert f"[rules.{name}]" in text


def test_good_candidate_passes_every_rule():
    verdicts = apply_policy(load_policy(), candidate())
    assert verdicts.overall == "pass"
    # every rule passes, except those that do not apply to this review (no person column)
    assert {r.verdict for r in verdicts.rules} <= {"pass", "n/a"}
    assert all(r.reason.startswith("not applicable") for r in verdicts.rules if r.verdict == "n/a")
    assert verdicts["mia_auc"].verdict == "pass"
    assert verdicts["tstr_trtr_ratio"].value == pytest.approx(0.8 / 0.82)  # roc_auc decides
    assert verdicts["authenticity_gap"].value == pytest.approx(0.02)
    assert verdicts["authenticity_gap"].reference == pytest.approx(0.62)


@pytest.mark.parametrize(
    ("kwargs", "rule", "verdict"),
    [
        ({"mia": 0.65}, "mia_auc", "warn"),
        ({"mia": 0.71}, "mia_auc", "fail"),
        ({"mia": 0.6}, "mia_auc", "pass"),  # boundary: pass is inclusive
        ({"mia": 0.7}, "mia_auc", "warn"),  # boundary: fail is strict
        ({"share": 0.9}, "dcr_share", "warn"),  # advisory: never fails (arXiv 2505.01524)
        ({"auth": 0.3}, "authenticity_gap", "warn"),  # advisory
        ({"tpr": 0.05}, "mia_tpr_at_fpr_1pct", "warn"),  # 5x chance
        ({"tpr": 0.12}, "mia_tpr_at_fpr_1pct", "fail"),  # 12x chance
        ({"ip": 0.8}, "ip_alpha", "warn"),
        ({"ir": 0.6}, "ir_beta", "fail"),
        ({"disc": 0.9}, "discriminator_auc", "warn"),  # advisory by default
        ({"disc": 0.75}, "discriminator_auc", "warn"),
        ({"k2": 940.0}, "k_marginal", "warn"),  # 15 points below the holdout's 955
        ({"k2": 920.0}, "k_marginal", "fail"),  # 35 points below
        ({"tstr": 0.6}, "tstr_trtr_ratio", "fail"),
    ],
)
def test_each_rule_triggers(kwargs, rule, verdict):
    verdicts = apply_policy(load_policy(), candidate(**kwargs))
    assert verdicts[rule].verdict == verdict
    assert verdicts.overall == verdict
    if verdict == "fail":
        assert [r.rule for r in verdicts.failed] == [rule]
        assert rule in verdicts[rule].message


def test_utility_reference_is_read_from_holdout_reference():
    c = candidate()
    c["utility"]["holdout_reference"] = {"discriminator_auc": 0.51, "k_marginal": {"2": 990.0}}
    verdicts = apply_policy(load_policy(), c)
    assert verdicts["discriminator_auc"].reference == pytest.approx(0.51)
    assert verdicts["k_marginal"].reference == pytest.approx(990.0)


def test_r2_near_zero_and_nonpositive_denominators_are_ignored():
    c = candidate()
    c["utility"]["ml_efficacy"] = [
        {"model": "ridge", "metric": "r2", "tstr": -0.5, "trtr": 0.05},  # real explains ~nothing
        {"model": "rf", "metric": "accuracy", "tstr": 0.5, "trtr": 0.0},
    ]
    assert apply_policy(load_policy(), c)["tstr_trtr_ratio"].verdict == "incomplete"


def test_regression_is_judged_on_r2_not_on_a_ratio_of_small_errors():
    # issue 27: fresh real rows, random forest RMSE 34 trained on real vs 124 on fresh rows
    # (ratio 28 %), while R² is 0.993 vs 0.907: the fresh rows keep 91 % of the usefulness
    c = candidate()
    c["utility"]["ml_efficacy"] = [
        {"model": "rf", "metric": "rmse", "tstr": 124.0, "trtr": 34.0},
        {"model": "rf", "metric": "r2", "tstr": 0.907, "trtr": 0.993},
    ]
    verdict = apply_policy(load_policy(), c)["tstr_trtr_ratio"]
    assert verdict.value == pytest.approx(0.907 / 0.993)
    assert verdict.verdict == "pass" and "rf r2" in verdict.note
    c["utility"]["ml_efficacy"][1]["tstr"] = -0.2  # worse than predicting the mean
    assert apply_policy(load_policy(), c)["tstr_trtr_ratio"].verdict == "fail"
    c["utility"]["ml_efficacy"][1]["trtr"] = 0.05  # R² ratio meaningless: RMSE decides
    assert apply_policy(load_policy(), c)["tstr_trtr_ratio"].value == pytest.approx(34 / 124)


def test_wp29_inference_is_judged_on_the_corrected_lower_bound():
    c = candidate()
    c["privacy"]["wp29"]["inference"] = {
        "risk": 0.26, "ci": [0.0, 0.55], "column": "age",
        "corrected": {"lower": 0.0, "column": "sex", "n_columns": 20, "confidence": 0.9975},
        "per_column": {"sex": {"risk": 0.1, "ci": [0.0, 0.3]}},
    }  # fmt: skip
    verdict = apply_policy(load_policy(), c)["wp29_inference"]
    assert verdict.verdict == "pass" and verdict.value == 0.0
    assert "Bonferroni over 20 columns" in verdict.reason
    assert "risk 0.260, 95 % CI 0.000-0.550 on 'age'" in verdict.reason
    c["privacy"]["wp29"]["inference"]["corrected"]["lower"] = 0.9
    assert apply_policy(load_policy(), c)["wp29_inference"].value == pytest.approx(0.9)
    del c["privacy"]["wp29"]["inference"]["corrected"]  # a report filed before the bound
    verdict = apply_policy(load_policy(), c)["wp29_inference"]
    assert verdict.value == pytest.approx(0.26) and "judged on the point" in verdict.reason


def test_wp29_multivariate_singling_out_is_judged_on_its_lower_bound():
    c = candidate()
    c["privacy"]["wp29"]["singling_out_multivariate"] = {
        "risk": 0.086,
        "ci": [0.0, 0.19],
        "lower": 0.0,
    }
    verdict = apply_policy(load_policy(), c)["wp29_singling_out_multivariate"]
    assert verdict.verdict == "pass" and "one-sided 95 % lower bound" in verdict.reason
    c["privacy"]["wp29"]["singling_out_multivariate"]["lower"] = 0.3
    assert apply_policy(load_policy(), c)["wp29_singling_out_multivariate"].verdict == "fail"


def test_ratio_uses_roc_auc_not_f1():
    c = candidate()
    c["utility"]["ml_efficacy"] = [
        {"model": "rf", "metric": "f1", "tstr": 0.0, "trtr": 0.6},
        {"model": "rf", "metric": "roc_auc", "tstr": 0.85, "trtr": 0.9},
        {"model": "lr", "metric": "roc_auc", "tstr": 0.8, "trtr": 0.9},
    ]
    verdict = apply_policy(load_policy(), c)["tstr_trtr_ratio"]
    assert verdict.value == pytest.approx(0.8 / 0.9)
    assert "lr roc_auc" in verdict.note


def test_rmse_ratio_is_inverted():
    c = candidate()
    c["utility"]["ml_efficacy"] = [{"model": "ridge", "metric": "rmse", "tstr": 2.0, "trtr": 1.0}]
    assert apply_policy(load_policy(), c)["tstr_trtr_ratio"].value == pytest.approx(0.5)


def test_missing_sections_are_incomplete_or_as_configured(tmp_path):
    # issue #12: a failed section used to make its rules "n/a" and the candidate pass
    verdicts = apply_policy(load_policy(), {"errors": {"privacy": "boom"}})
    assert verdicts.overall == "incomplete"
    assert verdicts["mia_auc"].verdict == "incomplete"
    assert "privacy section failed: boom" in verdicts["mia_auc"].note
    strict = tmp_path / "strict.toml"
    strict.write_text('[policy]\nmissing = "fail"\n')
    assert apply_policy(load_policy(strict), {}).overall == "fail"


def test_glucose_candidate_reads_nested_sections():
    c = candidate()
    glucose = {
        "fidelity": c["fidelity"],
        "privacy": c["privacy"],
        "forecast": {"tstr_rmse": 20.0, "trtr_rmse": 10.0},
    }
    verdicts = apply_policy(load_policy(), {"glucose": glucose})
    assert verdicts["mia_auc"].verdict == "pass"
    assert verdicts["tstr_trtr_ratio"].value == pytest.approx(0.5)
    assert verdicts["k_marginal"].verdict == "n/a"  # table-only rules do not apply to traces


def test_user_file_overrides_and_disables(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(
        '[policy]\nname = "strict"\n[rules.mia_auc]\npass = 0.55\nfail = 0.58\n'
        "[rules.k_marginal]\nenabled = false\n"
    )
    policy = load_policy(path)
    assert policy.name == "strict"
    verdicts = apply_policy(policy, candidate(mia=0.57))
    assert verdicts["mia_auc"].verdict == "warn"
    assert "k_marginal" not in {r.rule for r in verdicts.rules}
    assert policy.rules["dcr_share"].pass_at == 0.6  # untouched rules keep the defaults


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[rules.mia_auc\npass = 1", "not valid TOML"),
        ("[rules.nope]\npass = 1\nfail = 2\n", "not a known rule"),
        ("[rules.mia_auc]\npass = 0.8\nfail = 0.7\n", "'pass' .* must not be above 'fail'"),
        ("[rules.tstr_trtr_ratio]\npass = 0.7\nfail = 0.8\n", "must not be below"),
        ("[rules.k_marginal]\npass = 30\nfail = 20\n", "must not be above"),
        ("[rules.mia_auc]\nrequired = 'yes'\n", "required must be true or false"),
        ("[rules.mia_auc]\napplies_to = ['tables']\n", "applies_to must be a non-empty list"),
        ("[rules.mia_auc]\napplies_to = []\n", "applies_to must be a non-empty list"),
        ("[rules.mia_auc]\nk = 2\n", "k only applies to k_marginal"),
        ("[policy]\nmissing = 'incomplete'\n", "missing must be one of"),
        ("[rules.mia_auc]\npass = 'x'\n", "must be a finite number"),
        ("[rules.mia_auc]\nwarn = 0.6\n", "unknown keys"),
        ("[rules.k_marginal]\nk = 5\n", "k must be 1, 2 or 3"),
        ("[policy]\nmissing = 'maybe'\n", "missing must be one of"),
        ("[other]\nx = 1\n", "unknown tables"),
        ("[lights.nope]\npass = 1\nfail = 2\nreason = 'x'\n", "names no registered metric"),
        ("[lights.k_marginal]\npass = 30\nfail = 20\n", "0 <= pass <= fail"),
        ("[lights.k_marginal]\nwarn = 1\n", "unknown keys"),
        ("[lights.tstr_gini]\npass = 1\nfail = 2\nreason = 'x'\n", "tstr_SCORE"),
        ("[lights.ip_alpha]\npass = 0.01\nfail = 0.03\n", "must set 'pass', 'fail' and 'reason'"),
        ("[lights.k_marginal]\nreason = ''\n", "reason must be a non-empty string"),
        ("[lights.k_marginal]\nrelative = 1\n", "relative must be true or false"),
        ("lights = 3\n", "'lights' must be a table"),
    ],
)
def test_bad_policy_files_raise_config_error(tmp_path, text, match):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_policy(path)


def test_unreadable_policy_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        load_policy(tmp_path / "absent.toml")


def test_headline_scores_pairs_value_and_reference():
    scores = headline_scores(candidate())
    assert scores["ip_alpha"] == (0.9, 0.93)
    assert scores["mia_auc"] == (0.52, None)
    assert scores["k_marginal"] == (950.0, 955.0)
    assert headline_scores({})["ip_alpha"] == (None, None)


def test_lights_live_in_the_policy_with_their_reasons():
    policy = load_policy()
    text = (Path(__file__).parents[1] / "synthreview/policies/default.toml").read_text()
    for name, light in policy.lights.items():
        assert f"[lights.{name}]" in text and light.reason
    k = policy.lights["k_marginal"]
    assert (k.metric, k.ideal, k.pass_at, k.fail_at) == ("k_marginal", 1000.0, 10.0, 30.0)
    assert policy.lights["proportion_error_by_group"].metric == "proportion_error"
    assert policy.lights["tstr_rmse"].ideal == 0.0 and policy.lights["tstr_rmse"].relative
    # excess over the reference's distance from the ideal: green, yellow, red, n/a
    assert [k.verdict(v, 990.0) for v in (995.0, 985.0, 975.0, 900.0)] == [
        "pass",
        "pass",
        "warn",
        "fail",
    ]
    assert k.verdict(float("nan"), 990.0) == "n/a"
    rmse = policy.lights["tstr_rmse"]
    assert (rmse.verdict(10.5, 10.0), rmse.verdict(11.0, 10.0), rmse.verdict(12.0, 10.0)) == (
        "pass",
        "warn",
        "fail",
    )
    assert "lights" in policy.to_dict() and policy.to_dict()["lights"]["k_marginal"]["pass"] == 10
    # a reviewer's file changes one light and keeps the shipped reason
    strict = parse_policy("[lights.k_marginal]\npass = 2\nfail = 4\n")
    assert strict.lights["k_marginal"].pass_at == 2 and strict.lights["k_marginal"].reason
    assert strict.lights["correlation_mae"] == policy.lights["correlation_mae"]


def test_threshold_text_reads_the_rule_through_the_registry():
    policy = load_policy()
    text = threshold_text(policy, "ip_alpha")
    assert "passes at most 0.1, fails above 0.2 (required)" in text
    assert "advisory" in threshold_text(policy, "dcr_share")
    assert "at least 0.9, fails below 0.8" in threshold_text(policy, "tstr_trtr_ratio")
    assert threshold_text(policy, "prdc_density") == ""  # no rule judges it
    strict = parse_policy("[rules.ip_alpha]\npass = 0.05\nfail = 0.08\n")
    assert "at most 0.05, fails above 0.08" in threshold_text(strict, "ip_alpha")


def test_metric_verdict_finds_the_rule_through_the_registry():
    policy = load_policy()
    assert metric_verdict(policy, "mia_auc", 0.55) == "pass"
    assert metric_verdict(policy, "mia_auc", 0.75) == "fail"
    assert metric_verdict(policy, "ip_alpha", 0.8, reference=0.95) == "warn"  # shortfall 0.15
    assert metric_verdict(policy, "dcr_share", 0.9) == "warn"  # advisory: never fails
    assert metric_verdict(policy, "prdc_density", 1.0) == "n/a"  # no rule judges it
    off = parse_policy("[rules.mia_auc]\nenabled = false\n")
    assert metric_verdict(off, "mia_auc", 0.9) == "n/a"
