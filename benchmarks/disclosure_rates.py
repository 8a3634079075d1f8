"""False-alarm and detection rates of the issue-36 rules, as a Markdown table.

    nice -n 10 python benchmarks/disclosure_rates.py [--seeds 5] [--group-seeds 3]

Per dataset (Adult 3,000, German credit 300 and flchain 2,000 rows per split, as
``benchmarks/calibrate_policy.py``), every seed splits the real table into disjoint training,
holdout and *fresh* samples; the fresh sample is a perfect generator's output. Planted cases:

- ``qi_1`` / ``qi_3``: the fresh sample with 1 % / 3 % of its rows given the quasi-identifier
  combinations of training-unique people (``qi_replay``);
- ``label_near`` / ``label_exact``: the target rewritten as "the more common class iff the first
  numeric column is at most its training median", with 0.5 % of labels flipped / exact
  (``label_leak``);
- ``broken``: 2 % of the fresh rows with the first numeric column set beyond the declared range
  (``constraint_violations``; declared: every numeric column within its range over the whole
  data set, as an owner knows it);
- ``group_copies`` (Adult only, ``--group-seeds``, the full privacy section without an
  embedding): the fresh rows of race = Amer-Indian-Eskimo replaced by noisy copies of that
  group's training rows (``group_mia_tpr_at_fpr_1pct``, and whether the population rules
  ``mia_auc`` / ``mia_tpr_at_fpr_1pct`` stay quiet).

Each cell counts candidates flagged (warn or fail) with fails in parentheses; fresh columns are
false alarms. The rules are judged by the shipped policy from the metric results alone.
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

from synthreview.generators.tables import add_noise  # noqa: E402
from synthreview.io.tables import align, infer_schema  # noqa: E402
from synthreview.judgement.policy import apply_policy, load_policy  # noqa: E402
from synthreview.metrics.privacy.quasi import (  # noqa: E402
    qi_codes,
    quasi_identifier_risk,
    training_frequencies,
)
from synthreview.metrics.utility.answer_key import answer_keys  # noqa: E402
from synthreview.metrics.utility.constraints import (  # noqa: E402
    check_constraints,
    parse_constraints,
)
from synthreview.options import ReviewOptions  # noqa: E402
from synthreview.review import evaluate  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SETS = {
    "adult": (3000, "income",
              ["age", "sex", "race", "native_country", "education", "marital_status",
               "occupation"]),
    "german_credit": (300, "creditability",
                      ["age_in_years", "personal_status_and_sex", "foreign_worker", "job",
                       "housing"]),
    "flchain": (2000, "death", ["age", "sex", "sample.yr", "chapter"]),
}  # fmt: skip
POLICY = load_policy()


def _verdict(rule: str, candidate: dict) -> str:
    return next(r.verdict for r in apply_policy(POLICY, candidate, kind="table").rules
                if r.rule == rule)  # fmt: skip


def graft_qi(train, fresh, qis, share, seed):
    rng = np.random.default_rng(seed)
    (codes,) = qi_codes([train], qis)
    unique = np.flatnonzero(training_frequencies(codes, codes) == 1)
    m = min(round(share * len(fresh)), len(unique))
    source, target = rng.choice(unique, m, replace=False), rng.choice(len(fresh), m, replace=False)
    out = fresh.copy()
    out.iloc[target, [out.columns.get_loc(q) for q in qis]] = train.iloc[source][qis].to_numpy()
    return out


def label_rule(frame, train, target, column, flip, seed):
    out = frame.copy()
    classes = train[target].astype(str).value_counts().index[:2]
    cut = float(pd.to_numeric(train[column]).median())
    rule = pd.to_numeric(out[column]) <= cut
    out[target] = np.where(rule, classes[0], classes[1])
    if flip:
        rows = np.random.default_rng(seed).choice(len(out), round(flip * len(out)), replace=False)
        flipped = np.where(out.loc[rows, target] == classes[0], classes[1], classes[0])
        out.loc[rows, target] = flipped
    return out


def count(results: list[str]) -> str:
    flagged = sum(v in ("warn", "fail") for v in results)
    return f"{flagged}/{len(results)} ({sum(v == 'fail' for v in results)}/{len(results)})"


def run_set(name: str, seeds: int) -> list[str]:
    n, target, qis = SETS[name]
    full = pd.read_csv(DATA / f"{name}.csv")
    schema = infer_schema(full)
    numeric = list(schema.numeric)
    text = "".join(
        f"[[range]]\ncolumn = '{c}'\nmin = {float(full[c].min())!r}\n"
        f"max = {float(full[c].max())!r}\n"
        for c in numeric
        if full[c].notna().any()
    )
    declared = parse_constraints(text, columns=schema.analysed, numeric=numeric)
    cells: dict[str, dict[str, list[str]]] = {}

    def note(rule: str, case: str, verdict: str) -> None:
        cells.setdefault(rule, {}).setdefault(case, []).append(verdict)

    for seed in range(seeds):
        rows = full.sample(3 * n, random_state=1000 + seed).reset_index(drop=True)
        train, holdout = rows[:n], rows[n : 2 * n].reset_index(drop=True)
        fresh = rows[2 * n :].reset_index(drop=True)
        for case, cand in (("fresh", fresh), ("qi_1", graft_qi(train, fresh, qis, 0.01, seed)),
                           ("qi_3", graft_qi(train, fresh, qis, 0.03, seed))):  # fmt: skip
            r = quasi_identifier_risk(
                train, cand, holdout=holdout, quasi_identifiers=qis, seed=seed
            )
            note("qi_replay", case, _verdict("qi_replay", {"privacy": {
                "quasi_identifiers": r.to_dict(), "errors": {}, "skipped": {}}}))  # fmt: skip
        for case, cand in (
            ("fresh", fresh),
            ("label_near", label_rule(fresh, train, target, numeric[0], 0.005, seed)),
            ("label_exact", label_rule(fresh, train, target, numeric[0], 0.0, seed)),
        ):
            keys = answer_keys(train, cand, holdout=holdout, columns=[target], schema=schema)
            note("label_leak", case, _verdict("label_leak", {"utility": {
                "answer_key": keys.to_dict(), "errors": {}, "skipped": {}}}))  # fmt: skip
        broken = fresh.copy()
        bad = np.random.default_rng(seed).choice(n, round(0.02 * n), replace=False)
        broken.loc[bad, numeric[0]] = float(full[numeric[0]].max()) + 1
        for case, cand in (("fresh", fresh), ("broken", broken)):
            report = check_constraints(train, cand, holdout=holdout, constraints=declared)
            note("constraint_violations", case, _verdict("constraint_violations", {"utility": {
                "constraints": report.to_dict(), "errors": {}, "skipped": {}}}))  # fmt: skip
    cases = ["fresh", "qi_1", "qi_3", "label_near", "label_exact", "broken"]
    lines = [f"### {name} ({n:,} rows per split, {seeds} seeds)", "",
             "| rule | " + " | ".join(cases) + " |", "|---" * (len(cases) + 1) + "|"]  # fmt: skip
    for rule, by_case in cells.items():
        lines.append(f"| {rule} | " + " | ".join(
            count(by_case[c]) if c in by_case else "-" for c in cases) + " |")  # fmt: skip
    return [*lines, ""]


def run_groups(seeds: int) -> list[str]:
    n = 3000
    full = pd.read_csv(DATA / "adult.csv")
    group = "Amer-Indian-Eskimo"
    rules = ("mia_auc", "mia_tpr_at_fpr_1pct", "group_mia_tpr_at_fpr_1pct")
    found: dict[tuple[str, str], list[str]] = {}
    for seed in range(seeds):
        rows = full.sample(3 * n, random_state=100 + seed).reset_index(drop=True)
        train, holdout = rows[:n], rows[n : 2 * n].reset_index(drop=True)
        fresh = rows[2 * n :].reset_index(drop=True)
        small = train[train["race"] == group].reset_index(drop=True)
        noisy = add_noise(small, schema=infer_schema(train), sigma=0.05, seed=seed)
        keep = fresh[fresh["race"] != group].iloc[: n - len(noisy)]
        planted = pd.concat([keep, noisy], ignore_index=True)
        review = align(train, {"fresh": fresh, "group_copies": planted}, holdout=holdout)
        options = ReviewOptions(embedding="none", groups=("race", "sex"))
        report = evaluate(review, sections=["privacy"], options=options, seed=seed)
        for name, c in report.candidates.items():
            judged = {r.rule: r.verdict for r in apply_policy(POLICY, c.to_dict()).rules}
            for rule in rules:
                found.setdefault((rule, name), []).append(judged[rule])
    lines = [f"### adult, one small group's noisy copies ({n:,} rows per split, {seeds} seeds, "
             "groups race and sex, no embedding)", "", "| rule | fresh | group_copies |",
             "|---|---|---|"]  # fmt: skip
    for rule in rules:
        lines.append(f"| {rule} | {count(found[(rule, 'fresh')])} | "
                     f"{count(found[(rule, 'group_copies')])} |")  # fmt: skip
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--group-seeds", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    lines = []
    for name in SETS:
        lines += run_set(name, args.seeds)
    if args.group_seeds:
        lines += run_groups(args.group_seeds)
    lines.append(f"({time.perf_counter() - start:.0f} s on the shared two-core machine)")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
