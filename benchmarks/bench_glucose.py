"""Speed of the glucose section on day traces (targets from issue 6; a benchmark, not a test).

Targets: 10k real + 10k synthetic traces of 288 readings: glycemic metrics + p-values + motifs
<= 10 s; LSTM-autoencoder and forecaster training on 5k traces each <= 60 s on CPU at the
default settings. Run: ``python benchmarks/bench_glucose.py [--n 10000] [--n-train 5000]``.

``--subjects`` measures per-person privacy and the trace audit rules (issue 17, items 6-7) on
the shared CGM files (``../shared/data``): the iglu file split by subject (Subjects 1, 2, 4
train; 3, 5 holdout), candidates fresh (bokeh days of another person), memorising (bokeh days
plus 3 copied days each of Subjects 1 and 4) and +40 mg/dL shifted training days; then a full
review and release of those candidates, counting what each audit rule removes.
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
from synthreview.io.traces import Traces
from synthreview.metrics.glucose.forecast import evaluate_forecaster, train_forecaster
from synthreview.metrics.glucose.glycemic import compare_glycemic, glycemic_samples
from synthreview.metrics.glucose.motifs import (
    DEFAULT_MOTIF_LENGTH,
    DEFAULT_TOLERANCE_MG_DL,
    motif_breadth,
)
from synthreview.metrics.glucose.plausibility import plausibility_samples, trace_plausibility
from synthreview.metrics.glucose.section import evaluate_glucose
from synthreview.metrics.glucose.seekers import trace_gru_seeker, trace_nn_seeker
from synthreview.metrics.glucose.subjects import subject_privacy


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


def subjects_part(data: Path) -> None:
    """Per-subject privacy, plausibility and the trace audit on the shared CGM files."""
    from synthreview.io.traces import align_traces, load_traces
    from synthreview.release.pipeline import review_release
    from synthreview.review import evaluate

    iglu = load_traces(data / "cgm_iglu_5_subjects.csv")
    bokeh = load_traces(data / "cgm_bokeh_1_subject.csv")
    ids = iglu.meta["source_id"].to_numpy()
    real = iglu.subset(np.flatnonzero(np.isin(ids, ["Subject 1", "Subject 2", "Subject 4"])))
    holdout = iglu.subset(np.flatnonzero(np.isin(ids, ["Subject 3", "Subject 5"])))
    held_ids = real.meta["source_id"].to_numpy()
    copies = np.r_[
        real.values[held_ids == "Subject 1"][:3], real.values[held_ids == "Subject 4"][:3]
    ]
    candidates = {
        "fresh": Traces.from_array(bokeh.values[:30], name="fresh"),
        "memorising": Traces.from_array(np.r_[bokeh.values[:24], copies], name="memorising"),
        "shifted": Traces.from_array(np.clip(real.values + 40, 40, 400), name="shifted"),
    }
    print(f"iglu: {real.n_traces} training days (3 subjects), {holdout.n_traces} holdout days "
          f"(2 subjects); bokeh: {bokeh.n_traces} days")  # fmt: skip
    for name in ("cgm_iglu_5_subjects.csv", "cgm_bokeh_1_subject.csv"):
        days = load_traces(data / name)
        flags = plausibility_samples(days)
        print(f"   real days flagged, {name}: outside 40-400 {flags['outside_range'].mean():.3f}, "
              f"rate > 6 mg/dL/min over 30 min {flags['implausible_rate'].mean():.3f}")  # fmt: skip
    for name, candidate in candidates.items():
        s = timed(f"subject_privacy, {name}", lambda c=candidate: subject_privacy(real, c, holdout))
        p = trace_plausibility(real, candidate, holdout)
        print(f"   subject AUC {s.subject_auc:.3f} (window AUC {s.window_auc:.3f}); closest "
              f"mg/dL members {s.member_dcr_median:.1f} / non-members {s.nonmember_dcr_median:.1f}"
              f"; memorised {list(s.memorised)}; drawn from them "
              f"{int(s.synthetic['from_memorised'].sum())} of {len(s.synthetic)}; fresh-window "
              f"rate {s.expected_window_fpr:.3f}; implausible rate/range "
              f"{p.implausible_rate_share:.3f}/{p.outside_range_share:.3f}")  # fmt: skip
    review = align_traces(real, candidates, holdout=holdout)
    report = timed("evaluate (glucose section), 3 candidates", lambda: evaluate(review, seed=0))
    release = timed("review_release (audit)", lambda: review_release(review, report))
    for name, audit in release.audits.items():
        rules = [r for r in audit.attrs["rules"] if r.startswith("drop_")]
        counts = {r: int(audit[r].sum()) for r in rules if audit[r].any()}
        print(
            f"   audit {name}: {len(audit)} rows, removed {int(audit['removed'].sum())}: {counts}"
        )
        g = report.candidates[name].glucose
        print(f"   report.json subject_privacy.subject_auc = "
              f"{g.to_dict()['subject_privacy']['subject_auc']:.3f}")  # fmt: skip


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
    parser.add_argument(
        "--subjects",
        action="store_true",
        help="only the per-subject privacy and trace audit part (shared CGM)",
    )
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    args = parser.parse_args()
    if args.subjects:
        subjects_part(args.data)
        return
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    real = timed("generate traces", lambda: day_traces(args.n, 0))
    synthetic = day_traces(args.n, 1)

    start = time.perf_counter()
    r = timed(f"glycemic metrics, real ({args.n} x 288)", lambda: glycemic_samples(real))
    s = timed(f"glycemic metrics, synthetic ({args.n} x 288)", lambda: glycemic_samples(synthetic))
    timed("Welch + Mann-Whitney p-values, 14 metrics", lambda: compare_glycemic(r, s))
    breadth = timed(
        f"motif breadth (tau {DEFAULT_MOTIF_LENGTH}, sigma {DEFAULT_TOLERANCE_MG_DL:g})",
        lambda: motif_breadth(real, synthetic),
    )
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
    ids = [f"p{i // 10}" for i in range(args.n_train)]  # 10 days per person
    members = Traces.from_array(train, name="train", source_ids=ids)
    others = Traces.from_array(holdout, name="holdout", source_ids=[f"h{i}" for i in ids])
    s = timed(f"subject_privacy, {args.n_train} members + non-members, {args.n} synthetic",
              lambda: subject_privacy(members, synthetic, others))  # fmt: skip
    print(f"   subject AUC {s.subject_auc:.3f}, window AUC {s.window_auc:.3f}, memorised "
          f"{len(s.memorised)}, fresh-window rate {s.expected_window_fpr:.4f}")  # fmt: skip
    p = timed(f"trace_plausibility, {args.n} real + synthetic + {args.n_train} holdout",
              lambda: trace_plausibility(real, synthetic, holdout))  # fmt: skip
    print(
        f"   implausible rate {p.implausible_rate_share:.4f} "
        f"(holdout {p.reference_implausible_rate_share:.4f})"
    )
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
