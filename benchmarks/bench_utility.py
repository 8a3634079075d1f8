"""Benchmark: every utility metric on the full Adult table (target: <= 30 s).

Real = 24,000 training rows, holdout = the other 24,000 (of 48,842, seeded split), synthetic =
a column-shuffled copy of the training rows (marginals kept, dependence destroyed), so the
metrics have something to find. Runs ``evaluate_utility`` with ML efficacy on ``income``,
groups race and sex and the Adult default regression, twice: cold (holdout reference and TRTR
computed) and for a second candidate (a bootstrap resample), which reuses them.

    python benchmarks/bench_utility.py [path/to/adult.csv]
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import synthreview.metrics as utility
from synthreview.errors import UndefinedMetricWarning
from synthreview.io.schema import Schema
from synthreview.metrics.utility.regression import suggest_formula

BUNDLED = Path(__file__).resolve().parents[1] / "synthreview" / "datasets" / "adult.csv.gz"
DATA = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/adult.csv")
DATA = DATA if DATA.exists() or len(sys.argv) > 1 else BUNDLED
N = 24_000


def main() -> None:
    if not DATA.exists():
        print(f"no Adult table at {DATA}; pass its path")
        return
    adult = pd.read_csv(DATA)
    schema = Schema(
        {c: "numeric" if pd.api.types.is_numeric_dtype(adult[c]) else "categorical" for c in adult}
    )
    rng = np.random.default_rng(0)
    order = rng.permutation(len(adult))
    real = adult.iloc[order[:N]].reset_index(drop=True)
    holdout = adult.iloc[order[N : 2 * N]].reset_index(drop=True)
    shuffled = real.apply(lambda col: col.to_numpy()[rng.permutation(N)])
    bootstrap = real.iloc[rng.integers(0, N, N)].reset_index(drop=True)
    options = dict(schema=schema, target="income", groups=("race", "sex"), seed=0)
    warnings.simplefilter("ignore", UndefinedMetricWarning)
    print(f"{DATA}; cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    for name, candidate in (("column_shuffled", shuffled), ("bootstrap", bootstrap)):
        start, cpu = time.perf_counter(), time.process_time()
        report = utility.evaluate_utility(real, candidate, holdout, **options)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        out = report.to_dict()
        ref = out["holdout_reference"]
        print(
            f"\n{name}: {seconds:.1f} s wall, {cpu:.1f} s CPU (real, holdout, synthetic {N} rows)"
        )
        for key in ("k_marginal", "correlation_mae", "discriminator_auc", "ci_overlap",
                    "proportion_error", "mean_error", "percentile_error"):  # fmt: skip
            print(f"  {key:18s} {out[key]}  (holdout {ref[key]})")
        for row in out["ml_efficacy"]:
            print(f"  {row['model']:20s} {row['metric']:8s} TSTR {row['tstr']:.3f}"
                  f"  TRTR {row['trtr']:.3f}")  # fmt: skip
        if out["errors"]:
            print("  errors:", out["errors"])
    print("\nper metric, cold (candidate only):")
    cat, num = schema.categorical, schema.numeric
    parts = {
        "proportions (+ by group)": lambda: utility.proportion_errors(
            real, shuffled, columns=cat, groups=("race", "sex")
        ),
        "means (+ by group)": lambda: utility.mean_errors(
            real, shuffled, columns=num, groups=("race", "sex")
        ),
        "percentiles": lambda: utility.percentile_errors(real, shuffled, columns=num),
        "k-marginal (categorical)": lambda: utility.k_marginal_score(real, shuffled, columns=cat),
        "k-marginal (+ binned numeric)": lambda: utility.k_marginal_score(
            real, shuffled, columns=cat, numeric=num
        ),
        "correlation MAE": lambda: utility.correlation_error(real, shuffled, columns=num),
        "discriminator AUC": lambda: utility.discriminator_auc(real, shuffled, schema=schema),
        "CI overlap": lambda: utility.ci_overlap(
            real, shuffled, formula=suggest_formula(schema), schema=schema
        ),
    }
    for label, fn in parts.items():
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"  {label:30s} {wall:6.2f} s wall {cpu:6.2f} s CPU")


if __name__ == "__main__":
    main()
