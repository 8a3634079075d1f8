"""False-alarm and detection rates of the default policy's privacy and audit rules (issue 27).

A *fresh real sample* (real rows disjoint from training and holdout) is what a perfect generator
would release: every warning it gets is a false alarm. Known-bad candidates must be caught:

* ``verbatim``: the training rows themselves;
* ``noisy``: the training rows with 1 %-of-sd Gaussian noise on every numeric column;
* ``planted_1`` / ``planted_5`` / ``planted_10``: the fresh sample with 1 / 5 / 10 % of its
  rows replaced by verbatim training rows (placed at random).

Each dataset of ``../shared/data`` is split at random (per seed) into disjoint training,
holdout and fresh samples of ``n`` rows; the privacy section runs on every candidate (``max_attack``
caps the membership attack set), the release audit on top of it, and the default policy judges
the privacy rules and the audit rules (``audit_copies``, ``real_records``). Fidelity and utility
are not run (their rules are left out of the table and of the overall verdict here).

Run (about 6 minutes on two shared cores at the defaults)::

    flock /tmp/heavy.lock python benchmarks/calibrate_policy.py --out docs/rule_rates.md

Exit status 2 with a message on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthreview.io.tables import align, read_table  # noqa: E402
from synthreview.judgement.policy import load_policy  # noqa: E402
from synthreview.judgement.verdicts import SEVERITY  # noqa: E402
from synthreview.options import ReviewOptions  # noqa: E402
from synthreview.release.pipeline import audit_candidate  # noqa: E402
from synthreview.release.verdicts import copy_excess, judge_audited  # noqa: E402
from synthreview.review import evaluate  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
#: rows per split (training, holdout and fresh sample each); German credit has 1,000 rows in all
SIZES = {"adult": 3000, "german_credit": 300, "flchain": 2000}
KINDS = ("fresh", "verbatim", "noisy", "planted_1", "planted_5", "planted_10")
#: rules judged here (privacy section + release audit), in policy order
STAGE_RULES = (
    "mia_auc",
    "mia_tpr_at_fpr_1pct",
    "dcr_share",
    "wp29_singling_out_univariate",
    "wp29_singling_out_multivariate",
    "wp29_linkability",
    "wp29_inference",
    "audit_copies",
    "real_records",
)


@dataclass(frozen=True)
class Outcome:
    """One candidate's verdicts under the default policy.

    Attributes
    ----------
    dataset, kind : str
    seed, n_rows : int
    verdicts : tuple of (rule, verdict)
        For the rules in :data:`STAGE_RULES` that were judged.
    overall : str
        Worst verdict over those rules ("pass", "warn", "fail" or "incomplete").
    """

    dataset: str
    kind: str
    seed: int
    n_rows: int
    verdicts: tuple[tuple[str, str], ...]
    overall: str


def _noisy(frame: pd.DataFrame, numeric: Sequence[str], seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for col in numeric:
        values = pd.to_numeric(out[col], errors="coerce").astype(float)
        out[col] = values + rng.normal(0.0, 0.01 * values.std(ddof=0), len(values))
    return out


def _planted(fresh: pd.DataFrame, real: pd.DataFrame, percent: int, seed: int) -> pd.DataFrame:
    k = max(1, round(len(fresh) * percent / 100))
    mixed = pd.concat([fresh.iloc[: len(fresh) - k], real.iloc[:k]], ignore_index=True)
    order = np.random.default_rng(seed).permutation(len(mixed))
    return mixed.iloc[order].reset_index(drop=True)


def run_split(dataset: str, n: int, seed: int, *, max_attack: int) -> list[Outcome]:
    """Every candidate kind of one random split, judged by the default policy."""
    table = read_table(DATA / f"{dataset}.csv", role="real")
    if 3 * n > table.n_rows:
        raise ValueError(f"{dataset} has {table.n_rows} rows; 3 x n = {3 * n} are needed")
    order = np.random.default_rng(seed).permutation(table.n_rows)

    def rows(part: np.ndarray, name: str, role: str):
        return replace(table, name=name, role=role,
                       frame=table.frame.iloc[part].reset_index(drop=True),
                       raw=table.raw.iloc[part].reset_index(drop=True))  # fmt: skip

    real = rows(order[:n], "real", "real")
    holdout = rows(order[n : 2 * n], "holdout", "holdout")
    fresh = rows(order[2 * n : 3 * n], "fresh", "synthetic")
    schema = align(real, {"fresh": fresh}, holdout=holdout).schema
    candidates = {
        "fresh": fresh,
        "verbatim": real.frame.copy(),
        "noisy": _noisy(real.frame, schema.numeric, seed + 1),
        **{f"planted_{p}": _planted(fresh.frame, real.frame, p, seed + 2 + p) for p in (1, 5, 10)},
    }
    review = align(real, candidates, holdout=holdout, schema=schema)
    report = evaluate(
        review, sections=["privacy"], options=ReviewOptions(max_attack=max_attack), seed=seed
    )
    policy = load_policy()
    out = []
    for kind in KINDS:
        audit = audit_candidate(report, kind)
        copies = None if audit is None else copy_excess(audit.audit, audit.reference)
        content = report.candidates[kind].to_dict()
        verdicts = judge_audited(policy, content, copies=copies, kind=report.kind)
        judged = tuple((r.rule, r.verdict) for r in verdicts.rules if r.rule in STAGE_RULES)
        overall = max((v for _, v in judged), key=SEVERITY.__getitem__, default="n/a")
        out.append(Outcome(dataset, kind, seed, n, judged, overall))
    return out


def _rate(outcomes: Sequence[Outcome], rule: str, verdicts: tuple[str, ...]) -> str:
    found = [dict(o.verdicts).get(rule) if rule != "overall" else o.overall for o in outcomes]
    found = [v for v in found if v is not None]
    if not found:
        return "-"
    hits = sum(v in verdicts for v in found)
    return f"{hits}/{len(found)}"


def rates_table(outcomes: Sequence[Outcome]) -> str:
    """Markdown: per dataset and rule, fresh warn / fail and each bad kind's warn-or-fail / fail."""
    lines = []
    for dataset in dict.fromkeys(o.dataset for o in outcomes):
        mine = [o for o in outcomes if o.dataset == dataset]
        n, seeds = mine[0].n_rows, len({o.seed for o in mine})
        lines += [
            f"### {dataset} ({n:,} rows per split, {seeds} seeds)",
            "",
            "| rule | fresh: warn | fresh: fail | "
            + " | ".join(f"{k}: caught (fail)" for k in KINDS[1:])
            + " |",
            "|---|---|---|" + "---|" * (len(KINDS) - 1),
        ]
        for rule in (*STAGE_RULES, "overall"):
            fresh = [o for o in mine if o.kind == "fresh"]
            cells = [_rate(fresh, rule, ("warn",)), _rate(fresh, rule, ("fail",))]
            for kind in KINDS[1:]:
                bad = [o for o in mine if o.kind == kind]
                caught = _rate(bad, rule, ("warn", "fail"))
                cells.append(f"{caught} ({_rate(bad, rule, ('fail',))})")
            lines.append(f"| {rule} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--seeds", type=int, default=5, help="random splits per dataset")
    parser.add_argument("--max-attack", type=int, default=500, help="membership attack set cap")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply every dataset's split size"
    )
    parser.add_argument("--out", type=Path, help="write the markdown table here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the calibration; 0 on success, 2 on bad arguments."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be a positive integer; got {args.seeds} instead")
    if not 0 < args.scale <= 1:
        parser.error(f"--scale must be in (0, 1]; got {args.scale} instead")
    if args.max_attack < 10:
        parser.error(f"--max-attack must be at least 10; got {args.max_attack} instead")
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    for dataset in args.datasets:
        n = max(100, round(SIZES[dataset] * args.scale))
        for seed in range(args.seeds):
            tick = time.perf_counter()
            found = run_split(dataset, n, seed, max_attack=args.max_attack)
            outcomes += found
            summary = ", ".join(f"{o.kind} {o.overall}" for o in found)
            print(f"{dataset} seed {seed}: {summary} ({time.perf_counter() - tick:.0f} s)")
    table = rates_table(outcomes)
    print(table)
    elapsed = time.perf_counter() - started
    if args.out is not None:
        args.out.write_text(
            HEADER.format(seconds=elapsed, seeds=args.seeds, max_attack=args.max_attack)
            + table
            + FOOTER,
            encoding="utf-8",
        )
    return 0


HEADER = """# Measured false-alarm and detection rates of the default policy

Written by `benchmarks/calibrate_policy.py` ({seeds} seeds, `max_attack={max_attack}`,
{seconds:.0f} s on the shared two-core machine); re-run it after changing a threshold:

    flock /tmp/heavy.lock python benchmarks/calibrate_policy.py --out docs/rule_rates.md

Per dataset, every seed splits the real table at random into disjoint training, holdout and
*fresh* samples of the same size. The fresh sample is a perfect generator's output: its
**warn** and **fail** columns are false-alarm rates. The other columns are known-bad candidates
(`verbatim`: the training rows; `noisy`: training rows with 1 %-of-sd noise on every numeric
column; `planted_P`: the fresh sample with P % of its rows replaced by verbatim training rows),
shown as *caught* = warn or fail, with fail in parentheses. Only the privacy section and the
release audit run here (`audit_copies`, `real_records`); `overall` is the worst verdict of these
rules, so it leaves out the fidelity and utility rules and `reattack` (a curated set only).

"""

FOOTER = """
Reading the table: an advisory rule (`dcr_share`, `wp29_inference`) never fails, it warns at
worst, so its "fail" counts are 0 by construction and its detection shows in "caught".
"""


if __name__ == "__main__":
    sys.exit(main())
