"""Time to open a stored review record and draw the Overview from it, and its size on disk.

Usage::

    python benchmarks/bench_open.py [--rows 1000] [--folder REVIEW_FOLDER] [--repeat 3]

Without ``--folder`` the table demo's record (``record.demo.demo_record`` with ``--rows``
training rows; ``synthreview review --curate`` on the demo gives the same folder) is built
once, written to a temporary folder (not timed), then:

* ``open_review``: the folder read back into its record (nothing recomputed);
* the Overview drawn on it (``AppTest`` of ``app.py`` with ``SYNTHREVIEW_OPEN``, as
  ``synthreview show`` starts it: session start, record opened, decisions drawn);

each ``--repeat`` times, printing wall and CPU seconds (best of the repeats) beside the record's
size on disk (the folder and its ``record.json``) and the process's peak RSS. Not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from synthreview.record.demo import demo_record  # noqa: E402
from synthreview.record.store import OPEN_ENV, open_review, write_record  # noqa: E402


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _timed(label: str, run, repeat: int):
    best_wall, best_cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    _say(f"{label:<44} wall {best_wall:6.2f} s   CPU {best_cpu:6.2f} s   (best of {repeat})")
    return result


def _overview(folder: Path) -> None:
    os.environ[OPEN_ENV] = str(folder)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    if at.exception:
        raise RuntimeError(f"the Overview failed: {at.exception}")
    if not any('sr-decisions"' in h.proto.body for h in at.get("html")):
        raise RuntimeError("the Overview drew no decisions")


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    """Build (or take) a record, then time opening it and drawing its Overview."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000, help="demo training rows")
    parser.add_argument("--folder", type=Path, help="an existing review folder to open")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder
        if folder is None:
            started = time.perf_counter()
            record = demo_record(n_train=args.rows)
            folder = Path(scratch) / "demo"
            write_record(record, folder)
            _say(f"demo record built and written ({args.rows} rows): "
                 f"{time.perf_counter() - started:.1f} s (not part of opening)")  # fmt: skip
        _say(f"record on disk: {_size(folder) / 2**20:.1f} MiB, of which record.json "
             f"{(folder / 'record.json').stat().st_size / 2**20:.1f} MiB")  # fmt: skip
        opened = _timed("open_review (folder -> record)", lambda: open_review(folder), args.repeat)
        _say(f"  {len(opened.candidates)} candidates, decisions: "
             + ", ".join(f"{n}={d.outcome}" for n, d in opened.decisions.items()))  # fmt: skip
        _timed("Overview drawn on the record (AppTest)", lambda: _overview(folder), args.repeat)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _say(f"peak RSS of this process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
