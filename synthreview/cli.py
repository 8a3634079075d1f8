"""Headless review: ``python -m synthreview review --real ... --synthetic ... --out DIR``.

Writes the same report the dashboard exports and prints one decision per candidate with the rule
that decided it and why.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from synthreview.engine import on_cluster
from synthreview.errors import ConfigError, SynthreviewError
from synthreview.io.schema import Review
from synthreview.io.tables import align, read_table
from synthreview.io.traces import align_traces, load_traces
from synthreview.judgement.decision import (
    EXIT_BAD_INPUT,
    EXIT_FAIL,
    EXIT_INCOMPLETE,
    EXIT_RELEASE,
    decide_all,
    exit_code,
)
from synthreview.judgement.policy import load_policy
from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.options import ReviewOptions, validate_options
from synthreview.release.audit import default_thresholds
from synthreview.release.bundle import review_release
from synthreview.release.folder import MARKER, check_output_folder, write_review_folder
from synthreview.review import SECTIONS, evaluate

EXIT_CODES = f"""exit codes:
  {EXIT_RELEASE}  every candidate may be released (each rule the policy requires was computed and
     none fails)
  {EXIT_FAIL}  a candidate fails a rule of the policy (judged as submitted, before curation)
  {EXIT_BAD_INPUT}  bad input files or options (checked before anything is computed)
  {EXIT_INCOMPLETE}  incomplete: a rule the policy requires could not be computed (a section failed,
     an option it needs was not given, e.g. --target, or the data were degenerate)"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synthreview",
        description=__doc__.splitlines()[0],
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    review = sub.add_parser(
        "review",
        help="review synthetic data against real and holdout data",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    review.add_argument(
        "--device", default="cpu", help="torch device for embeddings and neighbour searches"
    )
    review.add_argument(
        "--threads",
        type=int,
        help="bound on BLAS/OpenMP/torch threads (default: the cores this process may use)",
    )
    review.add_argument(
        "--scheduler",
        help="Dask scheduler address (tcp://host:8786): run the review (candidates as tasks, "
        "sharded neighbour searches) and its audit there",
    )
    review.add_argument(
        "--approximate",
        choices=("ivf", "hnsw"),
        help="approximate k-NN (faiss); the measured 1-NN recall goes into the report",
    )
    review.add_argument(
        "--out",
        required=True,
        type=Path,
        help="output folder: new or empty; written beside it and renamed into place when "
        f"complete ({MARKER} last)",
    )
    review.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier review in --out (only its own, unchanged files are deleted; "
        "a folder holding other files is refused)",
    )
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
        default=6,
        help="glucose motif length τ in 5-minute steps (GlucoSynth §3.1 uses 48)",
    )
    review.add_argument(
        "--motif-tolerance",
        type=float,
        default=10.0,
        help="glucose motif tolerance σ in mg/dL per value (GlucoSynth uses 2)",
    )
    review.add_argument("--policy", type=Path, help="policy TOML (default: the shipped policy)")
    review.add_argument(
        "--curate", action="store_true", help="write curated datasets and before/after metrics"
    )
    review.add_argument(
        "--alpha",
        type=float,
        default=None,
        help="audit: keep rows inside the real α-support at this fixed α (0 = off; default: "
        "the α at which the holdout loses at most --audit-level)",
    )
    review.add_argument(
        "--audit-mode",
        choices=("quantile", "strict", "paper"),
        default="quantile",
        help="audit: per-row rules against the holdout's --audit-level quantile (default), "
        "Benjamini-Hochberg at q=0.05 (strict), or the paper's fixed rules (ratio <= 1, α 0.95)",
    )
    review.add_argument(
        "--audit-level",
        type=float,
        default=0.01,
        help="audit: holdout quantile of every calibrated rule = share of a fresh real sample "
        "each rule removes",
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
        default=-1.0,
        help="audit: also remove rows closer to a training row than fresh real rows are "
        "(any value >= 0 switches the rule on, at --audit-level; negative = off, the default)",
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


def check_arguments(args: argparse.Namespace) -> None:
    """The command-line-only options (the audit's and --out), before any file is read.

    ``--out`` must not be or hold an input, must be creatable and writable with free space, and
    may hold an earlier review only with ``--overwrite`` (``release.folder.check_output_folder``).
    """
    if args.alpha is not None and args.alpha != 0 and not 0.0 < args.alpha < 1.0:
        raise ConfigError(
            f"option --alpha must be in (0, 1), or 0 to switch the α rule off; got {args.alpha} "
            "instead"
        )
    if not (args.distance_percentile < 0 or 0 <= args.distance_percentile <= 100):
        raise ConfigError(
            "option --distance-percentile must be in [0, 100], or negative to switch the "
            f"distance rule off; got {args.distance_percentile} instead"
        )
    level = getattr(args, "audit_level", None)
    if level is not None and not 0.0 < level < 1.0:
        raise ConfigError(f"option --audit-level must be in (0, 1); got {level} instead")
    check_output_folder(
        args.out,
        inputs=[args.real, args.holdout, *args.synthetic, args.policy],
        planned=("report.json", "report.html", "manifest.json", MARKER),
        overwrite=getattr(args, "overwrite", False),
    )


def _thresholds(args: argparse.Namespace, report):
    """Per-candidate audit thresholds from the command line and each holdout reference."""
    chosen = default_thresholds(
        mode=args.audit_mode,
        level=args.audit_level,
        alpha=args.alpha or None,
        use_alpha=args.alpha != 0,
        drop_unauthentic=not args.keep_unauthentic,
        drop_exact_copies=not args.keep_exact_copies,
        drop_too_close=args.distance_percentile >= 0,
    )
    return {name: chosen for name in report.candidates}


def run_review(args: argparse.Namespace) -> int:
    """Run the ``review`` command; returns the exit code (module ``EXIT_CODES``)."""
    # everything that can be wrong with the call is checked before anything is computed
    policy = load_policy(args.policy)
    check_arguments(args)
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
    validate_options(review, options, args.sections, args.device)

    def progress(fraction: float, message: str) -> None:
        if not args.quiet:
            print(f"[{fraction:6.1%}] {message}", file=sys.stderr)

    # one cluster (when given) for the review and its release: the audit's copy-evidence
    # searches and the curated re-evaluation run there too
    with on_cluster(args.scheduler):
        report = evaluate(
            review,
            sections=args.sections,
            options=options,
            seed=args.seed,
            device=args.device,
            progress=progress,
            threads=args.threads,
            approximate=args.approximate,
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
    write_review_folder(args.out, release.files, overwrite=args.overwrite)
    decisions = decide_all(release.verdicts, release.after_verdicts)
    for name, decision in decisions.items():
        label = DECISION_STYLE[decision.outcome].label
        print(f"{name}: {label} ({decision.verdict}) - {decision.reason}", file=sys.stderr)
        verdicts = release.verdicts[name]
        for rule in verdicts.failed:
            print(f"  {name} FAILS the policy: {rule.message}", file=sys.stderr)
        for rule in verdicts.incomplete:
            print(f"  {name} INCOMPLETE: {rule.message}", file=sys.stderr)
    return exit_code(decisions)


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
    except (SynthreviewError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
