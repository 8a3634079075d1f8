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
    python benchmarks/bench_dask.py --rows 200000 --parquet 4 --release   # issue 26

``--parquet N`` writes each table as a folder of N Parquet partitions first (in the parent
process, once); the in-process mode reads them with pandas, the cluster mode with
``dask.dataframe.read_parquet`` on the workers. ``--sample-rows`` is the review's
``ReviewOptions.sample_rows`` (default 50,000: above it the statistics see samples and the
audit judges every row). ``--release`` also runs the curated release of both candidates
(``review_release(..., curate=True)``: every-row audit, curation, re-evaluation, re-attack,
record) inside the cluster (``on_cluster``), and compares every file it would write.

Measured 2026-11-27 (AMD EPYC, 2 cores, AVX2 + FMA; issue 26's "2-worker LocalCluster run of
the 200k review from Parquet partitions"): ``--rows 200000 --parquet 4 --threads 1 --sections
fidelity privacy utility`` (statistics on 50,000-row samples): in-process 212.2 s, peak 1.16 GB
(load 1.68 -> 1.02); cluster 149.3 s + 5.6 s start-up, client 1.01 GB, workers 0.88 and 0.90 GB
(load 1.09 -> 2.57); **reports equal**. With ``--threads 2`` the first 200k run's reports
differed: some numbers depended on the thread count (the per-column Wasserstein distance and
the density and KDE attacks, fixed since: ``tests/test_thread_independence.py``). After the
fix, ``--threads 2``: in-process 143.8 s, 1.36 GB (load 1.35 -> 2.19); cluster 158.4 s + 5.3 s
start-up, client 1.01 GB, workers 0.92 / 0.99 GB (load 2.10 -> 3.77); **reports equal**, and
equal to the ``--threads 1`` report (the same sha256).
``--rows 3000 --sample-rows 1000 --parquet 2 --release --bootstrap 20``: reports and every
released file equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python benchmarks/x.py
from synthreview.engine import on_cluster
from synthreview.io.tables import align, table_from_frame
from synthreview.options import ReviewOptions
from synthreview.release.audit import Thresholds
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate

#: the record's timestamp, fixed so the two modes' files can be compared byte for byte
MOMENT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ROLES = {"real": "real", "holdout": "holdout", "fresh": "synthetic", "copies": "synthetic"}


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_frames(n: int, d: int, seed: int = 0) -> dict[str, pd.DataFrame]:
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
    arrays = {"real": real, "holdout": holdout, "fresh": fresh, "copies": copies}
    return {name: pd.DataFrame(x, columns=columns) for name, x in arrays.items()}


def write_partitions(frames: dict[str, pd.DataFrame], root: Path, parts: int) -> None:
    """Each table as ``root/<name>/part-<i>.parquet``, ``parts`` row blocks in order."""
    for name, frame in frames.items():
        folder = root / name
        folder.mkdir(parents=True)
        for i, rows in enumerate(np.array_split(np.arange(len(frame)), parts)):
            frame.iloc[rows].to_parquet(folder / f"part-{i:03d}.parquet", index=False)


def make_review(frames: dict[str, pd.DataFrame]):
    """The review of the tables (candidates ``fresh`` and ``copies``)."""
    tables = {n: table_from_frame(f, name=n, role=ROLES[n]) for n, f in frames.items()}
    return align(tables["real"], [tables["fresh"], tables["copies"]], holdout=tables["holdout"])


def read_frames(args, *, on_workers: bool) -> dict[str, pd.DataFrame]:
    """The tables: generated, or read from the Parquet partitions (by pandas on this process,
    or by the cluster's workers through ``dask.dataframe``)."""
    if args.parquet_dir is None:
        return make_frames(args.rows, args.columns)
    if not on_workers:
        return {n: pd.read_parquet(args.parquet_dir / n) for n in ROLES}
    import dask.dataframe as dd

    return {
        n: dd.read_parquet(str(args.parquet_dir / n)).compute().reset_index(drop=True)
        for n in ROLES
    }


def review_and_release(review, options, args, out: dict):
    """The review (and with ``--release`` its curated release), timed into ``out``."""
    start = time.perf_counter()
    report = evaluate(review, sections=args.sections, options=options, seed=0, threads=args.threads)
    out["seconds"] = time.perf_counter() - start
    files = None
    if args.release:
        start = time.perf_counter()
        release = review_release(
            review, report, thresholds=Thresholds(), curate=True, timestamp=MOMENT
        )
        out["release_seconds"] = time.perf_counter() - start
        files = release.files
        out["decisions"] = {n: d.outcome for n, d in release.decisions.items()}
        out["removed"] = {n: int(a["removed"].sum()) for n, a in release.audits.items()}
    return report, files


def run_mode(args) -> dict:
    options = ReviewOptions(n_bootstrap=args.bootstrap, sample_rows=args.sample_rows)
    out: dict = {"mode": args.mode, "load_before": load()}
    if args.mode == "inprocess":
        start = time.perf_counter()
        review = make_review(read_frames(args, on_workers=False))
        out["read_seconds"] = time.perf_counter() - start
        report, files = review_and_release(review, options, args, out)
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
            review = make_review(read_frames(args, on_workers=True))
            out["read_seconds"] = time.perf_counter() - start
            with on_cluster(cluster.scheduler_address):
                report, files = review_and_release(review, options, args, out)
            workers = client.run(
                lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
            )
            out["worker_peak_rss_gb"] = sorted(round(gb, 2) for gb in workers.values())
        out["peak_rss_gb"] = peak_rss_gb()
    out["load_after"] = load()
    content = json.dumps(report.to_dict(), sort_keys=True)
    out["report_sha256"] = hashlib.sha256(content.encode()).hexdigest()
    if files is not None:
        out["files_sha256"] = {n: hashlib.sha256(b).hexdigest()[:16] for n, b in files.items()}
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
    parser.add_argument("--sample-rows", type=int, default=50_000)
    parser.add_argument("--parquet", type=int, default=0, help="write N partitions per table")
    parser.add_argument("--release", action="store_true", help="also the curated release")
    parser.add_argument("--mode", choices=("both", "inprocess", "cluster"), default="both")
    parser.add_argument("--parquet-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode != "both":
        print(json.dumps(run_mode(args)))
        return
    print(
        f"{args.rows} real / holdout / 2 candidates × {args.columns} columns, "
        f"sections {' '.join(args.sections)}, {args.bootstrap} bootstrap resamples, "
        f"sample_rows {args.sample_rows}, "
        + (f"{args.parquet} Parquet partitions per table" if args.parquet else "in memory")
        + (", curated release" if args.release else "")
    )
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        extra = []
        if args.parquet:
            write_partitions(make_frames(args.rows, args.columns), Path(scratch), args.parquet)
            extra = ["--parquet-dir", scratch]
        for mode in ("inprocess", "cluster"):
            command = [sys.executable, __file__, *sys.argv[1:], *extra, "--mode", mode]
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
    if args.release:
        print(
            f"release: in-process {local['release_seconds']:.1f} s, cluster "
            f"{cluster['release_seconds']:.1f} s; decisions {local['decisions']} vs "
            f"{cluster['decisions']}; every file equal: "
            f"{local['files_sha256'] == cluster['files_sha256']}"
        )


if __name__ == "__main__":
    main()
