"""Headless review: ``python -m synthreview review --real ... --synthetic ... --out DIR``.

Writes the same report the dashboard exports and prints one decision per candidate with the rule
that decided it and why.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from synthreview.engine import on_cluster, on_local_cluster
from synthreview.errors import ConfigError, SynthreviewError
from synthreview.io.digest import file_sha256
from synthreview.io.parquet import folder_digest
from synthreview.io.persons import with_person, with_person_key_notices
from synthreview.io.schema import Review
from synthreview.io.tables import MAX_BYTES, align, read_table
from synthreview.io.traces import align_traces, load_traces
from synthreview.judgement.context import ReleaseContext, load_context
from synthreview.judgement.decision import (
    EXIT_BAD_INPUT,
    EXIT_FAIL,
    EXIT_INCOMPLETE,
    EXIT_RELEASE,
    EXIT_RELEASE_AFTER_CURATION,
)
from synthreview.judgement.ledger import PriorRelease, composed_epsilon
from synthreview.judgement.policy import Policy, load_policy
from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.options import (
    MAX_SEED,
    ReviewOptions,
    check_seed,
    read_constraints_file,
    validate_options,
)
from synthreview.record.countersign import (
    append_countersignature,
    countersign,
    countersign_records,
    meeting_signoff,
)
from synthreview.record.record import build_record
from synthreview.record.store import (
    OPEN_ENV,
    OPEN_KEY_ENV,
    open_review,
    register_record,
    write_record,
)
from synthreview.record.trust import countersignature_names
from synthreview.release.audit import default_thresholds
from synthreview.release.folder import MARKER, check_output_folder
from synthreview.release.pipeline import review_release
from synthreview.release.register import (
    Record,
    append_records,
    check_register,
    ledger,
    open_register,
    prior_releases,
    records_from_statement,
    redact_url,
    rule_changes,
    waivers_text,
)
from synthreview.release.signing import (
    ENVELOPE_NAME,
    GivenInput,
    generate_keys,
    key_id,
    load_private_key,
    load_public_key,
    read_folder,
    read_key_file,
    release_statement,
    statement_id,
    verify_folder,
)
from synthreview.release.waivers import Approval, approval_bytes, read_approval, waivers_for
from synthreview.review import SECTIONS, evaluate, scaled_progress
from synthreview.sampling import DEFAULT_SAMPLE_ROWS, sampled_tables
from synthreview.terminal import terminal_output, terminal_text

EXIT_CODES = f"""exit codes:
  {EXIT_RELEASE}  every candidate may be released (each rule the policy requires was computed and
     none fails)
  {EXIT_FAIL}  do not release: a candidate fails a rule of the policy and curation (when asked
     for with --curate) does not fix it
  {EXIT_BAD_INPUT}  bad input files or options (checked before anything is computed)
  {EXIT_INCOMPLETE}  incomplete: a rule the policy requires could not be computed (a section failed,
     an option it needs was not given, e.g. --target, or the data were degenerate)
  {EXIT_RELEASE_AFTER_CURATION}  release after curation: a candidate fails as submitted but its
     curated version (--curate: NAME/curated.csv) meets every required rule; ship only those"""


def say(text: object, *, file: TextIO | None = None) -> None:
    """Print one line (to ``file``, default stdout) with its control characters escaped.

    Every line the CLI prints carries user-supplied names (files, columns, candidates, persons,
    categories, notices): :func:`~synthreview.terminal.terminal_text` keeps them text.
    """
    print(terminal_text(text), file=file)


def _seed(text: str) -> int:
    """``--seed``: an integer in [0, :data:`~synthreview.options.MAX_SEED`] (argparse checks)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer from 0 to {MAX_SEED}; got {text!r} instead"
        ) from None
    try:
        check_seed(seed)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return seed


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
    review.add_argument(
        "--real",
        required=True,
        type=Path,
        help="real (training) file, or folder of Parquet partition files (*.parquet, *.pq)",
    )
    review.add_argument(
        "--synthetic",
        required=True,
        action="append",
        type=Path,
        help="synthetic candidate file or folder of Parquet partitions; repeat for several "
        "(name = file or folder stem)",
    )
    review.add_argument(
        "--holdout",
        type=Path,
        help="holdout file or folder of Parquet partitions (same population, unseen)",
    )
    review.add_argument("--traces", action="store_true", help="inputs are glucose (CGM) traces")
    review.add_argument(
        "--seed", type=_seed, default=0, help=f"seeds every random step (0 to {MAX_SEED})"
    )
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
        "sharded neighbour searches) and its audit there; the workers read input folders of "
        "Parquet partitions (at the same path on every worker)",
    )
    review.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="review the candidates side by side in N processes of this machine (a local Dask "
        "cluster, each process its share of the cores; the numbers do not change); not with "
        "--scheduler",
    )
    review.add_argument(
        "--sample-rows",
        type=int,
        default=DEFAULT_SAMPLE_ROWS,
        metavar="N",
        help="above N rows per table, population statistics are estimated on random samples "
        f"of N rows (default {DEFAULT_SAMPLE_ROWS:,}); the audit still judges every row",
    )
    review.add_argument(
        "--exact",
        action="store_true",
        help="estimate every statistic on every row, at any size (no sampling)",
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
    review.add_argument(
        "--person",
        metavar="COLUMN",
        help="column naming each row's person (several rows per person): membership is judged "
        "by person too, the column is not a feature, and the audit curates a person's rows "
        "together when the candidates carry it",
    )
    review.add_argument(
        "--claimed-epsilon",
        type=float,
        metavar="E",
        help="test a claimed (E, D)-differential-privacy guarantee against the membership "
        "attacks (policy rule dp_claim: fails when the evidence contradicts it)",
    )
    review.add_argument(
        "--claimed-delta", type=float, default=0.0, metavar="D", help="the claim's δ (default 0)"
    )
    review.add_argument("--groups", nargs="*", default=(), help="grouping columns")
    review.add_argument(
        "--quasi-identifiers", nargs="+", default=(), metavar="COL",
        help="columns an intruder may know (age, sex, area...): QI replay, k-anonymity and "
        "prosecutor risk (policy rule qi_replay; none named: not judged)",
    )  # fmt: skip
    review.add_argument(
        "--label-leak-columns", nargs="+", default=(), metavar="COL",
        help="categorical columns tested for an answer key besides --target (policy rule "
        "label_leak: an exact rule of the other columns in the candidate but not in real data)",
    )  # fmt: skip
    review.add_argument(
        "--constraints", type=Path, metavar="FILE.toml",
        help="constraints the data owner declares (ranges, inequalities, allowed combinations, "
        "unique keys, formulas): violation rate per constraint (policy rule "
        "constraint_violations; none given: not judged)",
    )  # fmt: skip
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
    review.add_argument(
        "--generator",
        metavar="MODULE:FUNCTION",
        help="the generator as an importable fit_sample(train, n, seed) -> DataFrame callable "
        "(e.g. synthreview.generators.builtin:copula): runs the shadow-model attack (TAPAS) on "
        "it; checked before computing",
    )
    review.add_argument(
        "--shadow-models", type=int, default=20, metavar="K",
        help="shadow attack: generators trained per target, half with it (default 20)",
    )  # fmt: skip
    review.add_argument(
        "--shadow-targets", type=int, default=10, metavar="T",
        help="shadow attack: target records, about half the most exposed (default 10)",
    )  # fmt: skip
    review.add_argument(
        "--shadow-time-limit", type=float, default=600.0, metavar="S",
        help="shadow attack: seconds per candidate; past it the result is partial and not "
        "judged (default 600)",
    )  # fmt: skip
    review.add_argument("--policy", type=Path, help="policy TOML (default: the shipped policy)")
    review.add_argument(
        "--context",
        type=Path,
        metavar="FILE",
        help="release context TOML: recipient, purpose, access (public | licensed | internal | "
        "secure), threat_model, optional expires, legal_basis, source; filed in the signed "
        "record, and the policy judges with that access model's thresholds (without one: the "
        "strictest, [access.public])",
    )
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
        "--drop-qi-unique",
        action="store_true",
        help="audit: also remove rows whose --quasi-identifiers single out one training person "
        "(off by default: the audit states what it would cost a fresh real sample)",
    )
    review.add_argument(
        "--distance-percentile",
        type=float,
        default=-1.0,
        help="audit: also remove rows closer to a training row than fresh real rows are "
        "(any value >= 0 switches the rule on, at --audit-level; negative = off, the default)",
    )
    review.add_argument("--quiet", action="store_true")
    review.add_argument(
        "--sign",
        type=Path,
        metavar="KEYFILE",
        help=f"sign the review folder with this Ed25519 private key (synthreview keygen): "
        f"adds {ENVELOPE_NAME}, a DSSE-signed in-toto statement of every input and output file "
        "and the decisions",
    )
    review.add_argument(
        "--sign-passphrase-file",
        type=Path,
        metavar="FILE",
        help="file holding the passphrase of an encrypted --sign key (first line)",
    )
    review.add_argument(
        "--waive",
        action="append",
        default=[],
        metavar="RULE",
        help="request an exception to this policy rule (repeat for several; each needs its "
        "--reason, and --sign: the signing key is the requester). Filed as requested; it "
        "changes a decision only with an --approval signed by another key",
    )
    review.add_argument(
        "--reason",
        action="append",
        default=[],
        metavar="TEXT",
        help="the justification of each --waive, in the same order",
    )
    review.add_argument(
        "--approval",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a waiver approval written by `synthreview approve` with a second reviewer's key",
    )
    review.add_argument(
        "--approver-key",
        type=Path,
        metavar="PUB",
        help="the second reviewer's public key, to verify each --approval with",
    )
    review.add_argument(
        "--register",
        metavar="DB",
        help="append the decisions to this decision register (sqlite:///path or a path, or "
        "postgresql://...) once the folder is written; checked before computing",
    )
    _record_parsers(sub)
    return parser


def load_review(args: argparse.Namespace, *, client: Any = None) -> Review:
    """Load and validate the files (or folders of Parquet partitions) named on the command line.

    Every loading notice (an encoding fallback, a unit conversion, unseen categories, ...) is
    printed to stderr as ``notice: TABLE: message``, whatever ``--quiet`` says: it may change
    what the decision means. report.json keeps them too (``Report.notices``). With ``client``
    (the ``--scheduler`` cluster's) the partitions of a folder are read by its workers; the
    tables are the same as when they are read here (``io.tables.read_table``). With
    ``--person`` the column is made an identifier (``io.persons.with_person``) first.
    """
    if args.traces:
        # names default to the file stem, as for tables; align_traces makes repeats unique
        real = load_traces(args.real, client=client)
        holdout = load_traces(args.holdout, client=client) if args.holdout else None
        candidates = [load_traces(p, client=client) for p in args.synthetic]
        review = align_traces(real, candidates, holdout=holdout)
    else:
        real_table = read_table(args.real, role="real", client=client)
        holdout_table = (
            read_table(args.holdout, role="holdout", client=client) if args.holdout else None
        )
        tables = [read_table(p, role="synthetic", client=client) for p in args.synthetic]
        review = align(real_table, tables, holdout=holdout_table)
    person = getattr(args, "person", None)
    if person is not None:
        # the column becomes an identifier before any notice is said: a person column is never
        # checked for categories unseen in real (its people differ by design)
        review = with_person(review, person)
    if review.kind == "table":
        # a column that looks like a person key, when --person does not name it (issue 34)
        review = with_person_key_notices(review, person=person)
    for notice in review.notices:
        say(f"notice: {notice.table}: {notice.message}", file=sys.stderr)
    return review


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
    workers = getattr(args, "workers", None)
    if workers is not None and (workers < 1 or args.scheduler is not None):
        raise ConfigError(
            f"option --workers must be a positive number without --scheduler; got {workers}"
            + (f" with --scheduler {args.scheduler}" if args.scheduler is not None else "")
        )
    level = getattr(args, "audit_level", None)
    if level is not None and not 0.0 < level < 1.0:
        raise ConfigError(f"option --audit-level must be in (0, 1); got {level} instead")
    out = check_output_folder(
        args.out,
        inputs=[args.real, args.holdout, *args.synthetic, args.policy],
        planned=(
            "report.json",
            "report.html",
            "manifest.json",
            MARKER,
            *((ENVELOPE_NAME,) if getattr(args, "sign", None) is not None else ()),
        ),
        overwrite=getattr(args, "overwrite", False),
    )
    for left in out.leftovers:
        say(
            f"note: {str(left)!r} is the temporary folder of an interrupted review (never read "
            "as a review); delete it when no other review is writing into --out",
            file=sys.stderr,
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
        drop_qi_unique=args.drop_qi_unique,
        drop_too_close=args.distance_percentile >= 0,
    )
    return {name: chosen for name in report.candidates}


def evaluation_share(*, curate: bool, sampled: bool) -> float:
    """The share of the ``review`` command's progress its evaluation takes (the release the rest).

    Counted in candidate evaluations: each candidate's is one; its release adds an every-row
    audit when the review is estimated on samples (at a million rows about as long as the
    evaluation) and, with ``curate``, the curated set's re-evaluation (about one more; less
    where curation is cut or the set passes). A release that needs less ends its share early:
    the printed fraction then moves forward, never back.
    """
    release = (1.0 if sampled else 0.0) + (1.0 if curate else 0.0)
    return 1.0 / (1.0 + max(release, 0.1))  # judging and writing the files: about a tenth


def run_review(args: argparse.Namespace) -> int:
    """Run the ``review`` command; returns the exit code (module ``EXIT_CODES``)."""
    # everything that can be wrong with the call is checked before anything is computed
    policy = load_policy(args.policy)
    context = load_context(args.context) if args.context is not None else None
    policy = policy.for_access(context.access if context is not None else None)
    check_arguments(args)
    key = signing_key(args)  # key and passphrase checked before computing (exit 2)
    requests, approvals = _waiver_requests(args, policy, key)
    if args.register is not None:
        check_register(args.register)  # an unreachable, locked or newer register: exit 2 now

    def progress(fraction: float, message: str) -> None:
        if not args.quiet:
            say(f"[{fraction:6.1%}] {message}", file=sys.stderr)

    # one cluster (when given) for reading the inputs, the review and its release: the workers
    # read folders of Parquet partitions, and the audit's copy-evidence searches and the
    # curated re-evaluation run there too
    workers = getattr(args, "workers", None)
    cluster = on_local_cluster(workers) if workers else on_cluster(args.scheduler)
    with cluster as engine:
        review = load_review(args, client=engine.client)  # --person: an identifier already
        options = ReviewOptions(
            embedding=args.embedding,
            target=args.target,
            sensitive=args.sensitive,
            person=args.person,
            claimed_epsilon=args.claimed_epsilon,
            claimed_delta=args.claimed_delta,
            groups=tuple(args.groups or ()),
            quasi_identifiers=tuple(args.quasi_identifiers or ()),
            label_leak_columns=tuple(args.label_leak_columns or ()),
            constraints=(
                None if args.constraints is None else read_constraints_file(args.constraints)
            ),
            formula=args.formula,
            max_attack=args.max_attack,
            motif_length=args.motif_length,
            motif_tolerance=args.motif_tolerance,
            generator=args.generator,
            shadow_models=args.shadow_models,
            shadow_targets=args.shadow_targets,
            shadow_time_limit=args.shadow_time_limit,
            sample_rows=None if args.exact else args.sample_rows,
        )
        validate_options(review, options, args.sections, args.device)
        # one fraction over the whole run: the evaluation first, then the release
        sampled = bool(sampled_tables(review, options.sample_rows, person=options.person))
        split = evaluation_share(curate=args.curate, sampled=sampled)

        prior = _prior_releases(args, review, context)
        report = evaluate(
            review,
            sections=args.sections,
            options=options,
            seed=args.seed,
            device=args.device,
            progress=scaled_progress(progress, 0.0, split),
            threads=args.threads,
            approximate=args.approximate,
            keep_memo=True,  # the curated versions and controls share the real side computed here
        )
        for name, candidate in report.candidates.items():
            for section, message in candidate.errors.items():
                say(f"warning: {section} of {name} failed: {message}", file=sys.stderr)
        release = review_release(
            review,
            report,
            policy=policy,
            thresholds=_thresholds(args, report),
            curate=args.curate,
            # a CSV candidate's curated rows are copied from its file byte for byte; a Parquet
            # file's or folder's are written from its cells
            sources=args.synthetic,
            params=vars_for_manifest(args),
            device=args.device,
            progress=scaled_progress(progress, split, 1.0),
            context=context,
            prior=prior,
            waivers=waivers_for(
                requests,
                requester=key_id(key.public_key()) if key is not None else "",
                requested_at=datetime.now(UTC).isoformat(timespec="seconds"),
                candidates={
                    t.name: t.sha256 for t in review.synthetic.values() if hasattr(t, "sha256")
                },
                approvals=approvals,
            )
            if requests
            else (),
        )
        if report.context is not None:  # nothing of the real side outlives the release
            report.context.memo.clear()
    say(f"policy thresholds: {policy.access_reason}", file=sys.stderr)
    # the folder is the review's record: its files, record.json (read back by open_review and
    # `synthreview show`) and the signature over both
    record = build_record(release, report, policy_text=_policy_text(args.policy))
    record = write_record(record, args.out, key=key, overwrite=args.overwrite)
    if args.register is not None:
        try:
            register_record(record, args.register, key=key, location=args.out)
        except ConfigError as exc:  # the folder is written: say so, keep the decision's code
            say(f"warning: the register was not updated: {exc}", file=sys.stderr)
    for name, decision in release.decisions.items():
        label = DECISION_STYLE[decision.outcome].label
        say(f"{name}: {label} ({decision.verdict}) - {decision.reason}", file=sys.stderr)
        verdicts = release.verdicts[name]
        for rule in verdicts.failed:
            say(f"  {name} FAILS the policy: {rule.message}", file=sys.stderr)
        for rule in verdicts.incomplete:
            say(f"  {name} INCOMPLETE: {rule.message}", file=sys.stderr)
    return release.exit_code


def _waiver_requests(
    args: argparse.Namespace, policy: Policy, key: Ed25519PrivateKey | None
) -> tuple[list[tuple[str, str]], list[Approval]]:
    """``--waive``/``--reason`` pairs and the verified ``--approval`` files, checked before
    anything is computed."""
    if len(args.waive) != len(args.reason):
        raise ConfigError(
            f"option --waive needs one --reason each; got {len(args.waive)} --waive and "
            f"{len(args.reason)} --reason"
        )
    if args.approval and not args.waive:
        raise ConfigError("option --approval approves a --waive; got no --waive")
    if not args.waive:
        return [], []
    if key is None:
        raise ConfigError(
            "option --waive needs --sign KEYFILE: the signing key is the waiver's requester, "
            "whom the approver's key must differ from; got no --sign"
        )
    for rule, reason in zip(args.waive, args.reason, strict=True):
        if rule not in policy.rules:
            raise ConfigError(
                f"option --waive must name a rule of the policy; got {rule!r}, expected one of "
                f"{sorted(policy.rules)}"
            )
        if not reason.strip():
            raise ConfigError(f"option --reason of --waive {rule} must not be empty")
    if args.approval and args.approver_key is None:
        raise ConfigError("option --approval needs --approver-key PUB to verify it with")
    approvals = []
    if args.approval:
        approver = load_public_key(read_key_file(args.approver_key, what="option --approver-key"))
        if key_id(approver) == key_id(key.public_key()):
            raise ConfigError(
                "option --approver-key must be a second reviewer's key; got the --sign key "
                "that requests the waiver"
            )
        for path in args.approval:
            data = read_key_file(path, what="option --approval")
            approvals.append(read_approval(data, approver, where=f"option --approval {path}"))
    return [(r, t.strip()) for r, t in zip(args.waive, args.reason, strict=True)], approvals


def _prior_releases(
    args: argparse.Namespace, review: Review, context: ReleaseContext | None
) -> tuple[PriorRelease, ...]:
    """With ``--register``: the register's earlier records from this review's training data
    (its sha256, or the context's source id), for the policy's ``[ledger]`` caps."""
    if args.register is None:
        return ()
    source = context.source if context is not None else None
    records = ledger(args.register, sha256=getattr(review.real, "sha256", None), source=source)
    return prior_releases(records)


def _policy_text(path: Path | None) -> str | None:
    """The policy file's text for the record (None: the shipped policy, whose text it finds)."""
    if path is None:
        return None
    try:
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # load_policy read it already; a record without its text says so


def vars_for_manifest(args: argparse.Namespace) -> dict[str, object]:
    """The parsed options as JSON-ready values, for the manifest's parameters.

    A register URL is recorded with its credentials hidden (:func:`redact_url`): the manifest
    is signed and shared, a password never belongs in it.
    """
    return {
        k: (
            redact_url(v) if k == "register" and isinstance(v, str)
            else str(v) if isinstance(v, Path)
            else list(map(str, v)) if isinstance(v, list)
            else v
        )
        for k, v in sorted(vars(args).items())
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m synthreview`` and the ``synthreview`` script."""
    args = _parser().parse_args(argv)
    command = RECORD_COMMANDS.get(args.command, run_review)
    try:
        with terminal_output():  # warnings and log records escaped as every printed line is
            return command(args)
    except (SynthreviewError, OSError) as exc:
        say(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


# ---------------------------------------------------------------------------------------------
# signed records and the decision register (issue 24): keygen, verify, register, history

RECORD_HELP = f"""A signed review folder holds {ENVELOPE_NAME}: a DSSE envelope (Ed25519) of an
in-toto Statement v1 whose subjects are every input and output file (sha256) and whose
predicate is the decision record. Verification needs the signer's public key (--key): the key id
in the envelope is only a hint and is never trusted on its own.

exit codes of verify and register:
  0  verified (register: recorded)
  1  verification failed: each failure is printed with the file it concerns
  2  bad arguments: an unreadable key, folder or register (nothing is recorded)"""


def _record_parsers(sub: argparse._SubParsersAction) -> None:
    """The ``keygen``, ``verify``, ``register`` and ``history`` subcommands."""
    keygen = sub.add_parser(
        "keygen",
        help="write a new Ed25519 key pair for signing review folders",
        description="Write DIR/synthreview.key (PKCS8 PEM, file mode 0600) and "
        "DIR/synthreview.pub; existing key files are never overwritten.",
    )
    keygen.add_argument("--out", required=True, type=Path, help="folder for the key pair")
    keygen.add_argument(
        "--passphrase-file",
        type=Path,
        metavar="FILE",
        help="encrypt the private key with the passphrase in FILE (first line)",
    )
    verify = sub.add_parser(
        "verify",
        help="verify a signed review folder offline",
        description=RECORD_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("dir", type=Path, metavar="DIR", help="the review folder")
    verify.add_argument(
        "--key",
        required=True,
        type=Path,
        metavar="PUB",
        help="the signer's public key (synthreview.pub); required: a folder is never "
        "verified against a key it carries itself",
    )
    verify.add_argument(
        "--inputs",
        nargs="+",
        default=(),
        metavar="[ROLE=]PATH",
        help="input files (or folders of Parquet partitions) to check too: ROLE=PATH (ROLE: "
        "real, holdout or a candidate's name) must have the sha256 the record lists for that "
        "role, and fails naming both when it is another role's file; a bare PATH must be one of "
        "the recorded inputs",
    )
    register = sub.add_parser(
        "register",
        help="append a review folder's decisions to the decision register",
        description=RECORD_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    register.add_argument("dir", type=Path, metavar="DIR", help="the review folder")
    register.add_argument("--db", help=_DB_HELP)
    register.add_argument(
        "--key",
        type=Path,
        metavar="PUB",
        help="public key to verify a signed folder with before recording it (required when "
        f"DIR holds {ENVELOPE_NAME}); an unsigned folder is recorded as unverified",
    )
    history = sub.add_parser("history", help="list the decision register's records")
    history.add_argument("--db", help=_DB_HELP)
    history.add_argument("--candidate", metavar="NAME", help="only this candidate name")
    history.add_argument(
        "--inputs-sha256", metavar="HEX", help="only reviews with an input of this sha256"
    )
    counter = sub.add_parser(
        "countersign",
        help="the release meeting countersigns a verified, signed review folder",
        description="Writes countersign.N.intoto.jsonl beside the record: a statement signed "
        "with --key whose subject is the record's signed statement (and the countersignature "
        "before it) and whose predicate is the meeting's sign-off per candidate. The record "
        "must verify with --record-key (or a key in $SYNTHREVIEW_TRUST). verify then checks "
        "the chain.",
    )
    counter.add_argument("dir", type=Path, metavar="DIR", help="the signed review folder")
    counter.add_argument("--key", required=True, type=Path, help="the meeting's private key")
    counter.add_argument("--passphrase-file", type=Path, metavar="FILE")
    counter.add_argument(
        "--record-key", type=Path, help="the public key the record was signed with"
    )
    counter.add_argument(
        "--decision",
        action="append",
        required=True,
        metavar="CANDIDATE=OUTCOME",
        help="the meeting's decision (release, release_after_curation, do_not_release, "
        "incomplete); repeat per candidate",
    )
    counter.add_argument(
        "--reviewer",
        action="append",
        required=True,
        metavar="NAME:ROLE",
        help="who signs off and in which role; repeat for each",
    )
    counter.add_argument(
        "--reason",
        action="append",
        default=[],
        metavar="CANDIDATE=TEXT",
        help="why (required where the meeting's decision differs from the record's)",
    )
    counter.add_argument(
        "--register",
        metavar="URL",
        help="append the countersigned decisions to this decision register (SQLite path or "
        "postgresql://...)",
    )
    show = sub.add_parser(
        "show",
        help="open a review folder (or a ZIP of one) in the dashboard, on 127.0.0.1",
        description="Starts the dashboard (streamlit run app.py, headless, bound to 127.0.0.1) "
        "with the review record at PATH open: the Overview states its decisions without a "
        "click; nothing is recomputed. Every page says who signed it, or NOT VERIFIED and why.",
    )
    show.add_argument("path", type=Path, metavar="PATH", help="the review folder or its ZIP")
    show.add_argument(
        "--key",
        type=Path,
        help="the signer's public key (synthreview.pub); without it, or a key in the trust "
        "folder $SYNTHREVIEW_TRUST, the record opens as NOT VERIFIED",
    )
    show.add_argument("--port", type=int, default=8501, help="the port (default 8501)")
    approve = sub.add_parser(
        "approve",
        help="approve a requested waiver with a second reviewer's key",
        description="Writes a signed approval of waiving RULE for one candidate file, as "
        "requested (with its justification) by the key --requested-by. A review made with "
        "--waive RULE --reason TEXT --approval FILE --approver-key PUB then judges without the "
        "rule; the requester's own key cannot approve.",
    )
    approve.add_argument("--key", required=True, type=Path, help="the approver's private key")
    approve.add_argument("--passphrase-file", type=Path, metavar="FILE")
    approve.add_argument("--rule", required=True, help="the policy rule to waive")
    approve.add_argument("--reason", required=True, help="the requester's justification")
    approve.add_argument(
        "--requested-by", required=True, metavar="KEYID", help="the requester's key id"
    )
    approve.add_argument(
        "--candidate", required=True, type=Path, help="the candidate file (or Parquet folder)"
    )
    approve.add_argument("--out", required=True, type=Path, help="the approval file to write")
    ledger_cmd = sub.add_parser(
        "ledger",
        help="every release recorded from one training data source, and its composed claimed ε",
        description="Lists the register's records of reviews made from one source: the "
        "training file (--real, by sha256) or a sha256 or release-context source id "
        "(--source). The composed claimed ε is the sum over the releases (basic composition, "
        "an upper bound; unknown where a release claims no ε).",
    )
    ledger_cmd.add_argument("--db", "--register", dest="db", help=_DB_HELP)
    chosen = ledger_cmd.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--real", type=Path, metavar="FILE", help="the training data file")
    chosen.add_argument(
        "--source", metavar="SHA256_OR_ID", help="a training file's sha256 or a context source id"
    )
    history.add_argument(
        "--check",
        action="store_true",
        help="verify the register's hash chain instead of listing it: exit 0 when every record "
        "matches its hash and follows the one before it, 1 naming the first record that does "
        "not (changed, deleted or inserted)",
    )


_DB_HELP = (
    "register: sqlite:///PATH, postgresql://USER@HOST:PORT/DB or a file path (default: "
    "$SYNTHREVIEW_REGISTER, else ~/.local/share/synthreview/register.sqlite; created on first use)"
)


def _passphrase(path: Path | None) -> bytes | None:
    """The first line of a passphrase file (None without one)."""
    if path is None:
        return None
    lines = read_key_file(path, what="the passphrase file").splitlines()
    return lines[0] if lines else b""


def signing_key(args: argparse.Namespace) -> Ed25519PrivateKey | None:
    """The ``review --sign`` key, read and checked before anything is computed (None: unsigned)."""
    if getattr(args, "sign", None) is None:
        if getattr(args, "sign_passphrase_file", None) is not None:
            raise ConfigError("option --sign-passphrase-file needs --sign KEYFILE; got no --sign")
        return None
    try:
        return load_private_key(
            read_key_file(args.sign, what="option --sign"),
            passphrase=_passphrase(args.sign_passphrase_file),
        )
    except ConfigError as exc:  # name the option and the file the message is about
        raise ConfigError(f"option --sign {str(args.sign)!r}: {exc}") from exc


def run_keygen(args: argparse.Namespace) -> int:
    """``synthreview keygen --out DIR``: a new key pair; exit 0, or 2 on bad arguments."""
    keys = generate_keys(args.out, passphrase=_passphrase(args.passphrase_file))
    say(f"private key: {keys.private} (keep it secret; mode 0600)")
    say(f"public key:  {keys.public} (give it to whoever verifies)")
    say(f"key id:      {keys.keyid}")
    return EXIT_RELEASE


def _given_inputs(texts: Sequence[str]) -> list[GivenInput]:
    """The inputs of ``verify --inputs``, each ``PATH`` or ``ROLE=PATH``, with their sha256.

    A file's digest is that of its bytes (read in blocks), a folder of Parquet partitions' the
    folder digest the review recorded. ``ROLE`` is ``real``, ``holdout`` or a candidate's name
    (``synthetic:NAME`` too); a text that is an existing path is a path even with ``=`` in it.
    """
    given: list[GivenInput] = []
    for text in texts:
        role: str | None = None
        path = Path(text)
        if not path.exists() and "=" in text:
            role, _, rest = text.partition("=")
            path = Path(rest)
            if not role:
                raise ConfigError(f"option --inputs takes PATH or ROLE=PATH; got {text!r}")
        if role is not None and any(g.role == role for g in given):
            raise ConfigError(f"option --inputs gives the role {role!r} twice; got {list(texts)}")
        if path.is_dir():
            what = f"option --inputs folder {str(path)!r}"
            digest = folder_digest(path, what=what, max_bytes=MAX_BYTES)
        elif path.is_file():
            digest = file_sha256(path)  # in blocks: memory does not grow with the file
        else:
            raise ConfigError(
                f"option --inputs must name files or folders (PATH or ROLE=PATH); {str(path)!r} "
                f"is neither (got {text!r})"
            )
        given.append(GivenInput(text, digest, role))
    return given


def run_verify(args: argparse.Namespace) -> int:
    """``synthreview verify DIR --key PUB``: exit 0 verified, 1 failed, 2 bad arguments."""
    if args.dir.is_dir() and countersignature_names(p.name for p in args.dir.iterdir()):
        return _verify_chain(args)
    key = load_public_key(read_key_file(args.key, what="option --key"))
    inputs = _given_inputs(args.inputs)
    result = verify_folder(args.dir, key, inputs=inputs)
    if not result.ok:
        for problem in result.problems:
            say(f"FAILED {problem}", file=sys.stderr)
        say(f"{args.dir}: NOT verified ({len(result.problems)} failures)", file=sys.stderr)
        return EXIT_FAIL
    subjects = (result.statement or {}).get("subject") or []
    say(
        f"{args.dir}: verified: signed by key {result.keyid[:16]}, {len(subjects)} files "
        f"recorded, {len(inputs)} inputs checked; review id {result.review_id}"
    )
    return EXIT_RELEASE


def run_register(args: argparse.Namespace) -> int:
    """``synthreview register DIR``: verify (when signed) and append; exit 0, 1 or 2."""
    if (args.dir / ENVELOPE_NAME).exists():
        if args.key is None:
            raise ConfigError(
                f"option --key is required: {args.dir} is signed ({ENVELOPE_NAME}) and is "
                "verified before it is recorded; got no --key"
            )
        key = load_public_key(read_key_file(args.key, what="option --key"))
        result = verify_folder(args.dir, key)
        if not result.ok or result.statement is None or result.review_id is None:
            for problem in result.problems:
                say(f"FAILED {problem}", file=sys.stderr)
            say(f"{args.dir}: NOT verified; the register was not updated", file=sys.stderr)
            return EXIT_FAIL
        records = records_from_statement(
            result.statement, review_id=result.review_id, keyid=result.keyid, location=args.dir
        )
    else:
        if args.key is not None:
            raise ConfigError(
                f"option --key verifies a signed folder; {args.dir} holds no {ENVELOPE_NAME}"
            )
        files = read_folder(args.dir)
        statement = release_statement({n: d for n, d in files.items() if n != MARKER})
        records = records_from_statement(
            statement, review_id=statement_id(statement), location=args.dir
        )
    with open_register(args.db) as register:
        appended = register.append(records)
    for record in appended.added:
        say(f"recorded #{record.seq}: {_describe(record)}")
    for record in appended.already:
        say(f"already recorded #{record.seq}: {_describe(record)}")
    say(f"register: {register.where.shown}")
    return EXIT_RELEASE


def _describe(record: Record) -> str:
    signed = (
        f"; signed off by {record.reviewer}: {record.signed_decision}" if record.reviewer else ""
    )
    verified = f"key {record.keyid[:16]}" if record.keyid else "unverified"
    return (
        f"{record.candidate} {record.outcome} ({record.verdict}) - {record.reason}{signed} "
        f"[{record.generated_at}, review {record.review_id[:12]}, {verified}]"
    )


def run_chain_check(args: argparse.Namespace) -> int:
    """``synthreview history --check``: exit 0 when the hash chain is intact, 1 naming where not."""
    if args.candidate is not None or args.inputs_sha256 is not None:
        raise ConfigError(
            "option --check verifies the whole register; got --candidate or --inputs-sha256 too"
        )
    with open_register(args.db, read_only=True) as register:
        check = register.check_chain()
    for migration in check.migrations:
        say(
            f"chained on migration from schema version {migration.from_version} at "
            f"{migration.migrated_at}: {migration.records} earlier records, attested from then on"
        )
    if not check.ok:
        say(f"chain NOT intact in {register.where.shown}: {check.problem}", file=sys.stderr)
        return EXIT_FAIL
    say(f"chain intact: {check.records} records in {register.where.shown}; head {check.head}")
    return EXIT_RELEASE


def run_approve(args: argparse.Namespace) -> int:
    """``synthreview approve``: a second reviewer's signed approval of a waiver; exit 0 or 2."""
    key = load_private_key(
        read_key_file(args.key, what="option --key"),
        passphrase=_passphrase(args.passphrase_file),
    )
    if args.out.exists():
        raise ConfigError(f"option --out {str(args.out)!r} exists; an approval never overwrites")
    data = approval_bytes(
        key,
        rule=args.rule,
        reason=args.reason.strip(),
        requester=args.requested_by,
        candidate_sha256=file_sha256(args.candidate) if args.candidate.is_file()
        else folder_digest(args.candidate, what="option --candidate", max_bytes=MAX_BYTES),
    )  # fmt: skip
    args.out.write_bytes(data)
    say(
        f"approved: waiving {args.rule} for {args.candidate}, requested by key "
        f"{args.requested_by[:16]}, signed by key {key_id(key.public_key())[:16]}: {args.out}"
    )
    return EXIT_RELEASE


def run_ledger(args: argparse.Namespace) -> int:
    """``synthreview ledger``: the releases from one source; exit 0 (2: bad arguments)."""
    if args.real is not None:
        sha256, source = file_sha256(args.real), None
    else:
        sha256, source = None, args.source
    records = ledger(args.db, sha256=sha256, source=source)
    what = f"{args.real} (sha256 {sha256})" if sha256 else f"source {source!r}"
    if not records:
        say(f"no reviews recorded from {what}")
        return EXIT_RELEASE
    say(f"reviews recorded from {what}:")
    for prior in prior_releases(records):
        say(f"  {prior.describe()}")
    shipped = [p for p in prior_releases(records) if p.shipped]
    total = composed_epsilon([p.claimed_epsilon for p in shipped])
    composed = "unknown (a release claims no ε)" if total is None and shipped else f"{total or 0:g}"
    say(
        f"{len(shipped)} released of {len(records)} recorded; composed claimed ε {composed} "
        "(basic composition: the sum of the releases' claimed ε, an upper bound)"
    )
    return EXIT_RELEASE


def run_history(args: argparse.Namespace) -> int:
    """``synthreview history``: the register's records and the rule verdicts that changed."""
    if args.check:
        return run_chain_check(args)
    # read only: a reader never creates, migrates or changes a register (nor a foreign file)
    with open_register(args.db, read_only=True) as register:
        records = register.history(candidate=args.candidate, inputs_sha256=args.inputs_sha256)
        known = {r.seq: r for r in records}
        for candidate in {r.candidate for r in records if r.previous not in (None, *known)}:
            known.update({r.seq: r for r in register.history(candidate=candidate)})
    if not records:
        say(f"no records in {register.where.shown}")
    for record in records:
        say(f"#{record.seq} {_describe(record)}")
        if record.waivers:
            say(f"    waivers: {waivers_text(record.waivers)}")
        if record.location:
            say(f"    evidence: {record.location}")
        earlier = known.get(record.previous) if record.previous is not None else None
        if earlier is None:
            continue
        changes = rule_changes(earlier, record)
        if not changes:
            say(f"    no rule verdict changed since #{earlier.seq}")
        for change in changes:
            say(f"    {change.rule}: {change.before} -> {change.after} (since #{earlier.seq})")
    return EXIT_RELEASE


def show_command(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The ``streamlit run`` command line and environment ``synthreview show`` starts.

    The record is opened here first, so a path that is no review (or an unreadable key) is
    refused with exit 2 before any server starts.
    """
    if not 1 <= args.port <= 65535:
        raise ConfigError(f"option --port must be in [1, 65535]; got {args.port} instead")
    open_review(args.path, key=args.key)  # refuses what the dashboard could not open
    app = Path(__file__).resolve().parents[1] / "app.py"
    if not app.is_file():
        raise ConfigError(
            f"synthreview show needs the dashboard's app.py beside the synthreview package; "
            f"{str(app)!r} is missing (run it from a source checkout)"
        )
    command = [sys.executable, "-m", "streamlit", "run", str(app),
               "--server.address", "127.0.0.1", "--server.port", str(args.port),
               "--server.headless", "true"]  # fmt: skip
    env = {**os.environ, OPEN_ENV: str(args.path.resolve())}
    env.pop(OPEN_KEY_ENV, None)
    if args.key is not None:
        env[OPEN_KEY_ENV] = str(args.key.resolve())
    return command, env


def _pairs(values: Sequence[str], option: str, sep: str = "=") -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        left, found, right = value.partition(sep)
        if not found or not left.strip():
            raise ConfigError(
                f"option {option} must be given as LEFT{sep}RIGHT; got {value!r} instead"
            )
        pairs.append((left.strip(), right.strip()))
    return pairs


def run_countersign(args: argparse.Namespace) -> int:
    """``synthreview countersign DIR --key PRIV --decision C=OUTCOME --reviewer NAME:ROLE``."""
    key = load_private_key(
        read_key_file(args.key, what="option --key"), passphrase=_passphrase(args.passphrase_file)
    )
    record = open_review(args.dir, key=args.record_key)
    reviewers = _pairs(args.reviewer, "--reviewer", ":")
    reasons = dict(_pairs(args.reason, "--reason"))
    signoffs = [
        meeting_signoff(
            record, name, decision=outcome, reviewers=reviewers, reason=reasons.get(name, "")
        )
        for name, outcome in _pairs(args.decision, "--decision")
    ]
    envelope = countersign(record, signoffs, key)
    if args.register is not None:
        check_register(args.register)  # before anything is written
    record = append_countersignature(record, envelope, args.dir)
    say(f"{args.dir}: countersignature {len(record.countersignatures)} written")
    if args.register is not None:
        rows = countersign_records(
            record, envelope, keyid=key_id(key.public_key()), location=args.dir
        )
        append_records(args.register, rows)
        say(f"{args.dir}: {len(rows)} countersigned decisions appended to the register")
    return EXIT_RELEASE


def _verify_chain(args: argparse.Namespace) -> int:
    """``verify`` of a countersigned record: the record and every countersignature."""
    if args.inputs:
        raise ConfigError("option --inputs is checked on a folder without countersignatures")
    record = open_review(args.dir, key=args.key)
    verified = record.verified
    if verified is None or not verified.ok:
        for problem in (verified.reason if verified else "not checked").split("; "):
            say(f"FAILED {problem}", file=sys.stderr)
        say(f"{args.dir}: NOT verified", file=sys.stderr)
        return EXIT_FAIL
    say(
        f"{args.dir}: verified: signed by key {verified.keyid[:16]}, "
        f"{len(record.countersignatures)} countersignatures chained; review id "
        f"{verified.review_id}"
    )
    return EXIT_RELEASE


def run_show(args: argparse.Namespace) -> int:
    """``synthreview show PATH [--key PUB] [--port N]``: the dashboard on that record."""
    command, env = show_command(args)
    say(f"synthreview show: http://127.0.0.1:{args.port} (Ctrl+C stops it)", file=sys.stderr)
    server = subprocess.Popen(command, env=env)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # a terminated `show` stops its server too (the server is its child, not a daemon)
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        return server.wait()
    except KeyboardInterrupt:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        return EXIT_RELEASE
    finally:
        signal.signal(signal.SIGTERM, previous)


RECORD_COMMANDS = {
    "show": run_show,
    "countersign": run_countersign,
    "keygen": run_keygen,
    "verify": run_verify,
    "register": run_register,
    "history": run_history,
    "ledger": run_ledger,
    "approve": run_approve,
}
