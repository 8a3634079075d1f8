"""The toy experiments of Alaa et al. (2022), run as tests on generated data (embedding "none")."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthreview.metrics.fidelity.alpha_beta import alpha_precision_curve
from synthreview.metrics.fidelity.section import evaluate_fidelity


def _report(real, synthetic, holdout=None):
    return evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=0)


def test_identical_distributions_score_like_the_holdout_reference():
    """Theorem 1: P_g = P_r gives curves on the diagonal, i.e. what a fresh real sample gets."""
    rng = np.random.default_rng(0)
    real, synthetic, holdout = (rng.standard_normal((800, 5)) for _ in range(3))
    report = _report(real, synthetic, holdout)
    ref = report.holdout_reference
    assert report.ip_alpha > 0.9 and ref.ip_alpha > 0.9
    assert report.ip_alpha == pytest.approx(ref.ip_alpha, abs=0.05)
    assert report.ir_beta == pytest.approx(ref.ir_beta, abs=0.05)
    assert report.authenticity == pytest.approx(ref.authenticity, abs=0.06)
    assert 0.35 < ref.authenticity < 0.65  # a fresh sample is "copied" about half the time


@pytest.mark.parametrize("where", ["real", "synthetic"])
def test_one_outlier_moves_precision_recall_but_not_ip_ir(where):
    """Appendix "robustness to outliers": d = 64, Y ~ N(µ, I); one far outlier added."""
    rng = np.random.default_rng(1)
    d = 64
    real = rng.standard_normal((1000, d))
    synthetic = rng.standard_normal((1000, d)) + 0.4
    clean = _report(real, synthetic)
    # placed beyond the other set, so its huge k-NN ball swallows the other set
    outlier = np.full((1, d), 4.0 if where == "real" else -4.0)
    if where == "real":
        dirty = _report(np.vstack([real[:-1], outlier]), synthetic)
        jump = dirty.prdc.precision - clean.prdc.precision
    else:
        dirty = _report(real, np.vstack([synthetic[:-1], outlier]))
        jump = dirty.prdc.recall - clean.prdc.recall
    assert jump > 0.3
    assert abs(dirty.ip_alpha - clean.ip_alpha) < 0.03
    assert abs(dirty.ir_beta - clean.ir_beta) < 0.03


def test_mode_resolution_is_seen_by_alpha_precision_at_small_alpha():
    """Two modes at ±µ/2 (σ = 1) against one wide mode N(0, 1 + µ²): P&R and D&C barely react."""
    rng = np.random.default_rng(2)
    small = np.linspace(0.0, 0.25, 11)

    def deviation(mu):
        signs = rng.choice([-1.0, 1.0], size=(2000, 1))
        real = rng.standard_normal((2000, 1)) + signs * mu / 2
        synthetic = rng.standard_normal((2000, 1)) * np.sqrt(1 + mu**2 / 4)
        curve = alpha_precision_curve(real, synthetic, alphas=small)
        return np.mean(curve.value - curve.alpha), _report(real, synthetic).prdc

    separated, prdc_separated = deviation(5.0)
    merged, _ = deviation(0.0)
    assert separated > 0.06 > abs(merged) + 0.03
    # the baseline still calls the wide mode realistic and well covered
    assert prdc_separated.precision > 0.8 and prdc_separated.coverage > 0.6


def test_mode_dropping_lowers_ir_beta_monotonically_and_keeps_ip_alpha():
    """§5 mode dropping: 10 modes; a share p_drop of modes 1–9 replaced by mode 0."""
    rng = np.random.default_rng(3)
    angles = 2 * np.pi * np.arange(10) / 10
    modes = 10 * np.column_stack([np.cos(angles), np.sin(angles)])

    def sample(labels):
        return modes[labels] + rng.standard_normal((len(labels), 2))

    real = sample(np.repeat(np.arange(10), 150))
    ir, ip = [], []
    for p_drop in (0.0, 0.3, 0.6, 0.9):
        labels = np.repeat(np.arange(10), 150)
        dropped = (labels > 0) & (rng.random(len(labels)) < p_drop)
        labels[dropped] = 0
        report = _report(real, sample(labels))
        ir.append(report.ir_beta)
        ip.append(report.ip_alpha)
    assert all(a > b for a, b in itertools.pairwise(ir)), ir
    assert min(ip) > 0.85, ip


def test_add_noise_hider_is_far_less_authentic_than_holdout():
    """Hide-and-Seek winner: real rows plus small Gaussian noise (Alaa et al. §5)."""
    rng = np.random.default_rng(4)
    real, holdout = rng.standard_normal((600, 6)), rng.standard_normal((600, 6))
    noisy = real + 0.05 * rng.standard_normal(real.shape)
    report = _report(real, noisy, holdout)
    assert report.authenticity < 0.1 < 0.35 < report.holdout_reference.authenticity
    assert report.ip_alpha > 0.9  # it still looks perfectly realistic
