"""Audit: calibrated per-row rules (hand-computed), copy evidence, re-attack, curation."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, false_discovery_control

from synthreview.errors import ConfigError, DataError
from synthreview.io.tables import align, read_table
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.release import calibration as cal
from synthreview.release.audit import (
    RULES,
    SMALL_HOLDOUT,
    Thresholds,
    apply_thresholds,
    audit_table,
    default_thresholds,
    holdout_audit,
    rule_overlaps,
    rule_summary,
)
from synthreview.release.curation import curate, curated_review
from synthreview.release.evidence import copy_evidence
from synthreview.release.export import curated_csv_bytes, curated_parquet_bytes
from synthreview.release.reattack import AttackChange, Reattack, compare_attacks
from synthreview.release.verdicts import CopyExcess, copy_excess, judge_audited


# Duck-typed stand-ins holding the contract fields of FidelityReport.samples / PrivacyReport.dcr
@dataclass(frozen=True)
class Samples:
    alpha_level: np.ndarray
    authentic: np.ndarray
    authenticity_ratio: np.ndarray | None = None


@dataclass(frozen=True)
class Fidelity:
    samples: Samples
    holdout_samples: Samples | None = None


@dataclass(frozen=True)
class DCR:
    synthetic_to_train: np.ndarray
    synthetic_to_holdout: np.ndarray | None
    exact_copy: np.ndarray
    holdout_to_train: np.ndarray | None
    holdout_exact_copy_share: float = 0.0


@dataclass(frozen=True)
class Privacy:
    dcr: DCR


# 101 holdout rows: ratios 0.00, 0.01, ..., 1.00 and α-levels 0.00 ... 1.00, distances 0 ... 100
HOLDOUT = Samples(
    alpha_level=np.linspace(0.0, 1.0, 101),
    authentic=np.arange(101) % 2 == 0,
    authenticity_ratio=np.linspace(0.0, 1.0, 101),
)


def make_evidence() -> tuple[Fidelity, Privacy]:
    fidelity = Fidelity(
        Samples(
            alpha_level=np.array([0.10, 0.50, 0.995, 0.99, 0.20, np.nan]),
            authentic=np.array([True, False, True, False, True, True]),
            authenticity_ratio=np.array([0.0, 0.005, 0.5, 0.01, 0.9, 0.02]),
        ),
        HOLDOUT,
    )
    privacy = Privacy(
        DCR(
            synthetic_to_train=np.array([0.0, 1.0, 2.0, 0.5, 3.0, 1.0]),
            synthetic_to_holdout=np.ones(6),
            exact_copy=np.array([True, False, False, False, False, False]),
            holdout_to_train=np.arange(101, dtype=float),
            holdout_exact_copy_share=0.002,
        )
    )
    return fidelity, privacy


def test_thresholds_validate_their_range():
    for bad in ({"mode": "loose"}, {"level": 0.0}, {"level": 0.7}, {"fdr": 1.0},
                {"alpha": 0.0}, {"alpha": 1.5}):  # fmt: skip
        with pytest.raises(ConfigError, match="must be"):
            Thresholds(**bad)
    assert Thresholds().fixed_alpha is None
    assert Thresholds(mode="paper").fixed_alpha == 0.95
    assert default_thresholds(None, level=0.02) == Thresholds(level=0.02)


def test_holdout_counts_and_quantile_rule_hand_computed():
    ref = np.array([0.3, 0.1, 0.2, 0.2, 0.5])
    counts = cal.holdout_counts(np.array([0.05, 0.2, 0.6, np.nan]), ref, direction="low")
    np.testing.assert_array_equal(counts, [0, 3, 5, np.nan])
    high = cal.holdout_counts(np.array([0.05, 0.2, 0.6]), ref, direction="high")
    np.testing.assert_array_equal(high, [5, 4, 0])
    loo = cal.holdout_counts(ref, ref, direction="low", leave_one_out=True)
    np.testing.assert_array_equal(loo, [3, 0, 2, 2, 4])
    # conformal index j = floor(0.4 * 6) - 1 = 1: flag strictly below the 2nd smallest (here
    # np.quantile method "lower"); at 0.3, j = floor(1.8) - 1 = 0 (below the smallest only)
    assert cal.quantile_index(5, 0.4) == 1 and cal.quantile_index(5, 0.3) == 0
    threshold = np.quantile(ref, 0.4, method="lower")
    assert cal.quantile_threshold(ref, 0.4, direction="low") == threshold == 0.2
    x = np.array([0.05, 0.1, 0.15, 0.2, np.nan])
    flags = cal.quantile_flags(cal.holdout_counts(x, ref, direction="low"), 5, 0.4)
    np.testing.assert_array_equal(flags, x < threshold)
    assert cal.expected_quantile_loss(99, 0.01) == pytest.approx(1 / 100)
    # a row tied with the holdout's most extreme value (0.1) is kept
    tied = cal.extreme_ties(x, cal.holdout_counts(x, ref, direction="low"), 0.1)
    np.testing.assert_array_equal(tied, [False, True, False, False, False])
    kept = cal.quantile_flags(cal.holdout_counts(x, ref, direction="low"), 5, 0.4, tied=tied)
    np.testing.assert_array_equal(kept, [True, False, True, False, False])


def test_bh_flags_match_scipy_on_conformal_p_values():
    rng = np.random.default_rng(0)
    ref = rng.random(999)
    x = np.concatenate([np.zeros(30), rng.random(70)])
    counts = cal.holdout_counts(x, ref, direction="low")
    p = (1 + counts) / 1000
    expected = false_discovery_control(p, method="bh") <= 0.05
    np.testing.assert_array_equal(cal.bh_flags(counts, 999, 0.05), expected)
    assert expected[:30].all() and expected[30:].sum() <= 2


def test_quantile_mode_hand_computed():
    fidelity, privacy = make_evidence()
    thresholds = Thresholds(level=0.02, alpha_loss=0.02, drop_too_close=True)
    audit = audit_table(fidelity, privacy, thresholds)
    # level 2 %, 101 holdout rows: j = floor(0.02 * 102) - 1 = 1, thresholds are the 2nd
    # smallest ratio (0.01), the 2nd largest α-level (0.99) and the 2nd smallest distance (1.0).
    # Row 0 (ratio 0, distance 0) is tied with the holdout's own minimum (a holdout row sits
    # on a training row): kept by those rules, removed as an exact copy
    assert list(audit["drop_unauthentic"]) == [False, True, False, False, False, False]
    assert list(audit["drop_outside_alpha"]) == [False, False, True, False, False, False]
    assert list(audit["drop_too_close"]) == [False, False, False, True, False, False]
    assert list(audit["drop_exact_copy"]) == [True, False, False, False, False, False]
    assert list(audit["removed"]) == [True, True, True, True, False, False]
    assert audit.loc[1, "reasons"] == (
        "authenticity ratio 0.005 below the holdout's 2.0% quantile (0.01)"
    )
    assert audit.loc[1, "authenticity_ratio_holdout_quantile"] == pytest.approx(1 / 101)
    rules = audit.attrs["rules"]
    assert rules["drop_unauthentic"]["expected_fpr"] == pytest.approx(2 / 102)
    assert rules["drop_exact_copy"]["expected_fpr"] == 0.002
    # defaults: no distance rule; the α-rule loses 0.5 %: j = 0, threshold = the largest (1.0)
    default = audit_table(fidelity, privacy)
    assert not default["drop_too_close"].any() and not default["drop_outside_alpha"].any()
    assert default.attrs["rules"]["drop_outside_alpha"]["threshold"] == 1.0


def test_strict_and_paper_modes():
    fidelity, privacy = make_evidence()
    # conformal p-values (1 + count) / 102 of the ratios: 2, 2, 52, 3, 92, 4 (/102); BH at q:
    # the 4th smallest (4/102 = 0.039) passes 4q/6 for q = 0.1 but not for q = 0.05
    strict = audit_table(fidelity, privacy, Thresholds(mode="strict"))
    assert not strict["drop_unauthentic"].any()
    strict = audit_table(fidelity, privacy, Thresholds(mode="strict", fdr=0.1))
    assert list(strict["drop_unauthentic"]) == [True, True, False, True, False, True]
    assert strict.attrs["rules"]["drop_unauthentic"]["expected_fpr"] == 0.0
    paper = audit_table(fidelity, privacy, Thresholds(mode="paper"))
    assert list(paper["drop_unauthentic"]) == [False, True, False, True, False, False]
    assert list(paper["drop_outside_alpha"]) == [False, False, True, True, False, False]
    assert paper.attrs["rules"]["drop_unauthentic"]["expected_fpr"] == pytest.approx(50 / 101)
    assert paper.attrs["rules"]["drop_outside_alpha"]["expected_fpr"] == pytest.approx(5 / 101)
    assert paper.loc[3, "reasons"].startswith("α-level 0.99 > α = 0.95; authenticity ratio")


def test_rules_switch_off_and_missing_sections_stay_inactive():
    fidelity, privacy = make_evidence()
    off = Thresholds(use_alpha=False, drop_unauthentic=False, drop_exact_copies=False)
    audit = audit_table(fidelity, privacy, off)
    assert not audit["removed"].any() and set(audit["reasons"]) == {""}
    only_privacy = audit_table(None, privacy, Thresholds(level=0.02, drop_too_close=True))
    assert only_privacy["alpha_level"].isna().all()
    assert list(only_privacy["removed"]) == [True, False, False, True, False, False]
    with pytest.raises(DataError, match="fidelity"):
        audit_table(None, None)


def test_holdout_audit_loses_about_the_level():
    fidelity, privacy = make_evidence()
    reference = holdout_audit(fidelity, privacy, Thresholds(drop_too_close=True))
    assert len(reference) == 101
    summary = rule_summary(audit_table(fidelity, privacy), reference)
    # leave-one-out: each holdout row against the other 100, j = floor(0.01 * 101) - 1 = 0, so
    # only the most extreme row is lost (1/101 ~ the 1 % level)
    for rule in ("drop_outside_alpha", "drop_unauthentic", "drop_too_close"):
        assert summary.loc[rule, "reference_share"] == pytest.approx(1 / 101)
    assert summary.loc["any", "expected_fpr"] == summary.loc["any", "reference_share"]
    assert holdout_audit(None, None).empty


def test_the_conformal_index_never_states_more_than_the_level():
    """Issue 38, item 3: the expected loss (j + 1) / (n + 1) is at most the level wherever a
    holdout of n rows can promise it; below that only rows beyond its extreme are flagged."""
    for level in (0.002, 0.005, 0.01, 0.02, 0.05, 0.1):
        for n in range(1, 3001):
            loss = cal.expected_quantile_loss(n, level)
            if level * (n + 1) >= 1:
                assert loss <= level + 1e-12, (n, level, loss)
                assert loss > level - 1 / (n + 1) - 1e-12, (n, level, loss)  # not wasteful
            else:
                assert loss == pytest.approx(1 / (n + 1)), (n, level)
    # e.g. 150 holdout rows at 1 %: only the most extreme (the floor(level * (n - 1)) index
    # took the 2nd and lost 2/151 = 1.3 %)
    assert cal.quantile_index(150, 0.01) == 0 and cal.quantile_index(199, 0.01) == 1


def _alpha_audit(synthetic: np.ndarray, holdout: np.ndarray, **changes):
    n = len(synthetic)
    fidelity = Fidelity(
        Samples(synthetic, np.ones(n, bool), np.ones(n)),
        Samples(holdout, np.ones(len(holdout), bool), np.ones(len(holdout))),
    )
    thresholds = Thresholds(drop_unauthentic=False, drop_exact_copies=False, **changes)
    return audit_table(fidelity, None, thresholds), holdout_audit(fidelity, None, thresholds)


def test_a_row_tied_with_the_holdouts_maximum_is_kept():
    """α-levels pile up at inf beyond the farthest training row: a row there is kept when a
    holdout row is there too, while a row strictly beyond the quantile is removed."""
    finite = np.linspace(0.0, 0.98, 400)
    # 401 holdout rows, α loss 0.5 %: j = floor(0.005 * 402) - 1 = 1 (beyond the 2nd largest)
    audit, reference = _alpha_audit(np.array([np.inf, 0.985, 0.98, 0.5]), np.append(finite, np.inf))
    assert list(audit["drop_outside_alpha"]) == [False, True, False, False]
    # leave-one-out (400 other rows, j = 1): the single row at inf has no tie among the others,
    # so it and the largest finite row are lost (2 of 401)
    assert list(np.flatnonzero(reference["drop_outside_alpha"])) == [399, 400]
    # two holdout rows at inf: each is tied with the other, and no inf row is removed
    audit, reference = _alpha_audit(np.array([np.inf]), np.append(finite, [np.inf, np.inf]))
    assert not audit["drop_outside_alpha"].any() and not reference["drop_outside_alpha"].any()
    # without a holdout row at inf, inf lies beyond the holdout's maximum: removed
    audit, _ = _alpha_audit(np.array([np.inf, 0.98]), finite)
    assert list(audit["drop_outside_alpha"]) == [True, False]


def test_a_reason_never_reads_like_a_tie():
    """Issue 38: "α-level 0.997 above the holdout's 99.5 % quantile (0.997)" read as a tie; the
    row and the threshold are written with the digits that tell them apart, and a cut at the
    holdout's own extreme is called that."""
    # 401 rows: j = 1, the cut is the 2nd largest (0.9969)
    holdout = np.append(np.linspace(0.0, 0.99, 399), [0.9969, 0.999])
    audit, _ = _alpha_audit(np.array([0.99712, 0.5]), holdout)
    assert audit.loc[0, "reasons"] == "α-level 0.9971 above the holdout's 99.5% quantile (0.9969)"
    # 100 rows: j = 0, the cut is the largest (0.9969)
    audit, _ = _alpha_audit(np.array([0.99712, 0.5]), np.append(np.linspace(0, 0.99, 99), 0.9969))
    assert audit.loc[0, "reasons"] == "α-level 0.9971 above the holdout's largest value (0.9969)"


def test_a_small_holdout_states_the_loss_measured_on_it():
    """Up to SMALL_HOLDOUT rows every rule's stated loss is the holdout's own (leave-one-out);
    above it, the calibration's formula."""
    fidelity, privacy = make_evidence()
    thresholds = Thresholds(drop_too_close=True)
    summary = rule_summary(audit_table(fidelity, privacy, thresholds),
                           holdout_audit(fidelity, privacy, thresholds))  # fmt: skip
    measured = summary["reference_share"].notna()
    assert measured.all()
    np.testing.assert_allclose(summary["expected_fpr"], summary["reference_share"])
    assert summary.loc["drop_unauthentic", "expected_fpr"] == pytest.approx(1 / 101)
    assert SMALL_HOLDOUT == 500
    big = np.linspace(0.0, 1.0, 1001)
    audit, reference = _alpha_audit(np.array([0.5]), big)
    summary = rule_summary(audit, reference)
    # 1001 rows at 0.5 %: j = floor(0.005 * 1002) - 1 = 4, formula 5 / 1002
    assert summary.loc["drop_outside_alpha", "expected_fpr"] == pytest.approx(5 / 1002)


def test_length_mismatch_is_reported():
    fidelity, _ = make_evidence()
    short = Privacy(DCR(np.zeros(3), None, np.zeros(3, bool), np.ones(3)))
    with pytest.raises(DataError, match="one value per synthetic row"):
        audit_table(fidelity, short)


def test_flags_follow_shuffled_rows():
    fidelity, privacy = make_evidence()
    audit = audit_table(fidelity, privacy, Thresholds(drop_too_close=True))
    perm = np.array([3, 5, 0, 2, 1, 4])
    hperm = np.random.default_rng(1).permutation(101)

    def cut(s: Samples, p) -> Samples:
        return Samples(s.alpha_level[p], s.authentic[p], s.authenticity_ratio[p])

    d = privacy.dcr
    shuffled = audit_table(
        Fidelity(cut(fidelity.samples, perm), cut(HOLDOUT, hperm)),
        Privacy(DCR(d.synthetic_to_train[perm], d.synthetic_to_holdout[perm],
                    d.exact_copy[perm], d.holdout_to_train[hperm], 0.002)),
        Thresholds(drop_too_close=True),
    )  # fmt: skip
    for rule in (*RULES, "removed"):
        np.testing.assert_array_equal(shuffled[rule], audit[rule].to_numpy()[perm])


def test_rule_summary_and_overlaps_add_up():
    fidelity, privacy = make_evidence()
    thresholds = Thresholds(level=0.02, alpha_loss=0.02, drop_too_close=True)
    audit = audit_table(fidelity, privacy, thresholds)
    summary = rule_summary(audit)
    assert summary.loc["drop_unauthentic", "flagged"] == 1  # row 1 (row 0 ties the minimum)
    assert summary.loc["drop_outside_alpha", "only"] == 1  # row 2
    assert summary.loc["any", "flagged"] == 4
    overlaps = rule_overlaps(audit)
    assert overlaps["n_rows"].sum() == audit["removed"].sum()
    off = Thresholds(use_alpha=False, drop_unauthentic=False, drop_exact_copies=False)
    empty = rule_overlaps(apply_thresholds(audit, off))
    assert empty.empty and list(empty.columns) == [*RULES, "rules", "n_rows"]


def test_copy_evidence_hand_computed():
    real = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 0.0], [0.0, 3.0]])
    synthetic = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 2.0]])
    holdout = np.array([[1.0, 0.0]])
    found = copy_evidence(real, synthetic, holdout, groups={"a": [0], "b": [1]})
    # distinct training rows (0,0), (0,3), (4,0): NND 3, 3, 4
    np.testing.assert_allclose(found.ratio, [0.0, 1 / 3, 2 / 4])
    np.testing.assert_array_equal(found.nearest_train_row, [0, 0, 1])  # first of duplicates
    np.testing.assert_allclose(found.holdout_ratio, [1 / 3])
    assert found.top_columns == ("", "b 100%", "b 100%")
    with pytest.raises(DataError, match="2 distinct rows"):
        copy_evidence(np.zeros((3, 2)), synthetic)


def test_audit_uses_encoder_space_evidence_when_given():
    fidelity, privacy = make_evidence()
    real = np.array([[0.0], [10.0], [20.0]])
    copies = copy_evidence(real, np.array([[0.0], [5.0], [1.0], [11.0], [15.0], [20.0]]),
                           np.linspace(0.0, 20.0, 101)[:, None], groups={"x": [0]})  # fmt: skip
    audit = audit_table(fidelity, privacy, copies=copies)
    assert audit.attrs["calibration"]["ratio_space"] == "encoder"
    np.testing.assert_array_equal(audit["nearest_train_row"], [0, 0, 0, 1, 1, 2])
    # holdout ratios 0, 0.02, ..., 0 at training points (3 zeros): 1 % quantile is 0, so the
    # exact copies by distance (ratio 0) are not "below" it; the hash rule catches row 0
    assert not audit["drop_unauthentic"].any()
    assert list(audit["top_columns"])[1] == "x 100%"


def test_copy_excess_and_verdicts(tmp_path):
    fidelity, privacy = make_evidence()
    audit = audit_table(fidelity, privacy, Thresholds(level=0.02))
    reference = holdout_audit(fidelity, privacy, Thresholds(level=0.02))
    excess = copy_excess(audit, reference)
    assert (excess.flagged, excess.n_rows) == (2, 6)  # rows 0, 1 (copies); α-rule not counted
    # leave-one-out, 100 other rows: j = floor(0.02 * 101) - 1 = 1, the two smallest ratios
    assert excess.reference == pytest.approx(2 / 101)
    # hand computation: one-sided 95 % Clopper-Pearson lower bound of 2 / 6
    lower = beta.ppf(0.05, 2, 5)
    assert excess.lower == pytest.approx(lower)
    verdicts = judge_audited(load_policy(), {}, copies=excess, kind="table")
    rule = verdicts["audit_copies"]
    # judged from the policy: the lower bound minus the fresh real sample's share
    assert rule.value == pytest.approx(lower - 2 / 101)
    assert (rule.pass_at, rule.fail_at, rule.verdict) == (0.005, 0.01, "fail")
    # the point is the flagged share; the rule judges its lower bound (both in the verdict)
    assert rule.measured == pytest.approx(2 / 6) and rule.bound == pytest.approx(lower)
    assert rule.reference == pytest.approx(2 / 101) and "lower bound" in rule.bound_text
    assert "2 of 6 rows flagged" in rule.reason and verdicts.overall == "fail"
    # the thresholds are the policy's: a looser policy file passes the same evidence
    loose = tmp_path / "loose.toml"
    loose.write_text("[rules.audit_copies]\npass = 0.1\nfail = 0.2\n", encoding="utf-8")
    assert judge_audited(load_policy(loose), {}, copies=excess)["audit_copies"].verdict == "pass"
    # a judgement without the audit's evidence leaves the audit rules out
    plain = apply_policy(load_policy(), {}, kind="table")
    assert not {"audit_copies", "reattack"} & {r.rule for r in plain.rules}


def test_reattack_rule_reads_the_curated_sets_attacks():
    def reattack(*worse):
        attacks = tuple(
            AttackChange(
                f"a{i}",
                0.5,
                (0.45, 0.55),
                0.5,
                (0.45, 0.55),
                0.01,
                (0.0, 0.03),
                0.01,
                (0.0, 0.03),
                w,
            )
            for i, w in enumerate(worse)
        )
        return Reattack(attacks, any(worse), "")

    policy = load_policy()
    excess = CopyExcess(0, 10, 0.0, 0.0, 0.0, 0.0)
    as_submitted = judge_audited(policy, {}, copies=excess)
    assert as_submitted["reattack"].verdict == "n/a"  # judged on a curated set only
    worse = judge_audited(policy, {}, copies=excess, reattack=reattack(False, True))
    assert (worse["reattack"].verdict, worse["reattack"].value) == ("fail", 1.0)
    assert "a1" in worse["reattack"].reason and worse.overall == "fail"
    assert judge_audited(policy, {}, copies=excess, reattack=reattack(False))[
        "reattack"
    ].verdict == ("pass")
    # required and not measured (no attack ran again): incomplete, never a pass
    unmeasured = judge_audited(
        policy, {}, copies=excess, reattack=Reattack((), False, "no attacks")
    )
    assert unmeasured["reattack"].verdict == "incomplete"


def test_compare_attacks_fails_only_beyond_the_interval():
    def cand(*attacks):
        return {"privacy": {"membership_inference": [
            {"attack": a, "auc": auc, "auc_ci": [auc - 0.05, auc + 0.05], "tpr_at_fpr_1pct": t}
            for a, auc, t in attacks]}}  # fmt: skip

    before = cand(("dist", 0.70, 0.05), ("clf", 0.52, 0.01))
    same = compare_attacks(before, cand(("dist", 0.55, 0.02), ("clf", 0.56, 0.01)))
    assert not same.worse and [a.attack for a in same.attacks] == ["dist", "clf"]
    worse = compare_attacks(before, cand(("dist", 0.60, 0.02), ("clf", 0.58, 0.01)))
    assert worse.worse and [a.worse for a in worse.attacks] == [False, True]
    tpr = {
        "privacy": {
            "membership_inference": [
                {
                    "attack": "clf",
                    "auc": 0.5,
                    "auc_ci": [0.45, 0.55],
                    "tpr_at_fpr_1pct": 0.01,
                    "tpr_at_fpr_1pct_ci": [0.0, 0.03],
                }
            ]
        }
    }
    after = {"privacy": {"membership_inference": [{"attack": "clf", "auc": 0.5,
             "auc_ci": [0.45, 0.55], "tpr_at_fpr_1pct": 0.05}]}}  # fmt: skip
    assert compare_attacks(tpr, after).worse
    assert compare_attacks({}, after).note


TRICKY_CSV = (
    "id,age,income,city,note\n"
    "007,39,1.50,Zürich,plain\n"
    '008,-4,"2,5", Genève ,"say ""hi"""\n'
    "009,51,,Lyon,=1+2\n"
    "010,1e3,-7.25,Bern,-abc\n"
    "011,22,3.000,Basel,\n"
    "012,60,8,Chur,@SUM(A1)\n"
)


def tricky_table(name="cand", role="synthetic"):
    return read_table(io.BytesIO(TRICKY_CSV.encode("utf-8")), name=name, role=role)


def audit_removing(n, rows):
    removed = np.zeros(n, bool)
    removed[list(rows)] = True
    privacy = Privacy(DCR(np.where(removed, 0.0, 5.0), None, removed, np.ones(4)))
    return audit_table(None, privacy, Thresholds(use_alpha=False, drop_unauthentic=False))


def test_curate_keeps_input_strings_and_loses_no_row():
    table = tricky_table()
    audit = audit_removing(table.n_rows, [1, 4])
    curation = curate(table, audit)

    assert list(curation.kept_rows) == [0, 2, 3, 5]
    assert list(curation.removed_rows) == [1, 4]
    # curated ∪ removed = input rows, exactly
    back = pd.concat([curation.kept_raw, curation.removed_raw])
    back.index = np.concatenate([curation.kept_rows, curation.removed_rows])
    pd.testing.assert_frame_equal(back.sort_index(), table.raw)
    assert list(curation.kept_raw.columns) == list(table.raw.columns)
    assert curation.reasons == ("exact copy of a training row",) * 2
    assert list(curation.removed_table().columns[:2]) == ["row", "reasons"]
    assert curation.table.sha256 != table.sha256
    assert curation.table.n_rows == 4


def test_curated_csv_reread_gives_the_input_strings():
    table = tricky_table()
    curation = curate(table, audit_removing(table.n_rows, [1]))
    data = curated_csv_bytes(curation)
    back = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    # cells a spreadsheet would run are quoted; every other cell is the input string
    expected = curation.kept_raw.copy()
    expected["note"] = expected["note"].replace(
        {"=1+2": "'=1+2", "-abc": "'-abc", "@SUM(A1)": "'@SUM(A1)"}
    )
    pd.testing.assert_frame_equal(back, expected, check_dtype=False)
    assert back.loc[back["id"] == "010", "age"].item() == "1e3"
    assert back.loc[back["id"] == "007", "income"].item() == "1.50"


def test_curated_parquet_keeps_dtypes():
    table = tricky_table()
    curation = curate(table, audit_removing(table.n_rows, [0, 2]))
    back = pd.read_parquet(io.BytesIO(curated_parquet_bytes(curation)))
    pd.testing.assert_frame_equal(back, curation.kept_frame)
    assert dict(back.dtypes) == dict(table.frame.dtypes)


@pytest.mark.slow
def test_curate_demo_table_round_trip():
    demo = pytest.importorskip("synthreview.demo")
    review = demo.tables(seed=0, n_train=300)
    table = review.synthetic["copula"]
    rng = np.random.default_rng(0)
    curation = curate(table, audit_removing(table.n_rows, rng.choice(table.n_rows, 40, False)))
    assert len(curation.kept_rows) == table.n_rows - 40
    back = pd.read_csv(
        io.BytesIO(curated_csv_bytes(curation, schema=review.schema)),
        dtype=str,
        keep_default_na=False,
    )
    pd.testing.assert_frame_equal(back, curation.kept_raw.reset_index(drop=True), check_dtype=False)


def test_curated_review_replaces_only_curated_candidates():
    real = read_table(io.BytesIO(TRICKY_CSV.encode()), name="real", role="real")
    review = align(real, {"a": tricky_table("a"), "b": tricky_table("b")})
    curation = curate(review.synthetic["a"], audit_removing(6, [0]))
    curated = curated_review(review, {"a": curation})
    assert curated.candidates == ["a"]
    assert curated.synthetic["a"].n_rows == 5
    assert curated.real is review.real
    with pytest.raises(DataError, match="curations name candidates"):
        curated_review(review, {"zzz": curation})


def test_curated_review_cuts_traces_too():
    from synthreview.io.traces import Traces, align_traces

    rng = np.random.default_rng(0)
    real = Traces.from_array(100 + 20 * rng.random((6, 12)), name="real")
    cand = Traces.from_array(100 + 20 * rng.random((5, 12)), name="cand")
    review = align_traces(real, {"cand": cand})
    curation = curate(review.synthetic["cand"], audit_removing(5, [1, 3]))
    curated = curated_review(review, {"cand": curation})
    assert curated.traces["cand"].n_traces == 3
    np.testing.assert_array_equal(curated.traces["cand"].values, cand.values[[0, 2, 4]])
    assert curated.traces["cand"].sha256 == curation.table.sha256 != cand.sha256
    assert curated.traces["real"] is review.traces["real"]


def test_curate_needs_thresholds_for_foreign_tables():
    table = tricky_table()
    audit = audit_removing(table.n_rows, [1])
    audit.attrs.clear()
    with pytest.raises(ConfigError, match="thresholds"):
        curate(table, audit)
    assert len(curate(table, audit, Thresholds()).removed_rows) == 1
