"""Speed of the glucose section on day traces (targets from issue 6; a benchmark, not a test).

Targets: 10k real + 10k synthetic traces of 288 readings: glycemic metrics + p-values + motifs
<= 10 s; LSTM-autoencoder and forecaster training on 5k traces each <= 60 s on CPU at the
default settings. Run: ``python benchmarks/bench_glucose.py [--n 10000] [--n-train 5000]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python benchmarks/x.py
from synthreview.embeddings.lstm_autoencoder import fit_lstm_autoencoder
from synthreview.metrics.glucose.forecast import evaluate_forecaster, train_forecaster
from synthreview.metrics.glucose.glycemic import compare_glycemic, glycemic_samples
from synthreview.metrics.glucose.motifs import motif_breadth
from synthreview.metrics.glucose.section import evaluate_glucose
from synthreview.metrics.glucose.seekers import trace_gru_seeker, trace_nn_seeker


def day_traces(n: int, seed: int) -> np.ndarray:
    """Mean-reverting random walks around 140 mg/dL with meal-like bumps, clipped to 40-400."""
    rng = np.random.default_rng(seed)
    g = np.empty((n, 288))
    g[:, 0] = rng.normal(140, 30, n)
    level = rng.normal(140, 20, n)
    for t in range(1, 288):
        g[:, t] = g[:, t - 1] + 0.03 * (level - g[:, t - 1]) + rng.normal(0, 4, n)
    meals = rng.integers(0, 260, (n, 3))
    bump = np.exp(-0.5 * ((np.arange(288)[None, None, :] - meals[..., None] - 12) / 8) ** 2)
    return np.clip(g + 60 * bump.sum(axis=1), 40, 400)


def timed(label: str, fn):
    start = time.perf_counter()
    out = fn()
    print(f"{label:<58s} {time.perf_counter() - start:7.2f} s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000, help="real and synthetic traces")
    parser.add_argument("--n-train", type=int, default=5_000, help="traces for model training")
    parser.add_argument(
        "--full",
        type=int,
        default=0,
        help="also time evaluate_glucose end to end on this many traces per source",
    )
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    real = timed("generate traces", lambda: day_traces(args.n, 0))
    synthetic = day_traces(args.n, 1)

    start = time.perf_counter()
    r = timed(f"glycemic metrics, real ({args.n} x 288)", lambda: glycemic_samples(real))
    s = timed(f"glycemic metrics, synthetic ({args.n} x 288)", lambda: glycemic_samples(synthetic))
    timed("Welch + Mann-Whitney p-values, 14 metrics", lambda: compare_glycemic(r, s))
    breadth = timed("motif breadth (tau 48, sigma 2)", lambda: motif_breadth(real, synthetic))
    total = time.perf_counter() - start
    print(f"{'=> glycemic + p-values + motifs (target <= 10 s)':<58s} {total:7.2f} s")
    print(f"   motifs: {breadth.n_real} real, {breadth.n_synthetic} synthetic distinct")

    train = real[: args.n_train]
    ae = timed(f"LSTM autoencoder fit, {args.n_train} traces (target <= 60 s)",
               lambda: fit_lstm_autoencoder(train, seed=0))  # fmt: skip
    print(
        f"   reconstruction MSE first/last epoch: {ae.train_loss[0]:.3f} / {ae.train_loss[-1]:.3f}"
    )
    timed(f"LSTM autoencoder transform, {args.n} traces", lambda: ae.transform(synthetic))
    model = timed(f"forecaster fit, {args.n_train} traces (target <= 60 s)",
                  lambda: train_forecaster(train, seed=0))  # fmt: skip
    result = timed(
        "forecaster test, holdout windows", lambda: evaluate_forecaster(model, synthetic)
    )
    print(f"   RMSE {result.rmse:.2f} mg/dL on {result.n_test_windows} windows, "
          f"Clarke A {result.clarke.percent['A']:.1f} %")  # fmt: skip
    holdout = day_traces(args.n_train, 2)
    nn = timed(f"NN seeker, {args.n_train} members + non-members",
               lambda: trace_nn_seeker(train, synthetic, holdout))  # fmt: skip
    gru = timed(f"GRU seeker, {args.n_train} members + non-members",
                lambda: trace_gru_seeker(train, synthetic, holdout))  # fmt: skip
    print(f"   AUC: NN {nn.auc:.3f}, GRU {gru.auc:.3f} (independent traces: ~0.5 expected)")
    if args.full:
        n = args.full
        sources = real[:n], synthetic[:n], day_traces(n, 3)
        report = timed(
            f"evaluate_glucose end to end, {n} real/synthetic/holdout",
            lambda: evaluate_glucose(*sources, seed=0),
        )
        timed(
            "  second candidate (reference context reused)",
            lambda: evaluate_glucose(sources[0], day_traces(n, 4), sources[2], seed=0),
        )
        print(f"   errors: {dict(report.errors) or 'none'}")


if __name__ == "__main__":
    main()
