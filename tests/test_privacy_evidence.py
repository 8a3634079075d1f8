"""ε lower bound, WP29 risk arithmetic, vulnerable records and the KDE of the no-box attacks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import gaussian_kde

from synthreview.metrics.privacy.attack_stats import summarize_attack
from synthreview.metrics.privacy.attacks import (
    gaussian_kde_logpdf,
    isotropic_kde_logpdf,
    likelihood_cv_bandwidth,
)
from synthreview.metrics.privacy.epsilon import clopper_pearson, epsilon_lower_bound
from synthreview.metrics.privacy.vulnerable import mask_rows, vulnerable_records
from synthreview.metrics.privacy.wp29 import risk_estimate, singling_out_risk, wilson


def test_kde_matches_scipy_and_leaves_own_row_out():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(400, 3)) @ rng.normal(size=(3, 3))
    query = rng.normal(size=(50, 3))
    assert np.allclose(gaussian_kde_logpdf(query, data), gaussian_kde(data.T).logpdf(query.T),
                       atol=1e-4)  # fmt: skip
    own = np.r_[np.arange(5), np.full(45, -1)]
    q = np.vstack([data[:5], query[5:]])
    loo = gaussian_kde_logpdf(q, data, own=own)
    full = gaussian_kde_logpdf(q, data)
    assert (loo[:5] < full[:5]).all() and np.allclose(loo[5:], full[5:])


def test_clopper_pearson_edges_and_known_value():
    lo, hi = clopper_pearson(np.array([0, 10]), 10, 0.025)
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(1 - 0.025 ** (1 / 10))


def test_epsilon_is_zero_for_chance_and_large_for_a_perfect_attack():
    rng = np.random.default_rng(0)
    is_member = np.r_[np.ones(2000, bool), np.zeros(2000, bool)]
    chance = summarize_attack("chance", rng.random(4000), is_member, n_bootstrap=10)
    perfect = summarize_attack("perfect", is_member.astype(float), is_member, n_bootstrap=10)
    assert epsilon_lower_bound([chance]).epsilon < 0.3
    best = epsilon_lower_bound([chance, perfect])
    # 1000 of 1000 members, 0 of 1000 non-members: ε ≥ log(lo / hi) with one-sided 97.5 % CP
    expected = np.log(0.025 ** (1 / 1000) / (1 - 0.025 ** (1 / 1000)))
    assert best.attack == "perfect" and best.epsilon == pytest.approx(expected, rel=1e-6)


def test_wilson_and_residual_risk_by_hand():
    rate, err = wilson(50, 100)
    z = 1.959963984540054
    assert rate == pytest.approx((50 + z * z / 2) / (100 + z * z))
    assert err == pytest.approx(z / (100 + z * z) * np.sqrt(25 + z * z / 4))
    r = risk_estimate(np.r_[np.ones(60, bool), np.zeros(40, bool)], np.arange(100), 100, 20, 5, 100)
    a, c = wilson(60, 100)[0], wilson(20, 100)[0]
    assert r.risk == pytest.approx((a - c) / (1 - c)) and r.ci[0] < r.risk < r.ci[1]
    assert list(r.flagged_rows) == list(range(60))


def test_singling_out_catches_a_copy_and_not_a_fresh_sample():
    rng = np.random.default_rng(0)

    def table(n):
        return pd.DataFrame({"x": np.round(rng.normal(size=n), 3), "c": rng.choice(list("abc"), n)})

    real, control, fresh = table(500), table(500), table(500)
    copy = singling_out_risk(real, real, control, numeric=["x"], mode="univariate", n_attacks=100)
    new = singling_out_risk(real, fresh, control, numeric=["x"], mode="univariate", n_attacks=100)
    assert copy.risk > 0.8 and new.risk < 0.1
    with pytest.raises(ValueError, match="mode must be"):
        singling_out_risk(real, fresh, control, numeric=["x"], mode="both")


def test_vulnerable_records_rank_members_by_p_value_and_mask_values():
    is_member = np.r_[np.ones(4, bool), np.zeros(4, bool)]
    scores = np.array([9.0, 1.0, 5.0, 0.0, 2.0, 3.0, 4.0, 0.5])
    a = summarize_attack("a", scores, is_member, n_bootstrap=5)
    found = vulnerable_records([a], np.array([10, 11, 12, 13]), k=2)
    assert list(found.rows) == [10, 12]
    assert list(found.p_value) == pytest.approx([1 / 5, 1 / 5])  # nothing outscores 9 or 5
    real = pd.DataFrame({"x": np.arange(20.0), "c": ["a"] * 19 + ["z"]})
    masked = mask_rows(real, np.array([0, 19]), numeric=["x"], min_group=5)
    assert masked["c"].tolist() == ["a", "(rare)"] and masked["x"][0].startswith("[0")
    with pytest.raises(ValueError, match="k must be"):
        vulnerable_records([a], np.arange(4), k=0)


def test_isotropic_kde_matches_sklearn_kernel_density():
    from sklearn.neighbors import KernelDensity

    rng = np.random.default_rng(1)
    data, query = rng.normal(size=(300, 4)), rng.normal(size=(40, 4))
    expected = KernelDensity(bandwidth=0.4).fit(data).score_samples(query)
    np.testing.assert_allclose(isotropic_kde_logpdf(query, data, bandwidth=0.4), expected,
                               atol=1e-4)  # fmt: skip
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        isotropic_kde_logpdf(query, data, bandwidth=0.0)


def test_likelihood_cv_bandwidth_maximises_the_leave_one_out_likelihood():
    rng = np.random.default_rng(2)
    data = rng.normal(size=(400, 2))
    h = likelihood_cv_bandwidth(data, max_rows=400)

    def loo(bandwidth):
        return isotropic_kde_logpdf(data, data, bandwidth=bandwidth, own=np.arange(400)).mean()

    assert loo(h) > loo(0.7 * h) and loo(h) > loo(1.4 * h)
    # a Gaussian sample: near the normal-reference optimum (Silverman 1986, eq. 4.14)
    assert 0.6 < h / (400 ** (-1 / 6)) < 1.6
    # clustered rows (ten tight groups) get a bandwidth that follows the spacing, not the spread
    clustered = np.repeat(rng.normal(scale=5, size=(10, 2)), 40, axis=0)
    clustered += rng.normal(scale=0.05, size=clustered.shape)
    assert likelihood_cv_bandwidth(clustered) < 0.2
    with pytest.raises(ValueError, match="not all equal"):
        likelihood_cv_bandwidth(np.ones((5, 2)))
