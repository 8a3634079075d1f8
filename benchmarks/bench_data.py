"""Time and memory of loading: read_table on a large CSV, infer_schema, align, load_traces.

Usage::

    python benchmarks/bench_data.py [--megabytes 301 [1500 ...]]

Builds, per size, a CSV of about that many MB by repeating a seeded Adult-like mixed table
(7 columns, empty cells as missing) in a temporary folder and loads it in a fresh Python
process: read_table, infer_schema and align (the file as real and as a candidate, as a review
prepares it). Prints seconds and peak resident memory (high-water mark) after each step, as MiB and
as a multiple of the file size: ``peak/file`` counts the whole process (Python, numpy, pandas,
torch and the rest that ``import synthreview`` loads), ``net/file`` the growth above the process
right after those imports. Issue #12 asks for a 1.5 GB CSV to stay under 3x its size. Then it
times load_traces on a long-format CGM file of 20 subjects x 30 days. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
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
    """Peak resident memory of this process in MiB.

    Linux's ``VmHWM`` belongs to this process's own memory; ``ru_maxrss`` survives ``exec``
    and would start the child at the parent's peak.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
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


def _write_csv(path: Path, megabytes: float) -> int:
    """A CSV of about ``megabytes`` MB (the seeded block repeated); returns its rows."""
    block = _mixed_table(100_000, seed=0)
    block.to_csv(path, index=False)
    repeats = max(1, round(megabytes * 1e6 / path.stat().st_size))
    body = block.to_csv(index=False, header=False)
    with path.open("a") as fh:
        for _ in range(repeats - 1):
            fh.write(body)
    return repeats * len(block)


def _load_steps(path: str) -> None:
    """Child process: load ``path`` step by step, print peak RSS after each step as JSON."""
    import synthreview  # noqa: F401  (everything the CLI and the dashboard import)

    steps = {"imports": (0.0, _peak_mb())}
    start = time.perf_counter()
    table = read_table(path)
    steps["read_table"] = (time.perf_counter() - start, _peak_mb())
    start = time.perf_counter()
    schema = infer_schema(table.frame)
    steps["infer_schema"] = (time.perf_counter() - start, _peak_mb())
    start = time.perf_counter()
    align(table, {"copy": table}, schema=schema)
    steps["align"] = (time.perf_counter() - start, _peak_mb())
    kept = table.written.derived_share()
    sys.stdout.write(json.dumps({"steps": steps, "kept_share": kept}) + "\n")


def _measure(path: Path, n_rows: int, n_columns: int) -> None:
    size_mb = path.stat().st_size / 2**20
    load = os.getloadavg()
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    steps = result["steps"]
    base = steps["imports"][1]
    _say(
        f"CSV {size_mb:,.0f} MiB ({path.stat().st_size / 1e6:,.0f} MB), {n_rows:,} rows x "
        f"{n_columns} columns; load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"number cells kept as text: {result['kept_share']:.2%}"
    )
    _say("  step           seconds   peak RSS MB   peak/file   net/file")
    for name, (seconds, peak) in steps.items():
        _say(
            f"  {name:<13} {seconds:8.1f} {peak:13,.0f} {peak / size_mb:11.2f} "
            f"{(peak - base) / size_mb:10.2f}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, nargs="+", default=[301.0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _load_steps(args.child)
        return
    _say(f"python {sys.version.split()[0]}, pandas {pd.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in args.megabytes:
            path = Path(tmp) / "big.csv"
            n_rows = _write_csv(path, megabytes)
            _measure(path, n_rows, _mixed_table(1, seed=0).shape[1])
            path.unlink()

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
