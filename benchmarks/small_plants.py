"""Detection curve of small verbatim plants: what the ``real_records`` rule and the decision do.

    nice -n 10 python benchmarks/small_plants.py [--splits 13] [--rows 4000]

Adult (the shipped extract, ``synthreview/datasets/adult.csv.gz``) is split ``--splits`` times
into disjoint training, holdout and fresh samples of ``--rows`` rows; the fresh sample, and
the fresh sample with 0.25 %, 0.5 %, 1 % and 2 % of its rows replaced by distinct verbatim
training rows, are judged by the shipped policy's ``real_records`` rule on the audit's own
evidence (row hashes over every analysed column: a row equal to a training or a holdout record;
the reference is the holdout's leave-one-out share, as ``release.audit.real_records``). The
decision follows ``judgement.decision``: a failure or (since issue 36) a warning is curated,
so such a candidate is never *released as submitted*; the table counts the splits where it
would still ship as submitted (the rule passes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthreview.io.row_hash import table_row_hashes  # noqa: E402
from synthreview.judgement.policy import apply_policy, load_policy  # noqa: E402
from synthreview.release.audit import real_records  # noqa: E402

LEVELS = (0.0, 0.0025, 0.005, 0.01, 0.02)


def _flags(rows: np.ndarray, against: np.ndarray) -> np.ndarray:
    return np.isin(rows, against)


def _loo(rows: np.ndarray) -> np.ndarray:
    """Each row equals *another* row of the same table."""
    _, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
    return counts[inverse] > 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=13)
    parser.add_argument("--rows", type=int, default=4000)
    args = parser.parse_args()
    start = time.perf_counter()
    full = pd.read_csv(ROOT / "synthreview" / "datasets" / "adult.csv.gz")
    columns = list(full.columns)
    policy = load_policy()
    verdicts: dict[float, list[str]] = {level: [] for level in LEVELS}
    n = args.rows
    for split in range(args.splits):
        rows = full.sample(3 * n, random_state=5000 + split).reset_index(drop=True)
        train, holdout, fresh = rows[:n], rows[n : 2 * n], rows[2 * n :].reset_index(drop=True)
        h_train = table_row_hashes(train, columns)
        h_hold = table_row_hashes(holdout, columns)
        reference = pd.DataFrame(
            {"exact_copy": _flags(h_hold, h_train), "holdout_copy": _loo(h_hold)}
        )
        rng = np.random.default_rng(split)
        for level in LEVELS:
            candidate = fresh.copy()
            k = round(level * n)
            if k:
                slots = rng.choice(n, k, replace=False)
                sources = rng.choice(n, k, replace=False)
                candidate.iloc[slots] = train.iloc[sources].to_numpy()
            h = table_row_hashes(candidate.astype(train.dtypes.to_dict()), columns)
            audit = pd.DataFrame(
                {"exact_copy": _flags(h, h_train), "holdout_copy": _flags(h, h_hold)}
            )
            found = real_records(audit, reference)
            judged = apply_policy(
                policy, {"audit": {"real_records": found.to_dict()}}, kind="table"
            )
            verdicts[level].append(
                next(r.verdict for r in judged.rules if r.rule == "real_records")
            )
    print(f"### Small verbatim plants (Adult, {n:,} rows per split, {args.splits} splits)\n")
    print("| planted | rows | real_records: pass (ships as submitted) | warn | fail |")
    print("|---|---|---|---|---|")
    for level, found in verdicts.items():
        counts = {v: found.count(v) for v in ("pass", "warn", "fail")}
        print(
            f"| {100 * level:g} % | {round(level * n)} | {counts['pass']}/{len(found)} | "
            f"{counts['warn']}/{len(found)} | {counts['fail']}/{len(found)} |"
        )
    print(f"\n({time.perf_counter() - start:.0f} s on the shared two-core machine)")


if __name__ == "__main__":
    main()
