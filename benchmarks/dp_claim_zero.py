"""A claimed ε = 0 judged like any other ε (issue 35 item 6): measurements of docs/rule_rates.md.

Three parts, each printed as it finishes:

1. ``credit``: German credit, 300 rows per split, seeds 0-19, privacy section with ε = 0
   claimed: the fresh sample, and the fresh sample with 15 of its rows replaced by training
   rows. Counts how often each fails ``dp_claim``.
2. ``event``: the verbatim-copy event alone on fresh samples (no attacks): random splits of
   Adult (all columns; 9 and 7 categorical columns, whose fresh samples repeat many training
   records by coincidence) and of both panels by person; a false alarm is a certified ε > 0 at
   the event's share of α (two one-sided Clopper-Pearson bounds at 0.05 / 4).
3. ``panels``: both person-year panels split by person (seeds 1-5), privacy section with
   ``--person person_id`` and ε = 0: fresh people, and 5 % / 10 % of the training people
   copied whole in place of as many fresh people (ids renumbered).

Run (about 4 minutes of two cores; heavy, so under the shared lock)::

    flock /tmp/bench.lock python benchmarks/dp_claim_zero.py [--parts credit event panels]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthreview.io.persons import with_person  # noqa: E402
from synthreview.io.row_hash import table_row_hashes  # noqa: E402
from synthreview.io.tables import align  # noqa: E402
from synthreview.judgement.policy import apply_policy, load_policy  # noqa: E402
from synthreview.metrics.privacy.dp_claim import certified_epsilon, verbatim_events  # noqa: E402
from synthreview.options import ReviewOptions  # noqa: E402
from synthreview.review import evaluate  # noqa: E402
from tests.credit_split import german_credit_split  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
#: Adult's categorical columns; the last seven repeat whole records most often
ADULT_CATEGORICAL = ["workclass", "education", "marital_status", "occupation", "relationship",
                     "race", "sex", "native_country", "income"]  # fmt: skip
ADULT_FEW = ["workclass", "education", "marital_status", "relationship", "race", "sex", "income"]
#: the panels' continuous columns: without them a person's rows repeat other people's often
CONTINUOUS = {"year", "exper", "expersq", "experience", "lwage", "wage", "hours", "weeks"}


def _verdict(content: dict) -> tuple[str, float]:
    claim = content["privacy"]["dp_claim"]
    return apply_policy(load_policy(), content)["dp_claim"].verdict, claim["certified_epsilon"]


def credit(seeds: range) -> None:
    failed = {"fresh": 0, "verbatim15": 0}
    for seed in seeds:
        split = german_credit_split(300, seed=seed)
        copied = split.fresh.frame.copy()
        rows = np.random.default_rng(seed).choice(300, 15, replace=False)
        copied.iloc[rows] = split.real.frame.iloc[rows].to_numpy()
        review = align(split.real, {"fresh": split.fresh, "verbatim15": copied},
                       holdout=split.holdout, schema=split.schema)  # fmt: skip
        options = ReviewOptions(max_attack=300, claimed_epsilon=0.0)
        report = evaluate(review, sections=["privacy"], options=options, seed=seed)
        for name in failed:
            verdict, eps = _verdict(report.candidates[name].to_dict())
            failed[name] += verdict == "fail"
            print(f"credit seed {seed} {name}: {verdict} (ε ≥ {eps:.2f})", flush=True)
    print(f"credit: dp_claim fails {failed} of {len(seeds)} seeds each", flush=True)


def _event_alarms(frame: pd.DataFrame, columns: list[str], n: int, reps: int,
                  person: str | None = None) -> tuple[int, np.ndarray]:  # fmt: skip
    hashes = table_row_hashes(frame, columns)
    ids = None if person is None else frame[person].to_numpy()
    units = np.arange(len(frame)) if ids is None else np.unique(ids)
    alarms, copies = 0, []
    for rep in range(reps):
        order = np.random.default_rng(rep).permutation(len(units))
        parts = [units[order[i * n : (i + 1) * n]] for i in range(3)]
        rows = parts if ids is None else [np.flatnonzero(np.isin(ids, p)) for p in parts]
        groups = (None, None) if ids is None else (ids[rows[0]], ids[rows[1]])
        found = verbatim_events(hashes[rows[0]], hashes[rows[1]], hashes[rows[2]],
                                real_groups=groups[0], holdout_groups=groups[1])  # fmt: skip
        eps = certified_epsilon(found.copied_members, found.n_members, found.copied_nonmembers,
                                found.n_nonmembers, delta=0.0, alpha=0.05 / 4)[0]  # fmt: skip
        alarms += float(eps) > 0
        copies.append((found.copied_members, found.copied_nonmembers))
    return alarms, np.mean(copies, axis=0)


def event(reps: int) -> None:
    adult = pd.read_csv(DATA / "adult.csv")
    cases = []
    for n in (300, 3000):
        cases += [(f"adult all columns, {n}", adult, list(adult.columns), n, None),
                  (f"adult 9 categorical, {n}", adult, ADULT_CATEGORICAL, n, None),
                  (f"adult 7 categorical, {n}", adult, ADULT_FEW, n, None)]  # fmt: skip
    for name in ("wage_panel", "psid_wages_panel"):
        panel = pd.read_csv(DATA / f"{name}.csv")
        columns = [c for c in panel.columns if c != "person_id"]
        coded = [c for c in columns if c not in CONTINUOUS]
        n = panel["person_id"].nunique() // 3
        cases += [(f"{name} by person", panel, columns, n, "person_id"),
                  (f"{name} by person, coded columns", panel, coded, n, "person_id")]  # fmt: skip
    total = 0
    for label, frame, columns, n, person in cases:
        alarms, copies = _event_alarms(frame, columns, n, reps, person)
        total += alarms
        print(f"event {label}: {alarms} of {reps} false alarms (copies a side {copies})",
              flush=True)  # fmt: skip
    print(f"event: {total} false alarms in {reps * len(cases)} splits", flush=True)


def panels(seeds: range) -> None:
    for name in ("wage_panel", "psid_wages_panel"):
        frame = pd.read_csv(DATA / f"{name}.csv")
        people = np.sort(frame["person_id"].unique())
        for seed in seeds:
            order = people[np.random.default_rng(seed).permutation(len(people))]
            third = len(order) // 3
            ids = [order[i * third : (i + 1) * third] for i in range(3)]
            part = [frame[frame["person_id"].isin(p)].reset_index(drop=True) for p in ids]
            fresh = part[2].assign(person_id=part[2]["person_id"] + 10**6)
            candidates = {"fresh": fresh}
            for percent in (5, 10):
                k = round(percent / 100 * third)
                copied = part[0][part[0]["person_id"].isin(ids[0][:k])]
                kept = fresh[fresh["person_id"].isin(ids[2][k:] + 10**6)]
                renumbered = copied.assign(person_id=copied["person_id"] + 2 * 10**6)
                candidates[f"verbatim_{percent}"] = pd.concat([kept, renumbered],
                                                              ignore_index=True)  # fmt: skip
            review = with_person(align(part[0], candidates, holdout=part[1]), "person_id")
            options = ReviewOptions(embedding="none", person="person_id", max_attack=500,
                                    claimed_epsilon=0.0)  # fmt: skip
            report = evaluate(review, sections=["privacy"], options=options, seed=seed)
            found = []
            for kind, result in report.candidates.items():
                content = result.to_dict()
                verdict, eps = _verdict(content)
                copies = content["privacy"]["dp_claim"]["verbatim"]
                found.append(f"{kind} {verdict} (ε ≥ {eps:.2f}; copied {copies['copied_members']}"
                             f"/{copies['n_members']} vs {copies['copied_nonmembers']}"
                             f"/{copies['n_nonmembers']})")  # fmt: skip
            print(f"panels {name} seed {seed}: " + "; ".join(found), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["credit", "event", "panels"],
                        choices=["credit", "event", "panels"])  # fmt: skip
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.time()
    if "credit" in args.parts:
        credit(range(20))
    if "event" in args.parts:
        event(300)
    if "panels" in args.parts:
        panels(range(1, 6))
    print(f"{time.time() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
