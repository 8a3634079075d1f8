"""Forecasting utility, trace seekers and the glucose section as a whole (GlucoSynth §7, 002 §3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from synthreview.generators.traces import traces_add_noise
from synthreview.io.traces import Traces
from synthreview.metrics.glucose.forecast import (
    evaluate_forecaster,
    forecast_windows,
    train_forecaster,
)
from synthreview.metrics.glucose.section import evaluate_glucose, prepare_glucose
from synthreview.metrics.glucose.seekers import trace_gru_seeker, trace_nn_seeker


def _walks(n, seed):
    rng = np.random.default_rng(seed)
    return np.clip(140 + np.cumsum(rng.normal(0, 4, (n, 288)), axis=1), 40, 400)


def test_forecast_windows_skip_gaps_and_target_the_horizon():
    g = np.arange(40.0)[None, :]
    history, target = forecast_windows(g, history_steps=24, horizon_steps=6, stride=1)
    assert history.shape == (11, 24)
    np.testing.assert_array_equal(target, history[:, -1] + 6)
    g[0, 30] = np.nan
    assert len(forecast_windows(g, history_steps=24, horizon_steps=6, stride=1)[0]) == 1


def test_forecaster_is_seeded_and_beats_a_constant_guess():
    real = _walks(40, 0)
    a = train_forecaster(real, epochs=2, seed=5)
    b = train_forecaster(real, epochs=2, seed=5)
    test = _walks(10, 1)
    history, target = forecast_windows(test)
    np.testing.assert_array_equal(a.predict(history), b.predict(history))
    result = evaluate_forecaster(a, test)
    naive = np.sqrt(np.mean((target - 140.0) ** 2))
    assert 0 < result.rmse < naive
    assert sum(result.clarke.percent.values()) == pytest.approx(100)
    assert result.n_test_windows == len(target)


def test_nn_seeker_catches_add_noise_with_small_sigma():
    real, holdout = _walks(60, 2), _walks(60, 3)
    noisy = traces_add_noise(real, sigma=2.0, seed=4)
    result = trace_nn_seeker(real, noisy, holdout, n_bootstrap=20)
    assert result.attack == "trace_nn_seeker"
    assert result.auc > 0.9
    assert 0.2 < result.reference_auc < 0.8  # holdout against holdout: chance level


def test_nn_seeker_is_at_chance_on_independent_traces():
    result = trace_nn_seeker(_walks(60, 5), _walks(60, 6), _walks(60, 7), n_bootstrap=20)
    assert 0.3 < result.auc < 0.7


@pytest.mark.slow
def test_gru_seeker_returns_an_attack_result_on_the_same_rows():
    real, holdout = _walks(30, 8), _walks(30, 9)
    result = trace_gru_seeker(real, traces_add_noise(real, sigma=2.0), holdout, epochs=2,
                              n_bootstrap=10)  # fmt: skip
    assert result.attack == "trace_gru_seeker" and 0 <= result.auc <= 1
    assert result.is_member.sum() == 30 and len(result.scores) == 60


@pytest.mark.slow
def test_evaluate_glucose_report_keys_and_determinism():
    real = Traces.from_array(_walks(24, 10), name="real")
    holdout = Traces.from_array(_walks(16, 11), name="holdout")
    synthetic = Traces.from_array(traces_add_noise(real.values, sigma=3.0, seed=1), name="noisy")
    context = prepare_glucose(real, holdout, seed=0)
    report = evaluate_glucose(real, synthetic, holdout, seed=0, context=context, n_bootstrap=10)
    d = report.to_dict()
    json.dumps(d)
    assert set(d["metrics"]["tir"]) >= {"real_mean", "synthetic_mean", "p_value", "holdout_p_value"}
    assert set(d["motifs"]) >= {"vm", "coverage", "mse"} and d["motifs"]["reference"] == "holdout"
    assert set(d["forecast"]) >= {"tstr_rmse", "trtr_rmse"}
    assert set(d["clarke"]["tstr"]) == set("ABCDE") == set(d["clarke"]["trtr"])
    assert "fidelity" in d and "privacy" in d, d.get("errors")
    attacks = {a["attack"] for a in d["privacy"]["membership_inference"]}
    assert {"trace_nn_seeker", "trace_gru_seeker"} <= attacks
    again = evaluate_glucose(real, synthetic, holdout, seed=0, n_bootstrap=10).to_dict()
    assert again == d


@pytest.mark.slow
def test_evaluate_glucose_without_holdout_splits_real_for_the_test_set():
    real = _walks(20, 12)
    report = evaluate_glucose(real, _walks(20, 13), None, seed=0, n_bootstrap=10)
    assert report.forecast.test_set == "real split" and report.motifs.reference == "real"
    assert report.holdout_metrics is None and "errors" not in report.to_dict()
