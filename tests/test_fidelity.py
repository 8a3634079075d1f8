"""Fidelity metrics: reference values, PRDC against the authors' package, invariances."""

from __future__ import annotations

import contextlib
import io
import json
import warnings

import numpy as np
import pytest
from prdc import compute_prdc

from synthreview import grouped_search
from synthreview.engine import Engine, using
from synthreview.errors import UndefinedMetricWarning
from synthreview.grouped_search import GroupedReference
from synthreview.memo import Memo
from synthreview.metrics.fidelity.alpha_beta import (
    alpha_precision_curve,
    authenticity_samples,
    authenticity_score,
    beta_recall_curve,
)
from synthreview.metrics.fidelity.prdc import prdc
from synthreview.metrics.fidelity.scan import tally
from synthreview.metrics.fidelity.section import evaluate_fidelity
from tests.stage_one import PATHS, stage_one_path


def _gauss(rng, n, d, shift=0.0, scale=1.0):
    return (rng.standard_normal((n, d)) * scale + shift).astype(np.float32)


@pytest.mark.parametrize("group_rows", [400, 25])  # one group; many groups
@pytest.mark.parametrize(("n", "m", "d", "k"), [(200, 150, 5, 5), (120, 260, 3, 5), (90, 90, 8, 3)])
def test_prdc_equals_reference_package(n, m, d, k, group_rows, monkeypatch):
    monkeypatch.setattr(grouped_search, "GROUP_ROWS", group_rows)
    rng = np.random.default_rng(n + m + d)
    real, synthetic = _gauss(rng, n, d), _gauss(rng, m, d, shift=0.3, scale=1.3)
    with contextlib.redirect_stdout(io.StringIO()):  # the package prints the sizes
        expected = compute_prdc(real, synthetic, k)
    got = prdc(real, synthetic, k=k)
    for name in ("precision", "recall", "density", "coverage"):
        assert getattr(got, name) == pytest.approx(float(expected[name]), abs=1e-9)


def test_prdc_too_few_rows_warns_nan():
    rng = np.random.default_rng(0)
    with pytest.warns(UndefinedMetricWarning, match="needs more than 5"):
        result = prdc(_gauss(rng, 5, 2), _gauss(rng, 50, 2))
    assert np.isnan(result.precision) and np.isnan(result.density)


def test_tally_matches_brute_force_with_duplicates():
    # several groups (n_groups=9), exact duplicates and boundary ties: every reduction must
    # equal its brute-force definition (β-Recall inclusive, PRDC strict)
    rng = np.random.default_rng(1)
    # integer points and radii: many distances equal a radius exactly (≤ vs < matters)
    real = rng.integers(0, 4, size=(180, 3)).astype(np.float32)
    other = rng.integers(0, 4, size=(40, 3)).astype(np.float32)
    recall_radii = rng.choice([0.0, 1.0, 2.0], size=180)
    ball_radii = rng.choice([0.0, 1.0, 2.0], size=180)
    own_radii = rng.choice([0.0, 1.0], size=40)
    cd_g = rng.uniform(size=40)
    index = GroupedReference(real, n_groups=9, order=np.argsort(ball_radii))
    found = tally(
        index, other, recall_radii=recall_radii, cd_g=cd_g, ball_radii=ball_radii,
        own_radii=own_radii,
    )  # fmt: skip
    dist = np.linalg.norm(real[:, None, :].astype(float) - other[None, :, :], axis=2)
    in_recall = dist <= recall_radii[:, None]
    want_minima = np.where(in_recall, cd_g[None, :], np.inf).min(axis=1)
    np.testing.assert_array_equal(found.recall_minima, want_minima)
    in_ball = dist < ball_radii[:, None]
    np.testing.assert_array_equal(found.ball_counts, in_ball.sum(axis=0))
    np.testing.assert_array_equal(found.covered, in_ball.any(axis=1))
    np.testing.assert_array_equal(found.recalled, (dist < own_radii[None, :]).any(axis=1))
    order = np.lexsort((np.broadcast_to(np.arange(180)[:, None], dist.shape), dist), axis=0)
    np.testing.assert_array_equal(found.nearest_index, order[0])  # ties → lower index
    np.testing.assert_allclose(found.nearest_distance, dist.min(axis=0), rtol=0, atol=1e-12)


def test_authenticity_hand_computed():
    real = np.array([[0.0], [1.0], [3.0]])
    # nearest-other-real distances: 1, 1, 2
    synthetic = np.array([[0.1], [2.9], [2.0], [-1.5], [5.5]])
    result = authenticity_samples(real, synthetic)
    np.testing.assert_array_equal(result.nearest_real_index, [0, 2, 1, 0, 2])
    np.testing.assert_allclose(result.ratio, [0.1, 0.05, 1.0, 1.5, 1.25], rtol=1e-6)
    # a tie at exactly the nearest-other distance counts as copied (d ≤ d_r)
    np.testing.assert_array_equal(result.authentic, [False, False, False, True, True])
    assert authenticity_score(real, synthetic) == pytest.approx(0.4)


def test_alpha_levels_and_precision_curve_hand_computed():
    real = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    synthetic = np.array([[0.5], [2.5], [6.0], [-4.0]])
    curve = alpha_precision_curve(real, synthetic, center=np.zeros(1), alphas=[0, 0.25, 0.5, 1])
    # radii 1, 2, 3, 5 (distances 0.5, 2.5, 6, 4)
    np.testing.assert_allclose(curve.value, [0.25, 0.25, 0.5, 0.75])
    with pytest.warns(UndefinedMetricWarning, match="PRDC"):  # 4 synthetic rows < k + 1
        report = evaluate_fidelity(
            np.vstack([real, real + 0.01]), synthetic, center=np.zeros(1), n_bootstrap=0
        )
    assert report.samples.alpha_level[0] == 0.0
    assert np.isinf(report.samples.alpha_level[2])
    assert 0.0 < report.samples.alpha_level[1] < report.samples.alpha_level[3] < 1.0


def test_beta_recall_hand_computed():
    real = np.array([[0.0], [1.0], [10.0], [12.0]])  # NND_1: 1, 1, 2, 2
    synthetic = np.array([[0.5], [11.0], [30.0]])  # centre 13.833…
    curve = beta_recall_curve(real, synthetic, betas=[0.0, 0.5, 1.0])
    # distances to c_g: 13.33, 2.83, 16.17 -> radii 2.83, 13.33, 16.17
    # real 0,1 covered by 0.5 (cd 13.33) from β = 0.5; real 2,3 covered by 11 from β = 0
    np.testing.assert_allclose(curve.value, [0.5, 1.0, 1.0])


def _fixture(seed=0, n=300, m=250, h=280, d=4):
    rng = np.random.default_rng(seed)
    return _gauss(rng, n, d), _gauss(rng, m, d, 0.2, 1.1), _gauss(rng, h, d)


def test_report_scores_in_range_and_public_functions_agree():
    real, synthetic, holdout = _fixture()
    report = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=50)
    for value in (report.ip_alpha, report.ir_beta, report.authenticity):
        assert 0.0 <= value <= 1.0
    for name, (lo, hi) in report.ci.items():
        assert lo <= hi and 0.0 <= lo and hi <= 1.0, name
    center = real.mean(axis=0, dtype=np.float64)
    assert report.ip_alpha == alpha_precision_curve(real, synthetic, center=center).integrated
    assert report.ir_beta == beta_recall_curve(real, synthetic).integrated
    assert report.authenticity == authenticity_score(real, synthetic)
    assert report.prdc == prdc(real, synthetic)
    assert len(report.samples.alpha_level) == len(synthetic)
    assert len(report.holdout_samples.authentic) == len(holdout)
    assert report.ci["ip_alpha"][0] <= report.ip_alpha <= report.ci["ip_alpha"][1]
    assert report.ci["ir_beta"][0] <= report.ir_beta <= report.ci["ir_beta"][1]


@pytest.mark.parametrize("group_rows", [400, 30])  # one group; many groups
def test_permuting_synthetic_rows_changes_no_score(group_rows, monkeypatch):
    monkeypatch.setattr(grouped_search, "GROUP_ROWS", group_rows)
    real, synthetic, holdout = _fixture(seed=3)
    synthetic[:10] = synthetic[10:20]  # exact duplicates: ties must not depend on order
    perm = np.random.default_rng(9).permutation(len(synthetic))
    a = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=30, seed=4)
    b = evaluate_fidelity(real, synthetic[perm], holdout_z=holdout, n_bootstrap=30, seed=4)
    assert a.to_dict() == b.to_dict()  # scores, curves, PRDC and bootstrap intervals
    np.testing.assert_array_equal(
        a.samples.to_frame().to_numpy()[perm], b.samples.to_frame().to_numpy()
    )
    # permuting the real rows changes indices, not scores
    real_perm = np.random.default_rng(10).permutation(len(real))
    c = evaluate_fidelity(real[real_perm], synthetic, holdout_z=holdout, n_bootstrap=30, seed=4)
    for name in ("ip_alpha", "ir_beta", "authenticity", "prdc", "holdout_reference"):
        assert c.to_dict()[name] == a.to_dict()[name], name


def test_same_seed_same_result_and_unequal_sizes():
    real, synthetic, holdout = _fixture(seed=5, n=150, m=400, h=60)
    a = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=40, seed=1)
    b = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=40, seed=1)
    c = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=40, seed=2)
    assert a.to_dict() == b.to_dict()
    assert a.ci != c.ci and a.ip_alpha == c.ip_alpha


def test_to_dict_is_json_ready_with_contract_keys():
    real, synthetic, holdout = _fixture(seed=6, n=80, m=70, h=60)
    report = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=10)
    data = json.loads(json.dumps(report.to_dict()))
    assert {
        "ip_alpha",
        "ir_beta",
        "authenticity",
        "alpha_precision_curve",
        "beta_recall_curve",
        "holdout_reference",
        "prdc",
        "ci",
    } <= set(data)
    assert set(data["alpha_precision_curve"]) == {"alpha", "value"}
    assert set(data["beta_recall_curve"]) == {"beta", "value"}
    assert {"ip_alpha", "ir_beta", "authenticity"} <= set(data["holdout_reference"])
    assert set(data["ci"]) == {"ip_alpha", "ir_beta", "authenticity"}
    assert len(data["alpha_precision_curve"]["alpha"]) == 41
    no_holdout = evaluate_fidelity(real, synthetic, n_bootstrap=0)
    assert no_holdout.holdout_reference is None and no_holdout.to_dict()["ci"] == {}


def test_bad_input_messages():
    real, synthetic, _ = _fixture(n=20, m=20)
    with pytest.raises(ValueError, match="synthetic_z has 3 features; expected 4"):
        evaluate_fidelity(real, synthetic[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        evaluate_fidelity(real, np.full_like(synthetic, np.nan))
    with pytest.raises(ValueError, match="at least 6 rows"):
        evaluate_fidelity(real[:4], synthetic)


def test_small_synthetic_set_warns_for_prdc_only():
    real, synthetic, _ = _fixture(n=40, m=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = evaluate_fidelity(real, synthetic, n_bootstrap=5)
    assert any(issubclass(w.category, UndefinedMetricWarning) for w in caught)
    assert np.isnan(report.prdc.precision) and 0.0 <= report.ip_alpha <= 1.0


def test_grouped_scan_gives_the_same_report_as_the_single_metric_functions(monkeypatch):
    # evaluate_fidelity shares one grouped scan per set; with 40-row groups the scan spans
    # several groups and must still equal the independent estimators exactly
    monkeypatch.setattr(grouped_search, "GROUP_ROWS", 40)
    real, synthetic, holdout = _fixture(seed=5, n=420, m=390, h=300)
    synthetic[:30] = real[:30] + 1e-3  # near-copies: authenticity and density matter
    report = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=0)
    auth = authenticity_samples(real, synthetic)
    np.testing.assert_array_equal(report.samples.nearest_real_index, auth.nearest_real_index)
    np.testing.assert_array_equal(report.samples.authentic, auth.authentic)
    np.testing.assert_allclose(report.samples.authenticity_ratio, auth.ratio, rtol=1e-12)
    assert report.prdc == prdc(real, synthetic)
    assert report.ir_beta == beta_recall_curve(real, synthetic).integrated
    ref = report.holdout_reference
    assert ref.authenticity == authenticity_score(real, holdout)
    assert ref.ir_beta == beta_recall_curve(real, holdout).integrated


def test_every_stage_one_gives_the_same_report_and_reference_prdc(monkeypatch):
    # the 50k suite's stage one runs in the register kernels (faiss's k = 1 search where they
    # are not built); forced onto each path here (faiss would run calls this small pair by
    # pair), every number and per-row result must be the numpy stage one's, and PRDC the
    # authors' package's
    monkeypatch.setattr(grouped_search, "GROUP_ROWS", 40)
    monkeypatch.setattr(grouped_search, "STAGE_ONE_ROWS", 32)
    real, synthetic, holdout = _fixture(seed=6, n=430, m=380, h=310)
    real += 40.0  # far from the origin, where float32 misranks near-ties
    synthetic += 40.0
    holdout += 40.0
    synthetic[:30] = real[:30] + 1e-3
    reports = {}
    paths = PATHS if grouped_search.KERNEL else ("numpy", "fused")  # kernel: when built
    for path in paths:
        with monkeypatch.context() as patch, stage_one_path(patch, path):
            reports[path] = evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=20)
    numpy_path, fused = reports["numpy"], reports["fused"]
    for other in reports.values():  # the fused search's and the register kernels'
        assert json.dumps(other.to_dict()) == json.dumps(numpy_path.to_dict())
        for name in ("samples", "holdout_samples"):
            frame = getattr(other, name).to_frame()
            assert frame.equals(getattr(numpy_path, name).to_frame())
    with contextlib.redirect_stdout(io.StringIO()):
        expected = compute_prdc(real, synthetic, 5)
    for name in ("precision", "recall", "density", "coverage"):
        assert getattr(fused.prdc, name) == pytest.approx(float(expected[name]), abs=1e-9)


def test_an_exact_and_an_approximate_search_never_share_a_memo_entry():
    """The review's memo shares the real side between candidates: an approximate search of the
    same rows (a context reused under another ``approximate``) must compute its own."""
    real, synthetic, holdout = _fixture(seed=8, n=400)
    memo = Memo()
    engines = [Engine(), Engine(approximate="ivf"), Engine(approximate="hnsw"),
               Engine(approximate="ivf", widen=1, exact_fallback=False)]  # fmt: skip
    for engine in engines:
        with using(engine):
            evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=0, memo=memo)
    assert len(memo) == len(engines)
    with using(Engine(device="cpu", threads=1)):  # the same exact search: shared
        evaluate_fidelity(real, synthetic, holdout_z=holdout, n_bootstrap=0, memo=memo)
    assert len(memo) == len(engines)
