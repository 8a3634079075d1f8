"""Fidelity at scale: 50k real × 50k synthetic × 20 numeric columns plus a 50k holdout.

Times the One-Class embedding, then ``evaluate_fidelity`` (α-Precision / β-Recall curves,
authenticity, PRDC, holdout reference, 200 bootstrap resamples) and prints wall time per
stage and the peak RSS. Target on the 2-core reference machine: ≤ 15 s and ≤ 2 GB. For the
ratio to the exact 1-NN floor (timed in the same process) use ``bench_scale.py``.

    python benchmarks/bench_fidelity.py [--rows 50000] [--columns 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python benchmarks/x.py
from synthreview.embeddings import fit_embedding
from synthreview.engine import limited_threads
from synthreview.metrics.fidelity.section import evaluate_fidelity


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # Linux: KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument(
        "--threads", type=int, default=0,
        help="BLAS/OpenMP/torch threads (0: library defaults); 1 was faster on a busy machine",
    )  # fmt: skip
    args = parser.parse_args()
    with limited_threads(args.threads or None):
        run(args)


def run(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    n, d = args.rows, args.columns
    mixing = rng.standard_normal((d, d)) / np.sqrt(d)
    real = (rng.standard_normal((n, d)) @ mixing).astype(np.float32)
    holdout = (rng.standard_normal((n, d)) @ mixing).astype(np.float32)
    # a plausible candidate: slightly shifted and widened, with 5 % near-copies of real rows
    synthetic = (rng.standard_normal((n, d)) @ mixing * 1.1 + 0.05).astype(np.float32)
    copies = rng.choice(n, size=n // 20, replace=False)
    synthetic[: len(copies)] = real[copies] + 0.01 * rng.standard_normal((len(copies), d))

    start = time.perf_counter()
    embedding = fit_embedding(real, method="oneclass", seed=0)
    z = {
        name: embedding.transform(x)
        for name, x in {"real": real, "synthetic": synthetic, "holdout": holdout}.items()
    }
    t_embed = time.perf_counter() - start
    start = time.perf_counter()
    report = evaluate_fidelity(
        z["real"],
        z["synthetic"],
        holdout_z=z["holdout"],
        center=embedding.center,
        seed=0,
        n_bootstrap=args.bootstrap,
    )
    t_metrics = time.perf_counter() - start
    ref = report.holdout_reference
    print(f"rows {n} real / {n} synthetic / {n} holdout, {d} columns")
    print(
        f"embedding (fit + transform): {t_embed:6.2f} s  ({len(embedding.validation_loss)} epochs)"
    )
    print(f"metrics (curves, authenticity, PRDC, holdout, bootstrap): {t_metrics:6.2f} s")
    print(f"total: {t_embed + t_metrics:6.2f} s   peak RSS: {_peak_rss_gb():.2f} GB")
    print(
        f"IPα {report.ip_alpha:.3f} (holdout {ref.ip_alpha:.3f})  IRβ {report.ir_beta:.3f} "
        f"(holdout {ref.ir_beta:.3f})  authenticity {report.authenticity:.3f} "
        f"(holdout {ref.authenticity:.3f})  PRDC {report.prdc.to_dict()}"
    )


if __name__ == "__main__":
    main()
