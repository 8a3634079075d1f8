"""The table demo's run as the dashboard computes it, outside Streamlit: time, CPU and decisions.

Usage::

    python benchmarks/bench_release.py [--seed 0] [--rows 5000] [--workers N]
        [--save FILE] [--compare FILE]

Loads the bundled table demo, fits the context once (``review.prepare``), evaluates every
section of every candidate (``review.evaluate``), then releases each candidate through the one
pipeline (``release.pipeline.release_candidate`` with ``curate_when="failing"``, as Run review
does). Prints wall and CPU seconds of each step (CPU: every thread of this process; with
``--workers N`` the worker processes' CPU is added at the end, once they stopped), the machine
(``bench_fidelity.describe_machine``), the load, and each candidate's decision and reason.

``--save FILE`` writes what the decisions rest on as JSON: each decision, and every verdict
(as submitted and after curation) with the value and judged value of its rule. ``--compare
FILE`` reads such a file (say, of the code before a change) and exits 1 when a decision or a
judged number differs; it prints each difference. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from contextlib import ExitStack
from inspect import signature
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_fidelity import describe_machine  # noqa: E402  (the script's folder is on sys.path)

from synthreview import demo  # noqa: E402
from synthreview.judgement.policy import load_policy  # noqa: E402
from synthreview.metrics.utility.regression import parse_formula, suggest_formula  # noqa: E402
from synthreview.options import default_options  # noqa: E402
from synthreview.release.pipeline import release_candidate  # noqa: E402
from synthreview.review import evaluate, prepare  # noqa: E402


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class _Clock:
    """Wall and process CPU seconds since the last ``lap``."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        self.total_wall = self.total_cpu = 0.0

    def lap(self, label: str) -> None:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        self.total_wall += wall
        self.total_cpu += cpu
        _say(f"{label:<44} {wall:7.2f} s wall {cpu:7.2f} CPU-s")
        self.wall, self.cpu = time.perf_counter(), time.process_time()


def _verdict_rows(verdicts) -> list[dict[str, object]]:
    rows = []
    for rule in verdicts.rules:
        rows.append(
            {
                "rule": rule.rule,
                "verdict": rule.verdict,
                "value": rule.value,
                "measured": rule.measured,
                "bound": rule.bound,
                "reference": rule.reference,
            }
        )
    return rows


def _options(review):
    options = default_options(review)
    suggested = suggest_formula(review.schema)
    if suggested:  # as the dashboard's first run (record.live.initial_options)
        from dataclasses import replace

        parsed = parse_formula(suggested, schema=review.schema, real=review.real.frame)
        options = replace(options, formula=str(parsed))
    return options


def main() -> int:
    """Run the demo, print the timings and decisions; save or compare them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=demo.DEMO_TRAIN_ROWS)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument(
        "--workers",
        type=int,
        help="review the candidates in N processes (engine.on_local_cluster); its start is timed",
    )
    args = parser.parse_args()
    for line in describe_machine():
        _say(line)
    _say(f"load average {os.getloadavg()}")
    clock = _Clock()
    review = demo.tables(seed=args.seed, n_train=args.rows)
    options = _options(review)
    policy = load_policy().for_access(None)
    clock.lap("load the demo")
    with ExitStack() as stack:
        if args.workers:
            # imported here: an older checkout, timed against this one, has no local cluster
            from synthreview.engine import on_local_cluster

            stack.enter_context(on_local_cluster(args.workers))
            clock.lap(f"start {args.workers} worker processes")
        context = prepare(review, options=options, seed=args.seed)
        clock.lap("prepare (encoder, embedding)")
        report = evaluate(review, options=options, seed=args.seed, context=context)
        clock.lap(f"evaluate ({len(review.candidates)} candidates)")
        # no waiver may leave a rule out (a review without waivers): the curated sets are
        # evaluated only where that can change a decision (older checkouts: always)
        known = {"waived": ()} if "waived" in signature(release_candidate).parameters else {}
        releases = {}
        for name in report.candidates:
            releases[name] = release_candidate(
                review, report, name, policy=policy, curate_when="failing", **known
            )
            curated = releases[name].curated
            how = (
                "not curated"
                if curated is None
                else "curated, not evaluated: a bound decides"
                if getattr(curated, "bounds", ())
                else "curated, privacy not evaluated: already fails"
                if getattr(curated, "skipped", ())
                else "curated and evaluated"
            )
            clock.lap(f"release {name} ({how})")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers_cpu = children.ru_utime + children.ru_stime  # counted once the processes stopped
    if args.workers:
        _say(f"{'worker processes (all steps)':<44} {'':>7}        {workers_cpu:7.2f} CPU-s")
    total_cpu = clock.total_cpu + workers_cpu
    _say(f"{'total':<44} {clock.total_wall:7.2f} s wall {total_cpu:7.2f} CPU-s")
    found = {}
    for name, release in releases.items():
        decision = release.decision
        _say(f"{name}: {decision.outcome} - {decision.reason}")
        found[name] = {
            "outcome": decision.outcome,
            "reason": decision.reason,
            "verdicts": _verdict_rows(release.verdicts),
            "curated": None if release.curated is None else _verdict_rows(release.curated.verdicts),
        }
    text = json.dumps(found, indent=1, sort_keys=True, default=str)
    if args.save:
        args.save.write_text(text)
    if args.compare:
        before = json.loads(args.compare.read_text())
        now = json.loads(text)
        differences = _differences(before, now)
        for line in differences:
            _say(f"DIFFERS {line}")
        _say(f"{len(differences)} differences from {args.compare}")
        return 1 if differences else 0
    return 0


def _differences(before: dict, now: dict) -> list[str]:
    """What differs: outcomes and every verdict as submitted exactly; after curation, each rule
    computed now must equal the earlier run's, and a rule judged on a proven bound must have
    failed there at or beyond the bound (rules not computed now are not differences)."""
    out = []
    for name in sorted(set(before) | set(now)):
        b, n = before.get(name), now.get(name)
        if b is None or n is None:
            out.append(f"{name}: present only {'now' if b is None else 'before'}")
            continue
        if b["outcome"] != n["outcome"]:
            out.append(f"{name}: outcome {b['outcome']} -> {n['outcome']}")
        rows_b = {r["rule"]: r for r in b["verdicts"]}
        rows_n = {r["rule"]: r for r in n["verdicts"]}
        for rule in sorted(set(rows_b) | set(rows_n)):
            if rows_b.get(rule) != rows_n.get(rule):
                out.append(f"{name} as submitted {rule}: {rows_b.get(rule)} -> {rows_n.get(rule)}")
        after_b = {r["rule"]: r for r in b["curated"] or []}
        for r in n["curated"] or []:
            old = after_b.get(r["rule"])
            if r["value"] is None:
                continue  # not computed now: the decision did not need it
            if r["measured"] is None and r["verdict"] == "fail" and r["bound"] is None:
                ok = old is not None and old["verdict"] == "fail" and old["value"] >= r["value"]
            else:
                ok = old == r
            if not ok:
                out.append(f"{name} after curation {r['rule']}: {old} -> {r}")
    return out


if __name__ == "__main__":
    sys.exit(main())
