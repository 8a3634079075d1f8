"""Side by side: the fidelity suite (or a whole review) and the exact faiss 1-NN floor.

Both run in one process on the same data with the same thread bound, so the ratio is not
hostage to how busy the shared machine is at the moment; the load average is printed beside
every number. The *floor* is what any exact method must at least spend: one exact faiss
``IndexFlatL2`` 1-NN search for each of the four n × n neighbour sets the fidelity suite needs
(real→real and synthetic→synthetic for the radii, synthetic→real and holdout→real for the
passes), on the rows the suite searches (after the One-Class embedding where it has one).
``--floor-queries N`` times each search on N queries and scales linearly (a flat search costs
exactly queries × reference rows), for the 1M runs where the floor alone would take half an
hour. The CPU model and SIMD flags, the BLAS kernels (threadpoolctl) and the OpenBLAS
settings are printed first. Peak memory is ``ru_maxrss`` (faiss and BLAS allocate outside Python, so
tracemalloc would miss them).

    python benchmarks/bench_scale.py --rows 50000                 # suite vs floor
    python benchmarks/bench_scale.py --rows 1000000 --suite review --floor-queries 20000
    python benchmarks/bench_scale.py --rows 200000 --approximate ivf
    python benchmarks/bench_scale.py --rows 100000 200000 500000 1000000 --suite review

Several ``--rows`` run one after another, each in a fresh process (its own peak RSS), and the
script ends with a table of wall and CPU seconds, floor, ratio and peak RSS per size and the
growth exponents ``log(t2 / t1) / log(n2 / n1)`` between consecutive sizes and end to end.

``--suite fidelity`` runs ``evaluate_fidelity`` on the rows as given (``--embedding none``) or
after the One-Class embedding; ``--suite review`` runs ``evaluate`` (fidelity and privacy, so
the distance attacks) on a 20-column numeric table and builds the audit table; ``--suite probe``
times only the first query batch (``grouped_search.QUERY_BATCH`` rows) of the real 6-NN pass
against all n real rows, with the index built at full size, and scales it to a whole pass:
the rate and memory of a 1M run without its hours on a shared machine (the floor is timed on
the same queries).
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import faiss
import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python benchmarks/x.py
from bench_fidelity import describe_machine  # the script's folder is on sys.path

from synthreview import grouped_search
from synthreview.embeddings import fit_embedding
from synthreview.engine import Engine, available_cores, using
from synthreview.io.tables import align, table_from_frame
from synthreview.metrics.fidelity.section import evaluate_fidelity
from synthreview.neighbors import nearest
from synthreview.options import ReviewOptions
from synthreview.release.audit import audit_table
from synthreview.review import evaluate


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_data(n: int, d: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Real, holdout and a plausible candidate (shifted, widened, 5 % near-copies of real)."""
    rng = np.random.default_rng(seed)
    mixing = rng.standard_normal((d, d)) / np.sqrt(d)
    real = (rng.standard_normal((n, d)) @ mixing).astype(np.float32)
    holdout = (rng.standard_normal((n, d)) @ mixing).astype(np.float32)
    synthetic = (rng.standard_normal((n, d)) @ mixing * 1.1 + 0.05).astype(np.float32)
    copies = rng.choice(n, size=n // 20, replace=False)
    synthetic[: len(copies)] = real[copies] + 0.01 * rng.standard_normal((len(copies), d))
    return {"real": real, "holdout": holdout, "synthetic": synthetic}


def floor_seconds(data: dict[str, np.ndarray], queries: int | None) -> float:
    """Exact faiss 1-NN time of the four searches (extrapolated from ``queries`` rows)."""
    total = 0.0
    for query, reference in (
        ("real", "real"),
        ("synthetic", "synthetic"),
        ("synthetic", "real"),
        ("holdout", "real"),
    ):
        index = faiss.IndexFlatL2(data[reference].shape[1])
        index.add(data[reference])
        q = data[query] if queries is None else data[query][:queries]
        start = time.perf_counter()
        index.search(q, 1)
        total += (time.perf_counter() - start) * len(data[query]) / len(q)
        del index
    return total


def embedded(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The rows after the One-Class embedding fitted on real (what the fidelity suite searches)."""
    start = time.perf_counter()
    embedding = fit_embedding(data["real"], method="oneclass", seed=0)
    z = {name: embedding.transform(x) for name, x in data.items()}
    print(f"embedding: {time.perf_counter() - start:.2f} s (not in the ratio)")
    return z


def run_fidelity(z, args) -> tuple[float, str]:
    start = time.perf_counter()
    report = evaluate_fidelity(
        z["real"], z["synthetic"], holdout_z=z["holdout"], seed=0, n_bootstrap=200
    )
    seconds = time.perf_counter() - start
    ref = report.holdout_reference
    summary = (
        f"IPα {report.ip_alpha:.4f} (holdout {ref.ip_alpha:.4f})  IRβ {report.ir_beta:.4f}  "
        f"authenticity {report.authenticity:.4f}  PRDC {report.prdc.to_dict()}"
    )
    return seconds, summary


def run_review(data, args) -> tuple[float, str]:
    frames = {
        name: pd.DataFrame(x.astype(np.float64), columns=[f"x{i}" for i in range(x.shape[1])])
        for name, x in data.items()
    }
    review = align(
        table_from_frame(frames["real"], name="real", role="real"),
        [table_from_frame(frames["synthetic"], name="synthetic", role="synthetic")],
        holdout=table_from_frame(frames["holdout"], name="holdout", role="holdout"),
    )
    start = time.perf_counter()
    report = evaluate(
        review,
        sections=("fidelity", "privacy"),
        options=ReviewOptions(embedding=args.embedding, n_bootstrap=200),
        seed=0,
        threads=args.threads,
        approximate=args.approximate,
        device=args.device,
    )
    result = report.candidates["synthetic"]
    audit = audit_table(result.fidelity, result.privacy)
    seconds = time.perf_counter() - start
    errors = result.errors or "none"
    return (
        seconds,
        f"audit rows {len(audit)}, removed {int(audit['removed'].sum())}, errors {errors}",
    )


def run_probe(data, args) -> tuple[float, str]:
    real = data["real"]
    m = min(len(real), grouped_search.QUERY_BATCH)
    start = time.perf_counter()
    nearest(real[:m], real, k=6)
    seconds = time.perf_counter() - start
    whole = seconds * len(real) / m
    return whole, f"first batch {m} queries x {len(real)} rows: {seconds:.1f} s (suite = 1 pass)"


@dataclass(frozen=True)
class SizeResult:
    """One size's figures, as the child process prints them on its last line."""

    rows: int
    wall: float
    cpu: float
    floor: float | None
    peak_gb: float


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[50_000],
        help="rows per table; several sizes run one after another, each in a fresh process "
        "(its own peak RSS), followed by the growth exponents of wall and CPU time",
    )  # fmt: skip
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--suite", choices=("fidelity", "review", "probe"), default="fidelity")
    parser.add_argument("--embedding", choices=("none", "oneclass"), default="oneclass")
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--floor-queries", type=int, help="time the floor on this many queries")
    parser.add_argument("--no-floor", action="store_true")
    parser.add_argument("--approximate", choices=("ivf", "hnsw"))
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    for name, value, low in (
        ("rows", min(args.rows), 100),
        ("columns", args.columns, 1),
        ("threads", args.threads, 1),
        ("floor-queries", args.floor_queries or 1, 1),
    ):
        if value < low:
            parser.error(f"--{name} must be an integer >= {low}; got {value}")
    return args


def main() -> None:
    args = parse_args()
    for line in describe_machine():
        print(line)
    if len(args.rows) == 1:
        result = run_size(args, args.rows[0])
        print(f"RESULT {result.rows} {result.wall} {result.cpu} {result.floor} {result.peak_gb}")
        return
    results = []
    for n in args.rows:
        argv = [sys.executable, __file__, *_child_args(sys.argv[1:]), "--rows", str(n)]
        print(f"--- {n} rows: {' '.join(argv[1:])}", flush=True)
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        lines = done.stdout.splitlines()
        print("\n".join(line for line in lines if not line.startswith(("cpu:", "threadpool:",
                                                                        "env:"))))  # fmt: skip
        if done.returncode != 0:
            print(done.stderr[-4000:])
            raise SystemExit(f"the {n}-row run failed (exit {done.returncode})")
        _, rows, wall, cpu, floor, peak = lines[-1].split()
        floor_s = None if floor == "None" else float(floor)
        results.append(SizeResult(int(rows), float(wall), float(cpu), floor_s, float(peak)))
    print(growth_table(results))


def _child_args(argv: list[str]) -> list[str]:
    """The command line without its ``--rows`` values (each child gets one size)."""
    out, skipping = [], False
    for arg in argv:
        if arg == "--rows":
            skipping = True
        elif skipping and not arg.startswith("--"):
            continue
        else:
            skipping = False
            out.append(arg)
    return out


def growth_table(results: list[SizeResult]) -> str:
    """Per size wall, CPU, floor and peak RSS; growth exponents log(t2/t1) / log(n2/n1)."""
    lines = [f"{'rows':>9} {'wall s':>9} {'CPU s':>9} {'floor s':>9} {'ratio':>6} {'peak GB':>8}"]
    for r in results:
        ratio = f"{r.wall / r.floor:6.2f}" if r.floor else "     -"
        floor = f"{r.floor:9.2f}" if r.floor else "        -"
        lines.append(f"{r.rows:9d} {r.wall:9.2f} {r.cpu:9.2f} {floor} {ratio} {r.peak_gb:8.2f}")
    pairs = list(itertools.pairwise(results))
    if len(results) > 2:
        pairs.append((results[0], results[-1]))
    for a, b in pairs:
        span = np.log(b.rows / a.rows)
        lines.append(
            f"growth {a.rows} -> {b.rows}: wall exponent {np.log(b.wall / a.wall) / span:.2f}, "
            f"CPU exponent {np.log(b.cpu / a.cpu) / span:.2f}"
        )
    return "\n".join(lines)


def run_size(args: argparse.Namespace, n: int) -> SizeResult:
    """One size in this process: the floor, then the suite, every figure printed."""
    data = make_data(n, args.columns)
    d = args.columns
    print(
        f"{n} real / {n} synthetic / {n} holdout × {d}, threads {args.threads}, suite {args.suite}"
    )
    engine = Engine(threads=args.threads, device=args.device, approximate=args.approximate)
    with using(engine):
        if args.suite == "fidelity" and args.embedding == "oneclass":
            data = embedded(data)  # the floor searches the rows the suite searches
        floor = None
        if not args.no_floor:
            print(f"load average before floor: {load()}")
            floor = floor_seconds(data, args.floor_queries)
            if args.suite == "probe":
                floor /= 4  # the probe extrapolates one pass (real→real): compare one search
            how = f"extrapolated from {args.floor_queries} queries" if args.floor_queries else ""
            what = (
                "1 exact faiss 1-NN search"
                if args.suite == "probe"
                else "4 exact faiss 1-NN searches"
            )
            print(f"floor ({what}): {floor:8.2f} s {how}")
        print(f"load average before suite: {load()}")
        run = {"fidelity": run_fidelity, "review": run_review, "probe": run_probe}[args.suite]
        cpu = time.process_time()
        seconds, summary = run(data, args)
        cpu = time.process_time() - cpu
    print(f"suite: {seconds:8.2f} s wall {cpu:8.2f} s CPU   load average after: {load()}")
    if floor:
        print(f"ratio suite / floor: {seconds / floor:.2f}")
    for check in engine.recall_log:
        print(check.describe())
    print(f"peak RSS: {peak_rss_gb():.2f} GB")
    print(summary)
    return SizeResult(n, seconds, cpu, floor, peak_rss_gb())


if __name__ == "__main__":
    main()
