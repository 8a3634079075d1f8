"""Privacy section: attack summaries, attacks on known generators, DCR, disclosure risk."""

from __future__ import annotations

import json
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import roc_auc_score

from synthreview.encoding import TabularEncoder
from synthreview.engine import Engine, using
from synthreview.errors import ConfigError, DataError
from synthreview.io.schema import Schema
from synthreview.memo import Memo
from synthreview.metrics.privacy import attacks, membership
from synthreview.metrics.privacy.attack_stats import (
    attack_set,
    bootstrap_auc,
    challenge_accuracy,
    summarize_attack,
)
from synthreview.metrics.privacy.disclosure import attribute_inference, l_diversity
from synthreview.metrics.privacy.membership import classifier_seeker_scores, membership_inference
from synthreview.metrics.privacy.section import (
    distance_to_closest_record,
    evaluate_privacy,
    evaluate_privacy_arrays,
    row_hashes,
)
from synthreview.neighbors import nearest

SCHEMA = Schema({"age": "numeric", "income": "numeric", "sex": "categorical", "job": "categorical"})


def population(n: int, seed: int) -> pd.DataFrame:
    """Mixed-type rows from one fixed distribution (continuous, so duplicates are rare)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    job = rng.choice(["clerk", "nurse", "driver", "cook"], n, p=[0.4, 0.3, 0.2, 0.1])
    age = rng.normal(45, 12, n)
    income = 1000 + 30 * age + np.where(sex == "M", 300, 0) + rng.normal(0, 200, n)
    return pd.DataFrame({"age": age, "income": income, "sex": sex, "job": job})


@pytest.fixture(scope="module")
def tables():
    real, holdout, fresh = population(800, 0), population(800, 1), population(800, 2)
    return real, holdout, fresh, TabularEncoder(SCHEMA).fit(real)


# ---------------------------------------------------------------- summaries of attack scores


def test_summary_of_perfect_and_useless_attacks():
    is_member = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    perfect = summarize_attack("x", np.r_[np.ones(50), np.zeros(50)], is_member, n_bootstrap=20)
    assert perfect.auc == 1.0 and perfect.tpr_at_fpr_1pct == 1.0 and perfect.auc_ci == (1.0, 1.0)
    constant = summarize_attack("x", np.zeros(100), is_member, n_bootstrap=20)
    assert constant.auc == 0.5 and constant.tpr_at_fpr_1pct == pytest.approx(0.01)


def test_bootstrap_auc_equals_sklearn_on_the_same_resamples():
    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=300), 1)  # rounded: many ties
    is_member = rng.random(300) < 0.4
    boot = bootstrap_auc(scores, is_member, n_bootstrap=5, seed=11)
    replay = np.random.default_rng(11)
    members, others = scores[is_member], scores[~is_member]
    for value in boot:
        m = members[replay.integers(0, len(members), len(members))]
        o = others[replay.integers(0, len(others), len(others))]
        labels = np.r_[np.ones(len(m)), np.zeros(len(o))]
        assert value == pytest.approx(roc_auc_score(labels, np.r_[m, o]))


def test_tpr_at_low_fpr_is_interpolated_on_the_roc():
    # 1000 non-members, the 5 highest-scored are false positives; members all score above 0.5
    scores = np.r_[np.linspace(0.6, 1.0, 100), np.r_[np.full(5, 2.0), np.zeros(995)]]
    is_member = np.r_[np.ones(100, bool), np.zeros(1000, bool)]
    result = summarize_attack("x", scores, is_member, n_bootstrap=10)
    assert result.tpr_at_fpr_01pct == 0.0  # FPR 0.1% = 1 row, still inside the 5 false positives
    assert result.tpr_at_fpr_1pct == 1.0


def test_challenge_accuracy_shares_ties_fractionally():
    is_member = np.array([True, True, False, False])
    assert challenge_accuracy(np.array([3.0, 2.0, 1.0, 0.0]), is_member) == 1.0
    # two places, three rows tied at the top: each gets 2/3 of a member call
    acc = challenge_accuracy(np.array([1.0, 1.0, 1.0, 0.0]), is_member)
    assert acc == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1) / 4)


def test_attack_set_is_balanced_disjoint_and_seeded():
    sets = attack_set(500, 300, max_attack=200, seed=1)
    assert len(sets.real_rows) == len(sets.holdout_rows) == 200
    assert len(set(sets.reference_member_rows) & set(sets.reference_nonmember_rows)) == 0
    assert len(sets.reference_member_rows) == 150
    again = attack_set(500, 300, max_attack=200, seed=1)
    np.testing.assert_array_equal(sets.holdout_rows, again.holdout_rows)
    within = attack_set(500, 300, max_attack=200, seed=1, sanity_within_nonmembers=True)
    halves = np.r_[within.reference_member_rows, within.reference_nonmember_rows]
    assert len(within.reference_member_rows) == len(within.reference_nonmember_rows) == 100
    assert len(set(halves)) == 200 and set(halves) == set(within.holdout_rows)


# ---------------------------------------------------------------- attacks on known generators


def test_copying_generator_is_caught_by_every_distance_attack(tables):
    real, holdout, _, encoder = tables
    results = membership_inference(
        real, real.copy(), holdout, encoder=encoder, attacks=["distance", "nn_seeker"]
    )
    for result in results:
        assert result.error is None
        assert result.auc > 0.95, result.attack
        assert abs(result.reference_auc - 0.5) < 0.06
    assert results[1].challenge_accuracy > 0.95


def test_copying_generator_is_caught_by_the_density_and_classifier_attacks(tables):
    # cross-validated KDE bandwidth and interpolating forests see a verbatim copy (issue 14);
    # this table has two continuous columns only, where the reference-calibrated attacks are
    # weakest (DCR difference 0.85 here), hence the lower bars for the KDEs
    real, holdout, fresh, encoder = tables
    floor = {"classifier_seeker": 0.95, "logan_classifier": 0.95, "logan_kde": 0.75,
             "domias_kde": 0.65}  # fmt: skip
    copied = membership_inference(
        real, real.copy(), holdout, encoder=encoder, attacks=list(floor), n_bootstrap=20
    )
    fresh_results = membership_inference(
        real, fresh, holdout, encoder=encoder, attacks=list(floor), n_bootstrap=20
    )
    for copy, new in zip(copied, fresh_results, strict=True):
        assert copy.error is None and new.error is None
        assert copy.auc > floor[copy.attack], (copy.attack, copy.auc)
        assert abs(new.auc - 0.5) < 0.05, (new.attack, new.auc)
    # the reference definition (Scott's rule) smooths the copies away
    x = np.vstack([encoder.transform(real), encoder.transform(holdout)])
    own = np.r_[np.full(len(real), -1), np.arange(len(holdout))]
    is_member = np.arange(len(x)) < len(real)
    scott = attacks.NoBoxInputs(x, x[is_member], x[~is_member], own, bandwidth="scott")
    assert roc_auc_score(is_member, scott.log_p_synthetic) < copied[2].auc - 0.05


def test_sanity_run_is_skipped_only_for_cross_fitted_model_attacks(tables):
    real, holdout, _, encoder = tables
    names = ["nn_seeker", "classifier_seeker", "density", "dcr_difference"]
    results = membership_inference(
        real, real.copy(), holdout, encoder=encoder, attacks=names, n_bootstrap=20
    )
    for result in results:
        assert result.error is None, result.error
        skipped = result.attack in membership.NO_SANITY_RUN
        assert (result.reference_auc is None) == skipped, result.attack
        assert (result.reference_fpr is None) == skipped, result.attack
    assert {"classifier_seeker", "density", "logan_classifier"} == set(membership.NO_SANITY_RUN)


def test_fresh_sample_is_at_chance_for_distance_attacks(tables):
    real, holdout, fresh, encoder = tables
    for result in membership_inference(
        real, fresh, holdout, encoder=encoder, attacks=["distance", "nn_seeker"]
    ):
        assert abs(result.auc - 0.5) < 0.05, result.attack
        assert result.auc_ci[0] < result.auc < result.auc_ci[1]


def test_fresh_sample_is_at_chance_for_model_based_attacks(tables):
    real, holdout, fresh, encoder = tables
    for result in membership_inference(
        real, fresh, holdout, encoder=encoder, attacks=["classifier_seeker", "density"]
    ):
        assert result.error is None
        assert abs(result.auc - 0.5) < 0.05, result.attack


def test_add_noise_hider_auc_falls_as_sigma_grows():
    rng = np.random.default_rng(0)
    real, holdout = rng.normal(size=(600, 4)), rng.normal(size=(600, 4))
    aucs = []
    for sigma in (0.05, 0.3, 1.5):
        noisy = real + rng.normal(0, sigma, real.shape)
        (result,) = membership_inference(real, noisy, holdout, attacks=["nn_seeker"])
        aucs.append(result.auc)
    assert aucs[0] > aucs[1] > aucs[2]
    assert aucs[0] > 0.95 and aucs[2] < 0.65


def test_cross_fitting_never_scores_a_row_with_a_model_that_saw_it():
    class Spy(ClassifierMixin, BaseEstimator):
        log: ClassVar[list[tuple[set, set]]] = []

        def fit(self, x, y):
            self.seen_ = {row.tobytes() for row in x}
            self.classes_ = np.array([0.0, 1.0])
            return self

        def predict_proba(self, x):
            Spy.log.append((self.seen_, {row.tobytes() for row in x}))
            return np.full((len(x), 2), 0.5)

    rng = np.random.default_rng(0)
    attack_x = np.c_[np.arange(100.0), rng.normal(size=100)]  # first column: a unique id
    synthetic_x = np.c_[np.arange(1000.0, 1050.0), rng.normal(size=50)]
    is_member = np.arange(100) < 50
    classifier_seeker_scores(attack_x, synthetic_x, is_member, n_folds=4, estimator=Spy())
    assert len(Spy.log) == 4
    scored_rows = set()
    for seen, scored in Spy.log:
        assert not seen & scored  # the scored fold was not in the model's training rows
        assert len(seen) == 50 + 75  # all synthetic rows + the other three folds
        scored_rows |= scored
    assert len(scored_rows) == 100


def test_logan_classifier_never_scores_a_reference_row_with_a_model_that_saw_it():
    # why the LOGAN classifier may skip the sanity run: its cross-fitting leaves every scored
    # reference row out of the model that scores it
    log = []

    class Spy(ClassifierMixin, BaseEstimator):
        def fit(self, x, y, sample_weight=None):
            self.seen_ = {row.tobytes() for row in x}
            self.classes_ = np.array([0.0, 1.0])
            return self

        def predict_proba(self, x):
            log.append((self.seen_, {row.tobytes() for row in x}))
            return np.full((len(x), 2), 0.5)

    rng = np.random.default_rng(0)
    reference = np.c_[np.arange(60.0), rng.normal(size=60)]  # first column: a unique id
    synthetic = np.c_[np.arange(100.0, 140.0), rng.normal(size=40)]
    members = np.c_[np.arange(200.0, 230.0), rng.normal(size=30)]
    attack_x = np.vstack([members, reference[:30]])
    own = np.r_[np.full(30, -1), np.arange(30)]
    inputs = attacks.NoBoxInputs(attack_x, synthetic, reference, own)
    synthetic = synthetic.astype(np.float32)  # as the attacks hold them
    inputs.logan_classifier(estimator=Spy(), n_folds=3)
    assert len(log) == 3
    for seen, scored in log:
        assert not seen & scored
        assert {row.tobytes() for row in synthetic} <= seen
    assert sum(len(scored) for _, scored in log) == 60


def test_one_hot_blocks_become_native_categorical_codes():
    x = np.array([[0.5, 0, 1, 0, 1, 0], [1.5, 0, 0, 0, 0, 1], [2.5, 1, 0, 0, 1, 0]], np.float32)
    out, categorical = attacks.native_categories(x, [[1, 2, 3], [4, 5]])
    np.testing.assert_array_equal(categorical, [False, True, True])
    np.testing.assert_array_equal(out[:, 0], [0.5, 1.5, 2.5])
    np.testing.assert_array_equal(out[:, 1], [1.0, np.nan, 0.0])  # all-zero block: unseen
    np.testing.assert_array_equal(out[:, 2], [0.0, 1.0, 0.0])


def test_classifier_seeker_learns_a_categorical_level_from_the_blocks(tables):
    real, holdout, _, encoder = tables
    attack = pd.concat([real.iloc[:300], holdout.iloc[:300]], ignore_index=True)
    synthetic = real.iloc[300:].assign(job="nurse")  # the generator knows one job only
    blocks = [encoder.groups[c] for c in SCHEMA.categorical]
    scores = classifier_seeker_scores(
        encoder.transform(attack),
        encoder.transform(synthetic),
        np.r_[np.ones(300, bool), np.zeros(300, bool)],
        categorical_blocks=blocks,
    )
    nurse = (attack["job"] == "nurse").to_numpy()
    assert scores[nurse].min() > scores[~nurse].max()


def test_failing_attack_reports_its_error_and_others_still_run(tables, monkeypatch):
    real, holdout, fresh, encoder = tables

    def boom(*args, **kwargs):
        raise RuntimeError("no convergence")

    monkeypatch.setattr(membership, "classifier_seeker_scores", boom)
    results = membership_inference(
        real, fresh, holdout, encoder=encoder, attacks=["nn_seeker", "classifier_seeker"]
    )
    assert results[0].error is None and np.isfinite(results[0].auc)
    assert "no convergence" in results[1].error and np.isnan(results[1].auc)
    json.dumps(results[1].to_dict())


def test_same_seed_same_numbers_and_synthetic_order_does_not_matter(tables):
    real, holdout, fresh, encoder = tables
    shuffled = fresh.sample(frac=1.0, random_state=5).reset_index(drop=True)
    kwargs = {"encoder": encoder, "max_attack": 300, "n_bootstrap": 20}
    first = membership_inference(real, fresh, holdout, **kwargs)
    second = membership_inference(real, shuffled, holdout, **kwargs)
    for a, b in zip(first, second, strict=True):
        assert a.auc == b.auc and a.auc_ci == b.auc_ci


# ---------------------------------------------------------------- distance to closest record


def test_dcr_share_is_half_for_fresh_and_one_for_copies(tables):
    real, holdout, fresh, encoder = tables
    real_x, holdout_x = encoder.transform(real), encoder.transform(holdout)
    fresh_dcr = distance_to_closest_record(real_x, encoder.transform(fresh), holdout_x)
    assert abs(fresh_dcr.share_closer_to_train - 0.5) < 0.05
    assert fresh_dcr.exact_copies == 0
    copy_dcr = distance_to_closest_record(real_x, real_x.copy(), holdout_x)
    assert copy_dcr.share_closer_to_train == 1.0
    assert copy_dcr.exact_copies == len(real)
    assert copy_dcr.synthetic_to_train_median == 0.0 and copy_dcr.nndr_median == 0.0
    np.testing.assert_array_equal(copy_dcr.nearest_train_index, np.arange(len(real)))


def test_dcr_share_subsamples_the_larger_set_and_states_it(tables):
    real, holdout, fresh, encoder = tables
    dcr = distance_to_closest_record(
        encoder.transform(real), encoder.transform(fresh), encoder.transform(holdout.iloc[:300])
    )
    assert dcr.share_rows == 300
    assert abs(dcr.share_closer_to_train - 0.5) < 0.06
    assert len(dcr.synthetic_to_train) == len(fresh) and len(dcr.holdout_to_train) == 300


def test_dcr_memo_keeps_each_search_kind_apart(tables):
    """The review's memo shares the holdout rows' search between candidates; a search under
    other approximate settings (a context reused after the reviewer changed them) computes its
    own, and the same search on another device or thread count is shared."""
    real, holdout, fresh, encoder = tables
    real_x, holdout_x, fresh_x = (encoder.transform(t) for t in (real, holdout, fresh))
    memo = Memo()
    engines = [Engine(), Engine(approximate="ivf"), Engine(approximate="hnsw"),
               Engine(approximate="ivf", widen=1, exact_fallback=False)]  # fmt: skip
    for engine in engines:
        with using(engine):
            distance_to_closest_record(real_x, fresh_x, holdout_x, memo=memo)
    assert len(memo) == len(engines)
    with using(Engine(device="cpu", threads=1)):  # the same exact search: shared
        distance_to_closest_record(real_x, fresh_x, holdout_x, memo=memo)
    assert len(memo) == len(engines)


def test_dcr_per_row_arrays_follow_synthetic_input_order(tables):
    real, holdout, fresh, encoder = tables
    real_x, holdout_x, fresh_x = (encoder.transform(t) for t in (real, holdout, fresh))
    order = np.random.default_rng(0).permutation(len(fresh_x))
    a = distance_to_closest_record(real_x, fresh_x, holdout_x)
    b = distance_to_closest_record(real_x, fresh_x[order], holdout_x)
    np.testing.assert_array_equal(a.synthetic_to_train[order], b.synthetic_to_train)
    np.testing.assert_array_equal(a.nearest_train_index[order], b.nearest_train_index)
    assert ((a.nndr >= 0) & (a.nndr <= 1)).all()


def test_exact_copies_come_from_row_hashes_not_float_distance():
    real = pd.DataFrame({"age": [30, 40], "sex": ["F", "M"]})
    synthetic = pd.DataFrame({"age": [30.0, 40.0 + 1e-9], "sex": ["F", "M"]})
    hashes = row_hashes(real)
    assert np.isin(row_hashes(synthetic), hashes).tolist() == [True, False]


# ---------------------------------------------------------------- disclosure risk


def test_attribute_inference_against_holdout_benchmark(tables):
    real, holdout, fresh, encoder = tables
    fair = attribute_inference(real, fresh, holdout, sensitive="income", encoder=encoder)
    assert fair.metric == "rmse" and 0.8 < fair.risk_ratio < 1.25
    assert fair.ratio == pytest.approx(fair.synthetic / fair.holdout)
    broken = fresh.assign(sex=fresh["sex"].sample(frac=1.0, random_state=0).to_numpy())
    sex = attribute_inference(real, broken, holdout, sensitive="sex", encoder=encoder)
    assert sex.metric == "accuracy" and sex.risk_ratio < 0.95  # the relation was destroyed
    with pytest.raises(ConfigError, match="sensitive"):
        attribute_inference(real, fresh, holdout, sensitive="nope", encoder=encoder)


def test_l_diversity_flags_columns_with_few_distinct_values(tables):
    _, _, fresh, encoder = tables
    coarse = fresh.assign(age=np.where(fresh["sex"] == "M", 30.0, 60.0))
    result = l_diversity(coarse, encoder=encoder, ell=10)
    table = result.table.set_index("column")
    assert table.loc["age", "share_below_l"] == 1.0
    assert table.loc["income", "share_below_l"] == 0.0
    assert result.to_dict()["l"] == 10


# ---------------------------------------------------------------- section entry points


def test_evaluate_privacy_to_dict_keys(tables):
    real, holdout, fresh, encoder = tables
    report = evaluate_privacy(
        real, fresh, holdout, schema=SCHEMA, encoder=encoder, sensitive="job", max_attack=200
    )
    data = json.loads(json.dumps(report.to_dict()))
    assert [a["attack"] for a in data["membership_inference"]] == list(membership.ATTACKS)
    first = data["membership_inference"][0]
    assert {"attack", "auc", "auc_ci", "tpr_at_fpr_1pct", "roc"} <= set(first)
    assert set(first["roc"]) == {"fpr", "tpr"}
    assert {"share_closer_to_train", "exact_copies", "synthetic_to_train_median",
            "holdout_to_train_median"} <= set(data["dcr"])  # fmt: skip
    assert data["attribute_inference"]["sensitive"] == "job"
    assert data["l_diversity"]["l"] == 10
    assert report.errors == {}


def test_evaluate_privacy_without_holdout_skips_with_reasons(tables):
    real, _, fresh, encoder = tables
    report = evaluate_privacy(real, fresh, None, schema=SCHEMA, encoder=encoder, sensitive="age")
    assert report.membership_inference == ()
    assert "holdout" in report.skipped["membership_inference"]
    assert "holdout" in report.skipped["attribute_inference"]
    assert np.isnan(report.dcr.share_closer_to_train) and report.dcr.synthetic_to_holdout is None
    assert len(report.dcr.exact_copy) == len(fresh)


def test_evaluate_privacy_arrays_runs_the_array_attacks():
    rng = np.random.default_rng(1)
    real, holdout, synthetic = (rng.normal(size=(300, 6)) for _ in range(3))
    report = evaluate_privacy_arrays(real, synthetic, holdout, max_attack=150)
    assert [a.attack for a in report.membership_inference] == [
        a for a in membership.ATTACKS if a not in membership.COLUMN_ATTACKS
    ]
    assert all(a.error is None for a in report.membership_inference)
    assert report.epsilon_lower_bound is not None
    assert len(report.dcr.synthetic_to_train) == 300
    json.dumps(report.to_dict())


def test_evaluate_privacy_rejects_an_empty_synthetic_table(tables):
    real, holdout, fresh, encoder = tables
    with pytest.raises(DataError, match="synthetic must have at least 2 rows"):
        evaluate_privacy(real, fresh.iloc[:0], holdout, schema=SCHEMA, encoder=encoder)


@pytest.mark.parametrize(("k", "max_mismatch"), [(1, 0), (2, 0), (1, 1), (2, 1)])
def test_same_tuple_prepass_equals_brute_force_nearest(tables, k, max_mismatch):
    real, _, fresh, encoder = tables
    coarse = fresh.assign(age=fresh["age"].round(-1))  # many equal rows -> many ties
    coarse.loc[:20, "job"] = "pilot"  # a level unseen in real: all-zero one-hot block
    query, reference = (
        encoder.transform(coarse),
        encoder.transform(real.assign(age=real["age"].round(-1))),
    )
    blocks = [encoder.groups[c] for c in SCHEMA.categorical]
    dist, index = attacks.encoded_nearest(
        query, reference, k=k, categorical_blocks=blocks, max_mismatch=max_mismatch
    )
    brute = nearest(query, reference, k=k)
    np.testing.assert_allclose(dist, brute.distances, atol=1e-9)
    # the chosen rows really are at those distances (among exact ties either row is right)
    chosen = np.linalg.norm(
        query[:, None, :].astype(float) - reference[index].astype(float), axis=2
    )
    np.testing.assert_allclose(chosen, dist, atol=1e-9)
    assert (index == brute.indices).mean() > 0.99


def test_no_box_subset_equals_inputs_built_on_the_subset(tables):
    # the main and sanity runs share one pooled set of searches and densities
    real, holdout, _, encoder = tables
    real_x, holdout_x = encoder.transform(real), encoder.transform(holdout)
    x = np.vstack([real_x[:100], holdout_x[:200]])
    own = np.r_[np.full(100, -1), np.arange(200)]
    pool = attacks.NoBoxInputs(x, real_x[::2], holdout_x, own, seed=3)
    rows = np.r_[150:250, 20:60]
    sub, direct = pool.subset(rows), attacks.NoBoxInputs(x[rows], real_x[::2], holdout_x,
                                                         own[rows], seed=3)  # fmt: skip
    assert sub.kde_bandwidth == pytest.approx(direct.kde_bandwidth)
    for name in ("dcr_difference", "nndr", "domias_kde", "logan_kde", "local_neighbourhood"):
        np.testing.assert_allclose(
            attacks.no_box_scores(name, sub), attacks.no_box_scores(name, direct), rtol=1e-6,
            err_msg=name,
        )  # fmt: skip
    # Monte-Carlo counting: one radius (median over the pooled rows) for every subset
    np.testing.assert_array_equal(attacks.no_box_scores("mc", sub), pool.mc()[rows])
