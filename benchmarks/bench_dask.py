"""A two-candidate review in-process and on a 2-worker local Dask cluster, side by side.

Each mode runs in a fresh subprocess of this script (so each peak memory is its own): the
in-process review (``evaluate(..., threads=T)``), then the same review with
``scheduler=`` a ``distributed.LocalCluster`` of ``--workers`` single-threaded worker
processes, where each candidate's sections run as one task and the shared real side is
computed once on the cluster (:mod:`synthreview.distributed`). The cluster's start-up time is
printed apart from the review's. Peak memory is ``ru_maxrss``: of the process for the
in-process review; of the client and of each worker (asked through ``client.run``) on the
cluster. The two reports are compared by the sha256 of their ``report.json`` content; the
load average is printed beside every time (the reference machine has 2 shared cores).

    python benchmarks/bench_dask.py --rows 20000            # both modes, compare
    python benchmarks/bench_dask.py --rows 2000 --sections fidelity
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python benchmarks/x.py
from synthreview.io.tables import align, table_from_frame
from synthreview.options import ReviewOptions
from synthreview.review import evaluate


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_review(n: int, d: int, seed: int = 0):
    """Real, holdout and two candidates: a fresh sample of a widened, shifted distribution and
    one with 10 % near-copies of real rows."""
    rng = np.random.default_rng(seed)
    mixing = rng.standard_normal((d, d)) / np.sqrt(d)

    def sample(scale: float = 1.0, shift: float = 0.0) -> np.ndarray:
        return rng.standard_normal((n, d)) @ mixing * scale + shift

    real, holdout = sample(), sample()
    fresh = sample(1.1, 0.05)
    copies = sample(1.1, 0.05)
    picked = rng.choice(n, size=n // 10, replace=False)
    copies[: len(picked)] = real[picked] + 0.01 * rng.standard_normal((len(picked), d))
    columns = [f"x{i}" for i in range(d)]

    def table(x: np.ndarray, name: str, role: str):
        return table_from_frame(pd.DataFrame(x, columns=columns), name=name, role=role)

    return align(
        table(real, "real", "real"),
        [table(fresh, "fresh", "synthetic"), table(copies, "copies", "synthetic")],
        holdout=table(holdout, "holdout", "holdout"),
    )


def run_mode(args) -> dict:
    review = make_review(args.rows, args.columns)
    options = ReviewOptions(n_bootstrap=args.bootstrap)
    out: dict = {"mode": args.mode, "load_before": load()}
    if args.mode == "inprocess":
        start = time.perf_counter()
        report = evaluate(
            review, sections=args.sections, options=options, seed=0, threads=args.threads
        )
        out["seconds"] = time.perf_counter() - start
        out["peak_rss_gb"] = peak_rss_gb()
    else:
        from distributed import Client, LocalCluster

        start = time.perf_counter()
        cluster = LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        with cluster, Client(cluster) as client:
            client.wait_for_workers(args.workers)
            out["startup_seconds"] = time.perf_counter() - start
            start = time.perf_counter()
            report = evaluate(
                review,
                sections=args.sections,
                options=options,
                seed=0,
                threads=args.threads,
                scheduler=cluster.scheduler_address,
            )
            out["seconds"] = time.perf_counter() - start
            workers = client.run(
                lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
            )
            out["worker_peak_rss_gb"] = sorted(round(gb, 2) for gb in workers.values())
        out["peak_rss_gb"] = peak_rss_gb()
    out["load_after"] = load()
    content = json.dumps(report.to_dict(), sort_keys=True)
    out["report_sha256"] = hashlib.sha256(content.encode()).hexdigest()
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        (args.save / f"report-{args.mode}.json").write_text(content)
    out["errors"] = {n: c.errors for n, c in report.candidates.items() if c.errors}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--sections", nargs="+", default=["fidelity", "privacy"])
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="in-process and client bound")
    parser.add_argument("--save", type=Path, help="write each mode's report.json content here")
    parser.add_argument("--mode", choices=("both", "inprocess", "cluster"), default="both")
    args = parser.parse_args()
    if args.mode != "both":
        print(json.dumps(run_mode(args)))
        return
    print(
        f"{args.rows} real / holdout / 2 candidates × {args.columns} columns, "
        f"sections {' '.join(args.sections)}, {args.bootstrap} bootstrap resamples"
    )
    results = {}
    for mode in ("inprocess", "cluster"):
        command = [sys.executable, __file__, *sys.argv[1:], "--mode", mode]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps(results[mode]))
    local, cluster = results["inprocess"], results["cluster"]
    print(
        f"in-process ({args.threads} threads): {local['seconds']:.1f} s, "
        f"peak {local['peak_rss_gb']:.2f} GB, load {local['load_before']} -> "
        f"{local['load_after']}"
    )
    print(
        f"cluster ({args.workers} workers x 1 thread): {cluster['seconds']:.1f} s "
        f"(+ {cluster['startup_seconds']:.1f} s start-up), client peak "
        f"{cluster['peak_rss_gb']:.2f} GB, worker peaks {cluster['worker_peak_rss_gb']} GB, "
        f"load {cluster['load_before']} -> {cluster['load_after']}"
    )
    print(f"ratio cluster / in-process: {cluster['seconds'] / local['seconds']:.2f}")
    print(f"reports equal: {cluster['report_sha256'] == local['report_sha256']}")


if __name__ == "__main__":
    main()
