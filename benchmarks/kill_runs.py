"""Kill ``synthreview review`` at random moments: no half-written folder may read as finished.

Usage::

    flock /tmp/heavy.lock python benchmarks/kill_runs.py [--runs 20] [--seed 0] [--rows 300]
        [--workdir DIR] [--keep]

Writes three 300-row slices of the bundled Adult table (``synthreview/datasets/adult.csv.gz``:
real, holdout, synthetic) to a work folder and reviews them once uninterrupted (``--sections
fidelity --embedding none --curate``, about 10 s on 2 cores) to time the run and how long its
temporary folder exists (the write phase). It then starts ``--runs`` more reviews into the same
``--out`` with ``--overwrite`` and kills each with ``kill -9`` (``SIGKILL``): even runs at a
seeded random moment of the whole run, odd runs at a seeded random moment within 1.2 x the
write phase after the temporary folder beside ``--out`` appeared (where a kill once left a
half-written folder). Every fifth run starts with no ``--out`` at all, the others with a
finished review there (the previous run's, or a copy of the uninterrupted one's when the previous
kill left none), so that most kills hit the replacement of an earlier review.

After each kill it checks:

* ``--out`` is absent, the previous finished review byte for byte, or a new review that
  :func:`synthreview.release.folder.read_finished_review` accepts;
* a folder that ``read_finished_review`` accepts is complete by an independent check:
  ``report.json`` and ``manifest.json`` parse, every output the manifest lists is there with its
  sha256, and nothing else is there but the manifest and ``COMPLETE.json``;
* every temporary folder left beside ``--out`` (``.out.synthreview-partial-*`` /
  ``-old-*``) is refused by ``read_finished_review``; the script then removes them (they are its
  own).

Prints one table row per run and exits 1 if any run breaks a check. The phase is what the last
poll (every 2 ms) before the kill saw: ``computing`` (no temporary folder yet), ``writing`` (the
temporary folder is there), ``after the rename`` (it was there and is gone), or ``finished``
(the run ended before its kill moment).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # python benchmarks/x.py
from synthreview.errors import DataError  # noqa: E402
from synthreview.release.folder import (  # noqa: E402
    MARKER,
    OLD_TAG,
    PARTIAL_TAG,
    read_finished_review,
)

ADULT = ROOT / "synthreview" / "datasets" / "adult.csv.gz"
POLL_S = 0.002


@dataclass(frozen=True)
class Outcome:
    """One killed run: when, in which phase, what ``--out`` was before and after, and the checks."""

    run: int
    mode: str
    kill_at_s: float
    phase: str
    before: str
    after: str
    accepted: bool
    leftovers: int
    problem: str

    @property
    def ok(self) -> bool:
        return not self.problem


def _write_inputs(folder: Path, rows: int) -> list[Path]:
    with gzip.open(ADULT, "rt", encoding="utf-8", newline="") as handle:
        lines = [next(handle) for _ in range(3 * rows + 1)]
    paths = []
    for i, name in enumerate(("real", "holdout", "synthetic")):
        path = folder / f"{name}.csv"
        path.write_text(lines[0] + "".join(lines[1 + i * rows : 1 + (i + 1) * rows]))
        paths.append(path)
    return paths


def _command(inputs: list[Path], out: Path, seed: int) -> list[str]:
    real, holdout, synthetic = inputs
    return [
        sys.executable, "-m", "synthreview", "review",
        "--real", str(real), "--holdout", str(holdout), "--synthetic", str(synthetic),
        "--sections", "fidelity", "--embedding", "none", "--curate",
        "--seed", str(seed), "--out", str(out), "--overwrite", "--quiet",
    ]  # fmt: skip


def _staging(out: Path) -> list[Path]:
    return [p for p in out.parent.iterdir() if PARTIAL_TAG in p.name or OLD_TAG in p.name]


def _tree(folder: Path) -> dict[str, str] | None:
    if not folder.exists():
        return None
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _independently_complete(folder: Path) -> str:
    """'' when the folder is a whole review by the manifest alone, else what is wrong."""
    try:
        json.loads((folder / "report.json").read_bytes())
        outputs = json.loads((folder / "manifest.json").read_bytes())["outputs"]
    except (OSError, ValueError, KeyError) as exc:
        return f"report/manifest unreadable: {exc}"
    tree = _tree(folder) or {}
    for name, entry in outputs.items():
        if tree.get(name) != entry["sha256"]:
            return f"{name} missing or not as the manifest says"
    extra = set(tree) - set(outputs) - {"manifest.json", MARKER}
    return f"files outside the manifest: {sorted(extra)}" if extra else ""


def _timed_run(command: list[str], out: Path) -> tuple[float, float]:
    """Run once to the end: (total seconds, seconds the temporary folder existed)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    staged = unstaged = None
    while process.poll() is None:
        now, seen = time.perf_counter(), bool(_staging(out))
        if staged is None and seen:
            staged = now
        if staged is not None and unstaged is None and not seen:
            unstaged = now
        time.sleep(POLL_S)
    end = time.perf_counter()
    stderr = process.stderr.read() if process.stderr else ""
    try:
        read_finished_review(out)
    except DataError as exc:
        raise SystemExit(
            f"the uninterrupted review (exit {process.returncode}) left no finished folder: "
            f"{exc}\n{stderr[-2000:]}"
        ) from exc
    return end - start, (unstaged or end) - (staged or end)


def _killed_run(
    command: list[str], out: Path, *, delay: float, after_staging: bool
) -> tuple[float, str]:
    """Start, SIGKILL after ``delay``; (seconds, phase seen by the last poll before the kill)."""
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
    start = time.perf_counter()
    armed = None if after_staging else start
    seen = False
    while process.poll() is None:
        now, staged = time.perf_counter(), bool(_staging(out))
        seen = seen or staged
        if armed is None and staged:
            armed = now
        if armed is not None and now - armed >= delay:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            phase = "writing" if staged else "after the rename" if seen else "computing"
            return now - start, phase
        time.sleep(POLL_S)
    return time.perf_counter() - start, f"finished (exit {process.returncode})"


def kill_runs(workdir: Path, *, runs: int, seed: int, rows: int) -> list[Outcome]:
    """Run the experiment in ``workdir``; one :class:`Outcome` per killed run."""
    inputs = _write_inputs(workdir, rows)
    out = workdir / "out"
    total, write = _timed_run(_command(inputs, out, seed=10_000), out)
    write = max(write, 0.01)
    reference = workdir / "finished_copy"
    shutil.copytree(out, reference)
    print(f"uninterrupted review: {total:.1f} s; its temporary folder existed {write:.3f} s",
          file=sys.stderr)  # fmt: skip
    rng = np.random.default_rng(seed)
    outcomes = []
    for run in range(runs):
        if run % 5 == 0 and out.exists():
            shutil.rmtree(out)
        elif run % 5 and not out.exists():
            shutil.copytree(reference, out)
        before = _tree(out)
        after_staging = run % 2 == 1
        delay = float(rng.uniform(0, 1.2 * write if after_staging else 1.05 * total))
        kill_at, phase = _killed_run(
            _command(inputs, out, seed=run), out, delay=delay, after_staging=after_staging
        )
        after = _tree(out)
        accepted, problem = False, ""
        if after is None:
            state = "absent"
        elif after == before:
            state = "previous"
        else:
            state = "new"
        if after is not None:
            try:
                read_finished_review(out)
                accepted = True
            except DataError as exc:
                problem = f"--out is there but not finished: {exc}"
            if accepted:
                problem = _independently_complete(out)
        leftovers = _staging(out)
        for left in leftovers:
            try:
                read_finished_review(left)
                problem = problem or f"temporary folder {left.name} reads as finished"
            except DataError:
                pass
            shutil.rmtree(left)
        outcomes.append(
            Outcome(
                run=run,
                mode="in write" if after_staging else "anytime",
                kill_at_s=kill_at,
                phase=phase,
                before="absent" if before is None else "finished",
                after=state,
                accepted=accepted,
                leftovers=len(leftovers),
                problem=problem,
            )
        )
        if state == "absent" and before is not None and not problem:
            # allowed (nothing at --out), but only the two-rename fallback can leave it
            print(f"note: run {run}: --out absent after the kill", file=sys.stderr)
    return outcomes


def _table(outcomes: list[Outcome]) -> str:
    head = "| run | kill moment | killed at | phase | --out before | --out after | reads as " \
        "finished | temporary folders left | check |"  # fmt: skip
    rows = [head, "|" + "---|" * 9]
    for o in outcomes:
        rows.append(
            f"| {o.run} | {o.mode} | {o.kill_at_s:.2f} s | {o.phase} | {o.before} | {o.after} | "
            f"{'yes' if o.accepted else 'no'} | {o.leftovers} | {o.problem or 'ok'} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run the experiment, print the table; exit 1 when a check fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=300, help="rows per input table")
    parser.add_argument("--workdir", type=Path, help="default: a new temporary folder")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kill_runs_"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        outcomes = kill_runs(workdir, runs=args.runs, seed=args.seed, rows=args.rows)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(_table(outcomes))
    failed = [o for o in outcomes if not o.ok]
    in_write = sum(o.phase == "writing" for o in outcomes)
    after = sum(o.phase == "after the rename" for o in outcomes)
    print(f"\n{len(outcomes)} runs, {in_write} killed while writing, {after} after the rename, "
          f"{sum(o.accepted for o in outcomes)} left a folder that reads as finished, "
          f"{len(failed)} broke a check")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
