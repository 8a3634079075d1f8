"""Headless review: ``python -m synthreview review --real ... --synthetic ... --out DIR``.

Writes the same report the dashboard exports. Exit codes: 0 every candidate passes the policy
(or no policy verdict failed), 1 a candidate fails the policy, 2 bad input or options.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from synthreview.errors import ConfigError, SynthreviewError
from synthreview.io.schema import Review
from synthreview.io.tables import align, read_table
from synthreview.io.traces import align_traces, load_traces
from synthreview.judgement.policy import load_policy
from synthreview.options import ReviewOptions
from synthreview.release.audit import default_thresholds
from synthreview.release.bundle import review_release, write_files
from synthreview.review import SECTIONS, evaluate


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synthreview", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    review = sub.add_parser("review", help="review synthetic data against real and holdout data")
    review.add_argument("--real", required=True, type=Path, help="real (training) file")
    review.add_argument(
        "--synthetic",
        required=True,
        action="append",
        type=Path,
        help="synthetic candidate file; repeat for several (name = file stem)",
    )
    review.add_argument("--holdout", type=Path, help="holdout file (same population, unseen)")
    review.add_argument("--traces", action="store_true", help="inputs are glucose (CGM) traces")
    review.add_argument("--seed", type=int, default=0)
    review.add_argument("--device", default="cpu", help="torch device for embeddings")
    review.add_argument("--out", required=True, type=Path, help="output folder")
    review.add_argument(
        "--sections", nargs="+", choices=SECTIONS, help="metric sections (default: all that apply)"
    )
    review.add_argument("--embedding", choices=("oneclass", "none"), default="oneclass")
    review.add_argument("--target", help="target column for ML efficacy")
    review.add_argument("--sensitive", help="sensitive column for attribute inference")
    review.add_argument("--groups", nargs="*", default=(), help="grouping columns")
    review.add_argument("--formula", help="regression for CI overlap, e.g. 'y ~ a + b'")
    review.add_argument("--max-attack", type=int, default=10_000)
    review.add_argument(
        "--motif-length",
        type=int,
        default=48,
        help="glucose motif length τ in 5-minute steps (GlucoSynth §3.1)",
    )
    review.add_argument(
        "--motif-tolerance",
        type=float,
        default=2.0,
        help="glucose motif tolerance σ in mg/dL per value",
    )
    review.add_argument("--policy", type=Path, help="policy TOML (default: the shipped policy)")
    review.add_argument(
        "--curate", action="store_true", help="write curated datasets and before/after metrics"
    )
    review.add_argument(
        "--alpha",
        type=float,
        default=0.95,
        help="audit: keep rows inside the real α-support at this α (0 = off)",
    )
    review.add_argument(
        "--keep-unauthentic",
        action="store_true",
        help="audit: do not remove rows the authenticity test flags",
    )
    review.add_argument(
        "--keep-exact-copies",
        action="store_true",
        help="audit: do not remove exact copies of training rows",
    )
    review.add_argument(
        "--distance-percentile",
        type=float,
        default=1.0,
        help="audit: remove rows closer to a training row than this percentile "
        "of holdout-to-training distances (negative = off)",
    )
    review.add_argument("--quiet", action="store_true")
    return parser


def load_review(args: argparse.Namespace) -> Review:
    """Load and validate the files named on the command line."""
    if args.traces:
        # names default to the file stem, as for tables; align_traces makes repeats unique
        real = load_traces(args.real)
        holdout = load_traces(args.holdout) if args.holdout else None
        candidates = [load_traces(p) for p in args.synthetic]
        return align_traces(real, candidates, holdout=holdout)
    real = read_table(args.real, role="real")
    holdout = read_table(args.holdout, role="holdout") if args.holdout else None
    candidates = [read_table(p, role="synthetic") for p in args.synthetic]
    return align(real, candidates, holdout=holdout)


def _thresholds(args: argparse.Namespace, report):
    """Per-candidate audit thresholds from the command line and each holdout reference."""
    if not 0.0 <= args.alpha <= 1.0:
        raise ConfigError(f"--alpha must be in [0, 1]; got {args.alpha}")
    out = {}
    for name, result in report.candidates.items():
        base = default_thresholds(
            result.privacy, alpha=args.alpha or None, percentile=max(args.distance_percentile, 0.0)
        )
        out[name] = replace(
            base,
            drop_unauthentic=not args.keep_unauthentic,
            drop_exact_copies=not args.keep_exact_copies,
            min_train_distance=None if args.distance_percentile < 0 else base.min_train_distance,
        )
    return out


def run_review(args: argparse.Namespace) -> int:
    """Run the ``review`` command; returns the exit code (0 pass, 1 policy failure)."""
    policy = load_policy(args.policy)  # a bad policy must stop us before any computing
    review = load_review(args)
    options = ReviewOptions(
        embedding=args.embedding,
        target=args.target,
        sensitive=args.sensitive,
        groups=tuple(args.groups or ()),
        formula=args.formula,
        max_attack=args.max_attack,
        motif_length=args.motif_length,
        motif_tolerance=args.motif_tolerance,
    )

    def progress(fraction: float, message: str) -> None:
        if not args.quiet:
            print(f"[{fraction:6.1%}] {message}", file=sys.stderr)

    report = evaluate(
        review,
        sections=args.sections,
        options=options,
        seed=args.seed,
        device=args.device,
        progress=progress,
    )
    for name, candidate in report.candidates.items():
        for section, message in candidate.errors.items():
            print(f"warning: {section} of {name} failed: {message}", file=sys.stderr)
    release = review_release(
        review,
        report,
        policy=policy,
        thresholds=_thresholds(args, report),
        curate=args.curate,
        params=vars_for_manifest(args),
        device=args.device,
        progress=progress,
    )
    write_files(args.out, release.files)
    for name, verdicts in release.verdicts.items():
        print(f"{name}: {verdicts.overall}", file=sys.stderr)
    for name, rules in release.failed.items():
        print(f"{name} FAILS the policy: " + "; ".join(r.message for r in rules), file=sys.stderr)
    return release.exit_code


def vars_for_manifest(args: argparse.Namespace) -> dict[str, object]:
    """The parsed options as JSON-ready values, for the manifest's parameters."""
    return {
        k: (str(v) if isinstance(v, Path) else list(map(str, v)) if isinstance(v, list) else v)
        for k, v in sorted(vars(args).items())
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m synthreview`` and the ``synthreview`` script."""
    args = _parser().parse_args(argv)
    try:
        return run_review(args)
    except (SynthreviewError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
