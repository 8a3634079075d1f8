"""Stage one of the grouped search per distance, one thread: each path against faiss's 1-NN.

On ``bench_fidelity``'s data (``--rows`` real rows as the reference, ``--queries`` synthetic rows
as queries, both through the One-Class embedding), in one process on one thread, the CPU seconds
and nanoseconds per (query, reference row) of: faiss's whole-set exact 1-NN (the floor's search),
faiss's per-group 1-NN calls (``fused_group_distances``), numpy's tiles (``group_minima``), each
register kernel this CPU runs (``kernel_minima``), and the self pass of the whole reference (each
kernel's ``kernel_self_minima`` against faiss's whole-set 1-NN of the reference among itself).
Best of ``--repeats`` runs each; the machine's load is printed beside.

    python benchmarks/bench_stage_one.py [--rows 50000] [--queries 10000] [--repeats 2]

Measured 2026-11-28 (kernels' commit b6dcaec; AMD EPYC, 2 usable cores, AVX-512; 10k x 50k, 25
dimensions), ns per distance, at 18:47 UTC (load 2.5-3.0, a prototype of this script) and 19:31
(load 3.6): faiss whole-set 1-NN 0.28-0.35 / 0.32, faiss per group 0.36-0.42 / 0.40, numpy tiles
0.67-0.68 / 0.67, AVX-512 kernel 0.20 / 0.20, AVX2 kernel 0.38 / 0.38 (the same bits); the 50k
self pass, CPU-s: AVX-512 kernel 0.34 / 0.29, AVX2 kernel 0.50 / 0.52, faiss's whole-set 1-NN of
the reference among itself 0.89 / 0.75.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python benchmarks/x.py
from bench_fidelity import make_data

from synthreview import grouped_search
from synthreview.embeddings import fit_embedding
from synthreview.engine import limited_threads
from synthreview.grouped_search import (
    GroupedReference,
    fused_group_distances,
    group_minima,
    kernel_layout,
    kernel_minima,
    kernel_self_minima,
)


def _best(step, repeats: int) -> float:
    """Fewest CPU seconds of ``repeats`` runs of ``step``."""
    best = float("inf")
    for _ in range(repeats):
        cpu = time.process_time()
        step()
        best = min(best, time.process_time() - cpu)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    for name, low in (("rows", 800), ("queries", 1), ("repeats", 1)):
        if getattr(args, name) < low:
            parser.error(f"--{name} must be an integer >= {low}; got {getattr(args, name)}")
    with limited_threads(1):
        run(args)


def run(args: argparse.Namespace) -> None:
    data = make_data(args.rows, 20)
    embedding = fit_embedding(data["real"], method="oneclass", seed=0)
    grouped = GroupedReference(embedding.transform(data["real"]))
    synthetic = embedding.transform(data["synthetic"])[: args.queries]
    query = np.ascontiguousarray(synthetic - grouped.shift, dtype=np.float32)  # as the search
    n, dim = len(grouped.reference), grouped.dim
    kernel = grouped_search.KERNEL or "none (not built)"
    print(f"reference {n} rows, {args.queries} queries, {dim} dimensions, {grouped.n_groups} "
          f"groups of {grouped.size}; best kernel here: {kernel}")  # fmt: skip

    def line(name: str, seconds: float, distances: int) -> None:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"{name:<34} {seconds:7.3f} CPU-s  {seconds / distances * 1e9:6.3f} ns/distance"
              f"   load {load}")  # fmt: skip

    index = faiss.IndexFlatL2(dim)
    index.add(grouped.reference)
    pairs = len(query) * n
    line("faiss whole-set 1-NN", _best(lambda: index.search(query, 1), args.repeats), pairs)
    line("faiss per-group 1-NN calls", _best(
        lambda: fused_group_distances(query, grouped.reference, grouped.bounds), args.repeats
    ), pairs)  # fmt: skip
    q_aug = np.hstack([query, np.ones((len(query), 1), np.float32)])
    line("numpy tiles", _best(
        lambda: group_minima(q_aug, grouped.padded, grouped.size), args.repeats
    ), pairs)  # fmt: skip
    levels = grouped_search.fused_minima.levels() if grouped_search.fused_minima else ()
    layout = kernel_layout(grouped.padded, grouped.size) if levels else None
    for kernel in levels:
        line(f"register kernel ({kernel})", _best(
            lambda kernel=kernel: kernel_minima(query, layout, kernel=kernel), args.repeats
        ), pairs)  # fmt: skip
    # the self pass: the whole reference among itself (counted as n x n distances)
    line("self: faiss whole-set 1-NN", _best(
        lambda: index.search(grouped.reference, 1), args.repeats
    ), n * n)  # fmt: skip
    norms = grouped.norms.astype(np.float32)
    for kernel in levels:
        line(f"self: register kernel ({kernel})", _best(
            lambda kernel=kernel: kernel_self_minima(
                grouped.reference, norms, layout, grouped.bounds, kernel=kernel
            ), args.repeats,
        ), n * n)  # fmt: skip


if __name__ == "__main__":
    main()
