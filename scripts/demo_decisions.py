"""Print the decision of every bundled demo candidate, as the CLI and the dashboard take it.

Usage::

    python scripts/demo_decisions.py [--seed 0]

Reviews ``demo.tables(seed)`` and ``demo.traces(seed)`` at their dashboard sizes with the
default options (every section), releases them through the one pipeline
(``review_release(curate=True)``) and prints, per candidate, the decision, the overall verdict
of the candidate as submitted, and every rule that did not pass with its reason. Issue 27's
check that the demo's ``fresh_sample`` (a perfect generator) reads RELEASE without a warning
is this script's output; it takes about four minutes on two cores, so it is not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthreview import demo
from synthreview.options import default_options
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate


def main(argv: list[str] | None = None) -> int:
    """Review both demos and print their decisions; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name, make in (("tables", demo.tables), ("traces", demo.traces)):
        started = time.perf_counter()
        review = make(seed=args.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = evaluate(review, options=default_options(review), seed=args.seed)
            release = review_release(review, report, curate=True)
        print(f"{name}: reviewed and released in {time.perf_counter() - started:.0f} s")
        for candidate, result in release.candidates.items():
            print(f"  {candidate}: {result.decision.outcome} (as submitted: "
                  f"{result.verdicts.overall})")  # fmt: skip
            for rule in result.verdicts.rules:
                if rule.verdict not in ("pass", "n/a"):
                    print(f"    {rule.rule} {rule.verdict}: {rule.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
