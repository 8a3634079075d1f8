"""Audit and export speed on a large candidate (prints timings; not a test).

Run: ``python benchmarks/bench_audit.py [n_rows]`` (default 200,000 rows x 12 columns).
Measured 2026-11-22 on the shared 2-core machine, 200,000 rows: audit_table 0.58 s,
apply_thresholds (each slider move) 0.42 s, rule_overlaps 0.01 s, curate 0.26 s,
curated_csv_bytes 2.3 s, curated_parquet_bytes 0.11 s, audit_csv_bytes 1.5 s.
Measured 2026-11-23, 20,000 rows: copy_evidence (20k real, synthetic, holdout; 40 random
encoded dims, the worst case for the grouped search) 6.7 s; audit_table 0.14 s.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthreview.io.schema import LoadedTable, Schema
from synthreview.release.audit import Thresholds, apply_thresholds, audit_table, rule_overlaps
from synthreview.release.curation import curate
from synthreview.release.evidence import copy_evidence
from synthreview.release.export import audit_csv_bytes, curated_csv_bytes, curated_parquet_bytes


@dataclass(frozen=True)
class Samples:
    alpha_level: np.ndarray
    authentic: np.ndarray


@dataclass(frozen=True)
class Fidelity:
    samples: Samples


@dataclass(frozen=True)
class DCR:
    synthetic_to_train: np.ndarray
    synthetic_to_holdout: np.ndarray
    exact_copy: np.ndarray


@dataclass(frozen=True)
class Privacy:
    dcr: DCR


def timed(label: str, fn):
    start = time.perf_counter()
    out = fn()
    print(f"{label:<28} {time.perf_counter() - start:7.3f} s")
    return out


def main(n: int) -> None:
    rng = np.random.default_rng(0)
    numeric = {f"x{i}": rng.normal(size=n).round(4) for i in range(8)}
    text = {f"c{i}": rng.choice(["a", "b", "-c", "=d"], size=n) for i in range(4)}
    frame = pd.DataFrame({**numeric, **text})
    raw = frame.astype(str)
    schema = Schema({**dict.fromkeys(numeric, "numeric"), **dict.fromkeys(text, "categorical")})
    table = LoadedTable("big", "synthetic", frame, raw, "0" * 64)
    fidelity = Fidelity(Samples(rng.random(n), rng.random(n) > 0.3))
    privacy = Privacy(DCR(rng.random(n), rng.random(n), rng.random(n) > 0.99))
    print(f"{n:,} rows x {frame.shape[1]} columns")
    audit = timed("audit_table", lambda: audit_table(fidelity, privacy, Thresholds()))
    timed("apply_thresholds (slider)", lambda: apply_thresholds(audit, Thresholds(alpha=0.9)))
    timed("rule_overlaps", lambda: rule_overlaps(audit))
    curation = timed("curate", lambda: curate(table, audit))
    timed("curated_csv_bytes", lambda: curated_csv_bytes(curation, schema=schema))
    timed("curated_parquet_bytes", lambda: curated_parquet_bytes(curation))
    timed("audit_csv_bytes", lambda: audit_csv_bytes(audit))
    # encoder-space copy evidence (authenticity ratio, nearest training row, blamed columns)
    encoded = rng.normal(size=(3 * n, 40)).astype("float32")
    groups = {f"c{i}": list(range(4 * i, 4 * i + 4)) for i in range(10)}
    timed(
        "copy_evidence (n real/synth/holdout)",
        lambda: copy_evidence(encoded[:n], encoded[n : 2 * n], encoded[2 * n :], groups=groups),
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
