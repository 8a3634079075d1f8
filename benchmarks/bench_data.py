"""Time and memory of loading: read_table on a large CSV, infer_schema, align, load_traces.

Usage::

    python benchmarks/bench_data.py [--megabytes 200]

Builds a CSV of about ``--megabytes`` MB by repeating a seeded Adult-like mixed table (7 columns,
empty cells as missing) in a temporary folder, and a long-format CGM file of 20 subjects x 30
days, then prints seconds and peak resident memory per step. Not a test.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python benchmarks/x.py
from synthreview.io.tables import align, infer_schema, read_table
from synthreview.io.traces import load_traces


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _mixed_table(n_rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(17, 90, n_rows),
            "workclass": rng.choice(["Private", "Self-emp", "State-gov", ""], n_rows),
            "fnlwgt": rng.integers(10_000, 1_000_000, n_rows),
            "education": rng.choice(["Bachelors", "HS-grad", "Masters", "Doctorate"], n_rows),
            "hours_per_week": np.round(rng.normal(40, 10, n_rows), 1),
            "sex": rng.choice(["Male", "Female"], n_rows),
            "income": rng.choice(["<=50K", ">50K"], n_rows),
        }
    )


def _cgm_long(n_subjects: int, n_days: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_days * 288
    times = pd.date_range("2021-01-01", periods=n, freq="5min")
    frames = []
    for s in range(n_subjects):
        jitter = pd.to_timedelta(rng.integers(0, 60, n), unit="s")
        glucose = 120 + 40 * np.sin(np.arange(n) * 2 * np.pi / 288) + rng.normal(0, 10, n)
        frames.append(
            pd.DataFrame(
                {
                    "id": f"S{s}",
                    "time": (times + jitter).astype(str),
                    "gl": np.round(np.clip(glucose, 40, 400)),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=200.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        block = _mixed_table(100_000, seed=0)
        path = Path(tmp) / "big.csv"
        block.to_csv(path, index=False)
        per_block = path.stat().st_size
        repeats = max(1, round(args.megabytes * 1e6 / per_block))
        with path.open("a") as fh:
            body = block.to_csv(index=False, header=False)
            for _ in range(repeats - 1):
                fh.write(body)
        size_mb = path.stat().st_size / 1e6
        _say(f"python {sys.version.split()[0]}, pandas {pd.__version__}")
        _say(f"CSV: {size_mb:.0f} MB, {repeats * len(block):,} rows x {block.shape[1]} columns")

        start = time.perf_counter()
        table = read_table(path)
        _say(f"read_table   {time.perf_counter() - start:6.2f} s   peak RSS {_peak_mb():7.0f} MB")
        start = time.perf_counter()
        schema = infer_schema(table.frame)
        _say(f"infer_schema {time.perf_counter() - start:6.2f} s")
        start = time.perf_counter()
        align(table, {"copy": table}, schema=schema)
        _say(f"align        {time.perf_counter() - start:6.2f} s   peak RSS {_peak_mb():7.0f} MB")

        cgm = Path(tmp) / "cgm.csv"
        _cgm_long(n_subjects=20, n_days=30, seed=1).to_csv(cgm, index=False)
        start = time.perf_counter()
        traces = load_traces(cgm)
        _say(
            f"load_traces  {time.perf_counter() - start:6.2f} s   "
            f"({cgm.stat().st_size / 1e6:.0f} MB, 20 subjects x 30 days -> "
            f"{traces.n_traces} day traces)"
        )


if __name__ == "__main__":
    main()
