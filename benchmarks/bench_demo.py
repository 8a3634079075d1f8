"""Time of the bundled demo and of each baseline generator on demo-sized data.

Usage::

    python benchmarks/bench_demo.py [--rows 5000]

Prints seconds for: the first ``demo.tables()`` (reads and types the bundled 48,842-row Adult
file), a second one (file cached per process), ``demo.traces()`` cold and warm, and each table
generator on ``--rows`` Adult rows. The Data page opens on ``demo.tables()``, so its warm time
is what a reviewer waits for after changing the seed. Not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthreview import demo, generators


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def _timed(label: str, make):
    started = time.perf_counter()
    result = make()
    _say(f"{label:<40} {time.perf_counter() - started:6.2f} s")
    return result


def main() -> None:
    """Run the timings and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=demo.DEMO_TRAIN_ROWS)
    args = parser.parse_args()

    _timed("demo.tables() first call", demo.tables)
    review = _timed("demo.tables() cached file", lambda: demo.tables(seed=1))
    _timed("demo.traces() first call", demo.traces)
    _timed("demo.traces() cached file", lambda: demo.traces(seed=1))

    real = demo.tables(n_train=args.rows).real.frame
    schema = review.schema
    for name in ("independent_marginals", "gaussian_copula", "add_noise", "mode_collapse"):
        make = getattr(generators, name)
        _timed(f"{name} ({args.rows} rows)", lambda make=make: make(real, schema=schema))


if __name__ == "__main__":
    main()
